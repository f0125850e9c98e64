"""The call tree of many root-first paths, level by level, without a sort or pandas.

Same result as :func:`parsers.builder.tree_from_paths` (same node order, parents and
level bounds), which it calls for the levels this cannot take.  Why a second one: a
deep perf recording has ~100 levels of ~10^5 paths each; ``np.unique`` sorts every
level (~15 ms each) and pandas hashes it fast but costs 0.4-0.7 s to import, which was
a tenth of ``profdiff show`` of an 84k-sample perf.data.  A level's key (parent, frame)
has few distinct parents times few distinct frames, so a dense table indexed by the key
finds each key's first path with one ``np.minimum.at``: ~1 ms a level.
"""

from __future__ import annotations

import numpy as np

from .builder import factorize

DENSE_FACTOR = 16  # dense table up to this many slots per key (else: the sorting path)
DENSE_MIN = 1 << 16


def _compact(values: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """``values`` (ints in 0..size-1) renumbered 0..k-1 in increasing order; k."""
    present = np.zeros(size, dtype=bool)
    present[values] = True
    lut = np.cumsum(present) - 1
    return lut[values], int(lut[-1]) + 1 if size else 0


def level_codes(parent: np.ndarray, frame: np.ndarray, n_parents: int,
                n_frames: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes, first) of the (parent, frame) pairs of one level: pairs numbered in
    order of first appearance, and the index of each new pair's first appearance.

    ``parent`` is 0..n_parents-1 (the previous level's nodes, shifted), ``frame`` is
    0..n_frames-1.
    """
    n = len(parent)
    p, np_ = _compact(parent, n_parents)
    f, nf = _compact(frame, n_frames)
    slots = np_ * nf
    if slots > max(DENSE_FACTOR * n, DENSE_MIN):
        codes, uniq = factorize(p.astype(np.int64) * nf + f)
        first = np.full(len(uniq), n, dtype=np.int64)
        np.minimum.at(first, codes, np.arange(n, dtype=np.int64))
        return codes, first
    key = p.astype(np.int64) * nf + f
    first_of = np.full(slots, n, dtype=np.int64)
    np.minimum.at(first_of, key, np.arange(n, dtype=np.int64))
    first = np.flatnonzero(first_of[key] == np.arange(n, dtype=np.int64))
    rank = np.empty(slots, dtype=np.int64)
    rank[key[first]] = np.arange(len(first), dtype=np.int64)
    return rank[key], first


def tree_from_paths(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(parent, frame, leaf, bounds)`` exactly as :func:`parsers.builder.tree_from_paths`
    gives them (path ``k`` is ``flat[starts[k]:starts[k] + lengths[k]]``, root first)."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    flat = np.asarray(flat)
    if len(lengths) and int(lengths.min()) < 1:
        raise ValueError("every path needs at least one frame")
    node = np.full(len(starts), -1, dtype=np.int64)
    parents: list[np.ndarray] = []
    frames: list[np.ndarray] = []
    active = np.arange(len(starts), dtype=np.int64)
    lo, hi = -1, 0  # the previous level's nodes: lo..hi-1 (the root level: "-1")
    level = 0
    while active.size:
        f = flat[starts[active] + level].astype(np.int64)
        par = node[active]
        codes, first = level_codes(par - lo, f, hi - lo, int(n_frames))
        parents.append(par[first])
        frames.append(f[first])
        node[active] = hi + codes
        lo, hi = hi, hi + len(first)
        level += 1
        active = active[lengths[active] > level]
    parent = np.concatenate(parents).astype(np.int32) if parents else np.zeros(0, np.int32)
    bounds = np.cumsum([0] + [len(p) for p in parents]).astype(np.int64)
    frame = np.concatenate(frames).astype(np.int32) if frames else np.zeros(0, np.int32)
    return parent, frame, node, bounds
