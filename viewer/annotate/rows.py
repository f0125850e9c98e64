"""The side-by-side listing as parallel arrays: one row per alignment pair.

Why arrays: the Qt model and the text listing read cells by row number; building them once
with numpy keeps a 12k-row listing (two 6k-instruction functions) far below the cost of
the alignment itself, and no Python object exists per row.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from .compare import FunctionComparison


@dataclass(frozen=True)
class AlignedRows:
    ia: np.ndarray  # int64 A instruction index per row, -1 where the row is an insertion
    jb: np.ndarray  # int64 B instruction index per row, -1 where the row is a removal
    share_a: np.ndarray  # float64 percent of A's function samples, NaN on gaps
    share_b: np.ndarray
    delta: np.ndarray  # float64 share_b - share_a in percentage points (gaps count 0)
    target_row_a: np.ndarray  # int64 row of A's direct jump target, -1 if none
    target_row_b: np.ndarray
    row_of_a: np.ndarray  # int64 row of every A instruction
    row_of_b: np.ndarray
    incoming_a: np.ndarray  # int64 direct jump sites that target this row's A instruction
    incoming_b: np.ndarray
    reshaped: np.ndarray  # bool: paired by shape, their registers differ (align_refined)

    def __len__(self) -> int:
        return len(self.ia)


def aligned_rows(cmp: FunctionComparison) -> AlignedRows:
    a, b = cmp.runs
    pairs = np.array([(-1 if i is None else i, -1 if j is None else j) for i, j in cmp.pairs],
                     dtype=np.int64).reshape(-1, 2)
    ia, jb = pairs[:, 0].copy(), pairs[:, 1].copy()
    rows = np.arange(len(ia), dtype=np.int64)
    row_of_a = np.empty(len(a.instructions), dtype=np.int64)
    row_of_a[ia[ia >= 0]] = rows[ia >= 0]
    row_of_b = np.empty(len(b.instructions), dtype=np.int64)
    row_of_b[jb[jb >= 0]] = rows[jb >= 0]
    sa = _side(a.share(), ia)
    sb = _side(b.share(), jb)
    delta = np.nan_to_num(sb) - np.nan_to_num(sa)
    both = (ia >= 0) & (jb >= 0)
    reshaped = np.zeros(len(ia), dtype=bool)
    reshaped[both] = a.instructions.norm[ia[both]] != b.instructions.norm[jb[both]]
    return AlignedRows(ia, jb, sa, sb, delta,
                       _targets(a.instructions.target, ia, row_of_a),
                       _targets(b.instructions.target, jb, row_of_b), row_of_a, row_of_b,
                       _incoming(a.instructions.target, ia), _incoming(b.instructions.target, jb),
                       reshaped)


def _incoming(target: np.ndarray, idx: np.ndarray) -> np.ndarray:
    per_ins = np.bincount(target[target >= 0], minlength=len(target))
    out = np.zeros(len(idx), dtype=np.int64)
    ok = idx >= 0
    out[ok] = per_ins[idx[ok]]
    return out


def _side(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = np.full(len(idx), np.nan)
    ok = idx >= 0
    out[ok] = values[idx[ok]]
    return out


def _targets(target: np.ndarray, idx: np.ndarray, row_of: np.ndarray) -> np.ndarray:
    out = np.full(len(idx), -1, dtype=np.int64)
    ok = idx >= 0
    t = np.full(len(idx), -1, dtype=np.int64)
    t[ok] = target[idx[ok]]
    has = t >= 0
    out[has] = row_of[t[has]]
    return out


@dataclass(frozen=True)
class JumpLanes:
    """Direct jumps of one side as row spans, each on a lane (0 = nearest the text).

    Why lanes: nested and overlapping jumps drawn on one vertical line would be
    unreadable; greedy interval colouring, shortest spans first, puts inner loops next to
    the code and long jumps further out.  Jumps beyond ``max_lanes`` share the outermost.
    """

    src: np.ndarray  # int64 row of the jump
    dst: np.ndarray  # int64 row of its target
    lane: np.ndarray  # int64
    lo: np.ndarray  # min(src, dst)
    hi: np.ndarray  # max(src, dst)

    def at(self, row: int) -> list[tuple[int, bool, bool, int, bool]]:
        """Segments in ``row``: (lane, line above centre, line below centre, end, backward)
        with end 0 = passing through, 1 = the jump starts here, 2 = it lands here, and
        backward = the jump goes to an earlier row (a loop)."""
        sel = np.flatnonzero((self.lo <= row) & (self.hi >= row))
        out = []
        for k in sel.tolist():
            lo, hi = int(self.lo[k]), int(self.hi[k])
            end = 1 if self.src[k] == row else 2 if self.dst[k] == row else 0
            out.append((int(self.lane[k]), row > lo, row < hi, end,
                        bool(self.dst[k] < self.src[k])))
        return out


def jump_lanes(src: np.ndarray, dst: np.ndarray, max_lanes: int = 8) -> JumpLanes:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    lane = np.zeros(len(src), dtype=np.int64)
    starts: list[list[int]] = [[] for _ in range(max_lanes)]  # disjoint spans per lane,
    ends: list[list[int]] = [[] for _ in range(max_lanes)]  # sorted by start
    for k in np.argsort(hi - lo, kind="stable").tolist():
        a, b = int(lo[k]), int(hi[k])
        lane[k] = max_lanes - 1
        for ln in range(max_lanes):
            pos = bisect.bisect_right(starts[ln], b)  # spans starting at or before b
            if pos and ends[ln][pos - 1] >= a:
                continue  # the last of them reaches into [a, b]
            starts[ln].insert(pos, a)
            ends[ln].insert(pos, b)
            lane[k] = ln
            break
    return JumpLanes(src, dst, lane, lo, hi)


def side_lanes(rows: AlignedRows, side: int, max_lanes: int = 8) -> JumpLanes:
    """The lanes of run ``side``'s (0 = A, 1 = B) direct jumps in listing rows."""
    tr = rows.target_row_a if side == 0 else rows.target_row_b
    src = np.flatnonzero(tr >= 0)
    return jump_lanes(src, tr[src], max_lanes)
