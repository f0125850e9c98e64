"""Format-specific views: heap charts, RTS statistics, ticky closures and counters.

Values asserted here were read from the files in tests/data/format-views/ (copies of the
hs-ad v1/v2 runs and two GHC 7 ticky reports with ambiguous keys).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QModelIndex, QPointF, Qt  # noqa: E402

from profdiff.parsers import ghc_heap, ghc_rts_machine, ghc_rts_summary, ghc_ticky  # noqa: E402
from profdiff.viewer.compare import align  # noqa: E402

DATA = Path(__file__).parent.parent / "data" / "format-views"




@pytest.fixture(scope="module")
def heap_runs():
    return [ghc_heap.read(DATA / f"hs-ad-v{i}.hp") for i in (1, 2)]


@pytest.fixture(scope="module")
def rts_runs():
    return [ghc_rts_summary.read(DATA / f"hs-ad-v{i}.stats.txt") for i in (1, 2)]


@pytest.fixture(scope="module")
def ticky_runs():
    return [ghc_ticky.read(DATA / f"hs-ad-v{i}.ticky.txt") for i in (1, 2)]


def _col(model, kind: str, metric: str | None = None, run: int | None = None) -> int:
    """Column index by its spec (headers are the main window's business and may change)."""
    for i, c in enumerate(model.columns):
        if c.kind == kind and c.metric == metric and (run is None or c.run == run):
            return i
    raise AssertionError(f"no column {kind} {metric} {run}")


def _row_by_name(model, name: str) -> list:
    """Display texts of the row whose first column is ``name``."""
    for r in range(model.rowCount()):
        if model.index(r, 0).data() == name:
            return [model.index(r, c).data() for c in range(model.columnCount())]
    raise AssertionError(f"no row {name!r}")


# ------------------------------------------------------------------------------------------
# entry points
# ------------------------------------------------------------------------------------------
def test_entry_points_by_format(qtbot, heap_runs, rts_runs, ticky_runs):
    from profdiff.viewer.qt.format_views import extra_views, primary_view

    heap = extra_views(align(heap_runs))
    assert [t for t, _ in heap] == ["Heap over time"]
    assert primary_view(align(heap_runs)) is None
    ticky = extra_views(align(ticky_runs, mode="flat"))
    assert [t for t, _ in ticky] == ["Ticky closures", "Ticky counters"]
    rts = align(rts_runs, mode="flat")
    assert extra_views(rts) == []
    title, w = primary_view(rts)
    assert title == "RTS statistics"
    for _, widget in heap + ticky + [(title, w)]:
        qtbot.addWidget(widget)
    # -s summary against -t machine-readable: both RTS formats -> the RTS view
    mixed = align([rts_runs[0], ghc_rts_machine.read(DATA / "hs-ad-v2.t-machine-readable.txt")])
    assert primary_view(mixed) is not None
    qtbot.addWidget(primary_view(mixed)[1])


def test_no_special_views_for_mixed_formats(heap_runs, ticky_runs):
    from profdiff.viewer.qt.format_views import extra_views, primary_view

    cmp = align([heap_runs[0], ticky_runs[0]], mode="flat")
    assert extra_views(cmp) == []
    assert primary_view(cmp) is None


# ------------------------------------------------------------------------------------------
# heap
# ------------------------------------------------------------------------------------------
@pytest.fixture
def heap_view(qtbot, heap_runs):
    from profdiff.viewer.qt.heap_view import HeapView

    w = HeapView(align(heap_runs, mode="flat"), top_n=6)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    return w


def test_heap_stacks_equal_reader_series(heap_view, heap_runs):
    from profdiff.viewer.qt.heap_view import OTHER

    cmp = heap_view.cmp
    assert len(heap_view.charts) == 2
    for run, chart in enumerate(heap_view.charts):
        series = heap_runs[run].extras["series"]
        s = chart.stack
        np.testing.assert_array_equal(s.times, series["times"])
        # top N + other sum to the sample totals
        np.testing.assert_allclose(s.total, series["bands"].sum(axis=1), rtol=1e-12)
        assert s.rows[-1] == OTHER and len(s.rows) == 7
        for j, row in enumerate(s.rows[:-1]):
            node = cmp.node[row, run]
            expect = series["bands"][:, node] if node >= 0 else 0.0
            np.testing.assert_array_equal(s.values[:, j], expect)
        # the top of the stack is the total heap the reader reports as its peak
        assert s.total.max() == heap_runs[run].totals["peak_bytes"]
    assert heap_view.charts[0].stack.total.max() == 1723488.0
    assert heap_view.charts[1].stack.total.max() == 1648152.0


def test_heap_band_colors_same_across_runs(heap_view):
    thunk = next(r for r in range(heap_view.cmp.n_rows) if heap_view.cmp.name[r] == "THUNK")
    c0, c1 = heap_view.charts
    assert thunk in c0.fills and thunk in c1.fills
    assert c0.colors[thunk] == c1.colors[thunk]
    assert c0.fills[thunk].brush().color().rgb() == c1.fills[thunk].brush().color().rgb()


def test_heap_y_axes_linked(heap_view):
    c0, c1 = heap_view.charts
    assert c1.plot.vb.linkedView(c1.plot.vb.YAxis) is c0.plot.vb
    assert c0.plot.vb.viewRange()[1] == c1.plot.vb.viewRange()[1]


def test_heap_table_click_highlights_in_all_charts(qtbot, heap_view):
    cmp = heap_view.cmp
    row = int(heap_view.rank[1])
    idx = heap_view.proxy.mapFromSource(heap_view.model.index_for_row(row))
    heap_view.table.setCurrentIndex(idx)
    assert heap_view.highlighted == row
    for c in heap_view.charts:
        assert c.alpha(row) == 255
        others = [r for r in c.fills if r != row]
        assert others and all(c.alpha(r) < 100 for r in others)
    # a band outside the top N is pulled out of "other" and highlighted too
    small = int(heap_view.rank[20])
    heap_view.set_highlight(small)
    for c in heap_view.charts:
        assert small in c.stack.rows and c.alpha(small) == 255
    np.testing.assert_allclose(heap_view.charts[0].stack.total,
                               heap_view.cmp.runs[0].extras["series"]["bands"].sum(axis=1))
    assert cmp.name[small] in heap_view.legend.text()


def test_heap_chart_click_highlights_band(qtbot, heap_view):
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    chart = heap_view.charts[1]
    s = chart.stack
    k = int(np.argmax(s.total))
    t = float(s.times[k])
    j = 0  # bottom band at the peak sample, halfway up its own area
    y = float(s.cumulative[k, j] + s.values[k, j] / 2)
    assert chart.band_at(t, y) == s.rows[j]
    scene = chart.plot.vb.mapViewToScene(QPointF(t, y))
    view_pt = heap_view.graphics.mapFromScene(scene)
    qtbot.mouseClick(heap_view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=view_pt)
    assert heap_view.highlighted == s.rows[j]
    assert all(c.alpha(s.rows[j]) == 255 for c in heap_view.charts)
    cur = heap_view.table.currentIndex()
    assert heap_view.proxy.data(cur.siblingAtColumn(0)) == heap_view.cmp.name[s.rows[j]]


def test_heap_overlay_mode(heap_view):
    heap_view.mode_combo.setCurrentIndex(1)
    assert heap_view.charts == [] and heap_view._overlay_plot is not None
    curves = heap_view._overlay_plot.listDataItems()
    assert len(curves) == 2
    np.testing.assert_allclose(curves[1].yData,
                               heap_view.cmp.runs[1].extras["series"]["bands"].sum(axis=1))
    heap_view.set_highlight(int(heap_view.rank[0]))
    assert len(heap_view._overlay_plot.listDataItems()) == 4


def test_heap_table_values_and_model(heap_view, model_tester):
    model_tester(heap_view.proxy)
    row = _row_by_name(heap_view.proxy, "THUNK")
    m = heap_view.model
    assert heap_view.proxy.headerData(0, Qt.Orientation.Horizontal) == "band"
    assert row[_col(m, "value", "peak_bytes", 0)] == "631,456"
    assert row[_col(m, "value", "peak_bytes", 1)] == "640,392"
    assert row[_col(m, "delta", "peak_bytes")] == "+8,936"
    assert row[_col(m, "value", "integral_byte_s", 0)] == "719,050"
    # default sort: Δ byte·s, biggest growth first
    first = heap_view.proxy.index(0, 0).data()
    d = heap_view.cmp.delta("integral_byte_s")
    assert first == heap_view.cmp.name[int(np.argmax(d))]


# ------------------------------------------------------------------------------------------
# RTS
# ------------------------------------------------------------------------------------------
def test_rts_view_values_and_warning(qtbot, rts_runs, model_tester):
    from profdiff.viewer.qt.rts_view import RtsView
    from profdiff.viewer.qt.totals_table import KEY_ROLE

    w = RtsView(align(rts_runs, mode="flat"))
    qtbot.addWidget(w)
    m = w.table.model
    model_tester(m)
    groups = [m.index(g, 0).data() for g in range(m.rowCount())]
    assert groups[:4] == ["Allocation", "GC", "Time", "Productivity"]
    alloc = w.table.row_index("bytes_allocated")
    texts = [alloc.siblingAtColumn(c).data() for c in range(m.columnCount())]
    # "6,688,508,720 bytes allocated in the heap" / "10,332,420,400 bytes allocated"
    assert texts == ["allocated", "6,688,508,720 B", "10,332,420,400 B", "+3,643,911,680 B",
                     "×1.545"]
    assert alloc.data(KEY_ROLE) == "bytes_allocated"
    prod = w.table.row_index("productivity_pct")
    assert [prod.siblingAtColumn(c).data() for c in (1, 2, 3)] == ["64.0 %", "43.1 %",
                                                                  "−20.9 pp"]
    # productivity falling is bad: coloured like a regression (red family, not green)
    bg = prod.siblingAtColumn(3).data(Qt.ItemDataRole.BackgroundRole).color()
    assert bg.red() > bg.green()
    gc_cpu = w.table.row_index("gc_cpu_s")
    assert [gc_cpu.siblingAtColumn(c).data() for c in (1, 2)] == ["1.531 s", "4.834 s"]
    # %GC recomputation (GHC 9.0 printed 0.0%) is shown and marked on its rows
    assert w.warnings.isVisibleTo(w)
    assert "%GC recomputed" in w.warnings.text() and "36.0%" in w.warnings.text()
    gc_pct = w.table.row_index("gc_time_pct")
    assert "recomputed" in gc_pct.data()
    assert gc_pct.siblingAtColumn(1).data() == "36.0 %"
    # GHC printed 0.0 %; zero reads "0" in every column (viewer.units)
    assert w.table.row_index("gc_time_pct_reported").siblingAtColumn(1).data() == "0 %"
    assert "allocated +54.5%" in w.headline.text()
    assert "64.0 % → 43.1 %" in w.headline.text()
    # "Gen 1 ... Avg pause 0.0022s" / "0.0028s": each known to ± 0.05 ms, so their ratio
    # to ± 0.04 (1.27 ± 0.04): one decimal, marked approximate; exact counts keep three
    pause = w.table.row_index("gen1_avg_pause_s")
    assert [pause.siblingAtColumn(c).data() for c in (1, 2, 4)] == ["2.2 ms", "2.8 ms", "≈×1.3"]
    gcs = w.table.row_index("gen1_collections")
    assert gcs.siblingAtColumn(4).data() == "×2.486"  # 658 -> 1,636 collections
    # times measured once carry the mark and the headline says what it means; counts and
    # bytes do not
    assert w.table.row_index("mut_cpu_s").data() == "MUT CPU †"
    assert w.table.row_index("productivity_pct").data() == "productivity †"
    assert gcs.data() == "gen 1 collections" and texts[0] == "allocated"
    assert "† measured once" in w.headline.text()


def test_times_measured_once_are_coloured_on_a_wider_scale(qtbot, rts_runs):
    """PROF CPU 0.021 -> 0.033 s (+57 %, measured once) was as red as the exact +54.5 %
    allocation; now it is pale, a change of a few percent in a time is neutral, and a
    time that tripled (GC CPU) is still strong."""
    from profdiff.viewer.qt.rts_view import RtsView

    w = RtsView(align(rts_runs, mode="flat"))
    qtbot.addWidget(w)

    def depth(key: str) -> int:  # how far the Δ cell's colour is from white
        bg = w.table.row_index(key).siblingAtColumn(3).data(Qt.ItemDataRole.BackgroundRole)
        return 0 if bg is None else 765 - sum(bg.color().getRgb()[:3])

    alloc, prof = depth("bytes_allocated"), depth("prof_cpu_s")
    assert 0 < prof < alloc / 2
    assert depth("gen0_max_pause_s") == 0  # 110.6 -> 114.2 ms: +3 %, one run each
    assert depth("gc_cpu_s") >= alloc * 0.8  # 1.531 -> 4.834 s


def test_rts_view_of_one_run_has_no_timed_mark(qtbot, rts_runs):
    from profdiff.viewer.qt.rts_view import RtsView

    w = RtsView(align(rts_runs[:1], mode="flat"))
    qtbot.addWidget(w)
    assert w.table.row_index("mut_cpu_s").data() == "MUT CPU"
    assert "measured once" not in w.headline.text()


def test_totals_model_flat_and_three_runs(qtbot, rts_runs, model_tester):
    from profdiff.viewer.qt.totals_table import TotalsTable, totals_data

    third = ghc_rts_summary.read(DATA / "hs-ad-v1.stats.txt")
    cmp = align([rts_runs[0], rts_runs[1], third], mode="flat")
    t = TotalsTable(totals_data(cmp, ["bytes_allocated", "num_gcs"]))
    qtbot.addWidget(t)
    m = t.model
    model_tester(m)
    assert m.flat and m.rowCount() == 2
    assert m.columnCount() == 1 + 3 + 2 * 2
    row = [m.index(0, c).data() for c in range(m.columnCount())]
    assert row[4:] == ["+3,643,911,680 B", "×1.545", "0", "="]
    # identical in runs 0 and 2 only: not greyed (run 1 differs)
    assert m.index(0, 1).data(Qt.ItemDataRole.ForegroundRole) is None


# ------------------------------------------------------------------------------------------
# ticky
# ------------------------------------------------------------------------------------------
def test_ticky_closures_first_row_and_identical(qtbot, ticky_runs, model_tester):
    from profdiff.viewer.qt.ticky_view import NOTE_ROLE, TickyClosuresView

    w = TickyClosuresView(align(ticky_runs, mode="flat"))
    qtbot.addWidget(w)
    m = w.model
    model_tester(m)
    first = m.index(0, 0)
    assert first.data().startswith("$wevalDelta")
    assert first.siblingAtColumn(_col(m, "value", "alloc", 0)).data() == "246,906,880"
    assert first.siblingAtColumn(_col(m, "value", "alloc", 1)).data() == "495,206,400"
    assert first.siblingAtColumn(_col(m, "delta", "alloc")).data() == "+248,299,520"
    note_col = _col(m, "note")
    assert first.siblingAtColumn(note_col).data() == ""
    # Alloc'd is zero in both files (no -ticky-allocd): its columns are hidden
    assert not any(c.metric == "allocd" for c in m.columns)
    assert "hidden" in w.summary.text()
    # identical rows: "=" and grey; e.g. AD.Dual.$wmulD has 5,184,128 entries in both
    ident = [r for r in range(m.rowCount()) if m.index(r, note_col).data() == "="]
    assert len(ident) == int(m.identical.sum()) > 20
    mul = next(r for r in range(m.rowCount()) if m.index(r, 0).data().startswith(
        "AD.Dual.$wmulD"))
    assert m.index(mul, note_col).data() == "="
    assert m.index(mul, 0).data(NOTE_ROLE)["identical"]
    assert m.index(mul, 0).data(Qt.ItemDataRole.ForegroundRole).color().name() == "#969696"
    # closures of one file only are marked
    new = next(r for r in range(m.rowCount())
               if m.index(r, 0).data().startswith("AD.Eval.backprop2{v r47d}"))
    assert m.index(new, note_col).data() == "only in new"
    # GHC's renumbered float-out (lvl1{v r4Bm} in v1, lvl{v r47i} in v2: same entries and
    # bytes) is one closure, shown under the baseline's name, identical
    lvl = next(r for r in range(m.rowCount()) if m.index(r, 0).data() ==
               "↔ lvl1{v r4Bm} (AD.Eval) (fun,se)")  # ↔: matched under two names
    assert m.index(lvl, note_col).data() == "="
    assert not any(m.index(r, 0).data().startswith("lvl{v r47i}") for r in range(m.rowCount()))
    # hide identical
    n = m.rowCount()
    w.hide_identical.setChecked(True)
    assert m.rowCount() == n - len(ident)
    assert m.index(0, 0).data().startswith("$wevalDelta")


def test_ticky_ambiguous_and_sum_duplicates(qtbot, model_tester):
    from profdiff.viewer.qt.ticky_view import NOTE_ROLE, TickyClosuresView, ambiguous_keys

    runs = [ghc_ticky.read(DATA / f) for f in ("ghc-7.x-haskell-opengl-Modern-Main.ticky",
                                               "ghc-7.x-haskell-opengl-src-Main.ticky")]
    w = TickyClosuresView(align(runs))
    qtbot.addWidget(w)
    m = w.model
    model_tester(m)
    amb = ambiguous_keys(w.cmp)
    assert len(amb) == 14
    key = "Engine.Core.Types\x1fsat in $fHasAABBGameObject"
    assert amb[key][0] == 2
    rows = [r for r in range(m.rowCount()) if m.index(r, 0).data(NOTE_ROLE)["ambiguous"]]
    n_tree = m.rowCount()
    assert len(rows) == int(np.isin(w.cmp.keys, list(amb)).sum())
    notes = [m.index(r, _col(m, "note")).data() for r in rows]
    assert all("ambiguous" in s for s in notes)
    # sum duplicates: one row per key, values are the per-key sums of the table rows
    w.sum_dups.setChecked(True)
    m2 = w.model
    model_tester(m2)
    assert w.cmp.mode == "flat"
    assert m2.rowCount() < n_tree
    r = int(np.flatnonzero(w.cmp.keys == key)[0])
    p = runs[0]
    nodes = np.flatnonzero(p.frames.key[p.frame] == key)
    assert len(nodes) == 2
    assert w.cmp.values["entries"][r, 0] == p.values["entries"][nodes].sum()
    assert "sum of 2" in m2.notes[r]


def test_ticky_counters_panel(qtbot, ticky_runs, model_tester):
    from profdiff.viewer.qt.ticky_view import TickyCountersView

    w = TickyCountersView(align(ticky_runs, mode="flat"))
    qtbot.addWidget(w)
    m = w.table.model
    model_tester(m)
    groups = [m.index(g, 0).data() for g in range(m.rowCount())]
    assert groups[0] == "Allocation" and groups[-1] == "Raw counters"
    at = w.table.row_index("alloc_total")
    # ALLOC_HEAP_tot: 1,513,877,128 (v1) and 1,765,471,384 (v2)
    assert [at.siblingAtColumn(c).data() for c in (1, 2)] == ["1,513,877,128 B",
                                                              "1,765,471,384 B"]
    raw = w.table.row_index("raw:ALLOC_HEAP_ctr")
    assert [raw.siblingAtColumn(c).data() for c in (1, 2)] == ["47,258,867", "55,988,468"]
    # zero everywhere (no update frames squeezed) -> hidden until asked for
    assert not w.table.row_index("updates_squeezed").isValid()
    w.show_zero.setChecked(True)
    assert w.table.row_index("updates_squeezed").isValid()
    h = w.histograms["RET_NEW"]
    labels = [h.verticalHeaderItem(i).text() for i in range(h.rowCount())]
    assert labels[-1] == "total" and "arity 2" in labels
    i2 = labels.index("arity 2")
    assert h.item(i2, 0).text() == "18,910,682" and h.item(i2, 1).text() == "98.3"
    assert h.item(h.rowCount() - 1, 0).text() == "19,244,616"


def test_row_index_missing_key(qtbot, rts_runs):
    from profdiff.viewer.qt.totals_table import TotalsTable, totals_data

    t = TotalsTable(totals_data(align(rts_runs, mode="flat")))
    qtbot.addWidget(t)
    assert t.row_index("no_such_key") == QModelIndex()


def test_totals_table_opens_and_fits_when_first_shown(qtbot, rts_runs):
    """Built hidden (the window's "Run totals" tab), the table neither expands nor sizes
    its columns until it is shown; then its groups are open and its columns fit, as a
    table given its data while visible is at once."""
    from profdiff.viewer.qt.rts_view import RTS_GROUPS, rts_keys
    from profdiff.viewer.qt.totals_table import TotalsTable, totals_data

    cmp = align(rts_runs, mode="flat")
    data = totals_data(cmp, rts_keys(cmp), rules=RTS_GROUPS)  # the RTS tab's groups
    hidden = TotalsTable(data)
    qtbot.addWidget(hidden)
    m = hidden.model
    groups = [m.index(g, 0) for g in range(m.rowCount())]
    assert not m.flat and len(groups) >= 2
    assert not any(hidden.view.isExpanded(g) for g in groups)
    hidden.show()
    qtbot.waitExposed(hidden)
    assert all(hidden.view.isExpanded(g) for g in groups)
    assert hidden.view.columnWidth(0) >= 220

    shown = TotalsTable()
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    shown.set_data(data, collapsed=[data.groups[0][0]])
    g0, g1 = (shown.model.index(g, 0) for g in (0, 1))
    assert not shown.view.isExpanded(g0) and shown.view.isExpanded(g1)
    assert shown.view.columnWidth(0) >= 220
