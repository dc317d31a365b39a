"""Platform generators: complete graphs, sender-time clusters, random digraphs, fabrics.

The fabrics (issue 14) are GPU servers and switched networks with bandwidths:
:func:`dgx_a100_platform`, :func:`mi250_platform`, :func:`dgx1_platform`,
:func:`fat_tree_platform`, :func:`ring_platform`, :func:`torus_platform`;
compute nodes are ``P0..``, switches and NICs are routers with readable names,
and every node is ``multiport`` (one port per link) unless a port model is
given.

Also the random three-class sender-time clusters of Liu, Kuo and Wang
(:func:`three_class_platform`); the Tiers-like hierarchy lives in
:mod:`portsim.scenarios.tiers`.

Each generator is a plain function returning a :class:`portsim.simulator.platform.Platform`.
Randomness goes through one helper, :func:`random_state`, which turns a seed
into a private :class:`random.Random`; there is no module-level random state.
Bad parameters raise :class:`portsim.simulator.errors.PlatformError` whose ``path`` is
the parameter name (``"degree"``), which the loader prefixes with the key path
of the generator in the file.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TypeVar

from portsim.simulator.errors import PlatformError
from portsim.simulator.numbers import format_rational, parse_rational
from portsim.simulator.platform import BIDIRECTIONAL, Link, Node, NodeId, Platform, PortModel

__all__ = [
    "DGX1_NVLINKS",
    "MAX_GENERATED_LINKS",
    "MAX_GENERATED_NODES",
    "MI250_XGMI",
    "MULTIPORT",
    "THREE_CLASS_TIME_RANGE",
    "complete_platform",
    "dgx1_platform",
    "dgx_a100_platform",
    "draw_bounds",
    "draw_rational",
    "fat_tree_platform",
    "mi250_platform",
    "random_platform",
    "random_state",
    "ring_platform",
    "sender_times_platform",
    "three_class_platform",
    "torus_platform",
]

_T = TypeVar("_T")

Number = Fraction | int | str
"""A number as accepted by :func:`portsim.simulator.numbers.parse_rational`."""

MAX_GENERATED_NODES = 10_000
"""Most nodes a generator builds, checked before building (a typo such as ``n: 100000``
or ``servers: 100000`` must not hang)."""

MAX_GENERATED_LINKS = 1_000_000
"""Largest number of links a generator may create (``complete`` makes ``n (n - 1)``)."""


def _check_size(n: int, links: int, name: str, value: object = None) -> None:
    """Refuse a platform of more than the node or link cap, before building it.

    ``value`` is the parameter the user gave when it is not the node count
    itself (a fat tree's ``k``, a number of servers): the message then names
    the node count it implies.
    """
    given = n if value is None else value
    if n > MAX_GENERATED_NODES:
        detail = (f"must be <= {MAX_GENERATED_NODES}" if value is None else
                  f"would generate {n} nodes, more than the cap of {MAX_GENERATED_NODES}")
        raise PlatformError(detail, path=name, value=given)
    if links > MAX_GENERATED_LINKS:
        raise PlatformError(
            f"would generate {links} links, more than the cap of {MAX_GENERATED_LINKS}",
            path=name, value=given)


def random_state(seed: int | random.Random | None = None) -> random.Random:
    """Normalise ``seed`` into a private random generator.

    Parameters
    ----------
    seed:
        ``None`` for a freshly seeded generator (not reproducible), an ``int``
        for a reproducible one, or a :class:`random.Random`, returned as is.

    Returns
    -------
    random.Random

    Raises
    ------
    PlatformError
        When ``seed`` is none of the above.

    Notes
    -----
    Modelled on networkx ``utils.misc.create_py_random_state``; the global
    :mod:`random` state is never touched.

    Examples
    --------
    >>> random_state(3).random() == random_state(3).random()
    True
    """
    if seed is None:
        return random.Random()
    if isinstance(seed, random.Random):
        return seed
    if isinstance(seed, int) and not isinstance(seed, bool):
        if seed < 0:
            # random.Random seeds with abs(seed): -1 would silently repeat 1.
            raise PlatformError("a seed must be a non-negative integer", path="seed", value=seed)
        return random.Random(seed)
    raise PlatformError("a seed must be an integer or a random.Random", path="seed", value=seed)


def draw_rational(rng: random.Random, lo: Fraction, hi: Fraction) -> Fraction:
    """Draw an exact rational uniformly from a grid of ``[lo, hi]``.

    The grid is made of the multiples of ``1/q`` in ``[lo, hi]``, where ``q``
    is the least common multiple of the denominators of ``lo`` and ``hi``:
    integers when both bounds are integers, halves for ``[1/2, 3]``.

    Examples
    --------
    >>> draw_rational(random_state(0), Fraction(2), Fraction(2))
    Fraction(2, 1)
    """
    q = math.lcm(lo.denominator, hi.denominator)
    return Fraction(rng.randint(int(lo * q), int(hi * q)), q)


def _number(value: object, name: str, *, positive: bool) -> Fraction:
    number = parse_rational(value, path=name, error=PlatformError)
    if number < 0 or (positive and number == 0):
        raise PlatformError("must be > 0" if positive else "must be >= 0", path=name,
                            value=format_rational(number))
    return number


def draw_bounds(value: object, name: str, *, positive: bool) -> tuple[Fraction, Fraction]:
    """The range ``(lo, hi)`` a generator draws a parameter from: a number or ``[lo, hi]``.

    A number ``x`` is the range ``(x, x)``.  ``name`` is the key path named in
    errors; ``positive`` refuses zero (else only negatives are refused).

    Examples
    --------
    >>> draw_bounds([1, "5/2"], "c", positive=True)
    (Fraction(1, 1), Fraction(5, 2))
    >>> draw_bounds(3, "compute", positive=False)
    (Fraction(3, 1), Fraction(3, 1))
    """
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise PlatformError("expected a number or a range [lo, hi]", path=name, value=value)
        lo = _number(value[0], f"{name}[0]", positive=positive)
        hi = _number(value[1], f"{name}[1]", positive=positive)
        if lo > hi:
            raise PlatformError("a range [lo, hi] needs lo <= hi", path=name,
                                value=f"[{format_rational(lo)}, {format_rational(hi)}]")
        return lo, hi
    number = _number(value, name, positive=positive)
    return number, number


def _count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlatformError("must be an integer", path=name, value=value)
    if value < minimum:
        raise PlatformError(f"must be >= {minimum}", path=name, value=value)
    return value


def _names(n: int) -> list[NodeId]:
    return [f"P{i}" for i in range(n)]


def complete_platform(
    n: int,
    c: Number = 1,
    compute: Number = 1,
    *,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """A complete platform: ``n`` nodes ``P0..P{n-1}``, every ordered pair linked.

    Parameters
    ----------
    n:
        Number of nodes (>= 1).
    c:
        Cost of every link (> 0).
    compute:
        Compute time of every node (>= 0).
    port_model:
        Platform-wide port model.

    Returns
    -------
    Platform
        ``n`` nodes and ``n (n - 1)`` links.

    Examples
    --------
    >>> len(complete_platform(4).links)
    12
    """
    n = _count(n, "n", 1)
    _check_size(n, n * (n - 1), "n")
    cost = _number(c, "c", positive=True)
    time = _number(compute, "compute", positive=False)
    ids = _names(n)
    nodes = tuple(Node(i, time) for i in ids)
    links = tuple(Link(s, d, cost) for s in ids for d in ids if s != d)
    return Platform(nodes, links, PortModel.parse(port_model, path="port_model"))


def sender_times_platform(
    times: Mapping[NodeId, Number],
    *,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """The sender-time model: a complete platform with ``c(i, j) = t(i)``.

    Parameters
    ----------
    times:
        Transmission time ``t(i)`` (> 0) of each node, keyed by node id; the
        nodes keep the order of the keys.
    port_model:
        Platform-wide port model.

    Returns
    -------
    Platform
        Compute time 0 everywhere: the model folds computation into ``t(i)``.

    Notes
    -----
    Liu, Kuo and Wang (2007), section 2: each processor ``p`` is characterised
    by the time ``t(p)`` it takes to send a message to any other processor.

    Examples
    --------
    >>> p = sender_times_platform({"A": 10, "B": 5})
    >>> p.cost("A", "B"), p.cost("B", "A")
    (Fraction(10, 1), Fraction(5, 1))
    """
    if not isinstance(times, Mapping) or not times:
        raise PlatformError("times must be a non-empty mapping {node: time}", path="times",
                            value=times)
    _check_size(len(times), len(times) * (len(times) - 1), "times")
    sender = {
        node: _number(t, f"times.{node}", positive=True) for node, t in times.items()
    }
    nodes = tuple(Node(node, Fraction(0)) for node in sender)
    links = tuple(Link(s, d, sender[s]) for s in sender for d in sender if s != d)
    return Platform(nodes, links, PortModel.parse(port_model, path="port_model"))


def random_platform(
    n: int,
    degree: int,
    c: Number | tuple[Number, Number] = 1,
    compute: Number | tuple[Number, Number] = 1,
    *,
    seed: int | random.Random | None = None,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """A random strongly connected platform where every node has ``degree`` out-links.

    Parameters
    ----------
    n:
        Number of nodes ``P0..P{n-1}`` (>= 2).
    degree:
        Out-degree of every node, ``1 <= degree <= n - 1``.
    c:
        Link cost, a number or a range ``(lo, hi)`` with ``0 < lo <= hi``.
    compute:
        Compute time, a number or a range ``(lo, hi)`` with ``0 <= lo <= hi``.
    seed:
        See :func:`random_state`.
    port_model:
        Platform-wide port model.

    Returns
    -------
    Platform
        Links sorted by source then destination index.

    Notes
    -----
    A random Hamiltonian cycle makes the graph strongly connected; each node
    then gets extra out-links to distinct random nodes until it has
    ``degree`` of them.  Costs and compute times are drawn by
    :func:`draw_rational`: uniform integers when the bounds are integers.

    Examples
    --------
    >>> p = random_platform(5, 2, c=(1, 10), seed=1)
    >>> sorted({sum(1 for x in p.links if x.src == v) for v in p.node_ids})
    [2]
    """
    n = _count(n, "n", 2)
    degree = _count(degree, "degree", 1)
    if degree > n - 1:
        raise PlatformError(f"degree must be <= n - 1 = {n - 1}", path="degree", value=degree)
    _check_size(n, n * degree, "n")
    cost_bounds = draw_bounds(c, "c", positive=True)
    compute_bounds = draw_bounds(compute, "compute", positive=False)
    rng = random_state(seed)

    cycle = list(range(n))
    rng.shuffle(cycle)
    successors: list[set[int]] = [set() for _ in range(n)]
    for k, node in enumerate(cycle):
        successors[node].add(cycle[(k + 1) % n])
    for node in range(n):
        others = [j for j in range(n) if j != node and j not in successors[node]]
        successors[node].update(rng.sample(others, degree - len(successors[node])))

    ids = _names(n)
    nodes = tuple(Node(ids[i], draw_rational(rng, *compute_bounds)) for i in range(n))
    links = tuple(
        Link(ids[i], ids[j], draw_rational(rng, *cost_bounds))
        for i in range(n)
        for j in sorted(successors[i])
    )
    return Platform(nodes, links, PortModel.parse(port_model, path="port_model"))


THREE_CLASS_TIME_RANGE = (1, 10)
"""Integers the class times of :func:`three_class_platform` are drawn from when not given."""


def three_class_platform(
    n: int,
    times: Sequence[Number] | None = None,
    *,
    probabilities: Sequence[Number] | None = None,
    counts: Sequence[int] | None = None,
    seed: int | random.Random | None = None,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """A random sender-time cluster whose processors fall into three speed classes.

    Parameters
    ----------
    n:
        Number of processors ``P0..P{n-1}`` (>= 2); the reduction's
        destination is one of them (the scenario's ``target``).
    times:
        The transmission time ``t`` (> 0) of each class.  ``None`` draws
        three distinct integers from 1..10 (:data:`THREE_CLASS_TIME_RANGE`),
        sorted, so the class times vary with the seed.
    probabilities:
        Probability of each class (>= 0, summing to 1); each processor draws
        its class independently.  Default: 1/3 each, as in the paper.
    counts:
        Instead of ``probabilities``: exactly ``counts[j]`` processors of
        class ``j`` (summing to ``n``), in a random order.
    seed:
        See :func:`random_state`.
    port_model:
        Platform-wide port model.

    Returns
    -------
    Platform
        The sender-time model of :func:`sender_times_platform`:
        ``c(i, j) = t(i)``, compute time 0.

    Raises
    ------
    PlatformError
        On ``n < 2``, a time <= 0, probabilities that are negative or do not
        sum to 1, counts that do not sum to ``n``, or both ``probabilities``
        and ``counts``.

    Notes
    -----
    Liu, Kuo and Wang (2007), section 6.2 (Table 1): "We assume that the
    number of classes in a cluster is 3 [...] For each processor we randomly
    assign a communication speed from the three possible values."  The paper
    gives neither the three values nor the probabilities; the defaults here
    (uniform classes, times drawn from 1..10) are our reading, the same as
    ``benchmarks/snf.py``.  Draws are exact: a class is chosen by a uniform
    integer below the common denominator of the probabilities.

    Examples
    --------
    >>> p = three_class_platform(6, (1, 2, 4), counts=(3, 2, 1), seed=0)
    >>> [int(p.cost(x, "P1" if x == "P0" else "P0")) for x in p.node_ids]
    [2, 1, 1, 1, 4, 2]
    """
    n = _count(n, "n", 2)
    _check_size(n, n * (n - 1), "n")
    if probabilities is not None and counts is not None:
        raise PlatformError("give either probabilities or counts, not both", path="counts",
                            value=list(counts))
    rng = random_state(seed)
    if times is None:
        lo, hi = THREE_CLASS_TIME_RANGE
        class_times = [Fraction(t) for t in sorted(rng.sample(range(lo, hi + 1), 3))]
    else:
        class_times = _three(times, "times", lambda v, name: _number(v, name, positive=True))
    if counts is not None:
        sizes = _three(counts, "counts", lambda v, name: _count(v, name, 0))
        if sum(sizes) != n:
            raise PlatformError(f"the counts must sum to n = {n}", path="counts",
                                value=list(sizes))
        classes = [j for j, size in enumerate(sizes) for _ in range(size)]
        rng.shuffle(classes)
    else:
        chances = (_three(probabilities, "probabilities",
                          lambda v, name: _number(v, name, positive=False))
                   if probabilities is not None else [Fraction(1, 3)] * 3)
        if sum(chances) != 1:
            raise PlatformError("the probabilities must sum to 1", path="probabilities",
                                value=[format_rational(x) for x in chances])
        q = math.lcm(*(x.denominator for x in chances))
        thresholds = list(itertools.accumulate(int(x * q) for x in chances))
        classes = [bisect.bisect_right(thresholds, rng.randrange(q)) for _ in range(n)]
    return sender_times_platform({name: class_times[j] for name, j in
                                  zip(_names(n), classes, strict=True)},
                                 port_model=port_model)


def _three(values: object, name: str, item: Callable[[object, str], _T]) -> list[_T]:
    if not isinstance(values, tuple | list) or len(values) != 3:
        raise PlatformError("expected a list of three values, one per class", path=name,
                            value=values)
    return [item(v, f"{name}[{j}]") for j, v in enumerate(values)]


# -- fabrics (issue 14) ----------------------------------------------------------------------
#
# Every fabric is built by one helper, :class:`_Fabric`: compute nodes ``P0..``
# (compute time ``compute``), switches and NICs as routers with readable
# names, and each cable as two directed links of one bandwidth (latency 0),
# so that a transfer of size s lasts s / bandwidth.

MULTIPORT = PortModel.parse("multiport")
"""The default port model of the fabric generators.

One port per link (the broadcast report's Fig. 8), links sequential."""

DGX1_NVLINKS: tuple[tuple[int, int, int], ...] = (
    (0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 2),
    (1, 2, 2), (1, 3, 1), (1, 5, 2),
    (2, 3, 2), (2, 6, 1),
    (3, 7, 1),
    (4, 5, 1), (4, 6, 1), (4, 7, 2),
    (5, 6, 2), (5, 7, 1),
    (6, 7, 2),
)
"""NVLink count between the GPUs ``(i, j, links)`` of a DGX-1 with Tesla V100
(``nvidia-smi topo -m``: NV1/NV2): the hybrid cube-mesh, six links per GPU."""

MI250_XGMI: tuple[tuple[int, ...], ...] = (
    (0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    (4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    (2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0),
    (0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0),
)
"""xGMI link count between the 16 GCDs of one AMD MI250 server (symmetric),
as published with the ForestColl artifact (Liang et al., 2024), following
AMD's MI250 OAM documentation."""


class _Fabric:
    """Nodes and two-way cables of one fabric under construction."""

    def __init__(self, compute: Fraction) -> None:
        self.compute = compute
        self.nodes: list[Node] = []
        self.links: list[Link] = []
        self.processors = 0

    def gpu(self) -> NodeId:
        """A new compute node ``P<i>`` (numbered in creation order)."""
        node = f"P{self.processors}"
        self.processors += 1
        self.nodes.append(Node(node, self.compute))
        return node

    def switch(self, name: NodeId) -> NodeId:
        """A new router (switch or NIC) called ``name``."""
        self.nodes.append(Node(name, Fraction(0), router=True))
        return name

    def cable(self, a: NodeId, b: NodeId, bandwidth: Fraction) -> None:
        """Two directed links ``a -> b`` and ``b -> a`` of ``bandwidth``, latency 0."""
        self.links.append(Link(a, b, 1 / bandwidth))
        self.links.append(Link(b, a, 1 / bandwidth))

    def platform(self, port_model: PortModel | str) -> Platform:
        # Each generator checks its size before building (_check_size).
        return Platform(tuple(self.nodes), tuple(self.links),
                        PortModel.parse(port_model, path="port_model"))


def dgx_a100_platform(
    servers: int = 1,
    *,
    nvlink: Number = 300,
    nic: Number = 25,
    ib: Number = 25,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """DGX A100 servers on a two-switch rail-optimised InfiniBand fabric.

    Server ``s`` holds GPUs ``P{8s}..P{8s+7}``, its NVSwitch ``nvswitch<s>``
    and one NIC per GPU ``nic<s>_<r>``; every GPU is cabled to the NVSwitch
    (``nvlink``) and to its own NIC (``nic``), and NIC ``r`` of every server
    to the InfiniBand switch ``ib<r mod 2>`` (``ib``).  Bandwidths in GB/s
    per direction; the NVSwitch, NICs and IB switches are routers.

    Sources: NVIDIA DGX A100 System Architecture (technical white paper
    WP-10083-001, 2020): each A100 has 12 third-generation NVLinks, 600 GB/s
    of GPU-to-GPU bandwidth in total (both directions), so 300 GB/s each way
    to the NVSwitch fabric (here one NVSwitch stands for the six); eight
    single-port Mellanox ConnectX-6 HDR InfiniBand adapters at 200 Gb/s =
    25 GB/s each way, one per GPU.  The two-switch rail layout is the
    issue's (14) reduction of a rail-optimised fabric.

    Examples
    --------
    >>> p = dgx_a100_platform(2)
    >>> len(p.processors), len(p.nodes) - len(p.processors), len(p.links)
    (16, 20, 96)
    """
    servers = _count(servers, "servers", 1)
    bw_nv = _number(nvlink, "nvlink", positive=True)
    bw_nic = _number(nic, "nic", positive=True)
    bw_ib = _number(ib, "ib", positive=True)
    # per server 8 GPUs, 8 NICs and an NVSwitch, 3 cables per GPU; 2 IB switches
    _check_size(17 * servers + 2, 6 * 8 * servers, "servers", servers)
    fabric = _Fabric(_number(compute, "compute", positive=False))
    gpus = [[fabric.gpu() for _ in range(8)] for _ in range(servers)]
    ibs = [fabric.switch(f"ib{r}") for r in range(min(2, 8))]
    for s, row in enumerate(gpus):
        hub = fabric.switch(f"nvswitch{s}")
        for r, gpu in enumerate(row):
            fabric.cable(gpu, hub, bw_nv)
            card = fabric.switch(f"nic{s}_{r}")
            fabric.cable(gpu, card, bw_nic)
            fabric.cable(card, ibs[r % 2], bw_ib)
    return fabric.platform(port_model)


def mi250_platform(
    servers: int = 1,
    *,
    xgmi: Number = 50,
    ib: Number = 16,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """AMD MI250 servers: 16 GCDs each on an xGMI mesh, every GCD on one IB switch.

    Server ``s`` holds GCDs ``P{16s}..P{16s+15}``; GCDs ``i`` and ``j`` of a
    server are cabled with bandwidth ``m · xgmi`` where ``m`` is their number
    of xGMI links (:data:`MI250_XGMI`; a bundle of ``m`` links is one link of
    ``m`` times the bandwidth), and every GCD to the switch ``ib0`` at ``ib``.
    Bandwidths in GB/s per direction.

    Sources: the xGMI matrix and the figures 50 GB/s per xGMI link per
    direction and one 16 GB/s InfiniBand port per GCD are those of the MI250
    topology published with the ForestColl artifact (Liang et al.,
    "ForestColl: Throughput-Optimal Collective Communications on
    Heterogeneous Network Fabrics", 2024), which follows AMD's MI250 (OAM)
    documentation.

    Examples
    --------
    >>> p = mi250_platform(1)
    >>> len(p.processors), len(p.links), p.link("P0", "P1").bandwidth
    (16, 88, Fraction(200, 1))
    """
    servers = _count(servers, "servers", 1)
    bw_x = _number(xgmi, "xgmi", positive=True)
    bw_ib = _number(ib, "ib", positive=True)
    cables = sum(1 for i, j in itertools.combinations(range(16), 2) if MI250_XGMI[i][j]) + 16
    _check_size(16 * servers + 1, 2 * cables * servers, "servers", servers)
    fabric = _Fabric(_number(compute, "compute", positive=False))
    switch = fabric.switch("ib0")
    for _ in range(servers):
        gcds = [fabric.gpu() for _ in range(16)]
        for i, j in itertools.combinations(range(16), 2):
            if MI250_XGMI[i][j]:
                fabric.cable(gcds[i], gcds[j], MI250_XGMI[i][j] * bw_x)
        for gcd in gcds:
            fabric.cable(gcd, switch, bw_ib)
    return fabric.platform(port_model)


def dgx1_platform(
    *,
    nvlink: Number = 25,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """A DGX-1 (Tesla V100): 8 GPUs on the NVLink hybrid cube-mesh.

    GPUs ``P0..P7`` are cabled as in :data:`DGX1_NVLINKS`; where the
    hardware has two NVLinks between a pair, they are one link of twice
    the bandwidth (``2 · nvlink``).  Bandwidth in GB/s per direction.

    Source: NVIDIA DGX-1 With Tesla V100 System Architecture (white paper
    WP-08437-002, 2017): six NVLinks per V100, each 25 GB/s per direction;
    the hybrid cube-mesh (a cube whose twelve edges are NVLinks, some
    doubled, plus the diagonals of two opposite faces).

    Examples
    --------
    >>> p = dgx1_platform()
    >>> len(p.links), p.link("P0", "P3").bandwidth, p.link("P0", "P1").bandwidth
    (32, Fraction(50, 1), Fraction(25, 1))
    """
    bw = _number(nvlink, "nvlink", positive=True)
    fabric = _Fabric(_number(compute, "compute", positive=False))
    gpus = [fabric.gpu() for _ in range(8)]
    for i, j, count in DGX1_NVLINKS:
        fabric.cable(gpus[i], gpus[j], count * bw)
    return fabric.platform(port_model)


def fat_tree_platform(
    k: int = 4,
    *,
    host: Number = 1,
    aggregation: Number = 1,
    core: Number = 1,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """A k-ary fat tree: ``k³/4`` hosts, ``k²/2`` edge, ``k²/2`` aggregation, ``k²/4`` core.

    Pod ``p`` (``0 <= p < k``) has edge switches ``edge<p>_<i>`` and
    aggregation switches ``agg<p>_<i>`` (``0 <= i < k/2``); edge switch
    ``edge<p>_<i>`` serves ``k/2`` hosts ``P..`` (bandwidth ``host``) and is
    cabled to every aggregation switch of its pod (``aggregation``);
    aggregation switch ``agg<p>_<i>`` is cabled to the core switches
    ``core<i·k/2>..core<i·k/2 + k/2 - 1>`` (``core``).  ``k`` is even.

    Source: Al-Fares, Loukissas and Vahdat, "A Scalable, Commodity Data
    Center Network Architecture", SIGCOMM 2008, section 3.2 (the k-ary fat
    tree).  The bandwidths (one per level, 1 by default) are parameters:
    the paper's switches are identical commodity ones, all links equal.

    Examples
    --------
    >>> p = fat_tree_platform(8)
    >>> len(p.processors), len(p.nodes) - len(p.processors)
    (128, 80)
    """
    k = _count(k, "k", 2)
    if k % 2:
        raise PlatformError("must be even", path="k", value=k)
    bw_host = _number(host, "host", positive=True)
    bw_agg = _number(aggregation, "aggregation", positive=True)
    bw_core = _number(core, "core", positive=True)
    half = k // 2
    _check_size(k**3 // 4 + 5 * k * k // 4, 2 * 3 * k**3 // 4, "k", k)
    fabric = _Fabric(_number(compute, "compute", positive=False))
    cores = [fabric.switch(f"core{c}") for c in range(half * half)]
    for pod in range(k):
        aggs = [fabric.switch(f"agg{pod}_{i}") for i in range(half)]
        for i, agg in enumerate(aggs):
            for c in range(half):
                fabric.cable(agg, cores[i * half + c], bw_core)
        for i in range(half):
            edge = fabric.switch(f"edge{pod}_{i}")
            for agg in aggs:
                fabric.cable(edge, agg, bw_agg)
            for _ in range(half):
                fabric.cable(fabric.gpu(), edge, bw_host)
    return fabric.platform(port_model)


def ring_platform(
    n: int = 8,
    *,
    bandwidth: Number = 1,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """``n`` nodes ``P0..`` on a ring, each cabled to the next (both directions).

    An abstract topology (no hardware number): ``bandwidth`` 1 by default.

    Examples
    --------
    >>> len(ring_platform(5).links), len(ring_platform(2).links)
    (10, 2)
    """
    n = _count(n, "n", 2)
    bw = _number(bandwidth, "bandwidth", positive=True)
    _check_size(n, 2 * n, "n")
    fabric = _Fabric(_number(compute, "compute", positive=False))
    nodes = [fabric.gpu() for _ in range(n)]
    for i in range(n if n > 2 else 1):
        fabric.cable(nodes[i], nodes[(i + 1) % n], bw)
    return fabric.platform(port_model)


def torus_platform(
    rows: int = 4,
    cols: int = 4,
    *,
    bandwidth: Number = 1,
    compute: Number = 1,
    port_model: PortModel | str = MULTIPORT,
) -> Platform:
    """A 2-D torus of ``rows × cols`` nodes, ``P<r·cols + c>`` at row ``r``, column ``c``.

    Each node is cabled to its right and lower neighbours with wrap-around
    (a dimension of size 2 has one cable between its two nodes, size 1
    none).  An abstract topology: ``bandwidth`` 1 by default.

    Examples
    --------
    >>> len(torus_platform(4, 4).links), len(torus_platform(2, 3).links)
    (64, 18)
    """
    rows = _count(rows, "rows", 1)
    cols = _count(cols, "cols", 1)
    if rows * cols < 2:
        raise PlatformError("a torus needs at least two nodes", path="rows",
                            value=f"{rows} x {cols}")
    bw = _number(bandwidth, "bandwidth", positive=True)
    _check_size(rows * cols, 4 * rows * cols, "rows", f"{rows} x {cols}")
    fabric = _Fabric(_number(compute, "compute", positive=False))
    grid = [[fabric.gpu() for _ in range(cols)] for _ in range(rows)]
    pairs: set[frozenset[NodeId]] = set()
    for r in range(rows):
        for c in range(cols):
            for other in (grid[r][(c + 1) % cols], grid[(r + 1) % rows][c]):
                pair = frozenset((grid[r][c], other))
                if len(pair) == 2 and pair not in pairs:
                    pairs.add(pair)
                    fabric.cable(grid[r][c], other, bw)
    return fabric.platform(port_model)
