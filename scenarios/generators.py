"""Platform generators: complete graphs, sender-time clusters, random digraphs.

Each generator is a plain function returning a :class:`simulator.platform.Platform`.
Randomness goes through one helper, :func:`random_state`, which turns a seed
into a private :class:`random.Random`; there is no module-level random state.
Bad parameters raise :class:`simulator.errors.PlatformError` whose ``path`` is
the parameter name (``"degree"``), which the loader prefixes with the key path
of the generator in the file.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from fractions import Fraction

from simulator.errors import PlatformError
from simulator.numbers import format_rational, parse_rational
from simulator.platform import BIDIRECTIONAL, Link, Node, NodeId, Platform, PortModel

__all__ = [
    "MAX_GENERATED_LINKS",
    "MAX_GENERATED_NODES",
    "complete_platform",
    "draw_rational",
    "random_platform",
    "random_state",
    "sender_times_platform",
]

Number = Fraction | int | str
"""A number as accepted by :func:`simulator.numbers.parse_rational`."""

MAX_GENERATED_NODES = 10_000
"""Largest ``n`` a generator accepts (a typo such as ``n: 100000`` must not hang)."""

MAX_GENERATED_LINKS = 1_000_000
"""Largest number of links a generator may create (``complete`` makes ``n (n - 1)``)."""


def _check_size(n: int, links: int, name: str) -> None:
    if n > MAX_GENERATED_NODES:
        raise PlatformError(f"must be <= {MAX_GENERATED_NODES}", path=name, value=n)
    if links > MAX_GENERATED_LINKS:
        raise PlatformError(
            f"would generate {links} links, more than the cap of {MAX_GENERATED_LINKS}",
            path=name, value=n)


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


def _bounds(value: object, name: str, *, positive: bool) -> tuple[Fraction, Fraction]:
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
    return Platform(nodes, links, PortModel.parse(port_model))


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
    return Platform(nodes, links, PortModel.parse(port_model))


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
    cost_bounds = _bounds(c, "c", positive=True)
    compute_bounds = _bounds(compute, "compute", positive=False)
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
    return Platform(nodes, links, PortModel.parse(port_model))
