"""The context menu and copy shortcuts of every row: trees, tables and flame frames.

One menu for all views, so a row offers the same things wherever it is shown:

* **Copy name**, **Copy call path** (tree rows: ``root ▸ … ▸ row``; a bottom-up row: its
  callers outermost first, down to the function; a flat row: the call path of each of its
  call sites, one per line);
* **Filter to this**: the window's filter set to exactly this function (an anchored,
  escaped regex over ``module.name``, so the box shows what is applied);
* **Show in tree / flame / bottom-up / by cost centre**: the same function (and, between
  the top-down and the bottom-up trees, the same call path) selected in that tab;
* **Focus on this subtree** / **Clear focus**: a tree shows only the row, its subtree and
  the path to it (:mod:`viewer.qt.row_focus`: a bar above the tree clears it); the flame graph
  zooms into the frame (its breadcrumb zooms back out).

Keys: **Ctrl+C** copies the selected rows of a tree or table as tab-separated text with
a header line (the shown columns in their shown order, as displayed: it pastes as a
table into a spreadsheet); **Ctrl+Shift+C** copies the selected row's name.  In the
flame graph Ctrl+C copies the selected frame's name.

Why a module of its own: the views stay about showing rows; everything here uses their
public interface (``model()``, ``select_row``, ``set_focus_keep``) and the window's
(``reveal_row``, ``reveal_key``, ``filter_edit``, ``tabs`` ...).  Other modules add
entries with :meth:`RowMenu.add_extra` (the disassembly tab's "Compare instructions…").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QEvent, QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QMenu,
    QTableWidget,
    QTreeView,
    QWidget,
)

from profdiff.viewer.compare import Comparison

from .models import MATCH_MARK, ComparisonTreeModel
from .row_focus import PATH_SEP, clear_focus, focus_dropped, focus_subtree

COPY_NAME_KEYS = "Ctrl+Shift+C"
Extra = Callable[[QModelIndex], list[tuple[str, Callable[[], None]]]]
"""A provider of extra menu entries for the row at an index: ``[(text, callback)]``."""


@dataclass(frozen=True)
class RowRef:
    """One row of one comparison: what every menu entry acts on."""

    cmp: Comparison
    row: int

    @property
    def name(self) -> str:
        return str(self.cmp.name[self.row])

    @property
    def module(self) -> str:
        return str(self.cmp.module[self.row] or "")

    @property
    def key(self) -> str:
        return str(self.cmp.keys[self.row])

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}" if self.module else self.name


# ----------------------------------------------------------------------------------------
# rows of indexes, texts to copy
# ----------------------------------------------------------------------------------------
def source_row(index: QModelIndex) -> tuple[ComparisonTreeModel, int] | None:
    """The comparison model and union-row id behind ``index`` (through proxy models)."""
    m, idx = index.model(), index
    while isinstance(m, QAbstractProxyModel) and idx.isValid():
        idx = m.mapToSource(idx)
        m = m.sourceModel()
    if isinstance(m, ComparisonTreeModel) and idx.isValid():
        r = int(idx.internalId())
        return (m, r) if 0 <= r < m.cmp.n_rows else None
    return None


def call_path(ref: RowRef, bottom_up: bool = False) -> str:
    """What "Copy call path" copies (see the module docstring)."""
    cmp = ref.cmp
    if cmp.mode == "flat":
        return ""
    labels = cmp.path_labels(ref.row)
    if bottom_up:
        labels = labels[::-1]  # function, its caller, ...: read top-down, callers first
    return PATH_SEP.join(labels)


def call_site_paths(tree: Comparison, key: str, limit: int = 1000) -> str:
    """The call paths of every tree row with match ``key``, one per line."""
    rows = np.flatnonzero(tree.keys == key)[:limit]
    return "\n".join(PATH_SEP.join(tree.path_labels(int(r))) for r in rows)


def header_of(view: QAbstractItemView) -> QHeaderView | None:
    if isinstance(view, QTreeView):
        return view.header()
    if isinstance(view, QTableWidget) or hasattr(view, "horizontalHeader"):
        return view.horizontalHeader()
    return None


def rows_as_tsv(view: QAbstractItemView) -> str:
    """The selected rows (else the current one) as tab-separated text: a header line, then
    one line per row, the shown columns in their shown order, cells as displayed."""
    model = view.model()
    if model is None:
        return ""
    h = header_of(view)
    n = model.columnCount(view.rootIndex())
    if h is not None:
        cols = [h.logicalIndex(v) for v in range(h.count())]
        cols = [c for c in cols if 0 <= c < n and not h.isSectionHidden(c)]
    else:
        cols = list(range(n))
    sel = view.selectionModel()
    rows = sel.selectedRows() if sel is not None else []
    if not rows and view.currentIndex().isValid():
        rows = [view.currentIndex()]
    if not rows:
        return ""
    rows.sort(key=lambda i: view.visualRect(i).top())

    def clean(v) -> str:
        return re.sub(r"[\t\r\n]+", " ", str(v if v is not None else ""))

    lines = ["\t".join(clean(model.headerData(c, Qt.Orientation.Horizontal)) for c in cols)]
    for idx in rows:
        cells = []
        for c in cols:
            text = clean(model.index(idx.row(), c, idx.parent()).data())
            cells.append(text[len(MATCH_MARK):] if text.startswith(MATCH_MARK) else text)
        lines.append("\t".join(cells))
    return "\n".join(lines)


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def exact_filter(ref: RowRef) -> str:
    """An anchored regex matching exactly ``module.name`` (or the name without module)."""
    return f"^{re.escape(ref.qualified)}$"


# ----------------------------------------------------------------------------------------
# finding a row of one comparison in another
# ----------------------------------------------------------------------------------------
def chain_rows(tree: Comparison, keys: list[str]) -> np.ndarray:
    """Tree rows whose own key is ``keys[0]``, their parent's ``keys[1]``, and so on (a
    bottom-up row's callers, read back into the top-down tree)."""
    cand = np.flatnonzero(tree.keys == keys[0])
    at = cand.copy()
    for k in keys[1:]:
        if cand.size == 0:
            break
        at = tree.parent[at]
        ok = at >= 0
        ok[ok] = tree.keys[at[ok]] == k
        cand, at = cand[ok], at[ok]
    return cand


def bottom_up_row(bu: Comparison, tree: Comparison, row: int) -> int:
    """The bottom-up row of top-down ``row``: the root of its function, then down its
    callers as far as the inverted tree goes."""
    keys, r = [], row
    while r >= 0:
        keys.append(str(tree.keys[r]))
        r = int(tree.parent[r])
    roots = np.flatnonzero((bu.parent < 0) & (bu.keys == keys[0]))
    if roots.size == 0:
        return -1
    cur = int(roots[0])
    off, ids = bu.children_offsets_ids
    for k in keys[1:]:
        kids = ids[off[cur]: off[cur + 1]]
        hit = kids[bu.keys[kids] == k]
        if hit.size == 0:
            break
        cur = int(hit[0])
    return cur


# ----------------------------------------------------------------------------------------
# the menu of one view
# ----------------------------------------------------------------------------------------
class RowMenu(QObject):
    """The row context menu and copy actions of one item view (or the flame canvas)."""

    def __init__(self, view: QWidget) -> None:
        super().__init__(view)
        self.setObjectName("rowMenu")
        self.view = view
        self.window = None
        self.extras: list[Extra] = []
        self.resolver: Callable[[QModelIndex], RowRef | None] | None = None
        self.last_menu: QMenu | None = None  # the menu last shown (tests)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self.popup)
        if isinstance(view, QAbstractItemView):
            view.installEventFilter(self)  # its own Ctrl+C copies one cell: ours instead
        self.act_copy_rows = self._key_action(
            "Copy row(s) with headers", QKeySequence(QKeySequence.StandardKey.Copy),
            self.copy_rows, "copyRows")
        self.act_copy_name = self._key_action("Copy name", QKeySequence(COPY_NAME_KEYS),
                                              self.copy_current_name, "copyName")

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt API
        """Ctrl+C on an item view: the rows with headers, not the view's copy of the
        current cell's text (which claims the key before any shortcut sees it)."""
        t = ev.type()
        if obj is self.view and t in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) \
                and ev.matches(QKeySequence.StandardKey.Copy) \
                and not ev.modifiers() & Qt.KeyboardModifier.ShiftModifier:  # Ctrl+Shift+C
            ev.accept()
            if t == QEvent.Type.KeyPress:
                self.copy_rows()
            return True
        return False

    @classmethod
    def of(cls, view: QWidget) -> RowMenu:
        """The view's row menu, created on first use."""
        for child in view.children():
            if isinstance(child, RowMenu):
                return child
        return cls(view)

    def add_extra(self, provider: Extra) -> None:
        self.extras.append(provider)

    def bind(self, window) -> RowMenu:
        """Act through ``window`` (filter, reveal, tabs); without one only copying works."""
        self.window = window
        return self

    def _key_action(self, text: str, key: QKeySequence, slot, name: str) -> QAction:
        a = QAction(text, self.view)
        a.setObjectName(name)
        a.setShortcut(key)
        a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        a.setProperty("where", "trees and tables")
        a.triggered.connect(slot)
        self.view.addAction(a)
        return a

    # ----- the row under the cursor --------------------------------------------------------
    def ref_at(self, index: QModelIndex) -> RowRef | None:
        if self.resolver is not None:
            return self.resolver(index) if index.isValid() else None
        hit = source_row(index) if index.isValid() else None
        if hit is not None:
            return RowRef(hit[0].cmp, hit[1])
        if index.isValid() and self.window is not None:
            return self._ref_from_label(str(index.siblingAtColumn(0).data() or ""))
        return None

    def _ref_from_label(self, label: str) -> RowRef | None:
        """A plain table's row (callers / callees) by its ``module.name`` label."""
        flat = self.window.flat_comparison
        if flat is None or not label:
            return None
        mods = np.asarray(flat.module, dtype=object).astype(str)
        names = np.asarray(flat.name, dtype=object).astype(str)
        full = np.where(mods != "", np.char.add(np.char.add(mods, "."), names), names)
        hit = np.flatnonzero((full == label) | (names == label))
        return RowRef(flat, int(hit[0])) if hit.size else None

    def current_ref(self) -> RowRef | None:
        v = self.view
        if isinstance(v, QAbstractItemView):
            return self.ref_at(v.currentIndex())
        return None

    # ----- copying -----------------------------------------------------------------------
    def copy_rows(self) -> None:
        if isinstance(self.view, QAbstractItemView):
            text = rows_as_tsv(self.view)
            if text:
                copy_text(text)

    def copy_current_name(self) -> None:
        ref = self.current_ref()
        if ref is not None:
            copy_text(ref.name)

    # ----- the menu ----------------------------------------------------------------------
    def popup(self, pos: QPoint) -> None:
        v = self.view
        index = v.indexAt(pos) if isinstance(v, QAbstractItemView) else QModelIndex()
        ref = self.ref_at(index)
        menu = self.build(ref, index)
        if menu is None:
            return
        self.last_menu = menu
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)  # one per right-click
        target = v.viewport() if isinstance(v, QAbstractItemView) else v
        menu.popup(target.mapToGlobal(pos))

    def build(self, ref: RowRef | None, index: QModelIndex = QModelIndex()) -> QMenu | None:
        """The menu for ``ref`` (None: the view's focus entries only)."""
        menu = QMenu(self.view)
        menu.setObjectName("rowContextMenu")
        if ref is not None:
            actions = RowActions(self.window, ref, self.view)
            actions.fill(menu)
        tree = tree_owner(self.view)
        if tree is not None and tree.focus_keep is not None:
            if menu.actions():
                menu.addSeparator()
            a = menu.addAction("Clear focus", lambda: clear_focus(tree))
            a.setObjectName("clearFocus")
        if isinstance(self.view, QAbstractItemView) and index.isValid():
            menu.addSeparator()
            menu.addAction(self.act_copy_rows)
        for provider in self.extras:
            entries = provider(index)
            if entries:
                menu.addSeparator()
            for text, fn in entries:
                menu.addAction(text, fn)
        return menu if menu.actions() else None


def tree_owner(view: QWidget):
    """The tree view (side by side, diff tree, bottom-up) a pane belongs to, if any."""
    w = view
    while w is not None:
        if hasattr(w, "set_focus_keep") and hasattr(w, "panes"):
            return w
        w = w.parentWidget()
    return None


class RowActions:
    """The entries of one row's menu and what they do (built per popup)."""

    def __init__(self, window, ref: RowRef, view: QWidget) -> None:
        self.window = window
        self.ref = ref
        self.view = view
        self.tree = tree_owner(view)

    # which comparison the row is in
    @property
    def is_top_down(self) -> bool:
        w = self.window
        return w is not None and self.ref.cmp is w.comparison

    @property
    def is_bottom_up(self) -> bool:
        bu = bottom_up_tab(self.window)
        return bu is not None and self.ref.cmp is bu.cmp

    def fill(self, menu: QMenu) -> None:
        ref = self.ref
        title = ref.name if len(ref.name) <= 60 else "…" + ref.name[-59:]
        menu.addSection(title)
        self._add(menu, "Copy name", lambda: copy_text(ref.name), "copyName",
                  QKeySequence(COPY_NAME_KEYS))
        path = self.path_text()
        self._add(menu, "Copy call paths" if ref.cmp.mode == "flat" else "Copy call path",
                  lambda: copy_text(self.path_text()), "copyCallPath", enabled=bool(path))
        if self.window is None:
            return
        menu.addSeparator()
        self._add(menu, "Filter to this", self.filter_to_this, "filterToThis")
        self._add(menu, f"Show in {self.tree_tab_title()}", self.show_in_tree, "showInTree",
                  enabled=not self._in_tab(self.window.diff) or not self.is_top_down)
        flame = self.window.flame
        self._add(menu, "Show in Flame", self.show_in_flame, "showInFlame",
                  enabled=flame is not None and self.window.tabs.indexOf(flame) >= 0
                  and not self._is_flame())
        bu = bottom_up_tab(self.window)
        self._add(menu, "Show in Bottom up", self.show_in_bottom_up, "showInBottomUp",
                  enabled=bu is not None and not self.is_bottom_up)
        self._add(menu, f"Show in {self.window.flat_tab_title()}", self.show_in_flat, "showInFlat",
                  enabled=self.window.flat_comparison is not None
                  and ref.cmp is not self.window.flat_comparison)
        menu.addSeparator()
        can_focus = (self.tree is not None and ref.cmp is self.tree.cmp
                     and ref.cmp.mode != "flat") or self._is_flame()
        self._add(menu, "Focus on this subtree", self.focus, "focusSubtree",
                  enabled=can_focus)
        if self._is_flame() and flame.zoom_row() >= 0:
            self._add(menu, "Clear focus", lambda: flame.zoom_to(-1), "clearFocus")

    def tree_tab_title(self) -> str:
        """The tab "Show in tree" goes to (the diff tree, or side by side for one run)."""
        w = self.window
        cmp = w.comparison
        tab = w.diff if cmp is None or cmp.n_runs > 1 else w.side
        i = w.tabs.indexOf(tab)
        return w.tabs.tabText(i).replace("&", "") if i >= 0 else "tree"

    def _add(self, menu: QMenu, text: str, fn, name: str, key: QKeySequence | None = None,
             enabled: bool = True) -> QAction:
        if key is not None:  # shown in the menu; the view's own action handles the key
            text += "\t" + key.toString(QKeySequence.SequenceFormat.NativeText)
        a = menu.addAction(text, fn)
        a.setObjectName(name)
        a.setEnabled(bool(enabled))
        return a

    def _is_flame(self) -> bool:
        f = self.window.flame if self.window is not None else None
        return f is not None and self.view is f.canvas

    def _in_tab(self, w) -> bool:
        t = self.view
        while t is not None:
            if t is w:
                return True
            t = t.parentWidget()
        return False

    # ----- texts -------------------------------------------------------------------------
    def path_text(self) -> str:
        ref = self.ref
        if ref.cmp.mode == "flat":
            tree = self.window.comparison if self.window is not None else None
            return call_site_paths(tree, ref.key) if tree is not None else ""
        return call_path(ref, bottom_up=self.is_bottom_up)

    # ----- acting on the window ----------------------------------------------------------
    def filter_to_this(self) -> None:
        w = self.window
        w.regex_box.setChecked(True)
        w.filter_edit.setText(exact_filter(self.ref))
        w.apply_filter()

    def tree_rows(self) -> np.ndarray:
        """Rows of the window's top-down comparison showing this row."""
        w, ref = self.window, self.ref
        tree = w.comparison
        if tree is None:
            return np.zeros(0, dtype=np.int64)
        if ref.cmp is tree:
            return np.array([ref.row])
        if self.is_bottom_up:
            keys, r = [], ref.row
            while r >= 0:
                keys.append(str(ref.cmp.keys[r]))
                r = int(ref.cmp.parent[r])
            return chain_rows(tree, keys[::-1])  # from the function up its callers
        return np.flatnonzero(tree.keys == ref.key)

    def show_in_tree(self) -> None:
        rows = self.tree_rows()
        if rows.size == 0:
            self._not_found("tree")
            return
        w = self.window
        if self.ref.cmp is w.comparison or self.is_bottom_up:
            w.reveal_row(int(rows[0]))
        else:
            w.reveal_key(self.ref.key)

    def show_in_flame(self) -> None:
        rows = self.tree_rows()
        w = self.window
        if rows.size == 0:
            self._not_found("flame graph")
            return
        lay = w.flame.flame_layout
        best = int(rows[np.argmax(lay.width[rows])]) if lay is not None else int(rows[0])
        w.tabs.setCurrentWidget(w.flame)
        w.flame.select_row(best)

    def show_in_bottom_up(self) -> None:
        w = self.window
        bu = bottom_up_tab(w)
        if bu is None:
            return
        w.tabs.setCurrentWidget(bu)
        bcmp = bu.ensure()
        if bcmp is None:
            return
        rows = self.tree_rows()
        if rows.size == 0:
            self._not_found("bottom-up tree")
            return
        r = bottom_up_row(bcmp, w.comparison, int(rows[0]))
        if r >= 0:
            bu.diff.select_row(r)

    def show_in_flat(self) -> None:
        w = self.window
        flat = w.flat_comparison
        hit = np.flatnonzero(flat.keys == self.ref.key)
        if hit.size == 0:
            self._not_found("by cost centre table")
            return
        w.tabs.setCurrentWidget(w.flat)
        w.flat.select_row(int(hit[0]))

    def focus(self) -> None:
        if self._is_flame():
            self.window.flame.zoom_to(self.ref.row)
            return
        focus_subtree(self.tree, self.ref.row)

    def _not_found(self, where: str) -> None:
        bar = getattr(self.window, "message_bar", None)
        if bar is not None:
            bar.show_message(f"{self.ref.qualified} is not in the {where}", "info")


# ----------------------------------------------------------------------------------------
# wiring into the window
# ----------------------------------------------------------------------------------------
def bottom_up_tab(window):
    """The window's "Bottom up" tab, if the format has one."""
    return None if window is None else window.bottom_up_tab()


def item_views(widget: QWidget) -> list[QAbstractItemView]:
    """The row views inside ``widget``: not headers (item views too) and not the lists
    that pop up under combo boxes."""
    out = [widget] if isinstance(widget, QAbstractItemView) else []
    out += widget.findChildren(QAbstractItemView)

    def in_combo(v: QWidget) -> bool:
        p = v.parentWidget()
        while p is not None and p is not widget:
            if isinstance(p, QComboBox):
                return True
            p = p.parentWidget()
        return False

    return [v for v in out if not isinstance(v, QHeaderView) and not in_combo(v)]


def install_row_menus(window) -> None:
    """Row menus on the window's own views (side panes, diff tree, flat table and its
    call sites, flame canvas); format tabs get theirs from :func:`bind_format_view`."""
    for v in (*window.side.panes, window.diff.tree, window.flat.table):
        RowMenu.of(v).bind(window)
    RowMenu.of(window.flat.sites).bind(window).resolver = lambda i: call_site_ref(window, i)
    if window.flame is not None:
        install_flame_menu(window)
    window.comparisonChanged.connect(
        lambda _c: [focus_dropped(t) for t in (window.side, window.diff)])


def call_site_ref(window, index: QModelIndex) -> RowRef | None:
    """A row of the call sites list: the tree row it names (kept in its first cell)."""
    r = index.siblingAtColumn(0).data(Qt.ItemDataRole.UserRole)
    cmp = window.comparison
    return RowRef(cmp, int(r)) if cmp is not None and r is not None and 0 <= r < cmp.n_rows \
        else None


def bind_format_view(window, widget: QWidget) -> None:
    """Row menus on every row view of a format tab (bottom-up, ticky, heap, callers...)."""
    for v in item_views(widget):
        RowMenu.of(v).bind(window)


def install_flame_menu(window) -> None:
    """The flame canvas: the row menu on frames, Ctrl+C copies the selected frame's name."""
    flame = window.flame
    canvas = flame.canvas
    menu = FlameRowMenu(canvas, flame)
    menu.bind(window)


class FlameRowMenu(RowMenu):
    """:class:`RowMenu` over flame frames (rows under the cursor from ``row_at``)."""

    def __init__(self, canvas: QWidget, flame) -> None:
        super().__init__(canvas)
        self.flame = flame
        self.act_copy_rows.setText("Copy frame name")
        self.act_copy_rows.setProperty("where", "flame graph")
        self.act_copy_name.setProperty("where", "flame graph")

    def current_ref(self) -> RowRef | None:
        cmp, r = self.flame.comparison(), self.flame.selected_row()
        return RowRef(cmp, r) if cmp is not None and 0 <= r < cmp.n_rows else None

    def copy_rows(self) -> None:
        self.copy_current_name()

    def popup(self, pos: QPoint) -> None:
        cmp = self.flame.comparison()
        r = self.view.row_at(pos)
        ref = RowRef(cmp, r) if cmp is not None and r >= 0 else None
        menu = self.build(ref)
        if menu is None:
            return
        self.last_menu = menu
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        menu.popup(self.view.mapToGlobal(pos))
