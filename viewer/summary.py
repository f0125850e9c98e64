"""The Summary page: what a reader needs before trusting any tree (Qt-free).

One page, like hotspot's Summary, answering in order:

* **Run totals** with a Δ for every run against the baseline (a sampled total, such as
  time, is flagged: one timing is noisy).
* **The top changes per main metric** (the metrics the culprit ranking uses), each with
  its verdict, decided by the comparison itself and never by this module:
  ``real`` (beyond the precision of the printed values and, for sampled metrics, beyond
  noise), ``within noise`` (a sampled change the noise estimate cannot tell from zero)
  or ``within rounding`` (smaller than the rounding of the printed numbers allows), or
  ``not judged`` (a timed metric, heap residency, with one run per side: run-to-run
  noise moves it by more than one run can show; :attr:`viewer.compare.Status.MOVED`).
  Real changes come first; when there are fewer than ``top`` of them the largest
  unsupported ones fill the list, labelled as such, so "nothing changed" is visible.
* **Unmatched renames** offered as one rule each (a moved module is one
  :class:`~viewer.rules.ModuleRename`, a renamed function one
  :class:`~viewer.rules.KeyMap`), from :mod:`viewer.suggest`'s scoring.
* **Warnings**: incomplete runs, different formats / programs / RTS options / events
  (:func:`viewer.compare.incomparable_warnings`), rounded precision.

Every entry carries the ids the views need to show it: the flat row, the tree rows of
its call sites (largest change first) and its match key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from profdiff.parsers.model import Unit

from .compare import Comparison, KeyRule, Status, incomparable_warnings
from .defaults import DEFAULT_MATCH_THRESHOLD
from .ranking import baseline_total, main_metrics, system_rows
from .reading_notes import reader_warnings, reading_notes
from .rules import ModuleRename
from .session import Session
from .suggest import Suggestion, accept, moved_modules, suggest_matches
from .units import digits_rounding

REAL, NOISE, ROUNDING = "real", "within noise", "within rounding"
NOT_JUDGED = "not judged"
VERDICTS = (REAL, NOISE, ROUNDING, NOT_JUDGED)

# Run totals a reader looks for first, in this order (any format); then the rest.
HEADLINE_TOTALS = ("total_time_s", "total_ticks", "total_alloc_bytes", "total_samples",
                   "total_period", "bytes_allocated", "max_residency_bytes",
                   "total_elapsed_s", "mutator_cpu_s", "gc_cpu_s", "productivity_pct",
                   "peak_bytes", "alloc_total", "bytes")
MAX_TOTALS = 8
MAX_SUGGEST_PAIRS = 1_000  # removed x added rows scored pairwise (0.2-1 ms per pair)


@dataclass(frozen=True)
class RunInfo:
    """One run as the page names it."""

    index: int
    label: str
    role: str  # "baseline", "current", "run 2", "run"
    path: str
    format: str
    incomplete: bool
    incomplete_reason: str


@dataclass(frozen=True)
class TotalRow:
    """One run total: its value in every run, and each run's Δ against the baseline
    (None for the baseline itself and where a run lacks the total)."""

    key: str
    title: str
    unit: Unit
    values: tuple[float | None, ...]
    deltas: tuple[float | None, ...]
    rels: tuple[float | None, ...]
    sampled: bool
    better: str
    timed: bool = False  # measured once, with no sampling model (Metric.timed)


@dataclass(frozen=True)
class Change:
    """One row's change of one metric (current run against the baseline)."""

    metric: str
    key: str  # match key (module \\x1f name)
    label: str  # module.name
    flat_row: int
    tree_rows: tuple[int, ...]  # call sites in the tree comparison, largest |Δ| first
    base: float
    new: float
    delta: float
    rel: float
    share: float  # delta / baseline run's total of the metric
    verdict: str  # one of VERDICTS
    worse: bool | None  # None: the metric has no better direction
    status: str = "changed"  # "added" / "removed": the row exists in one run only


@dataclass(frozen=True)
class MetricChanges:
    metric: str
    title: str
    unit: Unit
    precision: str  # the baseline run's precision of the metric: exact, rounded, sampled
    n_real: int  # rows whose change is real (beyond precision and noise)
    changes: tuple[Change, ...]
    # ± half-widths that set the digits of base, new and Δ (units.digits_rounding), so the
    # Summary prints a value as the tables, the CLI and the reports do
    digits: tuple[float, float, float] = (0.0, 0.0, 0.0)
    n_unjudged: int = 0  # rows moved beyond precision, not judged (NOT_JUDGED: timed)


@dataclass(frozen=True)
class RenameOffer:
    """One rule that would match removed rows with added ones."""

    old: str  # dotted: module, or module.name
    new: str
    kind: str  # "module" or "name"
    count: int  # cost centres (flat rows) the rule matches
    rule: KeyRule
    suggestions: tuple[Suggestion, ...] = field(default=(), compare=False)

    @property
    def text(self) -> str:
        what = "cost centre" if self.count == 1 else "cost centres"
        return f"{self.old} → {self.new}: {self.count} {what}"


@dataclass(frozen=True)
class Notice:
    kind: str  # "incomplete", "incomparable", "reader" (a reader's warning), "precision", "note"
    text: str
    run: int = -1


@dataclass(frozen=True)
class Summary:
    runs: tuple[RunInfo, ...]
    baseline: int
    current: int
    totals: tuple[TotalRow, ...]
    n_totals: int  # all totals the runs have (the page shows the headline ones)
    changes: tuple[MetricChanges, ...]
    renames: tuple[RenameOffer, ...]
    warnings: tuple[Notice, ...]
    n_rows: int  # flat rows (cost centres / functions)
    status_counts: dict[str, int]

    grouped: bool = False  # groups of repeated runs: values are group means
    hotspots: tuple[MetricChanges, ...] = ()  # one run: its largest own costs

    @property
    def compared(self) -> bool:
        return len(self.runs) > 1


def build_summary(session: Session, top: int = 5) -> Summary:
    """The Summary page of ``session`` (its flat comparison ranks; tree rows link)."""
    flat, tree = session.judge_statuses(session.flat), session.tree
    runs = run_infos(flat)
    changes: tuple[MetricChanges, ...] = ()
    renames: tuple[RenameOffer, ...] = ()
    warnings = notices(flat, tree)
    if flat.n_runs > 1 and flat.n_rows:
        changes = tuple(top_changes(session, flat, tree, m, top) for m in main_metrics(flat))
        renames = tuple(rename_offers(flat))
        n_removed, n_added = (int((flat.status == s).sum()) for s in (Status.REMOVED,
                                                                       Status.ADDED))
        if n_removed * n_added > MAX_SUGGEST_PAIRS:
            # runs without modules (folded stacks) have no module to have moved
            looked = ", so only moved modules are looked for" if any(flat.module) else ""
            warnings.append(Notice("note", (
                f"{n_removed:,} removed and {n_added:,} added rows: too many to score every "
                f"pair here{looked}; Tools ▸ Unmatched rows scores every pair")))
    hotspots: tuple[MetricChanges, ...] = ()
    if flat.n_runs == 1 and flat.n_rows:
        hotspots = tuple(top_costs(flat, tree, m, top) for m in main_metrics(flat))
    totals = total_rows(flat)
    return Summary(runs=tuple(runs), baseline=flat.baseline, current=flat.current,
                   totals=tuple(totals[:MAX_TOTALS]), n_totals=len(totals),
                   changes=changes, renames=renames, warnings=tuple(warnings),
                   n_rows=flat.n_rows, grouped=flat.groups is not None, hotspots=hotspots,
                   status_counts=flat.status_counts() if flat.n_runs > 1 else {})


# ----- runs and totals -----------------------------------------------------------------
def run_labels(paths: Sequence[str]) -> list[str]:
    """File names, with as many parent folders as it takes to tell different files with
    equal names apart (the same file twice keeps one label)."""
    uniq = list(dict.fromkeys(str(p) for p in paths))
    parts = {p: Path(p).parts or (p,) for p in uniq}
    longest = max(len(x) for x in parts.values())
    depth = 1
    while depth < longest:
        labels = {"/".join(x[-depth:]) for x in parts.values()}
        if len(labels) == len(uniq):
            break
        depth += 1
    return ["/".join(parts[str(p)][-depth:]) for p in paths]


def run_infos(cmp: Comparison) -> list[RunInfo]:
    labels = run_labels([p.path for p in cmp.runs])
    out = []
    for i, p in enumerate(cmp.runs):
        if cmp.n_runs == 1:
            role = "run"
        elif i == cmp.baseline:
            role = "baseline"
        elif i == cmp.current:
            role = "current"
        else:
            role = f"run {i}"
        label = labels[i]
        if cmp.groups is not None and i < len(cmp.groups) and len(cmp.groups[i]) > 1:
            names = run_labels([q.path for q in cmp.groups[i]])
            more = f" +{len(names) - 4} more" if len(names) > 4 else ""
            label = f"mean of {len(names)} runs: " + ", ".join(names[:4]) + more
        out.append(RunInfo(i, label, role, p.path, p.format, p.incomplete,
                           p.incomplete_reason))
    return out


def headline_keys(keys: Sequence[str]) -> list[str]:
    head = [k for k in HEADLINE_TOTALS if k in keys]
    rest = [k for k in keys if k not in head and not k.endswith("_reported")]
    return head + rest


def total_rows(cmp: Comparison) -> list[TotalRow]:
    out = []
    for k in headline_keys(cmp.distinct_total_keys):
        m = cmp.total_metric(k)
        vals = tuple(None if v is None else float(v) for v in cmp.total_values(k))
        b = vals[cmp.baseline]
        deltas: list[float | None] = []
        rels: list[float | None] = []
        for i, v in enumerate(vals):
            if i == cmp.baseline or v is None or b is None:
                deltas.append(None)
                rels.append(None)
                continue
            d = v - b
            deltas.append(d)
            rels.append(d / abs(b) if b else (float("inf") if d else 0.0))
        out.append(TotalRow(k, m.title if m is not None else k,
                            m.unit if m is not None else Unit.COUNT, vals, tuple(deltas),
                            tuple(rels), bool(m is not None and m.sampled),
                            m.better if m is not None else "lower",
                            bool(m is not None and m.timed)))
    return out


# ----- changes -------------------------------------------------------------------------
def verdicts(session: Session, cmp: Comparison, metric: str) -> np.ndarray:
    """Per row: the verdict on the change of ``metric`` ("" for no change at all).

    Exactly what the views and the statuses use: :meth:`Comparison.changed_mask` (float
    noise and the rounding of printed values) and, for a sampled metric or groups of
    repeated runs, the session's noise estimate; a timed metric with one run per side is
    not judged (:meth:`Comparison.is_judged`).
    """
    d = np.nan_to_num(cmp.delta(metric))
    out = np.full(cmp.n_rows, "", dtype=object)
    moved = (d != 0) & ~cmp.unread()  # absent from a cut file: no change to judge
    changed = cmp.changed_mask(metric)
    out[moved & ~changed] = ROUNDING
    real = moved & changed
    if not cmp.is_judged(metric):
        out[real] = NOT_JUDGED
        return out
    m = cmp.metric_by_name[metric]
    sig = _significant(session, cmp, metric) if m.sampled or cmp.groups is not None else None
    if sig is not None:
        out[real & ~sig] = NOISE
        real &= sig
    out[real] = REAL
    return out


def _significant(session: Session, cmp: Comparison, metric: str) -> np.ndarray | None:
    """Rows whose sampled ``metric`` changed beyond noise (current run against the
    baseline): the session's estimate (groups' spread, or the sampling error of the
    current run against the baseline, of 3+ single runs too)."""
    noise = session.noise(cmp, [metric])
    if noise is not None and metric in noise.metrics:
        return noise.metrics[metric].significant
    return None


def top_changes(session: Session, flat: Comparison, tree: Comparison, metric: str,
                top: int = 5) -> MetricChanges:
    """The ``top`` largest real changes of ``metric``; the largest unsupported ones fill
    the list when fewer are real.  The runtime's own rows (GC, SYSTEM) never rank."""
    met = flat.metric_by_name[metric]
    total = baseline_total(flat, metric)
    scale = abs(total) if np.isfinite(total) and total else 1.0
    d = np.nan_to_num(flat.delta(metric))
    verdict = verdicts(session, flat, metric)
    verdict[system_rows(flat)] = ""
    size = np.abs(d)
    real = np.flatnonzero(verdict == REAL)
    other = np.flatnonzero((verdict != REAL) & (verdict != ""))
    real = real[np.argsort(-size[real], kind="stable")]
    other = other[np.argsort(-size[other], kind="stable")]
    picked = [*real[:top].tolist(), *other[: max(0, top - len(real))].tolist()]
    rel = flat.rel(metric)
    base, new = flat.value(metric, flat.baseline), flat.value(metric)
    keys = [str(flat.keys[r]) for r in picked]
    sites = call_sites(tree, keys, metric)
    items = []
    for r, key in zip(picked, keys, strict=True):
        label = key.replace("\x1f", ".").lstrip(".")
        if flat.line_level:  # a source line: where it is, then its text
            label = f"{flat.location(r)}  {flat.name[r]}"
        items.append(Change(
            metric=metric, key=key, label=label,
            flat_row=int(r), tree_rows=sites[key],
            base=float(base[r]), new=float(new[r]), delta=float(d[r]), rel=float(rel[r]),
            share=float(d[r]) / scale, verdict=str(verdict[r]),
            worse=_worse(met.better, float(d[r])),
            status=Status(int(flat.status[r])).label))
    base_run = flat.runs[flat.baseline]
    digits = (digits_rounding(flat.runs, metric, flat.baseline),
              digits_rounding(flat.runs, metric, flat.current),
              digits_rounding(flat.runs, metric, flat.current, flat.baseline))
    return MetricChanges(metric, met.title, met.unit, base_run.precision(metric),
                         int(len(real)), tuple(items), digits,
                         int(np.count_nonzero(verdict == NOT_JUDGED)))


def top_costs(flat: Comparison, tree: Comparison, metric: str, top: int = 5
              ) -> MetricChanges:
    """One run's ``top`` largest own costs of ``metric`` (hotspot's "Top Hotspots"):
    entries with Δ 0 and ``share`` = the cost's share of the run's total."""
    met = flat.metric_by_name[metric]
    v = np.nan_to_num(flat.value(metric, flat.baseline))
    v = np.where(system_rows(flat), 0.0, v)
    total = baseline_total(flat, metric)
    scale = abs(total) if np.isfinite(total) and total else 1.0
    picked = [int(r) for r in np.argsort(-v, kind="stable")[:top] if v[r] > 0]
    keys = [str(flat.keys[r]) for r in picked]
    sites = call_sites(tree, keys, metric)
    items = tuple(Change(metric=metric, key=k, label=k.replace("\x1f", ".").lstrip("."),
                         flat_row=r, tree_rows=sites[k], base=float(v[r]), new=float(v[r]),
                         delta=0.0, rel=0.0, share=float(v[r]) / scale, verdict="",
                         worse=None, status="same")
                  for r, k in zip(picked, keys, strict=True))
    h = digits_rounding(flat.runs, metric, flat.baseline)
    return MetricChanges(metric, met.title, met.unit,
                         flat.runs[flat.baseline].precision(metric), 0, items, (h, h, 0.0))


def _worse(better: str, d: float) -> bool | None:
    if better == "lower":
        return d > 0
    if better == "higher":
        return d < 0
    return None


def call_sites(tree: Comparison, keys: Sequence[str], metric: str
               ) -> dict[str, tuple[int, ...]]:
    """Per key: the tree rows with that match key, the largest |Δ| of ``metric`` first
    (one hashed pass over the tree's keys, whatever the number of keys)."""
    from .factorize import index_of

    uniq = list(dict.fromkeys(keys))
    codes, distinct = tree.key_codes  # factorized once per tree, for every metric
    code_of = index_of(distinct, uniq) if len(distinct) else np.full(len(uniq), -1)
    position = np.full(len(distinct) + 1, -1, dtype=np.int64)  # key code -> index in uniq
    found = code_of >= 0
    position[code_of[found]] = np.flatnonzero(found)
    which = position[codes]  # per tree row: its key's index in uniq, or -1
    rows = np.flatnonzero(which >= 0)
    d = (np.abs(np.nan_to_num(tree.delta(metric)[rows])) if metric in tree.values
         else np.zeros(rows.size))
    rows = rows[np.lexsort((-d, which[rows]))]  # grouped by key, largest |Δ| first
    out: dict[str, tuple[int, ...]] = {k: () for k in keys}
    if not rows.size:
        return out
    w = which[rows]
    starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
    ends = [*starts[1:].tolist(), int(rows.size)]
    listed = rows.tolist()  # one conversion (a tree row per call site: 10^5 of them)
    for code, a, b in zip(w[starts].tolist(), starts.tolist(), ends, strict=True):
        out[uniq[code]] = tuple(listed[a:b])
    return out


# ----- renames -------------------------------------------------------------------------
def _split(key: str) -> tuple[str, str]:
    m, _, n = key.partition("\x1f")
    return m, n


def rename_offers(flat: Comparison, threshold: float = DEFAULT_MATCH_THRESHOLD
                  ) -> list[RenameOffer]:
    """Rules that would match removed cost centres with added ones: one per moved module
    (names kept, module changed), one per other renamed cost centre.

    Scored by :func:`viewer.suggest.suggest_matches` at the auto-match threshold; when
    there are too many unmatched rows to score pairwise, only module moves are looked for
    (equal names in a removed and an added module: linear, :func:`viewer.suggest.moved_modules`)."""
    st = flat.status
    removed = [str(k) for k in flat.keys[st == Status.REMOVED]]
    added = [str(k) for k in flat.keys[st == Status.ADDED]]
    if not removed or not added:
        return []
    suggestions: list[Suggestion] = []
    if len(removed) * len(added) <= MAX_SUGGEST_PAIRS:
        suggestions = suggest_matches(flat, min_score=threshold)
    moves = moved_modules(flat, np.flatnonzero(st == Status.REMOVED),
                          np.flatnonzero(st == Status.ADDED), suggestions)
    offers = [RenameOffer(old, new, "module", n, ModuleRename(new, old, prefix=False,
                                                              origin="suggestion"))
              for (old, new), n in moves]
    moved = {pair for pair, _ in moves}
    for s in suggestions:
        (om, on), (nm, nn) = _split(s.old_key), _split(s.new_key)
        if (om, nm) in moved and on == nn:
            continue  # the module rule matches it
        offers.append(RenameOffer(s.old_key.replace("\x1f", ".").lstrip("."),
                                  s.new_key.replace("\x1f", ".").lstrip("."),
                                  "name", 1, accept([s]), (s,)))
    return offers


# ----- warnings ------------------------------------------------------------------------
def notices(flat: Comparison, tree: Comparison) -> list[Notice]:
    """What the Summary warns of and notes: incomplete or incomparable runs, rounded
    metrics, the readers' notes and the run-level speed that the statuses took out
    (``flat`` judged: :meth:`Session.judge_statuses`), as ``diff`` and the reports say."""
    from .noise import run_level_notes

    labels = run_labels([p.path for p in flat.runs])
    unread = int(flat.unread().sum()) if flat.n_runs > 1 else 0
    absent = (f"; {unread:,} rows absent from the part read are not listed as changes"
              if unread else "")
    out = [Notice("incomplete", f"{labels[i]} is incomplete: {p.incomplete_reason}"
                  + (absent if i in (flat.baseline, flat.current) else ""), i)
           for i, p in enumerate(flat.runs) if p.incomplete]
    out += [Notice("incomparable", w) for w in incomparable_warnings(flat.runs)]
    out += [Notice("reader", w) for w in reader_warnings(flat.runs, labels)]
    if flat.n_runs > 1 and flat.n_rows:
        base = flat.runs[flat.baseline]
        rounded = [flat.metric_by_name[m].title for m in main_metrics(flat)
                   if base.precision(m) == "rounded"]
        if rounded:
            verb = "is" if len(rounded) == 1 else "are"
            out.append(Notice("precision", (
                f"{' and '.join(rounded)} {verb} derived from rounded percentages: a "
                "change smaller than the rounding is no change")))
    for note in dict.fromkeys([*tree.notes, *flat.notes, *reading_notes(flat.runs),
                               *run_level_notes(flat)]):
        out.append(Notice("note", note))
    return out
