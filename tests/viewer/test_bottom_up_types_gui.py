"""The "Bottom up" and "Allocated types" tabs of the main window on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QAbstractItemModelTester

from viewer.qt.alloc_types_view import AllocTypesView
from viewer.qt.bottom_up_view import BottomUpView
from viewer.qt.main_window import MainWindow

DATA = Path(__file__).parents[1] / "data"
PERF = [DATA / f"perf/c-vm/v{i}/perf.script.txt.gz" for i in (1, 2)]
TICKY = [DATA / f"ghc-ticky/hs-ad-v{i}.ticky.txt" for i in (1, 2)]
JULIA = [DATA / "pprof/julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz",
         DATA / "pprof/julia-1.9-pprofjl-heapsnapshotparser-alloc-profile.pb.gz"]


@pytest.fixture
def win(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.resize(1400, 800)
    w.show()
    return w


def _tabs(w) -> dict[str, object]:
    return {w.tabs.tabText(i): w.tabs.widget(i) for i in range(w.tabs.count())}


def _tester(model) -> QAbstractItemModelTester:
    return QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)


def test_bottom_up_tab_for_perf_is_lazy_and_shows_callers(win):
    win.load_paths([str(p) for p in PERF])
    tabs = _tabs(win)
    view = tabs["Bottom up"]
    assert isinstance(view, BottomUpView)
    assert not view.computed  # opening files did not invert anything
    assert "Allocated types" not in tabs
    win.show_view("bottom-up")
    assert win.tabs.currentWidget() is view and view.computed and view.error is None
    model = view.diff.models[0]
    tester = _tester(model)
    assert model.rowCount() > 5
    # hottest root first: the leaf function where the samples were spent
    top = model.index(0, 0)
    assert top.data() == "vm_run.constprop.0"
    cmp = view.cmp
    r = int(top.internalId())
    assert cmp.values["self_samples"][r].tolist() == [2982, 4613]
    # its only caller below it
    assert model.rowCount(top) == 1
    assert model.index(0, 0, top).data() == "run_benchmark.constprop.0.isra.0"
    model.sort(3, Qt.SortOrder.DescendingOrder)
    assert tester is not None
    model.sort(3, Qt.SortOrder.DescendingOrder)  # back to hottest first
    # selecting a row fills the window's details pane with the bottom-up row
    child = int(model.index(0, 0, top).internalId())
    view.diff.select_row(child)
    view.diff.rowSelected.emit(child)
    assert "run_benchmark.constprop.0.isra.0" in win.details.toPlainText()


def test_bottom_up_follows_new_runs(win):
    win.load_paths([str(p) for p in PERF])
    win.show_view("bottom-up")
    first = _tabs(win)["Bottom up"]
    assert first.computed
    win.swap_runs()  # new comparison: the tab is rebuilt (and lazy again if not shown)
    view = _tabs(win)["Bottom up"]
    view.ensure()
    r = next(i for i in range(view.cmp.n_rows)
             if view.cmp.parent[i] < 0 and view.cmp.name[i] == "vm_run.constprop.0")
    assert view.cmp.values["self_samples"][r].tolist() == [4613, 2982]


def test_no_bottom_up_tab_for_flat_formats(win):
    win.load_paths([str(p) for p in TICKY])
    assert win.comparison is not None
    tabs = _tabs(win)
    assert "Bottom up" not in tabs and "Allocated types" not in tabs
    assert "Ticky closures" in tabs


def test_allocated_types_tab_for_julia_alloc_profiles(win):
    win.load_paths([str(p) for p in JULIA])
    tabs = _tabs(win)
    assert "Bottom up" in tabs  # pprof allocation profiles have call trees too
    view = tabs["Allocated types"]
    assert isinstance(view, AllocTypesView)
    win.show_view("types")
    assert win.tabs.currentWidget() is view
    model = view.model
    _tester(model)
    assert model.rowCount() == 14
    assert model.headerData(0, Qt.Orientation.Horizontal) == "allocated type"
    rows = {model.index(i, 0).data(): i for i in range(model.rowCount())}
    i = rows["Vector{Int32}"]
    status_col = next(c for c, col in enumerate(model.columns) if col.kind == "status")
    assert model.index(i, status_col).data() == "added"
    bytes_new = next(c for c, col in enumerate(model.columns)
                     if col.kind == "value" and col.metric == "alloc_bytes" and col.run == 1)
    assert model.index(i, bytes_new).data() == "288"
    # largest byte growth first
    assert model.index(0, 0).data() == "Profile.Allocs.UnknownType"
    assert "3,192 B → 5,008 B" in view.note.text()
    for c in range(model.columnCount()):
        model.sort(c, Qt.SortOrder.AscendingOrder)
