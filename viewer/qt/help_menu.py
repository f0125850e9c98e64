"""The Help menu: keyboard shortcuts, supported formats, About.

Every list is generated from what the program has, so it cannot go stale:

* the shortcuts from the window's ``QAction`` objects (its menus, in menu order, then the
  actions views add for themselves, e.g. Ctrl+C in the trees, Esc in the flame graph),
  plus the mouse and built-in keys of the widgets, which are not actions;
* the formats from the reader registry (:func:`parsers.detect.readers`);
* the version from the installed package's metadata, and the running Qt / PySide6 /
  Python versions.
"""

from __future__ import annotations

import platform
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

WIDGET_KEYS: tuple[tuple[str, str, str], ...] = (
    ("trees", "Expand / collapse the current row", "Enter, Space, ← →"),
    ("trees and tables", "Sort by a column (first click: largest first; again: flip)",
     "click a column header"),
    ("by cost centre", "Show the cost centre's call sites in the trees", "double-click"),
    ("every row", "Row menu: copy, filter, show in another view, focus", "right-click"),
    ("flame graph", "Zoom into a frame", "click"),
    ("flame graph", "Zoom horizontally around the cursor", "Ctrl+wheel"),
    ("flame graph", "Pan", "drag"),
)
"""What the widgets do by themselves (not actions, so listed here)."""


def build_help_menu(win, hm: QMenu) -> None:
    """Help ▸ Keyboard shortcuts, Supported formats, About profdiff."""
    win.act_shortcuts = QAction("&Keyboard shortcuts", win)
    win.act_shortcuts.setObjectName("helpShortcuts")
    win.act_shortcuts.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
    win.act_shortcuts.triggered.connect(lambda: show_dialog(win, shortcuts_dialog(win)))
    hm.addAction(win.act_shortcuts)
    win.act_formats = QAction("Supported &formats", win)
    win.act_formats.setObjectName("helpFormats")
    win.act_formats.triggered.connect(lambda: show_dialog(win, formats_dialog(win)))
    hm.addAction(win.act_formats)
    hm.addSeparator()
    win.act_about = QAction("&About profdiff", win)
    win.act_about.setObjectName("helpAbout")
    win.act_about.setMenuRole(QAction.MenuRole.AboutRole)
    win.act_about.triggered.connect(lambda: show_dialog(win, about_dialog(win)))
    hm.addAction(win.act_about)


def show_dialog(win, dlg: QDialog) -> None:
    """Show ``dlg`` without blocking; the window keeps it (tests look at ``help_dialog``)."""
    win.help_dialog = dlg
    dlg.show()


# ----------------------------------------------------------------------------------------
# shortcuts
# ----------------------------------------------------------------------------------------
def _clean(text: str) -> str:
    """Menu text without its mnemonic ampersands and trailing ellipsis spacing."""
    return re.sub(r"&(?!&)", "", text).replace("&&", "&").strip()


def keys_text(a: QAction) -> str:
    return ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText)
                     for s in a.shortcuts() if not s.isEmpty())


def shortcut_rows(win) -> list[tuple[str, str, str]]:
    """``(where, what, keys)`` for every action of ``win`` with a shortcut: the menus in
    their order (where = the menu path), then the views' own actions, then
    :data:`WIDGET_KEYS`."""
    rows: list[tuple[str, str, str]] = []
    in_menus: set[int] = set()

    def walk(menu: QMenu, path: list[str]) -> None:
        for a in menu.actions():
            in_menus.add(id(a))
            if a.menu() is not None:
                walk(a.menu(), [*path, _clean(a.text())])
            elif keys_text(a):
                rows.append((" ▸ ".join(path), _clean(a.text()), keys_text(a)))

    for top in win.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), [_clean(top.text())])
    seen = set(rows)
    for a in win.findChildren(QAction):
        if id(a) in in_menus or not keys_text(a):
            continue
        row = (str(a.property("where") or "window"), _clean(a.text()), keys_text(a))
        if row not in seen:
            seen.add(row)
            rows.append(row)
    rows.extend(WIDGET_KEYS)
    return rows


def _table(headers: list[str], rows: list[tuple[str, ...]], name: str) -> QTableWidget:
    t = QTableWidget(len(rows), len(headers))
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().hide()
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setWordWrap(False)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            t.setItem(r, c, QTableWidgetItem(text))
    t.resizeColumnsToContents()
    t.horizontalHeader().setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Stretch)
    return t


def _dialog(win, title: str, name: str, body) -> QDialog:
    dlg = QDialog(win)
    dlg.setObjectName(name)
    dlg.setWindowTitle(title)
    lay = QVBoxLayout(dlg)
    for w in body:
        lay.addWidget(w)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dlg.close)
    lay.addWidget(buttons)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    return dlg


def shortcuts_dialog(win) -> QDialog:
    rows = shortcut_rows(win)
    table = _table(["where", "what", "keys"], rows, "shortcutsTable")
    dlg = _dialog(win, "Keyboard shortcuts — profdiff", "shortcutsDialog", [table])
    dlg.resize(720, 520)
    return dlg


# ----------------------------------------------------------------------------------------
# formats
# ----------------------------------------------------------------------------------------
def format_rows() -> list[tuple[str, str, str]]:
    """``(format id, description, what it reads)`` from the reader registry."""
    from profdiff.parsers.detect import readers

    return [(fid, str(mod.DESCRIPTION),
             "a folder" if getattr(mod, "ACCEPTS_DIRECTORY", False) else "a file (or .gz)")
            for fid, mod in readers().items()]


def formats_dialog(win) -> QDialog:
    note = QLabel("The format is detected from the file's content; <tt>--format ID</tt> on "
                  "the command line forces one.  Gzip-compressed files are read as they are.")
    note.setWordWrap(True)
    table = _table(["format", "description", "reads"], format_rows(), "formatsTable")
    dlg = _dialog(win, "Supported formats — profdiff", "formatsDialog", [note, table])
    dlg.resize(760, 480)
    return dlg


# ----------------------------------------------------------------------------------------
# about
# ----------------------------------------------------------------------------------------
def package_version() -> str:
    """profdiff's version from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("profdiff")
    except PackageNotFoundError:
        return "unknown (not installed as a package)"


def about_text() -> str:
    import numpy
    import PySide6
    from PySide6.QtCore import qVersion

    return (f"<h3>profdiff {package_version()}</h3>"
            "<p>Compare profiler output of two or more runs: GHC, perf, pprof, Julia, "
            "callgrind and more (Help ▸ Supported formats).</p>"
            f"<p>Qt {qVersion()} · PySide6 {PySide6.__version__} · "
            f"Python {platform.python_version()} · numpy {numpy.__version__}</p>")


def about_dialog(win) -> QDialog:
    label = QLabel(about_text())
    label.setObjectName("aboutText")
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    dlg = _dialog(win, "About profdiff", "aboutDialog", [label])
    return dlg
