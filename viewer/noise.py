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
  discovery rate ``alpha`` over the self rows, so a 239-row tree does not produce a
  couple of "significant" rows by chance; its p-value cut judges the inclusive metric too
  (:func:`_self_cut`).
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
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from profdiff.parsers.model import Kind, Metric, Profile, Unit, inclusive_from_self

from .compare import Comparison, KeyRule, align, value_column
from .defaults import DEFAULT_ALPHA  # noqa: F401 - re-exported
from .gathered_values import GatheredValues


class Spread(Mapping[str, np.ndarray]):
    """Per-row mean, standard deviation, minimum and maximum of each side's runs
    (``base_mean`` ... ``new_max``), computed when first read for a metric whose samples
    an earlier metric of the same estimate held (:func:`_spread_and_beyond`).

    Why lazily: only a row's details (the details pane, a JSON report's row) read them,
    and for such a metric they were the only reason to gather its columns: two fresh
    10^6-row arrays per metric, three metrics of a ``-P`` report, in the estimate the
    window's first paint waits for."""

    KEYS = tuple(f"{side}_{stat}" for side in ("base", "new")
                 for stat in ("mean", "std", "min", "max"))

    def __init__(self, make: Callable[[], dict[str, np.ndarray]]) -> None:
        self._make = make
        self._got: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, stats: dict[str, np.ndarray]) -> Spread:
        """A spread computed already."""
        out = cls(lambda: stats)
        out._got = stats
        return out

    def __getitem__(self, key: str) -> np.ndarray:
        if self._got is None:
            with self._lock:  # the worker that estimated and the GUI thread may both read
                if self._got is None:
                    self._got = self._make()
        return self._got[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.KEYS)

    def __len__(self) -> int:
        return len(self.KEYS)


def _spread_stat(key: str) -> property:
    return property(lambda self: self.spread[key], doc=f"``spread['{key}']``, per row")


@dataclass
class MetricNoise:
    """Per-row spread and significance of one metric (arrays of length n_rows)."""

    method: str
    spread: Spread
    p: np.ndarray | PValues  # :attr:`pvalue`; a sampled metric's built when read whole
    significant: np.ndarray
    detectable: MinDetectable | None = None  # sampled metrics only
    speed_factor: float | None = None  # run-level new/base factor taken out before testing
    factor_rows: int | None = None  # how many rows voted on speed_factor
    total_ratio: float | None = None  # the runs' total samples, new over base (a note)
    dispersion: float | None = None  # variance inflation over sampling error (>= 1)
    judged: bool = True  # False: a timed metric, one run per side (see :func:`_unjudged`)

    @property
    def exact(self) -> bool:
        """A counted metric, the same in every run of a side: a change is real, with no
        p-value to show."""
        return self.method.startswith("deterministic")

    @property
    def pvalue(self) -> np.ndarray:
        """Two-sided p-value of each row's change."""
        return self.p.rows() if isinstance(self.p, PValues) else self.p

    def pvalue_at(self, row: int) -> float:
        """``pvalue[row]``, without building the array (a details pane, a tooltip)."""
        return self.p.at(row) if isinstance(self.p, PValues) else float(self.p[row])

    base_mean = _spread_stat("base_mean")
    base_std = _spread_stat("base_std")
    base_min = _spread_stat("base_min")
    base_max = _spread_stat("base_max")
    new_mean = _spread_stat("new_mean")
    new_std = _spread_stat("new_std")
    new_min = _spread_stat("new_min")
    new_max = _spread_stat("new_max")

    @property
    def min_detectable_rel(self) -> np.ndarray | None:
        """Per row, the smallest relative change its samples can show (None: exact)."""
        return None if self.detectable is None else self.detectable.rows()

    def min_detectable_at(self, row: int) -> float | None:
        """``min_detectable_rel[row]``, without building the array (a details pane, a
        report's row)."""
        return None if self.detectable is None else self.detectable.at(row)


class MinDetectable:
    """The smallest relative change each row can show, ``2 sqrt(dispersion / samples)``
    (inf without samples), built when first read whole.

    Why lazily: only a row's details read it, and on a 10^6-row tree the array was one
    of the estimate's fresh columns the window's first paint waited for."""

    def __init__(self, mean_base: np.ndarray, dispersion: float) -> None:
        self._mb = mean_base
        self._root = math.sqrt(dispersion)
        self._rows: np.ndarray | None = None
        self._lock = threading.Lock()

    def at(self, row: int) -> float:
        b = float(self._mb[row])
        return 2.0 * self._root / math.sqrt(max(b, 1e-300)) if b > 0 else math.inf

    def rows(self) -> np.ndarray:
        with self._lock:  # the GUI thread and a worker's ranking may ask at once
            if self._rows is None:
                out = np.empty(len(self._mb))
                for sl in _row_blocks(len(out)):
                    b = self._mb[sl]
                    with np.errstate(divide="ignore"):
                        out[sl] = np.where(b > 0, 2.0 * self._root /
                                           np.sqrt(np.maximum(b, 1e-300)), np.inf)
                out.flags.writeable = False
                self._rows = out
        return self._rows


class PValues:
    """Two-sided p-values ``erfc(zs)`` of the scaled z-values ``zs``, built when first read
    whole; the discoveries at a false discovery rate need only the rows whose p-value
    can be at most the rate (:meth:`discoveries`).

    Why lazily: a window judges its statuses by the discoveries, and only the 'sig.'
    column, exports and a row's details read p-values; on the 100 MB hs-ad pair the
    estimate built two 714k-row p-value arrays (~25 ms each, most of it sorting the
    225k-306k nonzero z-values for their 48-69 distinct ones) before the first paint."""

    def __init__(self, zs: np.ndarray) -> None:
        self._zs = zs
        self._rows: np.ndarray | None = None
        self._lock = threading.Lock()

    def at(self, row: int) -> float:
        built = self._rows
        return float(built[row]) if built is not None else math.erfc(float(self._zs[row]))

    def rows(self) -> np.ndarray:
        with self._lock:  # the GUI thread and a worker may ask at once
            if self._rows is None:
                out = _erfc(self._zs)
                out.flags.writeable = False
                self._rows = out
        return self._rows

    def discoveries(self, alpha: float) -> np.ndarray:
        """:func:`benjamini_hochberg` of the p-values: the rows at most
        :meth:`bh_threshold`."""
        return self.below(self.bh_threshold(alpha))

    def bh_threshold(self, alpha: float) -> float:
        """The p-value at and below which the Benjamini-Hochberg procedure at false
        discovery rate ``alpha`` calls rows discoveries: ``alpha k / m`` for the largest
        ``k`` with ``p_(k) <= alpha k / m`` (no p-value lies between ``p_(k)`` and it),
        or ``alpha / m`` when none passes (then no row is at most it).  Read from the
        rows that may have ``p <= alpha`` only (their z-values at least
        :func:`_z_floor`)."""
        n = len(self._zs)
        if n == 0:
            return 0.0
        if self._rows is not None:
            p = self._rows[self._rows <= alpha]
        else:
            p = _erfc(self._zs[self._zs >= _z_floor(alpha)])
            p = p[p <= alpha]
        p = np.sort(p)
        passed = np.flatnonzero(p <= alpha * np.arange(1, p.size + 1) / n)
        return alpha * (int(passed[-1]) + 1 if passed.size else 1) / n

    def below(self, cut: float) -> np.ndarray:
        """Rows whose p-value is at most ``cut`` (NaN never), reading erfc only where
        the z-value reaches :func:`_z_floor` of ``cut``."""
        if self._rows is not None:
            return self._rows <= cut
        out = np.zeros(len(self._zs), dtype=bool)
        rows = np.flatnonzero(self._zs >= _z_floor(cut))
        if rows.size:
            out[rows] = _erfc(self._zs[rows]) <= cut
        return out


def _z_floor(alpha: float) -> float:
    """A scaled z below which ``erfc(z) > alpha`` holds with room to spare (erfc falls
    monotonically; the bisection stops short of the crossing by a relative 1e-6 of
    ``alpha``, far more than erfc's rounding): rows below it are no discoveries."""
    if alpha >= 1.0:
        return 0.0
    target = alpha * (1.0 + 1e-6)
    lo, hi = 0.0, 40.0  # erfc(0) = 1 > target; erfc(40) = 0 < target
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if math.erfc(mid) > target:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass
class Noise:
    n_base: int
    n_new: int
    alpha: float
    metrics: dict[str, MetricNoise] = field(default_factory=dict)

    def significant(self, metric: str) -> np.ndarray:
        return self.metrics[metric].significant


def _erfc(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``math.erfc`` of each element, called once per distinct nonzero value: most rows of
    a big tree did not move (erfc(0) = 1) and counts repeat, so 10^6 Python calls become a
    few thousand (the same numbers).  ``out`` (may be ``x``): written in place, as a
    fresh 10^6-row array costs its first touch (~10 ms of an estimate on this VM)."""
    x = np.asarray(x, dtype=np.float64)
    todo = np.flatnonzero(x != 0)  # NaN and inf included
    vals = x[todo]  # a copy: ``out`` may be ``x``
    if out is None:
        out = np.ones(x.shape, dtype=np.float64)
    else:
        out.fill(1.0)
    if todo.size:
        uniq, inverse = np.unique(vals, return_inverse=True)
        out[todo] = np.frompyfunc(math.erfc, 1, 1)(uniq).astype(np.float64)[inverse]
    return out


def benjamini_hochberg(p: np.ndarray, alpha: float, m: int | None = None) -> np.ndarray:
    """Boolean mask of discoveries at false discovery rate ``alpha`` (NaN p never).

    Only p-values <= ``alpha`` can be discoveries (every threshold ``alpha * k / m`` is at
    most ``alpha``), and they are the smallest ones: their ranks among all ``m`` are their
    ranks among themselves.  So only they are sorted, not the whole tree (on a 10^6-row
    comparison almost every row has p = 1).  ``m``: the number of tests when ``p`` holds
    only some of them (every other one above ``alpha``; :meth:`PValues.discoveries`)."""
    p = np.asarray(p, dtype=float)
    out = np.zeros(len(p), dtype=bool)
    if m is None:
        m = int((~np.isnan(p)).sum())
    if m == 0:
        return out
    idx = np.flatnonzero(p <= alpha)  # NaN compares false
    if idx.size == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    thresh = alpha * np.arange(1, order.size + 1) / m
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
        out.append(_column_total(col) if col is not None else float("nan"))
    return np.array(out, dtype=float)


def _column_total(col: np.ndarray) -> float:
    """``np.nansum(col)``: a plain sum is the same number when no value is NaN, without
    nansum's copy of the column (a run total is read for every metric of an estimate, and
    per block of rows for the rounding of printed values)."""
    total = float(np.sum(col))
    return total if not math.isnan(total) else float(np.nansum(col))


def _sample_counts(cmp: Comparison, runs: Sequence[int]) -> np.ndarray:
    """Total sample (tick) count per run, for the binomial variance of shares."""
    out = []
    for r in runs:
        n = run_sample_count(cmp.runs[r])
        out.append(float(n) if n else float("nan"))
    return np.array(out, dtype=float)


def run_sample_count(p: Profile) -> float | None:
    """How many samples (ticks) ``p`` took: its ``total_ticks`` or ``total_samples``, or
    else its one run total counted in samples or ticks (speedscope files total their
    samples as ``self_samples``); None when it says none.

    Why the fallback: without a count, a sampled metric's change cannot be weighed
    against sampling error, and every row that moved read "changed": two py-spy runs of
    one program, 1,319 of their 1,515 shared rows."""
    n = p.totals.get("total_ticks") or p.totals.get("total_samples")
    if n:
        return float(n)
    counted = [k for k, m in p.total_metrics.items()
               if m is not None and m.unit in (Unit.SAMPLES, Unit.TICKS) and p.totals.get(k)]
    return float(p.totals[counted[0]]) if len(counted) == 1 else None


def metric_noise(cmp: Comparison, metric: str, base_runs: Sequence[int],
                 new_runs: Sequence[int], alpha: float = DEFAULT_ALPHA,
                 memo: dict | None = None) -> MetricNoise:
    """Spread and significance of one metric's change, row by row.  ``memo``: shared by
    the metrics of one estimate, so the self metric's speed factor and dispersion are
    computed once for it and its inclusive counterpart."""
    m = cmp.metric_by_name[metric]
    if m.timed and len(base_runs) == 1 and len(new_runs) == 1:
        return _unjudged(cmp, metric, base_runs, new_runs)
    nb = _sample_counts(cmp, base_runs)
    nn = _sample_counts(cmp, new_runs)
    if m.sampled and np.isfinite(nb).all() and np.isfinite(nn).all():
        return _count_noise(cmp, m, base_runs, new_runs, alpha, {} if memo is None else memo)
    if not m.sampled and _no_nan_by_nodes(cmp, metric, base_runs, new_runs):
        # one run per side, no NaN: each side's min = max, and a change beyond the
        # rounding (|new - base| > h >= 0) is a change; judged in node order
        spread, beyond = _spread_and_beyond(cmp, metric, base_runs, new_runs, known=True)
        return _deterministic(cmp, metric, spread, beyond)
    spread, beyond = _spread_and_beyond(cmp, metric, base_runs, new_runs, known=False)
    exact_within = (spread["base_min"] == spread["base_max"]) & \
        (spread["new_min"] == spread["new_max"])
    if not m.sampled and exact_within.all():
        changed = (spread["base_mean"] != spread["new_mean"]) & beyond
        return _deterministic(cmp, metric, spread, changed)
    return _share_noise(cmp, m, base_runs, new_runs, spread, beyond, alpha)


UNJUDGED = ("not judged: one run per side, and this metric follows the run's timing "
            "(heap censuses, measured durations), which moves it between runs of one "
            "binary by more than one run can show; give repeated runs (--base/--new)")


def _unjudged(cmp: Comparison, metric: str, base_runs: Sequence[int],
              new_runs: Sequence[int]) -> MetricNoise:
    """A timed metric (:attr:`parsers.model.Metric.timed`) with one run per side: no
    p-value; ``significant`` marks the rows that moved beyond rounding, so a view still
    colours and ranks the measured change, while statuses call it moved, not changed.

    Why not "deterministic": the heap profiles of one binary run twice differ in every
    band (census timing), and calling those changes real read 47 of 47 bands changed."""
    known = _no_nan_by_nodes(cmp, metric, base_runs, new_runs)
    spread, beyond = _spread_and_beyond(cmp, metric, base_runs, new_runs, known=known)
    return MetricNoise(UNJUDGED, spread, p=np.full(cmp.n_rows, np.nan), significant=beyond,
                       judged=False)


def _deterministic(cmp: Comparison, metric: str, spread: Spread,
                   changed: np.ndarray) -> MetricNoise:
    """A metric counted, not sampled, the same in every run of a side: every row that
    ``changed`` is a real change."""
    method = "deterministic: any change is real"
    if metric in cmp.rounding:
        method += " once it exceeds the rounding of the printed values"
    return MetricNoise(method, spread, p=np.where(changed, 0.0, 1.0), significant=changed)


def _no_nan_by_nodes(cmp: Comparison, metric: str, base_runs: Sequence[int],
                     new_runs: Sequence[int]) -> bool:
    """One run per side of a tree read from its runs (:func:`_by_nodes`), both holding
    ``metric`` with no NaN value: then its rows' values are the runs' values or 0 (a row
    a run lacks), never NaN, and the metric is judged without gathering its columns.

    Why: a 1-vs-1 estimate of a ``-P`` report judges six counted metrics (entries,
    bytes, the allocation shares); gathering both columns of each, twelve fresh 10^6-row
    arrays, was a third of the estimate the window's first paint waits for."""
    if not _by_nodes(cmp, base_runs, new_runs):
        return False
    for r in (base_runs[0], new_runs[0]):
        p = cmp.runs[r]
        if not p.has_metric(metric):
            return False
        col = p.values.get(metric)
        if col is None or col.dtype.kind not in "biuf" or \
                (col.dtype.kind == "f" and bool(np.isnan(col).any())):
            return False  # NaN, or a dtype that could hold one
    return True


def _spread_and_beyond(cmp: Comparison, metric: str, base_runs: Sequence[int],
                       new_runs: Sequence[int], known: bool) -> tuple[Spread, np.ndarray]:
    """A metric's spread and the rows whose change exceeds the rounding of its
    printed values.  ``known``: its samples were an earlier metric's; then, one run per
    side of a tree, no column of it is gathered: the rows are judged in the baseline's
    node order (:meth:`Comparison.value_blocks`) and the spread is computed if read."""
    if known and _by_nodes(cmp, base_runs, new_runs):
        values = cmp.values
        spread = Spread(lambda: _spread(_columns_of(values, metric, base_runs),
                                        _columns_of(values, metric, new_runs)))
        return spread, _beyond_in_blocks(cmp, metric, new_runs[0])
    stats = _spread(_columns(cmp, metric, base_runs), _columns(cmp, metric, new_runs))
    return Spread.of(stats), _beyond_rounding(cmp, metric, base_runs, new_runs, stats)


def _by_nodes(cmp: Comparison, base_runs: Sequence[int], new_runs: Sequence[int]) -> bool:
    """One run per side of a tree read from its runs, the base side its baseline: rows
    are the runs' nodes, so a metric can be read from the runs' own arrays."""
    return isinstance(cmp.values, GatheredValues) and list(base_runs) == [cmp.baseline] \
        and len(new_runs) == 1


def _beyond_in_blocks(cmp: Comparison, metric: str, run: int) -> np.ndarray:
    """:func:`_beyond_rounding` of ``run`` against the baseline, from the value blocks
    (the same rows: ``|new - base| > h (1 + 1e-9)``)."""
    out = np.empty(cmp.n_rows, dtype=bool)
    h_all = cmp.rounding.get(metric)
    for rows, new, base in cmp.value_blocks(metric, run):
        sel = slice(rows, rows + len(new)) if isinstance(rows, int) else rows
        h = np.zeros(len(new)) if h_all is None else \
            h_all[sel, cmp.baseline] + h_all[sel, run]
        d = np.abs(new - base)
        with np.errstate(invalid="ignore"):
            out[sel] = d > h * (1 + 1e-9)
    return out


def _row_mean(x: np.ndarray) -> np.ndarray:
    """Mean over the runs of each row (one run: its column, a view of ``x`` - every
    caller passes an array of its own and only reads the mean - without nanmean's cost
    or a copy: a 10^6-row copy is 8 MB of fresh memory to touch)."""
    return x[:, 0] if x.shape[1] == 1 else np.nanmean(x, axis=1)


def _columns(cmp: Comparison, metric: str, runs: Sequence[int]) -> np.ndarray:
    """``metric``'s values of ``runs``, [row, run]: one run's column alone when there is
    one run per side (no [row, run] array of every run is built for a 1-vs-1 estimate)."""
    return _columns_of(cmp.values, metric, runs)


def _columns_of(values: Mapping[str, np.ndarray], metric: str, runs: Sequence[int]
                ) -> np.ndarray:
    """:func:`_columns` of a comparison's ``values`` (what a lazy :class:`Spread` keeps:
    not the comparison, which holds the noise that holds the spread)."""
    if len(runs) == 1:
        return _read_only(value_column(values, metric, runs[0]))[:, None]
    return values[metric][:, list(runs)]


def _read_only(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only array: itself (a view) when already read-only, else a
    read-only copy."""
    if a.flags.writeable:
        a = a.copy()
        a.flags.writeable = False
    return a


def _spread(vb: np.ndarray, vn: np.ndarray) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for side, v in (("base", vb), ("new", vn)):
        if v.shape[1] == 1:  # one run (1-vs-1): its value is the mean, min and max
            # (numpy's nan-reductions cost ~20x more, for the same numbers); one
            # read-only copy shared by the three: 10^6-row copies are memory to touch
            col = _read_only(v[:, 0])
            out.update({f"{side}_mean": col, f"{side}_std": np.zeros(len(v)),
                        f"{side}_min": col, f"{side}_max": col})
            continue
        out.update({f"{side}_mean": np.nanmean(v, axis=1),
                    f"{side}_std": np.nanstd(v, axis=1, ddof=1),
                    f"{side}_min": np.nanmin(v, axis=1), f"{side}_max": np.nanmax(v, axis=1)})
    return out


def _rounding_of(cmp: Comparison, metric: str, runs: Sequence[int],
                 rows: slice = slice(None)) -> np.ndarray:
    h = cmp.rounding.get(metric)
    if h is None:
        return np.zeros(len(range(cmp.n_rows)[rows]))
    return np.max(h[rows][:, list(runs)], axis=1)


def _beyond_rounding(cmp: Comparison, metric: str, base_runs: Sequence[int],
                     new_runs: Sequence[int], stats: dict[str, np.ndarray]) -> np.ndarray:
    """Rows whose change of the means exceeds what rounding of the printed values allows
    (a block of rows at a time: only the mask is fresh memory)."""
    n = len(stats["new_mean"])
    out = np.empty(n, dtype=bool)
    for sl in _row_blocks(n):
        h = _rounding_of(cmp, metric, base_runs, sl) + _rounding_of(cmp, metric, new_runs, sl)
        d = np.abs(stats["new_mean"][sl] - stats["base_mean"][sl])
        with np.errstate(invalid="ignore"):
            out[sl] = d > h * (1 + 1e-9)
    return out


NOISE_BLOCK = 1 << 15
"""Rows per block of the element-wise parts of an estimate.  Why blocks: on 10^6 rows
each whole-column temporary is 8 MB of memory touched for the first time (the kernel
maps it page by page: the first estimate of a big pair spent 3/4 of its time there),
while a block's temporaries are reused from one block to the next."""


def _row_blocks(n: int) -> list[slice]:
    return [slice(lo, min(n, lo + NOISE_BLOCK)) for lo in range(0, max(n, 1), NOISE_BLOCK)]


def _as_counts(cmp: Comparison, metric: Metric, runs: Sequence[int],
               values: np.ndarray) -> np.ndarray:
    """Values as sample (tick) counts of each run: share of the run total x its samples."""
    return _scaled(values, _run_totals(cmp, metric, runs), _sample_counts(cmp, runs))


def _scaled(values: np.ndarray, totals: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """``values / totals * samples`` (per run: the columns), in one fresh array; a block of
    rows gives the same numbers as that block of the whole."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = values / totals
        out *= samples
        return out


MIN_INFORMATIVE = 10
"""Rows need this many samples in both runs to inform the speed factor and dispersion."""


def informative_rows(cb: np.ndarray, cn: np.ndarray) -> np.ndarray:
    """Rows with at least :data:`MIN_INFORMATIVE` samples in both runs: the rows that
    vote on the run's speed and its dispersion."""
    return (cb >= MIN_INFORMATIVE) & (cn >= MIN_INFORMATIVE)


def speed_factor(cb: np.ndarray, cn: np.ndarray) -> float:
    """The run-level speed factor: the median of per-row ``new / base`` sample counts.

    Why: identical builds vary by tens of percent in total time (2,541 to 3,710 ticks for
    one hs-ad binary), and every row's time moves with the run.  Most rows of a real
    comparison do not change, so the median ratio measures the run's own change; a row is
    then judged by how far it moved beyond that factor.  A regression confined to a few
    rows leaves the median near 1, so dilution of the others' shares is not read as
    improvement.  The median is unweighted: a single hot row that regressed (an
    interpreter loop holding 95 % of the samples, beside two rows that did not change)
    must not set the factor.

    With two informative rows the median is their geometric mean, so what is judged is
    how the two split the samples: a recording 35 % longer of one program (perf attached
    with ``-p`` for longer) moves neither row.  With one row or none, the run's speed
    cannot be told from the row's own change: 1 (absolute counts are compared).
    """
    ok = informative_rows(cb, cn)
    if ok.sum() < MIN_FACTOR_ROWS:
        return 1.0
    return float(np.exp(np.median(np.log(cn[ok] / cb[ok]))))


MIN_FACTOR_ROWS = 2
"""A speed factor needs this many informative rows; each row counts once (not by its
weight), so from three rows on one dominant row that regressed cannot pass its change
off as the run's."""


FEW_FACTOR_ROWS = 5
"""A speed factor resting on fewer informative rows than this says so in the run-level
note: with two, it is their mean, and a change of either moves it."""


CHI2_1_MEDIAN = 0.4549364
"""Median of a chi-square variable with one degree of freedom."""


def overdispersion(z: np.ndarray, informative: np.ndarray) -> float:
    """How much more rows move than sampling error alone allows (>= 1).

    Profiler ticks are not independent samples (GC pauses, timer and cache effects), so
    shares of identical runs move several times more than a binomial or Poisson model
    says.  Like genomic control, the median squared z over the rows estimates that
    inflation robustly: most rows did not really change.
    """
    zz = z[informative & np.isfinite(z)] ** 2
    if len(zz) < 8:
        return 1.0
    return max(1.0, float(np.median(zz)) / CHI2_1_MEDIAN)


def _count_noise(cmp: Comparison, m: Metric, base_runs: Sequence[int],
                 new_runs: Sequence[int], alpha: float, memo: dict) -> MetricNoise:
    """Sampled metric: compare sample counts after the run-level speed factor.

    The factor and the dispersion come from the self metric (for ``inherited_time`` from
    ``time``): self rows are disjoint samples, while inclusive rows overlap (MAIN holds
    them all) and would understate how much rows move.  ``memo`` keeps them (and the
    self metric's z) for the other metrics of the same estimate, and the tests of metrics
    that hold the same samples (:func:`_same_samples`).
    """
    self_m = _self_counterpart(cmp, m)
    f, n_f, t, phi, z_self, ms_b = _self_part(cmp, self_m, base_runs, new_runs, memo)
    if self_m is m:
        z, mb = z_self, ms_b
        known = memo[("known", m.name, tuple(base_runs), tuple(new_runs))]
    else:
        kind = ("inclusive", f, tuple(base_runs), tuple(new_runs))
        samples = _Samples(cmp, m, base_runs, new_runs)
        got = _same_samples(memo, kind, samples)
        known = got is not None
        if got is None:
            cb, cn = samples.counts()
            z, mb, _ = _count_z(cmp, m, cb, cn, base_runs, new_runs, f)
            got = _remember(memo, kind, samples, (z, mb))
        z, mb = got
    cut = _self_cut(memo, z_self, ms_b, phi, alpha)
    pval, mdr, discovered = _tested(memo, z, mb, phi, cut)
    spread, beyond = _spread_and_beyond(cmp, m.name, base_runs, new_runs, known)
    sig = discovered & beyond
    repeated = ", run-to-run spread" if max(len(base_runs), len(new_runs)) > 1 else ""
    method = (f"z test on sample counts after the run's speed factor x{f:.3f} (Poisson "
              f"sampling error{repeated}, dispersion x{phi:.2f} estimated over the rows)")
    return MetricNoise(method, spread, p=pval, significant=sig, detectable=mdr,
                       speed_factor=f, factor_rows=n_f, total_ratio=t,
                       dispersion=phi)


def _self_part(cmp: Comparison, self_m: Metric, base_runs: Sequence[int],
               new_runs: Sequence[int], memo: dict) -> tuple:
    """(speed factor, the rows it rests on, the ratio of the rows' total counts,
    dispersion, z, mean base counts) of the self metric ``self_m``, computed once per
    ``memo`` (and once for the self metrics that hold the same samples: ``ticks``,
    ``time_s`` and ``%time`` of a ``-P`` report)."""
    key = ("self", self_m.name, tuple(base_runs), tuple(new_runs))
    got = memo.get(key)
    if got is None:
        kind = ("self", tuple(base_runs), tuple(new_runs))
        samples = _Samples(cmp, self_m, base_runs, new_runs)
        got = _same_samples(memo, kind, samples)
        memo[("known", self_m.name, tuple(base_runs), tuple(new_runs))] = got is not None
        if got is None:
            sb, sn = samples.counts()
            disjoint = _disjoint_rows(cmp)
            mb, mn = _row_mean(sb), _row_mean(sn)
            f = speed_factor(mb, mn) if disjoint else 1.0
            n_f = int(informative_rows(mb, mn).sum()) if disjoint else 0
            t = _ratio_of_sums(mn, mb) if disjoint else None
            z_self, ms_b, ms_n = _count_z(cmp, self_m, sb, sn, base_runs, new_runs, f)
            phi = overdispersion(z_self, informative_rows(ms_b, ms_n)) if disjoint else 1.0
            got = _remember(memo, kind, samples, (f, n_f, t, phi, z_self, ms_b))
        memo[key] = got
    return got


SAME_SAMPLES_RTOL = 1e-12
"""Sample counts this close (relative) are the same samples: ``ticks``, ``time_s`` (ticks
x interval) and ``%time`` (ticks / total) of a ``-P`` report differ only in the last bits
of their floating-point counts."""


def _rounding_counts(cmp: Comparison, m: Metric, base_runs: Sequence[int],
                     new_runs: Sequence[int]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The rounding half-widths of ``m``'s printed values in sample counts (None when
    its values are exact): part of what makes two metrics' tests the same test."""
    if m.name not in cmp.rounding:
        return None, None
    h = np.asarray(cmp.rounding[m.name])
    return (_as_counts(cmp, m, base_runs, h[:, list(base_runs)]),
            _as_counts(cmp, m, new_runs, h[:, list(new_runs)]))


class _Samples:
    """One metric's sample counts of both sides, and the rounding of its values in
    counts: the data its test is a function of.  Both are computed when first needed:
    a metric that holds the same samples as one tested before is told by scaling and
    comparing a block of rows at a time (:meth:`same_as`), so its counts (two fresh
    [row, run] arrays, ~10 ms each on 10^6 rows) are never built."""

    def __init__(self, cmp: Comparison, m: Metric, base_runs: Sequence[int],
                 new_runs: Sequence[int]) -> None:
        self._cmp, self._m = cmp, m
        self._sides = (base_runs, new_runs)
        self._counts: tuple[np.ndarray, np.ndarray] | None = None
        self._rounding: tuple | None = None

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(base counts, new counts), [row, run] each (:func:`_counts`, or
        :func:`_event_counts` for a sum counted by another metric)."""
        if self._counts is None:
            b, n = self._sides
            if _counted_by(self._cmp, self._m) is not None:
                self._counts = _event_counts(self._cmp, self._m, b, n)
            else:
                self._counts = (_counts(self._cmp, self._m, b), _counts(self._cmp, self._m, n))
        return self._counts

    def rounding(self) -> tuple:
        if self._rounding is None:
            self._rounding = _rounding_counts(self._cmp, self._m, *self._sides)
        return self._rounding

    @property
    def metric(self) -> Metric:
        return self._m

    def same_as(self, known: _Samples) -> bool:
        """Whether ``known`` (an earlier metric's, its counts built) holds these samples:
        compared on the runs' own arrays when rows are the runs' nodes (no column of
        this metric gathered), else on the rows."""
        cmp, m = self._cmp, self._m
        same = _same_on_nodes(cmp, m, known.metric, self._sides)
        if same is None:
            same = all(_close_scaled(_columns(cmp, m.name, runs), _run_totals(cmp, m, runs),
                                     _sample_counts(cmp, runs), theirs)
                       for runs, theirs in zip(self._sides, known.counts(), strict=True))
        return same and all(_close(a, b) for a, b in zip(self.rounding(), known.rounding(),
                                                         strict=True))


def _same_on_nodes(cmp: Comparison, m: Metric, k: Metric,
                   sides: tuple[Sequence[int], Sequence[int]]) -> bool | None:
    """Whether ``m`` and ``k`` hold the same samples, compared as counts of each run's
    nodes (one run per side of a tree); None when it cannot be told so.

    The same answer as comparing the rows' counts: each run's rows are its nodes (every
    node one row), and the rows it lacks count 0 in both, as long as every run total
    and sample count is a finite, non-zero number (else those rows are NaN or inf in
    one metric and 0 in the other, and only the rows can tell)."""
    if not _by_nodes(cmp, *sides):
        return None
    for r in (sides[0][0], sides[1][0]):
        p = cmp.runs[r]
        a, b = p.values.get(m.name), p.values.get(k.name)
        scale = np.concatenate([_run_totals(cmp, m, [r]), _run_totals(cmp, k, [r]),
                                _sample_counts(cmp, [r])])
        if a is None or b is None or a.shape != b.shape or a.ndim != 1 \
                or not (np.isfinite(scale).all() and (scale != 0).all()):
            return None
        if not _close_scaled_pair(a, scale[0], b, scale[1], scale[2]):
            return False
    return True


def _close_scaled_pair(a: np.ndarray, ta: float, b: np.ndarray, tb: float, n: float) -> bool:
    """``_close`` of ``a / ta * n`` and ``b / tb * n`` (float64, as counts are), a
    strided sample first, then a block at a time."""
    def close(sl: slice) -> bool:
        return _close_part(_scaled(np.asarray(a[sl], dtype=np.float64), np.array([ta]),
                                   np.array([n])),
                           _scaled(np.asarray(b[sl], dtype=np.float64), np.array([tb]),
                                   np.array([n])))

    return _close_by_blocks(len(a), close)


def _same_samples(memo: dict, kind: tuple, samples: _Samples) -> tuple | None:
    """What an earlier metric of this estimate computed from the same samples for a test
    of ``kind``, or None.

    Why: metrics that are exact scalings of one column (a ``-P`` report's ticks and
    seconds) are one test: estimating each again made the noise estimate of a 10^6-row
    tree, which the window waits for before its statuses are final, cost 1.3x."""
    for known, value in memo.get(("samples", kind), ()):
        if samples.same_as(known):
            return value
    return None


def _remember(memo: dict, kind: tuple, samples: _Samples, value: tuple) -> tuple:
    memo.setdefault(("samples", kind), []).append((samples, value))
    return value


def _close(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Equal arrays, but for the last bits of their floating-point values
    (:data:`SAME_SAMPLES_RTOL`); NaN equals NaN.  A strided sample of the rows is
    compared first: most pairs of metrics differ almost everywhere."""
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    a, b = a.ravel(), b.ravel()
    step = max(1, a.size // 4096)
    return _close_part(a[::step], b[::step]) and (step == 1 or _close_part(a, b))


def _close_part(a: np.ndarray, b: np.ndarray) -> bool:
    differ = np.flatnonzero(a != b)  # NaN != NaN: looked at below
    if not differ.size:
        return True
    x, y = a[differ], b[differ]
    with np.errstate(invalid="ignore"):
        ok = (np.abs(x - y) <= SAME_SAMPLES_RTOL * np.abs(y)) | (np.isnan(x) & np.isnan(y))
    return bool(ok.all())


def _close_scaled(values: np.ndarray, totals: np.ndarray, samples: np.ndarray,
                  known: np.ndarray) -> bool:
    """``_close(_scaled(values, totals, samples), known)``, scaling a block of rows at a
    time (the same numbers: :func:`_scaled`) after a strided sample of the rows."""
    if values.shape != known.shape:
        return False

    def close(rows: slice) -> bool:
        return _close_part(_scaled(values[rows], totals, samples).ravel(), known[rows].ravel())

    return _close_by_blocks(len(values), close)


def _close_by_blocks(n: int, close: Callable[[slice], bool]) -> bool:
    """``close(rows)`` of a strided sample of ``n`` rows (most pairs of metrics differ
    almost everywhere), then of every block of rows (:data:`NOISE_BLOCK`)."""
    step = max(1, n // 4096)
    if not close(slice(None, None, step)):
        return False
    return step == 1 or all(close(sl) for sl in _row_blocks(n))


def _self_cut(memo: dict, z_self: np.ndarray, ms_b: np.ndarray, phi: float,
              alpha: float) -> float:
    """The p-value cut of the self metric's Benjamini-Hochberg procedure at ``alpha``
    (:meth:`PValues.bh_threshold`), which judges its inclusive metric too.

    Why one cut for both: a leaf's self and total counts are the same samples with the
    same p-value, and procedures run on each column apart called them differently (the
    Julia CPU pair: a row 196 -> 16 "~" in self and a change in total, 31 such tree
    rows).  The self rows are disjoint samples, the family the procedure is meant for;
    inclusive rows overlap (every caller repeats its callees' samples)."""
    key = ("cut", id(z_self), id(ms_b), phi, alpha)
    got = memo.get(key)
    if got is None:
        pval, _ = _pvalues_of(memo, z_self, ms_b, phi)
        got = memo[key] = pval.bh_threshold(alpha)
    return got


def _pvalues_of(memo: dict, z: np.ndarray, mb: np.ndarray, phi: float
                ) -> tuple[PValues, MinDetectable]:
    """:func:`_pvalues`, once per ``memo`` for metrics that share ``z``
    (:func:`_same_samples`)."""
    key = ("pvalues", id(z), id(mb), phi)
    got = memo.get(key)
    if got is None:
        got = memo[key] = (*_pvalues(z, mb, phi), z, mb)  # z, mb: kept for their ids
    return got[0], got[1]


def _tested(memo: dict, z: np.ndarray, mb: np.ndarray, phi: float, cut: float
            ) -> tuple[PValues, MinDetectable, np.ndarray]:
    """(p-values, smallest detectable change, rows with p at most ``cut``) of the
    z-values ``z``, computed once per ``memo`` for metrics that share them."""
    pval, mdr = _pvalues_of(memo, z, mb, phi)
    key = ("tested", id(z), id(mb), phi, cut)
    got = memo.get(key)
    if got is None:
        got = memo[key] = pval.below(cut)
    return pval, mdr, got


def _pvalues(z: np.ndarray, mb: np.ndarray, phi: float) -> tuple[PValues, MinDetectable]:
    """Two-sided p-values of ``z`` deflated by the dispersion ``phi`` (block by block),
    and the smallest relative change a row of ``mb`` mean base samples can show."""
    n = len(z)
    zs = np.empty(n)
    root = math.sqrt(phi)
    for sl in _row_blocks(n):
        part = zs[sl]
        np.divide(z[sl], root, out=part)
        np.nan_to_num(part, copy=False, nan=0.0)
        part /= math.sqrt(2.0)
    return PValues(zs), MinDetectable(mb, phi)


def _disjoint_rows(cmp: Comparison) -> bool:
    """Self costs of different rows are different samples (not so in a bottom-up tree,
    where every caller row repeats its leaf's samples): only then can rows vote on the
    run's speed."""
    return all(p.meta.get("view") not in ("bottom-up", "by-type") for p in cmp.runs)


def _counts(cmp: Comparison, m: Metric, runs: Sequence[int]) -> np.ndarray:
    return _as_counts(cmp, m, runs, _columns(cmp, m.name, runs))


def _counted_by(cmp: Comparison, m: Metric) -> str | None:
    """The metric counting ``m``'s sampled events (:attr:`Metric.count_of`), when the
    comparison has it."""
    return m.count_of if m.count_of and m.count_of in cmp.values else None


def _event_counts(cmp: Comparison, m: Metric, base_runs: Sequence[int],
                  new_runs: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``m`` (a sum over sampled events: bytes of sampled allocations) in events: each
    row's values over its mean event size, pooled over both sides.

    Why: as a share of the run times its samples, one sampled 1,040-byte allocation
    weighed as 23 samples of a 45-byte mean; two halves of one Julia allocation profile
    then read 5 of 169 shared rows "changed" by their bytes alone, none by their counts.
    A row whose events kept their size is judged by its count; one whose events grew
    moves beyond it by the size change over the pooled size."""
    vb, vn = _columns(cmp, m.name, base_runs), _columns(cmp, m.name, new_runs)
    size = _mean_event_size(cmp, m, [*base_runs, *new_runs])
    if m.kind is Kind.INCLUSIVE and cmp.mode == "tree" and m.self_of in cmp.metric_by_name:
        size = _subtree_event_size(cmp, cmp.metric_by_name[str(m.self_of)],
                                   [*base_runs, *new_runs], size)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = np.where(np.isfinite(size) & (size > 0), size, 1.0)[:, None]
        return vb / size, vn / size


def _mean_event_size(cmp: Comparison, m: Metric, runs: Sequence[int]) -> np.ndarray:
    """Per row, ``m`` over the events counting it (:attr:`Metric.count_of`), pooled over
    ``runs`` (NaN where a row has none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nansum(_columns(cmp, m.name, runs), axis=1) / \
            np.nansum(_columns(cmp, str(m.count_of), runs), axis=1)


def _subtree_event_size(cmp: Comparison, self_m: Metric, runs: Sequence[int],
                        fallback: np.ndarray) -> np.ndarray:
    """Per row of a tree, the variance per unit of its inclusive sum: its subtree's own
    sums weighted by their own mean event sizes, ``sum(s_d B_d) / sum(B_d)``.

    Why: a caller's bytes are its callees' allocations, of very different sizes; its
    plain mean size let one large allocation more or less read as a change (3 callers
    of 7,695 shared rows of two halves of one Julia profile)."""
    if _counted_by(cmp, self_m) is None:
        return fallback
    own = np.nansum(_columns(cmp, self_m.name, runs), axis=1)
    s = _mean_event_size(cmp, self_m, runs)
    weighted = np.where(np.isfinite(s) & (own > 0), s * own, 0.0)
    num = inclusive_from_self(cmp.parent, weighted, cmp.depth)
    den = inclusive_from_self(cmp.parent, np.where(own > 0, own, 0.0), cmp.depth)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, fallback)


def _count_z(cmp: Comparison, m: Metric, cb: np.ndarray, cn: np.ndarray,
             base_runs: Sequence[int], new_runs: Sequence[int],
             f: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|new - f * base| over its standard error, per row; and the mean counts (computed
    a block of rows at a time: :data:`NOISE_BLOCK`)."""
    mb, mn_ = _row_mean(cb), _row_mean(cn)
    z = np.empty(len(mb))
    for sl in _row_blocks(len(mb)):
        z[sl] = _block_z(cmp, m, cb[sl], cn[sl], mb[sl], mn_[sl], base_runs, new_runs, f, sl)
    return z, mb, mn_


def _block_z(cmp: Comparison, m: Metric, cb: np.ndarray, cn: np.ndarray, mb: np.ndarray,
             mn_: np.ndarray, base_runs: Sequence[int], new_runs: Sequence[int], f: float,
             rows: slice) -> np.ndarray:
    """:func:`_count_z`'s z of one block of ``rows`` (``cb`` ... ``mn_`` are that block)."""
    var_b = np.maximum(mb, 0) / cb.shape[1]
    var_n = np.maximum(mn_, 0) / cn.shape[1]
    if cb.shape[1] > 1:
        var_b = np.maximum(var_b, np.nanvar(cb, axis=1, ddof=1) / cb.shape[1])
    if cn.shape[1] > 1:
        var_n = np.maximum(var_n, np.nanvar(cn, axis=1, ddof=1) / cn.shape[1])
    var = f * f * var_b + var_n + _rounding_var(cmp, m, base_runs, new_runs, f, rows)
    diff = mn_ - f * mb
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(diff) / np.sqrt(var)
    z = np.where((var == 0) & (diff == 0), 0.0, z)
    return np.where((var == 0) & (diff != 0), np.inf, z)


def _self_counterpart(cmp: Comparison, m: Metric) -> Metric:
    if m.kind is Kind.INCLUSIVE and m.self_of and m.self_of in cmp.metric_by_name:
        return cmp.metric_by_name[m.self_of]
    return m


def _rounding_var(cmp: Comparison, m: Metric, base_runs: Sequence[int],
                  new_runs: Sequence[int], f: float, rows: slice = slice(None)) -> np.ndarray:
    """Variance (in counts) of uniform rounding errors of the printed values of ``rows``."""
    if m.name not in cmp.rounding:
        return np.zeros(len(range(cmp.n_rows)[rows]))
    h = np.asarray(cmp.rounding[m.name])[rows]
    hb = _as_counts(cmp, m, base_runs, h[:, list(base_runs)])
    hn = _as_counts(cmp, m, new_runs, h[:, list(new_runs)])
    return (f * f * _row_mean(hb) ** 2 + _row_mean(hn) ** 2) / 3.0


def _share_noise(cmp: Comparison, m: Metric, base_runs: Sequence[int],
                 new_runs: Sequence[int], spread: Spread, beyond: np.ndarray,
                 alpha: float) -> MetricNoise:
    """No sample counts: compare shares of each run's total with their run-to-run spread."""
    v = cmp.values[m.name]
    xb = v[:, list(base_runs)] / _run_totals(cmp, m, base_runs)
    xn = v[:, list(new_runs)] / _run_totals(cmp, m, new_runs)
    mb, mn_ = _row_mean(xb), _row_mean(xn)
    var_b = (np.nanvar(xb, axis=1, ddof=1) / xb.shape[1]) if xb.shape[1] > 1 else 0.0
    var_n = (np.nanvar(xn, axis=1, ddof=1) / xn.shape[1]) if xn.shape[1] > 1 else 0.0
    var = var_b + var_n + np.zeros(len(v))
    diff = mn_ - mb
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(diff) / np.sqrt(var)
    z = np.where((var == 0) & (diff == 0), 0.0, z)
    z = np.where((var == 0) & (diff != 0), np.inf, z)
    pval = _erfc(np.nan_to_num(z, nan=0.0) / math.sqrt(2.0))
    sig = benjamini_hochberg(pval, alpha) & beyond
    method = "z test on shares of run total (" + (
        "run-to-run spread)" if max(xb.shape[1], xn.shape[1]) > 1 else
        "no sample counts and one run per side: any change beyond rounding)")
    return MetricNoise(method, spread, p=pval, significant=sig)


class EstimateStopped(Exception):
    """An estimate's ``stop()`` said its result is no longer wanted."""


def compute_noise(cmp: Comparison, base_runs: Sequence[int], new_runs: Sequence[int],
                  alpha: float = DEFAULT_ALPHA, metrics: Sequence[str] | None = None,
                  stop: Callable[[], bool] | None = None,
                  done: Callable[[str, MetricNoise], None] | None = None) -> Noise:
    """Each metric's (``metrics``: those only, estimated in that order) spread and
    significance from ``base_runs`` to ``new_runs``; the result lists them in the
    comparison's order.  ``stop()`` true before a metric: :class:`EstimateStopped` (a
    background estimate of runs the window no longer shows).  ``done(name, estimate)``:
    called as each metric is in, so a reader waiting for some of them need not wait for
    all (:meth:`viewer.noise_job.NoiseJob.noise_of`)."""
    noise = Noise(len(base_runs), len(new_runs), alpha)
    memo: dict = {}
    todo = cmp.metrics if metrics is None else \
        [cmp.metric_by_name[n] for n in dict.fromkeys(metrics) if n in cmp.metric_by_name]
    for m in todo:
        if stop is not None and stop():
            raise EstimateStopped(m.name)
        if all(cmp.runs[r].has_metric(m.name) for r in [*base_runs, *new_runs]):
            noise.metrics[m.name] = metric_noise(cmp, m.name, base_runs, new_runs, alpha, memo)
            if done is not None:
                done(m.name, noise.metrics[m.name])
    noise.metrics = {m.name: noise.metrics[m.name] for m in cmp.metrics if m.name in noise.metrics}
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
    rounding = {name: np.stack([h[:, bi].max(axis=1), h[:, ni].max(axis=1)], axis=1)
                for name, h in full.rounding.items()}
    out = Comparison(
        runs=[base[0], new[0]], baseline=0, mode=full.mode, parent=full.parent, rounding=rounding,
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
                     metrics: Sequence[str] | None = None,
                     stop: Callable[[], bool] | None = None,
                     done: Callable[[str, MetricNoise], None] | None = None) -> Noise:
    """Sampling-error estimate for a plain 1-vs-1 comparison (binomial on sample counts)."""
    return compute_noise(cmp, [cmp.baseline], [cmp.current], alpha, metrics, stop, done)


def _runs_one_by_one_note(cmp: Comparison) -> list[str]:
    """What 3+ single runs' statuses rest on, when some judged metric is sampled: each
    run's own pair's sampling error (:func:`judge_every_run`), or precision alone where
    a run has no estimate yet (:meth:`Comparison.judged_by_precision_alone`).

    Why: three ``-p`` runs of one hs-ad binary (tests/data/hs-ad/noise-v1) read "39
    changed" with nothing to say that no change was weighed against noise; a reader took
    the run-to-run spread (−17.8 % and −31.5 % total time) for 39 real changes.  Each
    pair alone reads none changed; and even so, one run per build says nothing of the
    run-to-run spread, which only repeated runs measure."""
    if cmp.n_runs <= 2 or cmp.groups is not None:
        return []
    sampled = cmp.status_metrics(sampled_only=True)
    if not sampled:
        return []
    groups = "give repeated runs of each build as groups (--base A1 A2 --new B1 B2)"
    alone = cmp.judged_by_precision_alone()
    if alone:
        titles = ", ".join(cmp.metric_by_name[m].title for m in alone)
        return [f"{cmp.n_runs} runs, each compared with the baseline on its own: the "
                f"statuses (changed / same) of their {titles} changes rest on the "
                "precision of the values only, not on sampling or run-to-run noise; "
                f"{groups} to judge them"]
    return [f"{cmp.n_runs} runs, each compared with the baseline on its own: each run's "
            "statuses (changed / same) are judged by the sampling error of that pair; "
            f"run-to-run noise is unknown with one run per build: {groups} to judge it"]


def run_level_notes(cmp: Comparison) -> list[str]:
    """What the statuses rest on at the level of the runs: for 3+ single runs, each
    pair's own estimate (:func:`_runs_one_by_one_note`); and the run-level factor rows
    were judged after (:func:`_speed_notes`)."""
    return _runs_one_by_one_note(cmp) + _speed_notes(cmp)


def _speed_notes(cmp: Comparison) -> list[str]:
    """The run-level factor rows were judged after (:func:`speed_factor`), said once per
    run compared (3+ single runs: each run's, named), with the run's total beside it: the
    median row's change is not the run's (c-vm: the median row takes 4.9 % more time,
    the run 52.3 % more), and a reader who took one for the other would misread every
    status."""
    if cmp.n_runs <= 2 or cmp.groups is not None:
        note = _speed_note(cmp, cmp.noise)
        return [note] if note else []
    from .run_labels import labels_of

    labels = labels_of(cmp)
    out = []
    for run in range(cmp.n_runs):
        note = _speed_note(cmp, cmp.noise_of_run(run)) if run != cmp.baseline else None
        if note:
            out.append(f"run [{run}] {labels[run]}: {note}")
    return out


def _speed_note(cmp: Comparison, noise: Noise | None) -> str | None:
    """:func:`_speed_notes` of one estimate (None: no run-level factor to say)."""
    if noise is None:
        return None
    for name, mn in noise.metrics.items():
        f = mn.speed_factor
        if f is None or abs(f - 1.0) < 0.005:
            continue
        one = noise.n_base == 1 and noise.n_new == 1
        m = cmp.metric_by_name.get(name)
        few = mn.factor_rows is not None and mn.factor_rows < FEW_FACTOR_ROWS
        x = f"x{f:.3f}" + (f", from only {mn.factor_rows} rows with {MIN_INFORMATIVE}+ "
                          "samples in both runs" if few else "")
        total = mn.total_ratio
        whole = f"; the rows' total: {_more_or_less(total)}" if total is not None else ""
        judged = ("rows are judged after taking the median row's change out, so a row that "
                  "only moved with the others is not a change")
        if m is not None and (m.count_of or any(o.count_of == name for o in cmp.metrics)):
            # sampled allocations (bytes counted by their events): not a speed
            return (f"run-level change: the median row has {_more_or_less(f)} {m.title} "
                    f"({x}{whole}); {judged}")
        return (
            f"run-level speed: the median row takes {_more_or_less(f)} time ({x}{whole}); "
            + judged
            + ("; with one run per side this speed change cannot be told from run-to-run "
               "noise, which moves identical runs by tens of percent" if one else "")
        )
    return None


def _more_or_less(ratio: float) -> str:
    return f"{abs(ratio - 1) * 100:.1f} % {'more' if ratio > 1 else 'less'}"


def _ratio_of_sums(new: np.ndarray, base: np.ndarray) -> float | None:
    """``sum(new) / sum(base)`` of per-row sample counts (None when the base has none):
    the rows' own total change, said beside the median row's."""
    b, n = float(np.nansum(base)), float(np.nansum(new))
    return n / b if b > 0 and np.isfinite(n) else None


def ensure_noise(cmp: Comparison, metrics: Sequence[str | None],
                 alpha: float = DEFAULT_ALPHA) -> Noise | None:
    """``cmp.noise`` with every metric of ``metrics`` estimated: groups carry theirs (their
    spread is known only from the group runs), single runs get the sampling error of
    the missing ones, of the current run against the baseline (of 3+ runs too: the
    other runs' are :func:`ensure_run_noise`).  Returns ``cmp.noise`` (None when
    nothing applies)."""
    return ensure_run_noise(cmp, cmp.current, metrics, alpha)


def ensure_run_noise(cmp: Comparison, run: int, metrics: Sequence[str | None],
                     alpha: float = DEFAULT_ALPHA) -> Noise | None:
    """:meth:`Comparison.noise_of_run` of single runs with every metric of ``metrics``
    estimated: the sampling error of ``run`` against the baseline (two runs compared
    alone, whichever others the comparison holds).  Groups carry theirs."""
    if cmp.n_runs < 2 or cmp.groups is not None or run == cmp.baseline:
        return cmp.noise_of_run(run)
    have = nz.metrics if (nz := cmp.noise_of_run(run)) is not None else {}
    todo = [m for m in dict.fromkeys(metrics) if m and m in cmp.values and m not in have]
    if todo:
        cmp.add_run_noise(run, compute_noise(cmp, [cmp.baseline], [run], alpha, todo))
    return cmp.noise_of_run(run)


def judge_every_run(cmp: Comparison, alpha: float = DEFAULT_ALPHA) -> None:
    """Estimate, for each run of 3+ single runs other than the current one (whose estimate
    :func:`ensure_noise` makes), the sampling error of its sampled status metrics
    against the baseline, so that every run's status (``changed/same`` in ``diff``,
    ``statuses`` in its JSON) is judged as that pair compared alone would be."""
    if cmp.n_runs <= 2 or cmp.groups is not None:
        return
    metrics = cmp.status_metrics(sampled_only=True)
    for run in range(cmp.n_runs):
        if run not in (cmp.baseline, cmp.current):
            ensure_run_noise(cmp, run, metrics, alpha)
