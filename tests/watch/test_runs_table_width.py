"""The watch runs table keeps values with their units on one line (issue 19 item 2)."""

from __future__ import annotations

from tool_requirements import require_module
from watch_helpers import SETTLE, copy

require_module("PySide6", "pip install PySide6-Essentials")
require_module("pytestqt", "pip install pytest-qt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from profdiff.viewer.qt.runs_panel import RunsPanel  # noqa: E402


def test_runs_table_does_not_wrap_units(qtbot, tmp_path):
    """The watch runs table keeps "4,291,393,792 B" on one line, in full."""
    p = RunsPanel(str(tmp_path), settle=SETTLE, refresh_ms=20)
    qtbot.addWidget(p)
    p.resize(900, 600)
    p.show()
    p.start()
    try:
        qtbot.waitUntil(lambda: p.scan_done, timeout=10000)
        copy("v1/ad.prof", tmp_path / "v1" / "ad.prof")
        qtbot.waitUntil(lambda: len(p.table) == 1, timeout=10000)
        QApplication.processEvents()
        assert not p.view.wordWrap()
        m = p.model
        fm = p.view.fontMetrics()
        texts = [str(m.data(m.index(0, c)) or "") for c in range(m.columnCount())]
        assert "4,291,393,792 B" in texts
        for c, t in enumerate(texts):
            if t:
                assert fm.horizontalAdvance(t) < p.view.columnWidth(c), (c, t)
    finally:
        p.shutdown()
