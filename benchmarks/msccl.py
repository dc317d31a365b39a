"""MSCCL algorithms on one DGX A100: verdict, makespan, pipelined throughput, ratio to lp.

Issue 16's "done when": the three msccl-tools samples of ``tests/data/msccl/``
and the generated multi-chunk ring and rotated all-pairs, on
``dgx_a100_platform(1)`` (NVLink 300 to one NVSwitch, plus a NIC of 25 per
GPU joined through two InfiniBand switches) and on its NVSwitch domain alone
(the same GPUs and NVSwitch without the NICs), both ``multiport``.  The
throughput is the runs completed within 100 makespans of a pipelined series
(``replay_series``), the bound the ``lp`` bound of the same operation.

Run:  python benchmarks/msccl.py

Measured (shared 2-core machine; seconds per row 0.2 to 3.4)::

    nvswitch  allgather_ring_8_1_1.xml    yes  7/150     321/14    300/7   107/200
    nvswitch  ring allgather, 2 chunks    yes  1/20      107/5     150/7   749/750
    nvswitch  alltoall_allpairs_8_1.xml   yes  7/150     597/14    300/7   199/200
    nvswitch  all-pairs, rotated+ordered  yes  7/150     597/14    300/7   199/200
    nvswitch  allreduce_a100_ring_8_1_1   yes  532/75    75/532    1/7     75/76
    dgx_a100  allgather_ring_8_1_1.xml    yes  7/150     321/14    325/7   321/650
    dgx_a100  ring allgather, 2 chunks    yes  1/20      107/5     325/14  1498/1625
    dgx_a100  alltoall_allpairs_8_1.xml   yes  7/150     597/14    325/7   597/650
    dgx_a100  all-pairs, rotated+ordered  yes  7/150     597/14    325/7   597/650
    dgx_a100  allreduce_a100_ring_8_1_1   yes  532/75    75/532    1/7     75/76

Columns: correct, makespan, throughput (runs per unit), lp bound, ratio.  The
allreduce's bound is the lp's for the non-commutative allreduce (reductions
in rank order; MSCCL's are commutative, which it does not cover: here it
equals the CPU bound, 7 reductions per run on each GPU, valid for both), 5 s
on the NVSwitch and 13 s on the whole server.  On the whole server no NVLink-only algorithm
passes 300/325 = 12/13 of the bound (each GPU also receives 25 through its NIC).
"""

from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path

from portsim.scenarios.generators import dgx_a100_platform
from portsim.scenarios.msccl import allpairs_alltoall_xml, ring_allgather_xml, validate_msccl
from portsim.simulator.numbers import format_rational
from portsim.simulator.platform import Platform

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "msccl"


def nvswitch_domain() -> Platform:
    """8 GPUs on one NVSwitch (a router) at 300 each way, multiport."""
    gpus = [f"P{i}" for i in range(8)]
    hop = Fraction(1, 300)
    links = [(g, "nvswitch0", hop) for g in gpus] + [("nvswitch0", g, hop) for g in gpus]
    return Platform.build([*gpus, "nvswitch0"], links, "multiport", routers=["nvswitch0"])


def main() -> None:
    """Print one row per platform and algorithm."""
    cases = [
        ("allgather_ring_8_1_1.xml", str(DATA / "allgather_ring_8_1_1.xml"), 8),
        ("ring allgather, 2 chunks", ring_allgather_xml(8, chunks=2), 16),
        ("alltoall_allpairs_8_1.xml", str(DATA / "alltoall_allpairs_8_1.xml"), 8),
        ("all-pairs, rotated+ordered", allpairs_alltoall_xml(8, ordered=True), 8),
        ("allreduce_a100_ring_8_1_1", str(DATA / "allreduce_a100_ring_8_1_1.xml"), 8),
    ]

    def text(x: Fraction | None) -> str:
        return "-" if x is None else format_rational(x)

    for name, platform in (("nvswitch", nvswitch_domain()), ("dgx_a100", dgx_a100_platform(1))):
        for label, algo, size in cases:
            start = time.perf_counter()
            v = validate_msccl(algo, platform, size=size)
            took = time.perf_counter() - start
            print(f"{name:9} {label:27} {'yes' if v.correct else 'NO':7} "
                  f"{text(v.makespan):9} {text(v.throughput):10} {text(v.lp_bound):8} "
                  f"{text(v.ratio_to_lp_bound):10} {took:6.1f}s  {v.lp_note}", flush=True)


if __name__ == "__main__":
    main()
