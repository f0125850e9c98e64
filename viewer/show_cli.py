"""``profdiff show FILE``: one run's header facts and the top of its tree."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .options import (
    UsageError,
    add_label_option,
    add_reading_options,
    add_transform_options,
    spec_from_args,
)

if TYPE_CHECKING:

    from profdiff.parsers.model import Profile

DESCRIPTION = "Print one run: its header facts and the hottest rows of its call tree."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top", type=int, default=40, help="rows to print (0 = all; default 40)")
    p.add_argument("--depth", type=int, default=None, help="deepest tree level to print")
    p.add_argument("--sort", help="metric to order siblings by (hottest first)")
    p.add_argument("--metrics", help="comma-separated metric columns")
    add_label_option(p)
    add_reading_options(p)
    add_transform_options(p, by_type=False)


def metric_list(spec: str | None, default: list[str], known: list[str]) -> list[str]:
    """``--metrics a,b`` checked against the known metrics (default: ``default``)."""
    if not spec:
        return [m for m in default if m in known]
    names = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [n for n in names if n not in known]
    if bad:
        raise UsageError(f"unknown metric(s) {', '.join(bad)}; metrics: {', '.join(known)}")
    return names


def dfs_rows(p: Profile, metric: str | None, limit: int, max_depth: int | None) -> list[int]:
    """Depth-first rows, hottest child first, up to ``limit`` rows; ``limit`` <= 0: every
    row (down to ``max_depth``), as ``diff --top 0`` means all rows.

    Every node's children are put in order in one sort (by parent, then hottest first,
    ties in file order) before the walk: sorting each node's children as it is reached
    cost one numpy call per node, 7 of the 15 s of ``show --json --top 0`` on a
    425k-node pprof."""
    kids = _hottest_first_children(p, metric)
    off, ids = kids
    out: list[int] = []
    root = p.n_nodes
    stack = ids[off[root] : off[root + 1]][::-1].tolist()
    while stack and (limit <= 0 or len(out) < limit):
        n = stack.pop()
        out.append(n)
        if max_depth is not None and p.depth[n] >= max_depth:
            continue
        lo, hi = off[n], off[n + 1]
        if hi > lo:
            stack.extend(ids[lo:hi][::-1].tolist())
    return out


def _hottest_first_children(p: Profile, metric: str | None):
    """CSR children lists (roots under the virtual parent ``n``), each hottest first by
    ``metric`` (NaN as 0), ties in file order; file order without a metric."""
    import numpy as np

    if metric is None:
        off, ids = p.children_offsets_ids
        return off.tolist(), ids
    n = p.n_nodes
    par = np.where(p.parent < 0, n, p.parent).astype(np.int64)
    key = -np.nan_to_num(np.asarray(p.values[metric], dtype=float))
    order = np.lexsort((np.arange(n), key, par))  # by parent, hottest, file order
    off = np.zeros(n + 2, dtype=np.int64)
    np.cumsum(np.bincount(par, minlength=n + 1), out=off[1:])
    return off.tolist(), order


def run(args: argparse.Namespace) -> int:
    from profdiff.parsers import perf_early

    from .session import load_run, transform_runs

    args.files, args.no_rules_file = [args.file], True  # one run: nothing to match
    spec = spec_from_args(args, "tree")
    if perf_early.pending():  # perf runs already: load the table module beside it
        from . import table  # noqa: F401
    run_ = load_run(spec, args.file)  # else first: a perf.data's perf runs while we import
    from .table import render_profile, use_color

    p = transform_runs(spec, [run_])[0]
    metrics = metric_list(args.metrics, p.shown_metrics, [m.name for m in p.metrics])
    sort = args.sort or p.default_metric or (metrics[0] if metrics else None)
    if sort and not p.has_metric(sort):
        raise UsageError(f"unknown metric {sort!r}; metrics: {', '.join(m.name for m in p.metrics)}")
    rows = dfs_rows(p, sort, args.top, args.depth)
    label = dict(spec.labels).get(args.file)  # --label: the user's name for the run
    if args.json:
        from .report import profile_json, write_json  # json: only for --json

        write_json(profile_json(p, rows, label), sys.stdout)
    else:
        print(render_profile(p, rows, metrics, color=use_color(), label=label))
    return 0
