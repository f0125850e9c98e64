"""Export a :class:`~viewer.compare.Comparison` to speedscope's JSON file format.

speedscope (https://www.speedscope.app) draws one profile at a time and has no diff view;
it also rejects negative sample weights (its issues #445 and #228).  So a comparison is
written as several ``sampled`` profiles in one file, sharing one frame table:

* one profile per run (the baseline first), weighted by the chosen metric's *self* cost;
* for every run compared with the baseline, two difference profiles:
  ``grew`` (new − base where positive) and ``shrank`` (base − new where positive).

Every aligned tree node becomes one sample: the stack of frames from the root to the node,
weighted by the node's self cost.  Samples are written in depth-first order so the
"Time Order" view lays the tree out as a flame graph with siblings next to each other.
Zero weights are dropped (speedscope ignores them anyway); the count is reported.

Self cost: a SELF (or NODE) metric is used as is; for an INCLUSIVE metric its ``self_of``
metric is used, or, when the profile has none, self = inclusive − Σ children's inclusive
(clipped at zero, since rounded percentages can make it slightly negative).

Flat data (ticky, ``.mem``, or a ``--flat`` comparison) has no call stacks; there each row
is written as a two-frame stack ``module -> name`` (or a single frame without module), so
speedscope groups closures/lines under their module/file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.model import Kind, Metric, Unit, preorder_and_size

from .. import __version__
from ..compare import Comparison
from ..run_labels import labels_of

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"

# speedscope's ValueUnit: none | nanoseconds | microseconds | milliseconds | seconds | bytes
_UNITS = {
    Unit.BYTES: "bytes",
    Unit.SECONDS: "seconds",
    Unit.NANOSECONDS: "nanoseconds",
}

# Percent metrics have an absolute twin that is a better flame weight (it sums over runs of
# different length and carries a unit).  Tried in order; the first one present wins.
_ABSOLUTE_TWIN = {
    "time_pct": ("time_s", "ticks"),
    "inherited_time_pct": ("time_s", "ticks"),
    "alloc_pct": ("alloc_bytes", "bytes"),
    "inherited_alloc_pct": ("alloc_bytes", "bytes"),
    "self_pct": ("self_period", "self_samples"),
    "total_pct": ("self_period", "self_samples"),
}

# Formats whose frame names are only meaningful with their module (GHC cost centres:
# "go", "main", "CAF" exist in many modules: .prof, -pj JSON); speedscope's own GHC
# importer does the same.
_QUALIFIED_PREFIX = "ghc"

# "src/Foo.hs:12:3-14", "Foo.hs:(12,3)-(14,5)", "/a/b/x.jl:44" -> the file and line
_SRC_FILE = re.compile(r"^([^\s:<>]*[./\\][^\s:<>]*):\(?(\d+)")


class ExportError(ProfdiffError):
    """The comparison cannot be exported as asked (unknown metric, nothing to write)."""


class MissingMetricError(ExportError):
    """The weight metric is missing in some runs (GHC ticky files of different GHC
    versions count alloc_words vs alloc).  The message names the metrics every run has,
    so the user can pick one instead of guessing; ``common`` keeps them for a caller
    that can say how to choose (the CLI's ``--metric``)."""

    def __init__(self, cmp: Comparison, metric: str, missing: Sequence[int]) -> None:
        labels = run_labels(cmp)
        self.common = metrics_in_every_run(cmp)
        have = (f"metrics every run has: {', '.join(self.common)}" if self.common
                else "no metric is in every run")
        super().__init__(f"metric {metric!r} is missing in "
                         f"{', '.join(labels[i] for i in missing)}; {have}")


def metrics_in_every_run(cmp: Comparison) -> list[str]:
    """Names of the metrics with a value in every run (a run without a metric has NaN
    throughout its column), in the comparison's order."""
    out = []
    for m in cmp.metrics:
        if m.name not in cmp.values:
            continue
        v = np.asarray(cmp.values[m.name], dtype=np.float64)
        if v.size and not np.isnan(v).all(axis=0).any():
            out.append(m.name)
    return out


# ------------------------------------------------------------------------------------------
# metric choice
# ------------------------------------------------------------------------------------------
def _metric(cmp: Comparison, name: str) -> Metric:
    m = cmp.metric_by_name.get(name)
    if m is None:
        raise ExportError(
            f"unknown metric {name!r}; metrics: {', '.join(x.name for x in cmp.metrics)}"
        )
    return m


def default_export_metric(cmp: Comparison) -> str:
    """The baseline's default metric, made absolute (``time_pct`` -> ``time_s``)."""
    base = cmp.runs[cmp.baseline]
    name = base.default_metric if base.default_metric in cmp.values else None
    if name is None:
        if not cmp.metrics:
            raise ExportError("the runs have no metric to weight a flame graph by")
        name = cmp.metrics[0].name
    for twin in _ABSOLUTE_TWIN.get(name, ()):
        if twin in cmp.values:
            return twin
    return name


def self_weights(cmp: Comparison, metric: str) -> tuple[np.ndarray, Metric, str]:
    """Self cost per row and run, ``float64[n, R]``, for ``metric`` (see module doc).

    Returns (weights, the metric whose unit applies, a note on how self was obtained).
    NaN (a run without the metric) is left as NaN for the caller to report.
    """
    m = _metric(cmp, metric)
    if m.kind is not Kind.INCLUSIVE:
        return np.array(cmp.values[m.name], dtype=np.float64), m, "self"
    if m.self_of and m.self_of in cmp.values:
        return (np.array(cmp.values[m.self_of], dtype=np.float64), cmp.metric_by_name[m.self_of],
                f"self metric {m.self_of} of {m.name}")
    if cmp.mode != "tree":
        raise ExportError(
            f"{m.name} is inclusive and has no self metric; a flat comparison cannot derive "
            "self cost from it (use the tree mode or a self metric)"
        )
    inc = np.array(cmp.values[m.name], dtype=np.float64)
    child_sum = np.zeros_like(inc)
    kids = np.flatnonzero(cmp.parent >= 0)
    np.add.at(child_sum, cmp.parent[kids], np.nan_to_num(inc[kids]))
    own = inc - child_sum
    return np.where(own < 0, 0.0, own), m, f"self derived from {m.name} − children"


def speedscope_unit(unit: Unit | str) -> str:
    return _UNITS.get(Unit(unit), "none")


# ------------------------------------------------------------------------------------------
# labels and frames
# ------------------------------------------------------------------------------------------
def run_labels(cmp: Comparison) -> list[str]:
    """How the runs are named (:func:`viewer.run_labels.labels_of`: the user's labels or
    the shortest distinguishing path suffix), the same as in every other view."""
    return labels_of(cmp)


def _representatives(cmp: Comparison) -> tuple[np.ndarray, np.ndarray]:
    """(run, node) that describes each row: the baseline where present, else the first run."""
    present = cmp.node >= 0
    rep_run = np.argmax(present, axis=1)
    rep_run = np.where(present[:, cmp.baseline], cmp.baseline, rep_run)
    rep_node = cmp.node[np.arange(cmp.n_rows), rep_run]
    return rep_run, rep_node


def _src_location(src: str) -> tuple[str, int]:
    """(file, first line) of a source location string; ("", 0) when it is not one."""
    m = _SRC_FILE.match(src)
    return (m.group(1), int(m.group(2))) if m else ("", 0)


class _Frames:
    """Interns speedscope frame objects ``{name, file?, line?}``."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, int], int] = {}
        self.list: list[dict[str, Any]] = []

    def __call__(self, name: str, file: str = "", line: int = 0) -> int:
        key = (name, file, line)
        fid = self.ids.get(key)
        if fid is None:
            fid = len(self.list)
            self.ids[key] = fid
            fr: dict[str, Any] = {"name": name}
            if file:
                fr["file"] = file
            if line > 0:
                fr["line"] = line
            self.list.append(fr)
        return fid


class _Stacks:
    """Root-first frame-id stacks of rows, built on demand.

    Frame ids are resolved once per distinct (run, frame) - not per row - and stacks only
    for rows that carry a weight, so a 10^5..10^6-row tree whose cost sits in a few
    thousand nodes exports in about a second.
    """

    def __init__(self, cmp: Comparison, frames: _Frames) -> None:
        n = cmp.n_rows
        self.parent = cmp.parent.tolist()
        self.flat = bool(n) and bool((cmp.parent < 0).all())
        fid = np.zeros(n, dtype=np.int64)
        mod_fid = np.full(n, -1, dtype=np.int64)
        rep_run, rep_node = _representatives(cmp)
        for r in np.unique(rep_run).tolist():
            rows = np.flatnonzero(rep_run == r)
            p = cmp.runs[r]
            uniq, inv = np.unique(p.frame[rep_node[rows]], return_inverse=True)
            ids = np.empty(len(uniq), dtype=np.int64)
            mids = np.full(len(uniq), -1, dtype=np.int64)
            for j, f in enumerate(uniq.tolist()):
                name = str(p.frames.name[f])
                module = str(p.frames.module[f] or "")
                src_file, src_line = _src_location(str(p.frames.src[f] or ""))
                line = int(p.frames.line[f]) or src_line
                file = src_file or module
                if self.flat and module:
                    # flat data: module (file) frame above the closure (line) frame
                    mids[j] = frames(module, module if module == file else "")
                elif module and module != name and p.format.startswith(_QUALIFIED_PREFIX):
                    name = f"{module}.{name}"
                ids[j] = frames(name, file, line)
            fid[rows] = ids[inv]
            mod_fid[rows] = mids[inv]
        self.fid = fid.tolist()
        self.mod_fid = mod_fid.tolist()
        self._cache: dict[int, list[int]] = {}

    def __getitem__(self, row: int) -> list[int]:
        if self.flat:
            m = self.mod_fid[row]
            return [m, self.fid[row]] if m >= 0 else [self.fid[row]]
        hit = self._cache.get(row)
        if hit is None:
            # walk up: O(depth) per weighted row; caching every ancestor's list would cost
            # O(depth) per *ancestor*, which for wide deep trees is far more
            hit = []
            parent, fid = self.parent, self.fid
            r = row
            while r >= 0:
                hit.append(fid[r])
                r = parent[r]
            hit.reverse()
            self._cache[row] = hit  # grew/shrank/run profiles share the list
        return hit


# ------------------------------------------------------------------------------------------
# export
# ------------------------------------------------------------------------------------------
def _clean(x: float) -> float | int:
    """15 significant digits: hides float noise of subtraction (0.1 - 0.08) in the file."""
    r = float(f"{x:.15g}")
    return int(r) if r.is_integer() and abs(r) < 2**53 else r


def _sampled(name: str, unit: str, weights: np.ndarray, order: np.ndarray,
             stacks: _Stacks) -> tuple[dict[str, Any], float]:
    """One sampled profile from per-row positive weights; returns (profile, sum of weights)."""
    w = weights[order]
    keep = order[w > 0]
    samples = [stacks[r] for r in keep.tolist()]
    ws = [_clean(x) for x in weights[keep].tolist()]
    total = float(sum(ws))
    prof = {
        "type": "sampled",
        "name": name,
        "unit": unit,
        "startValue": 0,
        "endValue": _clean(total),
        "samples": samples,
        "weights": ws,
    }
    return prof, total


def build_speedscope(cmp: Comparison, metric: str | None = None) -> tuple[dict, dict]:
    """The speedscope document and a summary of it (see :func:`export_speedscope`)."""
    metric = metric or default_export_metric(cmp)
    weights, wmetric, how = self_weights(cmp, metric)
    missing = [i for i in range(cmp.n_runs) if np.isnan(weights[:, i]).all() and cmp.n_rows]
    if missing:
        raise MissingMetricError(cmp, metric, missing)
    weights = np.nan_to_num(weights)
    negative = int(np.count_nonzero(weights < 0))
    unit = speedscope_unit(wmetric.unit)
    frames = _Frames()
    stacks = _Stacks(cmp, frames)
    pre, _size = preorder_and_size(cmp.parent)
    order = np.argsort(pre, kind="stable")
    if stacks.flat:  # keep each module's rows together so its frame is one bar
        mod = np.asarray(stacks.mod_fid, dtype=np.int64)
        order = order[np.argsort(mod[order], kind="stable")]
    labels = run_labels(cmp)
    b = cmp.baseline
    wname = wmetric.name

    profiles: list[dict] = []
    info: list[dict] = []
    omitted: list[str] = []

    def add(name: str, kind: str, run: int, w: np.ndarray, present: np.ndarray) -> None:
        prof, total = _sampled(name, unit, w, order, stacks)
        # rows absent from the run(s) are not "dropped": they were never there
        dropped = int(np.count_nonzero((w == 0) & present))
        if not prof["samples"]:
            omitted.append(f"{name}: no positive weight, profile left out")
            return
        profiles.append(prof)
        info.append({"name": name, "kind": kind, "run": run, "samples": len(prof["samples"]),
                     "dropped_zero": dropped, "total": total})

    order_runs = [b] + [i for i in range(cmp.n_runs) if i != b]
    for r in order_runs:
        w = np.clip(weights[:, r], 0, None)
        role = "base" if r == b and cmp.n_runs > 1 else "run"
        if cmp.n_runs == 1:
            title = f"{labels[r]} [{wname}]"
        else:
            who = "base" if r == b else ("new" if cmp.n_runs == 2 else f"run {r}")
            title = f"{who}: {labels[r]} [{wname}]"
        add(title, role, r, w, cmp.present[:, r])
    active_name = None
    for r in order_runs[1:]:
        d = weights[:, r] - weights[:, b]
        both = cmp.present[:, r] | cmp.present[:, b]
        grew = np.where(d > 0, d, 0.0)
        shrank = np.where(d < 0, -d, 0.0)
        gname = f"grew (new − base where positive): {labels[r]} vs {labels[b]} [{wname}]"
        sname = f"shrank (base − new where positive): {labels[r]} vs {labels[b]} [{wname}]"
        add(gname, "grew", r, grew, both)
        add(sname, "shrank", r, shrank, both)
        if r == cmp.current:
            active_name = gname

    if not profiles:
        raise ExportError(f"nothing to export: every weight of {wname} is zero")
    names = [p["name"] for p in profiles]
    active = names.index(active_name) if active_name in names else 0
    if cmp.n_runs > 1:
        title = f"profdiff: {' vs '.join(labels[i] for i in order_runs)} [{wname}]"
    else:
        title = f"profdiff: {labels[0]} [{wname}]"
    doc = {
        "$schema": SCHEMA_URL,
        "shared": {"frames": frames.list},
        "profiles": profiles,
        "name": title,
        "activeProfileIndex": active,
        "exporter": f"profdiff@{__version__}",
    }
    summary = {
        "metric": metric,
        "weight_metric": wname,
        "self_from": how,
        "unit": unit,
        "mode": cmp.mode,
        "stacks": "module > name (flat data)" if stacks.flat else "call paths",
        "frames": len(frames.list),
        "profiles": info,
        "omitted": omitted,
        "negative_clipped": negative,
        "active_profile": names[active],
    }
    return doc, summary


def export_speedscope(cmp: Comparison, out_path: str | os.PathLike[str],
                      metric: str | None = None) -> dict:
    """Write ``cmp`` as one speedscope file; return a summary of what was written.

    Summary keys: ``path``, ``metric`` (asked or default), ``weight_metric`` (the self metric
    the weights come from), ``self_from`` (how), ``unit`` (speedscope unit), ``frames``,
    ``profiles`` (list of ``{name, kind: base|run|grew|shrank, run, samples, dropped_zero,
    total}``), ``omitted`` (empty profiles left out), ``negative_clipped``,
    ``active_profile``, ``mode`` (of the comparison), ``stacks`` (call paths, or
    module > name for flat data), ``bytes``.
    """
    doc, summary = build_speedscope(cmp, metric)
    out = Path(out_path)
    # dumps (the C encoder in one go) is several times faster than dump's chunked writes
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ExportError(f"{out}: cannot write: {e.strerror or e}") from e
    summary["path"] = str(out)
    summary["bytes"] = out.stat().st_size
    return summary
