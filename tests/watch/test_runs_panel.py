"""Watch mode in the app: runs panel, plots, and in-place updates of the main window."""

from __future__ import annotations

import pytest
from tool_requirements import require_module
from watch_helpers import SETTLE, copy

require_module("PySide6", "pip install PySide6-Essentials")
require_module("pytestqt", "pip install pytest-qt")

from PySide6.QtCore import QSettings, Qt  # noqa: E402

from profdiff.viewer.qt.runs_panel import (  # noqa: E402
    RunsPanel,
    install_watch_action,
    is_watch_folder,
    open_watch,
)

V1_ALLOC = 4291393792
V2_ALLOC = 6560334592


@pytest.fixture
def panel(qtbot, tmp_path):
    p = RunsPanel(str(tmp_path), settle=SETTLE, refresh_ms=20)
    qtbot.addWidget(p)
    p.start()
    yield p
    p.shutdown()
    assert not p.watching


def test_runs_panel_rows_modes_notification_and_plots(qtbot, tmp_path, panel):
    qtbot.waitUntil(lambda: panel.scan_done, timeout=10000)
    copy("v1/ad.prof", tmp_path / "v1" / "ad.prof")
    copy("v1/ad.stats.txt", tmp_path / "v1" / "ad.stats.txt")
    qtbot.waitUntil(lambda: len(panel.table) == 1 and bool(panel.table[0].attached),
                    timeout=10000)
    with qtbot.waitSignal(panel.notified, timeout=10000) as sig:
        copy("v2/ad.prof", tmp_path / "v2" / "ad.prof")
    assert sig.args[0].startswith("v2/ad.prof vs v1/ad.prof: addGrad: +2.18 GB alloc")
    assert panel.note.isVisible() or not panel.isVisible()
    assert panel.last_changes[0] == "addGrad: +2.18 GB alloc"
    m = panel.model
    assert m.rowCount() == 2
    texts = [m.data(m.index(0, c)) for c in range(m.columnCount())]
    assert texts[1] == "v1/ad.prof + ad.stats.txt"
    assert texts[2] == "ghc-prof + ghc-rts-s"
    assert texts[3] == "ok"
    headers = [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())]
    assert headers[:4] == ["time", "file", "format", "status"]
    assert "4,291,393,792 B" in texts          # total alloc of the .prof
    assert "2,690,763,320 B" in texts          # bytes copied of the merged -s log
    # plot of a total over the runs
    i = panel.total_box.findData("total_alloc_bytes")
    panel.total_box.setCurrentIndex(i)
    xs, ys = panel.total_series()
    assert ys.tolist() == [V1_ALLOC, V2_ALLOC]
    items = panel.total_plot.getPlotItem().listDataItems()
    assert items and list(items[0].yData) == [V1_ALLOC, V2_ALLOC]
    # plot of one cost centre's metric over the runs
    panel.frame_edit.setText("addGrad")
    panel.frame_metric_box.setCurrentIndex(panel.frame_metric_box.findData("alloc_pct"))
    panel.update_plots()
    ys = list(panel.frame_plot.getPlotItem().listDataItems()[0].yData)
    assert ys[0] == pytest.approx(0.0, abs=0.05) and ys[1] == pytest.approx(33.3, abs=0.05)
    # pin the newest as baseline, then a third run lands: compared with the pinned one
    panel.pin(panel.table[1])
    assert panel.mode == "pinned"
    with qtbot.waitSignal(panel.comparedChanged, timeout=10000) as sig:
        copy("noise-v1/run1/ad.prof", tmp_path / "r1" / "ad.prof")
    assert [panel.table.label(r) for r in sig.args[0]] == ["v2/ad.prof", "r1/ad.prof"]
    assert panel.last_changes[0] == "addGrad: −2.18 GB alloc"
    # pick two runs by hand
    panel.pick([panel.table[0], panel.table[2]])
    assert [panel.table.label(r) for r in panel.shown] == ["v1/ad.prof", "r1/ad.prof"]
    # deletion updates the list
    (tmp_path / "v2" / "ad.prof").unlink()
    qtbot.waitUntil(lambda: m.rowCount() == 2, timeout=10000)
    assert panel.table.pinned is None


@pytest.fixture
def window(qtbot, tmp_path):
    from profdiff.viewer.qt.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, synchronous=True)
    qtbot.addWidget(win)
    return win


def _row_by_path(cmp, labels: list[str]) -> int:
    for r in range(cmp.n_rows):
        if cmp.path_labels(r) == labels:
            return r
    return -1


def test_main_window_updates_in_place_keeping_expansion_and_filter(qtbot, tmp_path, window):
    folder = tmp_path / "runs"
    folder.mkdir()
    assert is_watch_folder(folder) and not is_watch_folder(tmp_path / "nope")
    panel = open_watch(window, str(folder), settle=SETTLE, refresh_ms=20)
    assert window.tabs.currentWidget() is panel
    copy("v1/ad.prof", folder / "v1" / "ad.prof")
    qtbot.waitUntil(lambda: len(window.runs) == 1, timeout=10000)
    cmp = window.comparison
    # expand a deep row by hand (deeper than the default expansion) and select it
    deep = next(r for r in range(cmp.n_rows)
                if cmp.depth[r] >= 4 and len(cmp.children(r)) > 0)
    labels = cmp.path_labels(deep)
    # filter first (filtering re-lays out the tree), then expand and select by hand
    name = str(cmp.name[deep])
    window.filter_edit.setText(name)
    window.apply_filter()
    window.diff.expand_rows([deep])
    window.diff.select_row(deep)
    assert deep in window.diff.expanded_rows() and window.diff.current_row() == deep
    copy("v2/ad.prof", folder / "v2" / "ad.prof")
    qtbot.waitUntil(lambda: len(window.runs) == 2, timeout=10000)
    new = window.comparison
    assert [p.path.rsplit("/", 2)[-2] for p in new.runs] == ["v1", "v2"]
    row = _row_by_path(new, labels)
    assert row >= 0
    assert row in window.diff.expanded_rows()
    assert window.diff.current_row() == row
    assert window.filter_edit.text() == name
    assert window.diff.layout_.visible is not None  # the filter is applied to the new rows
    assert "addGrad: +2.18 GB alloc" in window.statusBar().currentMessage()
    # closing the window stops the watcher
    window.close()
    qtbot.waitUntil(lambda: not panel.watching, timeout=5000)


def test_watch_folder_menu_action(qtbot, window):
    act = install_watch_action(window)
    assert install_watch_action(window) is act
    names = [a.objectName() for a in act.parent().menuBar().actions()[0].menu().actions()]
    assert "watchFolder" in names
    assert act.text() == "&Watch folder…"


def test_landing_runs_align_in_a_worker(qtbot, tmp_path):
    """A window that loads in the thread pool: a landing run is aligned there too, and the
    note with the top changes comes once the views have swapped."""
    from profdiff.viewer.qt.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, synchronous=False)
    qtbot.addWidget(win)
    folder = tmp_path / "runs"
    folder.mkdir()
    panel = open_watch(win, str(folder), settle=SETTLE, refresh_ms=20)
    copy("v1/ad.prof", folder / "v1" / "ad.prof")
    qtbot.waitUntil(lambda: len(win.runs) == 1, timeout=20000)
    with qtbot.waitSignal(panel.notified, timeout=20000) as sig:
        copy("v2/ad.prof", folder / "v2" / "ad.prof")
    assert sig.args[0].startswith("v2/ad.prof vs v1/ad.prof: addGrad: +2.18 GB alloc")
    assert len(win.runs) == 2 and not win.aligning  # the views swapped before the note
    assert panel.comparison is win.flat_comparison
    win.close()


def _axis_ticks(plot, name: str) -> list[tuple[float, str]]:
    ticks = plot.getAxis(name)._tickLevels  # noqa: SLF001 - pyqtgraph keeps set ticks here
    return list(ticks[0]) if ticks else []


def test_third_run_counts_plots_by_run_and_follows_the_selection(qtbot, tmp_path, window):
    """Issue 19 item 7: the count follows a third run; ticks are the runs' files at
    integer x; the y axis names its unit; points carry their file; the cost-centre plot
    starts on the top change and then follows the tree's selection."""
    folder = tmp_path / "runs"
    folder.mkdir()
    panel = open_watch(window, str(folder), settle=SETTLE, refresh_ms=20)
    tabs = window.tabs
    assert tabs.tabText(tabs.indexOf(panel)) == "Runs (0)"
    qtbot.waitUntil(lambda: panel.scan_done, timeout=10000)
    copy("v1/ad.prof", folder / "v1" / "ad.prof")
    qtbot.waitUntil(lambda: len(window.runs) == 1, timeout=10000)
    with qtbot.waitSignal(panel.notified, timeout=10000):
        copy("v2/ad.prof", folder / "v2" / "ad.prof")
    with qtbot.waitSignal(panel.notified, timeout=10000) as sig:
        copy("noise-v1/run1/ad.prof", folder / "r1" / "ad.prof")
    assert len(panel.table) == 3
    assert panel.title.text().endswith("— 3 runs")
    assert tabs.tabText(tabs.indexOf(panel)) == "Runs (3)"
    assert "r1/ad.prof" in window.windowTitle() or "ad.prof" in window.windowTitle()
    labels = [panel.table.label(r) for r in panel.table.runs]
    # the totals plot: one point per run at 0, 1, 2, ticks labelled by file, unit on y
    panel.total_box.setCurrentIndex(panel.total_box.findData("total_alloc_bytes"))
    item = panel.total_plot.getPlotItem()
    line = item.listDataItems()[0]
    assert list(line.xData) == [0.0, 1.0, 2.0]
    assert list(line.yData) == [V1_ALLOC, V2_ALLOC, V1_ALLOC]
    assert _axis_ticks(panel.total_plot, "bottom") == [(0.0, labels[0]), (1.0, labels[1]),
                                                        (2.0, labels[2])]
    left = panel.total_plot.getAxis("left")
    assert left.labelUnits == "B" and left.labelText == "total alloc"
    dots = [i for i in item.items if type(i).__name__ == "ScatterPlotItem"]
    assert dots and [p.data().split("\n")[0] for p in dots[0].points()] == labels
    assert dots[0].points()[1].data().endswith("6,560,334,592 B")
    # the cost-centre plot: the top change of the notification, without typing
    top = sig.args[0].split(": ", 1)[1].split(":")[0]
    assert panel.frame_edit.text() == top == "addGrad"
    fplot = panel.frame_plot.getPlotItem().listDataItems()
    assert fplot and len(fplot[0].yData) == 3
    assert panel.frame_edit.placeholderText() == "name, e.g. addGrad"
    assert "addGrad" in set(window.comparison.name.tolist())
    # it follows the row selected in the tree
    cmp = window.comparison
    row = next(r for r in range(cmp.n_rows) if cmp.name[r] == "evalDelta")
    model = window.diff.models[0]
    window.diff.expand_rows([row])
    window.diff.tree.setCurrentIndex(model.index_for_row(row))  # what a click does
    assert panel.frame_edit.text() == "evalDelta"
    assert panel.frame_plot.getPlotItem().titleLabel.text.startswith("evalDelta")
    # typing a name stops following
    panel.frame_edit.setFocus()
    qtbot.keyClicks(panel.frame_edit, "x")
    assert not panel.follow_box.isChecked()
    window.close()


def test_reading_options_reach_a_watched_folder(qtbot, tmp_path, window):
    """The window's reading options read the watched runs too; changed in File ▸ Reading
    options, the folder is watched again and its runs read with the new ones."""
    import shutil
    from pathlib import Path

    vm = Path(__file__).resolve().parents[1] / "data" / "export" / "c-vm-v1.perf.script.txt.gz"
    folder = tmp_path / "runs"
    folder.mkdir()
    window.spec = window.spec.replace(reader_options=(("group_by", "symbol"),))
    panel = open_watch(window, str(folder), settle=SETTLE, refresh_ms=20)
    shutil.copyfile(vm, folder / vm.name)
    qtbot.waitUntil(lambda: len(window.runs) == 1, timeout=10000)
    assert window.runs[0].meta["group_by"] == "symbol"
    window.set_reading_options({}, False)  # back to the default
    assert window.watch_panel is not panel and not panel.watching
    qtbot.waitUntil(lambda: len(window.runs) == 1
                    and window.runs[0].meta["group_by"] == "symbol+dso", timeout=10000)
    window.close()
