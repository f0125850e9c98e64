"""The call tree of many root-first paths, without a sort per level or pandas.

Same result as :func:`parsers.builder.tree_from_paths` (same node order, parents and
level bounds), which it calls for the levels this cannot take.  Why a second one: a
deep perf recording has ~100 levels of ~10^5 paths each; ``np.unique`` sorts every
level (~15 ms each) and pandas hashes it fast but costs 0.4-0.7 s to import, which was
a tenth of ``profdiff show`` of an 84k-sample perf.data.  A level's key (parent, frame)
has few distinct parents times few distinct frames, so a dense table indexed by the key
finds each key's first path with one ``np.minimum.at``: ~1 ms a level.

A few thousand paths ~100 deep (``profdiff show`` of a small perf.data) are another
matter: there a level is a few thousand paths at most and its ~15 numpy calls (~110 µs)
are the whole cost, ~14 ms for 127 levels.  Those paths are sorted once as rows of bytes
instead (:func:`_tree_by_sorting`), which takes O(log paths) numpy calls, not O(levels).
"""

from __future__ import annotations

import numpy as np

from .builder import factorize

DENSE_FACTOR = 16  # dense table up to this many slots per key (else: the sorting path)
DENSE_MIN = 1 << 16
# When the paths are sorted as byte rows instead (_tree_by_sorting): at least this many
# levels (fewer: the per-level build's fixed cost is small), at most this many paths
# (its walks cost O(log paths) per path; ~10^6 shallow paths: 2x slower) and paths x
# levels (its byte rows, a few MB; its node numbering gathers at random, which loses to
# the per-level build near 10^7 nodes).  Measured on a 2-core VM, numpy 2.4:
# 2,906 paths x 127 levels 10 -> 3.6 ms; 65,000 x 16: 52 -> 56 ms (the edge).
SORT_MIN_LEVELS = 20
SORT_MAX_PATHS = 1 << 16
SORT_MAX_CELLS = 1 << 22


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

    Few paths of many levels are sorted once (:func:`_tree_by_sorting`), where a per-level
    pass would pay its fixed cost ~100 times; the rest go level by level
    (:func:`_tree_by_levels`), whose work per level is in proportion to the paths.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    flat = np.asarray(flat)
    if len(lengths) and int(lengths.min()) < 1:
        raise ValueError("every path needs at least one frame")
    depth = int(lengths.max(initial=0))
    if (SORT_MIN_LEVELS <= depth and len(lengths) <= SORT_MAX_PATHS
            and len(lengths) * depth <= SORT_MAX_CELLS):
        tree = _tree_by_sorting(flat, starts, lengths, n_frames)
        if tree is not None:
            return tree
    return _tree_by_levels(flat, starts, lengths, n_frames)


def _byte_rows(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
               n_frames: int) -> np.ndarray | None:
    """The paths as rows that sort as the paths do: one unsigned big-endian frame id per
    column, so ``memcmp`` order is the paths' lexicographic order; after a path's end the
    largest value of the type (no frame has it).  Rows are padded to whole 8-byte words
    (compared a word at a time by :func:`_sorted_rows`).

    Each row is copied whole from a window over the frames, then its tail is set by an OR
    with a ready row of all-ones tails: no per-frame index or mask is built.  None when a
    frame id is outside ``0..n_frames-1``: the per-level build decides what happens then.
    """
    ends = np.cumsum(lengths)
    total = int(ends[-1])
    if int(starts[0]) == 0 and np.array_equal(starts[1:], ends[:-1]):
        frames = flat[:total]  # the usual layout: the paths one after another
    else:
        frames = flat[np.repeat(starts - (ends - lengths), lengths)
                      + np.arange(total, dtype=np.int64)]
    top = int(frames.max())
    if int(frames.min()) < 0 or top >= int(n_frames) or top >= (1 << 32) - 1:
        return None
    kind = np.dtype(np.uint8 if top < 255 else ">u2" if top < (1 << 16) - 1 else ">u4")
    width = -(-int(lengths.max()) * kind.itemsize // 8) * 8 // kind.itemsize
    line = np.empty(total + width, dtype=kind)
    line[:total] = frames
    line[total:] = np.iinfo(kind).max
    rows = np.lib.stride_tricks.sliding_window_view(line, width)[ends - lengths]
    cols = np.arange(width + 1, dtype=np.int32)
    tails = np.where(cols[:width] >= cols[:, None], np.iinfo(kind).max, 0).astype(kind)
    rows |= tails.take(lengths, axis=0)
    return rows


def _sorted_rows(rows: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, lcp) of byte rows from :func:`_byte_rows`: ``order`` sorts them (as the
    paths, lexicographically), ``lcp[i]`` (``1 <= i < n``) is the number of leading frames
    sorted path ``i`` shares with sorted path ``i - 1``.  ``lcp[0]`` and ``lcp[n]`` are -1,
    the bounds for :func:`_first_levels`.

    The common prefix is found a word at a time (8 frames of one byte), then the first
    differing byte within the word: 1/8 of a comparison per frame.
    """
    n, width = rows.shape
    order = np.argsort(rows.view(np.dtype((np.void, width * rows.itemsize))).ravel())
    order = order.astype(np.int32)
    words = rows[order].view(np.uint64)
    n_words = words.shape[1]
    at = (words[1:] != words[:-1]).argmax(axis=1)
    cell = np.arange(1, n, dtype=np.int64) * n_words + at
    flat_words = words.ravel()
    diff = flat_words[cell] ^ flat_words[cell - n_words]
    byte = (diff.view(np.uint8).reshape(-1, 8) != 0).argmax(axis=1)
    lcp = np.full(n + 1, -1, dtype=np.int32)
    lcp[1:n] = np.where(diff == 0, lengths[order[1:]], (at * 8 + byte) // rows.itemsize)
    return order, lcp


def _min_table(values: np.ndarray, levels: int) -> np.ndarray:
    """Sparse table for range minima: ``table[k, x]`` is ``min(values[x : x + 2**k])``,
    -1 wherever that range leaves ``values`` (so a walk stops there)."""
    table = np.full((levels, len(values)), -1, dtype=np.int32)
    table[0] = values
    for k in range(1, levels):
        half = 1 << (k - 1)
        np.minimum(table[k - 1, :-half], table[k - 1, half:], out=table[k, :-half])
    return table


def _both_ways(values: np.ndarray, levels: int) -> np.ndarray:
    """:func:`_min_table` of ``values, -1, values reversed, -1``: a walk rightwards in the
    second half is a walk leftwards in ``values``, so one walk serves both directions."""
    return _min_table(np.concatenate((values, [-1], values[::-1], [-1])), levels)


def _walk(table: np.ndarray, cursor: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Move each cursor (in place) rightwards over the longest run of values ``> above``
    (``values[old:cursor]``) by halving steps: binary lifting on the :func:`_min_table`,
    4 calls per halving for all cursors (``take``/``out=``: ~half the time of ``[]`` and
    ``where=`` on a few thousand cursors)."""
    seen = np.empty_like(cursor)
    moves = np.empty(len(cursor), dtype=bool)
    for k in range(len(table) - 1, -1, -1):
        table[k].take(cursor, out=seen)
        np.greater(seen, above, out=moves)
        cursor += moves * np.int32(1 << k)
    return cursor


def _range_min(table: np.ndarray, spans: tuple[np.ndarray, np.ndarray], lo: np.ndarray,
               hi: np.ndarray) -> np.ndarray:
    """``min(values[lo : hi + 1])`` for each pair (``lo <= hi``) from the :func:`_min_table`
    (raveled).  ``spans`` from :func:`_first_levels`: per ``hi - lo``, where in ``table``
    its two overlapping power-of-two halves start, relative to ``lo`` and to ``hi``."""
    span = hi - lo
    return np.minimum(table[spans[0][span] + lo], table[spans[1][span] + hi])


def _first_levels(order: np.ndarray, lcp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fp, q) per sorted path ``i``: ``fp`` is the most leading frames it shares with a
    path earlier in the caller's order (so it is the first path through its nodes at
    levels ``fp..length-1`` and through no other), and ``q`` the earliest path through its
    node at level ``fp - 1`` (meaningless where ``fp == 0``).

    Paths sharing a prefix are a run of the sorted paths, so both are range questions:
    the nearest earlier path on each side (runs of larger ``order``), the least ``lcp``
    between, and the run sharing ``fp`` frames; each is O(log n) whole-array calls.
    A leftward walk from ``x`` in ``m`` values is a rightward one from ``2m + 1 - x``.
    """
    n = len(order)
    levels = (n + 1).bit_length()  # 2**levels > n + 1: a walk can cross all values
    by_order, by_lcp = _both_ways(order, levels), _both_ways(lcp, levels)
    k = np.frexp(np.arange(1, n + 1, dtype=np.float64))[1] - 1  # floor(log2(span + 1))
    spans = [(k * t.shape[1], k * t.shape[1] + 1 - np.left_shift(1, k))
             for t in (by_order, by_lcp)]
    row = np.arange(n, dtype=np.int32)
    ends = _walk(by_order, np.concatenate((2 * n + 1 - row, row + 1)), np.tile(order, 2))
    lo, hi = 2 * n + 1 - ends[:n], ends[n:]  # paths lo..row-1 and row+1..hi-1 come later
    fp = np.maximum(_range_min(by_lcp.ravel(), spans[1], lo, row),
                    _range_min(by_lcp.ravel(), spans[1], row + 1, hi))
    np.maximum(fp, 0, out=fp)
    ends = _walk(by_lcp, np.concatenate((2 * n + 2 - row, row + 1)), np.tile(fp - 1, 2))
    lo, hi = 2 * n + 3 - ends[:n], ends[n:]  # lcp[lo..row] >= fp, lcp[row+1..hi-1] too
    return fp, _range_min(by_order.ravel(), spans[0], lo - 1, hi - 1)


def _tree_by_sorting(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`tree_from_paths` from the paths sorted once; None when frame ids do not fit
    (see :func:`_byte_rows`).

    Path ``k`` makes the nodes at levels ``fp[k]..length-1`` (:func:`_first_levels`), so
    listing them path by path and sorting the list by level (stably) numbers the nodes
    as the per-level build does (:func:`_number_by_level`).  A node's parent is the one
    before it on its path, or for a path's first own node the node at level ``fp - 1``
    of path ``q``.
    """
    rows = _byte_rows(flat, starts, lengths, n_frames)
    if rows is None:
        return None
    order, lcp = _sorted_rows(rows, lengths)
    del rows
    fp_sorted, q_sorted = _first_levels(order, lcp)
    fp, q = np.empty_like(fp_sorted), np.empty_like(q_sorted)
    fp[order], q[order] = fp_sorted, q_sorted
    return _number_by_level(flat, starts, lengths, fp, q)


def _number_by_level(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, fp: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tree's columns from :func:`_first_levels`' ``fp`` and ``q`` (per path, in the
    caller's order): the nodes listed path by path, then a stable sort by level.

    The node-sized arrays are made one after another and the int64 ones dropped early:
    at ~10^6 nodes they, not the paths, set the peak memory.
    """
    count = lengths.astype(np.int32) - fp
    ends = np.cumsum(count, dtype=np.int32)
    firsts = ends - count
    n_nodes = int(ends[-1])
    level = np.arange(n_nodes, dtype=np.int32)
    level -= np.repeat(firsts - fp, count)
    cells = np.repeat(starts, count)
    cells += level
    frame = flat[cells].astype(np.int32, copy=False)
    del cells
    depth = int(lengths.max())
    key = level.astype(np.uint8 if depth <= 256 else np.uint16 if depth <= 1 << 16 else np.int32)
    by_level = np.argsort(key, kind="stable")  # a radix sort for the small types
    del key
    frame = frame[by_level]
    rank = np.empty(n_nodes + 1, dtype=np.int32)  # rank[-1] = -1: "no parent"
    rank[by_level] = np.arange(n_nodes, dtype=np.int32)
    rank[n_nodes] = -1
    # the node at level fp - 1 of each path (made by path q), in the path-by-path list
    above = np.where(fp > 0, firsts[q] + fp - 1 - fp[q], -1)
    parent = np.arange(-1, n_nodes - 1, dtype=np.int32)
    own = count > 0
    parent[firsts[own]] = above[own]
    parent = rank[parent[by_level]]
    leaf = rank[np.where(own, ends - 1, above)].astype(np.int64)
    bounds = np.zeros(depth + 1, dtype=np.int64)
    np.cumsum(np.bincount(level, minlength=depth), out=bounds[1:])
    return parent, frame, leaf, bounds


def _tree_by_levels(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tree_from_paths` one level at a time (lengths checked, arrays converted).

    The paths are taken longest first, so the paths still going at a level are a prefix
    of them (slices, not gathers); each level's nodes still come in the order of their
    first path in the caller's order.
    """
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
