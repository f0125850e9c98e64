"""Exports (speedscope, CSV) and files dropped onto the window.

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import (
    QFileDialog,
)

from ..export.csv_export import export_csv
from ..export.speedscope import export_speedscope
from .views import local_files


class ExportDropMixin:
    """Exports (speedscope, CSV) and files dropped onto the window."""

    def _save_dialog(self, title: str, suffix: str, filt: str) -> str | None:
        base = Path(self.paths[-1] or "profile").stem if self.paths else "profile"
        f, _ = QFileDialog.getSaveFileName(self, title,
                                           str(Path(self._last_folder()) / f"{base}{suffix}"),
                                           filt)
        return f or None

    def export_speedscope(self, path: str | None = None) -> bool:
        if self.comparison is None:
            return False
        path = path or self._save_dialog("Export to speedscope", ".speedscope.json",
                                         "speedscope JSON (*.json)")
        if not path:
            return False
        try:
            export_speedscope(self.comparison, path, metric=None)
        except Exception as e:  # noqa: BLE001
            self.message_bar.show_message(f"Export to {path} failed: {e}")
            return False
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def export_csv(self, path: str | None = None) -> bool:
        if self.comparison is None:
            return False
        path = path or self._save_dialog("Export table to CSV", ".csv", "CSV (*.csv)")
        if not path:
            return False
        flat = self.tabs.currentWidget() is self.flat
        cmp = self.flat_comparison if flat else self.comparison
        lay = self.flat.layout_ if flat else self.diff.layout_
        rows = None
        if flat and lay is not None:
            rows = lay.children(-1)
        elif lay is not None and lay.visible is not None:
            rows = np.flatnonzero(lay.visible)
        try:
            export_csv(cmp, path, rows=rows, metrics=self.metrics)
        except Exception as e:  # noqa: BLE001
            self.message_bar.show_message(f"Export to {path} failed: {e}")
            return False
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def dragEnterEvent(self, ev) -> None:  # noqa: N802 - Qt API
        files = local_files(ev.mimeData())
        if not files:
            ev.ignore()
            return
        ev.acceptProposedAction()
        if len(files) >= 2:
            text = "Drop to compare (older file = baseline)"
        elif self.runs:
            text = "Drop to replace the current run"
        else:
            text = "Drop to open"
        self.overlay.show_over(self.centralWidget(), text)

    def dragMoveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if local_files(ev.mimeData()):
            ev.acceptProposedAction()

    def dragLeaveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.overlay.hide()

    def dropEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.overlay.hide()
        files = local_files(ev.mimeData())
        if not files:
            ev.ignore()
            return
        ev.acceptProposedAction()
        self.drop_files(files)

    def drop_files(self, files: Sequence[str]) -> None:
        """Two or more files: compare, oldest first; one file: replace the current run."""
        if len(files) >= 2:
            self.load_paths(sorted(files, key=_mtime))
        elif self.runs:
            self.open_as_current(files[0])
        else:
            self.load_paths(files)

    def _pane_drop(self, slot: int, files: list) -> None:
        if len(files) >= 2:
            self.drop_files(files)
        elif slot == 0:
            self.open_as_baseline(files[0])
        else:
            self.open_as_current(files[0])


def _mtime(p: str) -> float:
    try:
        return os.stat(p).st_mtime
    except OSError:
        return 0.0
