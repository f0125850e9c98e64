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


def depth_mask(parent: np.ndarray, depth: np.ndarray, has_kids: np.ndarray, levels: int,
               visible: np.ndarray | None = None, max_rows: int | None = None) -> np.ndarray:
    """Rows to expand so the tree is open ``levels`` levels deep (rows with visible
    children above that depth), level by level while the shown rows stay within
    ``max_rows`` (None: no limit).  One ``bincount`` gives every row's visible child
    count, so the budget costs no per-row Python."""
    parent = np.asarray(parent)
    depth = np.asarray(depth)
    mask = (depth < levels) & has_kids
    if visible is not None and len(visible) == len(mask):
        mask &= visible
    if max_rows is None:
        return mask
    vis = np.ones(len(parent), dtype=bool) if visible is None else np.asarray(visible, bool)
    kids = (parent >= 0) & vis
    counts = np.bincount(parent[kids], minlength=len(parent))
    shown = int(((parent < 0) & vis).sum())
    out = np.zeros(len(mask), dtype=bool)
    for d in range(levels):
        level = mask & (depth == d)
        add = int(counts[level].sum())
        if shown + add > max_rows:
            break
        out |= level
        shown += add
    return out


def collapse_quietly(view: QTreeView) -> None:
    """``collapseAll`` without its per-row ``collapsed`` signals (the callers reset their
    expansion state in one array operation)."""
    blocked = view.blockSignals(True)
    try:
        view.collapseAll()
    finally:
        view.blockSignals(blocked)
