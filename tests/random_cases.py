"""Shared test inputs: the operation of a random case, a platform with mixed port models.

Imported as a plain module (pytest puts ``tests/`` on the path) by the ``lp``
property tests.
"""

from __future__ import annotations

import random
from fractions import Fraction

from portsim.scenarios.generators import random_platform
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


MULTIPORT_MODELS = ("bidirectional", "multiport:2", "multiport")
"""The port models of :func:`random_multiport_platform`."""


def random_multiport_platform(n: int, seed: int,
                              compute: tuple[Fraction | int, Fraction | int]) -> Platform:
    """``random_platform(n, ...)`` with a random port model of :data:`MULTIPORT_MODELS`
    per node, at least one multi-port (compute times drawn in ``compute``)."""
    rng = random.Random(seed)
    base = random_platform(n, min(2, n - 1), c=(1, 5), compute=compute, seed=seed)
    models = [rng.choice(MULTIPORT_MODELS) for _ in range(n)]
    if all(m == "bidirectional" for m in models):
        models[seed % n] = "multiport"
    return mixed_platform(base, seed, models)
