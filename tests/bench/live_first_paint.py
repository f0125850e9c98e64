"""The window a user opens, timed to its first paint of the diff tree: ``profdiff A B
--view diff`` as the desktop app runs it (files loaded in the thread pool, progress shown,
the tree opened along the path to the top culprit), ended by the first paint of the diff
tree's rows once the comparison is in.

``python tests/bench/live_first_paint.py A.prof B.prof --view diff`` (run by
``bench_formats.py --only app``; ``QT_QPA_PLATFORM=offscreen`` by default).

Why beside ``--screenshot``: the screenshot loads synchronously, waits for every noise
estimate and saves a PNG, so it times the picture, not the window; this times what the
user waits for.  Prints nothing; exits 0 at that paint, 1 when the window closed or
10 minutes passed without one.  At that paint it writes its ``time.monotonic()`` into the
file ``$PROFDIFF_BENCH_MARK`` names, if set (:class:`alternate.ToMark`): the benchmark
times the window to its paint, not to the end of its process.
"""

from __future__ import annotations

import os
import sys
import time

MARK_VARIABLE = "PROFDIFF_BENCH_MARK"
"""``alternate.MARK_VARIABLE`` (not imported from there: its imports would be timed)."""


def main(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    set_up_program()  # as the program does before numpy is imported
    from profdiff.viewer.qt import app as appmod

    make_app = appmod._application

    def application(*args, **kwargs):
        """The app's own start-up, then the window class hooked: imported here, after
        the app has imported its Qt-free modules and Qt in its own order (imported
        before ``_main``, PySide6 would come first and slow every later import)."""
        app = make_app(*args, **kwargs)
        from profdiff.viewer.qt import main_window

        build = main_window.MainWindow.__init__

        def init(win, *args, **kwargs) -> None:
            build(win, *args, **kwargs)
            _exit_at_first_paint(win)

        main_window.MainWindow.__init__ = init
        return app

    appmod._application = application
    appmod._main(argv)
    return 1


def set_up_program() -> None:
    """What the program sets up before numpy is imported (:mod:`viewer.program_start`;
    a tree from before that module, run by ``bench_formats.py --baseline``, set the BLAS
    thread count alone)."""
    try:
        from profdiff.viewer.program_start import set_up_program as set_up
    except ImportError:
        from profdiff.viewer.blas_threads import one_blas_thread as set_up
    set_up()


def _painted() -> None:
    """The first paint is over: its ``time.monotonic()`` for the benchmark, then the end."""
    path = os.environ.get(MARK_VARIABLE)
    if path:
        with open(path, "w", encoding="ascii") as f:
            f.write(repr(time.monotonic()))
    os._exit(0)


def _exit_at_first_paint(win) -> None:
    """End the process at the first paint of the diff tree's rows after the comparison is
    in."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt's name
            if ev.type() == QEvent.Type.Paint and win.comparison is not None \
                    and obj is win.diff.tree.viewport():
                QTimer.singleShot(0, _painted)  # after this paint (the window's frame)
            return False

    win.first_paint_filter = FirstPaint(win)
    win.diff.tree.viewport().installEventFilter(win.first_paint_filter)
    QTimer.singleShot(600_000, lambda: os._exit(1))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
