"""A tree comparison's values are gathered from the runs per metric on first read
(:mod:`viewer.gathered_values`); every way of reading them must give what a plain row by
row reading of the runs gives, before and after the metric's array is built.

Real GHC profiles: the hs-ad pair (one regression) and the hcy2c pair (a refactor that
removed a regex library: rows added, removed and changed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.parsers.model import Unit, depth_from_parent, level_order
from profdiff.viewer.compare import Status, align
from profdiff.viewer.gathered_values import GatheredValues
from profdiff.viewer.noise import single_run_noise

DATA = Path(__file__).parents[1] / "data"
PAIRS = {
    "hs-ad": (DATA / "hs-ad/v1/ad.prof", DATA / "hs-ad/v2/ad.prof"),
    "hcy2c": (DATA / "ghc-prof/ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof",
              DATA / "ghc-prof/ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof"),
}


def _cmp(pair: str):
    a, b = PAIRS[pair]
    return align([load(a), load(b)])


def _row_by_row(cmp, metric: str) -> np.ndarray:
    """``values[metric]`` as the Comparison documents it, one cell at a time."""
    out = np.zeros((cmp.n_rows, cmp.n_runs))
    for r, p in enumerate(cmp.runs):
        col = p.values.get(metric)
        for i in range(cmp.n_rows):
            nd = int(cmp.node[i, r])
            out[i, r] = np.nan if col is None else (float(col[nd]) if nd >= 0 else 0.0)
    return out


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_read_of_a_metric_is_the_runs_row_by_row(pair):
    cmp = _cmp(pair)
    assert isinstance(cmp.values, GatheredValues)
    rows = np.arange(0, cmp.n_rows, 7)
    for m in cmp.metrics:
        want = _row_by_row(cmp, m.name)
        for _ in ("not built", "built"):
            np.testing.assert_array_equal(cmp.block(m.name, slice(3, 40)), want[3:40])
            for r in range(cmp.n_runs):
                np.testing.assert_array_equal(cmp.value(m.name, r), want[:, r])
                np.testing.assert_array_equal(cmp.values_at(m.name, r, rows), want[rows, r])
            np.testing.assert_array_equal(cmp.row_values(m.name, 5), want[5])
            np.testing.assert_array_equal(
                cmp.delta_at(m.name, None, rows), want[rows, 1] - want[rows, 0])
            np.testing.assert_array_equal(cmp.delta(m.name), want[:, 1] - want[:, 0])
            for r in range(cmp.n_runs):  # a run's own values, and the rows they are in
                own = cmp.present_values(m.name, r)
                at = cmp.rows_of_present(r, np.arange(len(own)))
                assert sorted(at.tolist()) == np.flatnonzero(cmp.present[:, r]).tolist()
                np.testing.assert_array_equal(own, want[at, r])
            if not cmp.values.is_built(m.name):  # nothing above built the whole array
                np.testing.assert_array_equal(cmp.values[m.name], want)
        assert cmp.values.is_built(m.name)
        assert not cmp.values[m.name].flags.writeable  # shared by views and workers


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_statuses_read_from_the_runs_equal_the_whole_column_verdicts(pair):
    cmp = _cmp(pair)
    st = cmp.status_for()
    assert not any(cmp.values.is_built(m.name) for m in cmp.metrics)
    # the verdict from whole columns: any absolute cost changed beyond float noise and
    # beyond the rounding of the printed numbers (.prof prints shares to 0.1 %)
    judged = [m.name for m in cmp.metrics if m.unit is not Unit.PERCENT]
    b, c = cmp.present[:, 0], cmp.present[:, 1]
    changed = np.zeros(cmp.n_rows, dtype=bool)
    assert any(name in cmp.rounding for name in judged)
    for name in judged:
        want = _row_by_row(cmp, name)
        d = np.abs(want[:, 1] - want[:, 0])
        moved = d > 1e-9 * np.maximum(np.maximum(np.abs(want[:, 1]), np.abs(want[:, 0])), 1.0)
        if name in cmp.rounding:
            moved &= d > (cmp.rounding[name][:, 0] + cmp.rounding[name][:, 1]) * (1 + 1e-9)
        changed |= moved
    ref = np.full(cmp.n_rows, Status.SAME, dtype=np.int8)
    ref[changed & b & c] = Status.CHANGED
    ref[~b & c] = Status.ADDED
    ref[b & ~c] = Status.REMOVED
    np.testing.assert_array_equal(st, ref)
    assert (st == Status.CHANGED).any()
    if pair == "hcy2c":
        assert (st == Status.ADDED).any() and (st == Status.REMOVED).any()
    for m in cmp.metrics:  # and the same once every array is built
        cmp.values[m.name]
    np.testing.assert_array_equal(cmp.status_for(), st)


def test_union_depths_and_levels_are_the_trees():
    cmp = _cmp("hcy2c")
    np.testing.assert_array_equal(cmp.depth, depth_from_parent(cmp.parent))
    for p in cmp.runs:  # the .prof reader hands over its listing's depths
        np.testing.assert_array_equal(p.depth, depth_from_parent(p.parent))
    for d in (cmp.depth, cmp.runs[0].depth):
        order, bounds = level_order(d)
        np.testing.assert_array_equal(order, np.argsort(d, kind="stable"))
        np.testing.assert_array_equal(bounds, np.searchsorted(
            np.sort(d), np.arange(int(d.max()) + 2)))


def test_a_depth_that_is_not_the_trees_is_refused():
    p = load(PAIRS["hs-ad"][0])
    bad = np.array(p.depth)
    bad[np.flatnonzero(p.parent >= 0)[3]] += 1
    with pytest.raises(ValueError, match="not the tree's"):
        p.adopt_depth(bad)
    with pytest.raises(ValueError):
        p.adopt_depth(bad[:-1])


def test_noise_that_only_fades_shares_keeps_the_statuses():
    """In a .prof the absolute costs decide a row's status (shares dilute): an estimate
    of %time alone leaves the statuses as they were; one of seconds judges them again."""
    cmp = _cmp("hs-ad")
    st = cmp.status
    cmp.add_noise(single_run_noise(cmp, metrics=["time_pct", "inherited_time_pct"]))
    assert cmp.status is st
    cmp.add_noise(single_run_noise(cmp, metrics=["time_s", "inherited_time_s"]))
    assert cmp.status is not st
    np.testing.assert_array_equal(cmp.status, cmp.status_for(noise=cmp.noise))
    assert ((st == Status.CHANGED) & (cmp.status == Status.SAME)).any()  # within noise


def test_one_vs_one_noise_shares_one_read_only_column_per_side():
    cmp = _cmp("hs-ad")
    mn = single_run_noise(cmp, metrics=["time_pct"]).metrics["time_pct"]
    for side, run in (("base", 0), ("new", 1)):
        mean = getattr(mn, f"{side}_mean")
        assert mean is getattr(mn, f"{side}_min") is getattr(mn, f"{side}_max")
        assert not mean.flags.writeable
        np.testing.assert_array_equal(mean, _row_by_row(cmp, "time_pct")[:, run])
    assert not cmp.values.is_built("time_pct")


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_change_extremes_read_by_blocks_are_those_of_the_whole_columns(pair, monkeypatch):
    """The rows a Δ or Δ% column is sized by, found a block of rows at a time, are
    ``column_extremes`` of the whole ``delta`` and ``rel`` columns (blocks of 7 rows, so
    every extreme crosses block boundaries), for every metric and both baselines."""
    from profdiff.viewer import compare
    from profdiff.viewer.qt.column_sizing import column_extremes

    monkeypatch.setattr(compare, "STATUS_BLOCK", 7)
    base = _cmp(pair)
    for b in (0, 1):
        cmp = align(list(base.runs), baseline=b)
        for m in cmp.values:
            d_rows, r_rows = cmp.change_extremes(m)
            assert d_rows.tolist() == column_extremes(cmp.delta(m)).tolist(), m
            assert r_rows.tolist() == column_extremes(cmp.rel(m)).tolist(), m


def test_change_extremes_of_three_runs_count_rows_two_of_them_lack(monkeypatch):
    """Three runs of two programs: many rows are absent from the baseline, from the run
    compared, or from both (each counts as zero cost there).  Read in the baseline's node
    order and then its missing rows, the extremes are still those of the whole columns,
    for every baseline and every run."""
    from profdiff.viewer import compare
    from profdiff.viewer.qt.column_sizing import column_extremes

    monkeypatch.setattr(compare, "STATUS_BLOCK", 7)
    runs = [load(PAIRS["hs-ad"][0]), load(PAIRS["hcy2c"][0]), load(PAIRS["hs-ad"][1])]
    for b in range(3):
        cmp = align(runs, baseline=b)
        both_absent = (cmp.node[:, b] < 0) & (cmp.node[:, (b + 1) % 3] < 0)
        assert both_absent.any()
        for m in cmp.values:
            for r in range(3):
                d_rows, r_rows = cmp.change_extremes(m, r)
                assert d_rows.tolist() == column_extremes(cmp.delta(m, r)).tolist(), (m, r)
                assert r_rows.tolist() == column_extremes(cmp.rel(m, r)).tolist(), (m, r)


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("mode", ["tree", "flat"])
def test_name_codes_from_the_frame_tables_name_every_rows_labels(pair, mode):
    """The filter's codes, found over the runs' frame tables, give each row its own name
    and module, and rows share a code exactly when they share the string."""
    from profdiff.viewer.qt.layout import name_codes

    base = _cmp(pair)
    for b in (0, 1):
        cmp = align(list(base.runs), baseline=b, mode=mode)
        assert cmp.label_frames is not None
        nc, nu, mc, mu = name_codes(cmp)
        assert nu[nc].tolist() == cmp.name.tolist()
        assert mu[mc].tolist() == cmp.module.tolist()
        assert len(set(nu.tolist())) == len(nu) and len(set(mu.tolist())) == len(mu)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_rows_of_a_few_nodes_found_without_the_runs_inverse(pair):
    """A column's width candidates are a few nodes of a run: their rows are searched in
    the node table, not read from the inverse of every node (built only on demand)."""
    cmp = _cmp(pair)
    v = cmp.values
    assert isinstance(v, GatheredValues)
    rng = np.random.default_rng(5)
    for run in range(cmp.n_runs):
        nodes = rng.integers(0, cmp.runs[run].n_nodes, size=20)
        few = v.rows_of(run, nodes)
        assert run not in v._row_of  # nothing built for them
        assert (cmp.node[few, run] == nodes).all()
        assert few.tolist() == v.row_of_nodes(run)[nodes].tolist()
        assert v.rows_of(run, nodes).tolist() == few.tolist()  # from the inverse now
    with pytest.raises(IndexError):
        GatheredValues(cmp.runs, ["time_pct"], cmp.node).rows_of(0, np.array([10**9]))


def _judged_by_columns(monkeypatch, cmp, metrics):
    """The estimate with every counted metric judged from its gathered columns (the
    general path), for comparison with the node-order one."""
    from profdiff.viewer import noise

    with monkeypatch.context() as m:
        m.setattr(noise, "_no_nan_by_nodes", lambda *a: False)
        return single_run_noise(align(list(cmp.runs)), metrics=metrics)


def _assert_same_estimates(got, want, metrics):
    for name in metrics:
        g, w = got.metrics[name], want.metrics[name]
        assert g.method == w.method, name
        np.testing.assert_array_equal(g.significant, w.significant, err_msg=name)
        np.testing.assert_array_equal(g.p, w.p, err_msg=name)
        for key in w.spread:
            np.testing.assert_array_equal(g.spread[key], w.spread[key], err_msg=name)


@pytest.mark.parametrize("pair", [*sorted(PAIRS), "hs-ad -P"])
def test_counted_metrics_judged_in_node_order_as_from_their_columns(pair, monkeypatch):
    """A 1-vs-1 tree's counted metrics (entries, bytes, allocation shares) are judged a
    block of nodes at a time, no column of theirs gathered, with the verdicts, p-values
    and spreads of the estimate from their gathered columns."""
    if pair == "hs-ad -P":
        cmp = align([load(DATA / "hs-ad/v1/ad.P.prof"), load(DATA / "hs-ad/v2/ad.P.prof")])
    else:
        cmp = _cmp(pair)
    counted = [m.name for m in cmp.metrics if not m.sampled]
    assert len(counted) >= 3 and "entries" in counted
    read: list[str] = []
    real = GatheredValues.column
    monkeypatch.setattr(GatheredValues, "column",
                        lambda self, name, run: read.append(name) or real(self, name, run))
    got = single_run_noise(cmp, metrics=counted)
    assert not set(read) & set(counted)
    assert not any(cmp.values.is_built(m) for m in counted)
    want = _judged_by_columns(monkeypatch, cmp, counted)
    _assert_same_estimates(got, want, counted)
    assert any(got.metrics[m].significant.any() for m in counted)  # real changes judged


def test_a_counted_metric_with_nan_values_is_judged_from_its_columns(monkeypatch):
    """A NaN in a run's column of a counted metric makes that side's rows not exactly
    known: the estimate goes the general way (its columns gathered), as before."""
    a, b = load(PAIRS["hs-ad"][0]), load(PAIRS["hs-ad"][1])
    col = b.values["alloc_pct"].astype(np.float64)  # a copy: the profile's own array
    col[np.flatnonzero(col > 0)[:3]] = np.nan
    b.values["alloc_pct"] = col
    cmp = align([a, b])
    read: list[str] = []
    real = GatheredValues.column
    monkeypatch.setattr(GatheredValues, "column",
                        lambda self, name, run: read.append(name) or real(self, name, run))
    got = single_run_noise(cmp, metrics=["alloc_pct", "entries"])
    assert read.count("alloc_pct") == 2 and "entries" not in read
    want = _judged_by_columns(monkeypatch, cmp, ["alloc_pct", "entries"])
    _assert_same_estimates(got, want, ["alloc_pct", "entries"])
