"""Issue 19 in the window: runs told apart by their labels (item 1), drag and drop
(item 9), ``--screenshot`` showing the window the user gets (item 11), the first size.

Real GHC reports of one program, copied into ``v1/ v2/ v3/`` under one file name."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent

from profdiff.viewer.qt.main_window import MainWindow

DATA = Path(__file__).parents[1] / "data" / "hs-ad"
SOURCES = {"v1": DATA / "v1/ad.prof", "v2": DATA / "v2/ad.prof",
           "v3": DATA / "noise-v1/run2/ad.prof"}
ALLOC = {"v1": 4_291_393_792, "v2": 6_560_334_592}  # the files' "total alloc" lines


@pytest.fixture
def three(tmp_path):
    out = []
    for v, src in SOURCES.items():
        (tmp_path / v).mkdir()
        shutil.copy(src, tmp_path / v / "x.prof")
        out.append(str(tmp_path / v / "x.prof"))
    return out


def _drop(widget, paths) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    ev = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                    Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    widget.dropEvent(ev)


# ------------------------------------------------------------------------------------------
# labels
# ------------------------------------------------------------------------------------------
def test_three_runs_of_one_name_are_told_apart_everywhere(make_window, three):
    w = make_window()
    w.load_paths(three)
    assert w.windowTitle() == "v1/x.prof vs v2/x.prof vs v3/x.prof — profdiff"
    assert w.side.titles[0].text().endswith("[0] v1/x.prof")
    assert w.side.titles[1].text().endswith("[2] v3/x.prof")
    combo = w.side.run_combos[1]
    assert [combo.itemText(i) for i in range(combo.count())] == \
        ["[0] v1/x.prof (baseline)", "[1] v2/x.prof", "[2] v3/x.prof"]
    assert [a.text() for a in w.baseline_menu.actions()] == \
        ["[0] v1/x.prof", "[1] v2/x.prof", "[2] v3/x.prof"]
    header = w.summary.text()  # the run header above the tabs
    assert all(f"<td>{v}/x.prof</td>" in header for v in SOURCES), header
    from profdiff.viewer.qt.flame_view import run_labels

    assert run_labels(w.comparison) == ["v1/x.prof", "v2/x.prof", "v3/x.prof"]
    tip = w.diff.models[0].headerData(5, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "v" in tip and "/x.prof" in tip, tip  # value columns name their run by label


def test_the_loading_bar_names_runs_by_their_labels(qtbot, tmp_path, three):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.load_paths(three)
    assert w.progress_label.text() == "Loading v1/x.prof, v2/x.prof, v3/x.prof"
    qtbot.waitUntil(lambda: w.comparison is not None and not w.loading, timeout=60_000)
    assert w.comparison.n_runs == 3


def test_a_label_set_in_the_window_is_used_everywhere_and_follows_its_file(
        make_window, three, tmp_path, monkeypatch):
    w = make_window()
    w.load_paths(three)
    from PySide6.QtWidgets import QInputDialog

    asked = []
    monkeypatch.setattr(QInputDialog, "getText",
                        lambda *a, **k: (asked.append(k.get("text")), ("before", True))[1])
    w.tabs.setCurrentWidget(w.side)
    w.side._rename(0)  # what a double-click on the left pane's title does
    assert asked == ["v1/x.prof"]
    assert w.windowTitle() == "before vs v2/x.prof vs v3/x.prof — profdiff"
    assert w.side.titles[0].text().endswith("[0] before")
    assert w.comparison.labels == ["before", "v2/x.prof", "v3/x.prof"]
    assert w.flat_comparison.labels == ["before", "v2/x.prof", "v3/x.prof"]
    # the label belongs to the file: another baseline keeps it on v1
    w.set_baseline(1)
    assert w.comparison.baseline == 1
    assert w.windowTitle() == "before vs v2/x.prof vs v3/x.prof — profdiff"
    assert w.export_csv(str(tmp_path / "t.csv"))
    head = next(ln for ln in (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()
                if not ln.startswith("#"))
    assert "[before]" in head and "[v3/x.prof]" in head
    w.set_run_label(0, "")  # back to the path suffix
    assert w.windowTitle() == "v1/x.prof vs v2/x.prof vs v3/x.prof — profdiff"


def test_double_click_on_a_pane_title_asks_for_the_label(make_window, three, qtbot,
                                                         monkeypatch):
    w = make_window(show=True)
    w.load_paths(three[:2])
    from PySide6.QtWidgets import QInputDialog

    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("after", True))
    w.tabs.setCurrentWidget(w.side)
    qtbot.mouseDClick(w.side.titles[1], Qt.MouseButton.LeftButton)
    assert w.windowTitle() == "v1/x.prof vs after — profdiff"


# ------------------------------------------------------------------------------------------
# drag and drop
# ------------------------------------------------------------------------------------------
def test_dropped_files_are_ordered_by_label_not_by_age(make_window, tmp_path):
    paths = []
    for v, src in (("v10", SOURCES["v3"]), ("v2", SOURCES["v2"]), ("v1", SOURCES["v1"])):
        (tmp_path / v).mkdir()
        shutil.copy(src, tmp_path / v / "x.prof")
        paths.append(tmp_path / v / "x.prof")
    for age, p in enumerate(paths):  # v1 (the baseline) is the newest copy
        os.utime(p, (1_000_000 + age * 1000, 1_000_000 + age * 1000))
    w = make_window()
    _drop(w, paths)
    assert [Path(p.path).parent.name for p in w.runs] == ["v1", "v2", "v10"]
    assert w.comparison.runs[0].totals["total_alloc_bytes"] == ALLOC["v1"]
    msg = w.statusBar().currentMessage()
    assert msg.startswith("Baseline: v1/x.prof, current: v10/x.prof"), msg


def test_one_file_dropped_onto_runs_adds_a_run(make_window, three):
    w = make_window()
    w.load_paths(three[:2])
    _drop(w, [three[2]])
    assert [Path(p.path).parent.name for p in w.runs] == ["v1", "v2", "v3"]
    assert w.comparison.current == 2 and w.comparison.baseline == 0
    assert "Added v3/x.prof as run [2]" in w.statusBar().currentMessage()
    # onto a pane it still replaces that pane's run (the target is explicit)
    _drop(w.side.panes[0], [three[1]])
    assert Path(w.runs[0].path).parent.name == "v2"


def test_a_dropped_folder_is_watched(make_window, three, tmp_path, qtbot):
    w = make_window()
    _drop(w, [tmp_path])
    assert w.watch_panel is not None
    assert w.tabs.indexOf(w.watch_panel) >= 0
    assert w.statusBar().currentMessage().startswith(f"Watching {tmp_path}")
    from profdiff.viewer.qt.runs_panel import close_watch

    close_watch(w)


def test_the_drag_overlay_says_what_a_drop_does(make_window, three):
    from profdiff.viewer.qt.window_io import drop_hint

    assert drop_hint(list(reversed(three)), 0) == \
        "Drop to compare, ordered by name (baseline: v1/x.prof)"
    assert drop_hint(three[:1], 2).startswith("Drop to add as one more run")
    assert drop_hint([str(Path(three[0]).parent)], 2).startswith("Drop to watch this folder")


# ------------------------------------------------------------------------------------------
# --screenshot is the live window
# ------------------------------------------------------------------------------------------
def _state(w) -> dict:
    """What the user sees: the tab, the rows open in it, the current row."""
    view = w.tabs.currentWidget()
    rows = view.expanded_rows().tolist() if hasattr(view, "expanded_rows") else None
    cur = view.current_row() if hasattr(view, "current_row") else None
    return {"tab": w.tabs.tabText(w.tabs.currentIndex()), "expanded": rows, "current": cur,
            "details": w.details.toPlainText().split("\n", 1)[0]}


def _args(*argv: str):
    from profdiff.viewer.options import build_app_parser, spec_from_args, view_from_args

    args = build_app_parser().parse_args(list(argv))
    return args, spec_from_args(args, "flat"), view_from_args(args)


@pytest.mark.parametrize("extra", [(), ("--view", "side"), ("--expand", "hot"),
                                   ("--view", "flat")])
def test_screenshot_shows_the_state_of_the_live_window(qtbot, tmp_path, three, extra):
    from PySide6.QtWidgets import QApplication

    from profdiff.viewer.qt.app import open_live, prepare_screenshot

    argv = [three[0], three[1], *extra]
    live = MainWindow(settings=QSettings(str(tmp_path / "a.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(live)
    args, spec, view = _args(*argv)
    open_live(live, args, spec, view)  # loads in the thread pool, as the app does
    qtbot.waitUntil(lambda: live.comparison is not None and not live.loading, timeout=60_000)
    live.wait_for_noise()
    qtbot.wait(50)
    shot = MainWindow(settings=QSettings(str(tmp_path / "b.ini"), QSettings.Format.IniFormat),
                      synchronous=True)
    qtbot.addWidget(shot)
    args, spec, view = _args(*argv, "--screenshot", str(tmp_path / "x.png"))
    assert prepare_screenshot(QApplication.instance(), shot, args, spec, view) == 0
    a, b = _state(live), _state(shot)
    assert a == b
    # a comparison of call trees opens on its Summary (README: the tabs per format)
    want = {(): "Summary", ("--view", "side"): "Side by side", ("--expand", "hot"):
            "Summary", ("--view", "flat"): "By cost centre"}[extra]
    assert a["tab"] == want
    if extra != ("--view", "flat"):
        # the details pane shows the current row, and that row is on screen (its
        # ancestors are open) - the old screenshot expanded 3 levels and hid it
        view = shot.tabs.currentWidget()
        if not hasattr(view, "current_row"):  # the Summary: its links lead to the diff tree,
            for w in (live, shot):  # which opens along the culprit's path when first shown
                w.tabs.setCurrentWidget(w.diff)
            b = _state(shot)
            assert _state(live) == b
            view = shot.diff
        cmp = shot.comparison
        row = view.current_row()
        assert row >= 0 and b["details"] == str(cmp.name[row])
        anc = view.layout_.ancestors(row)[:-1]
        assert set(np.asarray(anc).tolist()) <= set(view.expanded_rows().tolist())


def test_screenshot_refuses_a_view_the_format_lacks(tmp_path, capsys):
    from profdiff.viewer.qt.app import main

    stats = Path(__file__).parents[1] / "data" / "ghc-rts"
    logs = [stats / "hs-ad-v1.stats.txt", stats / "hs-ad-v2.stats.txt"]  # +RTS -s: no heap
    rc = main([str(logs[0]), str(logs[1]), "--screenshot", str(tmp_path / "x.png"),
               "--view", "heap"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--view heap: this comparison has no such view; views: " in err
    assert not (tmp_path / "x.png").exists()


def test_screenshot_exits_2_when_an_input_failed(tmp_path, three, capsys):
    from profdiff.viewer.qt.app import main

    bad = tmp_path / "cut.prof"
    bad.write_bytes(b"\x00\x01 not a profile \xff" * 40)
    out = tmp_path / "x.png"
    rc = main([three[0], str(bad), three[1], "--screenshot", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "cut.prof" in err
    assert out.exists()  # the picture (with its error bar) is still written


# ------------------------------------------------------------------------------------------
# the first size
# ------------------------------------------------------------------------------------------
def test_first_start_opens_at_80_percent_of_the_screen(qtbot, tmp_path):
    from profdiff.viewer.qt.window_settings import DEFAULT_SCREEN_SHARE

    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=s)
    qtbot.addWidget(w)
    avail = w.screen().availableGeometry()
    assert (w.width(), w.height()) == (int(avail.width() * DEFAULT_SCREEN_SHARE),
                                       int(avail.height() * DEFAULT_SCREEN_SHARE))
    # a size the user chose is restored...
    w.resize(int(avail.width() * 0.9), int(avail.height() * 0.9))
    w.save_settings()
    w2 = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    assert (w2.width(), w2.height()) == (int(avail.width() * 0.9), int(avail.height() * 0.9))
    # ...a size saved on a bigger monitor never exceeds this screen...
    w2.resize(avail.width() * 3, avail.height() * 3)
    w2.save_settings()
    w3 = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w3)
    assert w3.width() <= avail.width() and w3.height() <= avail.height()
    # ...and a sliver (a window once squeezed to nothing) opens at the default size
    w3.resize(300, 200)
    w3.save_settings()
    w4 = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w4)
    assert w4.width() == int(avail.width() * DEFAULT_SCREEN_SHARE)


def test_the_label_option_names_runs_in_the_window(make_window, three):
    w = make_window()
    args, spec, view = _args(*three, "--label", "before", "--label", "after=" + three[2])
    w.open_spec(spec, view)
    assert w.windowTitle() == "before vs v2/x.prof vs after — profdiff"
    assert w.side.titles[1].text().endswith("[2] after")


def test_the_live_window_says_when_a_view_is_missing(make_window):
    from profdiff.viewer.qt.app import open_live

    stats = Path(__file__).parents[1] / "data" / "ghc-rts"
    w = make_window()
    args, spec, view = _args(str(stats / "hs-ad-v1.stats.txt"), str(stats / "hs-ad-v2.stats.txt"),
                             "--view", "heap")
    open_live(w, args, spec, view)
    assert "heap" not in w.available_views() and "rts" in w.available_views()
    msgs = " ".join(w.message_bar.messages)
    assert "--view heap: this comparison has no such view; views: " in msgs
    assert "rts" in msgs.split("views: ", 1)[1]
