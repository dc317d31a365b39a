"""Shared test inputs: the operation of a random case, a platform with mixed port models.

Imported as a plain module (pytest puts ``tests/`` on the path) by the ``lp``
property tests.
"""

from __future__ import annotations

from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Node, Platform, PortModel


def operation_for(kind: OperationKind, platform: Platform, seed: int) -> Operation:
    """``kind`` on ``platform``, rooted (source or target) at a processor chosen by ``seed``."""
    root = platform.processors[seed % len(platform.processors)]
    if kind in (OperationKind.SCATTER, OperationKind.BROADCAST):
        return Operation(kind, source=root).resolve(platform)
    if kind in (OperationKind.GATHER, OperationKind.REDUCE):
        return Operation(kind, target=root).resolve(platform)
    return Operation(kind).resolve(platform)


def mixed_platform(platform: Platform, seed: int, models: list[str]) -> Platform:
    """``platform`` with the first nodes overridden by ``models`` (rotated by seed)."""
    nodes = list(platform.nodes)
    for i, model in enumerate(models):
        k = (seed + i) % len(nodes)
        nodes[k] = Node(nodes[k].id, nodes[k].compute, PortModel.parse(model))
    return Platform(tuple(nodes), platform.links, platform.port_model)
