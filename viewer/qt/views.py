"""The tree tabs of the main window: side-by-side panes and the merged diff tree.

The flat table ("By cost centre") is :mod:`viewer.qt.flat_view`.

Each view takes a :class:`~viewer.compare.Comparison` through ``set_comparison`` and
talks to the window by union-row ids only (``rowSelected(int)``, ``select_row(int)``),
so views never hold a Python object per row and any view (the flame graph, a heap plot)
can be wired to any other.
"""

from __future__ import annotations

import html
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison
from profdiff.viewer.row_key import as_key
from profdiff.viewer.run_labels import labels_of

from . import bulk_ops
from .cell_delegate import CellDelegate
from .column_sizing import (
    ElideLeftDelegate,
    indentation_for,
    label_width,
    numeric_width,
    widest_rows,
)
from .layout import RowLayout, path_to_max
from .models import Column, ComparisonTreeModel, diff_columns, pane_columns
from .pane_widths import ColumnWidths
from .row_painter import RowPainter
from .table_pane import TablePane
from .whole_widths import WholeWidths
from .widgets import DropOverlay, LegendWidget, run_role

FIRST_LOOK_ROWS = 5000
"""Automatic expansion when a comparison is first shown stops at this many shown rows
(every shown row costs ~10 us of Python in each relayout; the hottest path is opened on
top of it)."""


def local_files(mime) -> list[str]:
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class TreePane(ColumnWidths, QTreeView):
    """A QTreeView tuned for big lazy models; accepts file drops when ``drop_text`` is set."""

    filesDropped = Signal(list)
    shown = Signal()  # after each show (a hidden tab's view catches up on deferred work)

    def __init__(self, parent=None, drop_text: str = "") -> None:
        super().__init__(parent)
        self.setUniformRowHeights(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAllColumnsShowFocus(True)
        self.setExpandsOnDoubleClick(True)
        self.setIndentation(14)
        self.header().setStretchLastSection(False)
        self.header().setSectionsMovable(True)
        self.header().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.header().setSortIndicatorShown(True)
        self.drop_text = drop_text
        self.setAcceptDrops(bool(drop_text))
        self.viewport().setAcceptDrops(bool(drop_text))
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly if drop_text
                             else QAbstractItemView.DragDropMode.NoDragDrop)
        self._overlay = DropOverlay(self)
        self._scroll_pending: QPersistentModelIndex | None = None
        self._geometry_stale = False
        # column widths (column_sizing): measured content per column, the columns the
        # user sized by dragging (kept), and a guard telling our resizes from theirs
        self.user_sized: set[int] = set()
        self.content_widths: dict[int, int] = {}
        self._head_widths: dict[int, int] | None = None
        self._sizing = 0
        self._rows: RowPainter | None = None  # set while a paint event draws the rows
        self._after_paint = None  # called once after the next paint (after_next_paint)
        self._cells = CellDelegate(self)  # every other column: one model call per cell
        self.setItemDelegate(self._cells)
        self._elide_names = ElideLeftDelegate(self)
        self._elide_modules = ElideLeftDelegate(self, names=False)
        self.header().sectionResized.connect(self._section_resized)

    def scroll_to_when_shown(self, idx: QModelIndex) -> None:
        """``scrollTo(idx)`` now if shown, else when first shown: scrolling a hidden view
        would force its whole (pending) layout for nothing."""
        if self.isVisible():
            self._scroll_pending = None
            self.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)
        else:
            self._scroll_pending = QPersistentModelIndex(idx)

    def set_current(self, idx: QModelIndex) -> None:
        """Make ``idx``'s row current and selected.

        On a hidden pane without the full relayout Qt would do: with all columns showing
        the focus, ``QTreeView.currentChanged`` computes the old and new rows' rectangles,
        which lays out every shown row first (~1 s at 70k shown rows, through the Python
        model) for a view nobody sees; it is laid out once when shown instead."""
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        quiet = not self.isVisible() and self.allColumnsShowFocus()
        if quiet:
            self.setAllColumnsShowFocus(False)
        try:
            self.selectionModel().setCurrentIndex(idx, flags)
        finally:
            if quiet:
                self.setAllColumnsShowFocus(True)

    def updateGeometries(self) -> None:  # noqa: N802 - Qt API
        """Skipped while hidden: Qt calls it on every resize (a window shown or resized
        resizes every tab page) and QTreeView's version lays out all shown rows for its
        scroll bars - for a hidden tab, seconds of Python model calls for nothing.  Done
        on the next show instead."""
        if self.isVisible():
            self._geometry_stale = False
            super().updateGeometries()
            self._place_scroll_bar()
        else:
            self._geometry_stale = True

    def _place_scroll_bar(self) -> None:
        """Show or hide the vertical scroll bar now when the new range needs it: Qt does it
        from a queued call, so the rows just laid out would be painted at the old
        viewport width and then again (the columns re-fitted) once the bar appears."""
        bar = self.verticalScrollBar()
        if self.verticalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAsNeeded:
            return
        if bar.isVisibleTo(self) != (bar.maximum() > bar.minimum()):
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)  # relayout

    @property
    def geometry_stale(self) -> bool:
        """True while a geometry pass skipped when hidden is owed (done on show)."""
        return self._geometry_stale

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if self._geometry_stale:
            self._geometry_stale = False
            super().updateGeometries()
        super().showEvent(ev)
        p, self._scroll_pending = self._scroll_pending, None
        if p is not None and p.isValid() and p.model() is self.model():
            self.scrollTo(self.model().index(p.row(), p.column(), p.parent()),
                          QAbstractItemView.ScrollHint.EnsureVisible)
        self.shown.emit()

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt API
        """Fill the model's cells of the rows about to be painted in one pass first: a
        paint after a sort, filter or expand finds none cached, and the rows of one
        screen come from many sibling lists (one vectorised fill instead of one per
        list, :meth:`~.models.ComparisonTreeModel.fill_cells`)."""
        m = self.model_()
        if m is not None:
            rows = self.rows_in(ev.rect().top(), ev.rect().bottom())
            edges = m.layout.edges
            if edges and (wide := [edges[r] for r in rows if r in edges]):
                # the last shown child of a wide parent is on screen: show the next ones
                QTimer.singleShot(0, lambda m=m, ps=wide: self._show_more(m, ps))
            if rows:
                m.prefill(rows)
        self._rows = RowPainter.for_paint(self, m, ev.rect().left(), ev.rect().right())
        try:
            super().paintEvent(ev)
        finally:
            self._rows = None
        then, self._after_paint = self._after_paint, None
        if then is not None:
            QTimer.singleShot(0, then)

    def after_next_paint(self, fn) -> None:
        """Call ``fn`` from the event loop once this pane has next painted (work the
        first picture does not need: :mod:`.whole_widths`); None: nothing."""
        self._after_paint = fn

    def _show_more(self, m: ComparisonTreeModel, parents: list[int]) -> None:
        if self.model_() is m:  # not replaced since the paint
            m.show_more_of(parents)

    def drawRow(self, painter, option, index) -> None:  # noqa: N802 - Qt API
        """Ordinary rows in one Python call (:mod:`.row_painter`), the rest by Qt."""
        rows = self._rows
        if rows is None or not rows.draw_row(painter, option, index):
            super().drawRow(painter, option, index)

    def rows_in(self, top: int, bottom: int) -> list[int]:
        """Row ids shown between viewport heights ``top`` and ``bottom``, top first."""
        idx = self.indexAt(QPoint(0, max(top, 0)))
        if not idx.isValid():
            return []
        h = max(self.rowHeight(idx), 1)
        out = []
        for _ in range((bottom - top) // h + 2):
            if not idx.isValid():
                break
            out.append(idx.internalId())
            idx = self.indexBelow(idx)
        return out

    # Enter / Space toggle expansion (arrows come with QTreeView)
    def keyPressEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if ev.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            idx = self.currentIndex()
            if idx.isValid():
                idx = idx.siblingAtColumn(0)
                self.setExpanded(idx, not self.isExpanded(idx))
                return
        super().keyPressEvent(ev)

    def dragEnterEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if self.drop_text and local_files(ev.mimeData()):
            ev.acceptProposedAction()
            self._overlay.show_over(self, self.drop_text)
        else:
            ev.ignore()

    def dragMoveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if self.drop_text and local_files(ev.mimeData()):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dragLeaveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self._overlay.hide()

    def dropEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self._overlay.hide()
        files = local_files(ev.mimeData())
        if self.drop_text and files:
            ev.acceptProposedAction()
            self.filesDropped.emit(files)
        else:
            ev.ignore()

    def model_(self) -> ComparisonTreeModel | None:
        m = self.model()
        return m if isinstance(m, ComparisonTreeModel) else None

    def expand_indexes(self, indexes) -> None:
        """Expand many indexes with one relayout, without ``expanded`` signals.

        While a layout is pending, ``QTreeView.expand`` only records the index; expanding
        one by one on a laid-out view instead inserts each child list into the view's row
        table (quadratic in the shown rows) and calls into Python for every signal.
        """
        if not indexes:
            return
        self.scheduleDelayedItemsLayout()
        blocked = self.blockSignals(True)
        try:
            expand = self.expand
            for idx in indexes:
                if idx.isValid():
                    expand(idx)
        finally:
            self.blockSignals(blocked)
        if self.isVisible():
            # laid out now rather than from inside the next paint: a scroll bar the new
            # rows need then appears before that paint (:meth:`_place_scroll_bar`), which
            # would otherwise draw the rows at the old viewport width and be done again
            self.executeDelayedItemsLayout()


def _width_key(c: Column) -> tuple[str, str | None, str]:
    """A column's identity across column rebuilds: its spec and header (base/new/Δ of one
    metric differ by header; a pane's run does not matter, its header is the same)."""
    return (c.kind, c.metric, c.header)


def column_widths(view: QTreeView) -> dict[tuple[str, str | None, str], int]:
    """The widths the user set on ``view``'s columns by :func:`_width_key` (read them
    before ``set_columns`` and give them to :func:`fit_columns` to keep them); columns
    sized automatically are measured again instead."""
    m = view.model()
    if not isinstance(m, ComparisonTreeModel):
        return {}
    h = view.header()
    user = getattr(view, "user_sized", None)
    return {_width_key(c): h.sectionSize(i) for i, c in enumerate(m.columns)
            if i < h.count() and h.sectionSize(i) > 0 and (user is None or i in user)}


def fit_columns(view: QTreeView, name_width: int | None = None,
                keep: dict[tuple[str, str | None, str], int] | None = None,
                measure_now: bool = True, whole: bool = True) -> None:
    """Initial widths of new columns (:mod:`viewer.qt.column_sizing`): numbers to their
    widest value, labels to the widest root row, headers unclipped.

    ``keep`` (from :func:`column_widths`): widths the user set on columns that existed
    before the columns were rebuilt - they survive toggling metrics or the % mode.
    ``name_width`` is ignored (kept for callers; the name column is sized to content).
    ``measure_now`` false: the widths are reset, the caller measures the roots later.
    ``whole`` false: numbers fit the roots only (a big comparison's first paint; its
    whole columns are read after it, :mod:`.whole_widths`).
    """
    m = view.model()
    if not isinstance(m, ComparisonTreeModel):
        return
    view.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    if not isinstance(view, TreePane | TablePane):
        return
    view.reset_widths()
    keep = keep or {}
    for i, c in enumerate(m.columns):
        kept = keep.get(_width_key(c))
        if kept:
            view.set_user_width(i, kept)
    if measure_now:
        view.grow_content(measure(view, m, m.layout.children(-1), whole=whole))


def measure(view: TreePane | TablePane, m: ComparisonTreeModel, shown: np.ndarray,
            depth: np.ndarray | None = None, whole: bool = True) -> dict[int, int]:
    """Content widths of every column of ``view`` over the ``shown`` rows: numbers over
    their candidate rows (``whole`` false: of the whole column only those read
    already), labels over the rows with the longest texts (the tree column with the
    indentation of ``depth``)."""
    shown = np.asarray(shown, dtype=np.int64)
    indent = view.indentation() / max(view.fontMetrics().averageCharWidth(), 1)
    out: dict[int, int] = {}
    numeric = [i for i, c in enumerate(m.columns)
               if c.kind not in ("name", "module", "src", "status")]
    # with ``whole``, a number column is measured over its whole column's candidates,
    # which bound any rows' values: the shown rows' own add nothing (on 10^6 rows,
    # gathering and ranking the values of the ~9k rows an expansion shows cost ~8 ms)
    by_rows = shown if shown.size and not whole else None
    values = dict(zip(numeric, m.columns_at(numeric, by_rows), strict=True)) \
        if by_rows is not None else {}
    for i, c in enumerate(m.columns):
        if c.kind in ("name", "module", "src"):
            d = depth if i == 0 else None
            rows = widest_rows(m.column_at(i, shown), shown, None if d is None else d * indent)
            out[i] = label_width(view, m, i, rows, d)
        elif c.kind == "status":
            out[i] = label_width(view, m, i, shown[:200], None)
        else:
            out[i] = numeric_width(view, m, i, by_rows, values.get(i), whole)
    return out


class _TreeState:
    """Expansion bookkeeping shared by tree views (QTreeView cannot list expanded rows)."""

    def __init__(self) -> None:
        self.expanded: np.ndarray = np.zeros(0, dtype=bool)

    def reset(self, n: int) -> None:
        self.expanded = np.zeros(n, dtype=bool)


def hottest_path(layout: RowLayout, key: np.ndarray) -> list[int]:
    """Rows from a root down a leaf, always taking the visible child with the largest key."""
    path: list[int] = []
    p = -1
    key = as_key(key)  # read at each level's children only
    while True:
        ch = layout.children(p)
        if ch.size == 0 or layout.flat and p >= 0:
            break
        # NaN as -inf on the children only (a 10^6-row nan_to_num per call cost ~10 ms)
        best = int(ch[np.argmax(np.nan_to_num(key[ch], nan=-np.inf))])
        path.append(best)
        p = best
        if len(path) > 10_000:
            break
    return path


class _TreeViewMixin(WholeWidths):
    """Expansion / selection helpers over one or more synchronised TreePanes."""

    panes: list[TreePane]
    models: list[ComparisonTreeModel]
    cmp: Comparison | None
    layout_: RowLayout | None

    def _init_state(self) -> None:
        self.state = _TreeState()
        self._syncing = False
        # (comparison, weakly: a replaced one is not kept for it; rows shown while hidden)
        self._measure_later: tuple | None = None

    def _watch_shown(self) -> None:
        """Measure what was shown while hidden when a pane is next shown."""
        for p in self.panes:
            p.shown.connect(self._measure_deferred)

    def _measure_deferred(self) -> None:
        later, self._measure_later = self._measure_later, None
        if later is None or later[0]() is not self.cmp or self.layout_ is None:
            return  # nothing owed, or owed for a comparison since replaced
        rows = later[1]
        if self.layout_.visible is not None:
            rows = rows[self.layout_.visible[rows]]
        self._grow_columns(rows)

    def _measure_windows_of(self, m: ComparisonTreeModel) -> None:
        """Measure what a wide parent's window shows later: the rows a "show more" adds,
        and the other children a sort or filter puts in the window (an expansion
        measures only the window it shows, :meth:`RowLayout.shown_children`)."""
        m.rowsInserted.connect(lambda p, first, last: self._more_shown(m, p, first, last))
        m.layoutChanged.connect(lambda *_a: self._windows_moved(m))

    def _more_shown(self, m: ComparisonTreeModel, parent: QModelIndex, first: int,
                    last: int) -> None:
        if self._syncing or not self.models or m is not self.models[0]:
            return  # an expansion measures its rows itself; one model speaks for all
        p = int(parent.internalId()) if parent.isValid() else -1
        self._grow_columns(m.layout.children(p)[first:last + 1])

    def _windows_moved(self, m: ComparisonTreeModel) -> None:
        if self.layout_ is None or not self.layout_.any_wide or not self.models \
                or m is not self.models[0]:
            return  # (no wide parent: no window to measure, no pass over the rows)
        rows = self.layout_.shown_children(np.append(self.expanded_rows(), -1), wide_only=True)
        if rows.size:
            self._grow_columns(rows)

    def expand_rows(self, rows) -> None:
        """Expand ``rows`` (and their ancestors) in every pane."""
        if self.layout_ is None:
            return
        rows = np.asarray(rows, dtype=np.int64).ravel()
        rows = rows[(rows >= 0) & (rows < self.layout_.n)]
        if rows.size == 0:
            return
        want = self._with_ancestors(rows) & ~self.state.expanded
        new = np.flatnonzero(want)
        self._expand_in_panes(new)
        self.state.expanded[new] = True
        self._grow_columns(self._children_shown(new))

    def _with_ancestors(self, rows: np.ndarray) -> np.ndarray:
        """Mask of ``rows`` and all their ancestors (one numpy step per tree level)."""
        par = self.cmp.parent
        mask = np.zeros(self.layout_.n, dtype=bool)
        todo = np.unique(rows)
        while todo.size:
            todo = todo[~mask[todo]]
            mask[todo] = True
            todo = par[todo]
            todo = todo[todo >= 0]
        return mask

    def _expand_in_panes(self, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        # the relayout reads the child lists of every expanded row: sort them in one pass
        self.layout_.prefetch(rows)
        self._syncing = True
        try:
            for pane, m in zip(self.panes, self.models, strict=True):
                pane.expand_indexes(m.indexes_for_rows(rows))
        finally:
            self._syncing = False

    def fit_name_column(self, cap: int | None = None, rows=None) -> None:
        """Size the columns to what the shown rows need (:mod:`.column_sizing`): never
        narrower than before, the name column within what the viewport leaves.

        ``rows``: measure only these rows (e.g. a path just opened); otherwise every
        shown row is a candidate (the widest picked with numpy, not by
        ``sizeHintForColumn``'s calls into the model).  ``cap`` is ignored: the
        viewport's width is the cap now."""
        if self.cmp is None or self.layout_ is None:
            return
        if rows is None:  # the roots and what the expanded rows show (O(shown rows))
            rows = self.layout_.shown_children(np.append(self.expanded_rows(), -1))
        self._grow_columns(np.asarray(rows, dtype=np.int64))

    def _grow_columns(self, shown: np.ndarray) -> None:
        """Measure ``shown`` in every pane and give all panes the widest needs (the two
        side-by-side panes show the same columns, so they keep the same widths)."""
        panes = [p for p in self.panes if p.model_() is not None]
        if not panes or shown.size == 0:
            return
        if not self.layout_.flat:  # deep trees indent less, so deep names keep room
            deepest = int(self.cmp.depth[shown].max())
            self._deepest = max(getattr(self, "_deepest", 0), deepest)
            ind = indentation_for(self._deepest)
            for p in panes:
                if p.indentation() != ind:
                    p.setIndentation(ind)
        if not any(p.isVisible() for p in panes):
            # a hidden tab (filter, select, expand acting on every view): its columns are
            # measured when it is next shown, over every row shown meanwhile
            later = self._measure_later
            if later is not None and later[0]() is self.cmp:
                shown = np.union1d(later[1], shown)
            self._measure_later = (weakref.ref(self.cmp), shown)
            return
        need: dict[int, int] = {}
        whole = self.whole_widths_known()
        for p in panes:
            for i, w in measure(p, p.model_(), shown, self.cmp.depth, whole).items():
                need[i] = max(need.get(i, 0), w)
        for p in panes:
            p.grow_content(need)

    def _children_shown(self, rows: np.ndarray) -> np.ndarray:
        """The children expanding ``rows`` shows (of a wide parent, its window)."""
        if rows.size == 0 or self.layout_ is None or self.layout_.flat:
            return rows[:0]
        return np.sort(self.layout_.shown_children(rows))

    def _expanded_by_user(self, row: int) -> None:
        """A row opened by a click: its children may need wider columns."""
        if self.cmp is not None and 0 <= row < self.cmp.n_rows:
            self._grow_columns(self._children_shown(np.array([row], dtype=np.int64)))

    def expanded_rows(self) -> np.ndarray:
        return np.flatnonzero(self.state.expanded)

    def collapse_all(self) -> None:
        for p in self.panes:
            bulk_ops.collapse_quietly(p)
        self.state.expanded[:] = False

    def expand_to_depth(self, depth: int, max_rows: int | None = None) -> None:
        """Expand every visible row shallower than ``depth`` levels (depth 1 = roots open)
        and collapse the deeper ones, like ``QTreeView.expandToDepth`` - whose per-row
        layout is quadratic in the shown rows, so the expansion is batched here instead.

        ``max_rows``: open a level only while the tree then shows at most that many rows
        (the first look at a file: a root with 32k children opened one level further
        would lay out 67k rows through the Python model, ~1 s, to show 40 of them)."""
        if self.cmp is None or depth <= 0:
            return
        mask = bulk_ops.depth_mask(self.cmp.parent, self.cmp.depth,
                                   np.frombuffer(self.layout_.has_kids(), dtype=np.uint8) > 0,
                                   depth, self.layout_.visible, max_rows,
                                   self.cmp.children_offsets_ids)
        if self.state.expanded.any():  # Qt's collapseAll lays out even a closed tree
            self.collapse_all()
        self._expand_in_panes(np.flatnonzero(mask))
        self.state.expanded |= mask
        self.fit_name_column()

    def expand_hottest(self, key: np.ndarray, to_max: bool = False) -> int:
        """Expand along the largest ``key`` from the root; select and return the last row.

        ``to_max``: instead go down to the row whose own ``key`` is the largest of the tree
        (the path to the biggest self change).
        """
        return self.open_hottest(key, to_max, select=True)

    def open_hottest(self, key: np.ndarray, to_max: bool = False, select: bool = False) -> int:
        """Open the rows along :meth:`hottest_path` and return its last row (-1: none);
        ``select``: make that row current (not on a single run's opening: the user has
        chosen no row yet)."""
        path = self.hottest_path(key, to_max)
        if not path:
            return -1
        self.expand_rows(path[:-1])
        if select:
            self.select_row(path[-1])
        self.fit_name_column(rows=path)
        return path[-1]

    def hottest_path(self, key: np.ndarray, to_max: bool = False) -> list[int]:
        """The rows :meth:`expand_hottest` opens and selects, without touching the view."""
        if self.layout_ is None:
            return []
        return path_to_max(self.layout_, key) if to_max else hottest_path(self.layout_, key)

    def select_row(self, row: int) -> None:
        """Make ``row`` current in every pane (expanding its ancestors) and scroll to it."""
        if self.layout_ is None or not self.layout_.is_visible(row):
            return
        anc = self.layout_.ancestors(row)[:-1]
        if anc:
            self.expand_rows(anc[-1:])
        for pane, m in zip(self.panes, self.models, strict=True):
            idx = m.index_for_row(row)
            if not idx.isValid():
                continue
            self._syncing = True
            try:
                pane.set_current(idx)
                pane.scroll_to_when_shown(idx)
            finally:
                self._syncing = False

    @contextmanager
    def _keep_place(self) -> Iterator[None]:
        """Around a replacement of the panes' columns (a model reset, after which Qt
        forgets every expanded row and the current one): the rows open before are open
        again after it, the current row is current again and the scroll is where it was.

        Why: turning the significance column on collapsed the diff tree to its root,
        while the view still counted the rows as open (later expansions skipped them)."""
        current, scroll = self.current_row(), self.scroll_value()
        yield
        if self.layout_ is None:
            return
        was_open = np.flatnonzero(self.state.expanded)
        self.state.expanded[:] = False
        self.expand_rows(was_open)
        if current >= 0:
            self.select_row(current)
        self.set_scroll_value(scroll)

    def current_row(self) -> int:
        if not self.panes or self.models == []:
            return -1
        idx = self.panes[0].currentIndex()
        return int(idx.internalId()) if idx.isValid() else -1

    def scroll_value(self) -> int:
        return self.panes[0].verticalScrollBar().value() if self.panes else 0

    def set_scroll_value(self, v: int) -> None:
        for p in self.panes:
            p.verticalScrollBar().setValue(v)

    focus_keep: np.ndarray | None = None
    """Rows of the focused subtree (:mod:`viewer.qt.row_menu`), None: no focus."""
    outer_keep: np.ndarray | None = None
    """The window's row rules as last given to :meth:`apply_filter` (before the focus)."""

    def set_focus_keep(self, mask: np.ndarray | None) -> None:
        """Show only ``mask``'s rows (a subtree; their ancestors stay as its path), within
        the filter and row rules last applied; None shows every row again."""
        self.focus_keep = mask
        if self.layout_ is not None:
            self.apply_filter(self.layout_.filter_text, self.layout_.filter_regex,
                              self.outer_keep)

    def apply_filter(self, text: str, regex: bool, keep: np.ndarray | None) -> None:
        if self.layout_ is None:
            return
        self.outer_keep = keep
        focus = self.focus_keep
        if focus is not None and len(focus) == self.layout_.n:
            keep = focus if keep is None else keep & focus
        self.layout_.set_filter(text, regex, keep)
        # rows hidden by the filter lose their expansion in Qt; re-open what is still shown
        keep_open = self.state.expanded.copy()
        if self.layout_.visible is not None:
            keep_open &= self.layout_.visible
        if text and self.layout_.matched is not None and not self.layout_.flat:
            # open the ancestors of the first matches so they are visible at once
            hits = np.flatnonzero(self.layout_.matched)[:200]
            par = self.cmp.parent[hits]
            keep_open[par[par >= 0]] = True
        self.state.expanded[:] = False
        self.expand_rows(np.flatnonzero(keep_open))

    def set_scale(self, scale: DivergingScale) -> None:
        for m in self.models:
            m.set_scale(scale)
        for p in self.panes:
            p.viewport().update()

    def sort_by_key(self, key: np.ndarray | None, descending: bool = True) -> None:
        """Order siblings by ``key`` (e.g. the larger inherited cost of the two runs)."""
        if self.layout_ is None:
            return
        for p in self.panes:
            h = p.header()
            h.blockSignals(True)
            h.setSortIndicator(-1, Qt.SortOrder.DescendingOrder)
            h.blockSignals(False)
        self.layout_.set_sort(key, descending)


class _PaneTitle(QLabel):
    """A pane's title; a double-click asks to rename the run it shows."""

    doubleClicked = Signal()

    def mouseDoubleClickEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.doubleClicked.emit()
        ev.accept()


class SideBySideView(QWidget, _TreeViewMixin):
    """Baseline | current panes over one union tree; everything in one pane mirrors the other."""

    rowSelected = Signal(int)
    filesDropped = Signal(int, list)  # run slot (0 = baseline, 1 = current), paths
    paneRunChanged = Signal(int, int)  # pane slot, run shown
    renameRequested = Signal(int)  # run index: the user double-clicked its pane title

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._init_state()
        self.cmp: Comparison | None = None
        self.layout_: RowLayout | None = None
        self.models: list[ComparisonTreeModel] = []
        self._metrics: list[str] = []
        self._scale: DivergingScale | None = None
        self.pane_runs: list[int] = [0, 1]  # run shown by each pane
        self._pane_choice: list[str | None] = [None, None]  # path the user picked per pane
        self.run_combos: list[QComboBox] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("sideBySideSplitter")
        lay.addWidget(self.splitter)
        self.panes = []
        self.titles: list[QLabel] = []
        for slot, text in enumerate(("Drop the BASELINE profile here",
                                     "Drop the CURRENT profile here")):
            box = QWidget()
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            bl.setSpacing(2)
            title = _PaneTitle()
            title.setObjectName("paneTitle")
            title.setToolTip("Double-click to name this run (shown in every view)")
            title.doubleClicked.connect(lambda s=slot: self._rename(s))
            title.setContentsMargins(6, 2, 6, 2)
            combo = QComboBox()
            combo.setObjectName(f"paneRun{slot}")
            combo.setToolTip("Which run this pane shows (with three or more runs)")
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(lambda i, s=slot: self._combo_changed(s, i))
            combo.hide()
            head = QHBoxLayout()
            head.setContentsMargins(0, 0, 4, 0)
            head.addWidget(title, 1)
            head.addWidget(combo)
            pane = TreePane(drop_text=text)
            pane.setObjectName(f"pane{slot}")
            pane.filesDropped.connect(lambda files, s=slot: self.filesDropped.emit(s, files))
            bl.addLayout(head)
            bl.addWidget(pane)
            self.run_combos.append(combo)
            self.splitter.addWidget(box)
            self.panes.append(pane)
            self.titles.append(title)
        self._wire()

    def _rename(self, slot: int) -> None:
        if self.cmp is not None and self.pane_runs[slot] < self.cmp.n_runs:
            self.renameRequested.emit(self.pane_runs[slot])

    def _wire(self) -> None:
        a, b = self.panes
        self._watch_shown()
        for src, dst in ((a, b), (b, a)):
            src.expanded.connect(lambda idx, d=dst: self._mirror_expand(idx, d, True))
            src.collapsed.connect(lambda idx, d=dst: self._mirror_expand(idx, d, False))
            src.verticalScrollBar().valueChanged.connect(
                lambda v, d=dst: self._mirror_scroll(v, d))
            src.header().sectionResized.connect(
                lambda i, _o, w, s=src, d=dst: self._mirror_resize(i, w, s, d))

    def _mirror_expand(self, idx: QModelIndex, dst: TreePane, on: bool) -> None:
        if not idx.isValid():
            return
        rid = int(idx.internalId())
        if rid < len(self.state.expanded):
            self.state.expanded[rid] = on
        if self._syncing:
            return
        if on:
            self._expanded_by_user(rid)
        m = dst.model_()
        if m is None:
            return
        self._syncing = True
        try:
            dst.setExpanded(m.index_for_row(rid), on)
        finally:
            self._syncing = False

    def _mirror_scroll(self, v: int, dst: TreePane) -> None:
        if dst.verticalScrollBar().value() != v:
            dst.verticalScrollBar().setValue(v)

    def _mirror_resize(self, i: int, w: int, src: TreePane, dst: TreePane) -> None:
        if self._syncing or src.auto_sizing:
            return  # automatic widths are given to both panes by _grow_columns
        self._syncing = True
        try:
            if dst.header().sectionSize(i) != w:
                dst.header().resizeSection(i, w)
        finally:
            self._syncing = False

    def _mirror_current(self, cur: QModelIndex, src: TreePane) -> None:
        if not cur.isValid():
            return
        rid = int(cur.internalId())
        if not self._syncing:
            self._syncing = True
            try:
                for p in self.panes:
                    if p is src:
                        continue
                    m = p.model_()
                    idx = m.index_for_row(rid, cur.column()) if m else QModelIndex()
                    if idx.isValid():
                        p.set_current(idx)
            finally:
                self._syncing = False
        self.rowSelected.emit(rid)

    def _mirror_sort(self, col: int, order, dst: TreePane) -> None:
        h = dst.header()
        h.blockSignals(True)
        h.setSortIndicator(col, order)
        h.blockSignals(False)
        h.viewport().update()

    def set_comparison(self, cmp: Comparison, metrics: list[str],
                       scale: DivergingScale | None = None) -> None:
        self.cmp = cmp
        self.layout_ = RowLayout(cmp)
        self.state.reset(cmp.n_rows)
        self.focus_keep = self.outer_keep = None  # row ids of another comparison
        self._deepest = 0
        self._metrics = list(metrics)
        self._scale = scale
        self.defer_whole_widths()
        self.pane_runs = [self._default_run(slot) for slot in (0, 1)]
        old = self.models
        self.models = [self._make_model(slot, self.pane_runs[slot]) for slot in (0, 1)]
        for slot in (0, 1):
            self._install(slot, self.models[slot])
        single = cmp.n_runs == 1
        self.panes[1].parentWidget().setVisible(not single)
        self._fill_combos()
        for m in old:
            m.deleteLater()

    def _default_run(self, slot: int) -> int:
        """The run a pane shows: the one picked in its combo (by path, so it survives a
        re-alignment or a new baseline), else the baseline (left) / current run (right)."""
        cmp = self.cmp
        want = self._pane_choice[slot]
        if want is not None and cmp.n_runs >= 3:
            for i, p in enumerate(cmp.runs):
                if p.path == want:
                    return i
        return cmp.baseline if slot == 0 else cmp.current

    def _make_model(self, slot: int, run: int) -> ComparisonTreeModel:
        cmp = self.cmp
        return ComparisonTreeModel(cmp, pane_columns(cmp, self._metrics, run), pane_run=run,
                                   layout=self.layout_, scale=self._scale, parent=self)

    def _install(self, slot: int, m: ComparisonTreeModel) -> None:
        pane = self.panes[slot]
        self._measure_windows_of(m)
        old = pane.model_()
        same = old is not None and [_width_key(c) for c in old.columns] == \
            [_width_key(c) for c in m.columns]
        user = {i: pane.header().sectionSize(i) for i in pane.user_sized} if same else {}
        content = dict(pane.content_widths) if same else {}
        pane.setSortingEnabled(False)
        pane.setModel(m)
        pane.header().setSortIndicator(-1, Qt.SortOrder.DescendingOrder)
        pane.setSortingEnabled(True)
        if same:  # another run in the same columns: same widths, re-measured values
            pane.reset_widths()
            for i, w in user.items():
                pane.set_user_width(i, w)
            pane.grow_content(content)
            pane.grow_content(measure(pane, m, m.layout.children(-1)))
        elif self.isVisible():
            fit_columns(pane, whole=self.whole_widths_known())
        else:  # a hidden tab: its roots are measured when it is next shown
            fit_columns(pane, measure_now=False)
            roots = np.asarray(m.layout.children(-1), dtype=np.int64)
            later = self._measure_later
            if later is not None and later[0]() is self.cmp:
                roots = np.union1d(later[1], roots)
            self._measure_later = (weakref.ref(self.cmp), roots)
        pane.selectionModel().currentChanged.connect(
            lambda cur, _prev, p=pane: self._mirror_current(cur, p))
        m.sortApplied.connect(lambda c, o, d=self.panes[1 - slot]: self._mirror_sort(c, o, d))
        self._set_title(slot)

    def _set_title(self, slot: int) -> None:
        cmp = self.cmp
        run = self.pane_runs[slot]
        p = cmp.runs[run]
        label = f"<b>{run_role(cmp, run).upper() if cmp.n_runs > 1 else 'RUN'}</b> " \
                f"[{run}] {html.escape(labels_of(cmp)[run])}"
        if cmp.groups is not None:
            label += f" <i>(mean of {len(cmp.groups[slot])} runs)</i>"
        if p.incomplete:
            label += " <b style='color:#b35806'>INCOMPLETE</b>"
        self.titles[slot].setText(label)

    def _fill_combos(self) -> None:
        cmp = self.cmp
        many = cmp.n_runs >= 3 and cmp.groups is None
        for slot, combo in enumerate(self.run_combos):
            combo.blockSignals(True)
            combo.clear()
            if many:
                for i, label in enumerate(labels_of(cmp)):
                    role = " (baseline)" if i == cmp.baseline else ""
                    combo.addItem(f"[{i}] {label}{role}", i)
                combo.setCurrentIndex(self.pane_runs[slot])
            combo.blockSignals(False)
            combo.setVisible(many)

    def _combo_changed(self, slot: int, i: int) -> None:
        if self.cmp is None or i < 0:
            return
        self._pane_choice[slot] = self.cmp.runs[i].path
        self.set_pane_run(slot, i)

    def forget_pane_choice(self, new_baseline_path: str | None = None) -> None:
        """The baseline changed: the left pane follows it again, and a right pane that
        showed the new baseline goes back to the current run."""
        self._pane_choice[0] = None
        if new_baseline_path is not None and self._pane_choice[1] == new_baseline_path:
            self._pane_choice[1] = None

    def set_pane_run(self, slot: int, run: int) -> None:
        """Show run ``run`` in pane ``slot`` (0 = left, 1 = right), keeping the expansion,
        selection and scroll position (rows stay aligned: both panes share one layout)."""
        cmp = self.cmp
        if cmp is None or not 0 <= run < cmp.n_runs or run == self.pane_runs[slot]:
            return
        cur = self.current_row()
        scroll = self.scroll_value()
        self.pane_runs[slot] = run
        old = self.models[slot]
        m = self._make_model(slot, run)
        self.models[slot] = m
        self._install(slot, m)
        pane = self.panes[slot]
        pane.expand_indexes(m.indexes_for_rows(np.flatnonzero(self.state.expanded)))
        if cur >= 0:
            self.select_row(cur)
        self.set_scroll_value(scroll)
        combo = self.run_combos[slot]
        if combo.currentIndex() != run and combo.count() > run:
            combo.blockSignals(True)
            combo.setCurrentIndex(run)
            combo.blockSignals(False)
        old.deleteLater()
        self.paneRunChanged.emit(slot, run)

    def set_metrics(self, metrics: list[str]) -> None:
        if self.cmp is None:
            return
        self._metrics = list(metrics)
        keep = [column_widths(p) for p in self.panes]
        with self._keep_place():
            self._syncing = True  # both panes get their own kept widths: no mirroring
            try:
                for m, run in zip(self.models, self.pane_runs, strict=True):
                    m.set_columns(pane_columns(self.cmp, metrics, run))
                for p, k in zip(self.panes, keep, strict=True):
                    fit_columns(p, 220, k)
            finally:
                self._syncing = False
        self.fit_name_column()


class DiffTreeView(QWidget, _TreeViewMixin):
    """One merged tree: per metric base, new, Δ, Δ% with diverging colours and a legend."""

    rowSelected = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._init_state()
        self.cmp: Comparison | None = None
        self.layout_: RowLayout | None = None
        self.models = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.legend = LegendWidget()
        self.tree = TreePane()
        self.tree.setObjectName("diffTree")
        self.panes = [self.tree]
        lay.addWidget(self.legend)
        lay.addWidget(self.tree)
        self.tree.expanded.connect(lambda i: self._track(i, True))
        self.tree.collapsed.connect(lambda i: self._track(i, False))
        self._watch_shown()
        self.icons: dict[int, object] = {}
        self.sig_metric: str | None = None  # metric of the significance column (None: off)
        self.fade_noise = True
        self._metrics: list[str] = []

    def _track(self, idx: QModelIndex, on: bool) -> None:
        rid = int(idx.internalId())
        if rid < len(self.state.expanded):
            self.state.expanded[rid] = on
        if on and not self._syncing:
            self._expanded_by_user(rid)

    def set_comparison(self, cmp: Comparison, metrics: list[str],
                       scale: DivergingScale | None = None) -> None:
        self.cmp = cmp
        self.layout_ = RowLayout(cmp)
        self.state.reset(cmp.n_rows)
        self.focus_keep = self.outer_keep = None  # row ids of another comparison
        self._deepest = 0
        self._metrics = list(metrics)
        m = ComparisonTreeModel(cmp, diff_columns(cmp, metrics, sig=self.sig_metric), None,
                                self.layout_, scale, parent=self)
        m.icons = self.icons
        m.fade_noise = self.fade_noise
        self._measure_windows_of(m)
        old = self.models
        self.models = [m]
        self.tree.setSortingEnabled(False)
        self.tree.setModel(m)
        self.tree.header().setSortIndicator(-1, Qt.SortOrder.DescendingOrder)
        self.tree.setSortingEnabled(True)
        self.defer_whole_widths()
        fit_columns(self.tree, 280, whole=self.whole_widths_known())
        self.tree.selectionModel().currentChanged.connect(self._current)
        if scale is not None:
            self.legend.set_scale(scale)
        self.legend.setVisible(cmp.n_runs > 1)
        for o in old:
            o.deleteLater()

    def set_metrics(self, metrics: list[str]) -> None:
        if self.cmp is None:
            return
        self._metrics = list(metrics)
        keep = column_widths(self.tree)
        with self._keep_place():
            self.models[0].set_columns(diff_columns(self.cmp, metrics, sig=self.sig_metric))
            fit_columns(self.tree, 280, keep)
        self.fit_name_column()

    def set_sig_metric(self, metric: str | None) -> None:
        """Show (``metric``) or hide (None) the significance column."""
        if metric == self.sig_metric:
            return
        self.sig_metric = metric
        if self.cmp is not None:
            keep = column_widths(self.tree)
            with self._keep_place():
                self.models[0].set_columns(diff_columns(self.cmp, self._metrics, sig=metric))
                fit_columns(self.tree, 280, keep)
            self.fit_name_column()

    def set_fade_noise(self, on: bool) -> None:
        self.fade_noise = on
        for m in self.models:
            m.set_fade_noise(on)
        self.tree.viewport().update()

    def noise_changed(self) -> None:
        for m in self.models:
            m.noise_changed()
        self.tree.viewport().update()

    def _current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if cur.isValid() and not self._syncing:
            self.rowSelected.emit(int(cur.internalId()))

    def set_scale(self, scale: DivergingScale) -> None:
        super().set_scale(scale)
        self.legend.set_scale(scale)
