"""The comparison report's content, as one JSON-ready dict (Qt-free).

``profdiff report`` writes it as a self-contained HTML page (:mod:`viewer.export.
html_report`) or as GitHub Markdown (:mod:`viewer.export.markdown_report`); both read
the same document so the page, the pull-request comment and ``diff`` agree:

* ``totals``: run-level numbers with their Δ;
* ``changes``: rows culprit first (:meth:`viewer.session.Session.culprits`) with a
  verdict per row (:func:`verdicts`);
* ``flame``: the tree comparison laid out (:mod:`viewer.flame_layout`), coloured against
  the baseline's total (:func:`viewer.view_state.colour_change` semantics), pruned below a
  width threshold for big trees (``flame.pruned`` says how much was left out);
* ``warnings``: incomplete runs, incomparable options, unmatched renames.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from profdiff.viewer import __version__
from profdiff.viewer.compare import Status
from profdiff.viewer.run_labels import labels_of
from profdiff.viewer.units import (
    digits_rounding,
    format_delta,
    format_rel,
    format_total_delta,
    format_value,
)
from profdiff.viewer.units import format_many as _format_many

if TYPE_CHECKING:
    from profdiff.viewer.compare import Comparison
    from profdiff.viewer.gate import Gate
    from profdiff.viewer.ranking import Ranking
    from profdiff.viewer.session import Session
    from profdiff.viewer.view_state import ViewState

MAX_CHANGES = 500  # ranked rows kept in the page (the table filters these)
MAX_FRAMES = 20_000  # flame/tree rows kept; below that the smallest are pruned
MIN_FRAME_WIDTH = 1e-4  # fraction of the total width below which a frame is pruned

REAL, NOISE, ROUNDING, SAME = "real", "within noise", "within rounding", "no change"
NOT_JUDGED = "not judged"  # a timed metric, one run per side (Status.MOVED)


def _num(v: Any) -> float | None:
    f = float(v) if v is not None else float("nan")
    return f if np.isfinite(f) else None


def verdicts(cmp: Comparison, metrics: Sequence[str]) -> np.ndarray:
    """Per row: "real" (beyond precision and, when sampled, significant), "within noise"
    (beyond precision but not significant), "not judged" (beyond precision in a timed
    metric with one run per side: :attr:`Status.MOVED`), "within rounding" (a nonzero Δ
    the rounded values cannot support) or "no change"; added/removed rows say so."""
    n = cmp.n_rows
    real = np.zeros(n, bool)
    noisy = np.zeros(n, bool)
    unjudged = np.zeros(n, bool)
    rounded = np.zeros(n, bool)
    for m in metrics:
        if m not in cmp.values:
            continue
        moved = cmp.changed_mask(m)
        d = np.nan_to_num(cmp.delta(m))
        rounded |= ~moved & (d != 0)
        if not cmp.is_judged(m):
            unjudged |= moved
            continue
        sig = np.ones(n, bool)
        met = cmp.metric_by_name[m]
        if (met.sampled or cmp.groups is not None) and cmp.noise is not None and \
                m in cmp.noise.metrics:
            sig = np.asarray(cmp.noise.metrics[m].significant, bool)
        real |= moved & sig
        noisy |= moved & ~sig
    out = np.full(n, SAME, dtype=object)
    out[rounded] = ROUNDING
    out[noisy] = NOISE
    out[unjudged] = NOT_JUDGED
    out[real] = REAL
    st = np.asarray(cmp.status)
    out[st == Status.ADDED] = "added"
    out[st == Status.REMOVED] = "removed"
    return out


def totals_json(cmp: Comparison) -> list[dict[str, Any]]:
    out = []
    for k in cmp.total_keys:
        vals = cmp.total_values(k)
        m = cmp.total_metric(k)
        unit = m.unit if m else "count"
        b, c = vals[cmp.baseline], vals[cmp.current]
        d = c - b if b is not None and c is not None else None
        rel = d / abs(b) if d is not None and b else None
        out.append({"key": k, "label": m.title if m else k, "values": [_num(v) for v in vals],
                    "text": [format_value(v, unit) for v in vals],
                    "delta": _num(d), "delta_text": format_total_delta(b, c, unit) if d is not None
                    else "", "rel_text": format_rel(rel) if rel is not None else ""})
    return out


def changes_json(cmp: Comparison, ranking: Ranking, limit: int = MAX_CHANGES,
                 rows: np.ndarray | None = None, metrics: Sequence[str] | None = None
                 ) -> dict[str, Any]:
    """The ranked rows (culprit first; ``rows``: the ones the view keeps, in that order)
    with values and Δ of ``metrics`` (default: the ranked ones) and each row's verdict
    over the ranked metrics."""
    verdict = verdicts(cmp, [m for m in ranking.metrics if m in cmp.values])
    metrics = [m for m in (metrics or ranking.metrics) if m in cmp.values]
    rows = ranking.order if rows is None else rows
    rows = rows[:limit] if limit > 0 else rows
    units = {m: cmp.metric_by_name[m].unit for m in metrics}
    out = []
    for rank, i in enumerate(rows.tolist(), 1):
        vals = {}
        for m in metrics:
            b = float(cmp.values[m][i, cmp.baseline])
            c = float(cmp.values[m][i, cmp.current])
            hb, hc = (digits_rounding(cmp.runs, m, r) for r in (cmp.baseline, cmp.current))
            vals[m] = {"base": _num(b), "new": _num(c), "delta": _num(c - b),
                       "text": [format_value(b, units[m], rounding=hb),
                                format_value(c, units[m], rounding=hc),
                                format_delta(c - b, units[m], rounding=hb + hc),
                                format_rel((c - b) / abs(b)) if b else ""]}
        out.append({"rank": rank, "name": str(cmp.name[i]), "module": str(cmp.module[i]),
                    "score": float(ranking.score[i]), "metric": ranking.metric_of(i),
                    "verdict": str(verdict[i]), "values": vals})
    counts: dict[str, int] = {}
    for v in verdict.tolist():
        counts[v] = counts.get(v, 0) + 1
    return {"metrics": metrics, "labels": {m: cmp.metric_by_name[m].title for m in metrics},
            "rows": out, "total_rows": int(cmp.n_rows), "verdict_counts": counts}


def format_many(values: np.ndarray, unit: Any, delta: bool = False,
                rounding: float = 0.0) -> list[str]:
    """:func:`~viewer.units.format_many`: the shared formatter over a column (kept here
    under its old name for the report's callers)."""
    return _format_many(values, unit, delta=delta, rounding=rounding)


def _keep_rows(widths: np.ndarray, max_frames: int, min_width: float) -> tuple[np.ndarray, float]:
    """Every row when there are at most ``max_frames``; else the rows at least
    ``min_width`` wide (fractions), the threshold raised so at most ``max_frames`` stay.
    A child is never wider than its parent, so every kept row's ancestors are kept."""
    if len(widths) <= max_frames:  # small enough to keep whole
        return np.arange(len(widths)), 0.0
    thr = min_width
    if np.count_nonzero(widths >= thr) > max_frames:
        thr = float(np.partition(widths, len(widths) - max_frames)[len(widths) - max_frames])
        thr = max(thr, min_width)
        if np.count_nonzero(widths >= thr) > max_frames:  # ties at the threshold
            thr = float(np.nextafter(thr, np.inf))
    return np.flatnonzero(widths >= thr), thr


def flame_json(cmp: Comparison, metric: str, *, max_frames: int = MAX_FRAMES,
               min_width: float = MIN_FRAME_WIDTH) -> dict[str, Any]:
    """The tree comparison laid out and coloured (see the module docstring)."""
    from profdiff.viewer.flame_layout import (
        default_width_metric,
        inclusive_values,
        layout_comparison,
        row_colors,
        scale_for,
        self_values,
    )

    width_metric = default_width_metric(cmp, metric)
    lay = layout_comparison(cmp, width_metric, "current")
    keep, thr = _keep_rows(lay.width, max_frames, min_width)
    remap = np.full(cmp.n_rows, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    par = cmp.parent[keep]
    parent = np.where(par >= 0, remap[np.maximum(par, 0)], -1)
    rgb = row_colors(cmp, metric, "self_pct", scale_for(cmp, metric, "self_pct"))[keep]
    inc = inclusive_values(cmp, width_metric)[keep]
    own = self_values(cmp, width_metric)[keep]
    unit = cmp.metric_by_name[width_metric].unit
    b, c = inc[:, cmp.baseline], inc[:, cmp.current]
    hb, hc = (digits_rounding(cmp.runs, width_metric, r) for r in (cmp.baseline, cmp.current))
    shown_share = float(lay.width[keep][parent < 0].sum()) if len(keep) else 0.0
    dropped_share = float(lay.width[cmp.parent < 0].sum()) - shown_share
    return {
        "metric": width_metric, "colour_metric": metric,
        "label": cmp.metric_by_name[width_metric].title,
        "n": int(len(keep)), "total_rows": int(cmp.n_rows),
        "pruned": int(cmp.n_rows - len(keep)), "threshold": thr,
        "dropped_share": max(dropped_share, 0.0),
        "parent": parent.tolist(), "depth": cmp.depth[keep].tolist(),
        "x0": np.round(lay.x0[keep], 9).tolist(), "w": np.round(lay.width[keep], 9).tolist(),
        "name": [str(x) for x in cmp.name[keep]], "module": [str(x) for x in cmp.module[keep]],
        "colour": [f"#{r:02x}{g:02x}{b_:02x}" for r, g, b_ in rgb.tolist()],
        "status": np.array([s.label for s in Status], dtype=object)[
            np.asarray(cmp.status)[keep]].tolist(),
        "base": format_many(b, unit, rounding=hb), "new": format_many(c, unit, rounding=hc),
        "delta": format_many(c - b, unit, delta=True, rounding=hb + hc),
        "self_delta": format_many(own[:, cmp.current] - own[:, cmp.baseline], unit, delta=True,
                                  rounding=hb + hc),
    }


def warnings_json(session: Session, cmp: Comparison) -> list[str]:
    """Incomplete runs, reader warnings, incomparable options, unmatched renames."""
    from profdiff.viewer.compare import incomparable_warnings
    from profdiff.viewer.suggest import suggest_matches

    out = []
    for p in cmp.runs:
        if p.incomplete:
            out.append(f"{p.path}: incomplete run ({p.incomplete_reason or 'cut short'}); "
                       "its values are partial")
        out.extend(f"{p.path}: {w}" for w in p.warnings)
    out.extend(incomparable_warnings(cmp.runs))
    if cmp.n_runs >= 2 and session.spec.auto_match is None:
        try:
            sugg = suggest_matches(cmp)
        except Exception:  # noqa: BLE001 - a hint, never a reason to fail the report
            sugg = []
        for s in sugg[:20]:
            out.append("possible rename not matched (try --auto-match or a rule): "
                       + s.describe())
        if len(sugg) > 20:
            out.append(f"... and {len(sugg) - 20} more possible renames")
    return out


def gates_json(cmp: Comparison, gates: Sequence[Gate], allow_incomplete: bool = False
               ) -> dict[str, Any] | None:
    """The ``--fail-if`` result as ``diff`` judges it: an incomplete run is not judged
    (``failed`` None and ``not_judged`` the reason) unless ``allow_incomplete``."""
    if not gates:
        return None
    from profdiff.viewer.diff_cli import incomplete_gate_error, violation_json, violations_text
    from profdiff.viewer.gate import evaluate

    refused = "" if allow_incomplete else incomplete_gate_error(cmp)
    if refused:
        return {"expressions": [g.text for g in gates], "failed": None, "violations": [],
                "not_judged": refused, "text": f"fail-if not judged: {refused}"}
    violations = evaluate(cmp, list(gates))
    return {"expressions": [g.text for g in gates], "failed": bool(violations),
            "violations": [violation_json(v) for v in violations[:200]],
            "text": violations_text(violations, cmp)}


def report_document(session: Session, gates: Sequence[Gate] = (), view: ViewState | None = None,
                    *, max_frames: int = MAX_FRAMES, min_width: float = MIN_FRAME_WIDTH,
                    max_changes: int = MAX_CHANGES, allow_incomplete: bool = False
                    ) -> dict[str, Any]:
    """Everything the report shows (see the module docstring).  ``view``: the display
    options of ``diff`` (``--metrics``, ``--filter``, ``--changed-only``, ...) choose the
    columns and rows of the ranked changes, exactly as ``diff`` prints them."""
    from profdiff.viewer.diff_cli import shown_rows, table_metrics
    from profdiff.viewer.noise import run_level_notes
    from profdiff.viewer.ranking import main_metrics
    from profdiff.viewer.reading_notes import reading_notes
    from profdiff.viewer.view_state import ViewState

    cmp = session.main
    session.judge_every_metric(cmp, [g.metric for g in gates if not g.total])
    ranking = session.culprits(cmp)
    view = view or ViewState()
    top = (ranking.changed_metrics() or list(ranking.metrics) or [""])[0]
    metrics = table_metrics(cmp, view, top, ranking) if cmp.values else []
    rows = shown_rows(session, cmp, view, top, "rank", True, metrics, order=ranking.order)
    doc: dict[str, Any] = {
        "profdiff": __version__, "mode": cmp.mode,
        "runs": [{"path": p.path, "label": lab, "format": p.format, "incomplete": p.incomplete}
                 for p, lab in zip(cmp.runs, labels_of(cmp), strict=True)],
        "baseline": cmp.baseline, "current": cmp.current,
        "totals": totals_json(cmp),
        "changes": changes_json(cmp, ranking, max_changes, rows, metrics),
        "notes": [*cmp.notes, *reading_notes(cmp.runs), *run_level_notes(cmp)],
        "warnings": warnings_json(session, cmp),
        "fail_if": gates_json(cmp, gates, allow_incomplete),
        "flame": None,
    }
    try:
        # the flame's statuses (the current run's) judged as the window's diff tree and
        # diff --tree judge them (by precision alone, two runs of one hs-ad binary read 61
        # of 239 frames changed)
        tree = session.tree
        session.noise(tree, tree.status_metrics(sampled_only=True))
        ranked = main_metrics(tree)
        if tree.n_rows and ranked and (tree.parent >= 0).any():
            colour = (session.culprits(tree).changed_metrics() or list(ranked))[0]
            doc["flame"] = flame_json(tree, colour, max_frames=max_frames,
                                      min_width=min_width)
    except (KeyError, ValueError) as e:
        doc["warnings"].append(f"no flame graph: {e}")
    return doc
