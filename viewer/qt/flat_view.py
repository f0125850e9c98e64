"""The "By cost centre" tab: one row per cost centre (flat comparison), its call sites.

Rows open culprit first, no column sorted (:func:`viewer.ranking.culprit_key`); the
lower pane lists the call sites of the selected cost centre in the tree comparison, and
double-clicking one reveals it in the diff tree (``callSiteActivated(int)``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison
from profdiff.viewer.ranking import culprit_key

from .call_sites_model import ROW_ROLE, CallSitesModel
from .layout import RowLayout
from .models import ComparisonTreeModel, diff_columns
from .table_pane import TablePane
from .views import column_widths, fit_columns


class FlatView(QWidget):
    """Per cost centre totals over all call sites, largest real change first, with call sites."""

    revealRequested = Signal(str)  # match key of the row to find in the trees
    callSiteActivated = Signal(int)  # tree-mode union-row id
    flatRowSelected = Signal(int)  # flat-mode row id

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.cmp: Comparison | None = None
        self.tree_cmp: Comparison | None = None
        self.layout_: RowLayout | None = None
        self.model: ComparisonTreeModel | None = None
        self.main_metric: str | None = None
        self.sig_metric: str | None = None  # metric of the significance column (None: off)
        self.fade_noise = True
        self._metrics: list[str] = []
        self._code_of: tuple[Comparison, dict[str, int]] | None = None  # tree key -> code
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("flatSplitter")
        self.splitter = split
        lay.addWidget(split)
        # a table, not a tree pane: a sort or filter then costs the rows on screen only
        self.table = TablePane()
        self.table.setObjectName("flatTable")
        self.table.doubleClicked.connect(self._double)
        split.addWidget(self.table)
        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        self.sites_label = QLabel("Call sites")
        self.sites_label.setContentsMargins(6, 2, 6, 2)
        bl.addWidget(self.sites_label)
        self.sites = QTreeView()
        self.sites.setObjectName("callSites")
        self.sites.setRootIsDecorated(False)
        self.sites.setUniformRowHeights(True)
        # each column as wide as its texts: a stretched last column put the Δ far right
        self.sites.header().setStretchLastSection(False)
        # a long call path keeps its root and its last callers, the ones that tell sites apart
        self.sites.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.sites_model = CallSitesModel(self.sites)
        self.sites.setModel(self.sites_model)
        self.sites.activated.connect(self._site)
        self.sites.doubleClicked.connect(self._site)
        bl.addWidget(self.sites)
        self.sites_box = box
        split.addWidget(box)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)

    def set_comparison(self, flat: Comparison, tree: Comparison | None, metrics: list[str],
                       main_metric: str | None, scale: DivergingScale | None = None) -> None:
        self.cmp = flat
        self.tree_cmp = tree
        self.main_metric = main_metric
        self.layout_ = RowLayout(flat)
        self._metrics = list(metrics)
        cols = diff_columns(flat, metrics, status=flat.n_runs > 1, sig=self.sig_metric)
        m = ComparisonTreeModel(flat, cols, None, self.layout_, scale, parent=self)
        m.fade_noise = self.fade_noise
        m.status_by_culprit = True
        if flat.n_runs > 1:
            m.unsorted_key = lambda: culprit_key(flat)
        old = self.model
        self.model = m
        self.table.setSortingEnabled(False)
        self.table.setModel(m)
        sort_col = self.default_sort_column()
        self.table.header().setSortIndicator(sort_col, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        fit_columns(self.table, 260)
        self.table.lay_out_now()
        self.table.selectionModel().currentChanged.connect(self._current)
        self.sites_model.clear()
        # no call tree (.mem lines, callgrind functions): every row is its own only call
        # site, and the pane would stay empty under a third of the tab
        self.sites_box.setVisible(tree is None or bool((tree.parent >= 0).any()))
        if old is not None:
            old.deleteLater()

    def clear(self) -> None:
        """Show nothing: the window gives this view its next comparison when the view is
        first shown (the flat comparison is aligned only then), so nothing acts on the
        previous one meanwhile (columns, selection, saved widths)."""
        old = self.model
        self.cmp = self.tree_cmp = None
        self.layout_ = None
        self.model = None
        self.table.setModel(None)
        self.sites_model.clear()
        if old is not None:
            old.deleteLater()

    def set_metrics(self, metrics: list[str]) -> None:
        if self.cmp is None or self.model is None:
            return
        self._metrics = list(metrics)
        keep = column_widths(self.table)
        cur = self.table.currentIndex()  # a model reset forgets it: made current again
        row = int(cur.internalId()) if cur.isValid() else -1
        self.model.set_columns(diff_columns(self.cmp, metrics, status=self.cmp.n_runs > 1,
                                            sig=self.sig_metric))
        self.table.header().setSortIndicator(self.default_sort_column(),
                                             Qt.SortOrder.DescendingOrder)
        fit_columns(self.table, 260, keep)
        self.table.lay_out_now()
        if row >= 0:
            self.select_row(row)

    def set_sig_metric(self, metric: str | None) -> None:
        """Show (``metric``) or hide (None) the significance column."""
        if metric == self.sig_metric:
            return
        self.sig_metric = metric
        if self.cmp is not None and self.model is not None:
            self.set_metrics(self._metrics)  # keeps the columns' widths

    def set_fade_noise(self, on: bool) -> None:
        self.fade_noise = on
        if self.model is not None:
            self.model.set_fade_noise(on)
        self.table.viewport().update()

    def noise_changed(self) -> None:
        """The estimate judged more rows: repaint, and sorted culprit first (the status
        column), sort again by the new verdicts."""
        if self.model is not None:
            self.model.noise_changed()
            h = self.table.header()
            col = h.sortIndicatorSection()
            if not 0 <= col < len(self.model.columns) or \
                    self.model.columns[col].kind == "status":
                self.model.sort(col, h.sortIndicatorOrder())
        self.table.viewport().update()

    def default_sort_column(self) -> int:
        """-1 (no column: culprit first, as the Summary and ``profdiff diff`` list
        changes, :func:`viewer.ranking.culprit_key`) when runs are compared; with one
        run, the main metric's value (largest first); else -1.

        Why not the Δ of the main metric: sorted by Δ %time, the hs-ad pair's largest
        allocation change (evalDelta, +87 %) was off the first screen and every real
        improvement at the bottom, below rows that did not change."""
        if self.model is None or self.model.unsorted_key is not None:
            return -1
        for i, c in enumerate(self.model.columns):
            if c.kind == "value" and c.metric == self.main_metric:
                return i
        return -1

    def first_row(self) -> int:
        if self.model is None or self.model.rowCount() == 0:
            return -1
        return int(self.model.index(0, 0).internalId())

    def _current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if not cur.isValid():
            return
        r = int(cur.internalId())
        self.flatRowSelected.emit(r)
        self.show_call_sites(r)

    def _double(self, idx: QModelIndex) -> None:
        if idx.isValid() and self.cmp is not None:
            self.revealRequested.emit(str(self.cmp.keys[int(idx.internalId())]))

    def call_sites(self, flat_row: int) -> np.ndarray:
        """Tree rows with the same key as ``flat_row``, in row order.

        By the tree's key codes (:attr:`~viewer.compare.Comparison.key_codes`), not by
        comparing strings: the tree has one key per row (10^6 string comparisons,
        45-90 ms, on every row selected here)."""
        tree = self.tree_cmp
        if self.cmp is None or tree is None:
            return np.zeros(0, dtype=np.int64)
        codes, distinct = tree.key_codes
        if self._code_of is None or self._code_of[0] is not tree:
            self._code_of = (tree, {k: i for i, k in enumerate(distinct.tolist())})
        code = self._code_of[1].get(self.cmp.keys[flat_row])
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(codes == code)

    def show_call_sites(self, flat_row: int, limit: int = 500) -> None:
        """List the call sites of ``flat_row`` in the tree comparison, the largest change
        of the main metric first (the first ``limit`` of them)."""
        tc = self.tree_cmp
        if tc is None or self.cmp is None:
            self.sites_model.clear()
            return
        rows = self.call_sites(flat_row)
        metric = self.main_metric if self.main_metric in tc.values else None
        if metric:
            d = tc.values_at(metric, tc.current, rows) - tc.values_at(metric, tc.baseline, rows)
            rows = rows[np.argsort(-np.abs(d), kind="stable")]
        self.sites_model.show(tc, rows[:limit], metric)
        fm = self.sites.fontMetrics()
        pad = 2 * fm.horizontalAdvance("  ")
        for c in range(self.sites_model.columnCount()):
            self.sites.setColumnWidth(c, 420 if c == 1 else pad + max(
                fm.horizontalAdvance(t) for t in self.sites_model.texts(c)))
        more = f" (first {limit})" if len(rows) > limit else ""
        self.sites_label.setText(
            f"Call sites of <b>{self.cmp.name[flat_row]}</b>: {len(rows)}{more} — "
            "double-click one to show it in the trees")

    def _site(self, index: QModelIndex) -> None:
        r = index.siblingAtColumn(0).data(ROW_ROLE) if index.isValid() else None
        if r is not None:
            self.callSiteActivated.emit(int(r))

    def apply_filter(self, text: str, regex: bool, keep: np.ndarray | None) -> None:
        if self.layout_ is not None:
            self.layout_.set_filter(text, regex, keep)
            self.table.lay_out_now()

    def set_scale(self, scale: DivergingScale) -> None:
        if self.model is not None:
            self.model.set_scale(scale)
        self.table.viewport().update()

    def select_row(self, row: int) -> None:
        if self.model is None:
            return
        idx = self.model.index_for_row(row)
        if idx.isValid():
            self.table.set_current(idx)
            self.table.scroll_to_when_shown(idx)
