"""The import contract: one order of packages, no private name across modules.

The packages form one order, ``simulator`` <- ``planners`` <- ``scenarios``
<- ``reports``: a module imports from its own package layer and those to its
left, never from one to its right, whether at the top of the file or inside
a function (a lazy import hides a cycle, it does not remove it).  The command
line, :mod:`portsim.scenarios.cli`, is the one module allowed above every
layer (it draws the reports).  A private name (``_x``) is never imported from
another module, and a private module (``_x.py``) only from inside its own
package.

The rules are read from the source with :mod:`ast`, every ``import`` and
``from ... import`` anywhere in a module counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = {"simulator": 0, "planners": 1, "scenarios": 2, "reports": 3}
"""Each top-level package's place in the order."""

ABOVE_ALL = frozenset({"portsim.scenarios.cli"})
"""Modules allowed to import from every layer: the command line."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["portsim", *parts])


def _modules() -> list[tuple[str, Path]]:
    found = []
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "build" not in path.relative_to(ROOT).parts:
                found.append((_module_name(path), path))
    return found


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(module imported, names taken from it, line)`` for every import of ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, [], node.lineno) for a in node.names)
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]


MODULES = _modules()


def _layer_breaches(module: str, path: Path, root: Path = ROOT) -> list[str]:
    layer = LAYERS[module.split(".")[1]]
    out = []
    for target, _, line in _imports(path):
        parts = target.split(".")
        if parts[0] == "portsim" and len(parts) > 1 and parts[1] in LAYERS \
                and LAYERS[parts[1]] > layer and module not in ABOVE_ALL:
            out.append(f"{path.relative_to(root)}:{line} imports {target}")
    return out


def _privacy_breaches(module: str, path: Path, root: Path = ROOT) -> list[str]:
    package = _package_of(module, path)
    out = []
    for target, names, line in _imports(path):
        if not target.startswith("portsim"):
            continue
        where = f"{path.relative_to(root)}:{line}"
        out.extend(f"{where} takes the private name {name} from {target}"
                   for name in names if _private(name))
        parts = target.split(".")
        first = next((i for i, part in enumerate(parts) if _private(part)), None)
        if first is not None:
            home = ".".join(parts[:first])  # the package the private module belongs to
            if package != home and not package.startswith(home + "."):
                out.append(f"{where} imports the private module {target} from outside {home}")
    return out


def test_every_package_is_scanned() -> None:
    """The scan sees the four packages (a wrong ROOT would pass every rule vacuously)."""
    seen = {module.split(".")[1] for module, _ in MODULES}
    assert seen == set(LAYERS)
    assert "portsim.simulator.engine" in dict(MODULES)
    assert "portsim.scenarios.cli" in dict(MODULES)


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_layer_order(module: str, path: Path) -> None:
    """No module imports from a package to the right of its own."""
    assert _layer_breaches(module, path) == []


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_private_names_stay_home(module: str, path: Path) -> None:
    """No private name crosses a module; no private module leaves its package."""
    assert _privacy_breaches(module, path) == []


def test_the_rules_catch_breaches(tmp_path: Path) -> None:
    """Each rule reports a file written to break it (the checks can fail)."""
    fake = tmp_path / "simulator" / "_contract_probe.py"
    fake.parent.mkdir()
    fake_module = "portsim.simulator._contract_probe"
    fake.write_text("def f():\n"
                    "    from portsim.reports.html import write_run_report\n"
                    "    from portsim.planners.lp._periodic import _depth\n"
                    "    return write_run_report, _depth\n", encoding="utf-8")
    assert _layer_breaches(fake_module, fake, tmp_path) == [
        "simulator/_contract_probe.py:2 imports portsim.reports.html",
        "simulator/_contract_probe.py:3 imports portsim.planners.lp._periodic"]
    assert _privacy_breaches(fake_module, fake, tmp_path) == [
        "simulator/_contract_probe.py:3 takes the private name _depth from "
        "portsim.planners.lp._periodic",
        "simulator/_contract_probe.py:3 imports the private module "
        "portsim.planners.lp._periodic from outside portsim.planners.lp"]
    # The command line may draw reports; inside its package a private module is fine.
    cli = tmp_path / "scenarios" / "cli.py"
    cli.parent.mkdir()
    cli.write_text("from portsim.reports.html import write_run_report\n"
                   "from portsim.scenarios._probe import thing\n", encoding="utf-8")
    assert _layer_breaches("portsim.scenarios.cli", cli, tmp_path) == []
    assert _privacy_breaches("portsim.scenarios.cli", cli, tmp_path) == []
