"""Whole-column widths of a big comparison, read after its first paint.

A numeric column is sized to its widest value anywhere in the column (the rows of its
largest and smallest magnitudes, :meth:`.models.ComparisonTreeModel.width_candidates`),
so that opening more rows later never makes a column jump.  On 10^6 rows reading those
extremes of every value, Δ and Δ% column takes ~140 ms: a quarter of the app's time from
the alignment to the first paint of the 100 MB ``.prof`` pair (issue 23), spent on rows
nobody sees yet.

So a big comparison's first measure sizes the columns to the rows it shows (every shown
value fits), and once a pane has painted them the whole columns are read one per turn
of the event loop (a turn is ~10 ms: the window stays responsive) and the columns are
widened once if a row not shown yet needs more room.  A small comparison (at most
:data:`.column_sizing.EXTREMES_ONLY` rows) reads its columns at once: it is cheap and
nothing moves.  ``--screenshot`` grabs the first paint, as the window first looks.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from .column_sizing import EXTREMES_ONLY, numeric_width

if TYPE_CHECKING:
    from profdiff.viewer.compare import Comparison

    from .views import TreePane


class WholeWidths:
    """The view side (mixed into the tree views): ``cmp`` and ``panes`` are the view's."""

    cmp: Comparison | None
    panes: list[TreePane]
    _whole_owed: weakref.ref | None = None  # the comparison whose columns are owed
    _whole_todo: list | None = None  # (model, column) still to read

    def defer_whole_widths(self) -> None:
        """A new comparison: if big, its first measures size to the shown rows only
        (:meth:`whole_widths_known` false) and the whole columns are read after a pane's
        next paint (:meth:`settle_widths`)."""
        cmp = self.cmp
        self._whole_todo = None  # (its models would keep a replaced comparison alive)
        if cmp is None or cmp.n_rows <= EXTREMES_ONLY:
            self._whole_owed = None
            return
        self._whole_owed = weakref.ref(cmp)
        for p in self.panes:
            p.after_next_paint(self.settle_widths)

    def whole_widths_known(self) -> bool:
        """False while the current comparison's whole columns are owed: measures size
        to the rows they are given (and the columns read so far)."""
        owed = self._whole_owed
        return owed is None or owed() is not self.cmp

    def settle_widths(self) -> None:
        """Read one owed column's extremes, and come back on the next turn of the event
        loop; when all are read, widen every pane's columns to what they need."""
        if self.whole_widths_known():
            self._whole_owed = self._whole_todo = None
            return
        if not any(p.isVisible() for p in self.panes):
            for p in self.panes:  # a tab switched away from, a closed window: on show
                p.after_next_paint(self.settle_widths)
            return
        if self._whole_todo is None:  # the first turn: the other panes' calls are not needed
            for p in self.panes:
                p.after_next_paint(None)
            self._whole_todo = [(p.model_(), i) for p in self.panes if p.model_() is not None
                                for i in _sized_by_value(p.model_())]
        todo = self._whole_todo
        while todo and not any(p.model_() is todo[0][0] for p in self.panes):
            todo.pop(0)  # a model replaced meanwhile (another run in a pane)
        if todo:
            m, i = todo.pop(0)
            if i < len(m.columns):  # (columns rebuilt meanwhile: measured at once then)
                m.width_candidates(i)
            QTimer.singleShot(0, self.settle_widths)
            return
        self._whole_owed = self._whole_todo = None
        panes = [p for p in self.panes if p.model_() is not None]
        need: dict[int, int] = {}
        for p in panes:
            for i in _sized_by_value(p.model_()):
                need[i] = max(need.get(i, 0), numeric_width(p, p.model_(), i, None))
        for p in panes:
            p.grow_content(need)


def _sized_by_value(model) -> list[int]:
    """The columns of ``model`` whose widths come from their values (numbers, p-values)."""
    return [i for i, c in enumerate(model.columns) if c.numeric or c.kind == "sig"]
