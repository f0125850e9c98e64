"""Callers / callees of callgrind functions across two runs: the data (no Qt) and the tab.

The pair: the same malloc-lab driver and trace with two allocators (corpus files);
values asserted come from those files (each edge's calls= count and cost line)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from profdiff import parsers  # noqa: E402
from profdiff.viewer.call_edges import edge_rows, has_call_edges  # noqa: E402
from profdiff.viewer.compare import align  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "callgrind"
A = DATA / "malloc-KGuzikowski-mdriver-xterm.callgrind.out"
B = DATA / "os-malloc-AThit7-mdriver-xterm.callgrind.out"
KEY = "mdriver\x1fmm_malloc"


@pytest.fixture(scope="module")
def runs():
    return parsers.load(A), parsers.load(B)


def test_edge_rows_match_the_files(runs) -> None:
    a, b = runs
    assert has_call_edges(a) and has_call_edges(b)
    rows = {r.label: r for r in edge_rows(a, b, KEY, "callers", "self_Ir")}
    assert rows["mdriver.main"].calls[0] == 16658 and rows["mdriver.main"].cost[0] == 1072382
    assert set(rows) == {"mdriver.main", "mdriver.eval_mm_speed"}
    for r in rows.values():  # same driver, same trace: same number of calls in both runs
        assert r.calls[0] == r.calls[1]
    ga = a.extras["call_graph"]
    node = a.frames.name.tolist().index("mm_malloc")
    assert sum(r.cost[0] for r in rows.values()) == int(ga.cost["self_Ir"][ga.callers(node)].sum())
    callees = edge_rows(a, b, KEY, "callees", "self_Ir")
    # the second allocator calls a helper the first one does not have; largest Δ first
    assert [(r.label, r.calls, r.cost) for r in callees] == [
        ("mdriver.shrink", (None, 9378), (None, 580359)),
        ("mdriver.mem_sbrk", (13029, 15633), (117234, 140670))]


def test_tab_lists_callers_of_the_selected_function(qtbot, runs) -> None:
    from profdiff.viewer.qt.call_graph_view import CallGraphView, wants_call_graph
    from profdiff.viewer.qt.format_views import extra_views

    cmp = align(list(runs), mode="flat")
    assert wants_call_graph(cmp)
    assert "Callers / callees" in [t for t, _ in extra_views(cmp)]
    view = CallGraphView(cmp)
    qtbot.addWidget(view)
    view.filter.setText("mm_malloc")
    assert view.functions.rowCount() == 1
    view.show_row(0)
    got = {view.callers.item(r, 0).text(): view.callers.item(r, 1).text()
           for r in range(view.callers.rowCount())}
    assert got == {"mdriver.main": "16658", "mdriver.eval_mm_speed": "8329"}
    assert view.callees.rowCount() == 2 and view.callees.item(0, 0).text() == "mdriver.shrink"
    assert view.callees.item(0, 1).text() == "·"  # absent in the baseline


def test_names_take_the_room_the_numbers_leave(qtbot) -> None:
    """The rsmat pair's Rust names (``rsmat.matrixmultiply::gemm::masked_kernel::h0375…``)
    were cut to ``rsmat.matrix…`` in Qt's default 100 px, beside an empty half of the
    tab, and some wrapped over two lines: the function column now stretches, numbers
    fit their contents, and every row is one line.  ``--view callers`` opens the tab."""

    from profdiff.viewer.options import VIEWS
    from profdiff.viewer.qt.call_graph_view import CallGraphView

    assert "callers" in VIEWS
    view = _shown_rsmat_pair(qtbot, CallGraphView, 1400, 600)
    for table in (view.functions, view.callers, view.callees):
        h = table.horizontalHeader()
        name_w = h.sectionSize(0)
        assert name_w > 2 * max(h.sectionSize(c) for c in range(1, h.count()))
        assert name_w + sum(h.sectionSize(c) for c in range(1, h.count())) \
            >= table.viewport().width() - 2  # no empty room beside the columns
        rows = [table.rowHeight(r) for r in range(table.rowCount())]
        assert len(set(rows)) <= 1  # one line each: none wrapped
    names = [view.functions.item(r, 0).text() for r in range(view.functions.rowCount())]
    kernel = names.index("rsmat.matrixmultiply::gemm::masked_kernel::h037533f74146b5d9")
    rect = view.functions.visualRect(view.functions.model().index(kernel, 0))
    fm = view.functions.fontMetrics()
    assert fm.horizontalAdvance(names[kernel]) < rect.width()  # shown whole


def test_a_narrow_tab_keeps_names_readable_and_scrolls(qtbot) -> None:
    """At 900 px the callers' numbers left their name column ~30 px ("alle"): the name
    column keeps MIN_NAME_CHARS characters and the table scrolls sideways instead."""

    from profdiff.viewer.qt.call_graph_view import MIN_NAME_CHARS, CallGraphView

    view = _shown_rsmat_pair(qtbot, CallGraphView, 900, 500)
    for table in (view.callers, view.callees):
        least = MIN_NAME_CHARS * table.fontMetrics().averageCharWidth()
        h = table.horizontalHeader()
        assert h.sectionSize(0) >= least
        assert h.length() > table.viewport().width()  # the numbers are reached by scrolling


def _shown_rsmat_pair(qtbot, view_class, width: int, height: int):
    """The Callers / callees tab over the two rsmat callgrind runs, shown at that size."""
    from PySide6.QtWidgets import QApplication

    pair = [parsers.load(DATA / "cargo-profiler-rsmat-valgrind-3.10.0.SVN.callgrind.out.gz"),
            parsers.load(DATA / "cargo-profiler-rsmat-valgrind-3.10.1.callgrind.out.19118.gz")]
    view = view_class(align(pair, mode="flat"))
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    QApplication.processEvents()
    return view

