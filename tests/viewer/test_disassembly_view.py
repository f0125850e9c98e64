"""The Disassembly tab over the c-vm pair: the lazy model (pytest-qt's model tester), the
summary panel, following jumps, the background load and its error, the window hook."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabWidget
from tool_requirements import require_tool

from profdiff.viewer.annotate import compare_function
from profdiff.viewer.qt.disassembly_view import (
    A_TEXT,
    B_PCT,
    B_TEXT,
    MARK,
    TARGET_ROW_ROLE,
    DisassemblyView,
    InstructionPairsModel,
    open_disassembly,
)
from profdiff.viewer.qt.instructions_hook import perf_row_target

CVM = Path(__file__).parent.parent / "data" / "perf" / "c-vm"
V1, V2 = CVM / "v1" / "perf.data", CVM / "v2" / "perf.data"


@pytest.fixture(scope="module")
def cvm_cmp(tmp_path_factory):
    require_tool("perf", "apt-get install linux-perf")
    require_tool("objdump", "apt-get install binutils")
    with pytest.MonkeyPatch.context() as mp:  # this host's ~/.debug must not count
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        return compare_function(V1, V2, "vm_run")


def test_model_passes_the_model_tester(qtmodeltester, cvm_cmp) -> None:
    model = InstructionPairsModel(cvm_cmp)
    qtmodeltester.check(model)
    assert model.rowCount() == len(cvm_cmp.pairs)


def test_cells_show_both_runs(cvm_cmp) -> None:
    model = InstructionPairsModel(cvm_cmp)
    assert model.index(0, A_TEXT).data() == "push %rbp" == model.index(0, B_TEXT).data()
    marks = {model.index(r, MARK).data() for r in range(model.rowCount())}
    assert marks == {"", "−", "+", "≈"}  # ≈: the same instruction with other registers
    b = cvm_cmp.runs[1]
    hot = int(np.argmax(b.samples))
    row = int(model.rows.row_of_b[hot])
    assert model.index(row, B_PCT).data() == f"{b.samples[hot] * 100 / b.total:.2f}"
    assert model.index(row, B_PCT).data(Qt.ItemDataRole.BackgroundRole) is not None


def test_double_click_follows_a_jump(qtbot, cvm_cmp) -> None:
    view = DisassemblyView("vm_run")
    qtbot.addWidget(view)
    view.set_result(cvm_cmp)
    model = view.model
    row = next(r for r in range(model.rowCount()) if model.target_row(r) >= 0)
    target = model.index(row, A_TEXT).data(TARGET_ROW_ROLE)
    view.table.doubleClicked.emit(model.index(row, A_TEXT))
    assert view.table.selectionModel().selectedRows()[0].row() == target
    html = view.summary.toHtml()
    assert "target of 18 sites" in html and "target of 17 sites" in html
    assert "Largest sample increase" in html
    assert "2,982 and 4,613 samples" in view.status.text()  # separated as everywhere else
    header = view.table.horizontalHeader()
    for c in range(model.columnCount()):  # every title whole ("A address" was cut)
        assert header.sectionSize(c) >= header.sectionSizeFromContents(c).width()


def test_open_in_background_and_errors(qtbot, tmp_path, monkeypatch) -> None:
    require_tool("perf", "apt-get install linux-perf")
    require_tool("objdump", "apt-get install binutils")
    monkeypatch.setenv("HOME", str(tmp_path))
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    view = open_disassembly(tabs, "vm_run", str(V1), str(V2))
    qtbot.waitUntil(lambda: view.model is not None, timeout=60_000)
    assert tabs.tabText(0) == "Disassembly: vm_run" and tabs.currentWidget() is view
    assert open_disassembly(tabs, "vm_run", str(V1), str(V2)) is view  # reused, not doubled
    assert tabs.count() == 1
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(V1, lone / "perf.data")  # no vm binary beside it
    bad = open_disassembly(tabs, "vm_run", str(lone / "perf.data"), str(V2))
    qtbot.waitUntil(lambda: "Cannot compare" in bad.status.text(), timeout=60_000)
    assert "was not found" in bad.status.text() and bad.model is None


def test_window_hook_on_perf_rows(make_window, qtbot, tmp_path, monkeypatch) -> None:
    require_tool("perf", "apt-get install linux-perf")
    require_tool("objdump", "apt-get install binutils")
    monkeypatch.setenv("HOME", str(tmp_path))
    w = make_window()
    w.load_paths([str(V1), str(V2)])
    w.show_view("flat")  # its comparison is aligned when the tab is first shown
    pane = w.flat.table  # "By cost centre": every function is a root row
    model = pane.model()
    cmp = model.cmp
    from profdiff.viewer.qt.models import ROW_ID_ROLE
    rows = [r for r in range(cmp.n_rows) if str(cmp.name[r]) == "vm_run.constprop.0"]
    assert perf_row_target(cmp, rows[0]) == ("vm_run.constprop.0", str(V1), str(V2))
    kernel = [r for r in range(cmp.n_rows) if str(cmp.name[r]).startswith("[")]
    assert kernel and all(perf_row_target(cmp, r) is None for r in kernel)
    idx = next(model.index(r, 0) for r in range(model.rowCount())
               if model.index(r, 0).data(ROW_ID_ROLE) in rows)
    before = w.tabs.count()
    pane.doubleClicked.emit(idx)
    assert w.tabs.count() == before + 1
    view = w.tabs.widget(before)
    assert isinstance(view, DisassemblyView)
    qtbot.waitUntil(lambda: view.model is not None, timeout=60_000)


def test_jump_column_counts_incoming_sites(cvm_cmp) -> None:
    from profdiff.viewer.qt.disassembly_view import A_JUMP, B_JUMP

    model = InstructionPairsModel(cvm_cmp)
    for col, k, row_of in ((A_JUMP, 0, model.rows.row_of_a), (B_JUMP, 1, model.rows.row_of_b)):
        top = cvm_cmp.summaries[k]["most_jumped_to"][0]
        cell = model.index(int(row_of[top["index"]]), col).data()
        assert f"← {top['jump_target_of']}" in cell


def test_arrows_are_painted(qtbot, cvm_cmp) -> None:
    from profdiff.viewer.qt.disassembly_view import A_ARROWS, B_ARROWS

    view = DisassemblyView("vm_run")
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.set_result(cvm_cmp)
    view.show()
    view.table.clearSelection()  # the selection is blue too
    img = view.table.viewport().grab().toImage()
    for col in (A_ARROWS, B_ARROWS):
        x0 = view.table.columnViewportPosition(col)
        w = view.table.columnWidth(col)
        blue = sum(1 for y in range(0, img.height(), 3) for x in range(x0, x0 + w)
                   if img.pixelColor(x, y).getRgb()[:3] == (40, 90, 200))
        assert blue > 10  # the dispatch loop's backward jumps, drawn in blue
