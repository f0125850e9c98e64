"""The heap, ticky and runs views align through the window's Session: its rename rules
apply there too (they used to re-align the runs without them, silently ignoring
``.profdiff.toml`` and ``--rename``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from watch_helpers import SETTLE, copy

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402

from profdiff.viewer.rules import regex_rule  # noqa: E402

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture
def window(qtbot, tmp_path):
    from profdiff.viewer.qt.main_window import MainWindow

    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    yield w
    w.close()


def _tab(win, title: str):
    titles = [win.tabs.tabText(i) for i in range(win.tabs.count())]
    assert title in titles, titles
    return win.tabs.widget(titles.index(title))


def _rows(cmp, name: str) -> np.ndarray:
    return np.flatnonzero([name in str(n) for n in cmp.name])


def test_heap_view_uses_the_rules(window):
    """hs-ad v2's heap has MUT_VAR_DIRTY where v1 had THUNK_SELECTOR (both one band): a
    rule mapping one onto the other makes it one band present in both runs."""
    window.load_paths([str(DATA / "ghc-hp/hs-ad-v1.hp"), str(DATA / "ghc-hp/hs-ad-v2.hp")])
    before = _tab(window, "Heap over time").cmp
    assert [before.present[r].tolist() for r in _rows(before, "THUNK_SELECTOR")] == [
        [True, False]]
    window.set_rules([regex_rule("^MUT_VAR_DIRTY$=THUNK_SELECTOR")])
    after = _tab(window, "Heap over time").cmp
    assert after.n_rows == before.n_rows - 1
    rows = _rows(after, "THUNK_SELECTOR")
    assert [after.present[r].tolist() for r in rows] == [[True, True]]
    assert after.matched_by[rows[0]] == 1  # matched by a rule


@pytest.mark.parametrize("grouped", [False, True])
def test_ticky_closures_view_uses_the_rules(window, grouped):
    """hs-ad v2 renamed AD.Dual.sigmoidD to logisticD: with the rule the closure is one
    row in both runs, in the flat table and in the module -> closures tree."""
    window.load_paths([str(DATA / "ghc-ticky/hs-ad-v1.ticky.txt"),
                       str(DATA / "ghc-ticky/hs-ad-v2.ticky.txt")])
    window.set_rules([regex_rule("^sigmoidD=logisticD")])
    view = _tab(window, "Ticky closures")
    view.group_modules.setChecked(grouped)
    cmp = view.cmp
    rows = [r for r in _rows(cmp, "sigmoidD") if cmp.parent[r] >= 0 or not grouped]
    assert rows and all(cmp.present[r].all() for r in rows)
    assert all(cmp.matched_by[r] == 1 for r in rows)
    assert not len(_rows(cmp, "logisticD"))  # v2's name is shown under v1's


def test_runs_view_uses_the_rules(qtbot, tmp_path, window):
    from profdiff.viewer.qt.runs_panel import open_watch

    window.set_rules([regex_rule("^sigmoidD=logisticD")])  # before any run: kept
    folder = tmp_path / "runs"
    folder.mkdir()
    panel = open_watch(window, str(folder), settle=SETTLE, refresh_ms=20)
    copy("v1/ad.prof", folder / "v1" / "ad.prof")
    qtbot.waitUntil(lambda: len(window.runs) == 1, timeout=10000)
    with qtbot.waitSignal(panel.notified, timeout=10000):
        copy("v2/ad.prof", folder / "v2" / "ad.prof")
    cmp = panel.comparison
    rows = [r for r in _rows(cmp, "sigmoidD") if cmp.name[r] == "sigmoidD"]
    assert len(rows) == 1 and cmp.present[rows[0]].all() and cmp.matched_by[rows[0]] == 1
    assert window.session is not None and window.session.rules == window.rules
