"""Canon–Antoniu reduction trees: ``greedy`` (Algorithms 1–3), ``fibonacci``, ``binomial``.

Source: L.-C. Canon and G. Antoniu, *Scheduling Associative Reductions with
Homogeneous Costs when Overlapping Communications and Computations*, INRIA
RR-7898, 2012 (``papers/canon-antoniu-2012-associative-reductions-overlap.txt``).

The model (section 3): ``n`` machines each hold one element; a transfer
between any two machines takes ``d``, one reduction takes ``c``; transfers
overlap computations; a machine takes part in one transfer at a time (the
unidirectional one-port model).  A schedule is a reduction tree: every
machine reduces what it receives with its own element, in arrival order, then
sends the result to its *child* ``c_i``; the sink keeps the result.

Modules:

- ``_model``, the abstract model: :func:`greedy_tree` (Algorithm 1 with a heap in
  Θ(n log n); Algorithm 2 with ``concurrent_transfers``; Algorithm 3 with
  ``reducers``), :func:`strategy_tree` (the binomial and Fibonacci strategies
  of section 7.3), :func:`tree_length` (transfer times of Proposition 3 with
  port queueing), :func:`canon_antoniu_bounds` (Lemma 5, Propositions 6 and
  8, Corollary 11), :func:`interval_labels` (section 4.1);
- ``_placement``: a tree placed on a portsim platform and timed exactly with
  :class:`portsim.planners.timing.PortClock` (:func:`tree_schedule`);
- ``_planners``: the ``greedy``, ``fibonacci`` and ``binomial`` planners.

Paper text resolved here (and tested in ``tests/test_trees.py``):

- Proposition 2/3 write "t_i^j is the j-th *largest* transfer time"; the proof
  (``f_i^1 = t_i^1 + d + c``) needs the j-th *smallest*.
- Algorithm 2, line 14 writes ``t_i <- t_n - t_i + c``; with ``n = 2`` that
  makes a leaf wait ``c`` before sending its own element.  The forward start
  of the transfer whose reversed completion is ``t_i`` is ``t_n - t_i``
  (and ``t_{i-K}`` is 0 when ``i - K < 2``, not "for ``i >= n``").
- Proposition 8 as printed, ``(floor(log2 K + 1) + ceil(n/K - 2)) (d + c)``,
  fails when ``K`` is not a power of two (see :class:`Bounds`).
"""

from portsim.planners.trees._model import (
    Bounds,
    ReductionTree,
    Strategy,
    canon_antoniu_bounds,
    greedy_tree,
    interval_labels,
    sink_positions,
    strategy_tree,
    tree_length,
)
from portsim.planners.trees._placement import tree_schedule
from portsim.planners.trees._planners import (
    BINOMIAL_PLANNER,
    FIBONACCI_PLANNER,
    GREEDY_PLANNER,
    TREE_OPERATIONS,
    binomial_reduction,
    fibonacci_reduction,
    greedy_reduction,
)

__all__ = [
    "BINOMIAL_PLANNER",
    "FIBONACCI_PLANNER",
    "GREEDY_PLANNER",
    "TREE_OPERATIONS",
    "Bounds",
    "ReductionTree",
    "Strategy",
    "binomial_reduction",
    "canon_antoniu_bounds",
    "fibonacci_reduction",
    "greedy_reduction",
    "greedy_tree",
    "interval_labels",
    "sink_positions",
    "strategy_tree",
    "tree_length",
    "tree_schedule",
]
