"""Fastest-node-first broadcast in the sender-time model (Liu–Kuo–Wang section 5.2).

FNF (Banikazemi et al.; Liu 2002, ref. [25]): the processors that hold the
message keep sending it; at every step the holder that can finish a
transmission earliest sends to the fastest processor still waiting.  It is
a 2-approximation of the fastest broadcast from any source, and a
1.5-approximation when the source is the fastest processor (Khuller and
Kim, ref. [22]), which is how the all-reduce of section 5.2 uses it.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from fractions import Fraction

from portsim.planners.snf.model import ReductionTree, Transmission
from portsim.simulator.platform import NodeId

__all__ = ["fastest_node_first"]


def fastest_node_first(
    source: NodeId,
    targets: Sequence[NodeId],
    times: Mapping[NodeId, Fraction],
    *,
    ready: Fraction = Fraction(0),
) -> ReductionTree:
    """The fastest-node-first broadcast tree, timed.

    Parameters
    ----------
    source:
        The processor holding the message at ``ready``.
    targets:
        The processors to inform (ties between equal times: this order).
    times:
        ``t(p)`` of the source and of every target.
    ready:
        When the source holds the message (the end of the reduction in an
        all-reduce).

    Returns
    -------
    ReductionTree
        Rooted at ``source``; each transmission sends the message to a new
        processor, which may forward it from the end of its reception.

    Notes
    -----
    Each holder ``u`` is free again ``t(u)`` after it starts a transmission;
    the next transmission is the one that would end first (ties: the faster
    sender, then the earlier holder), and it goes to the fastest target not
    yet informed.  Every processor takes part in one transmission at a time:
    the one-port model.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> t = fastest_node_first("S", ["A", "B", "C"], {"S": F(1), "A": F(3), "B": F(1),
    ...                                               "C": F(2)})
    >>> [(x.sender, x.receiver, str(x.start)) for x in t.transmissions]
    [('S', 'B', '0'), ('S', 'C', '1'), ('B', 'A', '1')]
    >>> t.makespan
    Fraction(2, 1)
    """
    waiting = sorted(range(len(targets)), key=lambda i: (times[targets[i]], i))
    holders: list[tuple[Fraction, Fraction, int, NodeId]] = [
        (ready + times[source], times[source], 0, source)
    ]
    out: list[Transmission] = []
    for rank, i in enumerate(waiting, start=1):
        end, t, order, u = heapq.heappop(holders)
        v = targets[i]
        out.append(Transmission(u, v, end - t, end))
        heapq.heappush(holders, (end + t, t, order, u))
        heapq.heappush(holders, (end + times[v], times[v], rank, v))
    out.sort(key=lambda x: (x.start, x.end))
    return ReductionTree(source, tuple(out))
