"""Whole-tree operations on tree panes done in bulk instead of per row through Python.

Why: on a 10^6-row comparison the first paint spent seconds in per-row calls -
``sizeHintForColumn`` asked the Python model for index/hasChildren/flags/data of up to
737k cells, and ``collapseAll`` emitted one ``collapsed`` signal per expanded row, each
mirrored into the other pane.  These helpers pick the few rows worth measuring from the
numpy columns and silence the per-row signals where the caller resets its state anyway.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QTreeView

MEASURE_ROWS = 300  # name cells measured for the column width (the widest candidates)


def shown_mask(parent: np.ndarray, expanded: np.ndarray,
               visible: np.ndarray | None = None) -> np.ndarray:
    """Rows a tree shows: roots and children of expanded rows (and, with a filter, only
    rows it keeps).  Expanded rows always have expanded ancestors here (they are
    expanded with them), so one step over the parent column suffices."""
    parent = np.asarray(parent)
    shown = parent < 0
    kids = ~shown
    if len(expanded) == len(parent):
        shown[kids] = expanded[parent[kids]]
    if visible is not None and len(visible) == len(shown):
        shown &= visible
    return shown


def widest_name_rows(shown: np.ndarray, depth: np.ndarray, name: np.ndarray,
                     indent_chars: float, limit: int = MEASURE_ROWS) -> np.ndarray:
    """The ``limit`` shown rows whose name cell is estimated widest (indentation in
    characters times depth plus the name length); only those are measured exactly."""
    rows = np.flatnonzero(shown)
    if len(rows) <= limit:
        return rows
    lens = np.fromiter(map(len, name[rows]), dtype=np.int64, count=len(rows))
    est = lens + indent_chars * (np.asarray(depth)[rows] + 1)
    top = np.argpartition(-est, limit - 1)[:limit]
    return rows[top]


def collapse_quietly(view: QTreeView) -> None:
    """``collapseAll`` without its per-row ``collapsed`` signals (the callers reset their
    expansion state in one array operation)."""
    blocked = view.blockSignals(True)
    try:
        view.collapseAll()
    finally:
        view.blockSignals(blocked)
