"""Items: the data that schedules move and combine.

Grammar (SPEC.md, schedule file):

- ``m[k]``: a scatter message for target node ``k`` (also the piece that node
  ``k`` contributes to a gather or an all-gather);
- ``m[j,k]``: an all-to-all message from node ``j`` to node ``k``;
- ``b``: the broadcast message;
- ``v[k,m]``: the partial reduction of participants ``k..m`` (indexes into the
  ordered participant list), a non-commutative product ``v_k ⊕ ... ⊕ v_m``;
- ``v{0,2,5}``: for a commutative reduction, the reduction of any set of
  participants;
- a suffix ``#t`` names the operation instance (default ``#0``).

Indexes and instance numbers are written without a leading zero (``v[01,2]``
and ``#01`` are refused: they would be second spellings of ``v[1,2]`` and ``#1``).

An :class:`Item` is the symbolic value itself: the engine checks every
reduction by combining the symbols, so swapped operands or a skipped
participant cannot go unnoticed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from portsim.simulator.errors import ScheduleError

__all__ = ["Item", "combine", "parse_item"]

_ID = r"[A-Za-z0-9_.-]+"
_ITEM_RE = re.compile(
    rf"""^(?:
        (?P<b>b)
      | m\[\s*(?P<m1>{_ID})\s*(?:,\s*(?P<m2>{_ID})\s*)?\]
      | v\[\s*(?P<lo>\d+)\s*,\s*(?P<hi>\d+)\s*\]
      | v\{{(?P<set>\s*\d+\s*(?:,\s*\d+\s*)*)\}}
    )(?:\#(?P<inst>\d+))?$""",
    # ASCII: ``\d`` would also take other scripts' digits ("b#\u0661" read as b#1).
    re.VERBOSE | re.ASCII,
)
_MAX_DIGITS = 18
"""Digits of an index or instance number (numbers in files stay below 10^18)."""
_DIGITS_RE = re.compile(r"\d+", re.ASCII)


@dataclass(frozen=True, slots=True)
class Item:
    """A symbolic item.

    Attributes
    ----------
    kind:
        ``"m"`` (message), ``"b"`` (broadcast message) or ``"v"`` (partial reduction).
    args:
        ``m``: one or two node ids; ``b``: empty; ``v``: ``(lo, hi)`` for an
        ordered interval, or the sorted participant indexes of a set.
    ordered:
        ``True`` for ``v[k,m]`` (non-commutative interval), ``False`` for ``v{...}``.
    instance:
        The operation instance (suffix ``#t``).
    """

    kind: str
    args: tuple = ()
    ordered: bool = True
    instance: int = 0

    # -- constructors ---------------------------------------------------------

    @staticmethod
    def message(*nodes: str, instance: int = 0) -> Item:
        """``m[k]`` or ``m[j,k]``."""
        return Item("m", tuple(nodes), True, instance)

    @staticmethod
    def broadcast(instance: int = 0) -> Item:
        """``b``."""
        return Item("b", (), True, instance)

    @staticmethod
    def interval(lo: int, hi: int, instance: int = 0) -> Item:
        """``v[lo,hi]``: the ordered product of participants lo..hi."""
        return Item("v", (lo, hi), True, instance)

    @staticmethod
    def subset(indexes: Sequence[int], instance: int = 0) -> Item:
        """``v{...}``: the commutative reduction of a set of participants."""
        return Item("v", tuple(sorted(set(indexes))), False, instance)

    # -- views ------------------------------------------------------------------

    @property
    def is_partial_reduction(self) -> bool:
        return self.kind == "v"

    def covers(self) -> frozenset[int]:
        """Participant indexes a partial reduction covers (empty for messages)."""
        if self.kind != "v":
            return frozenset()
        if self.ordered:
            lo, hi = self.args
            return frozenset(range(lo, hi + 1))
        return frozenset(self.args)

    def as_subset(self) -> Item:
        """The commutative form of a partial reduction (``v[1,3]`` -> ``v{1,2,3}``)."""
        if self.kind != "v" or not self.ordered:
            return self
        return Item.subset(sorted(self.covers()), self.instance)

    def with_instance(self, instance: int) -> Item:
        """The same item for another operation instance."""
        # Built through the slots' own setters: a periodic schedule makes an
        # item per operation and instance slot (tens of thousands), and the
        # frozen dataclass's __init__ (object.__setattr__ per field, behind a
        # class call) takes twice as long.
        new = _new(Item)
        _set_kind(new, self.kind)
        _set_args(new, self.args)
        _set_ordered(new, self.ordered)
        _set_instance(new, instance)
        return new

    def base_name(self) -> str:
        """The name without the instance suffix."""
        if self.kind == "b":
            return "b"
        if self.kind == "m":
            return "m[" + ",".join(self.args) + "]"
        if self.ordered:
            return f"v[{self.args[0]},{self.args[1]}]"
        return "v{" + ",".join(str(i) for i in self.args) + "}"

    def __str__(self) -> str:
        name = self.base_name()
        return name if self.instance == 0 else f"{name}#{self.instance}"


_new = object.__new__
_set_kind, _set_args, _set_ordered, _set_instance = (
    Item.__dict__[name].__set__ for name in ("kind", "args", "ordered", "instance"))
"""The slots' setters of :class:`Item` (frozen: its own ``__setattr__`` refuses)."""


def parse_item(text: object, *, path: str | None = None) -> Item:
    """Parse an item name such as ``"v[0,3]#2"``.

    Raises
    ------
    ScheduleError
        When ``text`` is not an item name of the grammar above (an index or
        instance number with a leading zero, ``v[01,2]`` or ``b#01``, included).

    Examples
    --------
    >>> str(parse_item("v[0, 1]#3"))
    'v[0,1]#3'
    >>> parse_item("m[P0]").args
    ('P0',)
    """
    if isinstance(text, Item):
        return text
    if not isinstance(text, str):
        raise ScheduleError("an item name must be a string", path=path, value=text)
    match = _ITEM_RE.match(text.strip())
    if match is None:
        raise ScheduleError(
            "not an item name (expected b, m[k], m[j,k], v[k,m] or v{i,j,...}, "
            "optionally with #t)",
            path=path,
            value=text,
        )
    numbers = "".join(f" {match.group(g)}" for g in ("lo", "hi", "set", "inst")
                      if match.group(g) is not None)
    if any(len(run) > _MAX_DIGITS for run in _DIGITS_RE.findall(numbers)):
        raise ScheduleError(f"an index or instance number has more than {_MAX_DIGITS} digits",
                            path=path, value=text)
    indexes_text = " ".join(match.group(g) for g in ("lo", "hi", "set")
                            if match.group(g) is not None)
    if any(len(run) > 1 and run.startswith("0") for run in _DIGITS_RE.findall(indexes_text)):
        # "v[01,2]" would be read as "v[1,2]": two spellings of one partial result
        canonical = _DIGITS_RE.sub(lambda run: str(int(run.group())), text.strip())
        raise ScheduleError(f"a reduction index has a leading zero (write {canonical})",
                            path=path, value=text)
    inst = match.group("inst")
    if inst is not None and len(inst) > 1 and inst.startswith("0"):
        # "b#01" would be read as "b#1": two spellings of one instance in a file
        raise ScheduleError(f"an instance number has a leading zero (write #{int(inst)})",
                            path=path, value=text)
    instance = int(inst or 0)
    if match.group("b"):
        return Item.broadcast(instance)
    if match.group("m1"):
        nodes = [match.group("m1")] + ([match.group("m2")] if match.group("m2") else [])
        return Item.message(*nodes, instance=instance)
    if match.group("lo") is not None:
        lo, hi = int(match.group("lo")), int(match.group("hi"))
        if lo > hi:
            raise ScheduleError("an interval v[k,m] needs k <= m", path=path, value=text)
        return Item.interval(lo, hi, instance)
    indexes = [int(x) for x in match.group("set").split(",")]
    if len(set(indexes)) != len(indexes):
        raise ScheduleError("a set v{...} lists a participant twice", path=path, value=text)
    return Item.subset(indexes, instance)


def combine(inputs: Sequence[Item], *, commutative: bool) -> Item | str:
    """Combine partial reductions as one reduction task would.

    Non-commutative: the inputs must be adjacent intervals in order,
    ``v[k,l]`` then ``v[l+1,m]``, giving ``v[k,m]``.  Commutative: the inputs
    must be disjoint sets, giving their union.

    Returns
    -------
    Item or str
        The combined item, or the reason (a sentence) why these inputs cannot
        be combined.

    Examples
    --------
    >>> str(combine([Item.interval(0, 1), Item.interval(2, 2)], commutative=False))
    'v[0,2]'
    >>> combine([Item.interval(1, 1), Item.interval(0, 0)], commutative=False)
    'operands out of order: v[1,1] comes before v[0,0]'
    """
    if len(inputs) < 2:
        return "a reduction task needs at least two inputs"
    for item in inputs:
        if item.kind != "v":
            return f"{item} is not a partial reduction"
    instances = {item.instance for item in inputs}
    if len(instances) > 1:
        return "inputs belong to different instances: " + ", ".join(str(i) for i in inputs)
    instance = inputs[0].instance
    if commutative:
        covered: set[int] = set()
        for item in inputs:
            cover = item.covers()
            if covered & cover:
                return f"inputs overlap on participants {sorted(covered & cover)}"
            covered |= cover
        return Item.subset(sorted(covered), instance)
    for item in inputs:
        if not item.ordered:
            return f"{item} is a set, but the operator is not commutative"
    for left, right in itertools.pairwise(inputs):
        lo_l, hi_l = left.args
        lo_r, hi_r = right.args
        if hi_l + 1 == lo_r:
            continue
        if hi_r < lo_l:
            return f"operands out of order: {left} comes before {right}"
        if lo_r <= hi_l:
            return f"operands overlap: {left} and {right}"
        skipped = ", ".join(str(i) for i in range(hi_l + 1, lo_r))
        return f"operands not adjacent: {left} then {right} skips participant(s) {skipped}"
    return Item.interval(inputs[0].args[0], inputs[-1].args[1], instance)
