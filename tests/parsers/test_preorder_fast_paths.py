"""The pre-order fast paths of :mod:`parsers.model` (ids already in pre-order; the
(key, pre-order) order without ``np.lexsort``; the subtree ends a depth-first reader
offers) give what a plain recursive walk gives, on random trees in any id order and on
real GHC ``.prof`` and ``-pj`` files."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from profdiff.parsers import load, model
from profdiff.parsers.model import (
    children_csr,
    outermost_mask,
    preorder_and_size,
    preorder_from_ends,
)

DATA = Path(__file__).parents[1] / "data"
CFD = DATA / "ghc-prof" / "ghc-7.x-cfd-large-2015-06-15-0843.prof"
PJ = DATA / "ghc-prof-json" / "speedscope-binary-trees.pj.prof.json"


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


@settings(max_examples=300, deadline=None)
@given(trees(preorder_ids=True), st.data())
def test_subtree_ends_are_taken_only_when_they_are_the_trees(tree, data):
    """A depth-first tree's true ends give the walk's pre-order and sizes; any other
    ends (one moved, or drawn at random) are refused, never taken as the tree's."""
    parent, keys = tree
    ref_pre, ref_size, _ = _reference(parent, keys)
    assert ref_pre == list(range(len(parent)))
    ends = np.arange(len(parent)) + np.array(ref_size)
    got = preorder_from_ends(parent, ends)
    assert got is not None
    assert got[0].tolist() == ref_pre and got[1].tolist() == ref_size
    wrong = ends.copy()
    i = data.draw(st.integers(0, len(parent) - 1))
    wrong[i] += data.draw(st.sampled_from([-2, -1, 1, 2]))
    assert preorder_from_ends(parent, wrong) is None
    drawn = np.array(data.draw(st.lists(st.integers(0, len(parent) + 1),
                                        min_size=len(parent), max_size=len(parent))))
    if not np.array_equal(drawn, ends):
        assert preorder_from_ends(parent, drawn) is None


@settings(max_examples=200, deadline=None)
@given(trees(preorder_ids=False), st.data())
def test_ends_of_a_tree_not_numbered_depth_first_are_refused(tree, data):
    """Ids in any order: whatever ends are offered, only the walk's answer is taken."""
    parent, keys = tree
    ref_pre, ref_size, _ = _reference(parent, keys)
    drawn = np.array(data.draw(st.lists(st.integers(0, len(parent) + 1),
                                        min_size=len(parent), max_size=len(parent))))
    for ends in (drawn, np.arange(len(parent)) + np.array(ref_size)):
        got = preorder_from_ends(parent, ends)
        if got is not None:
            assert got[0].tolist() == ref_pre and got[1].tolist() == ref_size


def test_overlapping_siblings_are_refused():
    """Sizes that add up but ranges that overlap (node 2 inside its sibling 1's range)."""
    parent = np.array([-1, 0, 0], dtype=np.int32)
    assert preorder_from_ends(parent, np.array([3, 3, 3])) is None
    assert preorder_from_ends(parent, np.array([3, 2, 3])) is not None
    assert preorder_from_ends(parent, np.array([3, 2])) is None  # wrong length


def _walk_is_not_taken(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("preorder_and_size derived what the reader gave")

    monkeypatch.setattr(model, "preorder_and_size", refuse)


def test_a_prof_reader_gives_its_subtree_ends(monkeypatch):
    """The ``.prof`` reader's ends are the tree's: taken without deriving them."""
    p = load(CFD)
    _walk_is_not_taken(monkeypatch)
    pre, size = p.preorder_size
    ref_pre, ref_size, _ = _reference(np.asarray(p.parent), p.frame_key_codes[1])
    assert pre.tolist() == ref_pre and size.tolist() == ref_size


def test_a_pj_reader_gives_its_subtree_ends(monkeypatch):
    """The ``-pj`` reader's walk numbers nodes depth first: its ends are taken too."""
    p = load(PJ)
    assert p.format == "ghc-prof-json"
    _walk_is_not_taken(monkeypatch)
    pre, size = p.preorder_size
    ref_pre, ref_size, _ = _reference(np.asarray(p.parent), p.frame_key_codes[1])
    assert pre.tolist() == ref_pre and size.tolist() == ref_size


def test_wrong_ends_fall_back_to_the_walk():
    """Ends that are not the tree's are refused and the pre-order is derived."""
    p = load(CFD)
    p.offer_subtree_ends(np.full(p.n_nodes, p.n_nodes))  # every range to the end
    pre, size = p.preorder_size
    ref_pre, ref_size, _ = _reference(np.asarray(p.parent), p.frame_key_codes[1])
    assert pre.tolist() == ref_pre and size.tolist() == ref_size
