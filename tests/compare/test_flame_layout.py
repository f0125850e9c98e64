"""Flame-graph layout (Qt-free): widths are inclusive shares, ghosts for removed calls,
a vectorised layout equal to a plain recursive one on a 10^5-node tree, search shares."""

import numpy as np
import pytest

from profdiff.parsers.builder import TreeBuilder, profile_from_arrays
from profdiff.parsers.model import Kind, Metric, Unit, make_frame_table
from profdiff.viewer.colors import ADDED, REMOVED, DivergingScale
from profdiff.viewer.compare import Status, align
from profdiff.viewer.flame_layout import (
    ancestors,
    color_changes,
    compute_layout,
    default_width_metric,
    effective_widths,
    layout_comparison,
    match_rows,
    outermost,
    row_colors,
    search_share,
)

METRICS = [
    Metric("own", Unit.COUNT, Kind.SELF),
    Metric("total", Unit.COUNT, Kind.INCLUSIVE, self_of="own"),
]


def build(stacks):
    b = TreeBuilder(["own"])
    for frames, v in stacks:
        b.add_stack([b.frame(n, "M") for n in frames], own=v)
    return b.build(path="t", format="test", metrics=METRICS, inclusive={"total": "own"})


BASE = [(["main", "f"], 10), (["main", "g"], 5), (["main", "f", "h"], 5), (["main"], 0)]
NEW = [(["main", "g"], 7), (["main", "f"], 10), (["main", "k"], 3)]


def rows_by_path(c):
    return {"/".join(n.split(".", 1)[1] for n in c.path_labels(i)): i for i in range(c.n_rows)}


def reference_layout(parent, w, names=None):
    """Plain recursive placement: children widest first (ties by id), clipped to the parent."""
    n = len(parent)
    kids = [[] for _ in range(n)]
    roots = []
    for i, p in enumerate(parent):
        (kids[p] if p >= 0 else roots).append(i)
    x0 = np.zeros(n)
    wid = np.array(w, dtype=float)
    total = sum(wid[r] for r in roots)

    def place(ch, start, end):
        ch = sorted(ch, key=lambda i: (-w[i], i))
        x = start
        for c in ch:
            x0[c] = min(x, end)
            wid[c] = max(min(wid[c], end - x0[c]), 0.0)
            x += w[c]
    stack = [(roots, 0.0, float("inf"))]
    while stack:
        ch, s, e = stack.pop()
        place(ch, s, e)
        for c in ch:
            if kids[c]:
                stack.append((kids[c], x0[c], x0[c] + wid[c]))
    return x0 / total, wid / total


def test_widths_are_inclusive_shares_current_basis():
    base = build([(["main", "f"], 10), (["main", "g"], 5)])
    new = build([(["main", "g"], 7), (["main", "f"], 10), (["main", "f", "x"], 3)])
    c = align([base, new])
    assert default_width_metric(c, "own") == "total"
    lay = layout_comparison(c, "total", "current")
    r = rows_by_path(c)
    tot = 20.0
    for path, row in r.items():
        assert lay.width[row] == pytest.approx(c.value("total", 1)[row] / tot), path
    # left heavy: f (13) before g (7), children start at their parent's x0
    assert lay.x0[r["main/f"]] == pytest.approx(0.0)
    assert lay.x0[r["main/g"]] == pytest.approx(13 / 20)
    assert lay.x0[r["main/f/x"]] == pytest.approx(0.0)
    # baseline basis: widths are the baseline shares, the added x is a ghost at its new width
    lb = layout_comparison(c, "total", "baseline")
    assert lb.width[r["main/g"]] == pytest.approx(5 / 18)
    assert lb.width[r["main/f/x"]] == pytest.approx(3 / 18)
    assert lb.width[r["main/f"]] == pytest.approx(13 / 18)  # 10 own + ghost x


def test_removed_nodes_keep_their_baseline_width():
    c = align([build(BASE), build(NEW)])
    r = rows_by_path(c)
    h, k = r["main/f/h"], r["main/k"]
    assert c.status[h] == Status.REMOVED and c.status[k] == Status.ADDED
    w = effective_widths(c, "total", "current")
    assert w[h] == 5  # baseline inclusive of the removed call
    assert w[r["main/f"]] == 10 + 5  # current 10 plus the ghost below it
    assert w[k] == 3
    lay = layout_comparison(c, "total", "current")
    assert lay.width[h] > 0
    # the ghost sits inside its parent's rectangle
    f = r["main/f"]
    assert lay.x0[f] <= lay.x0[h] and lay.x0[h] + lay.width[h] <= lay.x0[f] + lay.width[f] + 1e-12
    # colours: removed grey, added yellow
    col = row_colors(c, "total", "incl_abs", DivergingScale())
    assert tuple(col[h]) == REMOVED and tuple(col[k]) == ADDED


def test_max_basis_contains_both_runs_and_children_fit():
    c = align([build(BASE), build(NEW)])
    w = effective_widths(c, "total", "max")
    inc = c.values["total"]
    assert (w >= np.maximum(inc[:, 0], inc[:, 1]) - 1e-9).all()
    kids_sum = np.bincount(c.parent[c.parent >= 0], weights=w[c.parent >= 0],
                           minlength=c.n_rows)
    assert (kids_sum <= w + 1e-9).all()
    r = rows_by_path(c)
    assert w[r["main/g"]] == 7 and w[r["main/f"]] == 15 and w[r["main/k"]] == 3


def test_color_changes_self_and_inclusive():
    c = align([build(BASE), build(NEW)])
    r = rows_by_path(c)
    # inclusive, percent of own run: main/g went 5/20 -> 7/20 = +10 pp
    d = color_changes(c, "total", "incl_pct")
    assert d[r["main/g"]] == pytest.approx(10.0)
    # self absolute of main/f: 10 -> 10 = 0, its inclusive: 15 -> 10 = -5
    assert color_changes(c, "total", "self_abs")[r["main/f"]] == 0
    assert color_changes(c, "own", "incl_abs")[r["main/f"]] == -5
    better_high = Metric("score", Unit.COUNT, Kind.SELF, better="higher")
    assert better_high.better == "higher"


def test_layout_matches_recursive_reference_on_1e5_nodes():
    rng = np.random.default_rng(7)
    n = 100_000
    parent = np.empty(n, dtype=np.int32)
    parent[0] = -1
    parent[1:3] = -1  # three roots
    i = np.arange(3, n)
    parent[3:] = (i * rng.random(n - 3) ** 0.2).astype(np.int32)  # biased to recent nodes
    parent[3:] = np.minimum(parent[3:], i - 1)
    own = rng.integers(0, 50, n).astype(float)
    own[rng.random(n) < 0.2] = 0.0  # zero-cost rows (common in GHC profiles)
    from profdiff.parsers.model import inclusive_from_self

    inc = inclusive_from_self(parent, own)
    lay = compute_layout(parent, inc)
    rx0, rw = reference_layout(parent, inc)
    np.testing.assert_allclose(lay.x0, rx0, atol=1e-12)
    np.testing.assert_allclose(lay.width, rw, atol=1e-12)
    np.testing.assert_allclose(lay.width, inc / inc[parent < 0].sum(), rtol=1e-12)
    # per level, rows are in x order and do not overlap
    for d in range(lay.n_levels):
        s, e = lay.bounds[d], lay.bounds[d + 1]
        assert (np.diff(lay.xs[s:e]) >= -1e-15).all()
        assert (lay.xs[s + 1:e] >= lay.xe[s:e - 1] - 1e-12).all()
    # hit testing finds the row under a point
    for row in rng.choice(np.flatnonzero(lay.width > 1e-6), 50):
        x = lay.x0[row] + lay.width[row] / 2
        assert lay.row_at(int(lay.depth[row]), x) == row


def test_overflowing_children_are_clipped_to_parent():
    parent = np.array([-1, 0, 0, 1])
    w = np.array([10.0, 7.0, 5.0, 9.0])  # children sum 12 > 10; grandchild 9 > 7
    lay = compute_layout(parent, w)
    assert lay.x0[2] == pytest.approx(0.7) and lay.width[2] == pytest.approx(0.3)
    assert lay.width[3] == pytest.approx(0.7)


def test_search_share_counts_outermost_matches_once():
    # recursion f -> g -> f: only the outer f counts
    p = build([(["main", "f", "g", "f"], 4), (["main", "f"], 1), (["main", "h"], 5)])
    c = align([p, p])
    lay = layout_comparison(c, "total", "current")
    m = match_rows(c, "f")
    r = rows_by_path(c)
    top = outermost(c.parent, m, c.depth)
    assert top[r["main/f"]] and not top[r["main/f/g/f"]]
    assert search_share(lay, c.parent, m) == pytest.approx(5 / 10)
    assert match_rows(c, "M.H")[r["main/h"]]  # module-qualified, case-insensitive
    assert match_rows(c, "/^M\\.(g|h)$/").sum() == 2
    assert ancestors(c.parent, r["main/f/g/f"]) == [r["main"], r["main/f"], r["main/f/g"]]


def test_self_only_metric_gets_inclusive_widths_on_union_tree():
    frames = make_frame_table(["a", "b", "c"], ["M", "M", "M"])
    m = [Metric("cost", Unit.COUNT, Kind.SELF)]
    p = profile_from_arrays(path="x", format="t", frames=frames, parent=np.array([-1, 0, 0]),
                            frame=np.array([0, 1, 2]), metrics=m,
                            columns={"cost": np.array([1.0, 2.0, 7.0])})
    c = align([p, p])
    assert default_width_metric(c) == "cost"
    lay = layout_comparison(c, "cost", "current")
    assert lay.total == 10
    assert list(lay.width) == pytest.approx([1.0, 0.2, 0.7])
