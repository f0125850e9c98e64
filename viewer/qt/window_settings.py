"""Window geometry, splitter and column widths, recent files (QSettings).

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
)

MAX_RECENT = 10


DEFAULT_SCREEN_SHARE = 0.8
"""Share of the screen's available width and height a window opens at the first time."""


class SettingsMixin:
    """Window geometry, splitter and column widths, recent files (QSettings)."""

    def _restore_settings(self) -> None:
        s = self.settings
        g = s.value("geometry")
        if g is None or not self.restoreGeometry(g) or not self._fits_screen():
            self._default_geometry()
        sp = s.value("splitter")
        if sp is not None:
            self.splitter.restoreState(sp)
        sp = s.value("sideSplitter")
        if sp is not None:
            self.side.splitter.restoreState(sp)
        pm = s.value("percentMode")
        if pm is not None:
            self.act_percent.setChecked(str(pm).lower() in ("true", "1"))

    def _default_geometry(self) -> None:
        """First start (or a saved size that no longer fits this screen): 80 % of the
        screen's available area, centred - room for two trees side by side and their
        columns on any screen, instead of Qt's size hint (~925x570 on 1600x1000)."""
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is None or screen.width() < 200:
            self.resize(1280, 800)
            return
        w, h = int(screen.width() * DEFAULT_SCREEN_SHARE), int(screen.height() * DEFAULT_SCREEN_SHARE)
        self.resize(w, h)
        self.move(screen.x() + (screen.width() - w) // 2, screen.y() + (screen.height() - h) // 2)

    def _fits_screen(self) -> bool:
        """The restored size is usable here: not larger than the screen (saved on a bigger
        monitor) and not a sliver (< 640x400)."""
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is None:
            return True
        size = self.size()
        return (640 <= size.width() <= screen.width() + 8
                and 400 <= size.height() <= screen.height() + 8)

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("splitter", self.splitter.saveState())
        s.setValue("sideSplitter", self.side.splitter.saveState())
        s.setValue("percentMode", self.percent_mode)
        s.setValue("palette", self.scale.palette)
        if self.metrics:
            s.setValue(f"metrics/{self._format_key()}", self.metrics)
        for name, view in self._column_views():
            if view.model() is not None:
                s.setValue(f"header/{name}/{self._format_key()}", view.header().saveState())
                sig, widths = _column_widths(view)
                s.setValue(f"columns/{name}/{self._format_key()}/sig", sig)
                s.setValue(f"columns/{name}/{self._format_key()}/widths", widths)
        s.sync()

    def _column_views(self) -> list[tuple[str, QAbstractItemView]]:
        return [("side", self.side.panes[0]), ("side1", self.side.panes[1]),
                ("diff", self.diff.tree), ("flat", self.flat.table)]

    def _capture_columns(self) -> dict[str, tuple[str, list[int]]]:
        return {name: _column_widths(v) for name, v in self._column_views()
                if v.model() is not None}

    def _restore_columns(self, before: dict[str, tuple[str, list[int]]],
                         only: str | None = None) -> None:
        """Column widths: kept across a swap of runs when the columns are the same, else
        (first comparison of a format in this view) restored from the settings.  ``only``:
        that view alone (the flat table gets its comparison when first shown)."""
        fmt = self._format_key()
        for name, view in self._column_views():
            if view.model() is None or only not in (None, name):
                continue
            first = (fmt, name) not in self._columns_restored
            self._columns_restored.add((fmt, name))
            sig, _w = _column_widths(view)
            old = before.get(name)
            if first:
                saved_sig = self.settings.value(f"columns/{name}/{fmt}/sig")
                saved = self.settings.value(f"columns/{name}/{fmt}/widths")
                if saved_sig is not None and saved:
                    old = (str(saved_sig), [int(x) for x in
                                            ([saved] if isinstance(saved, str) else saved)])
            if old is None or old[0] != sig or len(old[1]) != view.header().count():
                continue
            h = view.header()
            for i, w in enumerate(old[1]):
                if w > 0 and h.sectionSize(i) != w:
                    h.resizeSection(i, w)

    def _format_key(self) -> str:
        return self.runs[0].format if self.runs else "none"

    def saved_metrics(self, fmt: str) -> list[str] | None:
        """The metric columns saved for format ``fmt`` (None: none saved)."""
        saved = self.settings.value(f"metrics/{fmt}")
        if saved is None:
            return None
        return [saved] if isinstance(saved, str) else [str(m) for m in saved]

    def saved_metrics_by_format(self) -> dict[str, list[str]]:
        """Every format's saved metric columns, read now: for a thread that may not read
        the settings (the loader choosing what to estimate, NoiseMixin.noise_wanted)."""
        s = self.settings
        s.beginGroup("metrics")
        fmts = s.childKeys()
        s.endGroup()
        return {f: m for f in fmts if (m := self.saved_metrics(f)) is not None}

    def _remember(self, paths: Sequence[str]) -> None:
        rec = [str(x) for x in (self.settings.value("recentFiles") or []) if x]
        if isinstance(self.settings.value("recentFiles"), str):
            rec = [self.settings.value("recentFiles")]
        for p in paths:
            p = str(Path(p).resolve())
            if p in rec:
                rec.remove(p)
            rec.insert(0, p)
        self.settings.setValue("recentFiles", rec[:MAX_RECENT])
        if paths:
            self.settings.setValue("lastFolder", str(Path(paths[-1]).resolve().parent))
        self.refresh_recent_menu()

    def recent_files(self) -> list[str]:
        v = self.settings.value("recentFiles") or []
        return [v] if isinstance(v, str) else [str(x) for x in v]

    def refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        rec = self.recent_files()
        for p in rec:
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.open_as_current(p))
        self.recent_menu.setEnabled(bool(rec))

    def last_folder(self) -> str:
        """The folder file dialogs start in (the last one files were opened from)."""
        return self._last_folder()

    def _last_folder(self) -> str:
        return str(self.settings.value("lastFolder") or os.getcwd())


def _column_widths(view) -> tuple[str, list[int]]:
    """(signature of the columns = their headers, section widths) of a tree view."""
    m = view.model()
    h = view.header()
    heads = [str(m.headerData(i, Qt.Orientation.Horizontal) or "") for i in range(h.count())]
    # only the widths the user set (0 = sized to the content again when restored)
    widths = view.user_widths() if hasattr(view, "user_widths") else \
        [h.sectionSize(i) for i in range(h.count())]
    return "|".join(heads).replace("\n", " "), widths
