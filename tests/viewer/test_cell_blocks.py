"""Cells filled many rows at a time (``ComparisonTreeModel.fill_cells``, used when a paint
misses the cache) equal the cells computed one by one, on real profile pairs.

The reference is the per-cell path, which a model keeps when a subclass overrides one
of the parts of a cell (:class:`PerCell` below): every role of every cell is compared,
for merged diff trees (2 and 3 runs, with significance and faded Δ cells, rule-matched
rows), side-by-side panes (placeholder rows) and the flat table, and a painted view's
pixels are compared too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, Qt

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns, pane_columns
from profdiff.viewer.qt.views import TreePane

DATA = Path(__file__).parents[1] / "data"
HS = DATA / "hs-ad"
SAMPLES = Path(__file__).parents[2] / "samples"
ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole,
         Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
         Qt.ItemDataRole.FontRole, Qt.ItemDataRole.DecorationRole]
PAIRS = {
    "hs-ad": [HS / "v1" / "ad.prof", HS / "v2" / "ad.prof"],
    "hs-ad-3": [HS / "v1" / "ad.prof", HS / "v2" / "ad.prof", HS / "v1" / "ad.P.prof"],
    "perf-script": [DATA / "perf" / "script" / "firefox-profiler-simple-perf.txt.gz",
                    DATA / "perf" / "script" / "firefox-profiler-test.perf.gz"],
    "julia": [DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz",
              DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz"],
}


class PerCell(ComparisonTreeModel):
    """The same model on the per-cell path (an override of a cell's part keeps it)."""

    def _text(self, c, col, r):
        return super()._text(c, col, r)


def _roles(m: ComparisonTreeModel, idx: QModelIndex) -> tuple:
    out = []
    for role in ROLES:
        v = m.data(idx, role)
        if hasattr(v, "color"):  # QBrush
            v = (int(v.style().value), v.color().getRgb())
        elif hasattr(v, "bold"):  # QFont
            v = ("font", v.bold(), v.italic())
        elif hasattr(v, "isNull"):  # QIcon
            v = ("icon", v.cacheKey())
        out.append(v)
    return tuple(out)


def _rows(m: ComparisonTreeModel, limit: int = 4000) -> list[QModelIndex]:
    """Tree-column indexes of the first ``limit`` rows, depth first (every row when fewer)."""
    out: list[QModelIndex] = []
    todo = [QModelIndex()]
    while todo and len(out) < limit:
        p = todo.pop()
        for i in range(m.rowCount(p)):
            idx = m.index(i, 0, p)
            out.append(idx)
            todo.append(idx)
    return out[:limit]


def _same_cells(make_fast, make_slow) -> int:
    """Every role of every cell: ``make_fast()``'s model (filled in blocks, in the order
    a view asks: row by row, column by column) against ``make_slow()``'s."""
    fast, slow = make_fast(), make_slow()
    assert not isinstance(fast, PerCell) and isinstance(slow, PerCell)
    n = 0
    for idx in _rows(fast):
        for c in range(fast.columnCount()):
            a = fast.index(idx.row(), c, fast.parent(idx))
            b = slow.index(idx.row(), c, slow.parent(idx))
            assert a.internalId() == b.internalId()
            assert _roles(fast, a) == _roles(slow, b), (a.internalId(), c)
            n += 1
    return n


@pytest.fixture(scope="module", params=sorted(PAIRS))
def cmp(request):
    runs = [load(str(p)) for p in PAIRS[request.param]]
    return align(runs, mode="tree")


def _metrics(cmp) -> list[str]:
    return [m.name for m in cmp.metrics if m.name in cmp.values][:4]


def test_diff_tree_cells_equal_per_cell_cells(qapp, cmp):
    cols = diff_columns(cmp, _metrics(cmp), src=True, status=True)
    n = _same_cells(lambda: ComparisonTreeModel(cmp, cols), lambda: PerCell(cmp, cols))
    assert n > 200


def test_pane_cells_equal_per_cell_cells_with_placeholders(qapp, cmp):
    """Side-by-side panes, including rows absent from the pane's run (greyed
    placeholders), compared on those rows too."""
    placeholders = 0
    for run in range(cmp.n_runs):
        cols = pane_columns(cmp, _metrics(cmp), run)
        _same_cells(lambda cols=cols, run=run: ComparisonTreeModel(cmp, cols, pane_run=run),
                    lambda cols=cols, run=run: PerCell(cmp, cols, pane_run=run))
        fast = ComparisonTreeModel(cmp, cols, pane_run=run)
        slow = PerCell(cmp, cols, pane_run=run)
        for r in np.flatnonzero(~cmp.present[:, run])[:60].tolist():
            for c in range(len(cols)):
                a, b = fast.index_for_row(r, c), slow.index_for_row(r, c)
                assert _roles(fast, a) == _roles(slow, b), (r, c)
            assert fast.data(fast.index_for_row(r), Qt.ItemDataRole.DisplayRole) == "—"
            placeholders += 1
    assert placeholders > 0 or cmp.present.all()


def test_flat_table_cells_equal_per_cell_cells(qapp, cmp):
    flat = align(list(cmp.runs), mode="flat")
    cols = diff_columns(flat, _metrics(flat), status=True)
    fast = ComparisonTreeModel(flat, cols)
    fast.sort(next(i for i, c in enumerate(cols) if c.numeric), Qt.SortOrder.DescendingOrder)
    slow = PerCell(flat, cols, layout=fast.layout)
    assert _same_cells(lambda: fast, lambda: slow) > 200


def test_noise_faded_sig_and_matched_rows(qapp):
    """Significance computed (a sig column, faded Δ cells) and rule-matched rows (↔
    marks) on the hs-ad pair: both change cells, and both paths agree."""
    from profdiff.viewer.noise import compute_noise

    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    cmp = align(runs, mode="tree")
    cmp.noise = compute_noise(cmp, [0], [1])
    cmp.matched_by = np.zeros(cmp.n_rows, dtype=np.int8)
    cmp.matched_by[::5] = 1  # as if a rename rule had matched every fifth row
    metric = "inherited_time_pct"
    cols = diff_columns(cmp, _metrics(cmp), status=True, sig=metric)
    assert any(c.kind == "sig" for c in cols)
    fast = ComparisonTreeModel(cmp, cols)
    assert _same_cells(lambda: fast, lambda: PerCell(cmp, cols)) > 200
    texts = [fast.data(fast.index(i, 0), Qt.ItemDataRole.DisplayRole)
             for i in range(fast.rowCount())]
    assert any(t.startswith("↔ ") for t in texts)


def _shown_pane(qapp, m, width: int, height: int, depth: int) -> TreePane:
    """A tree pane of ``m``, opened to ``depth``, shown and painted."""
    v = TreePane()
    v.resize(width, height)
    v.setModel(m)
    v.expandToDepth(depth)
    v.show()
    qapp.processEvents()
    return v


def test_painted_pixels_equal_per_cell_pixels(qapp, cmp):
    """A painted view shows the same pixels whichever path filled its cells (the
    view fills the rows it is about to paint in one pass)."""
    cols = diff_columns(cmp, _metrics(cmp), status=True)
    images = []
    for make in (ComparisonTreeModel, PerCell):
        m = make(cmp, cols)
        v = _shown_pane(qapp, m, 1200, 700, depth=3)
        images.append(v.grab().toImage())
        v.close()
    assert images[0] == images[1]


def test_rows_in_lists_the_rows_a_paint_shows(qapp):
    """``TreePane.rows_in``: the ids of the rows whose rectangles meet the given band."""
    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    cmp = align(runs, mode="tree")
    m = ComparisonTreeModel(cmp, diff_columns(cmp, _metrics(cmp)))
    v = _shown_pane(qapp, m, 900, 400, depth=4)
    v.verticalScrollBar().setValue(7)
    qapp.processEvents()
    top, bottom = 30, 250
    got = v.rows_in(top, bottom)
    want = []
    idx = v.indexAt(v.viewport().rect().topLeft())
    while idx.isValid():
        r = v.visualRect(idx)
        if r.top() > bottom:
            break
        if r.bottom() >= top:
            want.append(idx.internalId())
        idx = v.indexBelow(idx)
    assert len(want) > 10
    assert got[: len(want)] == want and len(got) - len(want) <= 2
    v.close()


def test_hidden_view_measures_columns_when_shown(qapp):
    """Expanding rows in a hidden diff tree leaves its columns as they were (nothing is
    measured for a tab nobody sees); once shown they are as wide as in a tree that was
    visible when the same rows opened."""
    from profdiff.viewer.qt.views import DiffTreeView

    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    cmp = align(runs, mode="tree")
    views = []
    for visible in (True, False):
        v = DiffTreeView()
        v.resize(1400, 700)
        v.set_comparison(cmp, _metrics(cmp))
        if visible:
            v.show()
            qapp.processEvents()
        views.append(v)
    shown, hidden = views
    widths = [[v.tree.header().sectionSize(i) for i in range(v.tree.header().count())]
              for v in views]
    for v in views:
        v.expand_to_depth(6)
    after = [[v.tree.header().sectionSize(i) for i in range(v.tree.header().count())]
             for v in views]
    assert after[0] != widths[0]  # deeper rows need a wider name column
    assert after[1] == widths[1]  # hidden: not measured yet
    hidden.show()
    qapp.processEvents()
    assert [hidden.tree.header().sectionSize(i)
            for i in range(hidden.tree.header().count())] == after[0]
    for v in views:
        v.close()


def test_cell_texts_equal_the_painted_texts(qapp, cmp):
    """``cell_texts`` (what column widths are measured on) gives each cell's display
    text, for merged and pane models, present and absent rows alike."""
    metrics = _metrics(cmp)
    rows = np.arange(min(cmp.n_rows, 3000))
    for m in (ComparisonTreeModel(cmp, diff_columns(cmp, metrics, src=True, status=True)),
              *(ComparisonTreeModel(cmp, pane_columns(cmp, metrics, r), pane_run=r)
                for r in range(cmp.n_runs))):
        slow = PerCell(cmp, m.columns, pane_run=m.pane_run)
        for col in range(m.columnCount()):
            got = m.cell_texts(col, rows)
            assert got == slow.cell_texts(col, rows), col
            assert got[:50] == [slow.data(slow.index_for_row(r, col)) for r in rows[:50]]


def test_expand_paints_once_when_the_scroll_bar_appears(qapp, make_window):
    """Expanding the shown diff tree so far that it needs a vertical scroll bar paints
    its rows once, at the final viewport width (Qt shows the bar from a queued call:
    laid out from inside the paint, the rows were drawn at the old width, then again)."""
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        widths: list[int] = []

        def eventFilter(self, obj, ev):  # noqa: N802 - Qt API
            if ev.type() == QEvent.Type.Paint:
                self.widths.append(obj.width())
            return False

    win = make_window(1600, 900, show=True)
    win.load_paths([str(SAMPLES / "hs-ad-v1.prof"), str(SAMPLES / "hs-ad-v2.prof")])
    win.show_view("diff")
    win.collapse_all()
    for _ in range(5):
        qapp.processEvents()
    tree = win.diff.tree
    assert not tree.verticalScrollBar().isVisible()
    paints = Paints()
    tree.viewport().installEventFilter(paints)
    win.expand_to_depth(30)
    for _ in range(5):
        qapp.processEvents()
    assert tree.verticalScrollBar().isVisible()
    assert paints.widths == [tree.viewport().width()]


def test_model_passes_the_model_tester_with_sibling_and_block_cells(qapp, model_tester):
    """pytest-qt's model tester (which checks ``sibling`` against ``index``) on a diff
    model and a pane model, through a sort and a filter."""
    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    cmp = align(runs, mode="tree")
    metrics = _metrics(cmp)
    diff = ComparisonTreeModel(cmp, diff_columns(cmp, metrics, status=True))
    pane = ComparisonTreeModel(cmp, pane_columns(cmp, metrics, 0), pane_run=0,
                               layout=diff.layout)
    model_tester(diff)
    model_tester(pane)
    idx = diff.index(0, 0)
    assert diff.sibling(0, 3, idx) == diff.index(0, 3)
    assert not diff.sibling(0, diff.columnCount(), idx).isValid()
    diff.sort(3, Qt.SortOrder.DescendingOrder)
    diff.layout.set_filter("eval")
    assert diff.rowCount() > 0


def test_columns_owed_by_a_hidden_view_are_dropped_with_its_comparison(qapp):
    """Rows a hidden tree owes a measurement for belong to its comparison: given a
    smaller one meanwhile, showing it measures nothing of the old (no stale row ids)."""
    from profdiff.viewer.qt.views import DiffTreeView

    big = align([load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))])
    small = align([load(str(DATA / "pprof" / "go-resolv-2018-cpu.pprof"))] * 2)
    assert small.n_rows < big.n_rows
    v = DiffTreeView()
    v.set_comparison(big, _metrics(big))
    v.expand_to_depth(30)  # hidden: measured when shown
    v.set_comparison(small, _metrics(small))
    v.show()
    qapp.processEvents()
    assert v.tree.model().rowCount() > 0
    v.close()


def test_few_rows_coloured_alone_equal_their_blocks(qapp, cmp, monkeypatch):
    """The Δ colours of a few rows of blocks not computed yet (a big tree's first paint:
    its rows spread over a handful of blocks) are those rows' colours in their computed
    blocks, and in the whole column."""
    from profdiff.viewer.qt import models

    metrics = _metrics(cmp)
    rows = np.unique(np.linspace(0, cmp.n_rows - 1, 50).astype(np.int64))

    def backgrounds(few: int, whole: bool = False) -> list:
        monkeypatch.setattr(models, "_FEW_ROWS", few)
        m = ComparisonTreeModel(cmp, diff_columns(cmp, metrics))
        if whole:  # every Δ column computed whole first: the cells read from it
            for name in metrics:
                m.change_pp(name)
        cols = [c for c in range(m.columnCount()) if m.columns[c].kind in ("delta", "rel")]
        assert cols
        m.fill_cells(rows)
        return [_roles(m, m.index_for_row(int(r), c))[2] for r in rows for c in cols]

    alone = backgrounds(10**9)
    assert alone == backgrounds(0) == backgrounds(0, whole=True)
    assert any(b is not None for b in alone)  # some of these rows are coloured
