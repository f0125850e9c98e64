"""Noise-aware comparison on the generated hs-ad runs.

``noise-v1/run1..3`` are the v1 binary run again: identical entries and allocation, time
shares moving by a few points.  v2 carries a real regression in ``addGrad``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.noise import benjamini_hochberg, group_comparison, single_run_noise

HS = Path(__file__).parents[1] / "data/hs-ad"


def prof(*parts: str):
    return load(HS.joinpath(*parts, "ad.prof"))


def row(cmp, name):
    (i,) = [i for i in range(cmp.n_rows) if cmp.name[i] == name]
    return i


def test_identical_builds_show_no_significant_change():
    base = [prof("v1"), prof("noise-v1", "run1")]
    new = [prof("noise-v1", "run2"), prof("noise-v1", "run3")]
    for mode in ("flat", "tree"):
        cmp = group_comparison(base, new, mode=mode)
        for metric in ("time_pct", "inherited_time_pct", "time_s", "alloc_pct", "entries"):
            assert not cmp.noise.metrics[metric].significant.any(), (mode, metric)
        # timings really moved between the groups (so this is not vacuous)
        assert np.nanmax(np.abs(cmp.delta("time_pct"))) > 0.5


def test_real_regression_is_flagged():
    base = [prof("v1"), prof("noise-v1", "run1"), prof("noise-v1", "run2")]
    cmp = group_comparison(base, [prof("v2")], mode="flat")
    i = row(cmp, "addGrad")
    assert cmp.noise.metrics["time_pct"].significant[i]
    assert cmp.noise.metrics["alloc_pct"].significant[i]
    assert cmp.noise.metrics["alloc_pct"].method.startswith("deterministic")
    # group spread is reported: paramVar's %time in the files' top tables is 16.6 (v1),
    # 16.6 (run1), 17.0 (run2); the tree sums agree to the printed rounding
    j = row(cmp, "paramVar")
    mn = cmp.noise.metrics["time_pct"]
    assert abs(mn.base_min[j] - 16.6) <= 0.15 and abs(mn.base_max[j] - 17.0) <= 0.15
    assert abs(mn.base_mean[j] - (16.6 + 16.6 + 17.0) / 3) <= 0.15
    assert mn.base_std[j] > 0
    # group totals are means: total alloc is identical in all v1 runs
    assert cmp.total_values("total_alloc_bytes") == [4_291_393_792, 6_560_334_592]


def test_single_run_sampling_error():
    cmp = align([prof("v1"), prof("v2")], mode="flat")
    noise = single_run_noise(cmp)
    mn = noise.metrics["time_pct"]
    assert "speed factor" in mn.method and mn.speed_factor is not None
    i = row(cmp, "addGrad")
    assert mn.significant[i]
    # entries are deterministic and unchanged for addGrad
    assert noise.metrics["entries"].pvalue[i] == 1.0
    # a node with few ticks cannot show small changes: min detectable change is large
    small = np.flatnonzero((cmp.value("time_pct", 0) > 0) & (cmp.value("time_pct", 0) < 0.2))
    assert small.size and (mn.min_detectable_rel[small] > 0.3).all()


def test_benjamini_hochberg():
    p = np.array([0.001, 0.04, 0.03, 0.5, np.nan])
    assert benjamini_hochberg(p, 0.05).tolist() == [True, False, False, False, False]
    assert benjamini_hochberg(np.array([0.01, 0.02, 0.03]), 0.05).tolist() == [True] * 3


def _bh_textbook(p: np.ndarray, alpha: float) -> np.ndarray:
    """The step-up procedure as written: rank all m p-values, reject up to the largest
    k with p_(k) <= alpha k / m."""
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    out = np.zeros(len(p), dtype=bool)
    passed = [k for k in range(m) if p[order[k]] <= alpha * (k + 1) / m]
    if passed:
        out[order[: max(passed) + 1]] = True
    return out


@pytest.mark.parametrize("seed", range(40))
def test_benjamini_hochberg_sorting_only_small_p_is_the_textbook_procedure(seed):
    """The discoveries found from the p-values <= alpha alone equal the full procedure,
    with ties, NaN, p = 1 for most rows (an unmoved tree) and a few tiny ones."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    p = np.ones(n)
    moved = rng.random(n) < rng.random()
    p[moved] = np.round(rng.random(int(moved.sum())) ** 3, int(rng.integers(1, 4)))
    p[rng.random(n) < 0.05] = np.nan
    for alpha in (0.001, 0.05, 0.2, 1.0):
        assert benjamini_hochberg(p, alpha).tolist() == _bh_textbook(p, alpha).tolist()


def test_perf_pair_sampling_error():
    """c-vm v2 adds checks to the interpreter loop: vm_run gains 1,631 samples (2,982 ->
    4,613), a real change; native_isqrt (81 -> 85 samples) is within sampling error."""
    perf = Path(__file__).parents[1] / "data/perf/c-vm"
    cmp = align([load(perf / "v1/perf.script.txt.gz"), load(perf / "v2/perf.script.txt.gz")],
                mode="flat")
    noise = single_run_noise(cmp)
    vm, isqrt = row(cmp, "vm_run.constprop.0"), row(cmp, "native_isqrt")
    for metric in ("self_samples", "self_period"):
        mn = noise.metrics[metric]
        assert "Poisson" in mn.method
        assert mn.significant[vm] and not mn.significant[isqrt]
    # isqrt's 81 samples cannot show changes much below 2/sqrt(81) = 22 % (more when the
    # rows move more than sampling error alone: the estimated dispersion)
    mn = noise.metrics["self_samples"]
    assert mn.min_detectable_rel[isqrt] == pytest.approx(2 / 9 * np.sqrt(mn.dispersion))


IDENTICAL = [("v1",), ("noise-v1", "run1"), ("noise-v1", "run2"), ("noise-v1", "run3")]


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations(IDENTICAL, 2)),
                         ids=lambda p: "/".join(p))
def test_single_runs_of_one_binary_are_quiet(a, b):
    """Four runs of the identical v1 binary, one per side: their total time differs by up to
    29 % (2,877 vs 3,710 ticks), yet at most one flat row per metric may be called
    significant, because the run-level speed factor is taken out before rows are judged."""
    pa, pb = prof(*a), prof(*b)
    cmp = align([pa, pb], mode="flat")
    noise = single_run_noise(cmp)
    for metric, mn in noise.metrics.items():
        assert int(mn.significant.sum()) <= 1, (metric, list(cmp.name[mn.significant]))
    assert noise.metrics["alloc_bytes"].significant.sum() == 0  # allocation is identical
    t = noise.metrics["time_s"].speed_factor
    ratio = pb.totals["total_ticks"] / pa.totals["total_ticks"]
    assert t == pytest.approx(ratio, rel=0.1)  # the factor follows the whole run


@pytest.mark.parametrize("base", IDENTICAL, ids=lambda p: "/".join(p))
def test_regression_stays_significant_against_every_identical_run(base):
    cmp = align([prof(*base), prof("v2")], mode="flat")
    noise = single_run_noise(cmp)
    i = row(cmp, "addGrad")
    for metric in ("time_s", "time_pct", "alloc_bytes", "alloc_pct"):
        assert noise.metrics[metric].significant[i], metric


def _estimates(cmp, metrics):
    together = single_run_noise(cmp, metrics=metrics).metrics
    apart = {m: single_run_noise(cmp, metrics=[m]).metrics[m] for m in metrics}
    return together, apart


@pytest.mark.parametrize("mode", ["flat", "tree"])
def test_metrics_of_the_same_samples_are_tested_once(mode):
    """A ``-P`` report's ticks, seconds and %time are one column scaled (its rows add up
    to the header's 2,646 and 3,728 ticks): one estimate tests them once (the same
    arrays), and each gets the result it gets alone; the inclusive ones are another
    test.  A ``-p`` report's %time and seconds come from rounded percentages that do not
    add up to 100: two tests."""
    v1, v2 = (load(HS / v / "ad.P.prof") for v in ("v1", "v2"))
    assert [np.nansum(p.values["ticks"]) for p in (v1, v2)] == \
        [p.totals["total_ticks"] for p in (v1, v2)] == [2646, 3728]
    cmp = align([v1, v2], mode=mode)
    metrics = ["time_pct", "ticks", "time_s", "inherited_time_pct", "inherited_time_s"]
    together, apart = _estimates(cmp, metrics)
    assert together["time_s"].pvalue is together["ticks"].pvalue is together["time_pct"].pvalue
    assert together["inherited_time_s"].pvalue is together["inherited_time_pct"].pvalue
    assert together["inherited_time_s"].pvalue is not together["time_s"].pvalue
    for m in metrics:
        assert np.array_equal(together[m].significant, apart[m].significant), m
        np.testing.assert_allclose(together[m].pvalue, apart[m].pvalue, rtol=1e-9, atol=0)
        assert together[m].speed_factor == pytest.approx(apart[m].speed_factor, rel=1e-12)
    assert together["ticks"].significant.any()  # a real change is in there (addGrad)

    rounded = align([prof("v1"), prof("v2")], mode=mode)
    pair = ["time_pct", "time_s"]
    together, apart = _estimates(rounded, pair)
    assert together["time_pct"].pvalue is not together["time_s"].pvalue
    assert not np.allclose(together["time_pct"].pvalue, together["time_s"].pvalue)
    for m in pair:
        assert np.array_equal(together[m].significant, apart[m].significant), m


def test_samples_equal_but_for_the_last_bits():
    from profdiff.viewer.noise import SAME_SAMPLES_RTOL, _close

    rng = np.random.default_rng(7)
    ticks = rng.integers(0, 50, 100_000).astype(np.float64)[:, None]
    ticks[::97] = np.nan  # rows one run lacks
    total, n = np.nansum(ticks), 2646.0
    a = ticks / total * n  # ticks as counts
    scaled = (ticks * 0.0013) / (total * 0.0013) * n  # seconds (ticks x interval) as counts
    assert not np.array_equal(scaled, a, equal_nan=True) and _close(a, scaled)
    off = a.copy()
    off[12_345] += 1.0  # one row's count differs, away from the strided sample
    assert not _close(a, off)
    assert not _close(a, a * (1 + 100 * SAME_SAMPLES_RTOL))
    assert _close(None, None) and not _close(a, None)


def test_a_new_estimate_rejudges_statuses_from_the_kept_masks(monkeypatch):
    """The statuses under a new noise estimate combine each judged metric's "moved
    beyond precision" rows (read once per run) with the estimate's significance: the
    same statuses as judging every value again, without reading them again."""
    from profdiff.viewer.compare import Comparison, Status

    cmp = align([prof("v1"), prof("v2")], mode="tree")
    before = cmp.status.copy()
    reads = []
    original = Comparison._moved
    monkeypatch.setattr(Comparison, "_moved", lambda self, *a: reads.append(a[0]) or
                        original(self, *a))
    cmp.add_noise(single_run_noise(cmp, metrics=cmp.status_metrics(sampled_only=True)))
    after = cmp.status
    assert reads == []  # nothing read again
    fresh = align([prof("v1"), prof("v2")], mode="tree")
    fresh.add_noise(single_run_noise(fresh, metrics=fresh.status_metrics(sampled_only=True)))
    assert np.array_equal(after, fresh.status) and reads  # that one read its values
    assert (after == Status.CHANGED).sum() < (before == Status.CHANGED).sum()
    assert np.array_equal(after != Status.CHANGED, (before != Status.CHANGED) | (
        (before == Status.CHANGED) & (after == Status.SAME)))


def test_erfc_in_place_and_run_totals_without_copies():
    """The estimate's p-values written over their z array, and run totals summed without
    nansum's copy: the same numbers as before."""
    import math

    from profdiff.viewer.noise import _column_total, _erfc

    z = np.array([0.0, 0.5, np.inf, 3.0, 0.5, 0.0, 1e-9])
    expect = np.array([math.erfc(v) for v in z])
    assert np.array_equal(_erfc(z.copy()), expect)
    same = z.copy()
    assert _erfc(same, out=same) is same and np.array_equal(same, expect)
    col = np.array([1.5, 2.25, 0.0, 7.0])
    assert _column_total(col) == float(np.nansum(col)) == 10.75
    col[2] = np.nan
    assert _column_total(col) == float(np.nansum(col)) == 10.75
    assert _column_total(np.arange(5)) == 10.0


def test_metrics_of_known_samples_build_no_counts(monkeypatch):
    """Of the five sampled metrics of a ``-P`` report, only the first of each test
    (self, inclusive) gets its counts built; the others are told to hold the same
    samples a block of rows at a time."""
    import profdiff.viewer.noise as noise

    cmp = align([load(HS / v / "ad.P.prof") for v in ("v1", "v2")], mode="tree")
    built = []
    original = noise._counts
    monkeypatch.setattr(noise, "_counts", lambda c, m, runs: built.append(m.name) or
                        original(c, m, runs))
    metrics = ["time_pct", "ticks", "time_s", "inherited_time_pct", "inherited_time_s"]
    got = single_run_noise(cmp, metrics=metrics)
    assert sorted(set(built)) == ["inherited_time_pct", "time_pct"] and len(built) == 4
    assert got.metrics["ticks"].pvalue is got.metrics["time_pct"].pvalue
    # the smallest detectable change is built only when read whole, row by row the same
    mn = got.metrics["inherited_time_s"]
    assert mn.detectable is got.metrics["inherited_time_pct"].detectable
    whole = mn.min_detectable_rel
    rows = [0, *np.flatnonzero(np.isinf(whole))[:3], *np.flatnonzero(np.isfinite(whole))[:50]]
    assert len(rows) > 40 and np.isinf(whole).any()
    assert [mn.min_detectable_at(int(r)) for r in rows] == whole[rows].tolist()


def test_samples_told_on_the_runs_nodes_as_on_the_rows():
    """Whether two metrics hold the same samples is told from each run's own arrays when
    a tree's rows are its runs' nodes, with the answer comparing the rows gives: the
    same samples (ticks, seconds, %time of a ``-P`` report), and different ones."""
    from profdiff.viewer.noise import (
        _close_scaled,
        _columns,
        _counts,
        _run_totals,
        _same_on_nodes,
        _sample_counts,
    )

    cmp = align([load(HS / v / "ad.P.prof") for v in ("v1", "v2")], mode="tree")
    sides = ([cmp.baseline], [cmp.current])
    by = cmp.metric_by_name

    def on_rows(a: str, b: str) -> bool:  # the rows' counts of a against b's
        return all(_close_scaled(_columns(cmp, a, runs), _run_totals(cmp, by[a], runs),
                                 _sample_counts(cmp, runs), _counts(cmp, by[b], runs))
                   for runs in sides)

    pairs = [("ticks", "time_pct", True), ("time_s", "time_pct", True),
             ("inherited_time_s", "inherited_time_pct", True),
             ("ticks", "inherited_time_pct", False), ("ticks", "bytes", False),
             ("time_pct", "alloc_pct", False)]
    for a, b, same in pairs:
        assert _same_on_nodes(cmp, by[a], by[b], sides) is same, (a, b)
        assert on_rows(a, b) is same, (a, b)
    flat = align([load(HS / v / "ad.P.prof") for v in ("v1", "v2")], mode="flat")
    fb = flat.metric_by_name
    assert _same_on_nodes(flat, fb["ticks"], fb["time_pct"], sides) is None  # rows: sums


def test_a_known_metrics_spread_is_computed_when_read(monkeypatch):
    """The spread of a metric whose samples an earlier one held is computed on first
    read, and is the one computed at once."""
    import profdiff.viewer.noise as noise

    cmp = align([load(HS / v / "ad.P.prof") for v in ("v1", "v2")], mode="tree")
    made = []
    original = noise._spread
    monkeypatch.setattr(noise, "_spread", lambda vb, vn: made.append(1) or original(vb, vn))
    got = single_run_noise(cmp, metrics=["time_pct", "ticks", "inherited_time_pct"])
    assert len(made) == 2  # %time and inherited %time: the tested ones
    ticks = got.metrics["ticks"]
    assert np.array_equal(ticks.base_mean, cmp.value("ticks", cmp.baseline))
    assert np.array_equal(ticks.new_max, cmp.value("ticks", cmp.current))
    assert not ticks.base_std.any() and len(made) == 3
    alone = single_run_noise(cmp, metrics=["ticks"]).metrics["ticks"]
    assert np.array_equal(ticks.significant, alone.significant)


@pytest.mark.parametrize("metric", ["time_pct", "inherited_time_pct", "time_s", "alloc_pct"])
def test_rows_beyond_rounding_judged_in_node_order_as_in_row_order(metric):
    """The rows whose change exceeds the rounding of the printed values, judged in the
    baseline's node order (no column gathered), are those judged row by row: on a
    ``-p`` report, whose percentages are rounded to 0.1."""
    from profdiff.viewer.noise import _beyond_in_blocks, _beyond_rounding, _columns, _spread

    cmp = align([prof("v1"), prof("v2")], mode="tree")
    assert metric in cmp.rounding or metric == "time_s"
    b, n = [cmp.baseline], [cmp.current]
    stats = _spread(_columns(cmp, metric, b), _columns(cmp, metric, n))
    rows = _beyond_rounding(cmp, metric, b, n, stats)
    assert np.array_equal(_beyond_in_blocks(cmp, metric, cmp.current), rows)
    assert rows.any() and not rows.all()


def _erfc_whole(zs: np.ndarray) -> np.ndarray:
    import math

    return np.array([math.erfc(float(z)) for z in zs])


@pytest.mark.parametrize("seed", range(30))
def test_discoveries_from_the_rows_that_can_be_equal_the_procedure_on_every_p(seed):
    """PValues.discoveries reads erfc only where z reaches the floor below which p > alpha:
    the same discoveries as the procedure on every row's p-value, with z-values at the
    crossing itself, ties, zeros (unmoved rows), huge values and inf."""
    from profdiff.viewer.noise import PValues, _z_floor

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    alpha = float(rng.choice([0.001, 0.01, 0.05, 0.2, 0.5]))
    zs = np.where(rng.random(n) < 0.6, 0.0, rng.random(n) * 4)
    edge = _z_floor(alpha)
    pick = rng.random(n) < 0.1
    zs[pick] = edge * (1 + rng.choice([-1e-6, -1e-12, 0.0, 1e-12, 1e-6], int(pick.sum())))
    zs[rng.random(n) < 0.02] = np.inf
    zs[rng.random(n) < 0.02] = 1e308
    zs = np.round(zs, int(rng.integers(1, 6)))  # ties
    expect = benjamini_hochberg(_erfc_whole(zs), alpha)
    pv = PValues(zs.copy())
    assert pv.discoveries(alpha).tolist() == expect.tolist()
    assert [pv.at(i) for i in range(n)] == _erfc_whole(zs).tolist()
    assert pv.rows().tolist() == _erfc_whole(zs).tolist()
    assert pv.discoveries(alpha).tolist() == expect.tolist()  # from the built array too


@pytest.mark.parametrize("alpha", [1e-9, 0.001, 0.05, 0.5, 0.999])
def test_the_z_floor_is_below_the_crossing_and_close_to_it(alpha):
    import math

    from profdiff.viewer.noise import _z_floor

    z = _z_floor(alpha)
    assert math.erfc(z) > alpha  # every row below it has p > alpha: no discovery
    assert math.erfc(z + 1e-4) < alpha  # and it is not far below (few rows read)


def test_an_estimate_builds_no_p_value_array_until_one_is_read():
    """The first paint judges statuses by the discoveries; the p-values of every row are
    computed when the 'sig.' column or an export reads them, and equal erfc of z."""
    from profdiff.viewer.noise import PValues

    cmp = align([prof("v1"), prof("v2")])
    nz = single_run_noise(cmp, 0.05, ["time_pct", "inherited_time_pct"])
    lazy = [mn for mn in nz.metrics.values() if isinstance(mn.p, PValues)]
    assert len(lazy) == 2
    for mn in lazy:
        assert mn.p._rows is None
        rows = np.flatnonzero(mn.significant)[:3].tolist() + [0, cmp.n_rows - 1]
        one = [mn.pvalue_at(r) for r in rows]
        assert mn.p._rows is None  # a row's details read one value
        whole = mn.pvalue
        assert whole[rows].tolist() == one
        assert not whole.flags.writeable
        assert mn.significant.tolist() == (benjamini_hochberg(whole, 0.05)
                                           & mn.significant).tolist()
        assert mn.significant.any()  # v2 is a real regression: not vacuous


@pytest.mark.parametrize("mode", ["flat", "tree"])
def test_equal_counts_get_equal_verdicts_in_self_and_total(mode):
    """The Julia CPU pair (18,894 and 7,006 samples): a row whose self and total counts
    are equal in both runs (a leaf) has one p-value for both, and now one verdict; the
    procedure run on each column apart called 1 flat and 31 tree rows "~" in self and a
    change in total (the row "-" of int.jl: 196 -> 16)."""
    pp = Path(__file__).parents[1] / "data/pprof"
    cmp = align([load(pp / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz"),
                 load(pp / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz")], mode=mode)
    noise = single_run_noise(cmp)
    s, t = noise.metrics["self_samples"], noise.metrics["total_samples"]
    vs, vt = cmp.values["self_samples"], cmp.values["total_samples"]
    leaf = np.all(vs == vt, axis=1) & cmp.present.all(axis=1)
    assert leaf.sum() > 50
    assert np.array_equal(s.pvalue[leaf], t.pvalue[leaf])
    assert np.array_equal(s.significant[leaf], t.significant[leaf])
    assert s.significant[leaf].any() and not s.significant[leaf].all()
    if mode == "flat":
        row = int(np.flatnonzero((cmp.name == "-") & (cmp.module == "int.jl"))[0])
        assert vs[row].tolist() == [196, 16] and s.significant[row] == t.significant[row]
