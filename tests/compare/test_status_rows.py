"""A few rows' statuses judged alone (``Comparison.status_rows``) read what the whole
``status`` array will: the window's first paint colours its rows with them before every
row's moves are read (the loader reads those after that paint).

Real pairs of every kind of comparison the window shows: a GHC tree read from its runs
(node-order values) and its flat table (row-order values), with and without a noise
estimate, three runs with the middle one current, groups of repeated runs, and heap
profiles, whose timed bands read "moved"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import Comparison, Status, align
from profdiff.viewer.noise import group_comparison, single_run_noise

DATA = Path(__file__).resolve().parent.parent / "data"
HS = DATA / "hs-ad"
V1, V2 = HS / "v1" / "ad.prof", HS / "v2" / "ad.prof"
NOISE = [HS / "noise-v1" / f"run{i}" / "ad.prof" for i in (1, 2, 3)]
HP = [DATA / "ghc-hp" / "hs-ad-v1.hp", DATA / "ghc-hp" / "hs-ad-v2.hp"]


def _pair(mode: str) -> Comparison:
    return align([load(V1), load(V2)], mode=mode)


def _with_noise(mode: str) -> Comparison:
    cmp = _pair(mode)
    cmp.add_noise(single_run_noise(cmp, 0.05))
    return cmp


def _three_runs() -> Comparison:
    return align([load(p) for p in (V1, NOISE[0], V2)], mode="tree", current=1)


def _groups() -> Comparison:
    return group_comparison([load(p) for p in NOISE[:2]], [load(V2), load(NOISE[2])])


def _mixed_groups() -> Comparison:
    """The current group's first run lacks some of its rows (v2's new cost centres)."""
    return group_comparison([load(V1), load(NOISE[0])], [load(NOISE[1]), load(V2)])


def _heap() -> Comparison:
    return align([load(p) for p in HP], mode="tree")


MAKERS = {"tree": lambda: _pair("tree"), "flat": lambda: _pair("flat"),
          "tree with noise": lambda: _with_noise("tree"),
          "flat with noise": lambda: _with_noise("flat"),
          "three runs": _three_runs, "groups": _groups, "mixed groups": _mixed_groups,
          "heap": _heap}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_rows_judged_alone_read_what_the_whole_status_reads(kind, monkeypatch):
    whole = MAKERS[kind]().status
    cmp = MAKERS[kind]()
    judged_whole = []
    original = Comparison.status_for
    monkeypatch.setattr(Comparison, "status_for",
                        lambda c, *a, **k: judged_whole.append(1) or original(c, *a, **k))
    rng = np.random.default_rng(7)
    blocks = [np.arange(cmp.n_rows), rng.permutation(cmp.n_rows)[:40],
              np.flatnonzero(whole != Status.SAME)[:60], np.array([0]), np.array([], int)]
    for rows in blocks:
        assert np.array_equal(cmp.status_rows(rows), whole[rows]), (kind, rows[:5])
    assert judged_whole == []  # every block judged alone: no row's moves read for all
    assert len(set(whole[blocks[0]].tolist())) > 1  # a pair that has statuses to get wrong
    row = int(blocks[2][0]) if blocks[2].size else 0
    assert cmp.status_at(row) == int(whole[row])


def test_once_the_moves_are_read_the_rows_come_from_the_whole_status(monkeypatch):
    cmp = _with_noise("tree")
    cmp.prepare_statuses()
    whole = cmp.status
    judged_alone = []
    original = Comparison.changed_mask
    monkeypatch.setattr(Comparison, "changed_mask",
                        lambda c, *a, **k: judged_alone.append(1) or original(c, *a, **k))
    rows = np.arange(0, cmp.n_rows, 7)
    assert np.array_equal(cmp.status_rows(rows), whole[rows]) and judged_alone == []
