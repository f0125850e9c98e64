"""Qt's own log messages, passed on to stderr as Qt would print them, but for the notes
a platform plugin makes about what it cannot do.

Why: under ``QT_QPA_PLATFORM=offscreen`` (every ``--screenshot`` in CI) Qt prints "This
plugin does not support propagateSizeHints()" whenever a window's minimum size changes,
once or twice a run.  It says nothing about the user's files or the picture, and a CI
log that shows it on every run teaches people to skim past stderr, where the messages
about unreadable files are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

PLATFORM_NOTES = frozenset({
    "This plugin does not support propagateSizeHints()",
})
"""Messages of Qt's platform plugins that only say the platform lacks a feature the
window never needs (size hints are for a window manager; offscreen has none)."""

_installed: list[Any] = []  # the handler in place, once per process


def pass_on_qt_messages() -> None:
    """Install, once, the handler that drops :data:`PLATFORM_NOTES` and passes every
    other Qt message on (:func:`passing_on`) to the handler installed before it."""
    if _installed:
        return
    from PySide6.QtCore import qInstallMessageHandler

    previous: list[Any] = [None]
    handler = passing_on(lambda *msg: (previous[0] or write_like_qt)(*msg))
    previous[0] = qInstallMessageHandler(handler)
    _installed.append(handler)


def passing_on(to: Callable[[Any, Any, str], None]) -> Callable[[Any, Any, str], None]:
    """A Qt message handler that gives ``to`` every message but :data:`PLATFORM_NOTES`."""
    def handler(mode: Any, context: Any, message: str) -> None:
        if message not in PLATFORM_NOTES:
            to(mode, context, message)

    return handler


def write_like_qt(mode: Any, context: Any, message: str) -> None:
    """The line Qt's default handler writes (its message pattern applied), to stderr
    (the handler Qt had before ours is None when it was its default one)."""
    from PySide6.QtCore import qFormatLogMessage

    sys.stderr.write(qFormatLogMessage(mode, context, message) + "\n")
    sys.stderr.flush()
