"""The installed distribution is one import package, ``portsim``.

The repository keeps its top-level folders (``simulator/``, ``planners/``,
``scenarios/``, ``reports/``); ``pyproject.toml`` maps them to
``portsim.simulator`` ... and the repository root to ``portsim`` itself.
These tests read what pip actually installed, so a subpackage left out of
the list, a stray top-level name or a broken entry point fails here.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import inspect
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import portsim

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("simulator", "planners", "scenarios", "reports")


def _installed() -> metadata.Distribution:
    """The installed distribution (with a RECORD), not a build's ``portsim.egg-info``
    that ``python -m pytest`` would find in the repository root."""
    found = [d for d in metadata.distributions(name="portsim") if d.read_text("RECORD")]
    return found[0] if found else metadata.distribution("portsim")


def _installed_top_level() -> set[str]:
    files = _installed().files or []
    tops = set()
    for file in files:
        parts = Path(str(file)).parts
        if parts[0] == ".." or parts[0].endswith((".dist-info", ".pth")) or parts[-1].startswith(
                "__editable__"):
            # the console script, the metadata, an editable install's hook (and its
            # bytecode, __pycache__/__editable___portsim_..._finder.cpython-311.pyc,
            # that pip compiles and lists)
            continue
        tops.add(parts[0].removesuffix(".py"))
    return tops


def test_only_portsim_is_installed_at_top_level() -> None:
    tops = _installed_top_level()
    if not tops:  # an editable install ships a finder, not the files
        finder = [str(f) for f in _installed().files or [] if "__editable__" in str(f)]
        assert finder, "neither the package files nor an editable finder are installed"
        return
    assert tops == {"portsim"}


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    on_disk = {"portsim"} | {
        "portsim." + ".".join(init.parent.relative_to(ROOT).parts)
        for layer in LAYERS for init in (ROOT / layer).rglob("__init__.py")}
    assert listed == on_disk


def test_python_dash_m_portsim_runs_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "portsim", "planners"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr
    assert "flat" in done.stdout
    assert "lp" in done.stdout


def test_entry_points_name_the_portsim_package() -> None:
    eps = metadata.entry_points()
    (script,) = [ep for ep in eps.select(group="console_scripts") if ep.name == "portsim"]
    assert script.value.startswith("portsim.")
    # the target imports the command line itself, so that a Ctrl-C during that
    # import is one line and exit status 130 (test_cli.py), not a traceback
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert target == {"portsim": "portsim.__main__:main"}
    (plugin,) = [ep for ep in eps.select(group="pytest11") if ep.name == "portsim"]
    assert plugin.value == "portsim.scenarios.pytest_plugin"
    assert callable(script.load())


@pytest.mark.parametrize("name", portsim.__all__)
def test_public_api_names_resolve(name: str) -> None:
    value = getattr(portsim, name)
    if inspect.isclass(value) or inspect.isfunction(value):  # not a type alias (Event)
        assert value.__module__.startswith("portsim.")
    assert name in dir(portsim)


def test_dir_lists_the_api_not_the_package_helpers() -> None:
    """``dir(portsim)`` is the exports, the dunders and the subpackages: not the names
    the package's own code imports to build them."""
    listed = set(dir(portsim))
    assert set(portsim.__all__) <= listed
    assert {"__version__", "__doc__"} <= listed
    assert not listed & {"TYPE_CHECKING", "annotations", "lazy_exports", "_HOMES"}


def test_public_api_flow() -> None:
    """README's five lines: the scatter toy's two links, flat tree, replayed."""
    platform = portsim.Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", "2/3")])
    operation = portsim.Operation(portsim.OperationKind.SCATTER, source="S")
    plan = portsim.get_planner("flat").plan(platform, operation)
    # flat: S sends A's message (1) then B's (2/3), one at a time
    assert plan.makespan == portsim.parse_rational("5/3")
    assert portsim.replay(plan.schedule).feasible


def test_import_portsim_is_cheap() -> None:
    """``import portsim`` loads no solver, numeric or plotting library."""
    code = ("import sys, portsim; heavy = [m for m in ('scipy', 'numpy', 'networkx', "
            "'pydantic', 'plotly', 'pandas', 'simpy', 'highspy') if m in sys.modules]; "
            "print(','.join(heavy))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_version_is_the_distributions() -> None:
    assert portsim.__version__ == metadata.version("portsim")


def test_unknown_public_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        importlib.import_module("portsim").Nope  # noqa: B018
