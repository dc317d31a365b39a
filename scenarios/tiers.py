"""A Tiers-like hierarchical platform: WAN, MAN and LAN levels joined by routers.

Tiers (Calvert, Doar and Zegura, "Modeling Internet topology", IEEE
Communications Magazine, 1997) builds an internetwork in three levels: a wide
area network of routers, metropolitan networks hanging off WAN routers, and
local networks of hosts hanging off MAN routers, with costs that grow from
LAN to WAN.  :func:`tiers_platform` follows that shape:

- ``wan`` WAN routers ``W0..`` on a ring (both ways), plus ``wan_redundancy``
  random chords (Tiers' redundancy edges), with link costs drawn in ``c_wan``;
- under each WAN router, ``man`` MAN routers ``M0..``, each linked (both
  ways) to its WAN router, cost in ``c_man``;
- under each MAN router, ``lan`` LAN routers ``L0..``, each linked to its MAN
  router, cost in ``c_man``, and ``hosts`` hosts ``P0, P1, ...`` on a star
  around the LAN router, cost in ``c_lan``;
- hosts compute (time drawn in ``compute``); routers only forward.

Every cost is exact (:func:`portsim.scenarios.generators.draw_rational`) and the
platform is strongly connected.  In a scenario file::

    platform:
      generator: {type: tiers, wan: 3, man: 2, lan: 2, hosts: 4, c_wan: [5, 10]}

with the parameters below (their defaults when omitted) and the scenario's
``seed``.
"""

from __future__ import annotations

import random
from fractions import Fraction

from portsim.scenarios.generators import (
    MAX_GENERATED_NODES,
    draw_bounds,
    draw_rational,
    random_state,
)
from portsim.simulator.errors import PlatformError
from portsim.simulator.platform import BIDIRECTIONAL, Link, Node, Platform, PortModel

__all__ = ["tiers_platform"]

Number = Fraction | int | str
Range = Number | tuple[Number, Number]


def tiers_platform(
    wan: int = 3,
    man: int = 2,
    lan: int = 2,
    hosts: int = 4,
    *,
    c_wan: Range = (5, 10),
    c_man: Range = (2, 5),
    c_lan: Range = (Fraction(1, 2), 2),
    compute: Range = (1, 5),
    wan_redundancy: int = 1,
    seed: int | random.Random | None = None,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """A three-level WAN/MAN/LAN platform with routers (see the module notes).

    Parameters
    ----------
    wan, man, lan, hosts:
        WAN routers; MAN routers per WAN router; LAN routers per MAN router;
        hosts per LAN (each >= 1).
    c_wan, c_man, c_lan:
        Ranges ``(lo, hi)``, ``0 < lo <= hi``, of the link costs per level
        (WAN-WAN; WAN-MAN and MAN-LAN; LAN router-host); a single number
        fixes the cost.
    compute:
        Range of the hosts' compute times (``0 <= lo <= hi``), or one number.
    wan_redundancy:
        Extra random WAN chords beyond the ring (ignored when the WAN is
        already complete).
    seed:
        See :func:`portsim.scenarios.generators.random_state`.
    port_model:
        Platform-wide port model.

    Returns
    -------
    Platform
        Hosts ``P0..`` first, in LAN order, then routers ``W*``, ``M*``,
        ``L*``; every link in both directions with the same cost.

    Raises
    ------
    PlatformError
        On a count below 1, a bad range, or more than
        :data:`~portsim.scenarios.generators.MAX_GENERATED_NODES` nodes in all.

    Examples
    --------
    >>> p = tiers_platform(2, 1, 1, 3, seed=0)
    >>> sum(not n.router for n in p.nodes), sum(n.router for n in p.nodes)
    (6, 6)
    >>> p.cost("P0", "L0") == p.cost("L0", "P0")
    True
    """
    for name, count in (("wan", wan), ("man", man), ("lan", lan), ("hosts", hosts)):
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise PlatformError("must be an integer >= 1", path=name, value=count)
    if (not isinstance(wan_redundancy, int) or isinstance(wan_redundancy, bool)
            or wan_redundancy < 0):
        raise PlatformError("must be an integer >= 0", path="wan_redundancy",
                            value=wan_redundancy)
    total = wan * (1 + man * (1 + lan * (1 + hosts)))
    if total > MAX_GENERATED_NODES:
        raise PlatformError(f"wan * (1 + man * (1 + lan * (1 + hosts))) = {total} nodes, more "
                            f"than the cap of {MAX_GENERATED_NODES}", path="hosts", value=hosts)
    ranges = {"c_wan": draw_bounds(c_wan, "c_wan", positive=True),
              "c_man": draw_bounds(c_man, "c_man", positive=True),
              "c_lan": draw_bounds(c_lan, "c_lan", positive=True),
              "compute": draw_bounds(compute, "compute", positive=False)}
    rng = random_state(seed)
    host_nodes: list[Node] = []
    routers: list[Node] = []
    costs: dict[tuple[str, str], Fraction] = {}

    def connect(a: str, b: str, level: str) -> None:
        cost = draw_rational(rng, *ranges[level])
        costs[(a, b)] = costs[(b, a)] = cost

    wan_ids = [f"W{i}" for i in range(wan)]
    routers.extend(Node(w, Fraction(0), router=True) for w in wan_ids)
    for i in range(wan if wan > 2 else wan - 1):
        connect(wan_ids[i], wan_ids[(i + 1) % wan], "c_wan")
    chords = [(a, b) for i, a in enumerate(wan_ids) for b in wan_ids[i + 1:]
              if (a, b) not in costs]
    for a, b in rng.sample(chords, min(wan_redundancy, len(chords))):
        connect(a, b, "c_wan")
    man_count = lan_count = 0
    for w in wan_ids:
        for _ in range(man):
            m = f"M{man_count}"
            man_count += 1
            routers.append(Node(m, Fraction(0), router=True))
            connect(w, m, "c_man")
            for _ in range(lan):
                lan_router = f"L{lan_count}"
                lan_count += 1
                routers.append(Node(lan_router, Fraction(0), router=True))
                connect(m, lan_router, "c_man")
                for _ in range(hosts):
                    host = f"P{len(host_nodes)}"
                    host_nodes.append(Node(host, draw_rational(rng, *ranges["compute"])))
                    connect(lan_router, host, "c_lan")
    links = tuple(Link(s, d, c) for (s, d), c in costs.items())
    return Platform(tuple(host_nodes + routers), links,
                    PortModel.parse(port_model, path="port_model"))
