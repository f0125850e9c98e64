"""Focus on a subtree: a tree view shows only one row, its subtree and the path to it.

The row menu's "Focus on this subtree" (:mod:`viewer.qt.row_menu`) calls
:func:`focus_subtree`; the tree keeps its filter and row rules and ANDs the focus with
them (``set_focus_keep`` of the tree views in :mod:`viewer.qt.views`).  A bar above the
tree names the focus and clears it, as does the menu's "Clear focus".
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from profdiff.viewer.compare import Comparison

PATH_SEP = " ▸ "


def subtree_mask(cmp: Comparison, row: int) -> np.ndarray:
    """``row`` and its descendants: one numpy pass per tree level below it."""
    from .layout import levels

    mask = np.zeros(cmp.n_rows, dtype=bool)
    mask[row] = True
    if cmp.mode == "flat":
        return mask
    order, bounds = levels(cmp)
    par = cmp.parent
    for d in range(int(cmp.depth[row]) + 1, len(bounds) - 1):
        idx = order[bounds[d]: bounds[d + 1]]
        hit = mask[par[idx]]
        if not hit.any():
            break
        mask[idx[hit]] = True
    return mask



class FocusBar(QWidget):
    """"Focused on: a ▸ b ▸ row — Clear focus", above a focused tree."""

    def __init__(self, tree) -> None:
        super().__init__(tree)
        self.setObjectName("focusBar")
        self.tree = tree
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 1, 6, 1)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.linkActivated.connect(lambda _h: clear_focus(tree))
        lay.addWidget(self.label, 1)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # one line
        self.setStyleSheet("#focusBar { background: #fff4d6; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()

    @classmethod
    def of(cls, tree) -> FocusBar:
        bar = tree.findChild(FocusBar, "focusBar")
        if bar is None:
            bar = cls(tree)
            tree.layout().insertWidget(0, bar)
        return bar

    def show_focus(self, cmp: Comparison, row: int) -> None:
        path = PATH_SEP.join(cmp.path_labels(row))
        self.label.setText(f"Focused on <b>{html.escape(str(cmp.name[row]))}</b> "
                           "(only its subtree is shown) — <a href='clear'>Clear focus</a>")
        self.label.setToolTip(path)
        self.show()


def focus_subtree(tree, row: int) -> None:
    """Show only ``row``'s subtree (and the path to it) in ``tree``, expanded one level."""
    cmp = tree.cmp
    if cmp is None or not 0 <= row < cmp.n_rows:
        return
    tree.set_focus_keep(subtree_mask(cmp, row))
    tree.focus_row = row
    tree.expand_rows([row])
    tree.select_row(row)
    FocusBar.of(tree).show_focus(cmp, row)


def clear_focus(tree) -> None:
    """Every row again; the focused row stays selected."""
    row = getattr(tree, "focus_row", -1)
    tree.set_focus_keep(None)
    bar = tree.findChild(FocusBar, "focusBar")
    if bar is not None:
        bar.hide()
    if row >= 0 and tree.cmp is not None and row < tree.cmp.n_rows:
        tree.select_row(row)


def focus_dropped(tree) -> None:
    """The tree got a new comparison: its focus (row ids of the old one) is gone."""
    bar = tree.findChild(FocusBar, "focusBar")
    if bar is not None and tree.focus_keep is None:
        bar.hide()
