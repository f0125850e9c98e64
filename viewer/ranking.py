"""Culprit first: rank a comparison's rows by the size of their own change (Qt-free).

Why this ranking and not "largest delta of the default column":

* **Own (self) cost, not inherited.**  An inherited or inclusive change explains a change
  (every caller of the culprit grows with it); it does not rank it.  Sorting by
  inherited %time put the callers of a new 14 %-allocation cost centre above it.
* **Measured against the baseline run's total.**  When one function's cost grows, every
  other function's share of the run falls.  A share-of-run delta paints that dilution as
  improvement; a delta over the baseline's total does not move for code whose own cost is
  unchanged.
* **Over all the format's main metrics.**  A GHC regression may be in time or in
  allocation; a row's score is its largest change that exceeds the precision of its
  values (rounded percentages) and, for sampled metrics, the noise.

Every list of changes (the CLI table, the app's opening path, watch summaries,
``--fail-if`` listings, the export's default metric) uses :func:`rank_changes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from profdiff.parsers.model import Kind

from .compare import Comparison

if TYPE_CHECKING:
    from .noise import Noise

GHC_MAIN = ("time_s", "alloc_bytes")
PERF_MAIN = ("self_period", "self_samples")


@dataclass(frozen=True)
class Ranking:
    """Rows in culprit-first order with the score that put them there.

    ``score[row]`` is the row's largest own change over the ranked metrics, as a fraction
    of the baseline run's total of that metric (signed: positive = worse); 0 for rows
    whose own cost did not change beyond precision and noise.  ``code[row]`` is 1 + the
    index in ``metrics`` of the metric that gave the score (0 when 0):
    :meth:`metric_of` names it.  ``tie[row]`` is the same change before precision and
    noise: it orders rows of equal score.
    """

    score: np.ndarray
    code: np.ndarray
    metrics: tuple[str, ...]
    changed: tuple[str, ...] = ()
    tie: np.ndarray | None = None

    def metric_of(self, row: int) -> str:
        """The metric that gave ``row`` its score ("" when it has none).

        Why not an array of names: its 10^6 Python strings took 4.5 ms of every ranking
        (the window's first paint waits for one), and the readers look up a few rows."""
        c = int(self.code[row])
        return self.metrics[c - 1] if c else ""

    @cached_property
    def metric(self) -> np.ndarray:
        """:meth:`metric_of` of every row, as an object array (built on first use)."""
        return np.asarray(("", *self.metrics), dtype=object)[self.code]

    @cached_property
    def order(self) -> np.ndarray:
        """Rows culprit first (sorted on first use: the app's opening path needs only
        the scores, and sorting 10^6 rows costs more than scoring them)."""
        tie = np.zeros(len(self.score)) if self.tie is None else self.tie
        return culprit_order(self.score, tie)

    @cached_property
    def path_key(self) -> np.ndarray | None:
        """``|score|`` (None when no row changed): the key the app's opening path
        follows, to the row :meth:`top` ranks first, so the diff tree opens on the change
        ``diff`` and the Summary list first (an optimisation opens on what got faster).
        One array per ranking, so a path walk cached for it (by identity) is found again
        by every view and by the worker that ranked."""
        key = np.abs(self.score)
        return key if key.any() else None

    def top(self) -> int:
        """``order[0]`` (-1 when there are no rows), found without sorting."""
        if "order" in self.__dict__ or not len(self.score):
            return int(self.order[0]) if len(self.order) else -1
        size = np.abs(self.score)
        cand = np.flatnonzero(size == size.max())
        regressions = cand[self.score[cand] > 0]
        if regressions.size:  # a regression before an improvement of the same size
            cand = regressions
        if self.tie is None:
            return int(cand[0])
        return int(cand[np.argmax(self.tie[cand])])  # first of the largest: stable order

    def changed_metrics(self) -> list[str]:
        """The ranked metrics that some row really changed in (beyond precision and
        noise), the one behind the top score first."""
        top = self.metric_of(self.top()) if len(self.score) else ""
        return sorted(self.changed, key=lambda m: (m != top, self.metrics.index(m)))


def culprit_order(score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """The real changes first, largest ``|score|`` first (a regression before an
    improvement of the same size, then the larger ``tie``), then the rows that did not
    change beyond precision and noise (largest ``tie`` first; those with ``tie`` 0 keep
    row order): :func:`plain_culprit_order`, computed by parts because a 10^6-row
    lexsort of floats takes 0.4 s.  Rows of nonzero score are few and sorted on their
    own; the many rows of score 0 need only their ``tie`` sorted.

    Why by size in both directions: a regression hunt finds its regression first either
    way (it is the change), and an optimisation shows what got faster.  Regressions
    first put the hcy2c speedup (addULLs, 118 s of 187 s, removed) at row 24 behind 23
    small regressions, and improvements last put a real -13 % of the run (the Julia CPU
    pair's ``+``) below 500 rows that did not change."""
    moved_rows = np.flatnonzero(score != 0)
    zero = np.flatnonzero(score == 0)
    moved = zero[tie[zero] > 0]
    still = zero[tie[zero] == 0]
    s = score[moved_rows]
    parts = [moved_rows[np.lexsort((-tie[moved_rows], s < 0, -np.abs(s)))],
             moved[np.argsort(-tie[moved], kind="stable")], still]
    if sum(len(p) for p in parts) != len(score):  # NaN score or tie: the plain sort
        return plain_culprit_order(score, tie)
    return np.concatenate(parts).astype(np.intp, copy=False)


def plain_culprit_order(score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """The order of :func:`culprit_order` as one lexsort: changed rows first, by the size
    of the score (regressions first on equal size), then by ``tie``."""
    return np.lexsort((-tie, score < 0, -np.abs(score), score == 0))


def culprit_key(cmp: Comparison, by_status: bool = False) -> np.ndarray:
    """A sort key (descending = first) for the rows of ``cmp``: each row's place in
    :func:`rank_changes`' order, judged by ``cmp.noise`` as far as it is estimated.  The
    By cost centre table opens in it (no column sorted), so its first rows are the ones
    the Summary and ``profdiff diff`` list first.

    ``by_status``: the changed, added and removed rows first, then the moved ones, then
    the rest, each group in that order: what its status column sorts by, as a user who
    sorts by status expects (a caller that changed only through its callees, with no own
    change, sorts among the changes)."""
    n = cmp.n_rows
    order = rank_changes(cmp).order
    key = np.empty(n)
    key[order] = np.arange(n, 0, -1, dtype=np.float64)
    if by_status:
        from .compare import Status

        st = cmp.status
        key += np.where(st == Status.SAME, 0.0, np.where(st == Status.MOVED, 1.0, 2.0)) \
            * float(n + 1)
    return key


def main_metrics(cmp: Comparison) -> tuple[str, ...]:
    """The self metrics that rank a comparison of this format.

    GHC: time and allocation (absolute, so a change is measured against the baseline's
    total).  perf: period (or samples).  Otherwise the self counterpart of the baseline's
    default metric.
    """
    have = {m.name for m in cmp.metrics if all(p.has_metric(m.name) for p in cmp.runs)}
    for family in (GHC_MAIN, PERF_MAIN):
        picked = tuple(m for m in family if m in have)
        if picked:
            return picked[:1] if family is PERF_MAIN else picked
    base = cmp.runs[cmp.baseline]
    name = base.default_metric or (base.metrics[0].name if base.metrics else "")
    m = cmp.metric_by_name.get(name)
    if m is None:
        return ()
    if m.kind is Kind.INCLUSIVE and m.self_of in have:
        return (m.self_of,)
    return (m.name,) if m.name in have else ()


def noise_read_by_ranking(cmp: Comparison) -> tuple[str, ...]:
    """The main metrics whose noise estimate :func:`rank_changes` reads: the sampled ones
    (:func:`_real_change`).  A counted metric's change (GHC's allocation) is judged by its
    precision alone, so a ranking made before its estimate is the same ranking.

    Why: the live window waited for the estimate of every main metric before it ranked
    and opened the path to the culprit; on the 100 MB hs-ad pair the allocation's (14 ms
    alone, more beside the window's building) came after the time's and was never read."""
    return tuple(m for m in main_metrics(cmp) if cmp.metric_by_name[m].sampled)


def baseline_total(cmp: Comparison, metric: str) -> float:
    """The baseline run's total of a self metric: the total its report declares for it
    (``totals["total_<metric>"]``), else the sum over its tree.

    Why the declared total first: it is what the report's own percentages are shares of.
    GHC's text rows, each rounded to 0.1 %, sum to 96.9 % of hcy2c's 187.08 s, so a row's
    change "of run" read 65.12 % where GHC prints 63.2 %; a ``-pj`` tree also holds the
    GC's ticks, which its program total (the text report's) leaves out."""
    p = cmp.runs[cmp.baseline]
    declared = p.totals.get(f"total_{metric}")
    if declared is not None and np.isfinite(declared) and declared > 0:
        return float(declared)
    col = p.values.get(metric)
    return float(np.nansum(col)) if col is not None else float("nan")


def rank_changes(cmp: Comparison, metrics: Sequence[str] | None = None,
                 run: int | None = None, noise: Noise | None = None) -> Ranking:
    """Rows ordered by their own change: the largest real change first, in either
    direction (:func:`culprit_order`).

    Rows whose own cost did not change beyond precision and noise come last, ordered by
    the size of their raw (unjudged) change.  ``noise``: the estimate to judge
    by instead of ``run``'s own (:meth:`Comparison.noise_of_run`; a worker ranks with the
    one it just computed, before the GUI thread attaches it to the comparison).
    """
    names = tuple(metrics) if metrics else main_metrics(cmp)
    noise = cmp.noise_of_run(cmp.current if run is None else run) if noise is None else noise
    n = cmp.n_rows
    best = np.zeros(n)
    best_mag = np.zeros(n)  # |best|, kept beside it (one pass less per metric)
    raw = np.zeros(n)  # the same score before precision and noise: orders the ties
    code = np.zeros(n, dtype=np.int8)  # 1 + index into ``names`` of the metric of ``best``
    system = _system_rows(cmp)  # the RTS's GC / SYSTEM / profiler overhead: a symptom
    program = ~system
    changed: list[str] = []
    for i, name in enumerate(names):
        if name not in cmp.values:
            continue
        total = baseline_total(cmp, name)
        if not np.isfinite(total) or total == 0:
            continue
        # the delta is a new array: changed in place (the window's first paint waits for
        # this ranking: one 10^6-row pass less per step)
        d = np.nan_to_num(cmp.delta(name, run), copy=False)
        d /= abs(total)
        mag = np.abs(d)
        np.maximum(raw, mag, out=raw)
        real = _real_change(cmp, name, run, noise)
        if np.logical_and(real, program).any():
            changed.append(name)
        mag *= real  # no real change, no score
        if cmp.metric_by_name[name].better == "higher":
            np.negative(d, out=d)  # less of a "higher is better" metric is the regression
        bigger = mag > best_mag  # real changes only: elsewhere mag is 0
        best[bigger] = d[bigger]
        np.maximum(best_mag, mag, out=best_mag)
        code[bigger] = i + 1
    unread = system | cmp.unread(run)  # absent from a cut file: no change to rank
    best[unread] = 0.0
    code[unread] = 0
    raw[unread] = 0.0
    return Ranking(score=best, code=code, metrics=names, changed=tuple(changed), tie=raw)


def _real_change(cmp: Comparison, metric: str, run: int | None,
                 noise: Noise | None) -> np.ndarray:
    """Changed beyond rounding, and beyond noise when the metric is sampled and judged
    (``noise``: the estimate of ``run`` against the baseline)."""
    ok = cmp.changed_mask(metric, run)
    m = cmp.metric_by_name[metric]
    if m.sampled and noise is not None and metric in noise.metrics:
        ok &= noise.metrics[metric].significant
    return ok


def _system_rows(cmp: Comparison) -> np.ndarray:
    """Rows of the runtime's own cost centres (frame kind ``system``: GHC's GC, SYSTEM,
    OVERHEAD_of...).  Their cost follows the program's (more allocation, more GC), so they
    explain a change but never rank as its culprit."""
    out = np.zeros(cmp.n_rows, dtype=bool)
    for r, p in enumerate(cmp.runs):
        system_frame = np.asarray(p.frames.kind == "system", dtype=bool)
        if not system_frame.any():  # compare the few frames' kinds, not one per row
            continue
        nodes = cmp.node[:, r]
        has = nodes >= 0
        out[has] |= system_frame[p.frame[nodes[has]]]
    return out


def system_rows(cmp: Comparison) -> np.ndarray:
    """Rows of the runtime's own cost centres (GC, SYSTEM, profiler overhead): they
    explain a change but never rank as its culprit (the Summary page skips them too)."""
    return _system_rows(cmp)
