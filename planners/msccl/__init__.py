"""MSCCL XML algorithms as planners: read, given a meaning, list-scheduled.

- :mod:`~portsim.planners.msccl.algorithm`: the records, :func:`read_msccl`
  (one-line errors naming the file, GPU, threadblock and step) and
  :func:`time_msccl` (the algorithm's steps list-scheduled on a platform into
  a one-shot schedule);
- :mod:`~portsim.planners.msccl.planner`: the ``msccl`` planner of a
  scenario's ``{name: msccl, file: ALGO.xml}`` entry;
- :mod:`~portsim.planners.msccl.generators`: correct algorithms written by
  portsim (rings, all-pairs, trees).

The verdicts on an algorithm (the strict replay, correctness, the series'
throughput, the ratio to the ``lp`` bound) are the scenarios' job:
:func:`portsim.scenarios.msccl.validate_msccl`.  Names are imported on first
use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from portsim.planners.msccl.algorithm import (
        MAX_MSCCL_CHUNKS,
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

_HOMES = {
    "portsim.planners.msccl.algorithm": (
        "MAX_MSCCL_CHUNKS", "MSCCL_COLLECTIVES", "STEP_TYPES", "MscclAlgorithm", "MscclGpu",
        "MscclStep", "MscclThreadblock", "MscclTiming", "read_msccl", "time_msccl"),
    "portsim.planners.msccl.generators": (
        "allpairs_alltoall_xml", "ring_allgather_xml", "ring_allreduce_xml",
        "ring_reduce_scatter_xml", "tree_broadcast_xml", "tree_reduce_xml"),
    "portsim.planners.msccl.planner": (
        "MSCCL_PLANNER", "MscclFile", "msccl_file_option", "msccl_plan"),
}

__all__ = [
    "MAX_MSCCL_CHUNKS",
    "MSCCL_COLLECTIVES",
    "MSCCL_PLANNER",
    "STEP_TYPES",
    "MscclAlgorithm",
    "MscclFile",
    "MscclGpu",
    "MscclStep",
    "MscclThreadblock",
    "MscclTiming",
    "allpairs_alltoall_xml",
    "msccl_file_option",
    "msccl_plan",
    "read_msccl",
    "ring_allgather_xml",
    "ring_allreduce_xml",
    "ring_reduce_scatter_xml",
    "time_msccl",
    "tree_broadcast_xml",
    "tree_reduce_xml",
]
assert sorted(__all__) == sorted(n for names in _HOMES.values() for n in names)

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
