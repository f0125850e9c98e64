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


def level_codes(parent: np.ndarray, frame: np.ndarray, n_parents: int, n_frames: int,
                order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, first) of the (parent, frame) pairs of one level: the pairs numbered in
    order of their first path (the smallest ``order``, the paths' original positions),
    and for each pair the position of that path.

    ``parent`` is 0..n_parents-1 (the previous level's nodes, shifted), ``frame`` is
    0..n_frames-1.
    """
    n = len(parent)
    p, np_ = _compact(parent, n_parents)
    f, nf = _compact(frame, n_frames)
    key = p.astype(np.int64) * nf + f
    slots = np_ * nf
    if slots > max(DENSE_FACTOR * n, DENSE_MIN):
        key, uniq = factorize(key)  # any numbering: renumbered below
        slots = len(uniq)
    first_of = np.full(slots, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_of, key, order)
    first = np.flatnonzero(first_of[key] == order)  # one path per pair: its first
    first = first[np.argsort(order[first], kind="stable")]
    rank = np.empty(slots, dtype=np.int64)
    rank[key[first]] = np.arange(len(first), dtype=np.int64)
    return rank[key], first


def tree_from_paths(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(parent, frame, leaf, bounds)`` exactly as :func:`parsers.builder.tree_from_paths`
    gives them (path ``k`` is ``flat[starts[k]:starts[k] + lengths[k]]``, root first).

    The paths are taken longest first, so the paths still going at a level are a prefix
    of them (slices, not gathers); each level's nodes still come in the order of their
    first path in the caller's order.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    flat = np.asarray(flat)
    if len(lengths) and int(lengths.min()) < 1:
        raise ValueError("every path needs at least one frame")
    order = np.argsort(-lengths, kind="stable")
    s_starts = starts[order]
    # the number of paths longer than d, for each level d
    going = np.searchsorted(-lengths[order], -np.arange(int(lengths.max(initial=0))),
                            side="left")
    node = np.full(len(starts), -1, dtype=np.int64)  # per path, in the longest-first order
    parents: list[np.ndarray] = []
    frames: list[np.ndarray] = []
    lo, hi = -1, 0  # the previous level's nodes: lo..hi-1 (the root level: "-1")
    for level, m in enumerate(going.tolist()):
        f = flat[s_starts[:m] + level].astype(np.int64)
        par = node[:m]
        codes, first = level_codes(par - lo, f, hi - lo, int(n_frames), order[:m])
        parents.append(par[first])
        frames.append(f[first])
        node[:m] = hi + codes
        lo, hi = hi, hi + len(first)
    leaf = np.empty_like(node)
    leaf[order] = node
    parent = np.concatenate(parents).astype(np.int32) if parents else np.zeros(0, np.int32)
    bounds = np.cumsum([0] + [len(p) for p in parents]).astype(np.int64)
    frame = np.concatenate(frames).astype(np.int32) if frames else np.zeros(0, np.int32)
    return parent, frame, leaf, bounds
