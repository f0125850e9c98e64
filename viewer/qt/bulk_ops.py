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
               visible: np.ndarray | None = None, max_rows: int | None = None,
               children: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Rows to expand so the tree is open ``levels`` levels deep (rows with visible
    children above that depth), level by level while the shown rows stay within
    ``max_rows`` (None: no limit).

    ``children``: the tree's CSR child lists (``children_csr``), so the budget counts
    only the children of the few rows above ``levels``, not every row of a 10^6-row tree
    (without them one ``bincount`` counts them all).  Either way no per-row Python."""
    parent = np.asarray(parent)
    depth = np.asarray(depth)
    mask = (depth < levels) & has_kids
    if visible is not None and len(visible) == len(mask):
        mask &= visible
    if max_rows is None:
        return mask
    vis = None if visible is None else np.asarray(visible, bool)
    cand = np.flatnonzero(mask)
    counts, shown = _visible_children(parent, vis, cand, children)
    cand_depth = depth[cand]
    out = np.zeros(len(mask), dtype=bool)
    for d in range(levels):
        at = cand_depth == d
        add = int(counts[at].sum())
        if shown + add > max_rows:
            break
        out[cand[at]] = True
        shown += add
    return out


def _visible_children(parent: np.ndarray, vis: np.ndarray | None, rows: np.ndarray,
                      children: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, int]:
    """Visible child count of each of ``rows``, and the number of visible roots."""
    n = len(parent)
    if children is None:
        kids = parent >= 0 if vis is None else (parent >= 0) & vis
        counts = np.bincount(parent[kids], minlength=n)[rows]
        roots = parent < 0 if vis is None else (parent < 0) & vis
        return counts, int(roots.sum())
    off, ids = children
    if vis is None:
        return off[rows + 1] - off[rows], int(off[n + 1] - off[n])
    starts = off[rows].astype(np.int64)
    lens = off[rows + 1].astype(np.int64) - starts
    ends = np.cumsum(lens)
    flat = np.repeat(starts - (ends - lens), lens) + np.arange(int(ends[-1]) if len(ends) else 0)
    seen = np.concatenate([[0], np.cumsum(vis[ids[flat]], dtype=np.int64)])
    return seen[ends] - seen[ends - lens], int(vis[ids[off[n]:off[n + 1]]].sum())


def collapse_quietly(view: QTreeView) -> None:
    """``collapseAll`` without its per-row ``collapsed`` signals (the callers reset their
    expansion state in one array operation)."""
    blocked = view.blockSignals(True)
    try:
        view.collapseAll()
    finally:
        view.blockSignals(blocked)
