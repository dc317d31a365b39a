"""Sphinx extension: portsim's generated pages, written before the sources are listed.

- ``_generated/api.rst``: the API reference, a recursive autosummary over the
  packages of the configuration value ``portsim_packages`` (``conf.py``);
  autosummary then writes one page per public module, from the docstrings.
- ``_generated/gallery.md``: the bundled examples, one section per
  ``scenarios/examples/*.yaml`` (its description, which states its source and
  its published figure, its operation and planners, the command that runs
  it, and the file itself), then the bundled studies ``scenarios/studies/``.

Both are generated on every build from the files themselves, so they cannot
drift; ``docs/_generated/`` is not committed.
"""

from __future__ import annotations

import importlib
import inspect
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from sphinx.application import Sphinx
from sphinx.config import Config

GENERATED = "_generated"


def _public(module_name: str) -> bool:
    return not any(part.startswith("_") for part in module_name.split("."))


def _home(package: str, name: str) -> str | None:
    """The public module documenting ``package.name`` (the one defining it), if any.

    A class or a function knows its module; a type alias (``Event = Send |
    Compute``) does not, and is found as the deepest public module of
    ``package`` binding ``name`` to the same object.
    """
    obj = getattr(importlib.import_module(package), name)
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module.startswith(f"{package}.") and _public(module):
        return module
    holders = [
        module_name for module_name, module_object in list(sys.modules.items())
        if module_name.startswith(f"{package}.") and _public(module_name)
        and vars(module_object).get(name) is obj
    ]
    if not holders:
        return None
    return max(holders, key=lambda module_name: module_name.count("."))


def _public_names(package: str) -> str:
    """A table of ``package.__all__``, each name linked to where it is documented."""
    names = getattr(importlib.import_module(package), "__all__", None)
    if not names:
        return ""
    homes = {name: _home(package, name) for name in names}
    rows = "\n".join(f"   ~{home}.{name}" for name, home in homes.items() if home)
    return f"""
The public names of ``import {package}``
-----------------------------------------

``from {package} import NAME`` gives each of them; each is documented on the
page of the module that defines it.

.. autosummary::

{rows}
"""


def _api_page(packages: list[str]) -> str:
    modules = "\n".join(f"   {name}" for name in packages)
    tables = "".join(_public_names(name) for name in packages)
    return f"""API reference
=============

Generated from the docstrings of the public modules (a name starting with an
underscore is private). The command line is described in the
:doc:`tutorial <../tutorial>` and in ``docs/SPEC.md``.
{tables}
The modules
-----------

.. autosummary::
   :toctree: api
   :recursive:

{modules}
"""


def _operation(document: dict[str, Any]) -> str:
    operation = document.get("operation") or {}
    if not isinstance(operation, dict):
        return "?"
    parts = [str(operation.get("type", "?"))]
    for key in ("source", "target"):
        if key in operation:
            parts.append(f"{key} {operation[key]}")
    return ", ".join(parts)


def _planners(document: dict[str, Any]) -> str:
    names = []
    for entry in document.get("planners") or []:
        if isinstance(entry, dict):
            options = ", ".join(f"{k}: {v}" for k, v in entry.items() if k != "name")
            name = f"`{entry.get('name')}`"
            names.append(f"{name} ({options})" if options else name)
        else:
            names.append(f"`{entry}`")
    return ", ".join(names)


def _section(path: Path, root: Path, command: str) -> str:
    """One example: heading, file, operation, planners, description, command, file text."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    relative = path.relative_to(root).as_posix()
    description = " ".join(str(document.get("description", "")).split())
    scenario = document.get("base", document)
    return f"""### {document.get("name", path.stem)}

`{relative}`: {_operation(scenario)}; planners {_planners(scenario)}.

{description}

```bash
{command.format(path=relative)}
```

```{{literalinclude}} ../../{relative}
:language: yaml
```

"""


def _gallery_page(root: Path) -> str:
    examples = sorted((root / "scenarios" / "examples").glob("*.yaml"))
    studies = sorted((root / "scenarios" / "studies").glob("*.yaml"))
    return "".join([
        """# Gallery of the bundled examples

## Scenarios

Every scenario of `scenarios/examples/` (they ship with the package), as its
file describes itself: the published source it reproduces and the figure it
should give. Schedule files that `portsim validate` replays are in
`scenarios/examples/schedules/`, SimGrid platforms in
`scenarios/examples/platforms/`.

""",
        *(_section(path, root, "portsim run {path}") for path in examples),
        """## Studies

The comparative studies of `scenarios/studies/`; `portsim report results` then
draws their report.

""",
        *(_section(path, root, "portsim study {path} --out results") for path in studies),
    ])


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (an unchanged page is not rebuilt)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app: Sphinx, config: Config) -> None:
    """Write the generated pages into the source directory (before it is read)."""
    source = Path(app.srcdir)
    root = source.parent
    target = source / GENERATED
    target.mkdir(exist_ok=True)
    # Autosummary writes the module pages under api/ but never removes one: a
    # page left by a module since renamed or removed would fail to import.
    shutil.rmtree(target / "api", ignore_errors=True)
    _write(target / "api.rst", _api_page(list(config.portsim_packages)))
    _write(target / "gallery.md", _gallery_page(root))


def _exported_from_private(module_name: str) -> list[tuple[str, str]]:
    """The classes and functions of ``module_name.__all__`` defined in a private module.

    autodoc documents an object on the page of the module defining it, and no
    page is written for a private module (``_model``): ``greedy_tree``,
    exported by ``portsim.planners.trees`` from ``trees._model``, would be on
    no page at all.  Returns ``(directive, name)`` pairs, in ``__all__`` order.
    """
    module = importlib.import_module(module_name)
    found = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None)
        if not (isinstance(home, str) and home.startswith("portsim") and not _public(home)):
            continue
        if inspect.isclass(obj):
            found.append(("autoclass", name))
        elif inspect.isfunction(obj):
            found.append(("autofunction", name))
    return found


def document_private_exports(app: Sphinx) -> None:
    """Append to each generated module page the names it exports from private modules."""
    pages = Path(app.srcdir) / GENERATED / "api"
    for page in sorted(pages.glob("*.rst")):
        names = _exported_from_private(page.stem)
        if not names:
            continue
        # Shown, not indexed: a second target for a name such as ReductionTree
        # (snf's is another class) would make its short references ambiguous.
        entries = "\n".join(f".. {directive}:: {page.stem}.{name}\n   :no-index:\n"
                            for directive, name in names)
        text = page.read_text(encoding="utf-8")
        marker = ".. Defined in private modules"
        if marker not in text:
            page.write_text(f"{text.rstrip()}\n\n{marker}\n\nDefined in private modules\n"
                            f"--------------------------\n\n{entries}", encoding="utf-8")


def _imported(dotted: str) -> tuple[Any, str] | None:
    """The object ``dotted`` names, imported, and its documented name.

    The documented name is the module and qualified name of the deepest object
    along the path that knows them, followed by the rest of the path (an
    attribute or a method): ``portsim.simulator.Platform.duration`` is
    documented as ``portsim.simulator.platform.Platform.duration``.
    """
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        documented = ".".join(parts[:cut])
        for depth, part in enumerate(parts[cut:], start=cut):
            if not hasattr(obj, part):
                return None
            obj = getattr(obj, part)
            module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if isinstance(module, str) and isinstance(qualname, str) and module != "builtins":
                documented = f"{module}.{qualname}"
            else:
                documented = f"{documented}.{part}"
            if depth == len(parts) - 1:
                return obj, documented
        return None
    return None


def resolve_reexport(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a Python cross-reference to a name imported from where it is documented.

    A docstring says :class:`Platform` or :func:`simulator.validate` from a
    module that imports the name; autodoc documents each object once, on the
    page of the module that defines it (``conf.py``), so Sphinx finds no
    target under the importing module's name.  The name is looked up as
    Python does (in the current module, then as a path from its top package)
    and the reference resolved to its defining module's entry.
    """
    if node.get("refdomain") != "py":
        return None
    target = str(node["reftarget"]).removeprefix("~").removesuffix("()")
    module = node.get("py:module") or ""
    owner = node.get("py:class") or ""
    candidates = [f"{module}.{owner}.{target}"] if module and owner else []
    candidates += [f"{module}.{target}"] if module else []
    candidates += [target, f"{module.partition('.')[0]}.{target}"] if module else [target]
    domain = env.get_domain("py")
    for candidate in candidates:
        found = _imported(candidate)
        if found is None or found[1] == target:
            continue
        reference = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                        found[1], node, contnode)
        if reference is not None:
            return reference
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("portsim_packages", [], "env", types=[list])
    # Once the configuration is read, before Sphinx lists the source files.
    app.connect("config-inited", generate)
    # After autosummary (priority 500) has written the module pages.
    app.connect("builder-inited", document_private_exports, priority=600)
    app.connect("missing-reference", resolve_reexport)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
