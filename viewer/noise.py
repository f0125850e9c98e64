"""Noise-aware comparison: is a delta real, or within run-to-run noise?

Timings move between identical runs (our generated v1 run four times gave 2,877 / 3,710 /
3,054 / 2,541 ticks) while allocation and entries stay identical.  So every metric is
judged by what it is:

* **Deterministic counters** (``Metric.sampled`` false: entries, GHC allocation, ticky
  counts): identical within each group means exact; then *any* change between groups is
  real (p = 0) and no change is p = 1.  If such a metric does vary within a group (a
  concurrent program), it is treated like a sampled one.
* **Sampled metrics** (time ticks, perf samples).  Percent-of-run metrics (``%time``) are
  compared as *shares* of the run's total (binomial sampling error ``p(1-p)/N``);
  absolute ones (ticks, seconds, samples, period) as *sample counts* (Poisson sampling
  error: a count ``k`` has variance ``k``).  With repeated runs the variance of a group's
  mean is the larger of that sampling error and the empirical variance across the
  group's runs, which captures real run-to-run drift (machine load moves total time by
  30 % between identical runs; shares move much less).  A z test on the difference gives
  a p-value; rows are called significant with the Benjamini-Hochberg procedure at false
  discovery rate ``alpha`` over all rows tested, so a 239-row tree does not produce a
  couple of "significant" rows by chance.
* With one run per side we still report the sampling error: the smallest relative change
  the node's sample count can show (``min_detectable_rel`` ≈ 2/sqrt(samples); a node with
  12 samples cannot show a 10 % change).

Groups (several files of the same build) are aligned together, then collapsed into a
two-run :class:`~viewer.compare.Comparison` whose values are the group means (or medians),
so every view, the CLI table, JSON and ``--fail-if`` work unchanged; the spread and
significance ride along in ``Comparison.noise``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from parsers.model import Kind, Metric, Profile, Unit

from .compare import Comparison, KeyRule, align
from .defaults import DEFAULT_ALPHA  # noqa: F401 - re-exported


@dataclass
class MetricNoise:
    """Per-row spread and significance of one metric (arrays of length n_rows)."""

    method: str
    base_mean: np.ndarray
    new_mean: np.ndarray
    base_std: np.ndarray
    new_std: np.ndarray
    base_min: np.ndarray
    base_max: np.ndarray
    new_min: np.ndarray
    new_max: np.ndarray
    pvalue: np.ndarray
    significant: np.ndarray
    min_detectable_rel: np.ndarray | None = None  # sampled metrics only


@dataclass
class Noise:
    n_base: int
    n_new: int
    alpha: float
    metrics: dict[str, MetricNoise] = field(default_factory=dict)

    def significant(self, metric: str) -> np.ndarray:
        return self.metrics[metric].significant


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erfc, 1, 1)(x).astype(np.float64)


def benjamini_hochberg(p: np.ndarray, alpha: float) -> np.ndarray:
    """Boolean mask of discoveries at false discovery rate ``alpha`` (NaN p never)."""
    p = np.asarray(p, dtype=float)
    ok = ~np.isnan(p)
    out = np.zeros(len(p), dtype=bool)
    m = int(ok.sum())
    if m == 0:
        return out
    idx = np.flatnonzero(ok)
    order = idx[np.argsort(p[idx], kind="stable")]
    thresh = alpha * np.arange(1, m + 1) / m
    below = p[order] <= thresh
    if below.any():
        k = int(np.flatnonzero(below).max())
        out[order[: k + 1]] = True
    return out


def _run_totals(cmp: Comparison, metric: Metric, runs: Sequence[int]) -> np.ndarray:
    """The denominator of a metric's share in each run: 100 for percents, otherwise the
    run's sum of the (self) metric over its whole tree, i.e. the run total."""
    out = []
    for r in runs:
        if metric.unit is Unit.PERCENT:
            out.append(100.0)
            continue
        p = cmp.runs[r]
        self_name = metric.self_of if metric.kind is Kind.INCLUSIVE else metric.name
        col = p.values.get(self_name or metric.name)
        out.append(float(np.nansum(col)) if col is not None else float("nan"))
    return np.array(out, dtype=float)


def _sample_counts(cmp: Comparison, runs: Sequence[int]) -> np.ndarray:
    """Total sample (tick) count per run, for the binomial variance of shares."""
    out = []
    for r in runs:
        p = cmp.runs[r]
        n = p.totals.get("total_ticks") or p.totals.get("total_samples")
        out.append(float(n) if n else float("nan"))
    return np.array(out, dtype=float)


def metric_noise(cmp: Comparison, metric: str, base_runs: Sequence[int],
                 new_runs: Sequence[int], alpha: float = DEFAULT_ALPHA) -> MetricNoise:
    m = cmp.metric_by_name[metric]
    v = cmp.values[metric]
    vb, vn = v[:, list(base_runs)], v[:, list(new_runs)]
    stats = {
        "base_mean": np.nanmean(vb, axis=1), "new_mean": np.nanmean(vn, axis=1),
        "base_std": np.nanstd(vb, axis=1, ddof=1) if vb.shape[1] > 1 else np.zeros(len(v)),
        "new_std": np.nanstd(vn, axis=1, ddof=1) if vn.shape[1] > 1 else np.zeros(len(v)),
        "base_min": np.nanmin(vb, axis=1), "base_max": np.nanmax(vb, axis=1),
        "new_min": np.nanmin(vn, axis=1), "new_max": np.nanmax(vn, axis=1),
    }
    exact_within = (stats["base_min"] == stats["base_max"]) & (stats["new_min"] == stats["new_max"])
    if not m.sampled and exact_within.all():
        changed = stats["base_mean"] != stats["new_mean"]
        p = np.where(changed, 0.0, 1.0)
        return MetricNoise("deterministic: any change is real", **stats, pvalue=p,
                           significant=changed)
    tb = _run_totals(cmp, m, base_runs)
    tn = _run_totals(cmp, m, new_runs)
    nb_samples = _sample_counts(cmp, base_runs)
    nn_samples = _sample_counts(cmp, new_runs)
    have_counts = m.sampled and np.isfinite(nb_samples).all() and np.isfinite(nn_samples).all()
    if m.unit is Unit.PERCENT or not have_counts:
        # Shares of each run's total: binomial sampling error of a share.
        xb, xn = vb / tb, vn / tn
        mb, mn_ = np.nanmean(xb, axis=1), np.nanmean(xn, axis=1)
        if have_counts:
            var_b_s = mb * (1 - mb) / nb_samples.sum()
            var_n_s = mn_ * (1 - mn_) / nn_samples.sum()
            method = "z test on shares of run total (binomial sampling error"
        else:
            var_b_s = var_n_s = np.zeros(len(v))
            method = "z test on shares of run total ("
    else:
        # Absolute sampled cost: convert to sample counts (samples per unit of each run)
        # and use the Poisson sampling error of a count.
        xb, xn = vb * (nb_samples / tb), vn * (nn_samples / tn)
        mb, mn_ = np.nanmean(xb, axis=1), np.nanmean(xn, axis=1)
        var_b_s = np.maximum(mb, 0) / xb.shape[1]
        var_n_s = np.maximum(mn_, 0) / xn.shape[1]
        method = "z test on sample counts (Poisson sampling error"
    var_b_emp = (np.nanvar(xb, axis=1, ddof=1) / xb.shape[1]) if xb.shape[1] > 1 else 0.0
    var_n_emp = (np.nanvar(xn, axis=1, ddof=1) / xn.shape[1]) if xn.shape[1] > 1 else 0.0
    if xb.shape[1] > 1 or xn.shape[1] > 1:
        method += (", " if method.endswith("error") else "") + "run-to-run spread"
    method += ")"
    var = np.maximum(var_b_s, var_b_emp) + np.maximum(var_n_s, var_n_emp)
    diff = mn_ - mb
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(diff) / np.sqrt(var)
    z = np.where((var == 0) & (diff == 0), 0.0, z)
    z = np.where((var == 0) & (diff != 0), np.inf, z)
    pval = _erfc(np.nan_to_num(z, nan=0.0) / math.sqrt(2.0))
    sig = benjamini_hochberg(pval, alpha)
    mdr = None
    if have_counts:
        counts = np.nanmean(vb / tb * nb_samples, axis=1)
        with np.errstate(divide="ignore"):
            mdr = np.where(counts > 0, 2.0 / np.sqrt(counts), np.inf)
    return MetricNoise(method, **stats, pvalue=pval, significant=sig, min_detectable_rel=mdr)


def compute_noise(cmp: Comparison, base_runs: Sequence[int], new_runs: Sequence[int],
                  alpha: float = DEFAULT_ALPHA, metrics: Sequence[str] | None = None) -> Noise:
    noise = Noise(len(base_runs), len(new_runs), alpha)
    for m in cmp.metrics:
        if metrics is not None and m.name not in metrics:
            continue
        if all(cmp.runs[r].has_metric(m.name) for r in [*base_runs, *new_runs]):
            noise.metrics[m.name] = metric_noise(cmp, m.name, base_runs, new_runs, alpha)
    return noise


def group_comparison(
    base: Sequence[Profile], new: Sequence[Profile], *, mode: str = "tree",
    rules: Sequence[KeyRule] = (), stat: str = "mean", alpha: float = DEFAULT_ALPHA,
    metrics: Sequence[str] | None = None,
) -> Comparison:
    """Compare two groups of repeated runs; returns a two-run Comparison of group means
    (or medians) with ``noise`` (spread + significance) and ``groups`` set."""
    if not base or not new:
        raise ValueError("both groups need at least one run")
    runs = [*base, *new]
    full = align(runs, baseline=0, mode=mode, rules=rules, current=len(runs) - 1)
    bi = list(range(len(base)))
    ni = list(range(len(base), len(runs)))
    noise = compute_noise(full, bi, ni, alpha, metrics)
    reduce = np.nanmedian if stat == "median" else np.nanmean
    values = {}
    for name, v in full.values.items():
        cols = []
        for idx in (bi, ni):
            g = v[:, idx]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows stay NaN
                lo, hi = np.nanmin(g, axis=1), np.nanmax(g, axis=1)
                # identical values stay exact (a mean of equal floats can drift by 1 ulp)
                cols.append(np.where(lo == hi, lo, reduce(g, axis=1)))
        values[name] = np.stack(cols, axis=1)
    in_group = np.stack([full.present[:, bi].any(axis=1), full.present[:, ni].any(axis=1)], axis=1)
    # Node ids refer to each group's first run (the group's representative profile); a row
    # present only in a later run of the group has node -1 but is still present.
    rep_node = np.stack([full.node[:, bi[0]], full.node[:, ni[0]]], axis=1)
    out = Comparison(
        runs=[base[0], new[0]], baseline=0, mode=full.mode, parent=full.parent,
        node=rep_node,
        name=full.name, module=full.module, src=full.src, keys=full.keys, values=values,
        metrics=full.metrics, matched_by=full.matched_by, current=1,
        noise=noise, groups=(list(base), list(new)),
        notes=[f"groups: baseline = mean of {len(base)} run(s), current = mean of "
               f"{len(new)} run(s)" if stat == "mean" else
               f"groups: medians of {len(base)} and {len(new)} runs"],
    )
    out.total_override = {}
    for key in {k for p in runs for k in p.totals}:
        per_group = []
        for group in (base, new):
            vals = [float(p.totals[key]) for p in group if p.totals.get(key) is not None]
            per_group.append(float(reduce(np.array(vals))) if vals else None)
        out.total_override[key] = per_group
    out.__dict__["present"] = in_group  # present in a group = present in any of its runs
    return out


def single_run_noise(cmp: Comparison, alpha: float = DEFAULT_ALPHA,
                     metrics: Sequence[str] | None = None) -> Noise:
    """Sampling-error estimate for a plain 1-vs-1 comparison (binomial on sample counts)."""
    return compute_noise(cmp, [cmp.baseline], [cmp.current], alpha, metrics)


def ensure_noise(cmp: Comparison, metrics: Sequence[str | None],
                 alpha: float = DEFAULT_ALPHA) -> Noise | None:
    """``cmp.noise`` with every metric of ``metrics`` estimated: groups carry theirs (their
    spread is known only from the group runs), a 1-vs-1 comparison gets the sampling
    error of the missing ones.  Returns ``cmp.noise`` (None when nothing applies)."""
    if cmp.n_runs != 2 or cmp.groups is not None:
        return cmp.noise
    have = cmp.noise.metrics if cmp.noise is not None else {}
    todo = [m for m in dict.fromkeys(metrics) if m and m in cmp.values and m not in have]
    if todo:
        cmp.add_noise(single_run_noise(cmp, alpha, todo))
    return cmp.noise
