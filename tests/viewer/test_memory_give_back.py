"""The window hands the heap's freed memory back to the kernel a while after it shows a
comparison (viewer/memory_settings.give_back_freed): not during the first paint, and
again after each load."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

import profdiff.viewer.qt.main_window as main_window

HS = Path(__file__).parent.parent / "data" / "hs-ad"
V1, V2 = HS / "v1" / "ad.prof", HS / "v2" / "ad.prof"


def test_freed_memory_goes_back_once_the_window_is_idle(make_window, monkeypatch, qtbot):
    given: list[int] = []
    monkeypatch.setattr(main_window, "give_back_freed", lambda: given.append(1) or True)
    monkeypatch.setattr(main_window, "GIVE_BACK_AFTER_MS", 50)
    w = make_window()
    w.load_paths([str(V1), str(V2)])
    assert given == []  # not while the comparison is being shown
    qtbot.waitUntil(lambda: len(given) == 1, timeout=5000)
    w.load_paths([str(V2), str(V1)])
    qtbot.waitUntil(lambda: len(given) == 2, timeout=5000)
    QApplication.processEvents()
    assert len(given) == 2
