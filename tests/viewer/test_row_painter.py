"""Rows drawn by :mod:`viewer.qt.row_painter` (one Python call per row) show exactly the
pixels Qt's own ``drawRow`` (style + delegates, several calls per cell) shows, on real
profile pairs: diff trees with icons, coloured and faded Δ cells, a selected row, filter
matches in bold, names and modules elided in narrow columns, side-by-side panes with
placeholder rows - with and without the app's style sheet; and a style sheet that
styles items keeps Qt's path (the sample-cell check rejects it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QApplication
from qt_style import style_sheet

from profdiff.parsers import load
from profdiff.viewer.compare import Status, align
from profdiff.viewer.qt import row_painter
from profdiff.viewer.qt.icons import icon
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns, pane_columns
from profdiff.viewer.qt.views import TreePane

DATA = Path(__file__).parents[1] / "data"
PAIRS = {
    "hs-ad": [DATA / "hs-ad" / "v1" / "ad.prof", DATA / "hs-ad" / "v2" / "ad.prof"],
    "perf-script": [DATA / "perf" / "script" / "firefox-profiler-simple-perf.txt.gz",
                    DATA / "perf" / "script" / "firefox-profiler-test.perf.gz"],
}


@pytest.fixture(scope="module", params=sorted(PAIRS))
def cmp(request):
    return align([load(str(p)) for p in PAIRS[request.param]], mode="tree")


@pytest.fixture(params=["no style sheet", "app style sheet"])
def sheet(request, qapp):
    from profdiff.viewer.qt.app import _stylesheet

    old = qapp.styleSheet()
    qapp.setStyleSheet("" if request.param == "no style sheet" else _stylesheet())
    yield request.param
    qapp.setStyleSheet(old)


def _paint(cmp, model: ComparisonTreeModel, fast: bool, monkeypatch) -> tuple:
    """The grabbed pane and how many rows the row painter drew (``fast``: allowed)."""
    drawn = [0]
    real = row_painter.RowPainter.draw_row

    def counting(self, painter, option, index):
        ok = real(self, painter, option, index)
        drawn[0] += ok
        return ok

    with monkeypatch.context() as mp:
        mp.setattr(row_painter.RowPainter, "draw_row", counting)
        if not fast:
            mp.setattr(row_painter.RowPainter, "for_paint", classmethod(lambda *a: None))
        v = TreePane()
        v.resize(1100, 600)
        v.setModel(model)
        v.reset_widths()  # names and modules through the eliding delegates
        v.setColumnWidth(0, 120)  # deep names elided on the left
        v.setColumnWidth(1, 45)
        v.expandToDepth(4)
        rows = [model.index(i, 0) for i in range(model.rowCount())]
        sel = model.index(0, 0, rows[0]) if model.rowCount(rows[0]) else rows[0]
        v.selectionModel().setCurrentIndex(sel, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                           | QItemSelectionModel.SelectionFlag.Rows)
        v.show()
        QApplication.processEvents()
        img = v.grab().toImage()
        v.close()
    return img, drawn[0]


def _diff_model(cmp, filtered: bool) -> ComparisonTreeModel:
    metrics = [m.name for m in cmp.metrics if m.name in cmp.values][:3]
    m = ComparisonTreeModel(cmp, diff_columns(cmp, metrics, status=True))
    m.icons = {int(Status.ADDED): icon("added"), int(Status.REMOVED): icon("removed")}
    if filtered:
        m.layout.set_filter("a", False, None)  # many matches drawn bold
    return m


@pytest.mark.parametrize("filtered", [False, True])
def test_diff_tree_rows_equal_qt_rows(qapp, cmp, sheet, filtered, monkeypatch):
    fast, n = _paint(cmp, _diff_model(cmp, filtered), True, monkeypatch)
    slow, none = _paint(cmp, _diff_model(cmp, filtered), False, monkeypatch)
    assert n >= 10 and none == 0  # the fast path drew most rows (not the selected one)
    assert fast == slow


def test_pane_rows_with_placeholders_equal_qt_rows(qapp, cmp, sheet, monkeypatch):
    metrics = [m.name for m in cmp.metrics if m.name in cmp.values][:3]
    run = cmp.current
    assert not cmp.present[:, run].all()  # rows absent from the pane: placeholders

    def make():
        return ComparisonTreeModel(cmp, pane_columns(cmp, metrics, run), pane_run=run)

    fast, n = _paint(cmp, make(), True, monkeypatch)
    slow, _ = _paint(cmp, make(), False, monkeypatch)
    assert n >= 10
    assert fast == slow


def test_a_style_sheet_styling_items_keeps_qt_rows(qapp, cmp, monkeypatch):
    with style_sheet("QTreeView::item { padding-left: 7px; color: #123456; }"):
        fast, n = _paint(cmp, _diff_model(cmp, False), True, monkeypatch)
        slow, _ = _paint(cmp, _diff_model(cmp, False), False, monkeypatch)
    assert n == 0  # the sample cells differ: every row went through Qt
    assert fast == slow


def test_branch_lines_of_a_style_sheet_are_drawn(qapp, cmp, monkeypatch):
    """A style that draws the outer branch levels (lines to siblings) gets them through
    Qt's drawBranches while the cells are still drawn by the row painter."""
    with style_sheet("QTreeView::branch:has-siblings { background: #d04040; }"):
        fast, n = _paint(cmp, _diff_model(cmp, False), True, monkeypatch)
        slow, _ = _paint(cmp, _diff_model(cmp, False), False, monkeypatch)
    assert n >= 10
    assert fast == slow
