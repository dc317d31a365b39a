"""One period of a port-sum solution split into b-matchings (generalised edge colouring).

On a platform without unidirectional nodes a node ``u`` runs at most
``k_out(u)`` sends and ``k_in(u)`` receives at once, each link at most one
transfer (:class:`~portsim.planners.lp._capacity.PortCapacity`).  A set of
links allowed at once is a **b-matching** of the bipartite graph senders ×
receivers (a node's sending side and its receiving side are two vertices):
at most ``k_out(u)`` of its links leave ``u``, at most ``k_in(v)`` enter
``v``, each link at most once.  The port-sum programs only bound the busy
times ``L_e`` of one period ``τ``: ``Σ_{u→·} L <= k_out(u) τ``,
``Σ_{·→v} L <= k_in(v) τ`` and ``L_e <= τ``.  They are exact because every
such load splits into b-matchings run one after the other within ``τ``.

**Integrality.**  Let ``Q = {x : 0 <= x_e <= 1, Σ_{e ∋ u out} x_e <=
k_out(u), Σ_{e ∋ v in} x_e <= k_in(v)}``.  Its constraint matrix is the
incidence matrix ``A`` of a bipartite graph (one row per sender vertex, one
per receiver vertex) stacked on the identity (the ``x_e <= 1`` rows; the
``x_e >= 0`` rows are ``-I``).  ``A`` is totally unimodular: every column
has exactly two 1s, one in the sender rows and one in the receiver rows, so
by the Ghouila-Houri (or Heller–Tompkins) criterion — sign the sender rows
``+`` and the receiver rows ``-`` in any subset of rows: every column sums
to 0, 1 or -1 — every square submatrix has determinant 0, ±1.  Appending
unit rows (``±I``) keeps total unimodularity (expand a determinant along a
unit row).  With integral right-hand sides ``k`` and 1, every vertex of
``Q`` is integral (Hoffman–Kruskal): the vertices of ``Q`` are exactly the
b-matchings (the 0/1 vectors of ``Q``), and every face of ``Q`` is again
such a polyhedron (some inequalities made equalities) with integral
vertices.

**Constructive Carathéodory peel.**  Let ``R`` be the loads still to run
and ``t`` the time left, starting with ``t = τ = max(max_u out(u)/k_out(u),
max_v in(v)/k_in(v), max_e L_e)`` (the least period, a lower bound on any
schedule); ``x = R / t`` lies in ``Q`` and at least one of its inequalities
is tight.  Each step:

1. finds an integral b-matching ``M`` on the *minimal face* of ``x``: ``M``
   uses only links with ``R_e > 0``, contains every link with ``R_e = t``,
   and gives every tight node exactly ``k`` links.  It exists because that
   face contains ``x`` and has integral vertices; it is computed as an
   integral feasible flow with lower bounds (source → sender ``[k if tight
   else 0, k]``, sender → receiver per link ``[1 if tight else 0, 1]``,
   receiver → sink likewise, sink → source; the lower bounds moved to a
   super source and sink, one maximum flow with
   :func:`scipy.sparse.csgraph.maximum_flow`, integral);
2. runs ``M`` for the longest ``δ`` that keeps ``(R - δ·1_M) / (t - δ)``
   in ``Q``: ``δ <= R_e`` on the links of ``M``, ``δ <= t - R_e`` on the
   others, ``δ <= (k·t - load) / (k - m)`` on a node with ``m < k`` links
   in ``M``, and ``δ <= t``.

Constraints tight before stay tight (``M`` follows them), and ``δ`` makes
at least one more tight or empties a link, so there are at most ``|E| +
|V_out| + |V_in| + 1`` steps.  The durations sum to ``τ`` exactly, every
link's durations to its load, all in exact :class:`~fractions.Fraction`.
When every capacity is 1 the b-matchings are matchings and the König peel
of :func:`peel_matchings` is used unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from fractions import Fraction

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._solve import Deadline
from portsim.simulator.platform import NodeId, Platform

__all__ = ["peel_b_matchings", "peel_matchings", "peel_platform"]

Link = tuple[NodeId, NodeId]

_PHASE = "periodic schedule"
"""The phase named when the deadline passes (as in :mod:`portsim.planners.lp._periodic`)."""


def peel_platform(platform: Platform, loads: dict[Link, Fraction], *,
                  deadline: Deadline | None = None) -> list[tuple[Fraction, list[Link]]]:
    """Split one period's link loads on ``platform`` into b-matchings of its port capacities."""
    capacity = PortCapacity.of(platform)
    return peel_b_matchings(loads, capacity.send, capacity.receive, deadline=deadline)


def peel_b_matchings(loads: Mapping[Link, Fraction], out_capacity: Mapping[NodeId, Fraction | int],
                     in_capacity: Mapping[NodeId, Fraction | int], *,
                     deadline: Deadline | None = None) -> list[tuple[Fraction, list[Link]]]:
    """Decompose link busy times into b-matchings (see the module notes).

    Parameters
    ----------
    loads:
        Busy time of each link ``(src, dst)`` in one period.
    out_capacity, in_capacity:
        Per node, sends (receives) it may run at once (a missing node: 1).
    deadline:
        Checked at every step.

    Returns
    -------
    list of (duration, links)
        Each entry: at most ``out_capacity[u]`` links leave any ``u``, at
        most ``in_capacity[v]`` enter any ``v``, each link once; every
        link's durations sum to its load and the durations to ``max(max_u
        out(u) / k_out(u), max_v in(v) / k_in(v), max_e load_e)``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> out = peel_b_matchings({("a", "b"): F(1), ("a", "c"): F(1), ("d", "b"): F(1)},
    ...                        {"a": 2, "d": 1}, {"b": 2, "c": 1})
    >>> out
    [(Fraction(1, 1), [('a', 'b'), ('a', 'c'), ('d', 'b')])]
    """
    remaining = {e: Fraction(w) for e, w in loads.items() if w > 0}
    if not remaining:
        return []
    senders = sorted({u for u, _ in remaining})
    receivers = sorted({v for _, v in remaining})
    k_out = {u: int(out_capacity.get(u, 1)) for u in senders}
    k_in = {v: int(in_capacity.get(v, 1)) for v in receivers}
    if all(k == 1 for k in k_out.values()) and all(k == 1 for k in k_in.values()):
        return peel_matchings(dict(remaining), deadline=deadline)
    out_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    in_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    for (u, v), w in remaining.items():
        out_load[u] += w
        in_load[v] += w
    left = max([*(out_load[u] / k_out[u] for u in senders),
                *(in_load[v] / k_in[v] for v in receivers), *remaining.values()])
    flow = _Flow(senders, receivers)
    steps: list[tuple[Fraction, list[Link]]] = []
    while remaining:
        if deadline is not None:
            deadline.check(_PHASE)
        tight_out = {u for u in senders if out_load[u] and out_load[u] == k_out[u] * left}
        tight_in = {v for v in receivers if in_load[v] and in_load[v] == k_in[v] * left}
        chosen = flow.covering(remaining, left, k_out, k_in, tight_out, tight_in)
        step = left
        used_out: dict[NodeId, int] = defaultdict(int)
        used_in: dict[NodeId, int] = defaultdict(int)
        for (u, v), w in remaining.items():
            if (u, v) in chosen:
                step = min(step, w)
                used_out[u] += 1
                used_in[v] += 1
            else:
                step = min(step, left - w)
        for u in senders:
            if out_load[u] and used_out[u] < k_out[u]:
                step = min(step, (k_out[u] * left - out_load[u]) / (k_out[u] - used_out[u]))
        for v in receivers:
            if in_load[v] and used_in[v] < k_in[v]:
                step = min(step, (k_in[v] * left - in_load[v]) / (k_in[v] - used_in[v]))
        if step <= 0:
            raise AssertionError("b-matching peel: no progress (the loads exceed the period)")
        steps.append((step, sorted(chosen)))
        left -= step
        for e in chosen:
            u, v = e
            out_load[u] -= step
            in_load[v] -= step
            remaining[e] -= step
            if remaining[e] == 0:
                del remaining[e]
    return steps


class _Flow:
    """The flow network with lower bounds of step 1, on fixed vertex numbers."""

    def __init__(self, senders: list[NodeId], receivers: list[NodeId]) -> None:
        # 0 source, 1 sink, 2 super source, 3 super sink, then senders, receivers.
        self.out_id = {u: 4 + i for i, u in enumerate(senders)}
        self.in_id = {v: 4 + len(senders) + i for i, v in enumerate(receivers)}
        self.n = 4 + len(senders) + len(receivers)

    def covering(self, remaining: Mapping[Link, Fraction], left: Fraction,
                 k_out: Mapping[NodeId, int], k_in: Mapping[NodeId, int],
                 tight_out: set[NodeId], tight_in: set[NodeId]) -> set[Link]:
        """A b-matching on the minimal face of ``remaining / left`` (module notes, step 1)."""
        rows: list[int] = []
        cols: list[int] = []
        caps: list[int] = []
        chosen: set[Link] = set()

        def arc(a: int, b: int, low: int, high: int) -> None:
            if high > low:
                rows.append(a)
                cols.append(b)
                caps.append(high - low)
            if low:
                rows.extend((2, a))
                cols.extend((b, 3))
                caps.extend((low, low))

        degree_out: dict[NodeId, int] = defaultdict(int)
        degree_in: dict[NodeId, int] = defaultdict(int)
        for (u, v), w in remaining.items():
            degree_out[u] += 1
            degree_in[v] += 1
            if w == left:  # a tight link: always in the b-matching
                chosen.add((u, v))
                arc(self.out_id[u], self.in_id[v], 1, 1)
            else:
                arc(self.out_id[u], self.in_id[v], 0, 1)
        lows = 0
        for u, d in degree_out.items():
            k = min(k_out[u], d)
            low = k if u in tight_out else 0
            lows += low
            arc(0, self.out_id[u], low, k)
        for v, d in degree_in.items():
            k = min(k_in[v], d)
            low = k if v in tight_in else 0
            lows += low
            arc(self.in_id[v], 1, low, k)
        lows += len(chosen)
        arc(1, 0, 0, sum(degree_out.values()) + 1)
        graph = csr_matrix((np.array(caps, dtype=np.int32),
                            (np.array(rows, dtype=np.int32), np.array(cols, dtype=np.int32))),
                           shape=(self.n, self.n))
        result = maximum_flow(graph, 2, 3, method="dinic")
        if result.flow_value != lows:
            raise AssertionError("b-matching peel: the minimal face has no integral point")
        flows = result.flow.tocoo()
        receiver_of = {i: v for v, i in self.in_id.items()}
        sender_of = {i: u for u, i in self.out_id.items()}
        for a, b, f in zip(flows.row, flows.col, flows.data, strict=True):
            if f > 0 and a in sender_of and b in receiver_of:
                chosen.add((sender_of[a], receiver_of[b]))
        return chosen


def peel_matchings(loads: dict[tuple[NodeId, NodeId], Fraction], *,
                   deadline: Deadline | None = None
                   ) -> list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]:
    """Decompose link busy times into matchings (weighted bipartite edge colouring).

    Parameters
    ----------
    loads:
        Busy time of each link ``(src, dst)`` in one period.

    Returns
    -------
    list of (duration, links)
        Each entry is a matching (no two links share a sender or a receiver)
        and how long it lasts; every link's durations sum to its load, and the
        durations sum to at most the largest port load (König).

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> out = peel_matchings({("a", "b"): F(2), ("a", "c"): F(1), ("d", "b"): F(1)})
    >>> sum(d for d, _ in out)
    Fraction(3, 1)
    """
    loads = {e: w for e, w in loads.items() if w > 0}
    if not loads:
        return []
    out_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    in_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    for (u, v), w in loads.items():
        out_load[u] += w
        in_load[v] += w
    delta = max(max(out_load.values()), max(in_load.values()))
    # Regular completion: left = senders + receiver copies, right = receivers +
    # sender copies; mirror edges between the copies, dummies to fill up.
    weight: dict[tuple[tuple[str, str], tuple[str, str]], Fraction] = {}
    for (u, v), w in loads.items():
        weight[("s", u), ("r", v)] = w
        weight[("rc", v), ("sc", u)] = w
    for u, w in out_load.items():
        if w < delta:
            weight[("s", u), ("sc", u)] = delta - w
    for v, w in in_load.items():
        if w < delta:
            weight[("rc", v), ("r", v)] = delta - w
    adjacency: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for a, b in weight:
        adjacency[a].append(b)
    left = list(adjacency)
    match_of_right: dict[tuple[str, str], tuple[str, str]] = {}
    match_of_left: dict[tuple[str, str], tuple[str, str]] = {}

    def augment(root: tuple[str, str]) -> bool:
        # Iterative DFS for an augmenting path from a free left vertex.
        parent: dict[tuple[str, str], tuple[str, str]] = {}
        stack = [(root, iter(adjacency[root]))]
        seen: set[tuple[str, str]] = set()
        while stack:
            a, it = stack[-1]
            advanced = False
            for b in it:
                if b in seen or (a, b) not in weight:
                    continue
                seen.add(b)
                parent[b] = a
                nxt = match_of_right.get(b)
                if nxt is None:
                    # Flip the path.
                    while True:
                        a_ = parent[b]
                        prev = match_of_left.get(a_)
                        match_of_left[a_] = b
                        match_of_right[b] = a_
                        if a_ == root:
                            return True
                        b = prev  # type: ignore[assignment]
                stack.append((nxt, iter(adjacency[nxt])))
                advanced = True
                break
            if not advanced:
                stack.pop()
        return False

    matchings: list[tuple[Fraction, list[tuple[NodeId, NodeId]]]] = []
    remaining_real = len(loads)
    while remaining_real:
        if deadline is not None:
            deadline.check(_PHASE)
        for a in left:
            if a not in match_of_left and not augment(a):
                raise AssertionError("no perfect matching in a regular bipartite graph")
        pairs = list(match_of_left.items())
        step = min(weight[a, b] for a, b in pairs)
        real = [(a[1], b[1]) for a, b in pairs if a[0] == "s" and b[0] == "r"]
        if real:
            matchings.append((step, real))
        for a, b in pairs:
            weight[a, b] -= step
            if weight[a, b] == 0:
                del weight[a, b]
                del match_of_left[a]
                del match_of_right[b]
                adjacency[a].remove(b)
                if a[0] == "s" and b[0] == "r":
                    remaining_real -= 1
    return matchings
