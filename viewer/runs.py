"""The runs table of watch mode (Qt-free): one row per landed run, and what to compare.

Every version of a profile file that lands in a watched folder becomes a :class:`Run`
(time, file, format, key totals).  A GHC ``+RTS -s``/``-t`` log beside a profile of the
same run (same folder and stem: ``ad.prof`` + ``ad.stats.txt``) is merged into the
profile's row, so bytes copied, max residency and productivity sit next to the ``.prof``
totals and travel with the profile into comparisons (:meth:`Run.merged_profile`).

Also here: which runs to compare in each mode (newest vs previous, vs a pinned baseline,
picked runs), the series plotted over runs, and :func:`top_changes`, the one-line
summary of what moved most ("eval0: +22.6 pp alloc") used by the GUI notification and
the CLI.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from profdiff.parsers.model import Kind, Metric, Profile, Unit

from .compare import Comparison
from .units import format_delta, format_rel, format_value, human_bytes
from .watch import Landed

RTS_FORMATS = ("ghc-rts-s", "ghc-rts-t")
"""Run-level statistics logs that merge into the row of the profile they belong to."""

KEY_TOTALS = (
    "total_time_s", "total_ticks", "total_alloc_bytes",
    "bytes_allocated", "bytes_copied", "max_residency_bytes",
    "mut_cpu_s", "gc_cpu_s", "productivity_pct",
    "peak_bytes",
)
"""Totals shown first in the runs table (others present in any run follow)."""

_STEM_SUFFIXES = {
    "gz", "txt", "log", "out", "stats", "stat", "prof", "json", "hp", "rts", "s", "t",
    "t-machine-readable", "machine-readable", "ticky",
}

MODES = ("previous", "pinned", "picked")
"""Comparison modes: newest vs previous, newest vs pinned baseline, runs picked by hand."""


def run_stem(path: str | os.PathLike) -> str:
    """File name without profile suffixes: ``ad.prof``, ``ad.stats.txt`` -> ``ad``.

    Only known suffixes are stripped, so ``ad.P.prof`` (another profiling mode) keeps
    its ``.P`` and stays a run of its own.
    """
    parts = Path(path).name.split(".")
    while len(parts) > 1 and parts[-1].lower() in _STEM_SUFFIXES:
        parts.pop()
    return ".".join(parts)


@dataclass(eq=False)
class Run:
    """One landed run: a primary file (a profile, or an RTS log alone) and attached logs."""

    id: int
    landed: Landed  # the primary file
    attached: dict[str, Landed] = field(default_factory=dict)  # RTS format -> log
    profile: Profile | None = None  # None when evicted (reloaded on demand) or failed
    _merged: Profile | None = field(default=None, repr=False)

    # ----- identity ------------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.landed.path

    @property
    def format(self) -> str:
        return self.landed.format

    @property
    def time(self) -> float:
        """mtime of the newest file of the run (seconds since the epoch)."""
        return max([self.landed.mtime, *(a.mtime for a in self.attached.values())])

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)

    @property
    def stem(self) -> str:
        return run_stem(self.path)

    @property
    def files(self) -> list[str]:
        return [self.path, *(a.path for a in self.attached.values())]

    @property
    def is_rts_only(self) -> bool:
        return self.format in RTS_FORMATS

    # ----- state ---------------------------------------------------------------------------
    @property
    def ok(self) -> bool:
        return self.landed.error is None

    @property
    def incomplete(self) -> bool:
        return self.landed.incomplete or any(a.incomplete for a in self.attached.values())

    @property
    def writing(self) -> bool:
        """A file of the run is incomplete: still being written; the run is not compared."""
        return self.incomplete

    @property
    def status(self) -> str:
        """``ok``, ``writing: <reason>`` or ``error: <message>`` (for the table)."""
        if self.landed.error:
            return f"error: {self.landed.error}"
        bad = [x for x in [self.landed, *self.attached.values()] if x.incomplete]
        if bad:
            return "writing: " + "; ".join(x.reason or "file cut short" for x in bad)
        return "ok"

    @property
    def totals(self) -> dict[str, float]:
        """Run-level totals of the profile, with the attached RTS logs' on top of them."""
        out: dict[str, float] = {}
        for x in [self.landed, *self.attached.values()]:
            if x.profile is not None:
                out.update({k: float(v) for k, v in x.profile.totals.items()})
        p = self.landed.profile
        if p is not None and "total_alloc_bytes" in p.totals:
            out["total_alloc_bytes"] = float(p.totals["total_alloc_bytes"])
        return out

    @property
    def total_metrics(self) -> dict[str, Metric]:
        out: dict[str, Metric] = {}
        for x in [*self.attached.values(), self.landed]:
            if x.profile is not None:
                out.update(x.profile.total_metrics)
        return out

    def merged_profile(self) -> Profile | None:
        """The primary profile with the attached logs' totals added (cached)."""
        if self.profile is None:
            return None
        if not self.attached:
            return self.profile
        if self._merged is None or self._merged.path != self.profile.path:
            extra = {k: v for a in self.attached.values() if a.profile is not None
                     for k, v in a.profile.totals.items() if k not in self.profile.totals}
            metrics = {k: m for a in self.attached.values() if a.profile is not None
                       for k, m in a.profile.total_metrics.items() if k in extra}
            self._merged = dataclasses.replace(
                self.profile,
                totals={**self.profile.totals, **extra},
                total_metrics={**self.profile.total_metrics, **metrics},
            )
        return self._merged


class RunsTable:
    """All runs seen in a watched folder, in landing order (start-up scan: by mtime).

    Profiles of at most ``keep_profiles`` runs stay in memory (the newest, plus pinned
    and picked ones); older ones are dropped and re-read on demand when their file still
    holds the same version (:meth:`profile_of`).
    """

    def __init__(self, folder: str | os.PathLike | None = None, *, keep_profiles: int = 64,
                 loader: Callable[..., Profile] | None = None) -> None:
        self.folder = str(Path(folder).resolve()) if folder else None
        self.runs: list[Run] = []
        self.keep_profiles = keep_profiles
        self.pinned: Run | None = None
        self._next_id = 0
        self._loader = loader

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self):
        return iter(self.runs)

    def __getitem__(self, i: int) -> Run:
        return self.runs[i]

    def index(self, run: Run) -> int:
        for i, r in enumerate(self.runs):
            if r is run:
                return i
        raise ValueError("run not in table")

    def by_id(self, run_id: int) -> Run | None:
        return next((r for r in self.runs if r.id == run_id), None)

    def label(self, run: Run) -> str:
        """The run's file relative to the watched folder (``v2/ad.prof``)."""
        if self.folder:
            try:
                return Path(run.path).relative_to(self.folder).as_posix()
            except ValueError:
                pass
        return Path(run.path).name

    # ----- changes -------------------------------------------------------------------------
    def add(self, landed: Landed) -> tuple[Run, str]:
        """Record a landed file; returns the run and ``"new"``, ``"replaced"`` or ``"merged"``.

        A file whose previous version was incomplete or unreadable replaces that run (the
        retry completes it), and so does a file that grew (``Landed.grew_from``: a ``.hp``
        during its run, an appended perf script); otherwise every version is a new run.  An RTS log joins the
        newest row of the same folder and stem that has no log of its format yet, a
        profile joins the newest such row that holds only RTS logs.
        """
        # retry of an incomplete/failed version: replace in place
        for r in reversed(self.runs):
            if r.path == landed.path and (r.landed.incomplete or r.landed.error
                                          or landed.grew_from(r.landed)):
                r.landed = landed
                r.profile = landed.profile
                r._merged = None
                return r, "replaced"
            for fmt, a in r.attached.items():
                if a.path == landed.path and (a.incomplete or a.error
                                              or landed.grew_from(a)):
                    r.attached[fmt] = landed
                    r._merged = None
                    return r, "replaced"
        folder, stem = os.path.dirname(landed.path), run_stem(landed.path)
        if landed.format in RTS_FORMATS and landed.ok:
            for r in reversed(self.runs):
                if (r.folder == folder and r.stem == stem and not r.is_rts_only
                        and landed.format not in r.attached and landed.path not in r.files):
                    r.attached[landed.format] = landed
                    r._merged = None
                    return r, "merged"
        elif landed.ok:
            for r in reversed(self.runs):
                if r.folder == folder and r.stem == stem and r.is_rts_only and r.ok:
                    logs = {r.format: r.landed, **r.attached}
                    r.landed, r.attached = landed, logs
                    r.profile, r._merged = landed.profile, None
                    return r, "merged"
        run = Run(self._next_id, landed, profile=landed.profile)
        self._next_id += 1
        self.runs.append(run)
        self._evict()
        return run, "new"

    def remove_path(self, path: str) -> list[Run]:
        """A file disappeared: drop the runs it was the primary file of, detach it elsewhere.

        Returns the runs removed (rows whose log was detached stay, with fewer totals).
        """
        gone = [r for r in self.runs if r.path == path]
        for r in self.runs:
            for fmt in [f for f, a in r.attached.items() if a.path == path]:
                del r.attached[fmt]
                r._merged = None
        if gone:
            self.runs = [r for r in self.runs if r.path != path]
            if self.pinned in gone:
                self.pinned = None
        return gone

    def pin(self, run: Run | None) -> None:
        self.pinned = run

    # ----- profiles ------------------------------------------------------------------------
    def _evict(self) -> None:
        if self.keep_profiles <= 0:
            return
        held = [r for r in self.runs if r.profile is not None]
        excess = len(held) - self.keep_profiles
        for r in held:
            if excess <= 0:
                break
            if r is self.pinned:
                continue
            r.profile, r._merged = None, None
            excess -= 1

    def profile_of(self, run: Run) -> Profile | None:
        """The run's profile (merged with its logs), re-read if it was evicted.

        None when it failed, or when the file was rewritten since (that version is gone).
        """
        if run.profile is None and run.landed.error is None:
            try:
                st = os.stat(run.path)
            except OSError:
                return None
            if (st.st_size, st.st_mtime_ns) != run.landed.signature and \
                    abs(st.st_mtime - run.landed.mtime) > 1e-6:
                return None
            try:
                if self._loader is not None:
                    run.profile = self._loader(run.path, format=run.format)
                else:
                    from profdiff.parsers import load

                    run.profile = load(run.path, format=run.format)
            except Exception:  # noqa: BLE001 - unreadable now: no comparison, no crash
                return None
        return run.merged_profile()

    # ----- modes ---------------------------------------------------------------------------
    def newest(self, format: str | None = None) -> Run | None:
        """The newest run that can be compared (read, and not still being written)."""
        for r in reversed(self.runs):
            if r.ok and not r.writing and (format is None or r.format == format):
                return r
        return None

    def previous(self, run: Run) -> Run | None:
        """The run of the same format that landed before ``run`` (skipping failed and
        still-writing ones)."""
        i = self.index(run)
        for r in reversed(self.runs[:i]):
            if r.ok and not r.writing and r.format == run.format:
                return r
        return None

    def compared(self, mode: str = "previous", picked: Sequence[Run] = ()) -> list[Run]:
        """The runs a mode compares, baseline first (may be fewer than two)."""
        if mode == "picked":
            return [r for r in picked if r.ok and not r.writing]
        if mode == "pinned" and self.pinned is not None:
            new = self.newest(self.pinned.format)
            return [self.pinned] if new is None or new is self.pinned else [self.pinned, new]
        new = self.newest()
        if new is None:
            return []
        prev = self.previous(new)
        return [new] if prev is None else [prev, new]

    # ----- columns and series --------------------------------------------------------------
    def total_keys(self) -> list[str]:
        """Totals present in any run: the key ones first, then the others in landing order."""
        seen: dict[str, None] = {}
        for r in self.runs:
            for k in r.totals:
                seen.setdefault(k, None)
        first = [k for k in KEY_TOTALS if k in seen]
        return first + [k for k in seen if k not in first]

    def total_metric(self, key: str) -> Metric | None:
        for r in reversed(self.runs):
            m = r.total_metrics.get(key)
            if m is not None:
                return m
        return None

    def series(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(run index, value) of a total over the runs that have it."""
        xs, ys = [], []
        for i, r in enumerate(self.runs):
            v = r.totals.get(key)
            if v is not None and math.isfinite(v):
                xs.append(i)
                ys.append(v)
        return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)

    def frame_series(self, name: str, metric: str, *, module: str | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(run index, value) of one cost centre's metric over the runs, summed over its
        call sites (inclusive metrics: outermost calls only, via the flat aggregate)."""
        from profdiff.parsers.model import flat_aggregate

        xs, ys = [], []
        for i, r in enumerate(self.runs):
            p = self.profile_of(r) if r.ok else None
            if p is None or not p.has_metric(metric):
                continue
            mask = p.frames.name == name
            if module is not None:
                mask &= p.frames.module == module
            if not mask.any():
                xs.append(i)
                ys.append(0.0)
                continue
            uniq, codes = p.frame_key_codes
            vals = flat_aggregate(p, codes, len(uniq))[metric]
            wanted = {f"{m}\x1f{n}" for m, n in zip(p.frames.module[mask], p.frames.name[mask],
                                                     strict=True)}
            sel = np.isin(uniq, list(wanted))
            xs.append(i)
            ys.append(float(np.nansum(vals[sel])))
        return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


# ------------------------------------------------------------------------------------------
# what changed
# ------------------------------------------------------------------------------------------
def _short_label(m: Metric) -> str:
    t = (m.label or m.name).replace("%", "").strip()
    return t or m.name


def _short_delta(d: float, unit: Unit) -> str:
    if unit is Unit.BYTES:
        return ("+" if d > 0 else "−") + human_bytes(abs(d))
    return format_delta(d, unit)


def _change_metrics(cmp: Comparison) -> list[Metric]:
    """Self-cost metrics worth naming: the baseline's shown ones first, then the rest."""
    base = cmp.runs[cmp.baseline]
    shown = [cmp.metric_by_name[n] for n in base.shown_metrics if n in cmp.metric_by_name]
    rest = [m for m in cmp.metrics if m not in shown]
    out = [m for m in [*shown, *rest] if m.kind is Kind.SELF and m.better != "none"]
    # one unit family per quantity: percent-of-run columns read best ("pp"); drop the
    # absolute twin when both exist (alloc_pct vs alloc_bytes)
    if any(m.unit is Unit.PERCENT for m in out):
        out = [m for m in out if m.unit is Unit.PERCENT]
    return out


def top_changes(cmp: Comparison, n: int = 3, run: int | None = None) -> list[str]:
    """The ``n`` culprits of ``run`` (default: the comparison's current run) against the
    baseline, the largest own change first (a regression or an improvement), as short
    phrases: ``"addGrad: +2.18 GB alloc"``.

    Rows come in the order of :func:`viewer.ranking.rank_changes`: own change against the
    baseline's total over the format's main metrics, beyond precision and noise, so a cost
    centre whose bytes did not change never leads because its share of a grown run fell.
    One phrase per cost centre.  Runs without a tree (RTS statistics) report their
    totals' relative changes instead.
    """
    from .noise import ensure_run_noise
    from .ranking import main_metrics, rank_changes

    run = cmp.current if run is None else run
    if cmp.n_runs < 2 or run == cmp.baseline:
        return []
    ensure_run_noise(cmp, run, list(main_metrics(cmp)))  # that run's own pair (3+ runs)
    ranking = rank_changes(cmp, run=run)
    out: list[str] = []
    seen: set[str] = set()
    real = np.flatnonzero(ranking.score != 0)  # regressions and improvements, largest first
    for r in real[np.argsort(-np.abs(ranking.score[real]), kind="stable")]:
        name = str(cmp.name[r])
        if name in seen:
            continue
        seen.add(name)
        m = cmp.metric_by_name[ranking.metric_of(r)]
        d = float(cmp.delta_at(m.name, run, [r])[0])
        out.append(f"{name}: {_short_delta(d, m.unit)} {_short_label(m)}")
        if len(out) >= n:
            return out
    if out:
        return out
    return _total_changes(cmp, n, run)


def _total_changes(cmp: Comparison, n: int, run: int) -> list[str]:
    """Relative changes of run-level totals, biggest first (RTS logs, flat runs)."""
    keys = [k for k in KEY_TOTALS if k in cmp.total_keys] or list(cmp.total_keys)
    rows = []
    for k in keys:
        b = cmp.runs[cmp.baseline].totals.get(k)
        v = cmp.runs[run].totals.get(k)
        if b is None or v is None or not (math.isfinite(b) and math.isfinite(v)) or v == b:
            continue
        m = cmp.total_metric(k)
        unit = m.unit if m else Unit.COUNT
        rel = (v - b) / abs(b) if b else math.inf
        label = (m.label if m and m.label else k).replace("_", " ")
        txt = format_delta(v - b, unit) if unit is Unit.PERCENT else format_rel(rel)
        rows.append((abs(rel) if unit is not Unit.PERCENT else abs(v - b) / 100, label, txt))
    rows.sort(key=lambda t: -t[0])
    return [f"{label}: {txt}" for _s, label, txt in rows[:n]]


def format_total(run: Run, key: str, metric: Metric | None = None) -> str:
    v = run.totals.get(key)
    unit = metric.unit if metric else (Unit.BYTES if key.endswith("_bytes") else Unit.COUNT)
    return format_value(v, unit) if v is not None else ""
