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
        for class_name, cls in vars(module).items():
            if not inspect.isclass(cls) or cls.__module__ != name or not _public(class_name):
                continue
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
