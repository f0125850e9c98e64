"""The culprit ranking's fast paths give exactly what the plain formulation gives.

``rank_changes`` scores rows in one pass and sorts them by parts (``culprit_order``),
only when the order is asked for.  Here both are checked array for array against the
straightforward code they replaced (a per-metric ``np.where`` loop and one
``np.lexsort``) on real pairs: GHC .prof (hs-ad v1/v2), Julia pprof, perf script.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.noise import ensure_noise, single_run_noise
from profdiff.viewer.ranking import (
    culprit_order,
    main_metrics,
    noise_read_by_ranking,
    rank_changes,
    system_rows,
)

DATA = Path(__file__).parent.parent / "data"
PAIRS = {
    "ghc-prof": (DATA / "hs-ad/v1/ad.prof", DATA / "hs-ad/v2/ad.prof"),
    "ghc-prof-json": (DATA / "hs-ad/v1/ad.prof.json", DATA / "hs-ad/v2/ad.prof.json"),
    "julia-pprof": (DATA / "pprof/julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz",
                    DATA / "pprof/julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz"),
    "perf-script": (DATA / "perf/c-vm/v1/perf.script.txt.gz",
                    DATA / "perf/c-vm/v2/perf.script.txt.gz"),
}


def plain_ranking(cmp):
    """The formulation rank_changes replaced: (order, score, metric) by np.where and
    one lexsort over all rows."""
    names = main_metrics(cmp)
    n = cmp.n_rows
    best, raw = np.zeros(n), np.zeros(n)
    which = np.full(n, "", dtype=object)
    system = system_rows(cmp)
    for name in names:
        run = cmp.runs[cmp.baseline]
        total = run.totals.get(f"total_{name}") or float(np.nansum(run.values[name]))
        if not np.isfinite(total) or total == 0:
            continue
        d = np.nan_to_num(cmp.delta(name)) / abs(total)
        raw = np.maximum(raw, np.abs(d))
        real = cmp.changed_mask(name)
        m = cmp.metric_by_name[name]
        if m.sampled and cmp.noise is not None and name in cmp.noise.metrics:
            real &= cmp.noise.metrics[name].significant
        d = np.where(real, d, 0.0)
        if m.better == "higher":
            d = -d
        bigger = np.abs(d) > np.abs(best)
        best = np.where(bigger, d, best)
        which[bigger] = name
    best[system], which[system], raw[system] = 0.0, "", 0.0
    return np.lexsort((-raw, best < 0, -np.abs(best), best == 0)), best, which


@pytest.mark.parametrize("fmt", sorted(PAIRS))
@pytest.mark.parametrize("mode", ["tree", "flat"])
def test_rank_changes_matches_the_plain_formulation(fmt, mode):
    a, b = PAIRS[fmt]
    cmp = align([load(str(a)), load(str(b))], mode=mode)
    ensure_noise(cmp, list(main_metrics(cmp)))
    order, score, metric = plain_ranking(cmp)
    r = rank_changes(cmp)
    assert r.metrics == main_metrics(cmp) and r.metrics
    assert r.top() == order[0]  # found without sorting
    assert np.array_equal(r.score, score) and np.array_equal(np.signbit(r.score),
                                                              np.signbit(score))
    assert list(r.metric) == list(metric)
    assert [r.metric_of(i) for i in range(cmp.n_rows)] == list(metric)
    assert np.array_equal(r.order, order)


@pytest.mark.parametrize("fmt", sorted(PAIRS))
def test_the_ranking_reads_the_estimates_of_its_sampled_metrics_only(fmt):
    """The live window ranks as soon as the estimates :func:`noise_read_by_ranking` names
    are in (not every main metric's): that ranking is the one every estimate gives."""
    a, b = PAIRS[fmt]
    cmp = align([load(str(a)), load(str(b))], mode="tree")
    main = main_metrics(cmp)
    read = noise_read_by_ranking(cmp)
    assert read == tuple(m for m in main if cmp.metric_by_name[m].sampled)
    if fmt.startswith("ghc-prof"):
        assert main == ("time_s", "alloc_bytes") and read == ("time_s",)  # bytes: counted
    every = rank_changes(cmp, noise=single_run_noise(cmp, metrics=list(main)))
    some = rank_changes(cmp, noise=single_run_noise(cmp, metrics=list(read)))
    assert np.array_equal(some.score, every.score) and np.array_equal(some.tie, every.tie)
    assert list(some.metric) == list(every.metric) and some.changed == every.changed
    assert some.changed  # judged changes, not all zeros


def test_top_culprit_of_hs_ad_is_add_grad():
    """GHC's own table: addGrad went from 0 to 24.7 % time and 33.3 % alloc."""
    a, b = PAIRS["ghc-prof"]
    cmp = align([load(str(a)), load(str(b))], mode="flat")
    r = rank_changes(cmp)
    top = r.top()
    assert (cmp.name[top], cmp.module[top]) == ("addGrad", "AD.Eval")
    assert r.metric[top] == "alloc_bytes" and r.score[top] > 0.5  # +2.18 GB of 4.29 GB


def _plain(score, tie):
    return np.lexsort((-tie, score < 0, -np.abs(score), score == 0))


def test_culprit_order_ties_zeros_and_signs():
    rng = np.random.default_rng(7)
    n = 20_000
    score = rng.choice([-0.5, -0.0, 0.0, 0.0, 0.25, 0.25, 1.0], n) * rng.choice([1, 1, 2], n)
    tie = np.abs(rng.choice([0.0, 0.0, 0.1, 0.2, 0.3], n))
    assert np.array_equal(culprit_order(score, tie), _plain(score, tie))
    score = rng.normal(size=n)  # no ties at all
    tie = np.abs(rng.normal(size=n))
    assert np.array_equal(culprit_order(score, tie), _plain(score, tie))
    assert len(culprit_order(np.zeros(0), np.zeros(0))) == 0
    nan_score = np.array([0.0, np.nan, 1.0])  # never produced; the plain sort then
    assert np.array_equal(culprit_order(nan_score, np.zeros(3)), _plain(nan_score, np.zeros(3)))


def test_the_largest_real_change_comes_first_in_either_direction():
    """The Julia CPU pair: the real changes first, largest |score| first (int.jl's +,
    2,837 -> 298 samples, above every small regression), then the unchanged rows.  And
    the hcy2c speedup (GHC's own table: addULLs 63.2 % of 187 s, removed) is row 1, not
    row 24 behind 23 small regressions."""
    a, b = PAIRS["julia-pprof"]
    cmp = align([load(str(a)), load(str(b))], mode="flat")
    ensure_noise(cmp, list(main_metrics(cmp)))
    r = rank_changes(cmp)
    s = r.score[r.order]
    n = int((s != 0).sum())
    assert (s[:n] != 0).all() and (s[n:] == 0).all()
    assert (np.diff(np.abs(s[:n])) <= 0).all() and (s[:n] < 0).any() and (s[:n] > 0).any()
    first = int(r.order[0])
    assert (cmp.name[first], int(cmp.values[r.metric[first]][first, 0])) == ("+", 2837)
    ghc = DATA / "ghc-prof"
    cmp = align([load(str(ghc / "ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof")),
                 load(str(ghc / "ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof"))],
                mode="flat")
    ensure_noise(cmp, list(main_metrics(cmp)))
    top = rank_changes(cmp).order[0]
    assert (cmp.name[top], cmp.present[top].tolist()) == ("addULLs", [True, False])
