"""The abstract model of Canon and Antoniu: trees, Algorithms 1–3, lengths, bounds, labels.

Everything here works on machine numbers and the two costs ``d`` and ``c``
of section 3; nothing depends on a platform.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias

from portsim.simulator.errors import PlannerError

__all__ = [
    "Bounds",
    "ReductionTree",
    "Strategy",
    "canon_antoniu_bounds",
    "greedy_tree",
    "interval_labels",
    "sink_positions",
    "strategy_tree",
    "tree_length",
]

Strategy: TypeAlias = Literal["greedy", "fibonacci", "binomial"]
"""How the tree is built: Algorithm 1 with the real costs, or a section 7.3 strategy."""



@dataclass(frozen=True)
class ReductionTree:
    """A reduction tree with the transfer times of the algorithm that built it.

    Machines are numbered ``0 .. n-1`` in the order the algorithm inserted
    them (the paper's ``1 .. n``); machine 0 is the sink.  A machine's
    predecessors (the machines that send to it) were inserted after it.

    Attributes
    ----------
    child:
        ``child[i]`` is the machine ``i`` sends to (the paper's ``c_i``);
        ``-1`` for the sink.
    send_start:
        Forward start of machine ``i``'s transfer, in ticks (``unit``); for
        the sink, the length.
    unit:
        Length of one tick (the algorithm runs on integers).
    d, c:
        The transfer and computation costs the tree was built with.
    lanes:
        Algorithm 2 only: the transfer slot (``0 .. K-1``) of each machine's
        transfer; transfers on one slot never overlap.
    """

    child: tuple[int, ...]
    send_start: tuple[int, ...]
    unit: Fraction
    d: Fraction
    c: Fraction
    lanes: tuple[int, ...] | None = None

    @property
    def n(self) -> int:
        """Number of machines."""
        return len(self.child)

    @property
    def length(self) -> Fraction:
        """Length of the schedule the algorithm announces (reversed time, exact)."""
        return self.send_start[0] * self.unit

    def send_time(self, machine: int) -> Fraction:
        """Forward start of ``machine``'s transfer (the sink: the length)."""
        return self.send_start[machine] * self.unit

    def receptions(self) -> list[list[int]]:
        """Predecessors of each machine in forward arrival order.

        The algorithms insert the predecessor received *last* first (time is
        reversed), so the arrival order is the reverse insertion order.
        """
        preds: list[list[int]] = [[] for _ in self.child]
        for i in range(self.n - 1, 0, -1):
            preds[self.child[i]].append(i)
        return preds

    def subtree_sizes(self) -> list[int]:
        """Number of machines in the subtree of each machine (itself included)."""
        size = [1] * self.n
        for i in range(self.n - 1, 0, -1):
            size[self.child[i]] += size[i]
        return size

    def max_in_degree(self) -> int:
        """Largest number of predecessors of a machine (the paper's ``deg``)."""
        count = [0] * self.n
        for j in self.child[1:]:
            count[j] += 1
        return max(count, default=0)

    def depth(self) -> int:
        """Machines on the longest leaf-to-sink path (1 for a lone sink)."""
        level = [1] * self.n
        for i in range(1, self.n):
            level[i] = level[self.child[i]] + 1
        return max(level, default=1)


def _ticks(*values: Fraction) -> tuple[Fraction, list[int]]:
    """A tick length making every value an integer number of ticks."""
    denominator = math.lcm(*(v.denominator for v in values))
    unit = Fraction(1, denominator)
    return unit, [int(v / unit) for v in values]


def _check_count(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlannerError(f"{name} must be an integer >= {minimum}", path=name, value=value)
    return value


def greedy_tree(
    n: int,
    d: Fraction | int,
    c: Fraction | int,
    *,
    concurrent_transfers: int | None = None,
    reducers: int | None = None,
) -> ReductionTree:
    """Build the Canon–Antoniu greedy reduction tree for ``n`` elements.

    Parameters
    ----------
    n:
        Number of elements (machines), ``>= 1``.
    d, c:
        Transfer cost and computation cost (``>= 0``).
    concurrent_transfers:
        ``K``: at most ``K`` transfers at once (Algorithm 2, section 6.1).
    reducers:
        ``K``: only the first ``K`` machines reduce (Algorithm 3, section 6.2).

    Returns
    -------
    ReductionTree
        The children ``c_i`` and forward transfer start times.

    Raises
    ------
    PlannerError
        On a bad ``n``, a negative cost, a bad ``K``, or both options at once.

    Notes
    -----
    Algorithm 1 (section 5) works in reversed time: ``s_i`` is the soonest
    instant machine ``i`` can compute and then transfer.  Each new machine
    ``i`` takes as child the machine ``M`` minimising ``s_M + c + d``; then
    ``s_i = s_M + c + d`` and ``s_M += max(d, c)``.  The minimum comes from a
    binary heap (Θ(n log n)); ties go to the smaller ``s``, then to the
    machine inserted first.  The length is the largest ``s_i``, and the
    forward transfer of machine ``i`` starts at ``length - s_i``: these are
    the default transfer times of Proposition 3 (:func:`tree_length`
    recomputes them forward and finds the same length).

    Algorithm 2 keeps the same choice of ``M`` but delays the transfer until
    the ``(i-K)``-th one is over: ``t_i = max(s_M + c, t_{i-K}) + d``,
    ``s_i = t_i``, ``s_M = max(s_M + c, t_i - c)``; transfer ``i`` uses slot
    ``i mod K``.  Algorithm 3 chooses ``M`` among the first ``K`` machines
    only.  Theorems 4, 7 and 9 prove the three optimal in their models.

    Costs are scaled to integers and every heap entry is one integer
    ``s * n + machine``, which keeps ``n = 10^6`` within a few seconds.

    Examples
    --------
    >>> t = greedy_tree(5, 1, 1)  # Fibonacci tree of order 3 (Theorem 17)
    >>> t.child, t.length
    ((-1, 0, 0, 0, 1), Fraction(4, 1))
    >>> t.receptions()[0]  # the sink receives 3, 2, then the subtree of 1
    [3, 2, 1]
    >>> greedy_tree(8, 1, 0).length  # binomial tree of order 3: 3 (d + c)
    Fraction(3, 1)
    """
    n = _check_count("n", n)
    d, c = Fraction(d), Fraction(c)
    if d < 0 or c < 0:
        raise PlannerError("costs d and c must be >= 0", value=f"d={d}, c={c}")
    if concurrent_transfers is not None and reducers is not None:
        raise PlannerError("concurrent_transfers (Algorithm 2) and reducers (Algorithm 3) "
                           "cannot be combined", value="concurrent_transfers, reducers")
    unit, (dt, ct) = _ticks(d, c)
    if concurrent_transfers is not None:
        k = _check_count("concurrent_transfers", concurrent_transfers)
        child, reversed_s, lanes = _algorithm_2(n, dt, ct, k)
        return _forward(child, reversed_s, unit, d, c, lanes)
    k = n if reducers is None else _check_count("reducers", reducers)
    child, reversed_s = _algorithm_1(n, dt, ct, k)
    return _forward(child, reversed_s, unit, d, c, None)


def _algorithm_1(n: int, d: int, c: int, reducers: int) -> tuple[list[int], list[int]]:
    """Algorithms 1 and 3 on integer costs: children and reversed ``s_i``."""
    step = max(d, c) * n
    dc = d + c
    child = [-1] * n
    s_at_insertion = [0] * n
    heap = [0]  # entries s * n + machine: the smallest s, then the earliest machine
    heapreplace, heappush = heapq.heapreplace, heapq.heappush
    for i in range(1, n):
        top = heap[0]
        s_m, m = divmod(top, n)
        s_i = s_m + dc
        child[i] = m
        s_at_insertion[i] = s_i
        heapreplace(heap, top + step)
        if i < reducers:
            heappush(heap, s_i * n + i)
    return child, s_at_insertion


def _algorithm_2(n: int, d: int, c: int, k: int) -> tuple[list[int], list[int], list[int]]:
    """Algorithm 2 on integer costs: children, reversed ``t_i`` and transfer slots."""
    child = [-1] * n
    t = [0] * n
    s = [0] * n
    heap = [0]
    for i in range(1, n):
        _, m = divmod(heap[0], n)
        before = t[i - k] if i - k >= 1 else 0
        t_i = max(s[m] + c, before) + d
        t[i] = t_i
        s[i] = t_i
        s[m] = max(s[m] + c, t_i - c)
        child[i] = m
        heapq.heapreplace(heap, s[m] * n + m)
        heapq.heappush(heap, t_i * n + i)
    lanes = [i % k for i in range(n)]
    return child, t, lanes


def _forward(child: list[int], reversed_s: list[int], unit: Fraction, d: Fraction,
             c: Fraction, lanes: list[int] | None) -> ReductionTree:
    length = max(reversed_s)
    send = [length - s for s in reversed_s]
    send[0] = length
    return ReductionTree(tuple(child), tuple(send), unit, d, c,
                         None if lanes is None else tuple(lanes))


def strategy_tree(strategy: Strategy, n: int, d: Fraction | int = 1,
                  c: Fraction | int = 1) -> ReductionTree:
    """The tree a section 7.3 strategy (or Algorithm 1 itself) builds.

    Parameters
    ----------
    strategy:
        ``"greedy"``: Algorithm 1 with ``(d, c)``; ``"fibonacci"``: Algorithm
        1 with ``d = c`` (Theorem 19, a 2-approximation); ``"binomial"``:
        Algorithm 1 with ``min(d, c) = 0`` (Theorem 18).
    n, d, c:
        Number of elements and the real costs (the strategies ignore them).

    Returns
    -------
    ReductionTree
        Built with the strategy's costs; time it with the real ones through
        :func:`tree_length`.

    Examples
    --------
    >>> strategy_tree("fibonacci", 5).child  # Fibonacci tree of order 3
    (-1, 0, 0, 0, 1)
    """
    if strategy == "fibonacci":
        return greedy_tree(n, 1, 1)
    if strategy == "binomial":
        return greedy_tree(n, 1, 0)
    if strategy == "greedy":
        return greedy_tree(n, d, c)
    raise PlannerError("unknown strategy (greedy, fibonacci, binomial)", value=strategy)


def tree_length(tree: ReductionTree, d: Fraction | int | None = None,
                c: Fraction | int | None = None) -> Fraction:
    """Length of ``tree`` timed forward with transfer cost ``d`` and computation cost ``c``.

    Parameters
    ----------
    tree:
        The tree; every machine receives in the order of
        :meth:`ReductionTree.receptions`.
    d, c:
        Costs (default: those the tree was built with).

    Returns
    -------
    Fraction
        When the sink holds the result.

    Notes
    -----
    A machine is ready to send once its reductions are over (Proposition 3,
    ``t_i = max_j (t_i^j + d + (m_i - j) max(d, c) + c)`` with ``t_i^j`` the
    j-th *smallest* transfer time); a transfer starts at the sender's ready
    time or when the receiver's previous transfer ends (one transfer per
    machine at a time, the queueing the paper describes after Proposition 3);
    reduction ``j`` starts when element ``j`` has arrived and reduction
    ``j - 1`` is over.  Every start is as early as possible, so on a given
    tree no schedule is shorter.

    Examples
    --------
    >>> tree_length(greedy_tree(3, 1, 1))
    Fraction(3, 1)
    >>> tree_length(greedy_tree(3, 1, 1), d=2, c=1)  # d + max(d, c) + c
    Fraction(5, 1)
    """
    dd = tree.d if d is None else Fraction(d)
    cc = tree.c if c is None else Fraction(c)
    receptions = tree.receptions()
    unit, (d_ticks, c_ticks) = _ticks(dd, cc)  # integers: exact and fast
    ticks = [0] * tree.n
    for m in range(tree.n - 1, -1, -1):
        port_free: int | None = None
        done: int | None = None
        for p in receptions[m]:
            start = ticks[p] if port_free is None else max(ticks[p], port_free)
            port_free = start + d_ticks
            done = (port_free if done is None else max(done, port_free)) + c_ticks
        ticks[m] = 0 if done is None else done
    return ticks[0] * unit


@dataclass(frozen=True)
class Bounds:
    """Bounds of Lemma 5, Propositions 6 and 8 and Corollary 11 for ``n``, ``d``, ``c``.

    ``None`` where the statement does not apply (no ``K``, or ``K > n // 2``).
    ``proposition_8_upper`` is the bound as printed, ``(floor(log2 K + 1) +
    ceil(n/K - 2)) (d + c)``; it is wrong when ``K`` is not a power of two
    (``n = 6, K = 3``: it claims ``2 (d + c)``, but two steps of ``d + c``
    reduce at most 4 elements; the proof's ``n - 2^(floor(log2 K) + 1) < n -
    2K`` fails).  ``proposition_8_corrected`` uses ``ceil(log2 K) + 1`` as
    Corollary 11 does, and holds (tested).
    """

    lemma_5_lower: Fraction
    proposition_6_upper: Fraction
    proposition_8_upper: Fraction | None = None
    proposition_8_corrected: Fraction | None = None
    corollary_11_upper: Fraction | None = None

    def notes(self) -> list[str]:
        """One line per bound, for :attr:`PlanResult.notes`."""
        out = [f"Lemma 5: optimal length >= ceil(log2 n) max(d, c) = {self.lemma_5_lower}",
               f"Proposition 6: optimal length <= ceil(log2 n) (d + c) = "
               f"{self.proposition_6_upper}"]
        if self.proposition_8_upper is not None:
            line = ("Proposition 8: Algorithm 2 length <= (floor(log2 K + 1) + "
                    f"ceil(n/K - 2)) (d + c) = {self.proposition_8_upper}")
            if self.proposition_8_corrected != self.proposition_8_upper:
                line += (" as printed, which fails for K not a power of two; with "
                         f"ceil(log2 K) + 1: {self.proposition_8_corrected}")
            out.append(line)
        if self.corollary_11_upper is not None:
            out.append("Corollary 11: Algorithm 3 length <= (ceil(log2 K + 1) + "
                       f"ceil(n/K - 2)) (d + c) = {self.corollary_11_upper}")
        return out


def canon_antoniu_bounds(
    n: int,
    d: Fraction | int,
    c: Fraction | int,
    *,
    concurrent_transfers: int | None = None,
    reducers: int | None = None,
) -> Bounds:
    """The length bounds of sections 5 and 6, exactly (see :class:`Bounds`).

    Examples
    --------
    >>> b = canon_antoniu_bounds(5, 1, 2, reducers=2)
    >>> b.lemma_5_lower, b.proposition_6_upper, b.corollary_11_upper
    (Fraction(6, 1), Fraction(9, 1), Fraction(9, 1))
    >>> b = canon_antoniu_bounds(6, 1, 1, concurrent_transfers=3)
    >>> b.proposition_8_upper, b.proposition_8_corrected
    (Fraction(4, 1), Fraction(6, 1))
    """
    d, c = Fraction(d), Fraction(c)
    log_n = (n - 1).bit_length()  # ceil(log2 n), 0 for n = 1

    def steps(k: int | None, ceil_log: bool) -> Fraction | None:
        if k is None or k > n // 2:
            return None
        floor_log = k.bit_length() - 1
        log_k = floor_log + (1 if ceil_log and k & (k - 1) else 0)
        return (log_k + 1 + (-(-n // k) - 2)) * (d + c)

    return Bounds(log_n * max(d, c), log_n * (d + c),
                  steps(concurrent_transfers, ceil_log=False),
                  steps(concurrent_transfers, ceil_log=True),
                  steps(reducers, ceil_log=True))


def interval_labels(tree: ReductionTree, sink_position: int) -> tuple[list[int], list[list[bool]]]:
    """Label machines so every reduction combines adjacent intervals in order (section 4.1).

    Parameters
    ----------
    tree:
        The tree.
    sink_position:
        The participant index the sink must get.

    Returns
    -------
    (position, prepend)
        ``position[i]``: the participant index of machine ``i``;
        ``prepend[m][j]``: whether the ``j``-th element machine ``m``
        receives goes left of its accumulated interval (else right).

    Raises
    ------
    PlannerError
        When no labelling gives the sink that index (see
        :func:`sink_positions`).

    Notes
    -----
    Every machine but the sink takes the first index of its subtree's
    interval and appends what it receives, in arrival order.  The sink at
    index ``p`` must prepend blocks whose sizes sum to ``p``: a subset sum
    over its (``O(log n)``) received blocks.

    Examples
    --------
    >>> tree = greedy_tree(5, 1, 1)  # the sink receives blocks of sizes 1, 1, 2
    >>> interval_labels(tree, 0)
    ([0, 3, 2, 1, 4], [[False, False, False], [False], [], [], []])
    >>> interval_labels(tree, 3)  # v[2] on the left, v[4] on the right, then v[0,1]
    ([3, 0, 4, 2, 1], [[True, False, True], [False], [], [], []])
    """
    receptions = tree.receptions()
    size = tree.subtree_sizes()
    sink_blocks = [size[p] for p in receptions[0]] if tree.n else []
    reach = _subset_sums(sink_blocks)
    if not (reach[-1] >> sink_position) & 1:
        raise PlannerError("no labelling gives the sink this participant index",
                           value=sink_position)
    position = [0] * tree.n
    prepend: list[list[bool]] = [[False] * len(r) for r in receptions]
    target = sink_position
    for j in range(len(sink_blocks), 0, -1):
        if not (reach[j - 1] >> target) & 1:
            prepend[0][j - 1] = True
            target -= sink_blocks[j - 1]
    position[0] = sink_position
    lo = hi = sink_position
    first = [0] * tree.n  # first index of each machine's interval
    for j, p in enumerate(receptions[0]):
        if prepend[0][j]:
            lo -= size[p]
            first[p] = lo
        else:
            first[p] = hi + 1
            hi += size[p]
    for m in range(1, tree.n):  # a machine precedes its predecessors
        position[m] = first[m]
        nxt = first[m] + 1
        for p in receptions[m]:
            first[p] = nxt
            nxt += size[p]
    return position, prepend


def _subset_sums(sizes: Sequence[int]) -> list[int]:
    """``reach[j]``: bitset of the sums of subsets of ``sizes[:j]``."""
    reach = [1]
    for s in sizes:
        reach.append(reach[-1] | (reach[-1] << s))
    return reach


def sink_positions(tree: ReductionTree) -> int:
    """Bitset of the participant indexes the sink can get (see :func:`interval_labels`).

    Bit ``p`` is set when some of the blocks the sink receives have sizes
    summing to ``p``.  On every tree of Algorithms 1-3 tried (``n < 300`` and
    ``n`` = 1000, 4097, 10^4; ten cost pairs; ``K`` = 1, 2, 3, 5) all ``n``
    bits are set, so the target can always be the sink.

    Examples
    --------
    >>> bin(sink_positions(greedy_tree(5, 1, 1)))  # blocks of sizes 1, 1, 2
    '0b11111'
    """
    size = tree.subtree_sizes()
    return _subset_sums([size[p] for p in tree.receptions()[0]])[-1]

