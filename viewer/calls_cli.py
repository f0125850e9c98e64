"""``profdiff calls FILE FUNCTION``: who calls a function and what it calls.

The headless callers/callees view of formats that record caller -> callee edges instead
of call stacks (callgrind, cachegrind has none): for the function, its self and
inclusive cost per event, then one row per caller (the inclusive cost of that caller's
calls into it) and per callee (the inclusive cost of the calls it makes).  These are
exact edge costs from the file; nothing is inferred about deeper paths, which the file
does not record.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .options import UsageError, add_reading_options, spec_from_args

if TYPE_CHECKING:
    from parsers.model import Profile

DESCRIPTION = ("Callers and callees of FUNCTION (exact name, else a unique substring) "
               "with the calls count and inclusive cost of each call edge.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("function")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--callers", dest="side", action="store_const", const="callers",
                      help="only the functions calling FUNCTION")
    side.add_argument("--callees", dest="side", action="store_const", const="callees",
                      help="only the functions FUNCTION calls")
    p.add_argument("--metrics", help="comma-separated self metrics (default: the first)")
    p.add_argument("--top", type=int, default=30, help="rows per side (0 = all; default 30)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_reading_options(p)


def find_function(p: Profile, text: str) -> int:
    """Node of the function named ``text`` (exact, else a unique substring of its label)."""
    labels = [p.frames.label(int(f)) for f in p.frame]
    exact = [i for i, n in enumerate(p.name.tolist()) if n == text]
    exact = exact or [i for i, lab in enumerate(labels) if lab == text]
    hits = exact or [i for i, lab in enumerate(labels) if text in lab]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise UsageError(f"no function matching {text!r} in {p.path}")
    shown = ", ".join(f"{labels[i]} ({p.src[i]})" for i in hits[:8])
    raise UsageError(f"{len(hits)} functions match {text!r}: {shown}"
                     + (" ..." if len(hits) > 8 else "") + "; give a longer name")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from parsers.call_graph import CallGraph, edges_json

    from .session import load_run

    args.files, args.no_rules_file = [args.file], True  # one run: nothing to match
    p = load_run(spec_from_args(args, "flat"), args.file)
    graph = p.extras.get("call_graph")
    if not isinstance(graph, CallGraph):
        raise UsageError(f"{p.path} ({p.format}) records no caller -> callee edges (callgrind "
                         "files do); 'profdiff show' prints its call tree")
    metrics = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    metrics = metrics or [p.default_metric]
    bad = [m for m in metrics if m not in graph.cost]
    if bad:
        raise UsageError(f"unknown metric(s) {', '.join(bad)}; edge metrics: "
                         f"{', '.join(graph.cost)}")
    node = find_function(p, args.function)
    labels = np.array([p.frames.label(int(f)) for f in p.frame], dtype=object)
    sides = {"callers": (graph.callers(node), graph.caller),
             "callees": (graph.callees(node), graph.callee)}
    if args.side:
        sides = {args.side: sides[args.side]}
    m0 = metrics[0]
    doc = {"function": labels[node], "file": p.src[node],
           "self": {m: int(p.values[m][node]) for m in metrics},
           "inclusive": {m: int(p.values[p.metric(m).name.replace("self_", "total_", 1)][node])
                         for m in metrics},
           "calls": int(p.values["calls"][node]) if p.has_metric("calls") else None}
    for side, (edges, other) in sides.items():
        edges = edges[np.argsort(-graph.cost[m0][edges], kind="stable")]
        doc[side] = edges_json(graph, edges[: args.top] if args.top > 0 else edges, other,
                               labels, p.name, metrics)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        print(_text(doc, metrics, p))
    return 0


def _text(doc: dict, metrics: list[str], p: Profile) -> str:
    from .units import format_value

    unit = {m: p.metric(m).unit for m in metrics}
    head = "  ".join(f"{p.metric(m).label}: {format_value(doc['self'][m], unit[m])} "
                     f"(incl. {format_value(doc['inclusive'][m], unit[m])})" for m in metrics)
    out = [f"{doc['function']}  [{doc['file']}]", f"  {head}; calls into it: {doc['calls']}"]
    for side in ("callers", "callees"):
        if side not in doc:
            continue
        what = "calls into it" if side == "callers" else "calls it makes"
        out.append(f"\n{side} ({what}, inclusive cost of the calls):")
        if not doc[side]:
            out.append("  (none)")
        for row in doc[side]:
            costs = "  ".join(f"{format_value(row[m], unit[m]):>14}" for m in metrics)
            out.append(f"  {costs}  {row['calls']:>10,}x  {row['function']}")
    return "\n".join(out)
