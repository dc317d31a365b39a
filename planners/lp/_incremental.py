"""One incremental float master for the ``lp`` column generations.

A column generation solves its master program many times, each time with a
few more columns.  Rebuilding the program (exact ``Fraction`` rows, sparse
matrices, a new HiGHS object) and solving it from scratch every round costs
more than the pricing on fabrics (measured on two DGX-A100 servers,
allgather: 18 s of 29 s in rebuilding the master over 48 rounds).
:class:`IncrementalMaster` keeps the program in one ``highspy.Highs``
object: the rows are declared once, each new column is appended with
``addCol``, and every run starts from the last optimal basis (the new
columns enter it as nonbasic at zero, so the old vertex stays primal
feasible and the primal simplex resumes from there).

Floats drive the generation only: every caller then solves its final
master exactly (:func:`portsim.planners.lp._exact.recover`) and prices it
exactly, so the certified bounds do not depend on this object.

The program is a maximisation ``max c·x`` subject to ``lower <= A x <=
upper``, ``x >= 0``; duals are returned in maximisation form (``c <= A^T y``
at an optimum, ``y = -row_dual`` of HiGHS's minimisation), those of the
``<=`` rows (``lower = -inf``) clipped at 0 (they are ``>= 0`` up to
round-off).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import highspy
import numpy as np

from portsim.planners.lp._solve import new_highs

__all__ = ["IncrementalMaster", "MasterPoint"]


@dataclass(frozen=True)
class MasterPoint:
    """The outcome of one :meth:`IncrementalMaster.solve`.

    Attributes
    ----------
    status:
        ``"optimal"``, ``"time_limit"`` or HiGHS's status text otherwise.
    value:
        The optimum (maximisation form; 0 unless optimal).
    duals:
        One dual per row in maximisation form, ``<=`` rows clipped at 0
        (empty unless optimal).
    """

    status: str
    value: float
    duals: np.ndarray


class IncrementalMaster:
    """A maximisation program in one HiGHS object, columns added as they are found.

    Parameters
    ----------
    lower, upper:
        The rows' bounds (``-inf`` below for a ``<=`` row, equal bounds for
        an ``==`` row); the rows start empty.
    settings:
        HiGHS options set once (e.g. ``{"solver": "simplex", "presolve": "off"}``).

    Examples
    --------
    ``max x0 + x1`` under ``x0 + 2 x1 <= 4`` and ``3 x0 + x1 <= 6``:

    >>> m = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    >>> m.add_column(1.0, [0, 1], [1.0, 3.0])
    0
    >>> round(m.solve(None).value, 9)
    2.0
    >>> m.add_column(1.0, [0, 1], [2.0, 1.0])
    1
    >>> p = m.solve(None)
    >>> round(p.value, 9), [round(float(y), 9) for y in p.duals]
    (2.8, [0.4, 0.2])
    """

    def __init__(self, lower: Sequence[float] | np.ndarray, upper: Sequence[float] | np.ndarray,
                 settings: Mapping[str, bool | int | float | str]) -> None:
        h = new_highs()
        for key, value in settings.items():
            h.setOptionValue(key, value)
        low = np.asarray(lower, dtype=float)
        high = np.asarray(upper, dtype=float)
        low = np.where(np.isneginf(low), -highspy.kHighsInf, low)
        high = np.where(np.isposinf(high), highspy.kHighsInf, high)
        h.addRows(len(low), low, high, 0, np.zeros(0, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        self.h = h
        self._clip = np.asarray(low <= -highspy.kHighsInf, dtype=bool)
        """Rows whose dual is clipped at 0 (the ``<=`` rows)."""
        self.n_columns = 0
        """Columns added so far."""

    def add_column(self, cost: float, rows: Sequence[int] | np.ndarray,
                   values: Sequence[float] | np.ndarray) -> int:
        """Append a column ``x >= 0`` of objective ``cost``; return its index.

        (HiGHS minimises ``-c·x``: the column goes in with cost ``-cost``.)
        """
        idx = np.asarray(rows, dtype=np.int32)
        self.h.addCol(-float(cost), 0.0, highspy.kHighsInf, len(idx), idx,
                      np.asarray(values, dtype=np.float64))
        self.n_columns += 1
        return self.n_columns - 1

    def add_rows(self, lower: Sequence[float] | np.ndarray, upper: Sequence[float] | np.ndarray,
                 entries: Sequence[tuple[Sequence[int], Sequence[float]]]) -> int:
        """Append rows over the existing columns; return the index of the first.

        ``entries[r]`` is (columns, values) of row ``r``.  HiGHS keeps the
        last basis (the new rows' slacks enter it), so a row that the last
        solution satisfies lets the primal simplex resume from there.
        """
        low = np.asarray(lower, dtype=float)
        high = np.asarray(upper, dtype=float)
        first = self.h.getNumRow()
        if not len(low):
            return first
        low = np.where(np.isneginf(low), -highspy.kHighsInf, low)
        high = np.where(np.isposinf(high), highspy.kHighsInf, high)
        starts = np.cumsum([0] + [len(cols) for cols, _ in entries[:-1]]).astype(np.int32)
        index = np.asarray([c for cols, _ in entries for c in cols], dtype=np.int32)
        values = np.asarray([v for _, vals in entries for v in vals], dtype=np.float64)
        self.h.addRows(len(low), low, high, len(index), starts, index, values)
        self._clip = np.concatenate([self._clip, low <= -highspy.kHighsInf])
        return first

    def solve(self, time_limit: float | None) -> MasterPoint:
        """Run HiGHS from the last basis, within ``time_limit`` seconds (``None``: none)."""
        if time_limit is not None:  # HiGHS's clock runs on across the runs of one object
            self.h.setOptionValue("time_limit",
                                  self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        status = self.h.getModelStatus()
        ms = highspy.HighsModelStatus
        if status == ms.kTimeLimit:
            return MasterPoint("time_limit", 0.0, np.zeros(0))
        if status != ms.kOptimal:
            return MasterPoint(self.h.modelStatusToString(status), 0.0, np.zeros(0))
        y = -np.asarray(self.h.getSolution().row_dual, dtype=float)
        y = np.where(self._clip, np.maximum(y, 0), y)
        return MasterPoint("optimal", -float(self.h.getInfo().objective_function_value), y)

    def values(self) -> np.ndarray:
        """The columns' values in the last solution."""
        return np.asarray(self.h.getSolution().col_value, dtype=float)

    def basis(self) -> tuple[list[int], list[int]]:
        """Basic columns and basic rows of the last solution (for an exact recovery)."""
        basis = self.h.getBasis()
        basic = highspy.HighsBasisStatus.kBasic
        return ([c for c, st in enumerate(basis.col_status) if st == basic],
                [r for r, st in enumerate(basis.row_status) if st == basic])

    def used(self) -> list[int]:
        """Columns with a positive value, or basic, in the last solution."""
        x = self.h.getSolution().col_value
        basis = self.h.getBasis()
        basic = highspy.HighsBasisStatus.kBasic
        return [c for c, (v, st) in enumerate(zip(x, basis.col_status, strict=True))
                if v > 0 or st == basic]
