"""Alignment of two instruction sequences: a longest common subsequence, bit-parallel.

Why not :class:`difflib.SequenceMatcher`: with its junk heuristic off (needed, because
``mov``/``nop`` lines are frequent and must still match) it is quadratic in Python and
took seconds at 6k x 6k (see tests/bench/bench_annotate.py).  The bit-vector LCS of
Allison-Dix/Hyyrö processes one row of the dynamic-programming table per instruction of
B as a few operations on a Python integer of len(A) bits, which run in C, then walks
back through the stored rows.  Tokens are the normalised instruction strings mapped to
integers; the common prefix and suffix are matched first (the usual case for builds that
differ in a few places).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Pair = tuple[int | None, int | None]


def align(a: Sequence[str], b: Sequence[str], filler: frozenset[str] = frozenset()) -> list[Pair]:
    """Pairs ``(i, j)`` in order; ``(i, None)`` = removed from A, ``(None, j)`` = inserted.

    Tokens in ``filler`` (alignment padding: ``nop``) match only inside the common prefix
    and suffix; elsewhere they would pair up padding of unrelated code.
    """
    n, m = len(a), len(b)
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        hi += 1
    mid_a: list[Any] = list(a[lo:n - hi])
    mid_b: list[Any] = list(b[lo:m - hi])
    if filler:
        mid_a = [(t, "a", k) if t in filler else t for k, t in enumerate(mid_a)]
        mid_b = [(t, "b", k) if t in filler else t for k, t in enumerate(mid_b)]
    middle = _lcs_pairs(mid_a, mid_b)
    out: list[Pair] = [(k, k) for k in range(lo)]
    ia, jb = 0, 0
    for i, j in middle:
        out += [(lo + x, None) for x in range(ia, i)]
        out += [(None, lo + y) for y in range(jb, j)]
        out.append((lo + i, lo + j))
        ia, jb = i + 1, j + 1
    out += [(lo + x, None) for x in range(ia, n - lo - hi)]
    out += [(None, lo + y) for y in range(jb, m - lo - hi)]
    out += [(n - hi + k, m - hi + k) for k in range(hi)]
    return out


def _lcs_pairs(a: Sequence, b: Sequence) -> list[tuple[int, int]]:
    """Matched index pairs of one longest common subsequence of ``a`` and ``b``."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    masks: dict = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << n) - 1
    v = full
    rows = [v]  # rows[j]: bit i is 0 where LCS(a[:i+1], b[:j]) > LCS(a[:i], b[:j])
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif (rows[j] >> (i - 1)) & 1:
            i -= 1  # L[i-1][j] == L[i][j]: a[i-1] is not needed
        else:
            j -= 1
    pairs.reverse()
    return pairs
