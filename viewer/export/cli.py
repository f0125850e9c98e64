"""``profdiff export``: speedscope JSON and/or CSV of one run or a comparison.

    profdiff export FILE -o out.speedscope.json
    profdiff export BASE NEW [MORE...] -o out.speedscope.json [--metric M]
    profdiff export BASE NEW --csv out.csv [--flat|--tree] [--sort METRIC[:HOW]]

The speedscope file is built from the tree comparison (call paths) unless ``--flat`` is
given; the CSV table follows ``diff`` and is flat unless ``--tree`` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..options import (
    UsageError,
    add_label_option,
    add_matching_options,
    add_reading_options,
    add_transform_options,
    spec_from_args,
)

if TYPE_CHECKING:
    from ..session import Session

DESCRIPTION = ("Export one run or a comparison. -o writes one speedscope JSON file with "
               "a profile per run plus 'grew' and 'shrank' difference profiles (speedscope "
               "has no diff view and no negative weights). --csv writes the comparison table. "
               "With both, each is written if it can be; if either cannot, exit code 2.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="BASE [NEW ...] or one FILE")
    p.add_argument("-o", "--output", metavar="OUT.speedscope.json",
                   help="speedscope file to write")
    p.add_argument("--csv", metavar="OUT.csv", help="comparison table to write as CSV")
    p.add_argument("--metric", metavar="M",
                   help="flame weight (default: the format's main metric, as absolute self "
                   "cost, e.g. time_s for GHC .prof); an inclusive metric uses its self metric")
    p.add_argument("--sort", metavar="METRIC[:HOW]",
                   help="--csv row order, as in 'diff' (default: the main metric's change)")
    p.add_argument("--metrics", help="--csv: comma-separated metric columns (default: all)")
    add_label_option(p)
    add_matching_options(p)  # --flat/--tree unset: tree for speedscope, flat for CSV
    add_reading_options(p)
    add_transform_options(p, by_type=False)  # --bottom-up: tree mode for both outputs


def _print_speedscope(s: dict) -> None:
    from ..units import format_value

    unit = s["unit"]
    print(f"wrote {s['path']} ({s['bytes']:,} bytes): speedscope, weights = {s['weight_metric']}"
          f" ({s['self_from']}), unit {unit}, {s['frames']} frames, {s['mode']} mode, "
          f"stacks = {s['stacks']}")
    for pr in s["profiles"]:
        total = format_value(pr["total"], _unit_for_format(unit))
        dropped = (f", {pr['dropped_zero']} zero-weight node(s) dropped" if pr["dropped_zero"]
                   else "")
        print(f"  profile: {pr['name']}: {pr['samples']} stacks, sum {total}{dropped}")
    for o in s["omitted"]:
        print(f"  omitted: {o}")
    if s["negative_clipped"]:
        print(f"  note: {s['negative_clipped']} negative self value(s) written as 0")
    print(f"  opens on: {s['active_profile']}")


def _unit_for_format(unit: str) -> str:
    return {"bytes": "bytes", "seconds": "seconds", "nanoseconds": "nanoseconds"}.get(unit, "count")


Writer = Callable[["Session", argparse.Namespace], None]
"""Writes one of the outputs; raises a ProfdiffError when it cannot."""


def run(args: argparse.Namespace) -> int:
    if not args.output and not args.csv:
        raise UsageError("export: nothing to write; give -o OUT.speedscope.json and/or --csv OUT.csv")
    from ..session import Session

    session = Session.open(spec_from_args(args, "tree"))
    for p in session.runs:
        if p.incomplete:
            print(f"note: {p.path} is incomplete ({p.incomplete_reason}); exporting what was read")
    asked: list[tuple[str | None, str, Writer]] = [
        (args.output, "speedscope file", _write_speedscope), (args.csv, "CSV", _write_csv)]
    parts = [(path, what, write) for path, what, write in asked if path]
    if len(parts) == 1:  # one output: its error is the command's error, as ever
        parts[0][2](session, args)
        return 0
    return _write_parts(session, args, parts)


def _write_parts(session: Session, args: argparse.Namespace,
                 parts: list[tuple[str, str, Writer]]) -> int:
    """Write every output asked for, each on its own: one that cannot be written (a
    comparison with no metric to weight a flame graph by) must not cost the user the
    others.  Each failure is one stderr line naming the file, why, and what was written;
    any failure is still exit 2 (a script must not take half the outputs for all)."""
    from profdiff.parsers.errors import ProfdiffError

    failed: list[tuple[str, str, ProfdiffError]] = []
    written: list[str] = []
    for path, what, write in parts:
        try:
            write(session, args)
            written.append(path)
        except ProfdiffError as e:
            failed.append((path, what, e))
    done = f"; written: {', '.join(written)}" if written else ""
    for path, what, err in failed:
        print(f"profdiff: error: {what} {path} not written: {err}{done}", file=sys.stderr)
    return 2 if failed else 0


def _write_speedscope(session: Session, args: argparse.Namespace) -> None:
    """``-o``: the speedscope file; a weight metric some run lacks is an error that says
    how to choose one every run has (the library's message cannot name the option)."""
    from .speedscope import ExportError, MissingMetricError, export_speedscope

    cmp = session.comparison(_mode(args, session, "tree"))
    try:
        summary = export_speedscope(cmp, args.output,
                                    args.metric or _culprit_metric(session, cmp))
    except MissingMetricError as e:
        if not e.common:
            raise
        raise ExportError(f"{e}; choose one with --metric NAME (e.g. --metric {e.common[0]})"
                          ) from e
    _print_speedscope(summary)


def _culprit_metric(session: Session, cmp) -> str | None:
    """The metric of the top culprit (e.g. alloc_bytes when allocation is what changed),
    so the exported flame graph weighs what regressed; None: the format's default."""
    if cmp.n_runs < 2:
        return None
    ranking = session.culprits(cmp)
    top = ranking.top()
    return ranking.metric_of(top) or None if top >= 0 and ranking.score[top] else None


def _mode(args: argparse.Namespace, session: Session, default: str) -> str:
    """``--flat``/``--tree`` when given (or implied by --bottom-up), else ``default``."""
    return session.spec.mode if (args.mode or session.spec.bottom_up) else default


def _write_csv(session: Session, args: argparse.Namespace) -> None:
    import numpy as np

    from ..diff_cli import parse_sort
    from ..session import RANKING
    from .csv_export import export_csv

    cmp = session.judge_statuses(session.comparison(_mode(args, session, "flat")))
    metric, how, desc = parse_sort(args.sort, cmp)
    if cmp.n_runs == 1 and not args.sort:
        how = "base"  # one run: no change to rank by, rank by cost
    if cmp.n_runs > 1 and not args.sort:  # culprit first, as every list of changes
        order, how, metric = session.culprits(cmp).order, "own change", "the main metrics"
    else:
        order = RANKING(cmp, metric, how, desc) if metric else np.arange(cmp.n_rows)
    metrics = None
    if args.metrics:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    s = export_csv(cmp, args.csv, rows=order, metrics=metrics)
    print(f"wrote {s['path']}: CSV, {s['rows']} rows x {s['columns']} columns "
          f"({s['mode']} mode, sorted by {how} of {metric})")
