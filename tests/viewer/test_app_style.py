"""The app's style sheet is set once its window is built (``app.dress``), and the window
looks as it did with the sheet set before: the cost of polishing every widget through
Qt's style-sheet style as it is made (20-40 ms of start-up) is not paid."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
from qt_style import app_style_sheet, style_sheet

from profdiff.viewer.qt import app, main_window

HS = Path(__file__).parents[1] / "data/hs-ad"


def _shot(out: Path, *opts: str) -> QImage:
    code = app.main([str(HS / "v1/ad.prof"), str(HS / "v2/ad.prof"), *opts,
                     "--size", "900x600", "--screenshot", str(out)])
    assert code == 0
    return QImage(str(out))


def test_style_sheet_comes_after_the_window_and_looks_the_same(tmp_path, monkeypatch):
    seen: list[str] = []
    build = main_window.MainWindow.__init__

    def init(self, *a, **k):
        seen.append(QApplication.instance().styleSheet())
        build(self, *a, **k)

    with style_sheet(""):
        monkeypatch.setattr(main_window.MainWindow, "__init__", init)
        late = _shot(tmp_path / "late.png", "--view", "diff")
        assert seen == [""]  # built without the sheet
        assert QApplication.instance().styleSheet() == app_style_sheet() != ""
        monkeypatch.setattr(app, "dress", lambda _app: None)  # the sheet there before
    with style_sheet():
        early = _shot(tmp_path / "early.png", "--view", "diff")
    assert seen[-1] == app_style_sheet()
    assert late.size() == early.size() and late == early
