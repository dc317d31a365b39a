"""The planner base types and the registry (built-ins and entry-point plug-ins)."""

from __future__ import annotations

import importlib.metadata
import sys
import types
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from portsim import planners
from portsim.planners import (
    FLAT_PLANNER,
    FunctionPlanner,
    Planner,
    PlannerPluginWarning,
    PlanResult,
    WeightedTree,
    available_planners,
    check_options,
    get_planner,
    plan,
    plugin_planners,
    unsupported_reason,
)
from portsim.simulator.errors import PlannerError
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform, PortKind

PLUGIN_MODULE = "portsim_test_plugin_module"


def _toy_function(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    return PlanResult.error("toy", "the toy planner never plans")


TOY = FunctionPlanner(
    name="toy",
    function=_toy_function,
    operations=frozenset({OperationKind.SCATTER}),
    port_models=frozenset({PortKind.BIDIRECTIONAL}),
    description="a test plug-in",
)


def _make_toy() -> FunctionPlanner:
    return TOY


@pytest.fixture
def two_nodes() -> Platform:
    return Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])


@pytest.fixture
def plugin_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A fake installed module that entry points can load from."""
    module = types.ModuleType(PLUGIN_MODULE)
    module.TOY = TOY  # type: ignore[attr-defined]
    module.make_toy = _make_toy  # type: ignore[attr-defined]
    module.NOT_A_PLANNER = 42  # type: ignore[attr-defined]
    module.make_nothing = lambda: "nothing"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, PLUGIN_MODULE, module)
    return module


@pytest.fixture
def fresh_plugins() -> Iterator[None]:
    """Forget cached plug-ins before and after a test that fakes entry points."""
    plugin_planners.cache_clear()
    yield
    plugin_planners.cache_clear()


def _fake_entry_points(
    monkeypatch: pytest.MonkeyPatch, specs: list[tuple[str, str]]
) -> list[str]:
    """Make ``importlib.metadata.entry_points`` return ``specs`` for our group."""
    groups_asked: list[str] = []
    eps = [
        importlib.metadata.EntryPoint(name=name, value=value, group="portsim.planners")
        for name, value in specs
    ]

    def entry_points(**params: Any) -> list[importlib.metadata.EntryPoint]:
        groups_asked.append(params["group"])
        return eps if params.get("group") == "portsim.planners" else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return groups_asked


# -- registry ------------------------------------------------------------------


def test_available_planners_contains_flat() -> None:
    found = available_planners()
    assert found["flat"] is FLAT_PLANNER
    found["flat"] = TOY  # a fresh dict: the registry is untouched
    assert available_planners()["flat"] is FLAT_PLANNER


def test_get_planner_known_name() -> None:
    assert get_planner("flat") is FLAT_PLANNER


def test_get_planner_unknown_name_lists_valid_names() -> None:
    with pytest.raises(
        PlannerError, match=r"unknown planner; valid planners: .*flat.*\(got 'nope'\)"
    ) as info:
        get_planner("nope")
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.value == "nope"


def test_get_planner_rejects_non_string() -> None:
    with pytest.raises(PlannerError, match="must be a string"):
        get_planner(["flat"])  # type: ignore[arg-type]


def test_plan_convenience(two_nodes: Platform) -> None:
    result = plan("flat", two_nodes, Operation(OperationKind.SCATTER, source="A"))
    assert result.status == "ok"
    assert result.planner == "flat"
    assert result.makespan == 1


def test_plan_unknown_option_raises(two_nodes: Platform) -> None:
    op = Operation(OperationKind.SCATTER, source="A")
    with pytest.raises(PlannerError, match="unknown option 'depth' for planner 'flat'"):
        plan("flat", two_nodes, op, depth=3)


@pytest.mark.usefixtures("fresh_plugins")
def test_entry_point_plugin_is_picked_up(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType
) -> None:
    groups = _fake_entry_points(monkeypatch, [
        ("toy", f"{PLUGIN_MODULE}:TOY"),
        ("toy-factory", f"{PLUGIN_MODULE}:make_toy"),
    ])
    with pytest.warns(PlannerPluginWarning, match="'toy-factory'.*calls itself 'toy'"):
        found = available_planners()
    assert groups == ["portsim.planners"]
    assert found["toy"] is TOY
    assert found["toy-factory"] is TOY  # the zero-argument factory was called
    assert found["flat"] is FLAT_PLANNER
    assert get_planner("toy") is TOY
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    result = plan("toy", p, Operation(OperationKind.SCATTER, source="A"))
    assert (result.status, result.message) == ("error", "the toy planner never plans")


@pytest.mark.usefixtures("fresh_plugins")
def test_the_listing_names_a_plugin_as_a_scenario_does(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType
) -> None:
    """A plug-in registered as ``toy-factory`` whose planner calls itself ``toy``
    (the README's two blocks did that: ``mytree`` and ``mine``) was listed by
    ``portsim planners`` as ``toy``, a name no scenario can use
    (``unknown planner``).  Every name the listing gives now resolves."""
    from click.testing import CliRunner

    from portsim.planners.registry import planner_infos
    from portsim.scenarios.cli import main

    _fake_entry_points(monkeypatch, [("toy-factory", f"{PLUGIN_MODULE}:make_toy")])
    with pytest.warns(PlannerPluginWarning, match="calls itself 'toy'"):
        infos = planner_infos()
    names = [info.name for info in infos]
    assert "toy-factory" in names
    assert "toy" not in names
    for name in names:
        get_planner(name)  # raises PlannerError on a name that is not registered
    listing = CliRunner().invoke(main, ["planners"]).stdout
    assert "│ toy-factory " in listing
    assert "│ toy " not in listing


@pytest.mark.usefixtures("fresh_plugins")
def test_entry_points_are_loaded_once(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType
) -> None:
    groups = _fake_entry_points(monkeypatch, [("toy", f"{PLUGIN_MODULE}:TOY")])
    available_planners()
    available_planners()
    get_planner("toy")
    assert groups == ["portsim.planners"]


@pytest.mark.usefixtures("fresh_plugins")
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("portsim_no_such_module_anywhere:THING", "ModuleNotFoundError"),
        (f"{PLUGIN_MODULE}:MISSING", "AttributeError"),
        (f"{PLUGIN_MODULE}:NOT_A_PLANNER", "does not load to a Planner"),
        (f"{PLUGIN_MODULE}:make_nothing", "does not load to a Planner"),
    ],
)
def test_broken_plugin_is_a_warning(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType, value: str, reason: str
) -> None:
    _fake_entry_points(monkeypatch, [("broken", value), ("toy", f"{PLUGIN_MODULE}:TOY")])
    with pytest.warns(PlannerPluginWarning, match=f"'broken'.*skipped: .*{reason}"):
        found = available_planners()
    assert "broken" not in found
    assert found["toy"] is TOY
    assert found["flat"] is FLAT_PLANNER


@pytest.mark.usefixtures("fresh_plugins")
def test_plugin_cannot_shadow_builtin(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType
) -> None:
    _fake_entry_points(monkeypatch, [("flat", f"{PLUGIN_MODULE}:TOY")])
    # A built-in is found without reading the plug-ins (start-up); the clash
    # is reported when they are read, e.g. to list them.
    assert get_planner("flat") is FLAT_PLANNER
    with pytest.warns(PlannerPluginWarning, match="'flat'.*already taken"):
        assert available_planners()["flat"] is FLAT_PLANNER


@pytest.mark.usefixtures("fresh_plugins")
def test_unknown_name_lists_plugins_too(
    monkeypatch: pytest.MonkeyPatch, plugin_module: types.ModuleType
) -> None:
    _fake_entry_points(monkeypatch, [("toy", f"{PLUGIN_MODULE}:TOY")])
    listing = ", ".join(sorted([*planners.BUILTIN_PLANNERS, "toy"]))
    with pytest.raises(PlannerError, match=rf"valid planners: {listing} \(got 'tyo'\)$"):
        get_planner("tyo")


# -- check_options -------------------------------------------------------------


def test_check_options_accepts_known() -> None:
    check_options("greedy", {"reducers": 2}, ["concurrent_transfers", "reducers"])
    check_options("flat", {}, [])


def test_check_options_names_unknown_and_lists_valid() -> None:
    with pytest.raises(
        PlannerError,
        match=r"unknown option 'reducer' for planner 'greedy'; "
              r"valid options: concurrent_transfers, reducers",
    ) as info:
        check_options("greedy", {"reducer": 2}, ["reducers", "concurrent_transfers"])
    assert info.value.path == "planners.greedy.reducer"
    assert info.value.value == "reducer"


def test_check_options_without_options() -> None:
    with pytest.raises(PlannerError, match="it takes no options"):
        check_options("flat", {"x": 1}, ())


# -- base types ----------------------------------------------------------------


def test_planners_are_protocol_instances() -> None:
    assert isinstance(FLAT_PLANNER, Planner)
    assert isinstance(TOY, Planner)
    assert not isinstance(object(), Planner)
    assert FLAT_PLANNER.operations == frozenset({
        OperationKind.SCATTER, OperationKind.GATHER, OperationKind.BROADCAST,
        OperationKind.REDUCE,
    })
    assert FLAT_PLANNER.port_models == frozenset(PortKind)
    assert FLAT_PLANNER.description


def test_function_planner_unsupported_operation(two_nodes: Platform) -> None:
    result = TOY.plan(two_nodes, Operation(OperationKind.GATHER))
    assert result.status == "unsupported"
    assert result.schedule is None
    assert result.planner == "toy"
    assert result.message == "toy does not handle gather (it handles: scatter)"


def test_function_planner_unsupported_port_model() -> None:
    p = Platform.build(["A", "B"], [("A", "B", 1)],
                       node_port_models={"B": "unidirectional"})
    result = TOY.plan(p, Operation(OperationKind.SCATTER, source="A"))
    assert result.status == "unsupported"
    assert result.message == (
        "toy does not handle the unidirectional port model of node B "
        "(it handles: bidirectional)"
    )


def test_function_planner_checks_options_before_support(two_nodes: Platform) -> None:
    with pytest.raises(PlannerError, match="unknown option 'k' for planner 'toy'"):
        TOY.plan(two_nodes, Operation(OperationKind.GATHER), k=1)


def test_function_planner_rejects_non_result(two_nodes: Platform) -> None:
    def returns_none(platform: Platform, operation: Operation) -> Any:
        return None

    bad = FunctionPlanner("bad", returns_none, frozenset(OperationKind), frozenset(PortKind),
                          "returns None")
    with pytest.raises(PlannerError, match="returned NoneType, not a PlanResult"):
        bad.plan(two_nodes, Operation(OperationKind.SCATTER, source="A"))


def test_function_planner_passes_options(two_nodes: Platform) -> None:
    seen: dict[str, object] = {}

    def record(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
        seen.update(options)
        return PlanResult.ok("rec", None, throughput_bound=Fraction(1, 3))

    rec = FunctionPlanner("rec", record, frozenset(OperationKind), frozenset(PortKind),
                          "records", options=frozenset({"k"}))
    result = rec.plan(two_nodes, Operation(OperationKind.SCATTER, source="A"), k=4)
    assert seen == {"k": 4}
    assert result.throughput_bound == Fraction(1, 3)


def test_unsupported_reason_none_when_supported(two_nodes: Platform) -> None:
    op = Operation(OperationKind.SCATTER, source="A")
    assert unsupported_reason("x", {OperationKind.SCATTER}, set(PortKind), two_nodes, op) is None


def test_plan_result_constructors() -> None:
    tree = WeightedTree(Fraction(1, 2), (("Ps", "Pa"), ("Pa", "P0")))
    ok = PlanResult.ok("lp", None, throughput_bound=Fraction(1, 2), period=12,
                       trees=[tree], notes=["split messages"])
    assert ok.is_ok
    assert ok.period == Fraction(12)
    assert isinstance(ok.period, Fraction)
    assert ok.trees == (tree,)
    assert ok.to_dict() == {
        "planner": "lp", "status": "ok", "message": "",
        "throughput_bound": "1/2", "period": "12", "makespan": None,
        "trees": [{"weight": "1/2", "edges": [["Ps", "Pa"], ["Pa", "P0"]]}],
        "notes": ["split messages"],
        # no schedule: nothing achieved, so whether the bound is reached is unknown
        "achieved_throughput": None, "bound_reached": None,
    }
    un = PlanResult.unsupported("flat", "flat does not handle alltoall")
    assert (un.status, un.message, un.planner, un.schedule) == (
        "unsupported", "flat does not handle alltoall", "flat", None)
    assert PlanResult.infeasible("lp", "no flow").status == "infeasible"
    assert PlanResult.error("lp", "solver failed").status == "error"


def test_plan_result_rejects_bad_status() -> None:
    with pytest.raises(PlannerError, match="status must be one of error, infeasible, ok"):
        PlanResult("done", None)  # type: ignore[arg-type]


def test_plan_result_rejects_float_figures() -> None:
    with pytest.raises(PlannerError, match="makespan must be an exact rational"):
        PlanResult.ok("flat", None, makespan=0.5)  # type: ignore[arg-type]


def test_weighted_tree() -> None:
    tree = WeightedTree(1, [("A", "B"), ("A", "C")])  # type: ignore[arg-type]
    assert tree.weight == Fraction(1)
    assert tree.edges == (("A", "B"), ("A", "C"))
    assert tree.nodes == ("A", "B", "C")
    with pytest.raises(PlannerError, match="tree weight must be >= 0"):
        WeightedTree(Fraction(-1), ())


def test_public_surface() -> None:
    for name in planners.__all__:
        assert hasattr(planners, name), name


# -- a cheap listing (issue 12, item 5) ----------------------------------------------------


def test_the_listing_matches_every_builtin_planner() -> None:
    from portsim.planners.registry import BUILTIN_PLANNERS, planner_infos

    infos = {info.name: info for info in planner_infos()}
    assert set(BUILTIN_PLANNERS) <= set(infos)
    for name, planner in BUILTIN_PLANNERS.items():
        info = infos[name]
        assert planner.name == name
        assert info.operations == {str(k) for k in planner.operations}
        assert info.port_models == {str(k) for k in planner.port_models}
        assert info.description == planner.description


def test_help_and_planners_import_nothing_heavy() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    heavy = ("networkx", "scipy", "numpy", "pydantic", "simpy", "highspy", "yaml")
    for args in (["--help"], ["planners"]):
        code = ("import sys\nfrom portsim.scenarios.cli import main\ntry:\n"
                f"    main({args!r})\nexcept SystemExit:\n    pass\n"
                f"print('LOADED', sorted(m for m in {heavy!r} if m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=root, env={"PYTHONPATH": str(root), "PATH": ""},
                              timeout=120, check=True)
        assert done.stdout.strip().splitlines()[-1] == "LOADED []", (args, done.stdout)
