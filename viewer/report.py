"""The documented ``--json`` contract of ``profdiff show`` and ``profdiff diff``.

Kept in one module so the shape is stable and easy to read against the README:

* top level: ``profdiff`` (version), ``mode`` (``tree``/``flat``), ``baseline`` (run
  index), ``current``, ``metrics`` (name -> unit, kind, label), ``runs``, ``totals``,
  ``rows``, ``status_counts``;
* ``runs[i]``: ``path``, ``format``, ``incomplete``, ``incomplete_reason``, ``warnings``,
  ``meta``, ``totals`` (run-level numbers) and any JSON-serialisable reader extras
  (ticky ``counters``);
* ``rows[j]``: ``name``, ``module``, ``src``; tree mode: ``id`` (the row's index in the
  comparison), ``parent`` (its parent's ``id``, null for roots), ``depth`` and ``path``
  (``"module.name"`` from the root; for rows deeper than :data:`PATH_LIMIT` only the
  last ``PATH_LIMIT`` labels after a ``"…"``, so the output stays linear in the rows:
  follow ``parent`` through ``rows`` and the top-level ``ancestors`` for the whole
  path), ``status`` (``same|changed|added|removed``), ``matched_by``, ``values`` (one
  object per run, keyed by metric), ``delta`` (current minus baseline, keyed by metric),
  ``rel`` (relative change, null when the base is zero) and, with more than two runs,
  ``deltas`` (one object per run, null for the baseline).

Non-finite numbers become ``null`` so the output is strict JSON.  Tree mode also has a
top-level ``ancestors`` list (``id``, ``name``, ``module``, ``parent``) of the rows'
ancestors that are not themselves listed, so every path can be rebuilt by reference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from profdiff.parsers.model import Metric, Profile

from . import __version__
from .compare import MATCHED_BY, Comparison, Status
from .run_labels import distinct_labels, labels_of

PATH_LIMIT = 32
"""Labels of ``path`` kept per row; deeper rows give the nearest ones (and ``parent``)."""


def bounded_path(label, parent: np.ndarray, row: int) -> list[str]:
    """``path`` of ``row``: labels from the root, or ``"…"`` and the last PATH_LIMIT."""
    out: list[str] = []
    while row >= 0 and len(out) < PATH_LIMIT:
        out.append(label(row))
        row = int(parent[row])
    if row >= 0:
        out.append("…")
    return out[::-1]


def bounded_paths(label, parent: np.ndarray, rows: Sequence[int]) -> list[list[str]]:
    """:func:`bounded_path` of every row of ``rows``, each ancestor's path built once.

    Why: walking up from every row called ``label`` depth times per row (7.6 M calls and
    10 of the 15 s of ``show --json --top 0`` on a 425k-node pprof); a row's path is its
    parent's plus its own label, so each is a tuple concatenation."""
    memo: dict[int, tuple[tuple[str, ...], bool]] = {}  # row -> (last labels, cut)

    def path_of(row: int) -> tuple[tuple[str, ...], bool]:
        chain = []
        while row >= 0 and row not in memo:
            chain.append(row)
            row = int(parent[row])
        labels, cut = memo[row] if row >= 0 else ((), False)
        for r in reversed(chain):
            labels += (label(r),)
            if len(labels) > PATH_LIMIT:
                labels, cut = labels[1:], True
            memo[r] = (labels, cut)
        return labels, cut

    out = []
    for row in rows:
        labels, cut = path_of(int(row))
        out.append(["…", *labels] if cut else list(labels))
    return out


def ancestors_json(label_parts, parent: np.ndarray,
                   rows: np.ndarray | Sequence[int] | range) -> list[dict]:
    """The ancestors of ``rows`` not in ``rows`` (each once): ids to follow ``parent``."""
    listed = {int(i) for i in rows}
    seen: set[int] = set()
    out = []
    for i in rows:
        a = int(parent[int(i)])
        while a >= 0 and a not in listed and a not in seen:
            seen.add(a)
            name, module = label_parts(a)
            out.append({"id": a, "name": name, "module": module,
                        "parent": int(parent[a]) if parent[a] >= 0 else None})
            a = int(parent[a])
    out.sort(key=lambda d: d["id"])
    return out


def _cmp_label(cmp: Comparison):
    def label(row: int) -> str:
        m = cmp.module[row]
        return f"{m}.{cmp.name[row]}" if m else str(cmp.name[row])
    return label


def _num(v: Any) -> float | int | None:
    if v is None:
        return None
    f = float(v)
    if not math.isfinite(f):
        return None
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def metric_json(m: Metric) -> dict[str, Any]:
    d: dict[str, Any] = {"unit": str(m.unit), "kind": str(m.kind), "label": m.title}
    if m.description:
        d["description"] = m.description
    if m.sampled:
        d["sampled"] = True
    return d


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return False
    return True


def run_json(p: Profile, label: str | None = None) -> dict[str, Any]:
    """One run's facts; ``label``: how the run is named in tables (its shortest
    distinguishing path suffix or the user's ``--label``; default its file name)."""
    d: dict[str, Any] = {
        "path": p.path,
        "label": label if label is not None else distinct_labels([str(p.path)])[0],
        "format": p.format,
        "incomplete": p.incomplete,
        "incomplete_reason": p.incomplete_reason or None,
        "warnings": list(p.warnings),
        "meta": {k: v for k, v in p.meta.items() if _jsonable(v)},
        "totals": {k: _num(v) for k, v in p.totals.items()},
        "nodes": p.n_nodes,
        "precision": {m.name: _precision_json(p, m.name) for m in p.metrics},
    }
    for k, v in p.extras.items():
        if k not in d and _jsonable(v):
            d[k] = v
    return d


def _precision_json(p: Profile, metric: str) -> dict[str, Any]:
    """How exact a run's values of ``metric`` are: exact, rounded (+- half_width) or sampled."""
    d: dict[str, Any] = {"kind": p.precision(metric)}
    h = p.rounding.get(metric, 0.0)
    if h:
        d["half_width"] = _num(h)
        d["derived_from"] = "a printed, rounded percentage"
    return d


def _status_label(cmp: Comparison, i: int, run: int) -> str:
    """A row's status in ``run``; "absent" when neither that run nor the baseline has it
    (with 3+ runs a row may exist only in another run: it is never "same")."""
    if not cmp.present[i, run] and not cmp.present[i, cmp.baseline]:
        return "absent"
    return Status(int(cmp.status_of_run(run)[i])).label


def row_json(cmp: Comparison, i: int, metrics: Sequence[str],
             depth: np.ndarray | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": cmp.name[i],
        "module": cmp.module[i],
        "src": cmp.src[i],
    }
    if cmp.mode == "tree":
        par = int(cmp.parent[i])
        row["id"] = i
        row["parent"] = par if par >= 0 else None
        row["depth"] = int(depth[i]) if depth is not None else None
        row["path"] = bounded_path(_cmp_label(cmp), cmp.parent, i)
    row["status"] = _status_label(cmp, i, cmp.current)
    if row["status"] in ("changed", "moved"):  # the metrics it rests on (maybe not shown)
        row["changed_by"] = cmp.changed_by(i)
    row["matched_by"] = MATCHED_BY[int(cmp.matched_by[i]) if cmp.matched_by is not None else 0]
    if row["matched_by"] != "path":  # each run's own spelling of a renamed row
        row["names"] = [None if x is None else {"name": x[0], "module": x[1]}
                        for x in cmp.run_names(i)]
    row["values"] = [
        {m: _num(cmp.values[m][i, r]) for m in metrics} if cmp.present[i, r] else None
        for r in range(cmp.n_runs)
    ]
    row["delta"] = {m: _num(cmp.values[m][i, cmp.current] - cmp.values[m][i, cmp.baseline])
                    for m in metrics}
    rel: dict[str, Any] = {}
    within: list[str] = []
    for m in metrics:
        b = cmp.values[m][i, cmp.baseline]
        d = cmp.values[m][i, cmp.current] - b
        if d and m in cmp.rounding and not cmp.changed_at(m, i):
            within.append(m)  # no change the rounded values can support: no Δ%
            rel[m] = None
            continue
        rel[m] = _num(d / abs(b)) if b else (0 if d == 0 else None)
    row["rel"] = rel
    if within:
        row["within_precision"] = within
    if cmp.noise is not None:
        row["noise"] = {
            m: _noise_json(cmp.noise.metrics[m], i) for m in metrics if m in cmp.noise.metrics
        }
    if cmp.n_runs > 2:
        row["statuses"] = [None if r == cmp.baseline else _status_label(cmp, i, r)
                           for r in range(cmp.n_runs)]
        row["deltas"] = [
            None if r == cmp.baseline else
            {m: _num(cmp.values[m][i, r] - cmp.values[m][i, cmp.baseline]) for m in metrics}
            for r in range(cmp.n_runs)
        ]
    return row


def _noise_json(mn, i: int) -> dict[str, Any]:
    d = {
        "base": {"mean": _num(mn.base_mean[i]), "std": _num(mn.base_std[i]),
                 "min": _num(mn.base_min[i]), "max": _num(mn.base_max[i])},
        "new": {"mean": _num(mn.new_mean[i]), "std": _num(mn.new_std[i]),
                "min": _num(mn.new_min[i]), "max": _num(mn.new_max[i])},
        "p": _num(mn.pvalue_at(i)),
        "significant": bool(mn.significant[i]) if mn.judged else None,
    }
    if mn.detectable is not None:
        d["min_detectable_rel"] = _num(mn.min_detectable_at(i))
    return d


def comparison_json(
    cmp: Comparison, rows: np.ndarray | Sequence[int] | None = None,
    metrics: Sequence[str] | None = None, *, lazy: bool = False,
) -> dict[str, Any]:
    """The ``diff --json`` document; ``lazy``: ``rows`` is a generator (for
    :func:`write_json`, which streams it, so memory stays flat however many rows)."""
    metrics = list(metrics) if metrics is not None else list(cmp.values)
    rows = range(cmp.n_rows) if rows is None else rows
    depth = cmp.depth if cmp.mode == "tree" else None
    totals: dict[str, Any] = {}
    for k in cmp.total_keys:
        vals = cmp.total_values(k)
        b, n = vals[cmp.baseline], vals[cmp.current]
        totals[k] = {
            "values": [_num(v) for v in vals],
            "delta": _num(n - b) if b is not None and n is not None else None,
        }
        if cmp.n_runs > 2:
            totals[k]["deltas"] = [None if r == cmp.baseline or v is None or b is None
                                   else _num(v - b) for r, v in enumerate(vals)]
    return {
        "profdiff": __version__,
        "mode": cmp.mode,
        "baseline": cmp.baseline,
        "current": cmp.current,
        "metrics": {m.name: metric_json(m) for m in cmp.metrics if m.name in metrics},
        "runs": [run_json(p, lab) for p, lab in zip(cmp.runs, labels_of(cmp), strict=True)],
        "totals": totals,
        "status_counts": cmp.status_counts(),
        "notes": list(cmp.notes),
        "noise": None if cmp.noise is None else {
            "runs_per_side": [cmp.noise.n_base, cmp.noise.n_new],
            "alpha": cmp.noise.alpha,
            "methods": {m: mn.method for m, mn in cmp.noise.metrics.items() if m in metrics},
        },
        "groups": None if cmp.groups is None else [[p.path for p in g] for g in cmp.groups],
        "rows": (row_json(cmp, int(i), metrics, depth) for i in rows) if lazy
        else [row_json(cmp, int(i), metrics, depth) for i in rows],
        **({"ancestors": ancestors_json(lambda a: (cmp.name[a], cmp.module[a]), cmp.parent,
                                        rows)} if cmp.mode == "tree" else {}),
    }


def write_json(doc: dict[str, Any], out) -> None:
    """Write ``doc`` as indented JSON, but each element of ``rows`` compact on one line.

    ``json.dumps(indent=...)`` falls back to the pure-Python encoder (about 10x slower)
    and builds the whole text in memory; rows are the bulk, so they are encoded one by
    one with the C encoder and written as they come (``rows`` may be a generator).
    """
    rows = doc.get("rows")
    head = {k: v for k, v in doc.items() if k != "rows"}
    text = json.dumps(head, ensure_ascii=False, indent=1)
    if rows is None:
        out.write(text + "\n")
        return
    out.write(text[:-2] + (',\n "rows": [' if head else '{\n "rows": ['))
    first = True
    for r in rows:
        out.write(("\n  " if first else ",\n  ") + json.dumps(r, ensure_ascii=False))
        first = False
    out.write("\n ]\n}\n" if not first else "]\n}\n")


def profile_json(p: Profile, rows: Sequence[int], run_label: str | None = None
                 ) -> dict[str, Any]:
    """``profdiff show --json``: one run, its metrics and the listed rows (tree order)."""
    names = [m.name for m in p.metrics]

    name, module = p.name, p.module

    def label(row: int) -> str:
        m = module[row]
        return f"{m}.{name[row]}" if m else str(name[row])

    ids = np.asarray(rows, dtype=np.int64)
    paths = bounded_paths(label, p.parent, ids.tolist())
    values = {m: [_num(v) for v in np.asarray(p.values[m])[ids].tolist()] for m in names}
    parents, depths = p.parent[ids].tolist(), p.depth[ids].tolist()
    return {
        "profdiff": __version__,
        "run": run_json(p, run_label),
        "metrics": {m.name: metric_json(m) for m in p.metrics},
        "rows": [
            {
                "name": name[i],
                "module": module[i],
                "src": p.src[i],
                "id": i,
                "parent": parents[k] if parents[k] >= 0 else None,
                "depth": depths[k],
                "path": paths[k],
                "values": {m: values[m][k] for m in names},
            }
            for k, i in enumerate(ids.tolist())
        ],
        "ancestors": ancestors_json(lambda a: (name[a], module[a]), p.parent, rows),
    }
