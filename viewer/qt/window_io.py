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
from ..run_labels import order_dropped, shortest_suffixes
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
            if cmp.n_runs >= 2 and cmp.groups is None:  # a status column judged by noise,
                # as profdiff export judges it, even while a worker's estimate is still out
                self._ensure_noise(cmp, cmp.status_metrics(sampled_only=True))
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
        self.overlay.show_over(self.centralWidget(), drop_hint(files, len(self.runs)))

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
        """Files dropped onto the window (see :func:`drop_hint`): a folder is watched as
        ``profdiff DIR`` does; two or more files are compared in the natural order of
        their labels (``v1/x.prof`` before ``v2/x.prof``; never by modification time, so a
        baseline copied just now stays the baseline); one file opens, or is added as one
        more run when runs are shown (a drop never silently replaces a run: dropping it
        onto a pane of Side by side replaces that pane's run)."""
        files = [str(f) for f in files]
        folders = [f for f in files if os.path.isdir(f)]
        if folders and self._watch_dropped(folders[0], len(files) - 1):
            return
        if len(files) >= 2:
            ordered = order_dropped(files)
            self.load_paths(ordered)
            labels = self._labels_for(ordered, ordered)
            self.statusBar().showMessage(
                f"Baseline: {labels[0]}, current: {labels[-1]} (dropped files are ordered by "
                "name; View > Baseline picks another)", 15000)
        elif self.runs:
            index = len(self.runs)
            label = self._labels_for([files[0]], [*(p for p in self.paths if p), files[0]])[0]
            self.add_run(files[0])
            self.statusBar().showMessage(
                f"Added {label} as run [{index}] (the current run); drop onto a pane "
                "of Side by side to replace that pane's run instead", 15000)
        else:
            self.load_paths(files)

    def _watch_dropped(self, folder: str, others: int) -> bool:
        """Watch a dropped folder (False: it is one run, e.g. a Julia .mem folder)."""
        from .runs_panel import is_watch_folder, open_watch

        if not is_watch_folder(folder):
            return False
        open_watch(self, folder)
        extra = f"; {others} other dropped item(s) ignored" if others else ""
        self.statusBar().showMessage(f"Watching {folder}: every profile that lands there is "
                                     f"compared{extra}", 15000)
        return True

    def _pane_drop(self, slot: int, files: list) -> None:
        if len(files) >= 2:
            self.drop_files(files)
        elif slot == 0:
            self.open_as_baseline(files[0])
        else:
            self.open_as_current(files[0])


def drop_hint(files: Sequence[str], n_runs: int) -> str:
    """What a drop of ``files`` will do, shown over the window while dragging."""
    if any(os.path.isdir(f) for f in files):
        return "Drop to watch this folder (each new profile is compared)"
    if len(files) >= 2:
        first = shortest_suffixes(order_dropped(list(files)))[0]
        return f"Drop to compare, ordered by name (baseline: {first})"
    if n_runs:
        return "Drop to add as one more run (onto a pane: replace that pane's run)"
    return "Drop to open"
