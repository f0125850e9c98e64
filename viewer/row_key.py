"""A per-row sort key computed at the rows that are read (Qt-free).

Why: a tree view orders each expanded row's children by a key of every row (the larger
inherited cost of the two runs), but reads it only at the children it lists.  Built
whole on a 10^6-row comparison it was two gathered value columns and their maximum
(three 5.7 MB arrays of fresh memory on the 100 MB hs-ad pair) before the first paint,
which reads it at a few thousand rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np


class RowKey:
    """``key[rows]`` (float64) of ``n`` rows from ``at(rows)``; :meth:`whole` (or
    ``np.asarray``) computes and keeps the whole array, after which reads use it."""

    def __init__(self, n: int, at: Callable[[np.ndarray], np.ndarray]) -> None:
        self.n = n
        self._at = at
        self._whole: np.ndarray | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, rows) -> np.ndarray:
        whole = self._whole
        if whole is not None:
            return whole[rows]
        idx = np.asarray(rows, dtype=np.intp)
        return np.asarray(self._at(idx.ravel()), dtype=np.float64).reshape(idx.shape)

    def whole(self) -> np.ndarray:
        with self._lock:
            if self._whole is None:
                out = np.asarray(self._at(np.arange(self.n, dtype=np.intp)), dtype=np.float64)
                out.flags.writeable = False
                self._whole = out
        return self._whole

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self.whole()
        return a if dtype is None else a.astype(dtype, copy=False)


def as_key(key: np.ndarray | RowKey) -> np.ndarray | RowKey:
    """A row key as given (a :class:`RowKey` stays lazy), an array as float64."""
    return key if isinstance(key, RowKey) else np.asarray(key, dtype=np.float64)
