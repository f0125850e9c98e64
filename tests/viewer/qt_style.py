"""A style sheet applied to the test QApplication for one test, then the old one back.

Why shared: pixel and width tests must see rows as the window draws them (the app's own
``profdiff.qss``: 9 pt rows, selection colours, bold headers), and style-sheet tests a
sheet of their own, without leaking either into later tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtWidgets import QApplication


def app_style_sheet() -> str:
    """The text of the app's bundled style sheet ('' when it is not bundled)."""
    from profdiff.viewer.bundled import resource

    qss = resource("profdiff.qss")
    return qss.read_text(encoding="utf-8") if qss is not None else ""


@contextmanager
def style_sheet(qss: str | None = None) -> Iterator[QApplication]:
    """``qss`` (default: the app's own) on the QApplication while the block runs."""
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    old = app.styleSheet()
    app.setStyleSheet(app_style_sheet() if qss is None else qss)
    try:
        yield app
    finally:
        app.setStyleSheet(old)
