"""Wide parents show their children a window at a time (:data:`.layout.WIDE_WINDOW`).

On the real hs-ad pair with the window lowered to 3 children, so that 15 of its parents
are wide: Qt's model tester through expansion, sort and filter; every row reachable by
``index_for_row`` (its path shown first); painting the last shown child shows more; and
the two panes of one layout grow in step.  The columns are measured over what a wide
parent shows (:meth:`RowLayout.shown_children`: the 100 MB pair's culprit path opens a
parent with 32k children, of which 2,000 are shown, and measuring them all took 21 ms
of the first paint); the rows its window shows later - "show more", or other children
a sort puts in it - are measured then."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, Qt

from profdiff.parsers import load
from profdiff.viewer.compare import Status, align
from profdiff.viewer.qt import layout as layout_mod
from profdiff.viewer.qt.column_sizing import label_width
from profdiff.viewer.qt.layout import RowLayout
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns, pane_columns
from profdiff.viewer.qt.views import DiffTreeView, TreePane

HS = Path(__file__).parents[1] / "data" / "hs-ad"
WINDOW = 3


@pytest.fixture(scope="module")
def hs_cmp():
    return align([load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))])


@pytest.fixture(autouse=True)
def small_window(monkeypatch):
    monkeypatch.setattr(layout_mod, "WIDE_WINDOW", WINDOW)


def _model(cmp, layout=None, run=None) -> ComparisonTreeModel:
    cols = (diff_columns(cmp, ["time_pct", "alloc_pct"], status=True) if run is None
            else pane_columns(cmp, ["time_pct"], run))
    return ComparisonTreeModel(cmp, cols, pane_run=run, layout=layout)


def _kids(m, pidx) -> list[int]:
    return [m.row_id(m.index(i, 0, pidx)) for i in range(m.rowCount(pidx))]


def _wide(cmp) -> list[int]:
    n = np.bincount(cmp.parent[cmp.parent >= 0], minlength=cmp.n_rows)
    return np.flatnonzero(n > WINDOW).tolist()


def test_a_wide_parent_shows_its_first_children_in_display_order(qapp, hs_cmp, model_tester):
    wide = _wide(hs_cmp)
    assert len(wide) >= 10
    col = None
    for p in wide:  # a fresh model each: asking for p grows p's ancestors, not p
        m = _model(hs_cmp)
        model_tester(m)
        pidx = m.index_for_row(p)
        assert _kids(m, pidx) == m.layout.children(p).tolist()[:WINDOW]
        assert m.layout.has_more(p)
        col = [i for i, c in enumerate(m.columns) if c.kind == "delta"][0]
        m.sort(col, Qt.SortOrder.DescendingOrder)  # same window size, in the new order
        pidx = m.index_for_row(p)
        assert _kids(m, pidx) == m.layout.children(p).tolist()[:WINDOW]


def test_every_row_is_reachable_and_its_parents_grow_to_show_it(qapp, hs_cmp, model_tester):
    m = _model(hs_cmp)
    model_tester(m)
    for r in range(hs_cmp.n_rows)[::-1]:  # the last children first: the most growing
        idx = m.index_for_row(r)
        assert idx.isValid() and m.row_id(idx) == r
        par = idx.parent()
        assert m.index(idx.row(), 0, par) == idx
        assert idx.row() < m.rowCount(par)
        assert m.data(idx) == hs_cmp.name[r]
    for p in _wide(hs_cmp):  # every child was asked for: every wide parent shows all
        assert _kids(m, m.index_for_row(p)) == m.layout.children(p).tolist()


def test_sort_and_filter_keep_an_expanded_row_beyond_the_window(qapp, hs_cmp, model_tester):
    m = _model(hs_cmp)
    model_tester(m)
    view = TreePane()
    view.setModel(m)
    view.resize(900, 600)
    view.show()
    p = max(_wide(hs_cmp), key=lambda r: len(hs_cmp.children(r)))
    last = [int(k) for k in m.layout.children(p) if len(hs_cmp.children(int(k)))]
    if not last:
        pytest.skip("the widest parent has no child with children")
    rows = [*m.layout.ancestors(last[-1])]
    view.expand_indexes(m.indexes_for_rows(rows))
    qapp.processEvents()
    for col in range(m.columnCount()):
        m.sort(col, Qt.SortOrder.AscendingOrder)
        qapp.processEvents()
        assert view.isExpanded(m.index_for_row(last[-1]))
    m.layout.set_filter("", keep=hs_cmp.status != Status.SAME)
    qapp.processEvents()
    m.layout.set_filter("")
    qapp.processEvents()
    assert view.isExpanded(m.index_for_row(last[-1]))
    view.close()


def test_painting_the_last_shown_child_shows_the_next_ones(qapp, qtbot, hs_cmp):
    m = _model(hs_cmp)
    view = TreePane()
    qtbot.addWidget(view)
    view.setModel(m)
    view.resize(900, 2000)  # every row fits: each paint reaches the last shown child
    view.show()
    p = max(_wide(hs_cmp), key=lambda r: len(hs_cmp.children(r)))
    view.expand_indexes(m.indexes_for_rows(m.layout.ancestors(p)))
    pidx = m.index_for_row(p)
    n = len(m.layout.children(p))
    assert m.rowCount(pidx) == WINDOW
    qtbot.waitUntil(lambda: (view.viewport().update(), m.rowCount(pidx) == n)[1], timeout=5000)
    assert _kids(m, pidx) == m.layout.children(p).tolist()


def test_panes_of_one_layout_grow_in_step(qapp, hs_cmp, model_tester):
    lay = RowLayout(hs_cmp)
    a, b = _model(hs_cmp, lay, 0), _model(hs_cmp, lay, 1)
    model_tester(a)
    model_tester(b)
    for p in _wide(hs_cmp):
        last = int(lay.children(p)[-1])
        ia = a.index_for_row(last)  # one pane asks for the last child
        pa, pb = ia.parent(), b.index_for_row(p)
        assert a.rowCount(pa) == b.rowCount(pb) == len(lay.children(p))
        assert b.row_id(b.index(ia.row(), 0, pb)) == last


def test_flat_lists_show_every_row(qapp, hs_cmp):
    flat = align(list(hs_cmp.runs), mode="flat")
    m = _model(flat)
    assert flat.n_rows > WINDOW
    assert m.rowCount(QModelIndex()) == flat.n_rows
    assert not m.layout.has_more(-1)


def test_showing_more_under_a_parent_hidden_by_its_own_parent_shows_the_path_first(
        qapp, hs_cmp, model_tester):
    """A wide parent that is itself beyond its parent's window: showing more of its
    children first shows it (the inserted rows need its index), in every model."""
    lay = RowLayout(hs_cmp)
    nested = [p for p in _wide(hs_cmp) if lay.position(p) >= WINDOW]
    if not nested:
        pytest.skip("no wide parent beyond its own parent's window")
    p = nested[0]
    m = _model(hs_cmp, lay)
    model_tester(m)
    m.show_more_of([p])
    assert lay.position(p) < lay.child_count(int(hs_cmp.parent[p]))  # p is shown now
    n = len(lay.children(p))
    pidx = m.index_for_row(p)
    assert m.rowCount(pidx) == min(n, 2 * WINDOW)
    assert _kids(m, pidx) == lay.children(p).tolist()[: 2 * WINDOW]
    gp = pidx.parent()
    assert pidx.row() < m.rowCount(gp)


def _shown_kids(m: ComparisonTreeModel, p: int) -> list[int]:
    pidx = QModelIndex() if p < 0 else m.index_for_row(p)
    return [m.row_id(m.index(i, 0, pidx)) for i in range(m.rowCount(pidx))]


@pytest.mark.parametrize("arrange", ["file order", "sorted", "filtered"])
def test_shown_children_are_the_rows_the_model_shows(qapp, hs_cmp, arrange):
    lay = RowLayout(hs_cmp)
    m = ComparisonTreeModel(hs_cmp, diff_columns(hs_cmp, ["time_pct"]), layout=lay)
    if arrange == "sorted":
        m.sort(2, Qt.SortOrder.DescendingOrder)
    elif arrange == "filtered":
        lay.set_filter("", keep=hs_cmp.status != Status.SAME)
    wide = [p for p in _wide(hs_cmp) if lay.is_visible(p)]
    has_kids = np.frombuffer(lay.has_kids(), dtype=np.uint8) > 0
    narrow = [int(p) for p in np.flatnonzero(has_kids) if p not in wide][:40]
    parents = [-1, *wide, *narrow]
    for p in parents:  # asking for p's index may grow its ancestors' windows: p first
        kids = _shown_kids(m, p)
        assert sorted(lay.shown_children([p]).tolist()) == sorted(kids)
    everything = sorted(k for p in parents for k in _shown_kids(m, p))
    assert sorted(lay.shown_children(parents).tolist()) == everything
    assert len(everything) < sum(len(lay.children(p)) for p in parents)  # windows cut
    wide_only = sorted(k for p in wide for k in _shown_kids(m, p))
    assert sorted(lay.shown_children(parents, wide_only=True).tolist()) == wide_only


def _need(view: DiffTreeView, row: int) -> int:
    """The name column's width ``row`` needs in ``view`` as it is now."""
    return label_width(view.tree, view.models[0], 0, np.array([row]), view.cmp.depth)


def _fits(view: DiffTreeView, rows) -> bool:
    """Every one of ``rows`` fits the name column as the view sized it."""
    pane = view.tree
    need = max(_need(view, r) for r in rows)
    return need <= pane.content_widths[0]


def test_rows_a_window_shows_later_are_measured_when_shown(qapp, qtbot, hs_cmp):
    view = DiffTreeView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    view.set_comparison(hs_cmp, ["time_pct", "alloc_pct"])
    m, lay = view.models[0], view.layout_
    widths = {p: [_need(view, int(k)) for k in lay.children(p)] for p in _wide(hs_cmp)}
    # a parent whose widest child is beyond its window in file order
    p = next(p for p, w in widths.items() if max(w[WINDOW:]) > max(w[:WINDOW]))
    view.expand_rows([p])
    qapp.processEvents()
    shown = _shown_kids(m, p)
    assert len(shown) == WINDOW and _fits(view, shown)
    hidden = [int(k) for k in lay.children(p)[WINDOW:]]
    widest_hidden = max(hidden, key=lambda r: _need(view, r))
    assert not _fits(view, [widest_hidden])  # not measured before it is shown
    while widest_hidden not in _shown_kids(m, p):  # a window at a time, as painting asks
        m.show_more_of([p])
    assert _fits(view, _shown_kids(m, p))
    view.collapse_all()
    view.set_comparison(hs_cmp, ["time_pct", "alloc_pct"])  # widths afresh
    m, lay = view.models[0], view.layout_
    view.expand_rows([p])
    qapp.processEvents()
    for col in range(m.columnCount()):  # each sort puts other children in the window
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            m.sort(col, order)
            qapp.processEvents()
            assert _fits(view, _shown_kids(m, p)), (col, order)
