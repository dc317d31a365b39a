"""Shared test platform whose cheapest path depends on the message size.

Imported as a plain module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from portsim.simulator.platform import Link, Node, Platform, PortModel


def two_routes(port_model: PortModel | str = "bidirectional") -> Platform:
    """A -> B direct (latency 10, bandwidth 100) and A -> R -> B (bandwidth 1 each, R a
    router); B -> R -> A likewise slow, and B -> Q -> A through a second router with
    latency 5 and bandwidth 100 on both hops (no direct link B -> A)."""
    nodes = [Node("A"), Node("B"), Node("R", compute=0, router=True),
             Node("Q", compute=0, router=True)]
    links = [Link.of_bandwidth("A", "B", 100, latency=10),
             Link.of_bandwidth("A", "R", 1), Link.of_bandwidth("R", "B", 1),
             Link.of_bandwidth("B", "R", 1), Link.of_bandwidth("R", "A", 1),
             Link.of_bandwidth("B", "Q", 100, latency=5),
             Link.of_bandwidth("Q", "A", 100, latency=5)]
    return Platform(nodes, links, port_model)
