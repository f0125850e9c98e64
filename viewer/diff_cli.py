"""``profdiff diff``: the ranked comparison in the terminal, ``--json`` and ``--fail-if``.

The same :class:`~viewer.session.Session` and :class:`~viewer.view_state.ViewState` the
desktop app builds from the same options (:mod:`viewer.options`), printed as a table.
:func:`print_comparison` is also what the app prints when there is no display.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .options import UsageError, add_session_options, spec_from_args, view_from_args

if TYPE_CHECKING:
    import numpy as np

    from .compare import Comparison
    from .gate import Gate
    from .ranking import Ranking
    from .session import Session
    from .view_state import ViewState

DESCRIPTION = ("Compare BASE with NEW (and more runs). By default rows are ranked culprit "
               "first: by their own change against the baseline's total over the format's "
               "main metrics, beyond precision and noise. --sort ranks by one column.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session_options(p)
    g = p.add_argument_group("output")
    g.add_argument("--sort", metavar="METRIC[:HOW]",
                   help="rank by METRIC; HOW is delta (default), abs, rel, base or new; "
                   "prefix '-' for the largest decrease first")
    g.add_argument("--top", type=int, default=25, help="rows to print (0 = all; default 25)")
    g.add_argument("--all-metrics", action="store_true", help="--json: every metric per row")
    g.add_argument("--json", action="store_true", help="machine-readable output (see README)")
    g.add_argument("--allow-mixed-formats", action="store_true",
                   help="compare runs of different formats (an error by default: their "
                   "metrics rarely mean the same)")
    g.add_argument("--fail-if", action="append", metavar="EXPR",
                   help="exit 1 when a change crosses EXPR, e.g. 'alloc_bytes>+10%%' or "
                   "'total.total_alloc_bytes>+5%%'; may be repeated")
    g.add_argument("--allow-incomplete", action="store_true",
                   help="let --fail-if judge runs that are marked incomplete (cut files); "
                   "without it such a run makes the gate exit 2 with the reason")
    g.add_argument("--report", metavar="OUT",
                   help="also write the report (profdiff report) to OUT: .html, or .md "
                   "for Markdown")


def run(args: argparse.Namespace) -> int:
    from .gate import parse_gate
    from .session import Session

    gates = [parse_gate(g) for g in args.fail_if or []]
    spec = spec_from_args(args, "flat")
    if not spec.grouped and len(spec.files) < 2:
        raise UsageError("diff needs at least two files: BASE NEW [MORE...] "
                         "(or --base A1 A2 --new B1 B2 for repeated runs)")
    loaded = _load_all(spec, args.json)
    if loaded is None:
        return 2
    session = Session.open(spec, loader=lambda path, **_kw: loaded[path])
    refuse_mixed_formats(session, getattr(args, "allow_mixed_formats", False), args.json)
    view = view_from_args(args)
    rc = print_comparison(session, view, sort=args.sort, top=args.top, as_json=args.json,
                          all_metrics=args.all_metrics, gates=gates,
                          allow_incomplete=args.allow_incomplete)
    if getattr(args, "report", None):  # the same session: read and judged once
        from .report_cli import write_report

        write_report(session, args.report, gates, view,
                     markdown=args.report.lower().endswith(".md"),
                     allow_incomplete=args.allow_incomplete)
    return rc


_MIXED_WHY: dict[tuple[str, ...], str] = {
    ("ghc-prof", "ghc-prof-json"):
        "The two are one profiler's output, but the -pj JSON also lists the cost centres "
        "the text report hides (GC, SYSTEM, IDLE and the CAFs that cost nothing), which "
        "then read as added, and its percentages are of totals that include them",
}
"""Why a pair of formats is not compared by default, where the general reason would be
wrong: a .prof and a -pj JSON of GHC hold the same metrics."""


def refuse_mixed_formats(session: Session, allowed: bool, as_json: bool = False) -> None:
    """Runs of different formats are not compared unless asked for (``diff``, ``report``):
    their metrics rarely mean the same thing.  Raises UsageError naming every run's format
    (``as_json``: also prints the ``errors`` document)."""
    formats = sorted({p.format for p in session.runs})
    if len(formats) <= 1 or allowed:
        return
    by_format = "; ".join(f"{p.path}: {p.format}" for p in session.runs)
    why = _MIXED_WHY.get(tuple(formats), "Their metrics do not mean the same thing")
    msg = (f"runs have different formats ({', '.join(formats)}): {by_format}. {why}; give "
           "--allow-mixed-formats to compare them anyway")
    if as_json:
        print(json.dumps({"errors": [{"message": msg, "formats": formats}]}, indent=1))
    raise UsageError(msg)


def _load_all(spec, as_json: bool) -> dict | None:
    """Read every input; when some fail, print each error (``--json``: a document with
    the runs that loaded and ``errors``: ``[{"path", "error"}]``) and return None."""
    from .options import lenient_hint_for
    from .report import run_json, write_json
    from .run_labels import distinct_labels
    from .session import Slot, load_slots

    paths = list(dict.fromkeys(spec.paths))
    outcome = load_slots(spec, [Slot(p) for p in paths])
    if not outcome.errors:
        return dict(zip(paths, outcome.slot_runs, strict=True))
    for path, msg in outcome.errors:
        hint = "" if spec.lenient else lenient_hint_for(path, spec.format,
                                                        dict(spec.reader_options))
        print(f"profdiff: error: {msg}{hint}", file=sys.stderr)
    if as_json:
        from . import __version__

        write_json({"profdiff": __version__,
                    "runs": [run_json(p, lab) for p, lab in zip(
                        outcome.slot_runs, distinct_labels(paths, dict(spec.labels)),
                        strict=True) if p is not None],
                    "errors": [{"path": p, "error": m} for p, m in outcome.errors]},
                   sys.stdout)
    return None


def incomplete_gate_error(cmp: Comparison) -> str:
    """Why ``--fail-if`` cannot judge: a cut run gives bogus "added"/"removed" rows and
    passes or fails for the wrong reason ("" when every run is complete)."""
    cut = [p for p in cmp.runs if p.incomplete]
    if not cut:
        return ""
    return "; ".join(f"{p.path} is incomplete ({p.incomplete_reason or 'file cut short'})"
                     for p in cut) + (": --fail-if does not judge incomplete runs (pass "
                                      "--allow-incomplete to gate on what was read)")


def parse_sort(spec: str | None, cmp: Comparison, view: ViewState | None = None
               ) -> tuple[str, str, bool]:
    """``METRIC[:delta|abs|rel|base|new]``, leading ``-`` for ascending (biggest drop first).
    Without one: the format's main metric (in the unit ``view`` asks for), by delta."""
    from .compare import comparable_metrics

    known = [m.name for m in comparable_metrics(cmp)] or list(cmp.values)
    if not spec:
        base = cmp.runs[cmp.baseline]
        metric = base.default_metric if base.default_metric in known else (known[0] if known else "")
        if metric and view is not None:
            metric = next((m for m in view.convert_units(cmp, [metric]) if m in known), metric)
        return metric, "delta", True
    desc = not spec.startswith("-")
    spec = spec.lstrip("-+")
    metric, _, how = spec.partition(":")
    how = how or "delta"
    if metric not in cmp.values:
        raise UsageError(f"--sort: unknown metric {metric!r}; metrics: {', '.join(cmp.values)}")
    if how not in ("delta", "abs", "rel", "base", "new"):
        raise UsageError(f"--sort: unknown order {how!r}; use delta, abs, rel, base or new")
    return metric, how, desc


def table_metrics(cmp: Comparison, view: ViewState, sort_metric: str,
                  ranking: Ranking | None = None) -> list[str]:
    """The columns: ``--metrics`` as given, else (ranked) the main metrics that changed,
    then the format's shown metrics in the unit mode with the sort metric first, at most
    three (a wide terminal)."""
    from .show_cli import metric_list

    if view.metrics:
        metrics = metric_list(",".join(view.metrics), [], list(cmp.values))
        return metrics if not sort_metric or sort_metric in metrics else [sort_metric, *metrics]
    default = [m for m in cmp.runs[cmp.baseline].shown_metrics if m in cmp.values]
    default = [m for m in view.convert_units(cmp, default) if m in cmp.values]
    if ranking is not None:
        changed = ranking.changed_metrics() or list(ranking.metrics)
        default = [*changed, *(m for m in default if m not in changed)]
    metrics = ([sort_metric] if sort_metric else []) + [m for m in default if m != sort_metric]
    return metrics[:3]


def shown_rows(session: Session, cmp: Comparison, view: ViewState, metric: str, how: str,
               desc: bool, metrics: Sequence[str], order: np.ndarray | None = None
               ) -> np.ndarray:
    """Ranked rows (``order``, or by ``how`` of ``metric``) after the view's filter text,
    "changed only", "significant only" and |Δ| threshold (the window hides the same rows)."""
    import numpy as np

    from .session import RANKING

    if order is None:
        order = RANKING(cmp, metric, how, desc) if metric else np.arange(cmp.n_rows)
    if view.significant_only:
        nz = session.noise(cmp, [metric]) if metric else None
        if nz is None or metric not in nz.metrics:
            raise UsageError("--significant-only needs a two-run (or two-group) comparison")
    if (err := view.filter_error()) is not None:
        raise UsageError(f"--filter: {err}")
    keep = view.keep_mask(cmp, metrics=metrics, sig_metric=metric, noise=session.noise)
    text = view.text_mask(cmp)
    if text is not None:
        keep = text if keep is None else keep & text
    return order if keep is None else order[keep[order]]


def print_comparison(session: Session, view: ViewState, *, sort: str | None = None,
                     top: int = 25, as_json: bool = False, all_metrics: bool = False,
                     gates: Sequence[Gate] = (), allow_incomplete: bool = False) -> int:
    """Print the session's main comparison as the table (or ``--json``); 1 when a gate
    of ``gates`` was crossed, 2 when a gate cannot judge an incomplete run (unless
    ``allow_incomplete``), else 0."""
    from .compare import incomparable_warnings
    from .gate import evaluate
    from .noise import run_level_notes
    from .table import render_comparison, use_color

    cmp = session.main
    session.judge_every_metric(cmp, [g.metric for g in gates if not g.total])
    ranking = session.culprits(cmp)
    metric, how, desc = parse_sort(sort, cmp, view)
    if not sort:  # culprit first: own change against the baseline's total
        metric, how, desc = (ranking.changed_metrics() or list(ranking.metrics)
                             or [metric])[0], "rank", True
    metrics = table_metrics(cmp, view, metric, ranking if how == "rank" else None)
    out_metrics = list(cmp.values) if all_metrics else metrics
    rows = shown_rows(session, cmp, view, metric, how, desc, metrics,
                      order=ranking.order if how == "rank" else None)
    rows = rows[:top] if top > 0 else rows
    refused = incomplete_gate_error(cmp) if gates and not allow_incomplete else ""
    violations = evaluate(cmp, list(gates)) if gates and not refused else []
    notes = run_level_notes(cmp)
    if as_json:
        from .report import write_json

        doc = diff_document(cmp, rows, out_metrics, (metric, how, desc), gates, violations)
        doc["notes"] = [*doc.get("notes", []), *notes]
        doc["warnings"] = incomparable_warnings(cmp.runs)  # e.g. mixed formats, if allowed
        if how == "rank":
            doc["sort"]["metrics"] = list(ranking.metrics)
        doc["rows"] = _with_scores(doc["rows"], rows, ranking)
        if refused:
            doc["fail_if"]["failed"] = None
            doc["fail_if"]["not_judged"] = refused
            doc["errors"] = [{"path": p.path, "error": f"incomplete: {p.incomplete_reason}"}
                             for p in cmp.runs if p.incomplete]
        write_json(doc, sys.stdout)
    else:
        if how == "rank":
            sort_desc = ("ranked by own change against the baseline's total of "
                         + " and ".join(ranking.metrics))
        else:
            sort_desc = f"sorted by {'−' if not desc else ''}{how} of {metric}" if metric else ""
        print(render_comparison(cmp, rows, metrics, color=use_color(), sort_desc=sort_desc,
                                notes=notes))
        if gates and not refused:
            print(violations_text(violations, cmp))
    if refused:
        print(f"profdiff: error: {refused}", file=sys.stderr)
        return 2
    return 1 if violations else 0


def _with_scores(docs, rows, ranking):
    """Each row document with its culprit score (own change / baseline total) and the
    metric that gave it; a generator, so streamed JSON stays streamed."""
    for r, i in zip(docs, rows, strict=True):
        r["score"] = float(ranking.score[i])
        r["score_metric"] = ranking.metric_of(i) or None
        yield r


def diff_document(cmp: Comparison, rows, metrics: Sequence[str], sort: tuple[str, str, bool],
                  gates: Sequence[Gate], violations: list) -> dict[str, Any]:
    """The ``--json`` document (README: "JSON output"); add top-level keys here."""
    from .report import comparison_json

    doc = comparison_json(cmp, rows, metrics, lazy=True)
    doc["sort"] = {"metric": sort[0], "by": sort[1], "descending": sort[2]}
    if gates:
        doc["fail_if"] = {
            "expressions": [g.text for g in gates],
            "failed": bool(violations),
            "violations": [violation_json(v) for v in violations],
        }
    return doc


def violation_json(v) -> dict:
    import numpy as np

    return {
        "expression": v.gate.text, "row": v.row, "label": v.label,
        "name": v.name, "module": v.module,
        "base": v.base, "new": v.new,
        "change": v.change if np.isfinite(v.change) else None,
        "relative": v.gate.relative,
    }


def violations_text(violations, cmp: Comparison) -> str:
    from .units import format_delta, format_rel, format_total_delta, format_value

    if not violations:
        return "fail-if: no threshold crossed"
    lines = [f"fail-if: {len(violations)} threshold(s) crossed:"]
    for v in violations[:50]:
        m = cmp.metric_by_name.get(v.gate.metric) or cmp.total_metric(v.gate.metric)
        unit = m.unit if m else "count"
        change = (format_rel(v.change / 100) if v.gate.relative
                  else format_total_delta(v.base, v.new, unit) if v.row is None  # a total's
                  else format_delta(v.change, unit))
        lines.append(f"  {v.gate.text}: {v.label}: {format_value(v.base, unit)} -> "
                     f"{format_value(v.new, unit)} ({change})")
    if len(violations) > 50:
        lines.append(f"  ... and {len(violations) - 50} more")
    return "\n".join(lines)


def print_for_app(args: argparse.Namespace) -> int:
    """No display: print what the window would show for the app's options ``args`` (one
    run: ``show``; a comparison: the ranked table with the same session and view)."""
    from .options import run_guarded

    def go(args: argparse.Namespace) -> int:
        from .session import Session

        spec = spec_from_args(args, "flat")
        if not spec.paths:
            return 0
        if len(spec.paths) == 1:
            from . import show_cli

            ns = argparse.Namespace(**{**vars(args), "file": spec.paths[0], "json": False,
                                       "top": 40, "depth": None, "sort": None})
            return show_cli.run(ns)
        return print_comparison(Session.open(spec), view_from_args(args))

    return run_guarded(go, args)
