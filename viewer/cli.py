"""``profdiff`` command line: the headless twin of every view.

    profdiff [FILES...] [--screenshot OUT.png ...]   the desktop app (viewer.qt)
    profdiff show FILE [--json]                      one run: header facts, top of the tree
    profdiff diff BASE NEW [MORE...] [...]           ranked comparison, --json, --fail-if
    profdiff export BASE [NEW...] -o OUT.json        speedscope export (viewer.export)
    profdiff watch DIR --no-gui                      one line per landed run (viewer.watch)

Exit codes: 0 success, 1 a ``--fail-if`` gate was crossed, 2 usage or input error.
Errors are one readable line naming the file and line; never a traceback (set
``PROFDIFF_DEBUG=1`` to get one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from parsers import load
from parsers.errors import ProfdiffError
from parsers.model import Profile

from . import __version__
from .compare import Comparison, align, comparable_metrics
from .gate import evaluate, parse_gate
from .noise import DEFAULT_ALPHA, group_comparison, single_run_noise
from .report import comparison_json, profile_json, run_json, write_json
from .rules import (
    ModuleRename,
    find_rules_file,
    load_rules_file,
    name_rule,
    parse_pair,
    preset_rules,
    regex_rule,
)
from .suggest import DEFAULT_THRESHOLD, auto_match
from .table import render_comparison, render_profile, use_color
from .units import format_delta, format_rel, format_value

SUBCOMMANDS = ("show", "diff", "export", "watch")
# Subcommands contributed by other modules: module path -> must define add_parser/run.
PLUGIN_COMMANDS = {"export": "viewer.export.cli", "watch": "viewer.watch_cli"}


class UsageError(ProfdiffError):
    pass


# ------------------------------------------------------------------------------------------
# shared options
# ------------------------------------------------------------------------------------------
def add_load_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reading")
    g.add_argument("--format", help="force a reader (skip detection), e.g. ghc-prof")
    g.add_argument("--lenient", action="store_true",
                   help="skip corrupt lines (each one is reported) instead of failing")
    g.add_argument("--event", help="perf: which event to read when a file has several")
    g.add_argument("--sample-type", dest="sample_type", help="pprof: which sample type")
    g.add_argument("--group-by", dest="group_by", choices=("symbol+dso", "symbol"),
                   help="perf: frame identity (default symbol+dso; 'symbol' matches across "
                   "moved libraries)")
    g.add_argument("--split-by", dest="split_by", choices=("comm", "pid"),
                   help="perf: one subtree per command or process")
    g.add_argument("--demangle", action="store_true", default=None,
                   help="perf: demangle Rust/C++ symbols perf left mangled")


READER_OPTIONS = ("event", "sample_type", "group_by", "split_by", "demangle")


def load_options(args: argparse.Namespace) -> dict:
    """Reader keywords from the command line (readers ignore the ones they do not know)."""
    opts = {}
    for k in READER_OPTIONS:
        v = getattr(args, k, None)
        if v is not None:
            opts[k] = v
    return opts


class InputsFailed(ProfdiffError):
    """Some inputs of a command could not be read: carries the ones that loaded, so
    ``diff --json`` still reports them next to an ``errors`` list (exit 2)."""

    def __init__(self, loaded: list[Profile], errors: list[tuple[str, str]]) -> None:
        self.loaded = loaded
        self.errors = errors
        super().__init__("\n".join(msg for _path, msg in errors))


def load_runs(paths: Sequence[str], args: argparse.Namespace) -> list[Profile]:
    """Every input, read; when some fail, :class:`InputsFailed` names each failure (not
    just the first) and keeps the runs that loaded."""
    runs: list[Profile] = []
    errors: list[tuple[str, str]] = []
    for p in paths:
        try:
            runs.append(load(p, format=getattr(args, "format", None),
                             lenient=getattr(args, "lenient", False), **load_options(args)))
        except ProfdiffError as e:
            errors.append((str(p), str(e)))
    if errors:
        raise InputsFailed(runs, errors)
    return transform_runs(runs, args)


def add_view_options(p: argparse.ArgumentParser, by_type: bool = False) -> None:
    """``--bottom-up`` (and ``--by-type`` for diff): what each run is turned into before
    it is aligned; :func:`load_runs` applies them."""
    g = p.add_argument_group("views")
    g.add_argument("--bottom-up", action="store_true",
                   help="invert each run's call tree first (perf report's caller view): "
                   "roots are the functions where cost was spent, children their callers; "
                   "compares trees (--tree is implied: per-function totals in --flat mode "
                   "are the same top-down and bottom-up)")
    if by_type:
        g.add_argument("--by-type", action="store_true",
                       help="pprof allocation profiles (Julia Profile.Allocs): compare the "
                       "allocated types (count and bytes per type) instead of the call tree")


def transform_runs(runs: list[Profile], args: argparse.Namespace) -> list[Profile]:
    """Apply ``--bottom-up`` / ``--by-type`` to loaded runs (errors name the file)."""
    bottom, by_type = getattr(args, "bottom_up", False), getattr(args, "by_type", False)
    if bottom and by_type:
        raise UsageError("--bottom-up and --by-type do not go together")
    if by_type:
        from .by_type import NoTypeTable, by_type_profile

        try:
            return [by_type_profile(p) for p in runs]
        except NoTypeTable as e:
            raise UsageError(f"--by-type: {e}") from None
    if bottom:
        from parsers.bottom_up import bottom_up

        out = []
        for p in runs:
            try:
                out.append(bottom_up(p))
            except ValueError:
                raise UsageError(f"--bottom-up: {p.path} ({p.format}) has no self cost to "
                                 "invert (run statistics, not a call tree)") from None
        return out
    return runs


def resolve_mode(args: argparse.Namespace, default: str) -> str:
    """Alignment mode: ``--flat``/``--tree`` if given, else ``default``; ``--bottom-up``
    means tree and ``--by-type`` flat (a type list has no tree)."""
    mode = getattr(args, "mode", None)
    if getattr(args, "by_type", False):
        if mode == "tree":
            raise UsageError("--by-type compares a flat list of types; drop --tree")
        return "flat"
    if getattr(args, "bottom_up", False):
        if mode == "flat":
            raise UsageError("--bottom-up compares inverted call trees; in --flat mode "
                             "inversion changes nothing (a function's totals are the same "
                             "top-down and bottom-up): drop --flat")
        return "tree"
    return mode or default


def add_align_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("matching")
    m = g.add_mutually_exclusive_group()
    m.add_argument("--flat", dest="mode", action="store_const", const="flat",
                   help="aggregate every cost centre over its call sites (default)")
    m.add_argument("--tree", dest="mode", action="store_const", const="tree",
                   help="match nodes by their call path from the root")
    g.add_argument("--baseline", type=int, default=0, metavar="I",
                   help="index of the baseline among the files (default 0, the first)")
    g.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="treat name OLD as NEW in every run (Module:OLD=NEW for one module)")
    g.add_argument("--rename-module", action="append", default=[], metavar="OLD=NEW",
                   help="rename a module (exact or dotted prefix)")
    g.add_argument("--rename-regex", action="append", default=[], metavar="PATTERN=REPL",
                   help="regular-expression rewrite of names before matching")
    g.add_argument("--normalize", action="append", default=[], metavar="PRESET",
                   help="built-in rewrites: 'ghc' ($w/$s prefixes, numbered binders, "
                   "GHC.Internal.) or 'perf' (.constprop.N, Rust hashes)")
    g.add_argument("--rules", metavar="FILE",
                   help="rules file (default: .profdiff.toml beside the runs, if any)")
    g.add_argument("--no-rules-file", action="store_true", help="ignore .profdiff.toml")
    g.add_argument("--auto-match", nargs="?", type=float, const=DEFAULT_THRESHOLD,
                   metavar="THRESHOLD",
                   help="accept suggested matches for renamed nodes scoring >= THRESHOLD "
                   f"(default {DEFAULT_THRESHOLD})")
    p.set_defaults(mode="flat")


def rules_from_args(args: argparse.Namespace) -> list:
    """Rename rules from the rules file (first) and the command line (after it)."""
    rules: list = []
    path = getattr(args, "rules", None)
    if path:
        rules += load_rules_file(Path(path))
    elif not getattr(args, "no_rules_file", False):
        found = find_rules_file(getattr(args, "files", None) or [])
        if found:
            rules += load_rules_file(found)
    rules += [ModuleRename(*parse_pair(t, "--rename-module"))
              for t in getattr(args, "rename_module", [])]
    rules += [name_rule(t) for t in getattr(args, "rename", [])]
    rules += [regex_rule(t) for t in getattr(args, "rename_regex", [])]
    rules += preset_rules(getattr(args, "normalize", []))
    return rules


def build_comparison(runs: list[Profile], args: argparse.Namespace) -> Comparison:
    rules = rules_from_args(args)
    threshold = getattr(args, "auto_match", None)
    if threshold is not None:
        cmp, _ = auto_match(runs, baseline=args.baseline, mode=args.mode, rules=rules,
                            threshold=threshold)
        return cmp
    return align(runs, baseline=args.baseline, mode=args.mode, rules=rules)


# ------------------------------------------------------------------------------------------
# show
# ------------------------------------------------------------------------------------------
def _dfs_rows(p: Profile, metric: str | None, limit: int, max_depth: int | None) -> list[int]:
    """Depth-first rows, hottest child first, up to ``limit`` rows."""
    key = np.asarray(p.values[metric], dtype=float) if metric else None
    out: list[int] = []
    stack = list(reversed(_sorted(p.roots, key)))
    while stack and len(out) < limit:
        n = int(stack.pop())
        out.append(n)
        if max_depth is not None and p.depth[n] >= max_depth:
            continue
        stack.extend(reversed(_sorted(p.children(n), key)))
    return out


def _sorted(ids: np.ndarray, key: np.ndarray | None) -> list[int]:
    if key is None or len(ids) == 0:
        return ids.tolist()
    return ids[np.argsort(-np.nan_to_num(key[ids]), kind="stable")].tolist()


def cmd_show(args: argparse.Namespace) -> int:
    p = load_runs([args.file], args)[0]
    metrics = _metric_list(args.metrics, p.shown_metrics, [m.name for m in p.metrics])
    sort = args.sort or p.default_metric or (metrics[0] if metrics else None)
    if sort and not p.has_metric(sort):
        raise UsageError(f"unknown metric {sort!r}; metrics: {', '.join(m.name for m in p.metrics)}")
    rows = _dfs_rows(p, sort, args.top, args.depth)
    if args.json:
        write_json(profile_json(p, rows), sys.stdout)
    else:
        print(render_profile(p, rows, metrics, color=use_color()))
    return 0


def _metric_list(spec: str | None, default: list[str], known: list[str]) -> list[str]:
    if not spec:
        return [m for m in default if m in known]
    names = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [n for n in names if n not in known]
    if bad:
        raise UsageError(f"unknown metric(s) {', '.join(bad)}; metrics: {', '.join(known)}")
    return names


# ------------------------------------------------------------------------------------------
# diff
# ------------------------------------------------------------------------------------------
def parse_sort(spec: str | None, cmp: Comparison) -> tuple[str, str, bool]:
    """``METRIC[:delta|abs|rel|base|new]``, leading ``-`` for ascending (biggest drop first)."""
    known = [m.name for m in comparable_metrics(cmp)] or list(cmp.values)
    if not spec:
        base = cmp.runs[cmp.baseline]
        metric = base.default_metric if base.default_metric in known else (known[0] if known else "")
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


def comparison_from_args(args: argparse.Namespace) -> Comparison:
    """Runs from ``FILE...`` or from ``--base ... --new ...`` groups, aligned and matched."""
    args.mode = resolve_mode(args, "flat")
    if args.base or args.new:
        if not (args.base and args.new):
            raise UsageError("--base and --new go together: --base A1 [A2...] --new B1 [B2...]")
        if args.files:
            raise UsageError("give either FILE... or --base/--new groups, not both")
        base, new, failed = [], [], []
        for group, paths in ((base, args.base), (new, args.new)):
            try:
                group += load_runs(paths, args)
            except InputsFailed as e:
                failed.append(e)
        if failed:
            raise InputsFailed([p for e in failed for p in e.loaded],
                               [x for e in failed for x in e.errors])
        args.files = [*args.base, *args.new]
        if args.auto_match is not None:
            raise UsageError("--auto-match is not available with --base/--new groups yet")
        return group_comparison(base, new, mode=args.mode, rules=rules_from_args(args),
                                stat=args.stat, alpha=args.alpha)
    if len(args.files) < 2:
        raise UsageError("diff needs at least two files: BASE NEW [MORE...] "
                         "(or --base A1 A2 --new B1 B2 for repeated runs)")
    runs = load_runs(args.files, args)
    if not 0 <= args.baseline < len(runs):
        raise UsageError(f"--baseline {args.baseline}: there are {len(runs)} runs")
    return build_comparison(runs, args)


def _inputs_failed(args: argparse.Namespace, e: InputsFailed) -> int:
    """``diff`` with unreadable inputs: each error on stderr; ``--json`` still reports the
    runs that loaded, plus ``errors`` (``[{"path", "error"}]``); exit 2."""
    for _path, msg in e.errors:
        print(f"profdiff: error: {msg}", file=sys.stderr)
    if args.json:
        write_json({"profdiff": __version__, "runs": [run_json(p) for p in e.loaded],
                    "errors": [{"path": p, "error": m} for p, m in e.errors]}, sys.stdout)
    return 2


def _incomplete_gate_error(cmp: Comparison) -> str:
    """Why ``--fail-if`` cannot judge: a cut run gives bogus "added"/"removed" rows and
    passes or fails for the wrong reason."""
    cut = [p for p in cmp.runs if p.incomplete]
    return "; ".join(f"{p.path} is incomplete ({p.incomplete_reason or 'file cut short'})"
                     for p in cut) + (": --fail-if does not judge incomplete runs (pass "
                                      "--allow-incomplete to gate on what was read)")


def cmd_diff(args: argparse.Namespace) -> int:
    gates = [parse_gate(g) for g in args.fail_if or []]
    try:
        cmp = comparison_from_args(args)
    except InputsFailed as e:
        return _inputs_failed(args, e)
    refused = ""
    if gates and not getattr(args, "allow_incomplete", False) and any(
            p.incomplete for p in cmp.runs):
        refused = _incomplete_gate_error(cmp)
    metric, how, desc = parse_sort(args.sort, cmp)
    default_cols = [m for m in cmp.runs[cmp.baseline].shown_metrics if m in cmp.values]
    metrics = _metric_list(args.metrics, default_cols, list(cmp.values))
    if metric and metric not in metrics:
        metrics = [metric, *metrics]
    if not args.metrics:  # keep the default table within a wide terminal: 3 metrics
        metrics = ([metric] if metric else []) + [m for m in metrics if m != metric]
        metrics = metrics[:3]
    out_metrics = list(cmp.values) if args.all_metrics else metrics
    if cmp.noise is None and cmp.n_runs == 2:
        gate_metrics = {g.metric for g in gates if not g.total}
        cmp.noise = single_run_noise(cmp, args.alpha, [*out_metrics, *gate_metrics])
    order = cmp.order_by(metric, how, desc) if metric else np.arange(cmp.n_rows)
    if args.changed_only:
        order = order[cmp.status[order] != 0]
    if args.significant_only:
        if cmp.noise is None or metric not in cmp.noise.metrics:
            raise UsageError("--significant-only needs a two-run (or two-group) comparison")
        order = order[cmp.noise.metrics[metric].significant[order]]
    rows = order[: args.top] if args.top > 0 else order
    violations = evaluate(cmp, gates) if gates and not refused else []
    if args.json:
        doc = comparison_json(cmp, rows, out_metrics, lazy=True)
        doc["sort"] = {"metric": metric, "by": how, "descending": desc}
        if gates:
            doc["fail_if"] = {
                "expressions": [g.text for g in gates],
                "failed": None if refused else bool(violations),
                "violations": [_violation_json(v) for v in violations],
            }
            if refused:
                doc["fail_if"]["not_judged"] = refused
                doc["errors"] = [{"path": p.path, "error": f"incomplete: {p.incomplete_reason}"}
                                 for p in cmp.runs if p.incomplete]
        write_json(doc, sys.stdout)
    else:
        sort_desc = f"sorted by {'−' if not desc else ''}{how} of {metric}" if metric else ""
        print(render_comparison(cmp, rows, metrics, color=use_color(), sort_desc=sort_desc))
        if gates and not refused:
            print(_violations_text(violations, cmp))
    if refused:
        print(f"profdiff: error: {refused}", file=sys.stderr)
        return 2
    return 1 if violations else 0


def _violation_json(v) -> dict:
    return {
        "expression": v.gate.text, "row": v.row, "label": v.label,
        "name": v.name, "module": v.module,
        "base": v.base, "new": v.new,
        "change": v.change if np.isfinite(v.change) else None,
        "relative": v.gate.relative,
    }


def _violations_text(violations, cmp: Comparison) -> str:
    if not violations:
        return "fail-if: no threshold crossed"
    lines = [f"fail-if: {len(violations)} threshold(s) crossed:"]
    for v in violations[:50]:
        m = cmp.metric_by_name.get(v.gate.metric) or cmp.total_metric(v.gate.metric)
        unit = m.unit if m else "count"
        change = format_rel(v.change / 100) if v.gate.relative else format_delta(v.change, unit)
        lines.append(f"  {v.gate.text}: {v.label}: {format_value(v.base, unit)} -> "
                     f"{format_value(v.new, unit)} ({change})")
    if len(violations) > 50:
        lines.append(f"  ... and {len(violations) - 50} more")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# parser and entry point
# ------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="profdiff",
        description="Compare profiler runs (GHC .prof/-pj/ticky/.hp/RTS stats, perf, pprof, "
        "Julia .mem) side by side. Without a subcommand, opens the desktop app.",
    )
    p.add_argument("--version", action="version", version=f"profdiff {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("show", help="one run: header facts and the top of the tree")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--top", type=int, default=40, help="rows to print (default 40)")
    s.add_argument("--depth", type=int, default=None, help="deepest tree level to print")
    s.add_argument("--sort", help="metric to order siblings by (hottest first)")
    s.add_argument("--metrics", help="comma-separated metric columns")
    add_load_options(s)
    add_view_options(s)
    s.set_defaults(func=cmd_show)

    d = sub.add_parser(
        "diff", help="compare runs: ranked table, --json, --fail-if",
        description="Compare BASE with NEW (and more runs). Rows are ranked by the change of "
        "--sort (default: the format's main metric), largest regression first.",
    )
    d.add_argument("files", nargs="*", metavar="FILE")
    grp = d.add_argument_group("repeated runs (noise-aware comparison)")
    grp.add_argument("--base", nargs="+", metavar="FILE", default=[],
                     help="several runs of the baseline build")
    grp.add_argument("--new", nargs="+", metavar="FILE", default=[],
                     help="several runs of the new build")
    grp.add_argument("--stat", choices=("mean", "median"), default="mean",
                     help="how a group's runs are combined (default mean)")
    grp.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                     help=f"false discovery rate for 'significant' (default {DEFAULT_ALPHA})")
    grp.add_argument("--significant-only", action="store_true",
                     help="only rows whose change of the sort metric is significant")
    add_align_options(d)
    d.add_argument("--sort", metavar="METRIC[:HOW]",
                   help="rank by METRIC; HOW is delta (default), abs, rel, base or new; "
                   "prefix '-' for the largest decrease first")
    d.add_argument("--top", type=int, default=25, help="rows to print (0 = all; default 25)")
    d.add_argument("--metrics", help="comma-separated metric columns")
    d.add_argument("--all-metrics", action="store_true", help="--json: every metric per row")
    d.add_argument("--changed-only", action="store_true", help="hide rows that did not change")
    d.add_argument("--json", action="store_true", help="machine-readable output (see README)")
    d.add_argument("--fail-if", action="append", metavar="EXPR",
                   help="exit 1 when a change crosses EXPR, e.g. 'alloc_bytes>+10%%' or "
                   "'total.total_alloc_bytes>+5%%'; may be repeated")
    d.add_argument("--allow-incomplete", action="store_true",
                   help="let --fail-if judge runs that are marked incomplete (cut files); "
                   "without it such a run makes the gate exit 2 with the reason")
    add_load_options(d)
    add_view_options(d, by_type=True)
    d.set_defaults(func=cmd_diff, mode=None)  # None: flat, or tree with --bottom-up

    for _name, modname in PLUGIN_COMMANDS.items():
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        sp = mod.add_parser(sub)
        sp.set_defaults(func=mod.run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = bool(os.environ.get("PROFDIFF_DEBUG"))
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        return _run_gui(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ProfdiffError as e:
        print(f"profdiff: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the CLI promises no tracebacks
        if debug:
            raise
        print(f"profdiff: internal error: {type(e).__name__}: {e} "
              "(set PROFDIFF_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2


def _run_gui(argv: list[str]) -> int:
    try:
        app = importlib.import_module("viewer.qt.app")
    except ImportError as e:
        print(f"profdiff: the desktop app is not available ({e}); use 'profdiff diff A B'",
              file=sys.stderr)
        return 2
    return int(app.main(argv) or 0)


if __name__ == "__main__":
    sys.exit(main())
