"""The ``msccl`` planner: a scenario's ``{name: msccl, file: ALGO.xml}`` entry.

The algorithm of ``file`` (resolved against the scenario's directory by the
loader, through :func:`msccl_file_option`) is read and list-scheduled on the
scenario's platform (:mod:`portsim.planners.msccl.algorithm`); one run of it
is one operation of the scenario.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from portsim.planners.base import FunctionPlanner, PlanResult
from portsim.planners.msccl.algorithm import MscclAlgorithm, read_msccl, time_msccl
from portsim.simulator.errors import ScheduleError
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind

__all__ = ["MSCCL_PLANNER", "MscclFile", "msccl_file_option", "msccl_plan"]


# -- the msccl planner ----------------------------------------------------------------------


class MscclFile(str):
    """The ``file`` option of a ``{name: msccl, file: ALGO.xml}`` planner entry.

    The text as the scenario writes it (what the row label shows, so a study
    is the same on every machine), carrying in :attr:`path` the file it
    names, resolved against the scenario's directory by the loader.

    Examples
    --------
    >>> f = MscclFile("algos/ring.xml", Path("/data/algos/ring.xml"))
    >>> str(f), f.path.name
    ('algos/ring.xml', 'ring.xml')
    """

    path: Path

    def __new__(cls, written: str, path: str | os.PathLike[str]) -> MscclFile:
        """The option ``written`` in the scenario, naming ``path``."""
        obj = super().__new__(cls, written)
        obj.path = Path(path)
        return obj

    def __reduce__(self) -> tuple[Any, tuple[str, Path]]:
        """Pickle with the resolved path (studies run scenarios in worker processes)."""
        return (MscclFile, (str(self), self.path))


_MSCCL_KINDS: dict[str, OperationKind] = {
    "allgather": OperationKind.ALLGATHER, "alltoall": OperationKind.ALLTOALL,
    "allreduce": OperationKind.ALLREDUCE, "reduce": OperationKind.REDUCE,
    "broadcast": OperationKind.BROADCAST,
}


def msccl_file_option(value: object, base_dir: str | os.PathLike[str] | None,
                      *, path: str) -> MscclFile:
    """Check a planner entry's ``file`` option and read the algorithm it names.

    ``value`` is resolved against ``base_dir`` (the scenario's directory) and
    the algorithm read (:func:`read_msccl`), so a malformed file is bad input
    at load time.

    Raises
    ------
    ScheduleError
        ``path`` (``planners[2].file``) when the option is missing or not a
        string; the reader's one line (the XML file, GPU, threadblock, step)
        on a malformed algorithm.
    """
    if not isinstance(value, str) or not value:
        raise ScheduleError("the msccl planner needs file: ALGO.xml (a path relative to the "
                            "scenario file)", path=path, value=value)
    resolved = Path(value)
    if base_dir is not None and not resolved.is_absolute():
        resolved = Path(base_dir) / resolved
    read_msccl(resolved)
    return MscclFile(value, resolved)


def msccl_plan(platform: Platform, operation: Operation, *,
               file: str | os.PathLike[str] | None = None) -> PlanResult:
    """The ``msccl`` planner: the list-scheduled MSCCL algorithm of ``file``.

    One run of the algorithm is one operation of the scenario: the ranks are
    the operation's participants in order (allgather, allreduce, reduce: the
    ``target`` must be rank ``root``; all-to-all: its sources, equal to its
    targets; broadcast: ``root`` is the source, the targets the other ranks),
    and a chunk is ``operation.size / chunks_per_rank``, so that chunk index
    ``j`` is instance ``#j`` of an operation of that size (the runner counts
    ``chunks_per_rank`` instances as one operation).

    Returns
    -------
    PlanResult
        ``ok`` with the timed one-shot schedule; ``unsupported`` when the
        algorithm's collective or rank count differs from the operation's;
        ``error`` naming the rank and chunk when the algorithm is incorrect;
        ``unsupported`` without ``file`` (nothing to plan).
    """
    if file is None:
        return PlanResult.unsupported("msccl", "the msccl planner needs the option "
                                               "file: ALGO.xml (an MSCCL algorithm)")
    algo = read_msccl(file.path if isinstance(file, MscclFile) else file)
    where = f"{Path(algo.source).name}"
    kind = _MSCCL_KINDS.get(algo.collective)
    if kind is None:
        return PlanResult.unsupported(
            "msccl", f"{where} is an MSCCL {algo.collective}, which no portsim operation "
                     "expresses")
    if operation.kind is not kind:
        return PlanResult.unsupported(
            "msccl", f"{where} is an MSCCL {algo.collective}; the scenario's operation is "
                     f"{operation.kind.value}")
    if operation.is_reduction and not operation.commutative:
        # MSCCL's reductions combine in whatever order the chunks meet (a
        # ring starts each block at another rank): they stand only for a
        # commutative operator, and the runner refuses them for another one
        return PlanResult.unsupported(
            "msccl", f"{where} is an MSCCL {algo.collective}, whose reductions combine in any "
                     "order; the scenario's operator is not commutative (commutative: true "
                     "if it is)")
    ranks = _operation_ranks(algo, operation)
    if isinstance(ranks, str):
        return PlanResult.unsupported("msccl", f"{where}: {ranks}")
    size = operation.size * algo.nchunksperloop / algo.chunks_per_rank
    timing = time_msccl(algo, platform, size=size, ranks=ranks)
    if not timing.correct:
        return PlanResult.error("msccl", f"{where} is incorrect: {timing.problems[0]}",
                                notes=timing.problems[1:])
    notes = (f"{where}: {algo.collective} {algo.name!r}, {algo.chunks_per_rank} chunk "
             f"index(es) of size {format_rational(timing.schedule.operation.size)} per "
             "operation (instances #0.., counted together as one operation)",)
    return PlanResult.ok("msccl", timing.schedule, makespan=timing.makespan, notes=notes)


def _operation_ranks(algo: MscclAlgorithm, operation: Operation) -> tuple[NodeId, ...] | str:
    """The operation's nodes as the algorithm's ranks, or why they do not fit."""
    kind = operation.kind
    if kind is OperationKind.ALLTOALL:
        # the targets' order means nothing to an all-to-all (its items name their
        # nodes); the sources' order gives the ranks
        if set(operation.sources) != set(operation.targets):
            return ("an MSCCL alltoall needs the operation's targets to be its sources "
                    "(in any order)")
        nodes: tuple[NodeId, ...] = tuple(operation.sources)
    elif kind is OperationKind.BROADCAST:
        others = list(operation.targets)
        source = operation.source
        assert source is not None  # a resolved broadcast has its source
        nodes = (*others[:algo.root], source, *others[algo.root:])
    else:
        nodes = tuple(operation.participants)
    if len(nodes) != algo.ngpus:
        return (f"the algorithm has {algo.ngpus} ranks, the operation {len(nodes)} "
                "participants")
    if kind is OperationKind.REDUCE and nodes[algo.root] != operation.target:
        return (f"the algorithm reduces to rank {algo.root} ({nodes[algo.root]}), the "
                f"operation to {operation.target}")
    return nodes


MSCCL_PLANNER = FunctionPlanner(
    name="msccl",
    function=msccl_plan,
    operations=frozenset(_MSCCL_KINDS.values()),
    port_models=frozenset(PortKind),
    description="an MSCCL XML algorithm (option file: ALGO.xml, relative to the scenario), "
                "list-scheduled on the platform (one-shot)",
    options=frozenset({"file"}),
)
"""The ``msccl`` planner entry (``{name: msccl, file: ALGO.xml}``)."""
