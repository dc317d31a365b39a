"""Exact dynamic programs for the minimum critical path (Liu–Kuo–Wang section 5.3).

An optimal reduction is a binary tree of transmission windows of minimum
critical path (MCP, section 5.3.1); by Observation 1 an optimal tree has
every node no slower than its children, so its root is a fastest sender.
With two classes of processors (``f`` fast of time ``t_f``, ``s`` slow of
time ``t_s``), equations (2)–(3)::

    T(f, s) = t_f + min over f_l + f_r = f - 1, s_l + s_r = s of
                    max(T(f_l, s_l), T(f_r, s_r))          (f > 0)
    T(0, s) = ceil(log2(s + 1)) * t_s

Three ways to evaluate it, counting the *pairs* ``(T(A), T(B))`` of buddy
table entries examined, as Tables 2–4 do:

``naive``
    every pair of (2) (Table 2);
``s-monotone``
    Lemma 4 (``T`` non-decreasing in ``s``): for each split ``(f_l, f_r)``
    the crossover of (4) is found by binary search along ``s`` (section
    5.3.3, Theorem 5, Table 3);
``monotone``
    Lemmas 4 and 5 (``T(f + 1, s) >= T(f, s)`` when ``f >= s - 1``), section
    5.3.4, Table 4: in column ``f_l`` the points below the line ``s = f + 1``
    are dominated when ``2 f_l + 1 <= s`` (the first case of Fig. 13); a
    column whose cheapest pair is no better than the best so far is skipped,
    and once ``T(f_r, 0)`` reaches the best so far every column with a
    larger ``f_r`` is dominated (the rectangle of Fig. 12); and a cell stops
    as soon as it reaches its lower bound ``max(T(f, s - 1), T(f - 1, s))``
    (Lemmas 4 and 5), trying first the split that was best for ``(f, s - 1)``.

With ``k`` classes, Theorem 6: the same recursion over count vectors, the
root in the fastest class present, and a binary search along the count of
the slowest class (for which Lemma 4 holds) for every split of the others.

Times are scaled to integers internally (exact); results are ``Fraction``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, TypeAlias

from portsim.planners.snf.model import CriticalPathTree
from portsim.simulator.errors import PlannerError

__all__ = [
    "TWO_CLASS_METHODS",
    "MultiClassTable",
    "TwoClassMethod",
    "TwoClassTable",
    "balanced_tree",
    "multi_class_table",
    "naive_pair_count",
    "two_class_table",
]

TwoClassMethod: TypeAlias = Literal["naive", "s-monotone", "monotone"]
TWO_CLASS_METHODS: tuple[TwoClassMethod, ...] = ("naive", "s-monotone", "monotone")


def _scale(times: Sequence[Fraction]) -> int:
    return math.lcm(*(Fraction(t).denominator for t in times))


def balanced_tree(count: int, time: Fraction) -> CriticalPathTree | None:
    """A binary tree of ``count`` equal windows of least height ``ceil(log2(count + 1))``.

    The homogeneous case, equation (3): ``count`` senders of equal time
    reduce in ``ceil(log2(count + 1))`` rounds (binomial halving).

    Examples
    --------
    >>> balanced_tree(4, Fraction(2)).critical_path
    Fraction(6, 1)
    """
    if count <= 0:
        return None
    height = count.bit_length()
    left = min(count - 1, (1 << (height - 1)) - 1)
    kids = tuple(t for t in (balanced_tree(left, time), balanced_tree(count - 1 - left, time))
                 if t is not None)
    return CriticalPathTree(time, kids)


class _Column:
    """``T[(*prefix, x)]`` as a sequence indexed by ``x`` (looked up lazily)."""

    __slots__ = ("prefix", "table")

    def __init__(self, table: dict[tuple[int, ...], int], prefix: tuple[int, ...]) -> None:
        self.table = table
        self.prefix = prefix

    def __getitem__(self, x: int) -> int:
        return self.table[(*self.prefix, x)]


def _cross(
    g: list[int] | _Column, h: list[int] | _Column, s: int, lo: int, hi: int
) -> tuple[int, int, int]:
    """min over ``x`` in ``[lo, hi]`` of ``max(g[x], h[s - x])``; ``g`` up, ``h[s - x]`` down.

    Returns ``(value, argmin, pairs examined)``: a binary search for the
    first ``x`` with ``g[x] >= h[s - x]`` (the crossover of equation (4)),
    then the two candidates around it.
    """
    a, b = lo, hi + 1
    refs = 0
    while a < b:
        mid = (a + b) >> 1
        refs += 1
        if g[mid] >= h[s - mid]:
            b = mid
        else:
            a = mid + 1
    best = -1
    arg = -1
    if a <= hi:  # max is g[a] there
        best, arg = g[a], a
        refs += 1
    if a - 1 >= lo:  # max is h[s - a + 1] there
        value = h[s - a + 1]
        refs += 1
        if arg < 0 or value < best:
            best, arg = value, a - 1
    return best, arg, refs


@dataclass
class TwoClassTable:
    """The table ``T(f, s)`` of equations (2)–(3), with the work it took.

    Attributes
    ----------
    fast_time, slow_time:
        ``t_f`` and ``t_s``.
    method:
        ``"naive"``, ``"s-monotone"`` or ``"monotone"``.
    references:
        ``references[f][s]``: pairs of table entries examined for cell
        ``(f, s)`` (Tables 2–4 count the same thing).
    """

    fast_time: Fraction
    slow_time: Fraction
    method: TwoClassMethod
    scale: int
    values: list[list[int]] = field(repr=False)
    choice: list[list[tuple[int, int]]] = field(repr=False)
    references: list[list[int]] = field(repr=False)

    def value(self, f: int, s: int) -> Fraction:
        """``T(f, s)``: the optimal reduction time with ``f`` fast and ``s`` slow senders."""
        return Fraction(self.values[f][s], self.scale)

    @property
    def total_references(self) -> int:
        """Pairs examined over the whole table."""
        return sum(map(sum, self.references))

    def tree(self, f: int, s: int) -> CriticalPathTree | None:
        """An MCP tree achieving ``T(f, s)`` (``None`` when ``f = s = 0``)."""
        if f == 0:
            return balanced_tree(s, self.slow_time)
        fl, sl = self.choice[f][s]
        kids = tuple(t for t in (self.tree(fl, sl), self.tree(f - 1 - fl, s - sl))
                     if t is not None)
        return CriticalPathTree(self.fast_time, kids)


def naive_pair_count(f: int, s: int) -> int:
    """Pairs the naive DP examines for cell ``(f, s)``: every unordered buddy pair of (2).

    A pair is ``{(f_l, s_l), (f_r, s_r)}`` with ``f_l + f_r = f - 1`` and
    ``s_l + s_r = s``, ``s_l`` from 0 to ``s``: 55 pairs at ``f = s = 10``.
    The paper counts otherwise, and not consistently: section 6.3 says the
    naive algorithm checks ``ceil(s (f - 1) / 2)`` pairs (45 there) and
    Table 2 prints ``s f / 2`` (50 there, 11250 at ``f = s = 150`` where this
    count is 11325), so compare the orders of magnitude only.
    """
    if f == 0:
        return 0
    total = 0
    for fl in range((f - 1) // 2 + 1):
        total += s // 2 + 1 if fl == f - 1 - fl else s + 1
    return total


def two_class_table(
    fast_count: int,
    slow_count: int,
    fast_time: Fraction | int,
    slow_time: Fraction | int,
    *,
    method: TwoClassMethod = "monotone",
) -> TwoClassTable:
    """Fill ``T(f, s)`` for ``f <= fast_count``, ``s <= slow_count`` (section 5.3).

    Parameters
    ----------
    fast_count, slow_count:
        Largest numbers of fast and slow senders (the destination excluded).
    fast_time, slow_time:
        ``t_f < t_s`` (any ratio: Theorem 4 makes SNF optimal when it is at
        least 2, but the table is exact for every ratio).
    method:
        ``"naive"`` (Table 2), ``"s-monotone"`` (section 5.3.3, Table 3) or
        ``"monotone"`` (sections 5.3.3–5.3.4, Table 4).

    Returns
    -------
    TwoClassTable

    Examples
    --------
    Fig. 8 with ``x = 3/2``: 8 fast senders and 3 slow ones (the destination
    is the fourth slow processor).

    >>> table = two_class_table(8, 3, 1, Fraction(3, 2))
    >>> table.value(8, 3)
    Fraction(4, 1)
    """
    tf_q, ts_q = Fraction(fast_time), Fraction(slow_time)
    if not 0 < tf_q < ts_q:
        raise PlannerError("two classes need 0 < fast_time < slow_time",
                           value=f"{tf_q}, {ts_q}")
    if method not in TWO_CLASS_METHODS:
        raise PlannerError("unknown DP method; valid: " + ", ".join(TWO_CLASS_METHODS),
                           value=method)
    scale = _scale([tf_q, ts_q])
    tf, ts = int(tf_q * scale), int(ts_q * scale)
    F, S = fast_count, slow_count
    T = [[0] * (S + 1) for _ in range(F + 1)]
    choice = [[(0, 0)] * (S + 1) for _ in range(F + 1)]
    refs = [[0] * (S + 1) for _ in range(F + 1)]
    T[0] = [s.bit_length() * ts for s in range(S + 1)]
    inf = 1 << 62
    for f in range(1, F + 1):
        Tf = T[f]
        for s in range(S + 1):
            best, arg, count = inf, (0, 0), 0
            if method == "naive":
                for fl in range((f - 1) // 2 + 1):
                    fr = f - 1 - fl
                    g, h = T[fl], T[fr]
                    for sl in range((s // 2 if fl == fr else s) + 1):
                        count += 1
                        v = g[sl] if g[sl] > h[s - sl] else h[s - sl]
                        if v < best:
                            best, arg = v, (fl, sl)
            elif method == "s-monotone":
                for fl in range((f - 1) // 2 + 1):
                    fr = f - 1 - fl
                    v, sl, r = _cross(T[fl], T[fr], s, 0, s // 2 if fl == fr else s)
                    count += r
                    if v < best:
                        best, arg = v, (fl, sl)
            else:
                bound = Tf[s - 1] if s else 0  # Lemma 4
                if f - 1 >= s - 1:  # Lemma 5
                    bound = max(bound, T[f - 1][s])
                bound -= tf
                columns = list(range((f - 1) // 2, -1, -1))
                if s:  # warm start: the split that was best one slow processor ago
                    first = choice[f][s - 1][0]
                    columns.remove(first)
                    columns.insert(0, first)
                for fl in columns:
                    fr = f - 1 - fl
                    g, h = T[fl], T[fr]
                    lo = fl + 1 if 2 * fl + 1 <= s else 0  # Fig. 13, first case (Lemma 5)
                    count += 1
                    if h[0] >= best:
                        break  # Fig. 12: every larger f_r is dominated too
                    if g[lo] >= best:
                        continue
                    v, sl, r = _cross(g, h, s, lo, s)
                    count += r
                    if v < best:
                        best, arg = v, (fl, sl)
                        if best <= bound:
                            break
            Tf[s] = tf + best
            choice[f][s] = arg
            refs[f][s] = count
    return TwoClassTable(tf_q, ts_q, method, scale, T, choice, refs)


@dataclass
class MultiClassTable:
    """The MCP table over count vectors of ``k`` classes (Theorem 6).

    Attributes
    ----------
    times:
        Class times, fastest first.
    counts:
        The largest count vector (the instance).
    references:
        Pairs of table entries examined in all.
    """

    times: tuple[Fraction, ...]
    counts: tuple[int, ...]
    scale: int
    values: dict[tuple[int, ...], int] = field(repr=False)
    choice: dict[tuple[int, ...], tuple[int, tuple[int, ...], tuple[int, ...]]] = field(
        repr=False)
    references: int = 0

    def value(self, counts: Sequence[int] | None = None) -> Fraction:
        """The optimal reduction time for ``counts`` senders of each class (default: all)."""
        key = tuple(self.counts if counts is None else counts)
        return Fraction(self.values[key], self.scale)

    def tree(self, counts: Sequence[int] | None = None) -> CriticalPathTree | None:
        """An MCP tree achieving :meth:`value`."""
        key = tuple(self.counts if counts is None else counts)
        if not any(key):
            return None
        nonzero = [j for j, c in enumerate(key) if c]
        if len(nonzero) == 1:
            return balanced_tree(key[nonzero[0]], self.times[nonzero[0]])
        j, a, b = self.choice[key]
        kids = tuple(t for t in (self.tree(a), self.tree(b)) if t is not None)
        return CriticalPathTree(self.times[j], kids)


def multi_class_table(times: Sequence[Fraction | int], counts: Sequence[int]) -> MultiClassTable:
    """Solve the MCP recursion for ``k`` classes (Liu–Kuo–Wang Theorem 6).

    Parameters
    ----------
    times:
        Distinct class times, fastest first.
    counts:
        Number of senders of each class (the destination excluded).

    Returns
    -------
    MultiClassTable
        Every count vector below ``counts``; ``O(n^(2k-1) log n)`` time.

    Notes
    -----
    For a vector ``c`` with at least two classes present, the root is in the
    fastest class ``j`` present (Observation 1) and the other senders
    ``r = c - e_j`` split into two subtrees ``a + b = r``.  For each split of
    the first ``k - 1`` coordinates (unordered: a split and its mirror are
    the same pair), the crossover along the slowest coordinate is found by
    binary search, since ``T`` is non-decreasing in the number of slowest
    processors (Lemma 4).  A single class present is equation (3).

    Examples
    --------
    >>> multi_class_table([1, Fraction(3, 2)], [8, 3]).value()
    Fraction(4, 1)
    """
    tq = tuple(Fraction(t) for t in times)
    if list(tq) != sorted(set(tq)) or not tq or tq[0] <= 0:
        raise PlannerError("class times must be distinct, positive and sorted fastest first",
                           value=[str(t) for t in tq])
    if len(counts) != len(tq) or any(c < 0 for c in counts):
        raise PlannerError("one non-negative count per class", value=list(counts))
    scale = _scale(tq)
    t = [int(x * scale) for x in tq]
    k = len(t)
    T: dict[tuple[int, ...], int] = {}
    choice: dict[tuple[int, ...], tuple[int, tuple[int, ...], tuple[int, ...]]] = {}
    refs = 0
    last = k - 1
    for c in itertools.product(*(range(x + 1) for x in counts)):
        nonzero = [j for j in range(k) if c[j]]
        if len(nonzero) <= 1:
            T[c] = c[nonzero[0]].bit_length() * t[nonzero[0]] if nonzero else 0
            continue
        j = nonzero[0]
        r = list(c)
        r[j] -= 1
        head = r[:last]
        rk = r[last]
        best = 1 << 62
        arg: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        for p in itertools.product(*(range(x + 1) for x in head)):
            q = tuple(x - y for x, y in zip(head, p, strict=True))
            if p > q:
                continue
            v, x, used = _cross(_Column(T, p), _Column(T, q), rk, 0, rk)
            refs += used
            if v < best:
                best, arg = v, ((*p, x), (*q, rk - x))
        T[c] = t[j] + best
        choice[c] = (j, arg[0], arg[1])
    return MultiClassTable(tq, tuple(counts), scale, T, choice, refs)
