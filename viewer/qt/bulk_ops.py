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

from profdiff.parsers.model import children_csr

MEASURE_ROWS = 300  # name cells measured for the column width (the widest candidates)


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

    The budget counts only the children of the few rows above ``levels``, from the
    tree's CSR child lists (``children``: the comparison's ``children_offsets_ids``;
    derived from ``parent`` when not given), not every row of a 10^6-row tree."""
    parent = np.asarray(parent)
    depth = np.asarray(depth)
    mask = (depth < levels) & has_kids
    if visible is not None and len(visible) == len(mask):
        mask &= visible
    if max_rows is None:
        return mask
    off, ids = children_csr(parent) if children is None else children
    vis = None if visible is None else np.asarray(visible, bool)
    cand = np.flatnonzero(mask)
    counts = _visible_count(csr_children(off, ids, cand), vis)
    roots = ids[off[len(parent)]:off[len(parent) + 1]]
    shown = len(roots) if vis is None else int(vis[roots].sum())
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


def csr_children(off: np.ndarray, ids: np.ndarray, rows: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The children of ``rows`` from CSR child lists, concatenated in ``rows``' order,
    and how many each row has: O(children), not a pass over every row."""
    rows = np.asarray(rows, dtype=np.int64)
    start = off[rows].astype(np.int64)
    lens = off[rows + 1].astype(np.int64) - start
    ends = np.cumsum(lens)
    total = int(ends[-1]) if len(ends) else 0
    return ids[np.repeat(start - (ends - lens), lens) + np.arange(total)], lens


def _visible_count(kids_lens: tuple[np.ndarray, np.ndarray],
                   vis: np.ndarray | None) -> np.ndarray:
    """Per row, how many of its children (:func:`csr_children`) are visible."""
    kids, lens = kids_lens
    if vis is None:
        return lens
    seen = np.concatenate([[0], np.cumsum(vis[kids], dtype=np.int64)])
    ends = np.cumsum(lens)
    return seen[ends] - seen[ends - lens]


def collapse_quietly(view: QTreeView) -> None:
    """``collapseAll`` without its per-row ``collapsed`` signals (the callers reset their
    expansion state in one array operation)."""
    blocked = view.blockSignals(True)
    try:
        view.collapseAll()
    finally:
        view.blockSignals(blocked)
