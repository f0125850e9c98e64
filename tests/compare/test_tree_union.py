"""The union tree of a tree comparison (``viewer.tree_union``) against a plain reference
walk, on real runs with duplicate siblings (same key twice under one parent), 2 and 3
runs and every baseline; and the baseline's half made ahead (``prepare``) is what the
alignment then takes, unless its keys are not the alignment's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer import compare, tree_union
from profdiff.viewer.factorize import factorize
from profdiff.viewer.rules import KeyMap

DATA = Path(__file__).parents[1] / "data"
GP = DATA / "ghc-prof"
SETS = {
    # 232 duplicate (parent, key) pairs in each run: the most in the test data
    "cfd-large": [GP / "ghc-7.x-cfd-large-2015-06-15-0843.prof",
                  GP / "ghc-7.x-cfd-large-2015-06-15-1603.prof"],
    "startstopfrp": [GP / "ghc-7.10.3-startstopfrp-example-2016-09-26.prof",
                     GP / "ghc-7.10.3-startstopfrp-example-2016-09-27.prof",
                     GP / "ghc-7.10.3-startstopfrp-example-2016-10-14.prof"],
    # duplicates listed in another order in each run: matched by their SRC, not by rank
    # in the file
    "digit-recog": [GP / "ghc-8.x-digit-recog-pa-run1-13h44.prof",
                    GP / "ghc-8.x-digit-recog-pa-run2-14h05.prof",
                    GP / "ghc-8.x-digit-recog-pa-run3-14h31.prof"],
    "hs-ad": [DATA / "hs-ad/v1/ad.P.prof", DATA / "hs-ad/v2/ad.P.prof"],
    "ticky": [DATA / "format-views/ghc-7.x-haskell-opengl-Modern-Main.ticky",
              DATA / "format-views/ghc-7.x-haskell-opengl-src-Main.ticky"],
}


def _reference(runs, baseline):
    """Rows by a walk with a dict per level: a node's row is its (parent's row, key,
    rank among its run's siblings of that key by (src, id)); rows numbered level by
    level, the baseline's nodes first, then each run's new ones in id order.  Returns
    (per run the row of each node, per row its parent row and (run, node))."""
    visit = [baseline] + [r for r in range(len(runs)) if r != baseline]
    row_of = [np.full(p.n_nodes, -1, dtype=np.int64) for p in runs]
    parent, rep = [], []
    for d in range(max(int(p.depth.max()) for p in runs) + 1):
        level: dict[tuple, int] = {}
        for r in visit:
            p = runs[r]
            nodes = np.flatnonzero(p.depth == d).tolist()
            siblings: dict[tuple, list[int]] = {}
            for n in nodes:
                par = int(p.parent[n])
                prow = int(row_of[r][par]) if par >= 0 else -1
                siblings.setdefault((prow, p.frames.key[p.frame[n]]), []).append(n)
            path: dict[int, tuple] = {}
            for (prow, key), same in siblings.items():
                same.sort(key=lambda n, p=p: (p.frames.src[p.frame[n]], n))
                for rank, n in enumerate(same):
                    path[n] = (prow, key, rank)
            for n in nodes:  # id order: new rows numbered as they first appear
                if path[n] not in level:
                    level[path[n]] = len(parent)
                    parent.append(path[n][0])
                    rep.append((r, n))
                row_of[r][n] = level[path[n]]
    return row_of, np.array(parent), rep


def _union(runs, baseline):
    keys = [p.frames.key for p in runs]
    codes, uniques = factorize(np.concatenate(keys))
    offs = np.cumsum([0] + [len(k) for k in keys])
    gkey = [codes[offs[i]:offs[i + 1]] for i in range(len(runs))]
    return tree_union.union_tree(runs, baseline, keys, gkey, len(uniques)), uniques


@pytest.mark.parametrize("name", list(SETS))
def test_rows_are_the_reference_walks(name):
    files = [load(p) for p in SETS[name]]
    dups = 0
    for runs in ([files[0], files[1]], files):
        for b in range(len(runs)):
            want_rows, want_parent, want_rep = _reference(runs, b)
            got, uniques = _union(runs, b)
            for r in range(len(runs)):
                assert np.array_equal(got.union_of[r][:-1], want_rows[r]), (name, b, r)
            assert np.array_equal(got.parent, want_parent)
            assert [(int(r), int(n)) for r, n in zip(got.rep_run, got.rep_node,
                                                     strict=True)] == want_rep
            assert list(uniques[got.key]) == [runs[r].frames.key[runs[r].frame[n]]
                                              for r, n in want_rep]
            assert sum(got.level_sizes) == len(want_parent)
            # a run's two nodes sharing a row would be a lost duplicate
            dups += sum(p.n_nodes - len(np.unique(u[:-1]))
                        for p, u in zip(runs, got.union_of, strict=True))
    assert dups == 0


def test_duplicates_are_there_to_be_told_apart():
    """The reference check above is only as good as its data: cfd-large has 232
    (parent, key) pairs with 2+ nodes in each run."""
    p = load(SETS["cfd-large"][0])
    codes = np.unique(p.frames.key, return_inverse=True)[1][p.frame]
    k = (p.parent.astype(np.int64) + 1) * (int(codes.max()) + 1) + codes
    _, count = np.unique(k, return_counts=True)
    assert int((count > 1).sum()) == 232


def test_the_prepared_baseline_is_taken(monkeypatch):
    runs = [load(p) for p in SETS["cfd-large"]]
    whole = compare.align(runs, mode="tree")
    tree_union.prepare(runs[0], runs[0].frames.key)
    assert tree_union.is_prepared(runs[0])

    def not_again(*a, **k):
        raise AssertionError("the baseline's levels were made again")

    monkeypatch.setattr(tree_union, "baseline_levels", not_again)
    got = compare.align(runs, mode="tree")
    assert np.array_equal(got.parent, whole.parent)
    assert np.array_equal(got.node, whole.node)
    assert list(got.keys) == list(whole.keys)
    tree_union.forget(runs)
    assert not tree_union.is_prepared(runs[0])


def test_prepared_levels_with_other_keys_are_not_taken(monkeypatch):
    """A rule the loader did not know of (one matching ``.mem`` files' sources) gives
    the alignment other keys: the prepared levels are not its own."""
    runs = [load(p) for p in SETS["cfd-large"]]
    tree_union.prepare(runs[0], runs[0].frames.key)
    made = []
    real = tree_union.baseline_levels
    monkeypatch.setattr(tree_union, "baseline_levels",
                        lambda *a: made.append(1) or real(*a))
    rule = KeyMap(((runs[0].frames.key[3], "renamed\x1fby a rule"),))
    got = compare.align(runs, mode="tree", rules=[rule])
    assert made == [1]
    assert "renamed\x1fby a rule" in set(got.keys)
    tree_union.forget(runs)


def test_duplicates_match_by_src_whatever_their_order(tmp_path):
    """GHC lists siblings by cost, so two runs may list a pair of duplicates (hs-ad's
    two ``trainStep.(...)`` under ``trainStep``, at Main.hs:22 and Main.hs:23) in either
    order.  hs-ad v2 with that pair's two subtrees listed the other way round: each is
    still matched with v1's of the same SRC."""
    lines = (DATA / "hs-ad/v2/ad.P.prof").read_text().splitlines(keepends=True)
    at23 = next(i for i, ln in enumerate(lines)
                if "trainStep.(...)" in ln and "Main.hs:23:7-57" in ln and " 320 " in ln)
    at22 = next(i for i, ln in enumerate(lines)
                if "trainStep.(...)" in ln and "Main.hs:22:7-57" in ln and " 320 " in ln)
    indent = len(lines[at22]) - len(lines[at22].lstrip())
    end22 = next(i for i in range(at22 + 1, len(lines))
                 if len(lines[i]) - len(lines[i].lstrip()) <= indent)
    assert at23 < at22 < end22
    swapped = lines[:at23] + lines[at22:end22] + lines[at23:at22] + lines[end22:]
    (tmp_path / "ad.P.prof").write_text("".join(swapped))
    runs = [load(DATA / "hs-ad/v1/ad.P.prof"), load(tmp_path / "ad.P.prof")]
    want_rows, want_parent, _ = _reference(runs, 0)
    got, _ = _union(runs, 0)
    for r in range(2):
        assert np.array_equal(got.union_of[r][:-1], want_rows[r])
    assert np.array_equal(got.parent, want_parent)
    for src in ("Main.hs:22:7-57", "Main.hs:23:7-57"):
        rows = [{int(got.union_of[r][n]) for n in np.flatnonzero(
                 (p.name == "trainStep.(...)") & (p.src == src) & (p.depth == 8))}
                for r, p in enumerate(runs)]
        assert len(rows[0]) == 1 and rows[0] == rows[1], src


def test_the_loader_prepares_the_baseline_while_reading(monkeypatch):
    """The window's load starts the baseline's levels from its reading thread, as soon
    as it is read; the tree alignment takes them (nothing made again) and forgets them;
    a load of groups, which compares their means, prepares nothing."""
    from profdiff.viewer.qt import loader
    from profdiff.viewer.session import SessionSpec, Slot

    prepared: list[tuple[str, str]] = []
    real_prepare = tree_union.prepare

    def prepare(profile, keys, **kw):
        import threading

        prepared.append((Path(profile.path).parent.name, threading.current_thread().name))
        real_prepare(profile, keys, **kw)

    made: list[str] = []
    real_levels = tree_union.baseline_levels
    monkeypatch.setattr(tree_union, "prepare", prepare)
    monkeypatch.setattr(tree_union, "WAIT_S", 10.0)  # a busy test machine: still taken
    monkeypatch.setattr(tree_union, "baseline_levels",
                        lambda p, k: made.append(Path(p.path).parent.name) or real_levels(p, k))
    slots = [Slot(str(DATA / "hs-ad/v2/ad.P.prof")), Slot(str(DATA / "hs-ad/v1/ad.P.prof"))]
    for baseline, name in ((0, "v2"), (1, "v1")):
        prepared.clear()
        made.clear()
        spec = SessionSpec(files=[s.path for s in slots], baseline=baseline)
        res = loader.load_and_align(slots, spec)
        assert [p for p, _ in prepared] == [name]
        assert prepared[0][1].startswith("profdiff-read")  # beside the other file's read
        assert made == [name]  # by prepare, not again by the alignment
        assert res.tree is not None and res.tree.baseline == baseline
        assert not any(tree_union.is_prepared(p) for p in res.runs)
    prepared.clear()
    loader.load_and_align(slots, SessionSpec(files=[s.path for s in slots]), n_base=1)
    assert prepared == []


def test_levels_made_beside_run_at_the_lowest_priority(monkeypatch):
    """``prepare(beside=True)`` returns at once; the levels are made in a thread of
    niceness 19 (on a core the reads leave idle, never in their way), and the
    alignment takes them rather than making its own."""
    import os
    import sys
    import threading

    runs = [load(p) for p in SETS["cfd-large"]]
    whole = compare.align(runs, mode="tree")
    seen: list[tuple[str, int]] = []
    go = threading.Event()
    real = tree_union.baseline_levels

    def levels(profile, keys):
        go.wait(10)
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) \
            if sys.platform == "linux" else tree_union.IDLE_NICE
        seen.append((threading.current_thread().name, nice))
        return real(profile, keys)

    monkeypatch.setattr(tree_union, "baseline_levels", levels)
    monkeypatch.setattr(tree_union, "WAIT_S", 10.0)
    tree_union.prepare(runs[0], runs[0].frames.key, beside=True)
    assert seen == [] and tree_union.is_prepared(runs[0])  # not made yet: waiting for go
    threading.Timer(0.2, go.set).start()
    got = compare.align(runs, mode="tree")  # waits for the thread's levels
    assert seen == [("profdiff-baseline-levels", tree_union.IDLE_NICE)]
    assert np.array_equal(got.node, whole.node) and np.array_equal(got.parent, whole.parent)
    tree_union.forget(runs)


def test_levels_not_made_in_time_are_made_by_the_alignment(monkeypatch):
    """A thread of the lowest priority on a busy machine may not run for a long while:
    the alignment waits for it ``WAIT_S`` at most, then makes the levels itself."""
    import threading
    import time

    runs = [load(p) for p in SETS["cfd-large"]]
    whole = compare.align(runs, mode="tree")
    starved = threading.Event()
    real = tree_union.baseline_levels
    made: list[str] = []

    def levels(profile, keys):
        if threading.current_thread().name == "profdiff-baseline-levels":
            starved.wait(10)
        made.append(threading.current_thread().name)
        return real(profile, keys)

    monkeypatch.setattr(tree_union, "baseline_levels", levels)
    tree_union.prepare(runs[0], runs[0].frames.key, beside=True)
    t = time.perf_counter()
    got = compare.align(runs, mode="tree")
    waited = time.perf_counter() - t
    starved.set()
    assert made[0] == threading.current_thread().name
    assert tree_union.WAIT_S <= waited < 5.0
    assert np.array_equal(got.node, whole.node) and np.array_equal(got.parent, whole.parent)
    tree_union.forget(runs)
