"""A tree comparison's label columns (names, modules, source locations, match keys) are
gathered from the runs' frame tables on first read (:meth:`Comparison.defer`); read row
by row (:meth:`Comparison.label_at`) or whole, they are each row's representative node's
labels: the baseline's node where it has the row, else the first other run's.

Real GHC profiles: the hs-ad pair (one regression) and the hcy2c pair (a refactor that
removed a regex library: rows added and removed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import align

DATA = Path(__file__).parents[1] / "data"
PAIRS = {
    "hs-ad": (DATA / "hs-ad/v1/ad.P.prof", DATA / "hs-ad/v2/ad.P.prof"),
    "hcy2c": (DATA / "ghc-prof/ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof",
              DATA / "ghc-prof/ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof"),
}
LABELS = ("name", "module", "src", "key")


def _expected(cmp, col: str) -> list[str]:
    """Each row's label read from the run that represents it, one row at a time."""
    out = []
    for row in range(cmp.n_rows):
        nodes = cmp.node[row]
        r = cmp.baseline if nodes[cmp.baseline] >= 0 else int(np.flatnonzero(nodes >= 0)[0])
        p = cmp.runs[r]
        out.append(str(getattr(p.frames, col)[p.frame[nodes[r]]]))
    return out


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("baseline", [0, 1])
def test_label_columns_are_the_representative_nodes_labels(pair, baseline):
    runs = [load(p) for p in PAIRS[pair]]
    cmp = align(runs, baseline=baseline, mode="tree")
    attrs = {"name": "name", "module": "module", "src": "src", "key": "keys"}
    assert not set(attrs.values()) & set(vars(cmp))  # nothing gathered yet
    assert (cmp.node < 0).any(), "the pair has rows only one run has"
    rng = np.random.default_rng(7)
    some = np.sort(rng.choice(cmp.n_rows, size=min(300, cmp.n_rows), replace=False))
    for col in LABELS:
        want = _expected(cmp, col)
        attr = attrs[col]
        got_rows = cmp.label_at(attr, some)
        assert [str(x) for x in got_rows] == [want[i] for i in some]
        assert str(cmp.label_at(attr, int(some[-1]))) == want[some[-1]]
        assert attr not in vars(cmp)  # rows read without gathering the column
        whole = getattr(cmp, attr)
        assert attr in vars(cmp) and getattr(cmp, attr) is whole  # gathered once
        assert len(whole) == cmp.n_rows and [str(x) for x in whole] == want
        assert np.array_equal(cmp.label_at(attr, some), whole[some])


def test_runs_without_a_call_tree_have_empty_label_columns():
    """GHC ``+RTS -s`` statistics: run totals, no node to take a label from."""
    runs = [load(DATA / "ghc-rts" / f"hs-ad-noise-v1-run{i}.stats.txt") for i in (1, 2)]
    cmp = align(runs, mode="tree")
    assert cmp.n_rows == 0
    for attr in ("name", "module", "src", "keys"):
        got = getattr(cmp, attr)
        assert got.shape == (0,) and got.dtype == object
        assert cmp.label_at(attr, slice(0, 10)).shape == (0,)
    with pytest.raises(AttributeError):
        cmp.no_such_column  # noqa: B018 - only deferred columns are built on read
