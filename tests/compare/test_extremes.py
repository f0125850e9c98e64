"""``Extremes`` finds the rows a numeric column is sized by, a block at a time and with
as few passes as it can (every numeric column is measured on first paint); whatever the
blocks and their order, its rows must be the textbook ones of the whole column."""

from __future__ import annotations

import numpy as np

from profdiff.viewer.compare import Extremes


def _textbook(a: np.ndarray) -> list[int]:
    """The first row of the largest finite magnitude, of the smallest non-zero finite one
    (the first row when there is none of either) and of the first NaN or inf."""
    mag = np.abs(a)
    fin = np.isfinite(mag)
    rows = np.arange(len(a))
    big = rows[fin][mag[fin] == mag[fin].max()][0] if fin.any() else 0
    pos = fin & (mag > 0)
    small = rows[pos][mag[pos] == mag[pos].min()][0] if pos.any() else 0
    out = {int(big), int(small)}
    if not fin.all():
        out.add(int(np.flatnonzero(~fin)[0]))
    return sorted(out)


def _column(rng: np.random.Generator, n: int) -> np.ndarray:
    """Few distinct values (ties everywhere), both zeros, negatives, the smallest
    subnormal and the largest float, NaN and inf mixed in."""
    pool = np.array([0.0, -0.0, 0.1, -0.1, 2.5, -2.5, 5e-324, 1.7976931348623157e308, -40.0,
                     np.nan, np.inf, -np.inf])
    kinds = rng.choice(4)
    if kinds == 0:
        pool = pool[:9]  # all finite
    elif kinds == 1:
        pool = np.array([0.0, np.nan, np.inf])  # nothing finite but zero
    elif kinds == 2:
        pool = np.array([np.nan, -np.inf])  # nothing finite at all
    return rng.choice(pool, size=n)


def test_rows_found_by_blocks_in_any_order_are_the_textbook_ones():
    rng = np.random.default_rng(23)
    for _ in range(400):
        n = int(rng.integers(1, 60))
        a = _column(rng, n)
        want = _textbook(a)
        size = int(rng.integers(1, n + 1))
        whole, consecutive, shuffled = Extremes(), Extremes(), Extremes()
        whole.add(a, 0)
        for lo in range(0, n, size):
            consecutive.add(a[lo : lo + size], lo)
        perm = rng.permutation(n)
        for lo in range(0, n, size):
            rows = perm[lo : lo + size]
            shuffled.add(a[rows], rows)
        for ext in (whole, consecutive, shuffled):
            assert ext.rows().tolist() == want, (a.tolist(), size)


def test_a_whole_column_read_in_blocks_gives_the_textbook_rows(monkeypatch):
    """``column_extremes`` (the value columns' widths) reads a column a block at a time."""
    from profdiff.viewer.qt import column_sizing

    monkeypatch.setattr(column_sizing, "STATUS_BLOCK", 5)
    rng = np.random.default_rng(5)
    for _ in range(200):
        a = _column(rng, int(rng.integers(1, 40)))
        assert column_sizing.column_extremes(a).tolist() == _textbook(a), a.tolist()
