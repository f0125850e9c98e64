"""The side-by-side listing as parallel arrays: one row per alignment pair.

Why arrays: the Qt model and the text listing read cells by row number; building them once
with numpy keeps a 12k-row listing (two 6k-instruction functions) far below the cost of
the alignment itself, and no Python object exists per row.
"""

from __future__ import annotations

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
    return AlignedRows(ia, jb, sa, sb, delta,
                       _targets(a.instructions.target, ia, row_of_a),
                       _targets(b.instructions.target, jb, row_of_b), row_of_a, row_of_b,
                       _incoming(a.instructions.target, ia), _incoming(b.instructions.target, jb))


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
