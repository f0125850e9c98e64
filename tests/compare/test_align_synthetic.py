"""Alignment on small trees built with the builder: exact expectations by construction."""

import numpy as np

from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer.compare import Status, align

METRICS = [
    Metric("own", Unit.COUNT, Kind.SELF),
    Metric("total", Unit.COUNT, Kind.INCLUSIVE, self_of="own"),
]


def build(stacks):
    b = TreeBuilder(["own"])
    for frames, v in stacks:
        b.add_stack([b.frame(n, "M") for n in frames], own=v)
    return b.build(path="t", format="test", metrics=METRICS, inclusive={"total": "own"})


def test_tree_alignment_statuses_and_deltas():
    base = build([(["main", "f"], 10), (["main", "g"], 5), (["main", "f", "h"], 1)])
    new = build([(["main", "g"], 7), (["main", "f"], 10), (["main", "k"], 3)])
    c = align([base, new])
    rows = {"/".join(c.path_labels(i)): i for i in range(c.n_rows)}
    assert set(rows) == {"M.main", "M.main/M.f", "M.main/M.g", "M.main/M.f/M.h", "M.main/M.k"}
    st = c.status
    assert st[rows["M.main/M.f/M.h"]] == Status.REMOVED
    assert st[rows["M.main/M.k"]] == Status.ADDED
    assert st[rows["M.main/M.f"]] == Status.CHANGED  # total 11 -> 10
    assert c.delta("own")[rows["M.main/M.g"]] == 2
    assert c.delta("total")[rows["M.main"]] == 20 - 16
    # parents precede children in the union tree
    assert (c.parent < np.arange(c.n_rows)).all()


def test_flat_alignment_recursion_safe():
    # recursion: f -> g -> f ; the inclusive total of f counts the outer f only
    base = build([(["f", "g", "f"], 4), (["f"], 1)])
    new = build([(["f", "g", "f"], 4), (["f"], 2)])
    c = align([base, new], mode="flat")
    r = {c.name[i]: i for i in range(c.n_rows)}
    assert c.value("total", 0)[r["f"]] == 5
    assert c.value("own", 0)[r["f"]] == 5
    assert c.value("total", 1)[r["f"]] == 6
    assert c.value("total", 0)[r["g"]] == 4


def test_equal_siblings_kept_apart():
    b = TreeBuilder(["own"])
    m = b.frame("main", "M")
    f1 = b.frame("f", "M", src="a.hs:1")
    f2 = b.frame("f", "M", src="a.hs:9")
    root = b.add_child(-1, m)
    b.add_child(root, f2, own=2)
    b.add_child(root, f1, own=1)
    p = b.build(path="t", format="test", metrics=METRICS, inclusive={"total": "own"})
    c = align([p, p])
    assert c.n_rows == 3
    assert sorted(c.src[1:].tolist()) == ["a.hs:1", "a.hs:9"]
    assert (c.status == Status.SAME).all()


def test_incomparable_warnings_on_real_headers():
    from pathlib import Path

    from profdiff.parsers import load
    from profdiff.viewer.compare import incomparable_warnings

    hs = Path(__file__).parents[1] / "data/hs-ad"
    p, big_p = load(hs / "v1/ad.prof"), load(hs / "v2/ad.P.prof")
    assert incomparable_warnings([p, load(hs / "v2/ad.prof")]) == []
    (w,) = incomparable_warnings([p, big_p])
    assert w == "runs used different RTS options: -P vs -hT -p -s"


def test_equal_siblings_matched_by_rank_of_src():
    """Siblings with one key are matched n-th to n-th in (src, file order), in either
    run's order and with a different count in each run; their children follow them."""
    def run(children):
        b = TreeBuilder(["own"])
        root = b.add_child(-1, b.frame("main", "M"))
        for src, own, kid in children:
            node = b.add_child(root, b.frame("f", "M", src=src), own=own)
            if kid:
                b.add_child(node, b.frame("g", "M"), own=kid)
        return b.build(path="t", format="test", metrics=METRICS, inclusive={"total": "own"})

    base = run([("a.hs:5", 2, 1), ("a.hs:1", 1, 0)])
    new = run([("a.hs:7", 3, 0), ("a.hs:1", 1, 0), ("a.hs:5", 5, 1)])
    for b in (0, 1):
        c = align([base, new], baseline=b)
        assert c.n_rows == 5
        by_src = {c.src[i]: i for i in range(c.n_rows) if c.name[i] == "f"}
        assert sorted(by_src) == ["a.hs:1", "a.hs:5", "a.hs:7"]
        assert c.status[by_src["a.hs:1"]] == Status.SAME
        five = by_src["a.hs:5"]
        assert c.value("own", 0)[five] == 2 and c.value("own", 1)[five] == 5
        assert c.present[by_src["a.hs:7"]].tolist() == [False, True]
        g = next(i for i in range(c.n_rows) if c.name[i] == "g")
        assert c.parent[g] == five and c.status[g] == Status.SAME
