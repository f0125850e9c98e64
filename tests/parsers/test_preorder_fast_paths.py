"""The pre-order fast paths of :mod:`parsers.model` (ids already in pre-order; the
(key, pre-order) order without ``np.lexsort``) give what a plain recursive walk gives,
on random trees in any id order and on a real GHC ``.prof``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from profdiff.parsers import load
from profdiff.parsers.model import children_csr, outermost_mask, preorder_and_size

CFD = Path(__file__).parents[1] / "data" / "ghc-prof" / "ghc-7.x-cfd-large-2015-06-15-0843.prof"


def _reference(parent: np.ndarray, keys: np.ndarray) -> tuple[list[int], list[int], list[bool]]:
    """Pre-order index, subtree size and 'no ancestor of the same key', by recursion."""
    n = len(parent)
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for i, p in enumerate(parent.tolist()):
        kids[n if p < 0 else p].append(i)
    pre, size, outer = [0] * n, [1] * n, [True] * n
    counter = 0

    def walk(i: int, seen: frozenset) -> None:
        nonlocal counter
        pre[i] = counter
        counter += 1
        outer[i] = int(keys[i]) not in seen
        for c in kids[i]:
            walk(c, seen | {int(keys[i])})
            size[i] += size[c]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * n + 100))
    for r in kids[n]:
        walk(r, frozenset())
    return pre, size, outer


@st.composite
def trees(draw, preorder_ids: bool):
    """(parent, keys): a random forest; ``preorder_ids`` lays its ids out depth first
    (as a ``.prof`` does), else in a random order."""
    n = draw(st.integers(1, 60))
    # node k's parent is an earlier node or none (a forest in creation order)
    parents = [-1] + [draw(st.integers(-1, k - 1)) for k in range(1, n)]
    if preorder_ids:  # renumber by a depth-first walk, children in creation order
        kids: list[list[int]] = [[] for _ in range(n)]
        for k, p in enumerate(parents):
            if p >= 0:
                kids[p].append(k)
        order: list[int] = []
        stack = [k for k, p in enumerate(parents) if p < 0][::-1]
        while stack:
            k = stack.pop()
            order.append(k)
            stack.extend(kids[k][::-1])
    else:
        order = draw(st.permutations(range(n)))
    new_id = {old: i for i, old in enumerate(order)}
    parent = np.full(n, -1, dtype=np.int32)
    for old, p in enumerate(parents):
        parent[new_id[old]] = -1 if p < 0 else new_id[p]
    keys = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int64)
    return parent, keys


def _check(parent: np.ndarray, keys: np.ndarray) -> None:
    pre, size = preorder_and_size(parent)
    ref_pre, ref_size, ref_outer = _reference(parent, keys)
    assert pre.tolist() == ref_pre
    assert size.tolist() == ref_size
    assert outermost_mask(keys, pre, size).tolist() == ref_outer
    pre2, _ = preorder_and_size(parent, csr=children_csr(parent))
    assert pre2.tolist() == ref_pre


@settings(max_examples=300, deadline=None)
@given(trees(preorder_ids=True))
def test_trees_numbered_depth_first(tree):
    _check(*tree)


@settings(max_examples=300, deadline=None)
@given(trees(preorder_ids=False))
def test_trees_numbered_in_any_order(tree):
    _check(*tree)


def test_wide_keys_take_the_general_sort():
    """Keys of 2^16 and more (no 16-bit radix sort) order the same."""
    parent = np.array([-1, 0, 1, 2, 0], dtype=np.int32)
    keys = np.array([70_000, 5, 70_000, 1 << 40, 1 << 40], dtype=np.int64)
    _check(parent, keys)


def test_a_real_prof_is_recognised_as_preorder():
    """A ``.prof`` lists its rows depth first: the fast path's answer is the walk's (a
    7.9k-node run with recursion: 119 call sites below one of the same cost centre)."""
    p = load(CFD)
    pre, size = p.preorder_size
    assert np.array_equal(pre, np.arange(p.n_nodes))
    codes = p.frame_key_codes[1]
    ref_pre, ref_size, ref_outer = _reference(np.asarray(p.parent), codes)
    assert pre.tolist() == ref_pre and size.tolist() == ref_size
    assert outermost_mask(codes, pre, size).tolist() == ref_outer
    assert ref_outer.count(False) == 119
