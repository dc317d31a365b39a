"""Series of all-reduces: the gossip bound (every instance needs ``2g - 2`` messages into groups).

An allreduce leaves every participant knowing every participant's value: it
is a *gossip*.  With one-way messages, gossiping among ``n`` people takes at
least ``2n - 2`` calls (the one-way gossip problem; Harary and Schwenk, "The
communication problem on graphs and digraphs", J. Franklin Inst. 297, 1974).
The argument below keeps that count in the steady state, for groups of nodes
and for messages sent in parts; it holds whatever the port model and the
costs, with routers and with processors that are not participants.

**The argument.**  Partition the processors into *groups* (a group may also
hold routers; a router may be in no group), and let ``g`` be the number of
groups holding a participant.  Fix one instance.  A group *knows* index
``i`` when one of its processors holds an item ``v[k,m]`` with
``k <= i <= m``.  A group learns only from an *entry*: a processor of the
group completes (its received parts sum to 1) an item that no processor of
the group held, so every part of it came from a processor outside the group
(routers forward, they never combine), across a link into the group.  An
entry therefore brings at least one message's worth into the group over its
in-links; entries of different items, or into different groups, use
different link transfers.

Let ``t0`` be the first time a group ``U`` knows every index.  For each
other group ``G`` holding a participant ``i``, index ``i`` reached ``U`` by
``t0`` along a chain of entries (each entry's part was sent, after it
started, by a processor that knew ``i``), every entry of which ends before
``t0`` except the last, into ``U`` (transfers take time).  Fix one sender
per entry: the chains then form a graph on the groups that connects the
``g`` participant groups and ``U``: at least ``g - 1`` entries before
``t0``.  After ``t0``, each participant group other than ``U`` still has to
learn the indices it lacks at ``t0``: one more entry at ``t0`` or later for
each, ``g - 1`` in all (``g`` when ``U`` holds no participant, which also
adds one before).  So an instance makes at least ``2g - 2`` entries, each a
message's worth over the in-links of a group; per time unit, ``(2g - 2) TP``
at most what those links can carry into the groups (their rates under the
ports and links, :func:`~portsim.planners.lp._ssr.port_rates`'s knapsack on
the links entering the group, :func:`~portsim.planners.lp._ssr.crossing_rate`).  Without routers, a
link into a group is a send of a processor outside it, so the same count
bounds what the processors send out of their groups.

**Partitions tried** (:func:`gossip_partitions`): every processor alone
(``g = N``: the count of messages received by processors), and, for every
link cost ``c`` of the platform, the connected components of the links of
cost below ``c`` (a tier of slow links between fast islands: the hosts of
an edge switch behind slow uplinks, the GPUs of a server behind its NICs).
On a fat tree of ``k = 4`` (16 hosts, one link each), the first gives
``16 / 30 = 8/15``, which reduce-then-broadcast reaches: exact, where the
per-destination relaxation left ``[8/15, 15/22]``.

:func:`gossip_cap` is the least bound (no program); :func:`add_gossip_rows`
adds each partition's row to an upper-bound program, where it combines with
the ports of the other rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._solve import LinearModel
from portsim.planners.lp._ssr import crossing_rate, islands
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["GossipPartition", "add_gossip_rows", "gossip_cap", "gossip_partitions"]


@dataclass(frozen=True)
class GossipPartition:
    """Groups of nodes for the gossip bound.

    Attributes
    ----------
    groups:
        Disjoint node sets; together they hold every processor (routers may
        be in none).
    participant_groups:
        How many groups hold a participant (``g``).
    name:
        What the groups are, for notes (``"every processor alone"``, ``"the
        islands joined by links of cost below 2"``).
    """

    groups: tuple[frozenset[NodeId], ...]
    participant_groups: int
    name: str

    @property
    def entries(self) -> int:
        """Entries into groups every instance makes at least: ``2g - 2``."""
        return 2 * self.participant_groups - 2


def _partition(platform: Platform, operation: Operation, components: Iterable[set[NodeId]],
               name: str) -> GossipPartition | None:
    """The groups of ``components`` that hold a processor, or ``None`` when ``g < 2``."""
    processors = set(platform.processors)
    participants = set(operation.participants)
    groups = tuple(frozenset(c) for c in components if c & processors)
    g = sum(1 for c in groups if c & participants)
    if g < 2:
        return None
    return GossipPartition(groups, g, name)


def gossip_partitions(platform: Platform, operation: Operation) -> list[GossipPartition]:
    """The partitions the gossip bound tries (module notes), each with ``g >= 2``.

    Every processor alone; then, for each distinct link cost ``c``, the
    connected components (links taken both ways) of the links of cost below
    ``c``: routers in a component with no processor are in no group.
    Partitions met twice are kept once.
    """
    found: list[GossipPartition] = []
    seen: set[tuple[frozenset[NodeId], ...]] = set()

    def keep(part: GossipPartition | None) -> None:
        if part is not None:
            key = tuple(sorted(part.groups, key=sorted))
            if key not in seen:
                seen.add(key)
                found.append(part)

    keep(_partition(platform, operation, ({p} for p in platform.processors),
                    "every processor alone"))
    for cost, components in islands(platform):
        keep(_partition(platform, operation, components,
                        f"the islands joined by links of cost below {cost}"))
    return found


def gossip_cap(platform: Platform, operation: Operation,
               partitions: Sequence[GossipPartition] | None = None
               ) -> tuple[Fraction, str] | None:
    """The least gossip bound on the allreduce throughput, and a phrase saying which.

    For each partition (default :func:`gossip_partitions`): what the links
    into the groups carry per time unit over ``2g - 2``; without routers,
    also what the links out of them carry (module notes).  ``None`` when no
    partition has two participant groups.
    """
    parts = gossip_partitions(platform, operation) if partitions is None else partitions
    capacity = PortCapacity.of(platform)
    size = operation.size
    no_router = not platform.routers
    best: tuple[Fraction, str] | None = None
    for part in parts:
        for side in ("into", "out of")[:2 if no_router else 1]:
            carried = sum((crossing_rate(platform, size, grp, capacity, into=side == "into")
                           for grp in part.groups), Fraction(0))
            cap = carried / part.entries
            if best is None or cap < best[0]:
                best = (cap, f"the gossip bound (groups: {part.name}; an instance moves "
                             f"at least 2g - 2 = {part.entries} messages {side} its "
                             f"g = {part.participant_groups} groups holding a participant, "
                             f"and the links {side} the groups carry at most {carried} "
                             "per time unit)")
    return best


def add_gossip_rows(model: LinearModel,
                    sends: Iterable[tuple[tuple[NodeId, NodeId], int]], tp: int,
                    partitions: Sequence[GossipPartition]) -> None:
    """Each partition's row: the actual sends into its groups are at least ``(2g - 2) TP``.

    ``sends`` pairs every actual send variable of ``model`` with its link.
    """
    links = list(sends)
    for part in partitions:
        group_of = {v: i for i, grp in enumerate(part.groups) for v in grp}
        row = {j: Fraction(-1) for (u, v), j in links
               if v in group_of and group_of.get(u) != group_of[v]}
        row[tp] = Fraction(part.entries)
        model.add(row, "<=", Fraction(0),
                  f"gossip: {part.entries} messages into groups an instance ({part.name})")
