"""How a comparison is looked at (Qt-free): metrics, % of run or absolute, filters.

:class:`ViewState` is what the toolbar and the View menu of the app set, and what the
command line's display options (:func:`viewer.options.view_from_args`) set for ``diff``:
the metric columns, percent of run or absolute units, the filter text, "changed only",
"significant only" and the |Δ| threshold.  The row rules (:meth:`ViewState.keep_mask`)
live here, not in a widget, so the diff tree, the flat table, the bottom-up tab and the
terminal table hide the same rows.

The metric helpers (:func:`default_metric`, :func:`inclusive_of`, :func:`metric_pairs`,
:func:`change_scale_factor`) read the pairing carried by :class:`parsers.model.Metric`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from profdiff.parsers.model import Kind, Metric, Unit

from .compare import Comparison, Status

Factor = Callable[[Comparison, str], float]


# ------------------------------------------------------------------------------------------
# metric pairing
# ------------------------------------------------------------------------------------------
def default_metric(cmp: Comparison) -> str | None:
    """The format's main metric (e.g. inherited %time), or the first one."""
    if not cmp.runs:
        return None
    m = cmp.runs[cmp.baseline].default_metric
    if m in cmp.values:
        return m
    return next(iter(cmp.values), None)


def inclusive_of(cmp: Comparison, metric: str | None) -> str | None:
    """The inclusive metric summing ``metric`` (or ``metric`` when none / it is inclusive)."""
    if metric is None:
        return None
    for m in cmp.metrics:
        if m.kind is Kind.INCLUSIVE and m.self_of == metric:
            return m.name
    return metric


def metric_pairs(metrics: Sequence[Metric]) -> dict[str, str]:
    """Percent metric <-> its absolute counterpart, both directions, from
    ``Metric.percent_of`` (``time_pct`` -> ``time_s``, ``self_pct`` -> ``self_samples``)."""
    names = {m.name for m in metrics}
    out: dict[str, str] = {}
    for m in metrics:
        a = m.percent_of
        if a and a in names and m.name not in out and a not in out:
            out[m.name] = a
            out[a] = m.name
    return out


def change_scale_factor(cmp: Comparison, metric: str) -> float:
    """Multiplier turning a Δ of ``metric`` into percentage points of the baseline run.

    Colours compare changes on one scale whatever the unit: percent metrics already are
    percentage points; absolute ones are divided by the run's total (the sum of a self
    metric, the largest value of an inclusive one).
    """
    met = cmp.metric_by_name[metric]
    if met.unit is Unit.PERCENT:
        return 1.0
    for r in (cmp.baseline, cmp.current):
        col = cmp.present_values(metric, r)  # absent rows would add zeros
        if not col.size:
            continue
        den = _largest_magnitude(col) if met.kind is Kind.INCLUSIVE else _summed_magnitude(col)
        if np.isfinite(den) and den > 0:
            return 100.0 / float(den)
    return 1.0


def _plain(col: np.ndarray) -> bool:
    """No NaN and nothing negative: then ``|col|`` is ``col`` and ``nansum`` its sum."""
    return bool(np.fmin.reduce(col) >= 0) and not np.isnan(col).any()  # fmin: no warning


def _largest_magnitude(col: np.ndarray) -> float:
    """``nanmax(|col|)``; of plain costs read in place (no 10^6-value copies on the first
    paint)."""
    return float(col.max()) if _plain(col) else float(np.nanmax(np.abs(col)))


def _summed_magnitude(col: np.ndarray) -> float:
    """``nansum(|col|)``, the same bits: of plain costs ``col.sum()`` in place."""
    return float(col.sum()) if _plain(col) else float(np.nansum(np.abs(col)))


def colour_source(cmp: Comparison, metric: str, by_share: bool = False) -> str:
    """The metric whose change colours ``metric``'s cells (see :func:`colour_change`)."""
    met = cmp.metric_by_name[metric]
    if not by_share and met.unit is Unit.PERCENT and met.percent_of is not None \
            and met.percent_of in cmp.values:
        return met.percent_of
    return metric


def colour_change(cmp: Comparison, metric: str, run: int | None = None,
                  by_share: bool = False, rows: slice | np.ndarray = slice(None),
                  factor: float | None = None) -> np.ndarray:
    """The oriented change (positive = worse) every view colours, in percentage points of
    the **baseline run's total**.

    Why not the share of each run: when one function's cost grows, every other function's
    share of the run falls, and share colouring paints code whose bytes are identical dark
    green.  So a percent metric is coloured by the change of its absolute counterpart
    (``alloc_pct`` by ``alloc_bytes``) over the baseline's total, and a row whose own cost
    did not change beyond the precision of its values is neutral.  ``by_share`` keeps the
    old share-of-run colouring as an explicit choice.

    ``rows``: a block of rows only, or row ids, with ``factor`` =
    ``change_scale_factor(cmp, src)`` computed once by the caller (a view colours the few
    hundred cells it paints without computing 10^6-row columns first).
    """
    src = colour_source(cmp, metric, by_share)
    if factor is None:
        factor = change_scale_factor(cmp, src)
    d = np.nan_to_num(cmp.delta(src, run, rows) * factor)
    d = np.where(cmp.changed_mask(src, run, rows), d, 0.0)
    better = cmp.metric_by_name[src].better
    if better == "higher":
        d = -d
    elif better == "none":
        d = np.zeros_like(d)
    return d


def available_metrics(cmp: Comparison) -> list[str]:
    """Metrics worth a column: every run's (a delta needs both sides), all for one run."""
    if cmp.n_runs == 1:
        return [m.name for m in cmp.metrics]
    from .compare import comparable_metrics

    return [m.name for m in comparable_metrics(cmp)] or [m.name for m in cmp.metrics]


# ------------------------------------------------------------------------------------------
# the view state
# ------------------------------------------------------------------------------------------
@dataclass
class ViewState:
    """What is shown; see the module docstring.  ``metrics`` empty means "the format's
    default columns" until :meth:`choose_metrics` fills it for a comparison."""

    metrics: list[str] = field(default_factory=list)
    percent: bool = True
    filter_text: str = ""
    regex: bool = False
    changed_only: bool = False
    significant_only: bool = False
    threshold: float = 0.0
    fade_noise: bool = True
    show_sig: bool = False
    colour_by_share: bool = False  # colour Δ by share of each run (dilution shows) instead

    # ----- metrics ------------------------------------------------------------------
    def convert_units(self, cmp: Comparison | None, metrics: Sequence[str]) -> list[str]:
        """Each metric swapped for its percent/absolute partner as ``percent`` wants."""
        if cmp is None:
            return list(metrics)
        pairs = metric_pairs(cmp.metrics)
        out: list[str] = []
        for m in metrics:
            met = cmp.metric_by_name.get(m)
            if met is not None and (met.unit is Unit.PERCENT) != self.percent \
                    and pairs.get(m) in cmp.values:
                m = pairs[m]
            if m not in out:
                out.append(m)
        return out

    def choose_metrics(self, cmp: Comparison, saved: Sequence[str] | None = None,
                       limit: int = 4) -> list[str]:
        """Columns for ``cmp``: the current choice if it fits, else ``saved`` (the
        settings), else the format's display metrics; always in the unit mode."""
        avail = available_metrics(cmp)
        chosen = [m for m in (saved or []) if m in avail]
        if not chosen or not self.metrics or not set(self.metrics) <= set(avail):
            if not chosen:
                base = cmp.runs[cmp.baseline]
                cand = list(base.display_metrics) or [m.name for m in base.metrics]
                cand = [m for m in cand
                        if m in avail and cmp.metric_by_name[m].kind is not Kind.NODE]
                chosen = self.convert_units(cmp, cand)[:limit] or avail[:limit]
            self.metrics = chosen
        self.metrics = self.convert_units(cmp, self.metrics)
        return self.metrics

    def main_metric(self, cmp: Comparison | None) -> str | None:
        """The format's main metric in the unit mode (the 'sig.' column's metric)."""
        if cmp is None:
            return None
        m = default_metric(cmp)
        if m is None:
            return None
        conv = self.convert_units(cmp, [m])
        return conv[0] if conv else m

    sig_metric = main_metric

    def noise_metrics(self, cmp: Comparison) -> list[str]:
        """The metrics whose noise estimate the views of ``cmp`` read: the shown sampled
        ones (a change within noise fades), the main metric (the 'sig.' column) and the
        sampled metrics the statuses are judged by (icons, counts:
        :meth:`Comparison.status_metrics`); deterministic ones are exact.  One list, so
        the loader can start the estimate the window will want before the window has
        the comparison (:class:`viewer.noise_job.NoiseJob`)."""
        shown = [m for m in self.metrics if m in cmp.values and cmp.metric_by_name[m].sampled]
        want = [*shown, self.sig_metric(cmp), *cmp.status_metrics(sampled_only=True)]
        return [m for m in dict.fromkeys(want) if m and m in cmp.values]

    def main_self_metric(self, cmp: Comparison | None) -> str | None:
        """The node's own cost of the main metric (flat ranking, Δ paths), in unit mode."""
        if cmp is None:
            return None
        m = default_metric(cmp)
        if m is None:
            return None
        met = cmp.metric_by_name[m]
        if met.kind is Kind.INCLUSIVE and met.self_of is not None and met.self_of in cmp.values:
            m = met.self_of
        conv = self.convert_units(cmp, [m])
        return conv[0] if conv else m

    # ----- rows ---------------------------------------------------------------------
    def filter_error(self) -> str | None:
        """Why the filter text is not a valid regular expression (None: fine)."""
        if self.regex and self.filter_text:
            try:
                re.compile(self.filter_text)
            except re.error as e:
                return f"bad regular expression: {e}"
        return None

    def text_mask(self, cmp: Comparison) -> np.ndarray | None:
        """Rows whose name or module match the filter text (None: no filter).  The tree
        views keep the ancestors of matches too (:mod:`viewer.qt.layout`)."""
        text = self.filter_text
        if not text or self.filter_error():
            return None
        if self.regex:
            rx = re.compile(text, re.IGNORECASE)

            def hit(s: str) -> bool:
                return rx.search(s) is not None
        else:
            low = text.lower()

            def hit(s: str) -> bool:
                return low in s.lower()
        labels = np.array([f"{m}.{n}" if m else str(n) for n, m in
                           zip(cmp.name.tolist(), cmp.module.tolist(), strict=True)],
                          dtype=object)
        return np.fromiter((hit(s) for s in labels), dtype=bool, count=len(labels))

    def keep_mask(self, cmp: Comparison, metrics: Sequence[str] | None = None,
                  sig_metric: str | None = None, factor: Factor = change_scale_factor,
                  noise: Callable[[Comparison, list[str]], object] | None = None,
                  ) -> np.ndarray | None:
        """Rows kept by "changed only", "significant only" and the |Δ| threshold (None:
        all).  ``metrics`` (default: the shown ones), ``sig_metric`` (default: the main
        metric) and ``factor`` (Δ -> pp of run) let a view over another comparison (the
        bottom-up tab) apply the same rules to its own rows; ``noise(cmp, [metric])``
        computes a missing estimate (default :func:`viewer.noise.ensure_noise`)."""
        sig_only = self.significant_only and cmp.n_runs >= 2  # the current run's change
        if cmp.n_runs < 2 or (not self.changed_only and self.threshold <= 0 and not sig_only):
            return None
        estimate = noise if noise is not None else _ensure_noise
        keep = np.ones(cmp.n_rows, dtype=bool)
        if self.changed_only:  # a change within noise is no change: judged first
            if cmp.n_runs >= 2:
                estimate(cmp, cmp.status_metrics(sampled_only=True))
            keep &= cmp.status != Status.SAME
        if sig_only:
            m = self.main_metric(cmp) if sig_metric is None else sig_metric
            if m is not None and m in cmp.values:
                estimate(cmp, [m])
                if cmp.noise is not None and m in cmp.noise.metrics:
                    mn = cmp.noise.metrics[m]  # not judged: nothing is known significant
                    keep &= mn.significant if mn.judged else False
        if self.threshold > 0:
            big = np.zeros(cmp.n_rows, dtype=bool)
            for m in (self.metrics if metrics is None else metrics):
                if m in cmp.values:
                    d = np.abs(cmp.delta(m)) * factor(cmp, m)
                    big |= np.nan_to_num(d) >= self.threshold
            big |= (cmp.status == Status.ADDED) | (cmp.status == Status.REMOVED)
            keep &= big
        return keep


def _ensure_noise(cmp: Comparison, metrics: list[str]) -> object:
    """:func:`viewer.noise.ensure_noise` (imported when a view first needs an estimate)."""
    from .noise import ensure_noise

    return ensure_noise(cmp, metrics)
