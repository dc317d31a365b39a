"""The documentation site's API reference: what Sphinx renders from the docstrings.

The site is built by CI (``sphinx-build -W``); these tests check, without a
build, the two things a build does not flag: napoleon reading a docstring's
first line ``Prose: more prose`` as ``type: description`` (the page then shows
``Type: Prose``), and the API reference naming every public name of
``import portsim``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from sphinx.ext import napoleon
from sphinx.ext.napoleon.docstring import NumpyDocstring
from sphinx.pycode import ModuleAnalyzer

import portsim

DOCS_EXT = Path(__file__).resolve().parent.parent / "docs" / "_ext"


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _public_modules() -> Iterator[str]:
    yield "portsim"
    for info in pkgutil.walk_packages(portsim.__path__, "portsim."):
        if _public(info.name):
            yield info.name


def _rendered_docstrings() -> Iterator[tuple[str, Literal["attribute", "property"], list[str]]]:
    """Every docstring autodoc renders as an attribute: module data, class fields, properties."""
    for name in _public_modules():
        module = importlib.import_module(name)
        for (owner, attribute), lines in ModuleAnalyzer.for_module(name).find_attr_docs().items():
            if _public(f"{owner}.{attribute}" if owner else attribute):
                yield f"{name}.{owner + '.' if owner else ''}{attribute}", "attribute", list(lines)
        # The classes on the module's page: its own, and those its __all__
        # exports from a private module (docs/_ext/portsim_docs.py shows them).
        classes = [cls for class_name, cls in vars(module).items()
                   if inspect.isclass(cls) and cls.__module__ == name and _public(class_name)]
        classes += [getattr(module, exported) for exported in getattr(module, "__all__", ())
                    if inspect.isclass(getattr(module, exported))
                    and not _public(getattr(module, exported).__module__)]
        for cls in classes:
            class_name = cls.__qualname__
            if cls.__module__ != name:
                private_docs = ModuleAnalyzer.for_module(cls.__module__).find_attr_docs()
                for (owner, attribute), lines in private_docs.items():
                    if owner == class_name and _public(attribute):
                        yield f"{name}.{class_name}.{attribute}", "attribute", list(lines)
            for attribute, value in vars(cls).items():
                if isinstance(value, property) and value.__doc__ and _public(attribute):
                    yield (f"{name}.{class_name}.{attribute}", "property",
                           inspect.cleandoc(value.__doc__).splitlines())


def test_attribute_docstrings_render_as_prose() -> None:
    config: Any = napoleon.Config(napoleon_use_ivar=True)  # what conf.py sets
    typed = {}
    for where, what, lines in _rendered_docstrings():
        rendered = NumpyDocstring(lines, config, what=what, name=where).lines()
        types = [line for line in rendered if line.startswith(":type:")]
        if types:
            typed[where] = types
    # napoleon takes `Port models the flat tree handles: all of them.` for
    # `type: description`: the page read "all of them. Type: Port models ...".
    assert typed == {}


def test_api_page_tables_every_public_name() -> None:
    sys.path.insert(0, str(DOCS_EXT))
    try:
        portsim_docs = importlib.import_module("portsim_docs")
    finally:
        sys.path.remove(str(DOCS_EXT))
    page = portsim_docs._api_page(["portsim"])
    entries = [line.strip().removeprefix("~") for line in page.splitlines()
               if line.strip().startswith("~portsim.")]
    assert sorted(entry.rsplit(".", 1)[1] for entry in entries) == sorted(portsim.__all__)
    for entry in entries:
        module_name, name = entry.rsplit(".", 1)
        assert _public(module_name), entry
        # The link's target: the object itself, documented in that module (a
        # class or function by its docstring, an alias by its doc comment).
        assert getattr(importlib.import_module(module_name), name) is getattr(portsim, name)
        documented = ("", name) in ModuleAnalyzer.for_module(module_name).find_attr_docs()
        obj = getattr(portsim, name)
        defined_here = getattr(obj, "__module__", None) == module_name and bool(obj.__doc__)
        assert documented or defined_here, entry


def test_site_links_reexported_names_and_shows_private_exports(tmp_path: Path) -> None:
    """A small build with the site's extension: a reference to a name where it is
    imported links to where it is documented, and a package exporting functions
    from its private modules shows them."""
    from sphinx.application import Sphinx

    source = tmp_path / "docs"
    (source / "_ext").mkdir(parents=True)
    (source / "_ext" / "portsim_docs.py").write_text(
        (DOCS_EXT / "portsim_docs.py").read_text(encoding="utf-8"), encoding="utf-8")
    (source / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(source / '_ext')!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.autosummary', 'portsim_docs']\n"
        "autosummary_generate = True\n"
        "autodoc_default_options = {'members': True, 'ignore-module-all': True}\n"
        "portsim_packages = ['portsim.planners.trees']\n", encoding="utf-8")
    (source / "index.rst").write_text(
        "Index\n=====\n\n.. toctree::\n\n   _generated/api\n\n"
        ".. autoclass:: portsim.simulator.platform.Platform\n   :members: duration\n\n"
        ".. autofunction:: portsim.simulator.validation.validate\n\n"
        ".. py:currentmodule:: portsim.scenarios.testing\n\n"
        "As :func:`simulator.validate` says.\n\n"
        ".. py:currentmodule:: portsim.planners.snf.model\n\n"
        "On a :class:`Platform`, :meth:`Platform.duration`.\n", encoding="utf-8")
    out = tmp_path / "html"
    warnings = tmp_path / "warnings.txt"
    with warnings.open("w", encoding="utf-8") as stream:
        app = Sphinx(str(source), str(source), str(out), str(tmp_path / "doctrees"), "html",
                     status=None, warning=stream, freshenv=True, confoverrides={"nitpicky": True})
        app.build()
    text = warnings.read_text(encoding="utf-8")
    for target in ("simulator.validate", "Platform", "Platform.duration"):
        assert f"reference target not found: {target} " not in text
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="#portsim.simulator.validation.validate"' in index
    assert 'href="#portsim.simulator.platform.Platform"' in index
    assert 'href="#portsim.simulator.platform.Platform.duration"' in index
    # greedy_tree lives in portsim.planners.trees._model, which has no page.
    trees = (out / "_generated" / "api" / "portsim.planners.trees.html").read_text(encoding="utf-8")
    for name in ("greedy_tree", "tree_length", "ReductionTree", "tree_schedule"):
        signature = ('portsim.planners.trees.</span></span>'
                     f'<span class="sig-name descname"><span class="pre">{name}<')
        assert signature in trees, name
