"""Shared model for GHC RTS statistics: key names, units, and the tree-less Profile.

Two readers produce it: :mod:`parsers.ghc_rts_summary` (the human ``+RTS -s`` summary,
also when it ends a ``+RTS -S`` per-GC log or a program's other output) and
:mod:`parsers.ghc_rts_machine` (``+RTS -t --machine-readable``).  Both store every number
in ``Profile.totals`` under the **same** snake_case keys, so a ``-s`` run can be compared
with a ``-t`` run; the profile has no nodes (RTS statistics have no call tree).

Key conventions (see :data:`KNOWN`): sizes end in ``_bytes``, times in ``_s`` (``_cpu_s``
is CPU time, ``_elapsed_s`` wall-clock time, as GHC's ``-s`` prints "(elapsed)"),
percentages in ``_pct`` (0..100 even where GHC's machine-readable output has a 0..1
fraction), and per-generation values are ``gen<N>_...``.  This module is not a reader
(no ``FORMAT``), only their common half.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .model import Kind, Metric, Profile, Unit, make_frame_table

_B, _S, _P, _C, _R = Unit.BYTES, Unit.SECONDS, Unit.PERCENT, Unit.COUNT, Unit.RATIO

#: key -> (unit, label, description) for the keys either reader can produce.
KNOWN: dict[str, tuple[Unit, str, str]] = {
    "bytes_allocated": (_B, "allocated", "bytes allocated in the heap"),
    "bytes_copied": (_B, "copied by GC", "bytes copied during GC"),
    "bytes_copied_not_scavenged": (_B, "copied (not scavenged)",
                                   "bytes copied during GC without scavenging (GHC 6)"),
    "max_residency_bytes": (_B, "max residency", "maximum live bytes seen at a major GC"),
    "max_residency_samples": (_C, "residency samples", "major GCs that sampled residency"),
    "max_slop_bytes": (_B, "max slop", "maximum slop (wasted bytes in blocks)"),
    "total_memory_in_use_bytes": (_B, "memory in use",
                                  "peak memory the RTS took from the OS (-s prints MiB)"),
    "fragmentation_bytes": (_B, "fragmentation", "memory lost to fragmentation"),
    "num_gcs": (_C, "GCs", "garbage collections, all generations"),
    "major_gcs": (_C, "major GCs", "major (oldest generation) collections"),
    "average_bytes_used": (_B, "avg residency", "average live bytes over major GCs"),
    "peak_megabytes_allocated": (_C, "peak MiB", "peak memory in use, in MiB"),
    "cumulative_live_bytes": (_B, "cumulative live", "sum of live bytes over all GCs"),
    "max_large_objects_bytes": (_B, "max large objects", "maximum bytes in large objects"),
    "max_compact_bytes": (_B, "max compact", "maximum bytes in compact regions"),
    "par_copied_bytes": (_B, "par copied", "bytes copied by parallel GCs"),
    "cumulative_par_max_copied_bytes": (_B, "par max copied",
                                        "sum over parallel GCs of the busiest thread's copy"),
    "cumulative_par_balanced_copied_bytes": (_B, "par balanced copied",
                                             "balanced part of parallel GC copying"),
    "gc_time_pct": (_P, "%GC (CPU)", "GC share of total CPU time (recomputed if GHC misprinted it)"),
    "gc_time_pct_reported": (_P, "%GC as printed", "GC share of CPU time as GHC printed it"),
    "gc_elapsed_pct": (_P, "%GC (elapsed)", "GC share of elapsed time"),
    "gc_elapsed_pct_reported": (_P, "%GC elapsed as printed",
                                "GC share of elapsed time as GHC printed it"),
    "alloc_rate_bytes_per_s": (_B, "alloc rate /s", "bytes allocated per MUT second"),
    "productivity_pct": (_P, "productivity", "MUT share of total CPU time (= productivity_cpu_pct)"),
    "productivity_cpu_pct": (_P, "productivity (CPU)", "MUT share of total CPU (user) time"),
    "productivity_elapsed_pct": (_P, "productivity (elapsed)", "MUT share of elapsed time"),
    "par_gc_work_balance_pct": (_P, "GC work balance",
                                "parallel GC work balance (0 serial, 100 perfect)"),
    "par_gc_work_balance": (_R, "GC work balance", "parallel GC work balance (GHC 7, 1 = serial)"),
    "par_gc_work_balance_ideal": (_C, "GC balance ideal", "ideal work balance (GHC 7: -N)"),
    "task_count": (_C, "tasks", "RTS tasks (OS threads)"),
    "bound_task_count": (_C, "bound tasks", "bound tasks"),
    "peak_worker_count": (_C, "peak workers", "peak number of worker tasks"),
    "worker_count": (_C, "workers", "worker tasks in total"),
    "n_capabilities": (_C, "capabilities", "-N, number of capabilities"),
    "sparks_count": (_C, "sparks", "sparks created"),
    "sparks_converted": (_C, "sparks converted", "sparks run in parallel"),
    "sparks_overflowed": (_C, "sparks overflowed", "sparks dropped: spark pool full"),
    "sparks_dud": (_C, "sparks dud", "sparks already evaluated when sparked"),
    "sparks_gcd": (_C, "sparks GC'd", "sparks garbage collected unevaluated"),
    "sparks_fizzled": (_C, "sparks fizzled", "sparks evaluated by someone else first"),
    "sparks_pruned": (_C, "sparks pruned", "sparks pruned (GHC 7.0)"),
    "gc_alloc_block_sync": (_C, "gc_alloc_block_sync", "spin-lock contention counter"),
    "whitehole_spin": (_C, "whitehole_spin", "spin-lock contention counter"),
}
_PHASES = {
    "init": "INIT", "mut": "MUT", "gc": "GC", "conc_gc": "concurrent GC", "rp": "RP (retainer)",
    "prof": "PROF (heap profiling)", "exit": "EXIT", "total": "Total", "sync": "Sync",
}
for _p, _lbl in _PHASES.items():
    KNOWN[f"{_p}_cpu_s"] = (_S, f"{_lbl} CPU", f"{_lbl} time, CPU (user)")
    KNOWN[f"{_p}_elapsed_s"] = (_S, f"{_lbl} elapsed", f"{_lbl} time, elapsed (wall clock)")

_GEN_RE = re.compile(r"^gen(\d+)_(.+)$")
_GEN_FIELDS: dict[str, tuple[Unit, str]] = {
    "collections": (_C, "collections"),
    "par_collections": (_C, "parallel collections"),
    "cpu_s": (_S, "GC CPU time"),
    "elapsed_s": (_S, "GC elapsed time"),
    "avg_pause_s": (_S, "average pause"),
    "max_pause_s": (_S, "maximum pause"),
    "sync": (_C, "sync spins"),
    "syncs": (_C, "nonmoving syncs"),
    "sync_elapsed_s": (_S, "nonmoving sync time"),
    "sync_avg_pause_s": (_S, "nonmoving sync average pause"),
    "sync_max_pause_s": (_S, "nonmoving sync maximum pause"),
    "conc_cpu_s": (_S, "concurrent GC CPU time"),
    "conc_elapsed_s": (_S, "concurrent GC elapsed time"),
    "conc_avg_pause_s": (_S, "concurrent GC average pause"),
    "conc_max_pause_s": (_S, "concurrent GC maximum pause"),
}

#: how far a printed GC percentage may be from the one recomputed from the printed times
#: before the printed one is considered wrong (times are rounded to 0.01 s in GHC 7).
GC_PCT_TOLERANCE = 1.0


def unit_of(key: str) -> Unit:
    """Unit of a totals key: the catalogue first, else from the key's suffix."""
    if key in KNOWN:
        return KNOWN[key][0]
    m = _GEN_RE.match(key)
    if m and m.group(2) in _GEN_FIELDS:
        return _GEN_FIELDS[m.group(2)][0]
    if key.endswith("_bytes"):
        return _B
    if key.endswith("_s"):
        return _S
    if key.endswith("_pct"):
        return _P
    return _C


def metric_for(key: str) -> Metric:
    """The run-level :class:`Metric` describing one totals key."""
    if key in KNOWN:
        unit, label, desc = KNOWN[key]
    else:
        unit = unit_of(key)
        m = _GEN_RE.match(key)
        if m and m.group(2) in _GEN_FIELDS:
            what = _GEN_FIELDS[m.group(2)][1]
            label, desc = f"gen {m.group(1)} {what}", f"generation {m.group(1)}: {what}"
        else:
            label, desc = key.replace("_", " "), "RTS statistic " + key
    better = "lower"
    if key.startswith("productivity") or "balance" in key:
        better = "higher"  # more mutator time / better parallel GC balance is good
    elif key.endswith("_reported") or key.endswith("_samples") or \
            (key.startswith("num_") and key != "num_gcs"):
        better = "none"  # copies, sample counts; the GC count is its generations' sum
    return Metric(key, unit, Kind.NODE, label, desc, better=better, timed=_timed(key, unit))


def _timed(key: str, unit: Unit) -> bool:
    """Times and what is computed from them (GC share, productivity, allocation rate)
    are measured once per run (:attr:`Metric.timed`); bytes and counts are not."""
    return unit is Unit.SECONDS or key.startswith(
        ("gc_time_pct", "gc_elapsed_pct", "productivity", "alloc_rate"))


def snake_key(ghc_key: str) -> tuple[str, float]:
    """(snake_case key, scale) for a machine-readable key GHC may add in the future.

    ``gen_0_wall_seconds`` -> ``gen0_elapsed_s``; ``*_percent`` (fractions) -> ``*_pct`` x100.
    """
    k = re.sub(r"[^a-z0-9]+", "_", ghc_key.strip().lower()).strip("_")
    k = re.sub(r"^gen_(\d+)_", r"gen\1_", k)
    k = k.replace("_wall_", "_elapsed_")
    if k.endswith("_wall_seconds"):
        k = k[: -len("_wall_seconds")] + "_elapsed_s"
    elif k.endswith("_seconds"):
        k = k[: -len("_seconds")] + "_s"
    if k.endswith("_percent"):
        return k[: -len("_percent")] + "_pct", 100.0
    return k, 1.0


def program_of(command_line: str) -> str:
    """Program name from a command line; copes with Windows paths with spaces (``.exe``)."""
    s = command_line.strip()
    if not s:
        return ""
    m = re.match(r"^(.*?\.exe)(?=\s|$)", s, re.IGNORECASE)
    tok = m.group(1) if m else s.split()[0]
    tok = tok.strip("'\"")
    return re.split(r"[/\\]", tok)[-1]


def fill_derived(totals: dict[str, float], meta: dict[str, Any], warnings: list[str]) -> None:
    """Derived and repaired keys shared by both readers.

    * ``gc_time_pct`` / ``gc_elapsed_pct``: GHC 9.0 computes them with an integer
      division and prints 0.0 (``-s``) / 0.000000 (``-t``).  The printed value is kept as
      ``*_reported``; when it is further than :data:`GC_PCT_TOLERANCE` points from
      GC/Total time the recomputed value is used (and a warning says so); when GHC printed
      none, the recomputed value fills it in so every run has it.
    * ``productivity_pct`` = ``productivity_cpu_pct``; ``num_gcs`` = sum of generations.
    """
    repaired = []
    for key, num, den, what in (
        ("gc_time_pct", "gc_cpu_s", "total_cpu_s", "CPU"),
        ("gc_elapsed_pct", "gc_elapsed_s", "total_elapsed_s", "elapsed"),
    ):
        reported = totals.pop(key, None)
        recomputed = None
        if num in totals and totals.get(den, 0) > 0:
            recomputed = 100.0 * totals[num] / totals[den]
        if reported is not None:
            totals[f"{key}_reported"] = reported
        if recomputed is None:
            if reported is not None:
                totals[key] = reported
            continue
        if reported is None:
            totals[key] = recomputed
            meta.setdefault("gc_pct_source", "computed from GC and Total times")
        elif math.isnan(reported) or abs(reported - recomputed) > GC_PCT_TOLERANCE:
            totals[key] = recomputed
            repaired.append(f"{what} {reported:.1f}% -> {recomputed:.1f}%")
        else:
            totals[key] = reported
    if repaired:
        meta["gc_pct_recomputed"] = True
        warnings.append(
            "GHC printed a %GC that does not match its own GC and Total times ("
            + ", ".join(repaired)
            + "; GHC 9.0's integer-division bug prints 0.0%): gc_time_pct/gc_elapsed_pct are "
            "recomputed from the times, the printed values are kept as *_reported"
        )
    if "productivity_cpu_pct" in totals and "productivity_pct" not in totals:
        totals["productivity_pct"] = totals["productivity_cpu_pct"]
    if "num_gcs" not in totals:
        gens = [v for k, v in totals.items() if re.fullmatch(r"gen\d+_collections", k)]
        if gens:
            totals["num_gcs"] = float(sum(gens))


def rts_profile(
    *,
    path: str,
    format: str,
    totals: Mapping[str, float],
    meta: Mapping[str, Any],
    warnings: list[str],
    incomplete: bool = False,
    incomplete_reason: str = "",
    extras: Mapping[str, Any] | None = None,
) -> Profile:
    """A Profile with zero nodes whose ``totals`` carry the statistics."""
    frames = make_frame_table([], [])
    z = np.zeros(0, dtype=np.int32)
    tot = {k: float(v) for k, v in totals.items()}
    return Profile(
        path=str(path),
        format=format,
        frames=frames,
        parent=z,
        frame=z.copy(),
        metrics=(),
        values={},
        meta=dict(meta),
        totals=tot,
        total_metrics={k: metric_for(k) for k in tot},
        incomplete=incomplete,
        incomplete_reason=incomplete_reason,
        warnings=tuple(warnings),
        extras=dict(extras or {}),
        default_metric=None,
    )
