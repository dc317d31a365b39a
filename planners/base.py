"""What every planner is and returns.

A planner is any object with a ``name``, the ``operations`` and
``port_models`` it supports, a one-line ``description`` and a method
``plan(platform, operation, **options) -> PlanResult`` (the :class:`Planner`
protocol).  Plain functions become planners through :class:`FunctionPlanner`.

Misuse raises; outcomes are results.  An unknown option is misuse
(:func:`check_options` raises :class:`~portsim.simulator.errors.PlannerError`); an
operation or port model the planner does not handle is an outcome
(:meth:`PlanResult.unsupported`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

from portsim.simulator.errors import PlannerError, record_repr
from portsim.simulator.numbers import format_rational, with_article
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Schedule

__all__ = [
    "FunctionPlanner",
    "PlanFunction",
    "PlanResult",
    "PlanStatus",
    "Planner",
    "ReplayMode",
    "WeightedTree",
    "check_options",
    "missing_path",
    "reaches_bound",
    "unsupported_reason",
]

PlanStatus: TypeAlias = Literal["ok", "unsupported", "infeasible", "error"]
"""Outcome of a planner, ``ok``, ``unsupported``, ``infeasible`` or ``error``."""

_STATUSES: frozenset[str] = frozenset(get_args(PlanStatus))

ReplayMode: TypeAlias = Literal["strict", "asap"]
"""How the runner replays a plan's schedule.

``strict`` (the validator: the planned times are claimed feasible) or
``asap`` (only the per-port order is kept and the engine measures what it
achieves, e.g. ``lp-naive``)."""

_REPLAY_MODES: frozenset[str] = frozenset(get_args(ReplayMode))


def _exact(value: object, name: str) -> Fraction | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Fraction | int):
        raise PlannerError(f"{name} must be an exact rational (Fraction or int)", value=value)
    return Fraction(value)


@dataclass(frozen=True, slots=True)
class WeightedTree:
    """A tree (or path) used by a steady-state schedule, with its weight.

    Parameters
    ----------
    weight:
        Operations per time unit that go through this tree.
    edges:
        Directed edges ``(src, dst)`` of the tree.

    Examples
    --------
    >>> from fractions import Fraction
    >>> t = WeightedTree(Fraction(1, 2), (("Ps", "Pa"), ("Pa", "P0")))
    >>> t.nodes
    ('Ps', 'Pa', 'P0')
    >>> t.to_dict()
    {'weight': '1/2', 'edges': [['Ps', 'Pa'], ['Pa', 'P0']]}
    """

    weight: Fraction
    edges: tuple[tuple[NodeId, NodeId], ...]

    def __post_init__(self) -> None:
        weight = _exact(self.weight, "a tree weight")
        if weight is None or weight < 0:
            raise PlannerError("a tree weight must be >= 0", value=str(self.weight))
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "edges", tuple((str(s), str(d)) for s, d in self.edges))

    @property
    def nodes(self) -> tuple[NodeId, ...]:
        """The nodes the edges touch, in order of first appearance."""
        seen: dict[NodeId, None] = {}
        for src, dst in self.edges:
            seen.setdefault(src)
            seen.setdefault(dst)
        return tuple(seen)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (the weight as an exact string)."""
        return {"weight": format_rational(self.weight),
                "edges": [[src, dst] for src, dst in self.edges]}


@dataclass(frozen=True)
class PlanResult:
    """What a planner returns.

    Parameters
    ----------
    status:
        ``"ok"``, ``"unsupported"`` (the planner does not handle this
        operation or port model), ``"infeasible"`` or ``"error"``.
    schedule:
        The schedule (one-shot or periodic), when the planner built one.
    message:
        Why, when ``status`` is not ``"ok"``.
    throughput_bound:
        Exact optimal steady-state throughput, when the planner computes one.
    period:
        Exact period of a periodic schedule, when there is one.
    makespan:
        Exact planned length of a one-shot schedule, when there is one.
    trees:
        Weighted trees (or paths) behind a steady-state schedule.
    notes:
        Remarks for the user (approximations made, caps hit...).
    planner:
        Name of the planner that produced the result.
    replay:
        ``"strict"`` (default): the schedule's times are claimed feasible and
        the runner validates them; ``"asap"``: the planner claims only an
        order of events (``lp-naive``, whose port-sum timing is not
        achievable under the unidirectional model) and the runner replays it
        as soon as possible under the real port model to measure it.
        ``throughput_bound`` is then the planner's own (possibly unachievable)
        figure, never a bound other planners are checked against.
    achieved_throughput:
        Exact steady-state throughput the planner's own schedule reaches by
        construction, when it states one (``lp``: the throughput of its
        periodic schedule, below ``throughput_bound`` when the bound is the
        upper end of a certified interval or a fixed period loses some).
        :attr:`bound_reached` compares the two.
    bound_exact:
        Whether ``throughput_bound`` is proven to be the optimal throughput
        (``True``), or only an upper bound on it (``False``: the upper end of a
        certified interval, or the bound of a relaxed model); ``None`` when the
        planner does not say.

    Raises
    ------
    PlannerError
        On an unknown status or a figure that is not an exact rational.

    Examples
    --------
    >>> r = PlanResult.unsupported("flat", "flat does not handle alltoall")
    >>> r.status, r.is_ok
    ('unsupported', False)
    >>> r.to_dict()["message"]
    'flat does not handle alltoall'
    """

    status: PlanStatus
    schedule: Schedule | None
    message: str = ""
    throughput_bound: Fraction | None = None
    period: Fraction | None = None
    makespan: Fraction | None = None
    trees: tuple[WeightedTree, ...] = ()
    notes: tuple[str, ...] = ()
    planner: str = ""
    replay: ReplayMode = "strict"
    achieved_throughput: Fraction | None = None
    bound_exact: bool | None = None

    def __repr__(self) -> str:
        return record_repr(self)

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise PlannerError(
                "status must be one of " + ", ".join(sorted(_STATUSES)), value=self.status
            )
        if self.replay not in _REPLAY_MODES:
            raise PlannerError("replay must be strict or asap", value=self.replay)
        for name in ("throughput_bound", "period", "makespan", "achieved_throughput"):
            object.__setattr__(self, name, _exact(getattr(self, name), name))
        object.__setattr__(self, "trees", tuple(self.trees))
        object.__setattr__(self, "notes", tuple(self.notes))

    # -- constructors ----------------------------------------------------------

    @classmethod
    def ok(
        cls,
        planner: str,
        schedule: Schedule | None,
        *,
        throughput_bound: Fraction | int | None = None,
        period: Fraction | int | None = None,
        makespan: Fraction | int | None = None,
        trees: Iterable[WeightedTree] = (),
        notes: Iterable[str] = (),
        message: str = "",
        replay: ReplayMode = "strict",
        achieved_throughput: Fraction | int | None = None,
        bound_exact: bool | None = None,
    ) -> PlanResult:
        """A successful plan (integer figures become exact ``Fraction``)."""
        return cls("ok", schedule, message, _exact(throughput_bound, "throughput_bound"),
                   _exact(period, "period"), _exact(makespan, "makespan"),
                   tuple(trees), tuple(notes), planner, replay,
                   _exact(achieved_throughput, "achieved_throughput"), bound_exact)

    @classmethod
    def unsupported(cls, planner: str, reason: str) -> PlanResult:
        """The planner does not handle this operation or port model; ``reason`` says why."""
        return cls("unsupported", None, reason, planner=planner)

    @classmethod
    def infeasible(
        cls, planner: str, reason: str, *, notes: Iterable[str] = ()
    ) -> PlanResult:
        """No schedule exists (or the planner proved it cannot find one)."""
        return cls("infeasible", None, reason, notes=tuple(notes), planner=planner)

    @classmethod
    def error(cls, planner: str, reason: str, *, notes: Iterable[str] = ()) -> PlanResult:
        """The planner failed (a solver error, a cap hit...); ``reason`` says how."""
        return cls("error", None, reason, notes=tuple(notes), planner=planner)

    # -- views -----------------------------------------------------------------

    @property
    def is_ok(self) -> bool:
        """True when ``status == "ok"``."""
        return self.status == "ok"

    @property
    def bound_reached(self) -> bool | None:
        """Whether the schedule reaches ``throughput_bound`` (``None`` when either
        figure is not stated).

        Examples
        --------
        >>> from fractions import Fraction
        >>> r = PlanResult.ok("lp", None, throughput_bound=1,
        ...                   achieved_throughput=Fraction(1, 6))
        >>> r.bound_reached, r.to_dict()["achieved_throughput"]
        (False, '1/6')
        >>> PlanResult.ok("flat", None, makespan=2).bound_reached is None
        True
        """
        return reaches_bound(self.throughput_bound, self.achieved_throughput)

    def to_dict(self) -> dict[str, Any]:
        """The planner's part of a SPEC.md JSON result (exact figures as strings).

        ``"replay": "asap"`` is added only for a plan replayed as soon as
        possible (the default, strict, is left implicit).
        """

        def text(value: Fraction | None) -> str | None:
            return None if value is None else format_rational(value)

        out: dict[str, Any] = {
            "planner": self.planner,
            "status": self.status,
            "message": self.message,
            "throughput_bound": text(self.throughput_bound),
            "period": text(self.period),
            "makespan": text(self.makespan),
            "trees": [t.to_dict() for t in self.trees],
            "notes": list(self.notes),
            "achieved_throughput": text(self.achieved_throughput),
            "bound_reached": self.bound_reached,
        }
        if self.replay != "strict":
            out["replay"] = self.replay
        return out


def reaches_bound(bound: Fraction | None, achieved: Fraction | None) -> bool | None:
    """``achieved >= bound``, or ``None`` when either figure is unknown.

    Examples
    --------
    >>> from fractions import Fraction
    >>> reaches_bound(Fraction(1), Fraction(1, 6)), reaches_bound(Fraction(1), None)
    (False, None)
    """
    if bound is None or achieved is None:
        return None
    return achieved >= bound


@runtime_checkable
class Planner(Protocol):
    """The planner protocol.

    Attributes
    ----------
    name:
        Registry name (``"flat"``, ``"lp"``...).
    operations:
        Operation kinds the planner handles.
    port_models:
        Port model kinds the planner handles (every node of the platform must
        obey one of them).
    description:
        One line for ``portsim planners``.
    """

    @property
    def name(self) -> str:
        """Registry name."""
        ...

    @property
    def operations(self) -> frozenset[OperationKind]:
        """Operation kinds the planner handles."""
        ...

    @property
    def port_models(self) -> frozenset[PortKind]:
        """Port model kinds the planner handles."""
        ...

    @property
    def description(self) -> str:
        """One line for ``portsim planners``."""
        ...

    def plan(self, platform: Platform, operation: Operation, **options: Any) -> PlanResult:
        """Plan ``operation`` on ``platform``.

        Raises
        ------
        PlannerError
            On misuse (unknown option, bad option value).  An operation or
            port model the planner does not handle is a returned
            :meth:`PlanResult.unsupported`, not an exception.
        """
        ...


PlanFunction: TypeAlias = Callable[..., PlanResult]
"""``f(platform, operation, **options) -> PlanResult``."""


def check_options(name: str, options: Mapping[str, object], allowed: Iterable[str]) -> None:
    """Reject options a planner does not know.

    Parameters
    ----------
    name:
        The planner's name, for the message.
    options:
        The options given.
    allowed:
        The option names the planner accepts.

    Raises
    ------
    PlannerError
        Naming the first unknown option (in sorted order) and listing the
        valid ones.

    Examples
    --------
    >>> check_options("greedy", {"reducers": 2}, ["reducers", "concurrent_transfers"])
    >>> check_options("flat", {"depth": 2}, [])
    Traceback (most recent call last):
    ...
    portsim.simulator.errors.PlannerError: planners.flat.depth: unknown option 'depth' for \
planner 'flat'; it takes no options (got 'depth')
    """
    valid = sorted(set(allowed))
    unknown = sorted(str(key) for key in options if key not in valid)
    if not unknown:
        return
    listing = ("valid options: " + ", ".join(valid)) if valid else "it takes no options"
    raise PlannerError(
        f"unknown option {unknown[0]!r} for planner {name!r}; {listing}",
        path=f"planners.{name}.{unknown[0]}",
        value=unknown[0],
    )


def unsupported_reason(
    name: str,
    operations: Iterable[OperationKind],
    port_models: Iterable[PortKind],
    platform: Platform,
    operation: Operation,
    *,
    nodes: Iterable[NodeId] | None = None,
) -> str | None:
    """Why a planner cannot handle ``operation`` on ``platform``, or ``None`` if it can.

    Parameters
    ----------
    name:
        The planner's name, for the message.
    operations, port_models:
        What the planner supports.
    platform, operation:
        The problem.
    nodes:
        The nodes whose port models must be supported (default: every node
        of the platform); a planner that never uses the other nodes names
        only those it uses.

    Returns
    -------
    str or None
        A sentence naming the unsupported operation kind or the first node
        whose port model is unsupported; ``None`` when supported.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> op = Operation(OperationKind.ALLTOALL)
    >>> unsupported_reason("flat", {OperationKind.SCATTER}, {PortKind.BIDIRECTIONAL}, p, op)
    'flat does not handle alltoall (it handles: scatter)'
    """
    ops = frozenset(operations)
    kind = OperationKind(operation.kind)
    if kind not in ops:
        handled = ", ".join(sorted(str(k) for k in ops)) or "nothing"
        return f"{name} does not handle {kind} (it handles: {handled})"
    models = frozenset(port_models)
    for node in platform.node_ids if nodes is None else nodes:
        model = platform.port_model_of(node)
        if model.kind not in models:
            handled = ", ".join(sorted(str(k) for k in models)) or "nothing"
            return (f"{name} does not handle the {model} port model of node {node} "
                    f"(it handles: {handled})")
    return None


def missing_path(platform: Platform, nodes: Iterable[NodeId]) -> tuple[NodeId, NodeId] | None:
    """The first ordered pair of ``nodes`` with no path from the first to the second.

    A planner that may send between any two of ``nodes`` (a reduction tree
    arranges its participants freely) answers ``unsupported`` naming this
    pair instead of failing half-way.

    Returns
    -------
    tuple or None
        ``(src, dst)`` with ``dst`` unreachable from ``src``, in the order of
        ``nodes``; ``None`` when every node reaches every other.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "B", "C"], [("A", "C", 1), ("B", "C", 1)])
    >>> missing_path(p, ["A", "B", "C"])
    ('A', 'B')
    >>> missing_path(p, ["C"]) is None
    True
    """
    import networkx as nx  # lazily: listing the planners must not import networkx

    wanted = list(dict.fromkeys(nodes))
    graph = platform.graph
    for src in wanted:
        reachable = nx.descendants(graph, src)
        for dst in wanted:
            if dst != src and dst not in reachable:
                return src, dst
    return None


@dataclass(frozen=True)
class FunctionPlanner:
    """A :class:`Planner` made of a plain function.

    :meth:`plan` rejects unknown options (:func:`check_options`), returns
    :meth:`PlanResult.unsupported` for an operation or port model outside
    :attr:`operations` and :attr:`port_models`, and otherwise calls
    ``function(platform, operation, **options)``.

    Parameters
    ----------
    name:
        Registry name.
    function:
        ``f(platform, operation, **options) -> PlanResult``.
    operations, port_models:
        What the function handles.
    description:
        One line for ``portsim planners``.
    options:
        Option names the function accepts.
    check_options:
        Optional ``f(options)`` raising :class:`PlannerError` on a bad option
        value; run before the support check, so that a bad option is bad
        input whatever the operation (not hidden behind an ``unsupported``).
        The error's ``path`` is put under ``planners.NAME`` (none:
        ``planners.NAME``; ``"k"``: ``planners.NAME.k``), the key path by
        which ``portsim run`` and ``plan`` tell a bad option (exit status 2)
        from a planner's failure (an ``error`` row).
    port_nodes:
        Optional ``f(platform, operation)`` giving the nodes whose port
        models must be in :attr:`port_models` (default: every node), for a
        planner that uses only some nodes (the processors taking part).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> def nothing(platform, operation):
    ...     return PlanResult.error("nothing", "plans nothing")
    >>> planner = FunctionPlanner("nothing", nothing, frozenset({OperationKind.SCATTER}),
    ...                           frozenset(PortKind), "plans nothing")
    >>> isinstance(planner, Planner)
    True
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> planner.plan(p, Operation(OperationKind.GATHER)).status
    'unsupported'
    """

    name: str
    function: PlanFunction = field(repr=False)
    operations: frozenset[OperationKind]
    port_models: frozenset[PortKind]
    description: str
    options: frozenset[str] = frozenset()
    check_options: Callable[[Mapping[str, Any]], None] | None = field(default=None, repr=False)
    port_nodes: Callable[[Platform, Operation], Iterable[NodeId]] | None = field(
        default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "operations", frozenset(OperationKind(k) for k in self.operations))
        object.__setattr__(self, "port_models", frozenset(PortKind(k) for k in self.port_models))
        object.__setattr__(self, "options", frozenset(self.options))

    def plan(self, platform: Platform, operation: Operation, **options: Any) -> PlanResult:
        """Check the options and support, then call the function.

        Raises
        ------
        PlannerError
            On an unknown option or a bad option value, or when the function
            does not return a :class:`PlanResult`.
        """
        for name, value, kind in (("platform", platform, Platform),
                                  ("operation", operation, Operation)):
            if not isinstance(value, kind):
                raise PlannerError(f"{name} must be {with_article(kind.__name__)}", path=name,
                                   value=type(value).__name__)
        check_options(self.name, options, self.options)
        if self.check_options is not None:
            try:
                self.check_options(options)
            except PlannerError as err:
                # The runners tell a bad option (bad input, exit 2) from a
                # planner's failure by its key path under ``planners.NAME``;
                # a plug-in's check that gives no such path means the same.
                prefix = f"planners.{self.name}"
                if err.path is None:
                    err.path = prefix
                elif not err.path.startswith("planners."):
                    err.path = f"{prefix}.{err.path}"
                raise
        nodes = (self.port_nodes(platform, operation)
                 if self.port_nodes is not None
                 and OperationKind(operation.kind) in self.operations else None)
        reason = unsupported_reason(self.name, self.operations, self.port_models,
                                    platform, operation, nodes=nodes)
        if reason is not None:
            return PlanResult.unsupported(self.name, reason)
        result = self.function(platform, operation, **options)
        if not isinstance(result, PlanResult):
            raise PlannerError(
                f"planner {self.name!r} returned {type(result).__name__}, not a PlanResult",
                value=type(result).__name__,
            )
        return result
