"""MSCCL XML algorithms judged by the engine: verdict, makespan, throughput, ratio to ``lp``.

Reading, meaning and timing live with the planners
(:mod:`portsim.planners.msccl`: :func:`read_msccl`, :func:`time_msccl`, the
``msccl`` planner and the XML generators; their names are re-exported here).
This module gives the verdict:

- **Verdicts** (:func:`validate_msccl`): the strict replay of the timed
  schedule, the buffer contents every rank ends with compared with what the
  collective promises, the makespan, the pipelined throughput of a series
  (:func:`~portsim.simulator.engine.replay_series`) and the ratio to the
  ``lp`` bound of the same operation (:func:`portsim.scenarios.bounds.lp_bound`);
- :func:`load_platform_file`, the platform of ``portsim validate ALGO.xml
  --platform FILE.yaml``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from portsim.planners.msccl.algorithm import (
    MSCCL_COLLECTIVES,
    STEP_TYPES,
    MscclAlgorithm,
    MscclGpu,
    MscclStep,
    MscclThreadblock,
    MscclTiming,
    read_msccl,
    time_msccl,
)
from portsim.planners.msccl.generators import (
    allpairs_alltoall_xml,
    ring_allgather_xml,
    ring_allreduce_xml,
    ring_reduce_scatter_xml,
    tree_broadcast_xml,
    tree_reduce_xml,
)
from portsim.planners.msccl.planner import (
    MSCCL_PLANNER,
    MscclFile,
    msccl_file_option,
    msccl_plan,
)
from portsim.simulator.errors import ScheduleError
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import OperationKind
from portsim.simulator.platform import NodeId, Platform, PortModel
from portsim.simulator.report import Report, Violation, ViolationKind
from portsim.simulator.validation import describe_violation_events

__all__ = [
    "MSCCL_COLLECTIVES",
    "MSCCL_PLANNER",
    "STEP_TYPES",
    "MscclAlgorithm",
    "MscclFile",
    "MscclGpu",
    "MscclStep",
    "MscclThreadblock",
    "MscclTiming",
    "MscclValidation",
    "allpairs_alltoall_xml",
    "load_platform_file",
    "msccl_file_option",
    "msccl_plan",
    "read_msccl",
    "ring_allgather_xml",
    "ring_allreduce_xml",
    "ring_reduce_scatter_xml",
    "time_msccl",
    "tree_broadcast_xml",
    "tree_reduce_xml",
    "validate_msccl",
]

_SERIES_MAKESPANS = 100  # horizon of the series, in makespans of one run


# -- verdicts -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MscclValidation:
    """The verdict on an MSCCL algorithm on a platform (:func:`validate_msccl`).

    Attributes
    ----------
    timing:
        The list-scheduled meaning (schedule, ranks, problems).
    report:
        The engine's strict replay of the timed schedule.
    throughput:
        Runs of the whole algorithm per time unit in a pipelined series
        (:func:`~portsim.simulator.engine.replay_series`; an algorithm of
        ``c`` chunk indexes is a series of runs of ``c`` instances, and the
        completed instances over the horizon of 100 makespans count ``1/c``
        run each, so a lower estimate while the series fills), or ``None``
        with the reason in ``throughput_note``.
    lp_bound:
        The ``lp`` bound of the same operation on the same platform, in
        runs of the algorithm per time unit (the bound on ``#j`` instances
        of one chunk, divided by the number of chunk indexes), or ``None``
        with the reason in ``lp_note``.
    """

    timing: MscclTiming
    report: Report
    throughput: Fraction | None
    throughput_note: str
    lp_bound: Fraction | None
    lp_note: str

    @property
    def feasible(self) -> bool:
        """True when the strict replay found no violation (for a
        ``reduce_scatter``, none but the ``incomplete`` instances of the
        allreduce it is replayed as: see :func:`_operation`)."""
        return not self.violations

    @property
    def violations(self) -> tuple[Violation, ...]:
        """The strict replay's violations (for a ``reduce_scatter``, without the
        ``incomplete`` instances of the allreduce it is replayed as)."""
        if self.timing.algorithm.collective == "reduce_scatter":
            return tuple(v for v in self.report.violations
                         if v.kind != ViolationKind.INCOMPLETE)
        return self.report.violations

    @property
    def correct(self) -> bool:
        """True when every rank ends with what the collective promises, every
        instance completes in the replay (``reduce_scatter``: as the importer
        found), and no violation was found."""
        if self.timing.algorithm.collective == "reduce_scatter":
            return self.timing.correct and self.feasible
        return self.timing.correct and self.report.feasible and self.report.complete

    @property
    def problems(self) -> tuple[str, ...]:
        """Why the result is incorrect (rank and chunk named), else empty."""
        return self.timing.problems

    @property
    def makespan(self) -> Fraction | None:
        """When the algorithm's last step ends, as replayed (exact), once the
        collective is complete; a feasible ``reduce_scatter``'s events replay at
        their list-scheduled times, so its makespan is the importer's.

        The end of the replay's last event, not the time the engine first sees
        every rank hold its chunks: a GPU on the path of another rank's transfer
        (between ``dgx_a100`` servers, one on the right rail, as NCCL's PXN
        relays) forwards the chunk without it reaching its buffers, which only
        its own receive fills; and MSCCL returns when every step has ended.
        """
        if self.timing.algorithm.collective == "reduce_scatter":
            return self.timing.makespan if self.correct else None
        if not isinstance(self.report.makespan, Fraction):
            return None
        end = self.report.end_time
        return end if isinstance(end, Fraction) else None

    @property
    def ratio_to_lp_bound(self) -> Fraction | None:
        """``throughput / lp_bound`` when both are known."""
        if self.throughput is None or self.lp_bound is None or self.lp_bound <= 0:
            return None
        return self.throughput / self.lp_bound

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (exact figures as strings)."""
        def text(x: Fraction | None) -> str | None:
            return None if x is None else format_rational(x)
        algo = self.timing.algorithm
        return {
            "algorithm": algo.name, "collective": algo.collective, "ngpus": algo.ngpus,
            "nchunksperloop": algo.nchunksperloop, "ranks": list(self.timing.ranks),
            "feasible": self.feasible, "correct": self.correct,
            "problems": list(self.problems), "makespan": text(self.makespan),
            "throughput": text(self.throughput), "throughput_note": self.throughput_note,
            "lp_bound": text(self.lp_bound), "lp_note": self.lp_note,
            "ratio_to_lp_bound": text(self.ratio_to_lp_bound),
            # as `portsim validate` gives them: each event involved described too
            "violations": [{**v.to_dict(),
                            "described": describe_violation_events(v, self.timing.schedule)}
                           for v in self.violations],
            "port_model": self.report.port_model,
            "runtime_notes": list(algo.runtime_limits()),
        }


def validate_msccl(path_or_text: str | os.PathLike[str] | MscclAlgorithm, platform: Platform,
                   *, size: Fraction | int | str = 1, ranks: Sequence[NodeId] | None = None,
                   port_model: PortModel | str | None = None,
                   lp: bool = True,
                   lp_time_limit: float | None = None,
                   series_makespans: int = _SERIES_MAKESPANS,
                   progress: Callable[[str], None] | None = None) -> MscclValidation:
    """Read, time, replay strictly and judge an MSCCL algorithm on ``platform``.

    Parameters
    ----------
    path_or_text:
        A file name, XML text, or an algorithm already read.
    platform:
        The platform.
    size:
        The message size (a chunk is ``size / nchunksperloop``).
    ranks:
        Platform node of each rank (default: the processors in order).
    port_model:
        Replace the platform-wide port model.
    lp:
        Ask the ``lp`` planner for the bound (it may take seconds).
    lp_time_limit:
        Seconds that bound may take (:func:`~portsim.scenarios.bounds.lp_bound`;
        ``None``: the ``lp``'s default ``time_limit``).
    series_makespans:
        The horizon of the pipelined series, in makespans of one run (the
        throughput counts the runs completed within it, so it is a lower
        estimate of the steady rate by about one makespan's worth of runs
        over the horizon).
    progress:
        Called with the name of each phase as it starts (timing, the strict
        replay, the series, the ``lp`` bound): on 64 ranks the whole takes
        seconds (a ring allreduce on a complete platform: 16 s of CPU).

    Raises
    ------
    ScheduleError
        On a malformed file (see :func:`read_msccl`) or ranks that do not fit.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> from portsim.scenarios.msccl import ring_allgather_xml
    >>> p = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P2", 1),
    ...                                          ("P2", "P0", 1)])
    >>> v = validate_msccl(ring_allgather_xml(3), p, size=3, lp=False)
    >>> v.correct, v.makespan, v.throughput
    (True, Fraction(2, 1), Fraction(1, 2))
    """
    from portsim.planners.lp import LpOptions
    from portsim.scenarios.bounds import lp_bound
    from portsim.simulator.engine import replay, replay_series

    def phase(text: str) -> None:
        if progress is not None:
            progress(text)

    if not isinstance(platform, Platform):
        raise ScheduleError("platform must be a Platform (load_platform_file reads a YAML "
                            "file's)", path="platform", value=type(platform).__name__)
    phase("reading and timing the algorithm")
    algo = path_or_text if isinstance(path_or_text, MscclAlgorithm) else read_msccl(
        path_or_text)
    if port_model is not None:
        platform = platform.with_port_model(port_model)
    timing = time_msccl(algo, platform, size=size, ranks=ranks)
    phase(f"replaying {len(timing.schedule.events)} events strictly")
    report = replay(timing.schedule, mode="strict")
    instances = algo.chunks_per_rank
    throughput: Fraction | None = None
    note = ""
    ok = timing.correct and report.feasible and report.complete
    scatter = algo.collective == "reduce_scatter"
    if scatter:
        note = ("not measured: portsim has no reduce_scatter operation whose completions "
                "the series could count")
    elif not ok:
        note = "not measured: the algorithm is incorrect or infeasible"
    elif not timing.schedule.events:
        note = "not measured: the algorithm moves nothing"
    else:
        horizon = timing.makespan * series_makespans
        phase(f"replaying a series over {series_makespans} makespans")
        series = replay_series(timing.schedule, horizon)
        h = series.horizon
        if h is None or Fraction(h) < horizon:
            note = "not measured: the series replay was cut before the horizon"
        else:
            throughput = Fraction(series.completed, instances) / Fraction(h)
            runs = (f"{series.completed} runs" if instances == 1 else
                    f"{series.completed} chunk instances ({instances} per run)")
            note = (f"{runs} completed within {series_makespans} makespans "
                    f"({format_rational(Fraction(h))})")
    bound: Fraction | None = None
    lp_note = "not asked"
    if lp and scatter:
        lp_note = "no lp bound: portsim has no reduce_scatter operation"
    elif lp:
        asked = timing.schedule.operation
        if asked.kind is OperationKind.ALLREDUCE:  # the lp bounds rank-order reductions only
            asked = replace(asked, commutative=False)
        phase(f"the lp bound of the {asked.kind.value} (lp planner, time limit "
              f"{LpOptions(time_limit=lp_time_limit).seconds:g} s)")
        found = lp_bound(platform, asked,  # silent about the lp's own schedule
                         time_limit=lp_time_limit)
        if found.bound is None:
            lp_note = found.reason
        else:
            bound = found.bound / instances
            lp_note = (f"lp bound of {instances} instance(s) of one chunk" if instances > 1
                       else "")
            if asked is not timing.schedule.operation:
                lp_note = "; ".join(filter(None, [lp_note, (
                    "the lp bound of the non-commutative allreduce (reductions in rank "
                    "order); MSCCL's reductions are commutative, which that bound does not "
                    "cover")]))
            if found.caveat:  # not the proven optimum: say what it is, in the lp's words
                lp_note = "; ".join(filter(None, [lp_note, f"not proven optimal, the lp "
                                                           f"says: {found.caveat}"]))
    return MscclValidation(timing, report, throughput, note, bound, lp_note)


def load_platform_file(path: str | os.PathLike[str]) -> Platform:
    """The platform of a YAML file with a ``platform:`` key (a scenario file serves).

    :func:`portsim.scenarios.schedule_file.read_platform_file`, which also
    takes a bare platform mapping.

    Raises
    ------
    ScheduleError
        Naming the file and the key path, on a malformed platform.
    """
    from portsim.scenarios.schedule_file import read_platform_file

    return read_platform_file(path)
