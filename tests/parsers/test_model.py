import numpy as np
import pytest

from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import (
    Kind,
    Metric,
    Unit,
    children_csr,
    depth_from_parent,
    inclusive_from_self,
)


def test_stack_builder_merges_and_sums():
    b = TreeBuilder(["self_samples"])
    f = b.frame
    a, bb, c = f("a", "m"), f("b", "m"), f("c", "m")
    b.add_stack([a, bb], self_samples=2)
    b.add_stack([a, bb], self_samples=3)
    b.add_stack([a, c], self_samples=1)
    b.add_stack([a], self_samples=4)
    p = b.build(
        path="x", format="test",
        metrics=[Metric("self_samples", Unit.SAMPLES, Kind.SELF),
                 Metric("total_samples", Unit.SAMPLES, Kind.INCLUSIVE, self_of="self_samples")],
        inclusive={"total_samples": "self_samples"},
    )
    assert p.n_nodes == 3
    assert p.values["self_samples"].tolist() == [4, 5, 1]
    assert p.values["total_samples"].tolist() == [10, 5, 1]
    assert p.children(0).tolist() == [1, 2]
    assert p.roots.tolist() == [0]
    assert p.depth.tolist() == [0, 1, 1]
    with pytest.raises(ValueError):
        p.values["self_samples"][0] = 1  # immutable


def test_depth_and_inclusive_on_random_tree():
    rng = np.random.default_rng(1)
    n = 2000
    parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)], dtype=np.int32)
    d = depth_from_parent(parent)
    ref = np.zeros(n, int)
    for i in range(1, n):
        ref[i] = ref[parent[i]] + 1
    assert (d == ref).all()
    v = rng.integers(0, 10, n)
    inc = inclusive_from_self(parent, v)
    ref_inc = v.astype(np.int64).copy()
    for i in range(n - 1, 0, -1):
        ref_inc[parent[i]] += ref_inc[i]
    assert (inc == ref_inc).all()
    off, ids = children_csr(parent)
    assert off[-1] == n


def test_preorder_and_outermost_recursion():
    from profdiff.parsers.model import outermost_mask, preorder_and_size
    # 0:a -> 1:b -> 2:a -> 3:c ; 0:a -> 4:c
    parent = np.array([-1, 0, 1, 2, 0], dtype=np.int32)
    pre, size = preorder_and_size(parent)
    assert pre.tolist() == [0, 1, 2, 3, 4]
    assert size.tolist() == [5, 3, 2, 1, 1]
    keys = np.array([0, 1, 0, 2, 2])
    assert outermost_mask(keys, pre, size).tolist() == [True, True, False, True, True]
    # same with children listed out of DFS order
    parent2 = np.array([-1, 0, 0, 1, 3], dtype=np.int32)  # 0:a ->1:b, 0->2:c ; 1->3:a ->4:c
    pre2, size2 = preorder_and_size(parent2)
    assert pre2.tolist() == [0, 1, 4, 2, 3]
    keys2 = np.array([0, 1, 2, 0, 2])
    assert outermost_mask(keys2, pre2, size2).tolist() == [True, True, True, False, True]
