"""How far a schedule is from optimal: its throughput against the ``lp`` bound.

The ``lp`` planner computes the optimal steady-state throughput of an
operation on a platform (an exact rational).  Any schedule, one-shot or
periodic, achieves at most that rate: a periodic schedule completes
``instances_per_period / period`` operations per time unit, and a one-shot
schedule run again and again, back to back, completes ``instances /
end_time`` (its makespan, unless events end after the operation
completed).  :func:`lp_bound` looks the planner up in the registry at run
time, so that portsim works, and says so, when no ``lp`` planner is installed
or when it does not handle the operation or port model.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.lp import LP_PLANNER, lp_throughput_bound
from portsim.planners.registry import available_planners
from portsim.simulator.errors import PortsimError
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

__all__ = ["BoundComparison", "LpBound", "compare_to_bound", "lp_bound", "time_limit_words"]


def time_limit_words(text: str, option: str) -> str:
    """An ``lp`` message about its ``time_limit`` option in the words of a caller
    whose ``option`` sets that limit (``--lp-time-limit``).

    >>> time_limit_words("time limit of 1.0 s reached; raise time_limit", "--lp-time-limit")
    'time limit of 1.0 s reached; raise --lp-time-limit'
    """
    return (text.replace("(the default time_limit)", f"(the default; {option} sets it)")
            .replace("raise time_limit", f"raise {option}"))


@dataclass(frozen=True, slots=True)
class LpBound:
    """The ``lp`` planner's throughput bound, or why there is none.

    Attributes
    ----------
    bound:
        The exact optimal steady-state throughput, or ``None``.
    reason:
        Empty when ``bound`` is known; else why not (no ``lp`` planner,
        unsupported operation or port model, solver failure).
    caveat:
        Empty when ``bound`` is the proven optimum.  Otherwise what the
        planner said of it: its message (e.g. the certified interval whose
        upper end ``bound`` is) and its notes naming a bound it did not
        attempt or finish (e.g. on large allreduces, or a relaxation out of
        its time on a loaded machine), joined by ``"; "``.
    """

    bound: Fraction | None
    reason: str = ""
    caveat: str = ""


@dataclass(frozen=True, slots=True)
class BoundComparison:
    """A throughput next to a bound: ``ratio = throughput / bound`` (1 is optimal)."""

    throughput: Fraction
    bound: Fraction
    ratio: Fraction


def lp_bound(platform: Platform, operation: Operation, *,
             time_limit: float | None = None) -> LpBound:
    """Ask the registered ``lp`` planner for the optimal throughput.

    Parameters
    ----------
    platform:
        The platform (with the port model to bound under).
    operation:
        The operation, resolved against ``platform``.
    time_limit:
        Seconds the ``lp`` may take (its ``time_limit`` option; ``None``: its
        default).  A reduce cut by it gives a certified interval (the caveat
        says so, ``bound`` is its upper end), or no bound, the reason naming
        the phase it stopped in; never a figure of the cut part.

    Returns
    -------
    LpBound
        Never raises for a missing or failing planner: the reason says what
        happened ("no lp planner is registered", the planner's own message).

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform
    >>> p = Platform.build(["A", "B"], [("A", "B", 2)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> lp_bound(p, op).bound  # one link of cost 2: one broadcast every 2 time units
    Fraction(1, 2)
    """
    planner = available_planners().get("lp")
    if planner is None:
        return LpBound(None, "no lp planner is registered")
    try:
        # Only the bound is wanted: what the planner warns about its own periodic
        # schedule (a period over max_events) is not the caller's business, and
        # portsim's own lp gives the bound without building that schedule.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            options = {} if time_limit is None else {"time_limit": time_limit}
            result = (lp_throughput_bound(platform, operation, **options)
                      if planner is LP_PLANNER else planner.plan(platform, operation, **options))
    except PortsimError as err:
        return LpBound(None, f"lp failed: {err}")
    except Exception as err:  # a plug-in's bug must not break validation
        return LpBound(None, f"lp failed: {type(err).__name__}: {err}")
    if result.throughput_bound is None:
        why = result.message or f"lp returned {result.status} without a bound"
        return LpBound(None, why)
    caveat = ""
    if result.message:  # an ok result with a message: the bound is not proven optimal
        # with what cut the program short: a step not attempted or not finished,
        # or a generation stopped under the time limit (the interval a user's
        # --lp-time-limit gave said nothing of that limit)
        caveat = "; ".join([result.message,
                            *(note for note in result.notes
                              if "not attempted" in note or "not finished" in note
                              or "under the time limit of" in note)])
    return LpBound(Fraction(result.throughput_bound), caveat=caveat)


def compare_to_bound(throughput: Fraction, bound: Fraction) -> BoundComparison:
    """``throughput / bound`` as an exact ratio.

    Examples
    --------
    >>> compare_to_bound(Fraction(3, 7), Fraction(1, 2)).ratio
    Fraction(6, 7)
    """
    if bound <= 0:
        raise PortsimError("a throughput bound must be > 0", value=str(bound))
    return BoundComparison(throughput, bound, throughput / bound)
