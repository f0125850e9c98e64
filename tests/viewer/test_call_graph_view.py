"""Callers / callees of callgrind functions across two runs: the data (no Qt) and the tab.

The pair: the same malloc-lab driver and trace with two allocators (corpus files);
values asserted come from those files (each edge's calls= count and cost line)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

import parsers  # noqa: E402
from viewer.call_edges import edge_rows, has_call_edges  # noqa: E402
from viewer.compare import align  # noqa: E402

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
    from viewer.qt.call_graph_view import CallGraphView, wants_call_graph
    from viewer.qt.format_views import extra_views

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
