"""``MainWindow.set_runs_async``: runs already loaded (a watched folder's) are aligned in
the thread pool; the views swap on the GUI thread keeping what the user looked at, and a
newer request drops an older result."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from synth_profiles import VIEWER_DATA

from profdiff.parsers import load
from profdiff.viewer.qt.main_window import MainWindow

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"
DEADLINE_MS = 30_000


def _window(qtbot, tmp_path: Path, synchronous: bool = False) -> MainWindow:
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=synchronous)
    qtbot.addWidget(w)
    w.resize(1200, 700)
    w.show()
    return w


def _row_by_path(cmp, labels: list[str]) -> int:
    return next((r for r in range(cmp.n_rows) if cmp.path_labels(r) == labels), -1)


def test_set_runs_async_keeps_expansion_and_selection(qtbot, tmp_path):
    w = _window(qtbot, tmp_path)
    v1, v2 = load(str(V1)), load(str(V2))
    done: list = []
    w.set_runs_async([v1], on_done=lambda t, f: done.append((t, f)))
    assert w.aligning and w.comparison is None  # returned before aligning
    qtbot.waitUntil(lambda: not w.aligning and w.comparison is not None, timeout=DEADLINE_MS)
    assert done and done[0][0] is w.comparison and done[0][1] is w.flat_comparison
    cmp = w.comparison
    assert cmp.n_runs == 1
    # expand a row deeper than the default expansion and select it, in the diff tree
    w.tabs.setCurrentWidget(w.diff)
    deep = next(r for r in range(cmp.n_rows) if cmp.depth[r] >= 4 and len(cmp.children(r)))
    labels = cmp.path_labels(deep)
    w.diff.expand_rows([deep])
    w.diff.select_row(deep)
    assert deep in w.diff.expanded_rows() and w.diff.current_row() == deep
    w.set_runs_async([v1, v2])
    assert w.comparison is cmp  # the old comparison stays on screen while aligning
    qtbot.waitUntil(lambda: w.comparison is not cmp and not w.aligning, timeout=DEADLINE_MS)
    new = w.comparison
    assert new.n_runs == 2 and [Path(p.path).name for p in new.runs] == [V1.name, V2.name]
    assert [Path(p).name for p in w.paths] == [V1.name, V2.name]
    row = _row_by_path(new, labels)
    assert row >= 0
    assert row in w.diff.expanded_rows()
    assert w.diff.current_row() == row
    assert w.tabs.currentWidget() is w.diff


def test_set_runs_async_newest_request_wins(qtbot, tmp_path):
    w = _window(qtbot, tmp_path)
    v1, v2 = load(str(V1)), load(str(V2))
    calls: list[str] = []
    w.set_runs_async([v1, v2], on_done=lambda t, f: calls.append("first"))
    w.set_runs_async([v2, v1], on_done=lambda t, f: calls.append("second"))
    qtbot.waitUntil(lambda: not w.aligning and w.comparison is not None, timeout=DEADLINE_MS)
    # let the dropped task finish too: its late result must not replace the newest
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(DEADLINE_MS)
    qtbot.wait(50)
    assert calls == ["second"]
    assert w.runs == [v2, v1]
    assert [p.path for p in w.comparison.runs] == [v2.path, v1.path]
    assert w.comparison.baseline == 0
    # a synchronous set_runs after an async request also wins
    w.set_runs_async([v1, v2], on_done=lambda t, f: calls.append("third"))
    w.set_runs([v1])
    QThreadPool.globalInstance().waitForDone(DEADLINE_MS)
    qtbot.wait(50)
    assert calls == ["second"] and w.runs == [v1] and not w.aligning


def test_set_runs_async_is_synchronous_in_synchronous_mode(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, synchronous=True)
    v1, v2 = load(str(V1)), load(str(V2))
    calls: list = []
    w.set_runs_async([v1, v2], on_done=lambda t, f: calls.append(t))
    assert not w.aligning and w.runs == [v1, v2] and calls == [w.comparison]
