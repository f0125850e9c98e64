"""The loading bar is fed at most once per pace: a burst of progress values repaints it
twice (the first value at once, the latest when the pace is over), never in between, and
a restart forgets what a load before fed."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar

from profdiff.viewer.qt.progress_pacer import ProgressPacer


def _bar(qtbot) -> tuple[QProgressBar, list[int]]:
    bar = QProgressBar()
    bar.setRange(0, 1000)
    qtbot.addWidget(bar)
    shown: list[int] = []
    bar.valueChanged.connect(shown.append)
    return bar, shown


def test_a_burst_shows_its_first_value_at_once_and_its_last_after_the_pace(qtbot):
    bar, shown = _bar(qtbot)
    pacer = ProgressPacer(bar, pace_ms=50)
    for i in range(1, 51):  # 50 values in one turn of the event loop
        pacer.feed(i / 50)
    assert shown == [20]  # the first at once, the others held
    qtbot.waitUntil(lambda: bar.value() == 1000, timeout=5000)
    assert shown == [20, 1000]  # then only the latest


def test_values_are_clamped_to_the_bar(qtbot):
    bar, shown = _bar(qtbot)
    pacer = ProgressPacer(bar, pace_ms=50)
    pacer.feed(1.7)
    assert bar.value() == 1000
    pacer.restart()
    pacer.feed(-0.5)
    assert bar.value() == 0


def test_a_restart_drops_a_value_held_from_the_load_before(qtbot):
    bar, shown = _bar(qtbot)
    pacer = ProgressPacer(bar, pace_ms=50)
    pacer.feed(0.1)
    pacer.feed(0.9)  # held for the pace
    pacer.restart()  # a new load starts
    assert bar.value() == 0
    qtbot.wait(150)  # longer than the pace: the held 0.9 never shows
    assert bar.value() == 0 and shown == [100, 0]
    pacer.feed(0.3)  # the new load's first value shows at once
    assert bar.value() == 300
