"""The loading bar fed at most once per :data:`PACE_MS` (the GUI side of the loader's
``progress`` signal).

Why: ``QProgressBar.setValue`` repaints the bar at once whenever the value it shows moves
(a synchronous ``repaint()``, not a queued ``update()``), and the GUI thread holds the
interpreter's lock meanwhile.  The window loading the 100 MB hs-ad pair got 53 values,
one every ~15 ms, and its GUI thread spent 42-55 ms repainting the bar: time taken from
the threads reading the files.  Paced, the bar moves ~10 times a second, which reads as
smoothly, and the reads keep that time.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressBar

PACE_MS = 100
"""The shortest time between two values shown."""


class ProgressPacer(QObject):
    """Shows the first value fed at once, then at most one value per :data:`PACE_MS`:
    the latest fed meanwhile (a leading and trailing throttle), so the last value is
    always shown, one pace late at most."""

    def __init__(self, bar: QProgressBar, pace_ms: int = PACE_MS) -> None:
        super().__init__(bar)
        self.bar = bar
        self._latest: int | None = None  # fed while the pace ran, not shown yet
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(pace_ms)
        self._timer.timeout.connect(self._pace_over)

    def feed(self, fraction: float) -> None:
        """A progress fraction (0..1) of the bar's range."""
        lo, hi = self.bar.minimum(), self.bar.maximum()
        value = lo + int(max(0.0, min(1.0, fraction)) * (hi - lo))
        if self._timer.isActive():
            self._latest = value
            return
        self.bar.setValue(value)
        self._timer.start()

    def restart(self, value: int = 0) -> None:
        """Show ``value`` now and forget what was fed before (a load starts or ends: a
        value left over from the one before must not be shown late)."""
        self._timer.stop()
        self._latest = None
        self.bar.setValue(value)

    def _pace_over(self) -> None:
        if self._latest is not None:
            value, self._latest = self._latest, None
            self.bar.setValue(value)
            self._timer.start()
