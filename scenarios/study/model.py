"""Platform-free evaluation of the Canon–Antoniu tree planners (``evaluation: model``).

Canon and Antoniu's model (INRIA RR-7898, 2012, section 3) is homogeneous:
``n`` machines, every transfer takes ``d``, every reduction ``c``.  On such a
platform the length of each tree planner's schedule follows from ``n``,
``d`` and ``c`` alone, by the planners' own length computation in
:mod:`portsim.planners.trees`:

- ``greedy``: the length Algorithm 1 announces (``greedy_tree(n, d, c).length``;
  Algorithms 2 and 3 with ``concurrent_transfers`` or ``reducers``), optimal
  under the model (Theorem 17);
- ``binomial`` and ``fibonacci``: the strategy's tree timed with the real
  ``d`` and ``c`` (``tree_length(strategy_tree(name, n), d, c)``, the
  transfer times of Proposition 3); a binomial tree of order ``k`` reduces
  ``2^k`` machines in ``k (d + c)`` (Proposition 13), a Fibonacci tree of
  order ``k`` reduces ``F(k+2)`` machines in ``d + (k - 1) max(d, c) + c``
  (Proposition 16).

A study with ``evaluation: model`` computes these lengths instead of
building the complete platform (``n (n - 1)`` links) and replaying each
schedule, so Fig. 2 of the paper (2 <= n <= 10000) runs in seconds.  Its
scenarios must be that model: a ``complete`` generator (``d = size * c`` of
the generator, ``c`` = its ``compute``), a ``reduce`` whose target is a
participant, the planners ``greedy``, ``binomial``, ``fibonacci``, and a
one-port model (``bidirectional`` or ``unidirectional``: in a tree a
machine sends only after all its receptions, so both give the length of the
paper's unidirectional model).  The rows carry the exact ``makespan`` and a
note; ``feasible``, ``measured_throughput`` and the replay figures are
empty, since nothing is replayed.  ``tests/test_study.py`` checks that the
lengths equal the makespans the planners' schedules reach in the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from portsim.planners.trees import greedy_tree, sink_positions, strategy_tree, tree_length
from portsim.scenarios.loader import PlannerSpec, validate_document
from portsim.scenarios.runner import PlannerRun
from portsim.scenarios.schema import CompleteGeneratorSpec, ScenarioSpec
from portsim.simulator.errors import PlannerError, ScenarioError
from portsim.simulator.platform import PortKind

__all__ = ["MODEL_PLANNERS", "check_model_scenario", "model_length", "model_results"]

MODEL_PLANNERS: Mapping[str, frozenset[str]] = {
    "greedy": frozenset({"concurrent_transfers", "reducers"}),
    "binomial": frozenset(),
    "fibonacci": frozenset(),
}
"""Planners ``evaluation: model`` knows, with the options each accepts."""

_NOTE = ("model evaluation (evaluation: model): the length of the planner's tree on the "
         "homogeneous Canon-Antoniu model, no platform built, no replay")


def check_model_scenario(document: Mapping[str, Any], *, source: str,
                         prefix: str = "base") -> ScenarioSpec:
    """Check that a scenario document is Canon and Antoniu's homogeneous model.

    Parameters
    ----------
    document:
        A run's scenario document.
    source, prefix:
        Named in the error (the study file, and the key path of the document
        in it).

    Returns
    -------
    ScenarioSpec
        The validated document.

    Raises
    ------
    ScenarioError
        One line naming the key path and the value that the model cannot
        evaluate: another generator, operation or planner, a multi-port
        model, a target that is not a participant.
    """
    why = "evaluation: model needs"
    platform = document.get("platform")
    drawn = platform.get("generator") if isinstance(platform, Mapping) else None
    kind = drawn.get("type") if isinstance(drawn, Mapping) else None
    if isinstance(kind, str) and kind != "complete":
        # before the generator's own keys: a `random` generator without its
        # `degree` is refused for what the model cannot evaluate, not for that
        raise ScenarioError(f"{why} a complete generator (homogeneous d and c)",
                            path=f"{prefix}.platform.generator.type", value=kind,
                            source=source)
    spec = validate_document(ScenarioSpec, dict(document), source=source, error=ScenarioError,
                             prefix=prefix)
    generator = spec.platform.generator
    if not isinstance(generator, CompleteGeneratorSpec):
        raise ScenarioError(f"{why} a complete generator (homogeneous d and c)",
                            path=f"{prefix}.platform.generator" + (".type" if generator else ""),
                            value=generator.type if generator else None, source=source)
    if spec.platform.port_model.kind is PortKind.MULTIPORT:
        raise ScenarioError(f"{why} a one-port model (bidirectional or unidirectional)",
                            path=f"{prefix}.platform.port_model",
                            value=str(spec.platform.port_model), source=source)
    if spec.operation.type != "reduce":
        raise ScenarioError(f"{why} a reduce", path=f"{prefix}.operation.type",
                            value=spec.operation.type, source=source)
    names = [f"P{i}" for i in range(generator.n)]
    participants = spec.operation.participants or names
    known = set(names)
    for index, node in enumerate(participants):
        if node not in known:
            raise ScenarioError("unknown node id", path=f"{prefix}.operation.participants"
                                f"[{index}]", value=node, source=source)
    if len(set(participants)) != len(participants):
        raise ScenarioError("a participant is listed twice", source=source,
                            path=f"{prefix}.operation.participants", value=participants)
    if spec.operation.target not in participants:
        raise ScenarioError(f"{why} a target among the participants",
                            path=f"{prefix}.operation.target", value=spec.operation.target,
                            source=source)
    if not spec.planners:
        raise ScenarioError(f"{why} planners among {', '.join(MODEL_PLANNERS)}",
                            path=f"{prefix}.planners", source=source)
    for index, entry in enumerate(spec.planners):
        if entry.name not in MODEL_PLANNERS:
            raise ScenarioError(f"{why} planners among {', '.join(MODEL_PLANNERS)}",
                                path=f"{prefix}.planners[{index}]", value=entry.name,
                                source=source)
    return spec


def model_length(planner: str, n: int, d: Fraction, c: Fraction, *,
                 options: Mapping[str, Any] | None = None,
                 sink: int = 0, commutative: bool = False) -> Fraction:
    """Length of a tree planner's schedule on ``n`` machines with costs ``d`` and ``c``.

    Parameters
    ----------
    planner:
        ``greedy``, ``binomial`` or ``fibonacci``.
    n:
        Number of machines (participants), >= 1.
    d, c:
        Transfer time of one element and time of one reduction.
    options:
        ``greedy``'s ``concurrent_transfers`` or ``reducers``.
    sink:
        Index of the reduce target among the participants.
    commutative:
        Whether the operator may be reordered (then any machine may be the sink).

    Returns
    -------
    Fraction
        The exact length, which the planner's schedule reaches on a complete
        platform with link cost ``d`` and compute time ``c``.

    Raises
    ------
    PlannerError
        On an unknown planner or option, or, for a non-commutative operator,
        a ``sink`` that no labelling of the tree (section 4.1) can give the
        sink's machine: the planner then forwards the result, which the model
        does not time.

    Examples
    --------
    >>> model_length("binomial", 8, Fraction(1), Fraction(1))  # k (d + c), k = 3
    Fraction(6, 1)
    >>> model_length("fibonacci", 8, Fraction(1), Fraction(0))  # d + (k - 1) max + c, k = 4
    Fraction(4, 1)
    """
    options = dict(options or {})
    if planner not in MODEL_PLANNERS:
        raise PlannerError(f"no model evaluation for this planner (known: "
                           f"{', '.join(MODEL_PLANNERS)})", path="planners", value=planner)
    unknown = sorted(set(options) - MODEL_PLANNERS[planner])
    if unknown:
        raise PlannerError("unknown option", path=f"planners.{planner}.{unknown[0]}",
                           value=options[unknown[0]])
    if planner == "greedy":
        tree = greedy_tree(n, d, c, concurrent_transfers=options.get("concurrent_transfers"),
                           reducers=options.get("reducers"))
        length = tree.length
    else:
        tree = strategy_tree(planner, n)  # type: ignore[arg-type]
        length = tree_length(tree, d, c)
    if not commutative and not (sink_positions(tree) >> sink) & 1:
        raise PlannerError("non-commutative reduce: no labelling of this tree gives the sink "
                           "the target's index, so the planner forwards the result; the model "
                           "does not time that (use target P0)", path="operation.target",
                           value=sink)
    return length


def model_results(document: Mapping[str, Any], *, source: str) -> list[dict[str, Any]]:
    """The results of every planner of a model-evaluated scenario document.

    Returns
    -------
    list of dict
        One SPEC.md JSON result per planner (as ``PlannerRun.to_dict``), or
        an ``error`` one when a planner's options are bad.

    Raises
    ------
    ScenarioError
        When the document is not the model (:func:`check_model_scenario`).
    """
    spec = check_model_scenario(document, source=source, prefix="")
    generator = spec.platform.generator
    assert isinstance(generator, CompleteGeneratorSpec)
    participants = spec.operation.participants or [f"P{i}" for i in range(generator.n)]
    sink = participants.index(spec.operation.target or "")
    d, c = spec.operation.size * generator.c, generator.compute
    port_model = str(spec.platform.port_model)
    results: list[dict[str, Any]] = []
    for entry in spec.planners:
        planner = PlannerSpec(entry.name, dict(entry.options))
        try:
            length = model_length(planner.name, len(participants), d, c,
                                  options=planner.options, sink=sink,
                                  commutative=spec.operation.commutative)
        except PlannerError as err:
            results.append(PlannerRun(planner.name, "reduce", port_model, "error",
                                      message=str(err), replay="model").to_dict())
            continue
        note = f"{_NOTE}: n = {len(participants)}, d = {d}, c = {c}, length {length}"
        results.append(PlannerRun(planner.name, "reduce", port_model, "ok", makespan=length,
                                  notes=(note,), replay="model").to_dict())
    return results
