"""``profdiff annotate A/perf.data B/perf.data --symbol NAME``: one function, two builds.

Prints both runs' summaries (code size, jumps and calls, indirect-jump share, hottest
instructions, the most jumped-to blocks, the block whose samples grew most) and then the
two instruction listings aligned side by side with each instruction's share of the
function's samples and the change.  ``--json`` prints the same as one document (see
README, "profdiff annotate").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .annotate import FunctionComparison, compare_function, comparison_json
from .annotate.rows import aligned_rows
from .rules import find_rules_file, load_rules_file, name_rule, preset_rules, regex_rule

TEXT_WIDTH = 44


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``annotate`` on the CLI's subparsers (the PLUGIN_COMMANDS hook)."""
    p = subparsers.add_parser(
        "annotate", help="compare one function's instructions between two perf.data",
        description="Per-instruction samples of one function in two perf recordings, "
        "aligned side by side, with a summary of jumps, calls and hot blocks. The binaries "
        "must be beside each perf.data (same file name), at their recorded path, or in "
        "~/.debug, with the recorded build-id.")
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs=2, metavar="PERF_DATA", help="run A (base) and run B (new)")
    p.add_argument("--symbol", required=True, metavar="NAME",
                   help="the function; GCC clone suffixes (.constprop.N, .isra.N) and Rust "
                   "hashes are ignored when matching, as are names changed by rename rules")
    p.add_argument("--event", help="count this perf event (default: the one with most samples)")
    p.add_argument("--json", action="store_true", help="machine-readable output (see README)")
    p.add_argument("--summary-only", action="store_true", help="no instruction listing")
    p.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="treat symbol OLD as NEW")
    p.add_argument("--rename-regex", action="append", default=[], metavar="PATTERN=REPL",
                   help="regular-expression rewrite of symbol names before matching")
    p.add_argument("--normalize", action="append", default=[], metavar="PRESET",
                   help="built-in rewrites ('perf' is always on here)")
    p.add_argument("--rules", metavar="FILE",
                   help="rules file (default: .profdiff.toml beside the runs, if any)")
    p.add_argument("--no-rules-file", action="store_true", help="ignore .profdiff.toml")


def rules_of(args: argparse.Namespace) -> list:
    rules: list = []
    if args.rules:
        rules += load_rules_file(Path(args.rules))
    elif not args.no_rules_file:
        found = find_rules_file(args.files)
        if found:
            rules += load_rules_file(found)
    rules += [name_rule(t) for t in args.rename]
    rules += [regex_rule(t) for t in args.rename_regex]
    rules += preset_rules(args.normalize)
    return rules


def run(args: argparse.Namespace) -> int:
    cmp = compare_function(args.files[0], args.files[1], args.symbol, rules=rules_of(args),
                           event=args.event)
    out = sys.stdout
    if args.json:
        json.dump(comparison_json(cmp), out, indent=1)
        out.write("\n")
        return 0
    out.write(render_summary(cmp))
    if not args.summary_only:
        out.write("\n" + render_listing(cmp))
    for r in cmp.runs:
        for w in r.warnings:
            print(f"profdiff: warning: {r.path}: {w}", file=sys.stderr)
    return 0


def render_summary(cmp: FunctionComparison) -> str:
    """Both summaries as aligned ``fact  A  B`` lines, then hot instructions and blocks."""
    a, b = cmp.summaries
    lines = [f"symbol: A = {a['symbol']}, B = {b['symbol']}", f"{'':28}{'A':>14}{'B':>14}"]
    for label, key in (("samples (function, self)", "samples"),
                       ("code size (bytes)", "code_bytes"), ("instructions", "instructions"),
                       ("basic blocks", "basic_blocks"), ("direct jumps", "direct_jumps"),
                       ("  of them conditional", "conditional_jumps"),
                       ("indirect jumps", "indirect_jumps"), ("direct calls", "direct_calls"),
                       ("indirect calls", "indirect_calls"), ("returns", "returns"),
                       ("samples on indirect jumps %", "indirect_jump_share")):
        lines.append(f"{label:28}{_fmt(a[key]):>14}{_fmt(b[key]):>14}")
    lines.append(f"runs: A = {cmp.runs[0].path} ({cmp.runs[0].binary.path})")
    lines.append(f"      B = {cmp.runs[1].path} ({cmp.runs[1].binary.path})")
    for name, s in (("A", a), ("B", b)):
        lines.append(f"\nhottest instructions in {name}:")
        lines += [f"  {h['share']:7.2f} %  {h['samples']:>8}  {h['address']:>10}  {h['text']}"
                  for h in s["hottest"][:5]]
        lines.append(f"most jumped-to blocks in {name}:")
        lines += [f"  block at {m['address']:>10}: jump target of {m['jump_target_of']} sites, "
                  f"{m['instructions']} instructions, {m['share']:.2f} % of samples"
                  for m in s["most_jumped_to"][:3]] or ["  (none)"]
    inc = b["largest_increase_block"]
    if inc:
        lines.append(f"\nblock with the largest sample increase (B vs aligned A code): "
                     f"{inc['address']} ({inc['instructions']} instructions), "
                     f"{inc['base_samples']} -> {inc['samples']} samples "
                     f"({inc['base_share']:.2f} % -> {inc['share']:.2f} %)"
                     + (f", {inc['source']}" if inc["source"] else ""))
    return "\n".join(lines) + "\n"


def render_listing(cmp: FunctionComparison) -> str:
    """The aligned listing: mark (``-`` removed, ``+`` inserted, ``~`` the same instruction
    with other registers), A share/address/instruction, the same for B, the change
    in percentage points, then where a direct jump goes (``-> addr``) and how many direct
    jumps come to this instruction (``<- N``)."""
    a, b = cmp.runs
    rows = aligned_rows(cmp)
    head = (f"  {'A %':>7} {'A addr':>8}  {'A instruction':{TEXT_WIDTH}} "
            f"{'B %':>7} {'B addr':>8}  {'B instruction':{TEXT_WIDTH}} {'delta pp':>9}  jumps")
    out = [head]
    for r in range(len(rows)):
        i, j = int(rows.ia[r]), int(rows.jb[r])
        mark = "-" if j < 0 else "+" if i < 0 else "~" if rows.reshaped[r] else " "
        jumps = _jumps(b, j, int(rows.incoming_b[r])) if j >= 0 else _jumps(a, i, int(rows.incoming_a[r]))
        out.append(f"{mark} {_side(a, rows.share_a[r], i)} {_side(b, rows.share_b[r], j)} "
                   f"{rows.delta[r]:+9.2f}  {jumps}".rstrip())
    return "\n".join(out) + "\n"


def _side(run, share: float, i: int) -> str:
    if i < 0:
        return f"{'':7} {'':8}  {'':{TEXT_WIDTH}}"
    text = str(run.instructions.text[i])
    text = text if len(text) <= TEXT_WIDTH else text[:TEXT_WIDTH - 1] + "…"
    return f"{share:7.2f} {int(run.instructions.address[i]):>8x}  {text:{TEXT_WIDTH}}"


def _jumps(run, i: int, incoming: int) -> str:
    parts = []
    t = int(run.instructions.target[i])
    if t >= 0:
        parts.append(f"-> {int(run.instructions.address[t]):x}")
    if incoming:
        parts.append(f"<- {incoming}")
    return "  ".join(parts)


def _fmt(v) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


__all__ = ["add_arguments", "add_parser", "run"]
