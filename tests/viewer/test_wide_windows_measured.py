"""The columns are measured over what the views show of a wide parent: its window.

An expansion measures the children it shows (:meth:`RowLayout.shown_children`), not
all of a wide parent's children (the 100 MB pair's culprit path opens a parent with
32k children, of which 2,000 are shown: measuring them all took 21 ms of the first
paint).  The rows a window shows later - "show more", or other children a sort puts
in it - are measured then.  On the real hs-ad pair with the window lowered to 3."""

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
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns
from profdiff.viewer.qt.views import DiffTreeView

HS = Path(__file__).parents[1] / "data" / "hs-ad"
WINDOW = 3


@pytest.fixture(scope="module")
def hs_cmp():
    return align([load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))])


@pytest.fixture(autouse=True)
def small_window(monkeypatch):
    monkeypatch.setattr(layout_mod, "WIDE_WINDOW", WINDOW)


def _wide(cmp) -> list[int]:
    n = np.bincount(cmp.parent[cmp.parent >= 0], minlength=cmp.n_rows)
    return np.flatnonzero(n > WINDOW).tolist()


def _kids(m: ComparisonTreeModel, p: int) -> list[int]:
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
        kids = _kids(m, p)
        assert sorted(lay.shown_children([p]).tolist()) == sorted(kids)
    everything = sorted(k for p in parents for k in _kids(m, p))
    assert sorted(lay.shown_children(parents).tolist()) == everything
    assert len(everything) < sum(len(lay.children(p)) for p in parents)  # windows cut
    wide_only = sorted(k for p in wide for k in _kids(m, p))
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
    shown = _kids(m, p)
    assert len(shown) == WINDOW and _fits(view, shown)
    hidden = [int(k) for k in lay.children(p)[WINDOW:]]
    widest_hidden = max(hidden, key=lambda r: _need(view, r))
    assert not _fits(view, [widest_hidden])  # not measured before it is shown
    while widest_hidden not in _kids(m, p):  # a window at a time, as painting asks
        m.show_more_of([p])
    assert _fits(view, _kids(m, p))
    view.collapse_all()
    view.set_comparison(hs_cmp, ["time_pct", "alloc_pct"])  # widths afresh
    m, lay = view.models[0], view.layout_
    view.expand_rows([p])
    qapp.processEvents()
    for col in range(m.columnCount()):  # each sort puts other children in the window
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            m.sort(col, order)
            qapp.processEvents()
            assert _fits(view, _kids(m, p)), (col, order)
