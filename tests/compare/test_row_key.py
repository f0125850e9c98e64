"""RowKey: a per-row sort key read at the rows asked for (viewer/row_key.py)."""

from __future__ import annotations

import numpy as np

from profdiff.viewer.row_key import RowKey, as_key


def test_reads_at_rows_equal_the_whole_key_and_compute_only_those_rows():
    values = np.random.default_rng(0).random(1000)
    asked: list[int] = []

    def at(rows: np.ndarray) -> np.ndarray:
        asked.append(len(rows))
        return values[rows] * 2

    key = RowKey(len(values), at)
    rows = np.array([5, 999, 0, 5])
    assert key[rows].tolist() == (values[rows] * 2).tolist()
    assert key[np.array([[1, 2], [3, 4]])].shape == (2, 2)
    assert asked == [4, 4] and len(key) == 1000
    whole = np.asarray(key)
    assert whole.tolist() == (values * 2).tolist() and not whole.flags.writeable
    assert key[rows].tolist() == whole[rows].tolist()
    assert asked == [4, 4, 1000]  # read from the whole array once it is built
    assert as_key(key) is key
    assert as_key([1, 2]).dtype == np.float64
