"""The pane of the flat tables ("By cost centre", "Allocated types"): a QTableView that
looks and behaves like the tree panes (:class:`~.views.TreePane`).

Why not a tree pane: on every sort or filter QTreeView lays out all of its rows again,
one ``index()`` and one ``hasChildren()`` call per row through the Python binding (~185 ms
at 20,000 rows, on every click on a header).  A QTableView with a fixed row height (its
hidden vertical header in ``ResizeMode.Fixed``) asks the model only for the cells on
screen, so its sort, filter and selection cost the same at 10^3 or 10^6 rows.

What makes it look like a tree pane: no grid, no row header, the tree's row height (the
first row's size hint, as ``uniformRowHeights`` gives), the same header (movable sections
but the first, centred bold titles, no section highlighting), per-pixel horizontal
scrolling, the same item delegates (:class:`~.cell_delegate.CellDelegate`: heat shading,
faded noise; names elided on the left, :class:`~.column_sizing.ElideLeftDelegate`), and
the same column sizing (:func:`~.views.fit_columns`).  Keys as in a tree: Up/Down/PgUp/
PgDn/Home/End move between rows, Left/Right scroll sideways, Tab leaves the table.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
)
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyleOptionFocusRect,
    QStyleOptionViewItem,
    QTableView,
)

from .cell_delegate import CellDelegate
from .column_sizing import ElideLeftDelegate
from .models import ComparisonTreeModel
from .pane_widths import ColumnWidths

_MOVE = QAbstractItemView.CursorAction
_SWALLOWED_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
_HAS_FOCUS = QStyle.StateFlag.State_HasFocus
_POS = QStyleOptionViewItem.ViewItemPosition


class _RowCells:
    """A cell's style option as a tree pane's row gives it: its place in the row
    (beginning / middle / end: some styles draw a row's selection as one piece) and no
    focus frame of its own (the tree frames the whole current row instead, drawn by
    :meth:`TablePane.paintEvent`).  A few attribute reads per cell: the focus flag is
    cleared on the current cell only (flag arithmetic on Qt enums runs in Python)."""

    def __init__(self, pane: TablePane, *args, **kwargs) -> None:
        super().__init__(pane, *args, **kwargs)  # type: ignore[call-arg]
        self.pane = pane

    def initStyleOption(self, option, index) -> None:  # noqa: N802 - Qt API
        super().initStyleOption(option, index)  # type: ignore[misc]
        pane = self.pane
        col = index.column()
        option.viewItemPosition = pane.item_position(col)
        focus = pane.focus_cell
        if focus is not None and focus[1] == col and focus[0] == index.row():
            option.state &= ~_HAS_FOCUS


class _Cells(_RowCells, CellDelegate):
    pass


class _Names(_RowCells, ElideLeftDelegate):
    pass


class TablePane(ColumnWidths, QTableView):
    """A QTableView over a flat :class:`ComparisonTreeModel`, dressed as a tree pane."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.setCornerButtonEnabled(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setDragDropMode(QAbstractItemView.DragDropMode.NoDragDrop)
        self.setAcceptDrops(False)  # files dropped here go to the window
        self.viewport().setAcceptDrops(False)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        h = self.horizontalHeader()
        h.setStretchLastSection(False)
        h.setSectionsMovable(True)
        h.setFirstSectionMovable(False)
        h.setHighlightSections(False)
        h.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        h.setSortIndicatorShown(True)
        self._scroll_pending: QPersistentModelIndex | None = None
        # column widths, as a tree pane sizes them (see TreePane): the measured content
        # per column, the columns the user sized by dragging, our resizes told from theirs
        self.user_sized: set[int] = set()
        self.content_widths: dict[int, int] = {}
        self._head_widths: dict[int, int] | None = None
        self._sizing = 0
        self._cells = _Cells(self)
        self.setItemDelegate(self._cells)
        self._elide_names = _Names(self)
        self._elide_modules = _Names(self, names=False)
        self._positions: dict[int, QStyleOptionViewItem.ViewItemPosition] | None = None
        self.focus_cell: tuple[int, int] | None = None  # (row, column) while painted
        h.sectionResized.connect(self._section_resized)
        h.sectionMoved.connect(self._forget_positions)
        h.sectionCountChanged.connect(self._forget_positions)

    # ----- what the tree panes' callers ask of a pane -----------------------------------
    def header(self) -> QHeaderView:
        """The column header (a tree view's name for it; ``horizontalHeader()``)."""
        return self.horizontalHeader()

    def indentation(self) -> int:
        """No tree column: nothing is indented (read by the column sizing)."""
        return 0

    def rootIsDecorated(self) -> bool:  # noqa: N802 - the QTreeView name
        """No branch decorations (read by the column sizing)."""
        return False

    def model_(self) -> ComparisonTreeModel | None:
        m = self.model()
        return m if isinstance(m, ComparisonTreeModel) else None

    def setModel(self, model) -> None:  # noqa: N802 - Qt API
        super().setModel(model)
        self._forget_positions()
        if model is not None:  # new columns: the first / last one may be others
            model.modelReset.connect(self._forget_positions)
        self.fit_row_height()

    def lay_out_now(self) -> None:
        """Do the layout a model change left pending (scroll bars, header) now: from its
        timer it would repaint every cell again after a paint already pending (the tab
        just shown, the rows just filtered)."""
        self.executeDelayedItemsLayout()

    def set_current(self, idx: QModelIndex) -> None:
        """Make ``idx``'s row current and selected."""
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        self.selectionModel().setCurrentIndex(idx, flags)

    def scroll_to_when_shown(self, idx: QModelIndex) -> None:
        """``scrollTo(idx)`` now if shown, else when first shown (a hidden view's
        viewport has no size yet to scroll within)."""
        if self.isVisible():
            self._scroll_pending = None
            self.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)
        else:
            self._scroll_pending = QPersistentModelIndex(idx)

    # ----- rows -------------------------------------------------------------------------
    def fit_row_height(self) -> None:
        """Every row as high as the first row's tallest cell, like a tree pane with
        uniform row heights (the rows are never measured one by one)."""
        self.ensurePolished()
        m = self.model()
        hint = 0
        if m is not None and m.rowCount() > 0:
            hint = max((self.sizeHintForIndex(m.index(0, c)).height()
                        for c in range(m.columnCount())), default=0)
        if hint <= 0:
            hint = self.fontMetrics().height() + 4
        rows = self.verticalHeader()
        if rows.defaultSectionSize() == hint:
            return
        # signals held: the header reports every row as resized (10^4 signals) and the
        # table would answer with a repaint from a timer, after the one already pending
        blocked = rows.blockSignals(True)
        try:
            if rows.minimumSectionSize() > hint:
                rows.setMinimumSectionSize(hint)
            rows.setDefaultSectionSize(hint)
        finally:
            rows.blockSignals(blocked)
        self.updateGeometries()
        self.viewport().update()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt API
        super().scrollContentsBy(dx, dy)
        if dy:
            self._top_row_at_top()

    def updateGeometries(self) -> None:  # noqa: N802 - Qt API
        super().updateGeometries()
        self._top_row_at_top()

    def _top_row_at_top(self) -> None:
        """Scrolled to the end, the top row still starts at the top edge, as in a tree
        pane (a table would put the last row on the bottom edge and cut the top row)."""
        bar = self.verticalScrollBar()
        if self.verticalScrollMode() != QAbstractItemView.ScrollMode.ScrollPerItem \
                or bar.maximum() <= 0 or bar.value() != bar.maximum():
            return
        rows = self.verticalHeader()
        want = rows.sectionPosition(rows.logicalIndex(bar.value()))
        if rows.offset() != want:
            rows.setOffset(want)
            self.viewport().update()

    def changeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().changeEvent(ev)
        if ev.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.fit_row_height()

    def rows_in(self, top: int, bottom: int) -> list[int]:
        """Row ids shown between viewport heights ``top`` and ``bottom``, top first."""
        m = self.model()
        if m is None or m.rowCount() == 0:
            return []
        first = self.rowAt(max(top, 0))
        if first < 0:
            return []
        last = self.rowAt(bottom)
        if last < 0:
            last = m.rowCount() - 1
        return [m.index(r, 0).internalId() for r in range(first, last + 1)]

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt API
        """Fill the model's cells of the rows about to be painted in one pass first (as
        a tree pane does: a paint after a sort or filter finds none cached); then frame
        the current row as a whole, as QTreeView does with all columns showing focus."""
        m = self.model_()
        if m is not None:
            rows = self.rows_in(ev.rect().top(), ev.rect().bottom())
            if rows:
                m.prefill(rows)
        cur = self.currentIndex()
        focused = cur.isValid() and (self.hasFocus() or self.viewport().hasFocus())
        self.focus_cell = (cur.row(), cur.column()) if focused else None
        try:
            super().paintEvent(ev)
        finally:
            self.focus_cell = None
        if focused:
            self._paint_row_focus(cur)

    def currentChanged(self, current, previous) -> None:  # noqa: N802 - Qt API
        """The whole rows repainted, not only the two cells: the focus frame spans the
        row (a move of the current row without a change of selection left its sides)."""
        super().currentChanged(current, previous)
        vp = self.viewport()
        for idx in (previous, current):
            if idx.isValid():
                vp.update(QRect(0, self.rowViewportPosition(idx.row()), vp.width(),
                                self.rowHeight(idx.row())))

    def _paint_row_focus(self, cur: QModelIndex) -> None:
        h = self.header()
        top = self.rowViewportPosition(cur.row())
        height = self.rowHeight(cur.row())
        if top + height < 0 or top > self.viewport().height():
            return
        o = QStyleOptionFocusRect()
        o.initFrom(self)
        o.state |= QStyle.StateFlag.State_KeyboardFocusChange
        group = QPalette.ColorGroup.Normal if self.isEnabled() else QPalette.ColorGroup.Disabled
        selected = self.selectionModel().isSelected(cur)
        o.backgroundColor = self.palette().color(
            group, QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Window)
        o.rect = self.style().visualRect(self.layoutDirection(), self.viewport().rect(),
                                         QRect(-h.offset(), top, h.length(), height))
        p = QPainter(self.viewport())
        try:
            self.style().drawPrimitive(QStyle.PrimitiveElement.PE_FrameFocusRect, o, p)
        finally:
            p.end()

    def item_position(self, col: int) -> QStyleOptionViewItem.ViewItemPosition:
        """Where column ``col`` is in a row: beginning, middle, end (or the only one)."""
        pos = self._positions
        if pos is None:
            h = self.header()
            shown = [h.logicalIndex(v) for v in range(h.count())]
            shown = [c for c in shown if not h.isSectionHidden(c)]
            pos = {c: _POS.Middle for c in shown}
            if len(shown) == 1:
                pos[shown[0]] = _POS.OnlyOne
            elif shown:
                pos[shown[0]], pos[shown[-1]] = _POS.Beginning, _POS.End
            self._positions = pos
        return pos.get(col, _POS.Invalid)

    def _forget_positions(self, *_args) -> None:
        self._positions = None

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().showEvent(ev)
        p, self._scroll_pending = self._scroll_pending, None
        if p is not None and p.isValid() and p.model() is self.model():
            self.scrollTo(self.model().index(p.row(), p.column()),
                          QAbstractItemView.ScrollHint.EnsureVisible)

    # ----- keys, as in a tree pane ------------------------------------------------------
    def keyPressEvent(self, ev) -> None:  # noqa: N802 - Qt API
        """Enter / Space open or close a tree row; a table row has nothing to open."""
        if ev.key() in _SWALLOWED_KEYS and self.currentIndex().isValid():
            ev.accept()
            return
        super().keyPressEvent(ev)

    def moveCursor(self, action, modifiers) -> QModelIndex:  # noqa: N802 - Qt API
        """Home / End go to the first / last row and Left / Right scroll sideways, as in
        a tree pane (a table's own go to the first / last column and move the current
        cell, which with whole rows selected only looks like nothing happened)."""
        cur = self.currentIndex()
        if action in (_MOVE.MoveLeft, _MOVE.MoveRight):
            bar = self.horizontalScrollBar()
            step = bar.singleStep() if action == _MOVE.MoveRight else -bar.singleStep()
            bar.setValue(bar.value() + step)
            return cur
        m = self.model()
        if action in (_MOVE.MoveHome, _MOVE.MoveEnd) and m is not None and m.rowCount():
            row = 0 if action == _MOVE.MoveHome else m.rowCount() - 1
            return m.index(row, max(cur.column(), 0))
        return super().moveCursor(action, modifiers)

