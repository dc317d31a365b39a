"""Liu, Kuo and Wang (2007): reduction in the sender-time model.

Slowest node first with earliest-possible scheduling (EP, Fig. 2) and the
destination assignment of Lemma 1; exact reductions by the two-class DP
``T(f, s)`` with its monotone pruning (section 5.3), the k-class DP
(Theorem 6) and branch and bound (section 6.2); fastest-node-first
broadcast and the all-reduce of section 5.2.

=============  =============================================================
module         content
=============  =============================================================
``model``      sender-time detection, EP, reduction trees, schedules
``dp``         ``T(f, s)`` (naive, s-monotone, monotone), k-class DP
``search``     SNF-guided and generic branch and bound over EP sequences
``broadcast``  fastest node first
``planners``   the ``snf``, ``optimal`` and ``fnf`` planners
=============  =============================================================
"""

from portsim.planners.snf.broadcast import fastest_node_first
from portsim.planners.snf.dp import (
    MultiClassTable,
    TwoClassTable,
    balanced_tree,
    multi_class_table,
    naive_pair_count,
    two_class_table,
)
from portsim.planners.snf.model import (
    CriticalPathTree,
    ReductionTree,
    Transmission,
    earliest_possible,
    earliest_possible_makespan,
    reduction_schedule,
    sender_times,
    tree_from_critical_path,
)
from portsim.planners.snf.planners import (
    FNF_PLANNER,
    OPTIMAL_METHODS,
    OPTIMAL_PLANNER,
    SNF_PLANNER,
    InstanceTooLarge,
    fastest_node_first_broadcast,
    optimal_reduction,
    optimal_reduction_tree,
    slowest_node_first,
    slowest_node_first_plan,
)
from portsim.planners.snf.search import (
    SearchResult,
    branch_and_bound,
    generic_branch_and_bound,
    search_tree_size,
)

__all__ = [
    "FNF_PLANNER",
    "OPTIMAL_METHODS",
    "OPTIMAL_PLANNER",
    "SNF_PLANNER",
    "CriticalPathTree",
    "InstanceTooLarge",
    "MultiClassTable",
    "ReductionTree",
    "SearchResult",
    "Transmission",
    "TwoClassTable",
    "balanced_tree",
    "branch_and_bound",
    "earliest_possible",
    "earliest_possible_makespan",
    "fastest_node_first",
    "fastest_node_first_broadcast",
    "generic_branch_and_bound",
    "multi_class_table",
    "naive_pair_count",
    "optimal_reduction",
    "optimal_reduction_tree",
    "reduction_schedule",
    "search_tree_size",
    "sender_times",
    "slowest_node_first",
    "slowest_node_first_plan",
    "tree_from_critical_path",
    "two_class_table",
]
