"""Allocated types across runs (Julia ``Profile.Allocs`` / PProf.jl profiles), Qt-free.

The pprof reader puts ``extras["by_type"]`` = ``[{"type", "count", "bytes"}, ...]`` on
allocation profiles (from the samples' ``type`` labels, or ``Alloc: T`` leaf frames).  The
user story: "one stray 32-byte allocation appeared; which type?".  The call tree answers
*where*, this table answers *what*.

Why one-level profiles: each run's type list becomes a :class:`~parsers.model.Profile`
whose nodes are all roots (one per type) with SELF metrics ``alloc_count`` and
``alloc_bytes``.  Then :func:`viewer.compare.align` in flat mode gives the usual
Comparison (values per run, Δ, status added/removed/changed, sorting, ``--fail-if``, JSON),
so the CLI table, the JSON contract and the flat Qt table model work unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from profdiff.parsers.builder import flat_profile
from profdiff.parsers.model import Kind, Metric, Profile, Unit, make_frame_table

from .compare import Comparison, KeyRule, Status, align

COUNT = "alloc_count"
BYTES = "alloc_bytes"
METRICS = (
    Metric(COUNT, Unit.COUNT, Kind.SELF, label="allocs",
           description="number of allocations of the type (sampled by Profile.Allocs' "
           "sample_rate when below 1)"),
    Metric(BYTES, Unit.BYTES, Kind.SELF, label="bytes",
           description="bytes allocated for objects of the type"),
)
FRAME_KIND = "type"


class NoTypeTable(ValueError):
    """A run has no allocated-type table (not an allocation profile with type labels)."""


def has_by_type(p: Profile) -> bool:
    """``p`` carries a non-empty allocated-type table."""
    return bool((p.extras or {}).get("by_type"))


def by_type_profile(p: Profile) -> Profile:
    """One root node per allocated type of ``p`` with ``alloc_count`` / ``alloc_bytes``.

    Keeps ``path``, ``format`` and ``meta`` (plus ``meta["view"] = "by-type"``) so reports
    still name the original file; the run totals are the sums over types.
    """
    rows = (p.extras or {}).get("by_type") or []
    if not rows:
        raise NoTypeTable(f"{p.path}: no allocated-type table (needs a pprof allocation "
                          "profile with 'type' labels or 'Alloc: T' frames, e.g. PProf.jl's "
                          "Profile.Allocs output)")
    types = [str(r["type"]) for r in rows]
    counts = np.array([int(r["count"]) for r in rows], dtype=np.int64)
    nbytes = np.array([int(r["bytes"]) for r in rows], dtype=np.int64)
    n = len(types)
    frames = make_frame_table(types, [""] * n, kinds=[FRAME_KIND] * n)
    meta = dict(p.meta)
    meta["view"] = "by-type"
    return flat_profile(
        path=p.path,
        format=p.format,
        frames=frames,
        metrics=METRICS,
        columns={COUNT: counts, BYTES: nbytes},
        meta=meta,
        totals={COUNT: int(counts.sum()), BYTES: int(nbytes.sum())},
        total_metrics={m.name: m for m in METRICS},
        warnings=p.warnings,
        incomplete=p.incomplete,
        incomplete_reason=p.incomplete_reason,
        default_metric=BYTES,
        display_metrics=(BYTES, COUNT),
    )


def by_type_profiles(runs: Sequence[Profile]) -> list[Profile]:
    """:func:`by_type_profile` of every run; :class:`NoTypeTable` names the first without."""
    return [by_type_profile(p) for p in runs]


def by_type_comparison(runs: Sequence[Profile], *, baseline: int = 0, current: int = -1,
                       rules: Sequence[KeyRule] = ()) -> Comparison:
    """Allocated types of ``runs`` aligned by type name (flat mode).

    ``rules`` are the usual rename rules (a renamed type is matched like a renamed
    function; type names have an empty module).
    """
    return align(by_type_profiles(runs), baseline=baseline, mode="flat", rules=rules,
                 current=current)


def by_type_rows(cmp: Comparison) -> list[dict]:
    """Plain rows of a by-type comparison, largest byte growth first (tests, scripts):
    ``{"type", "status", "count": [per run], "bytes": [per run], "delta_count",
    "delta_bytes"}`` (deltas of the current run against the baseline)."""
    order = cmp.order_by(BYTES, "delta", True) if cmp.n_runs > 1 else np.argsort(
        -cmp.values[BYTES][:, 0], kind="stable")
    status = cmp.status
    out = []
    for r in order.tolist():
        out.append({
            "type": str(cmp.name[r]),
            "status": Status(int(status[r])).label,
            "count": [int(v) for v in cmp.values[COUNT][r]],
            "bytes": [int(v) for v in cmp.values[BYTES][r]],
            "delta_count": int(cmp.delta_at(COUNT, None, [r])[0]) if cmp.n_runs > 1 else 0,
            "delta_bytes": int(cmp.delta_at(BYTES, None, [r])[0]) if cmp.n_runs > 1 else 0,
        })
    return out

