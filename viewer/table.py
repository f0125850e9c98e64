"""Terminal rendering of comparisons and single runs (the CLI's tables).

Aligned columns with thousands separators and units; regressions red and improvements
green when the output is a terminal (``NO_COLOR`` honoured); a legend and the runs' totals
side by side above the rows, so a CI log reads on its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np

from profdiff.parsers.model import Metric, Profile, Unit

from .compare import Comparison, Status, incomparable_warnings
from .reading_notes import reader_warnings, reading_notes
from .run_labels import labels_of
from .units import (
    TIMED_MARK,
    TIMED_NOTE,
    digits_rounding,
    format_delta,
    format_rel,
    format_total_delta,
    format_value,
)

RED, GREEN, GREY, BOLD, YELLOW, RESET = (
    "\x1b[31m", "\x1b[32m", "\x1b[90m", "\x1b[1m", "\x1b[33m", "\x1b[0m")


def use_color(stream=None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class _Painter:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color and code else text


def _run_label(cmp: Comparison, i: int) -> str:
    """``[base] v1/x.prof``: the run's role and its label (:mod:`viewer.run_labels`)."""
    role = "base" if i == cmp.baseline else ("new" if i == cmp.current else f"run{i}")
    return f"[{role}] {labels_of(cmp)[i]}"


def _render(rows: list[list[str]], align: Sequence[str], header_rows: int = 1) -> list[str]:
    """Aligned text from cells that may contain ANSI codes (width ignores them)."""
    import re

    ansi = re.compile(r"\x1b\[[0-9;]*m")
    widths = [0] * len(align)
    for r in rows:
        for j, c in enumerate(r):
            widths[j] = max(widths[j], len(ansi.sub("", c)))
    out = []
    for r in rows:
        cells = []
        for j, c in enumerate(r):
            pad = widths[j] - len(ansi.sub("", c))
            cells.append(c + " " * pad if align[j] == "<" else " " * pad + c)
        out.append("  ".join(cells).rstrip())
    return out


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _direction_code(metric: Metric | None, d: float, paint: _Painter) -> str:
    if metric is None or metric.better == "none" or not d or np.isnan(d):
        return ""
    worse = d > 0 if metric.better == "lower" else d < 0
    return RED if worse else GREEN


def render_totals(cmp: Comparison, color: bool) -> list[str]:
    paint = _Painter(color)
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    if cmp.n_runs <= 2:
        others = [cmp.current]
    head = ["total"] + [_run_label(cmp, i) for i in range(cmp.n_runs)]
    for r in others:  # a Δ for every run against the baseline
        suffix = f" [{r}]" if len(others) > 1 else ""
        head += [f"Δ{suffix}", f"Δ%{suffix}"]
    rows = [head]
    dagger = False
    for k in cmp.distinct_total_keys:
        m = cmp.total_metric(k)
        unit = m.unit if m else Unit.COUNT
        vals = cmp.total_values(k)
        b = vals[cmp.baseline]
        cells = [m.title if m and m.label else k]
        if m is not None and m.timed and cmp.totals_measured_once:
            cells[0] += " " + TIMED_MARK
            dagger = True
        cells += [format_value(v, unit) for v in vals]
        for r in others:
            n = vals[r]
            if b is None or n is None:
                cells += ["-", "-"]
                continue
            d = n - b
            code = _direction_code(m, d, paint)
            cells.append(paint(format_total_delta(b, n, unit), code))
            cells.append(paint(format_rel(d / abs(b) if b else (float("inf") if d else 0.0)), code))
        rows.append(cells)
    if len(rows) == 1:
        return []
    out = _render(rows, ["<"] + [">"] * (len(head) - 1))
    if dagger:
        out.append(paint(f"{TIMED_NOTE}; give repeated runs (--base/--new) to judge them",
                         GREY))
    return out



def _both_names(cmp: Comparison, i: int) -> tuple[str, str]:
    """``old → new`` for a row whose runs spell its name (or module) differently."""
    names = [x for x in cmp.run_names(i) if x is not None]
    base = cmp.run_names(i)[cmp.baseline] or names[0]
    cur = cmp.run_names(i)[cmp.current] or names[-1]
    name = base[0] if base[0] == cur[0] else f"{base[0]} → {cur[0]}"
    module = base[1] if base[1] == cur[1] else f"{base[1]} → {cur[1]}"
    return name, module


def _runs_header(cmp: Comparison, paint: _Painter, notes: Sequence[str]) -> list[str]:
    """Which file is which run, and every warning and note that qualifies the numbers,
    printed above the table so nobody reads it without them."""
    lines: list[str] = []
    labels = labels_of(cmp)
    width = max(len(x) for x in labels)
    for i, p in enumerate(cmp.runs):
        role = "baseline" if i == cmp.baseline else ("current " if i == cmp.current else "run     ")
        extra = f"  {paint('INCOMPLETE: ' + p.incomplete_reason, YELLOW)}" if p.incomplete else ""
        prog = p.meta.get("command_line") or p.meta.get("program") or ""
        where = "" if labels[i] == str(p.path) else f"  {p.path}"
        lines.append(f"{role} [{i}] {labels[i]:<{width}}{where}  "
                     f"({p.format}{', ' + prog if prog else ''}){extra}")
    for w in incomparable_warnings(cmp.runs):
        lines.append(paint(f"warning: {w}", YELLOW))
    lines.extend(paint(f"warning: {w}", YELLOW) for w in reader_warnings(cmp.runs, labels))
    basis = {str(p.meta["percent_basis"]) for p in cmp.runs if p.meta.get("percent_basis")}
    for b in sorted(basis):
        lines.append(paint(f"note: {b}", GREY))
    for note in [*cmp.notes, *reading_notes(cmp.runs), *notes]:
        lines.append(paint(f"note: {note}", GREY))
    return lines


def _table_head(cmp: Comparison, metrics: Sequence[str]) -> list[str]:
    """Column titles: fixed columns, then per metric each run's value, Δ and Δ%."""
    multi = cmp.n_runs > 2
    view = cmp.runs[0].meta.get("view")
    label = "type" if view == "by-type" else (
        "cost centre" if cmp.runs[0].format.startswith("ghc") else "name")
    head = ["#", label, "line" if cmp.line_level else "module"]
    if cmp.mode == "tree":  # a bottom-up tree's parent is the callee: the row calls it
        head.append("caller of" if view == "bottom-up" else "called from")
    head.append("status")
    for m in metrics:
        met = cmp.metric_by_name[m]
        if multi:  # each run's column named by its label (v1/x.prof, not x.prof thrice)
            labels = labels_of(cmp)
            head += [f"{met.title} {labels[0]}", *labels[1:]]
        else:
            head += [f"{met.title} base", "new"]
        head += ["Δ", "Δ%"]
    return head


_STATUS_CODE = {Status.ADDED: YELLOW, Status.REMOVED: GREY, Status.SAME: GREY,
                Status.CHANGED: "", Status.MOVED: ""}


def _row_cells(cmp: Comparison, i: int, rank: int, metrics: Sequence[str], paint: _Painter,
               changed: dict[str, np.ndarray]) -> list[str]:
    """One table row: identity and status, then per metric the values, Δ and Δ%
    (faded when within rounding or noise, so only supported changes stand out)."""
    multi = cmp.n_runs > 2
    status_code = _STATUS_CODE
    st = Status(int(cmp.status[i]))
    name, module = str(cmp.name[i]), str(cmp.module[i])
    if cmp.matched_by is not None and cmp.matched_by[i]:  # renamed: show both names
        name, module = _both_names(cmp, i)
    if cmp.line_level:  # a source line: where it is (its name is only its text)
        module = cmp.location(i) or module
    cells = [str(rank), _short(name, 60), _short(module, 64)]
    per_run = [Status(int(cmp.status_of_run(r)[i])) for r in range(cmp.n_runs)
               if r != cmp.baseline] if multi else [st]
    if cmp.mode == "tree":
        par = int(cmp.parent[i])
        cells.append(_short(str(cmp.name[par]), 28) if par >= 0 else "(root)")
    if multi:  # each run's own status against the baseline; · = in neither
        others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
        labels = ["·" if not (cmp.present[i, r] or cmp.present[i, cmp.baseline])
                  else x.label for r, x in zip(others, per_run, strict=True)]
        worst = max(per_run, key=lambda x: (x is not Status.SAME, int(x)))
        cells.append(paint("/".join(labels), status_code[worst]))
    else:
        cells.append(paint(st.label, status_code[st]))
    for m in metrics:
        met = cmp.metric_by_name[m]
        v = cmp.values[m][i]
        runs = range(cmp.n_runs) if multi else (cmp.baseline, cmp.current)
        for r in runs:
            cells.append(format_value(v[r], met.unit, rounding=digits_rounding(cmp.runs, m, r))
                         if cmp.present[i, r] else "·")
        d = v[cmp.current] - v[cmp.baseline]
        b = v[cmp.baseline]
        if d and not changed[m][i]:  # within the rounding of the printed values
            cells.append(paint("≈0", GREY))
            cells.append(paint("≈", GREY))
            continue
        code = _direction_code(met, d, paint)
        mark = ""
        mn = cmp.noise.metrics.get(m) if cmp.noise is not None else None
        if mn is not None and met.sampled and d and not mn.significant[i]:
            code, mark = GREY, " ~"  # within noise: faded
        dh = digits_rounding(cmp.runs, m, cmp.current, cmp.baseline)
        cells.append(paint(format_delta(d, met.unit, rounding=dh), code))
        rel = d / abs(b) if b else (float("inf") if d > 0 else (float("-inf") if d < 0 else 0.0))
        cells.append(paint(format_rel(rel) + mark, code))
    return cells


def _legend(cmp: Comparison, metrics: Sequence[str], paint: _Painter, color: bool) -> str:
    """What the symbols mean, including how significance was judged for this run set."""
    legend = "legend: Δ = current − baseline; Δ% relative to baseline; pp = percentage points;"
    legend += " · = absent in that run"
    sampled = any(cmp.metric_by_name[m].sampled for m in metrics if m in cmp.metric_by_name)
    if cmp.noise is not None and (sampled or cmp.noise.n_base > 1 or cmp.noise.n_new > 1):
        if cmp.noise.n_base > 1 or cmp.noise.n_new > 1:
            legend += (f"; ~ = within the noise of the repeated runs ({cmp.noise.n_base} vs "
                       f"{cmp.noise.n_new}), not significant")
        else:
            legend += ("; ~ = within sampling error (one run per side: run-to-run noise is "
                       "unknown, give repeated runs with --base/--new)")
    if any(m in cmp.rounding for m in metrics):
        legend += ("; ≈0 / ≈ = within the rounding of the printed percentages (no change "
                   "the data can support)")
    if any(m in cmp.rounding for m in metrics) or (
            cmp.noise is not None and (cmp.noise.n_base > 1 or cmp.noise.n_new > 1)):
        legend += ("; ≈123 = approximate (from a rounded percentage or a mean of runs), "
                   "printed to the digits it is known to")
    legend += _status_basis(cmp, metrics)
    legend += moved_legend(cmp)
    legend += unread_legend(cmp)
    if color:
        legend += f"; {paint('red', RED)} = worse, {paint('green', GREEN)} = better"
    return paint(legend, GREY)


def moved_legend(cmp: Comparison) -> str:
    """What "moved" means, said when some row is (see :attr:`Status.MOVED`)."""
    if cmp.n_runs < 2 or not cmp.status_counts()[Status.MOVED.label]:
        return ""
    titles = [cmp.metric_by_name[m].title for m in cmp.unjudged_metrics()]
    return (f"; moved = {', '.join(titles)} moved beyond precision, but these follow the "
            "run's timing and one run per side cannot tell that from run-to-run noise "
            "(not judged: give repeated runs with --base/--new)")


def unread_legend(cmp: Comparison) -> str:
    """What "removed" or "added" means against an incomplete run: the row may only lie
    in the part of the file that was not read (:meth:`Comparison.unread`)."""
    if cmp.n_runs < 2:
        return ""
    n = int(cmp.unread().sum())
    if not n:
        return ""
    cut = [labels_of(cmp)[i] for i in (cmp.baseline, cmp.current) if cmp.runs[i].incomplete]
    return (f"; {n:,} rows are absent from the part of {' and '.join(cut)} that was read "
            "(incomplete): their 'removed' or 'added' is not judged and they rank last, "
            "and rows that were read may miss costs that were cut")


def _status_basis(cmp: Comparison, metrics: Sequence[str]) -> str:
    """What a row's status is judged on, said when some of those metrics are not columns
    of the table.

    Why: a status compares absolute costs (shares move when another row grows), so with
    the shares shown a row can read "changed" while every printed value is the same -
    a root whose run got longer: total % 100 -> 100, total samples 169 -> 228."""
    if cmp.n_runs < 2:
        return ""
    judged = cmp.status_metrics()
    hidden = [m for m in judged if m not in metrics]
    if not hidden:
        return ""
    title = {m: cmp.metric_by_name[m].title if m in cmp.metric_by_name else m for m in judged}
    return (f"; status = changed when {' or '.join(title[m] for m in judged)} moved beyond "
            f"precision{' and noise' if cmp.noise is not None else ''} "
            f"(not shown: {', '.join(f'{title[m]} [{m}]' for m in hidden)}; --metrics "
            "chooses the columns)")


def render_comparison(
    cmp: Comparison,
    rows: Sequence[int] | np.ndarray,
    metrics: Sequence[str],
    *,
    color: bool = False,
    sort_desc: str = "",
    notes: Sequence[str] = (),
) -> str:
    """The comparison as terminal text: runs and notes, totals, the table, the legend."""
    paint = _Painter(color)
    lines = _runs_header(cmp, paint, notes)
    tot = render_totals(cmp, color)
    if tot:
        lines.append("")
        lines += tot
    lines.append("")
    if not cmp.n_rows and not any(p.n_nodes for p in cmp.runs):
        lines.append(paint("run totals only (no call tree)", GREY))
        return "\n".join(lines)
    head = _table_head(cmp, metrics)
    table = [head]
    changed = {m: cmp.changed_mask(m) for m in metrics}
    for rank, i in enumerate(rows, 1):
        table.append(_row_cells(cmp, i, rank, metrics, paint, changed))
    n_fixed = 4 if cmp.mode == "tree" else 3
    align = [">", "<", "<"] + (["<"] if cmp.mode == "tree" else []) + ["<"]
    align += [">"] * (len(head) - n_fixed - 1)
    if not any(row[2] for row in table[1:]):  # no module in the rows shown (folded)
        table = [row[:2] + row[3:] for row in table]
        align = align[:2] + align[3:]
    lines += _render(table, align)
    counts = cmp.status_counts()
    lines.append("")
    lines.append(
        f"{len(rows)} of {cmp.n_rows} rows ({cmp.mode} mode{', ' + sort_desc if sort_desc else ''}); "
        + ", ".join(f"{v} {k}" for k, v in counts.items() if v or k != Status.MOVED.label)
    )
    lines.append(_legend(cmp, metrics, paint, color))
    return "\n".join(lines)


ROW_DEPTH_WALK = 10_000  # up to this many rows, their depths come from walking parents


def row_depths(p: Profile, rows: Sequence[int]) -> list[int]:
    """Depth of each of ``rows``: ``show`` prints ~40 rows of a 10^6-node tree, and the
    whole tree's ``p.depth`` costs a pass over every node (0.1 s); walking the printed
    rows' parents (memoised, so a depth-first listing costs one step per row) does not."""
    if len(rows) > ROW_DEPTH_WALK:
        return p.depth[np.asarray(rows, dtype=np.int64)].tolist()
    parent = p.parent
    known: dict[int, int] = {}
    out = []
    for i in rows:
        chain = []
        n = int(i)
        while n >= 0 and n not in known:
            chain.append(n)
            n = int(parent[n])
        d = known[n] if n >= 0 else -1
        for c in reversed(chain):
            d += 1
            known[c] = d
        out.append(known[int(i)])
    return out


def render_profile(p: Profile, rows: Sequence[int], metrics: Sequence[str], *, color: bool,
                   label: str | None = None) -> str:
    """One run as terminal text (``label``: the user's name for it, printed first)."""
    paint = _Painter(color)
    lines = [f"{label + ': ' if label else ''}{p.path}  ({p.format})"]
    if p.incomplete:
        lines.append(paint(f"INCOMPLETE: {p.incomplete_reason}", YELLOW))
    for k, v in p.meta.items():
        if isinstance(v, (str, int, float)) and str(v):
            lines.append(f"  {k}: {v}")
    for k, v in p.totals.items():
        tm = p.total_metrics.get(k)
        lines.append(f"  {tm.title if tm and tm.label else k}: "
                     f"{format_value(v, tm.unit if tm else Unit.COUNT)}")
    for w in p.warnings[:20]:
        lines.append(paint(f"warning: {w}", YELLOW))
    if len(p.warnings) > 20:
        lines.append(paint(f"... and {len(p.warnings) - 20} more warnings", YELLOW))
    if not p.n_nodes:
        return "\n".join(lines)
    lines.append("")
    head = ["name", "module"] + [p.metric(m).title for m in metrics]
    table = [head]
    depth = row_depths(p, rows)
    fids = p.frame[np.asarray(rows, dtype=np.int64)]
    names, modules = p.frames.name[fids], p.frames.module[fids]
    for r, i in enumerate(rows):
        cells = ["  " * depth[r] + _short(str(names[r]), 60), _short(str(modules[r]), 32)]
        for m in metrics:
            cells.append(format_value(p.values[m][i], p.metric(m).unit,
                                      rounding=float(p.rounding.get(m, 0.0))))
        table.append(cells)
    align = ["<", "<"] + [">"] * len(metrics)
    if not any(row[1] for row in table[1:]):  # no module in the rows shown (folded)
        table, align = [row[:1] + row[2:] for row in table], align[1:]
    lines += _render(table, align)
    lines.append(f"\n{len(rows)} of {p.n_nodes} nodes shown")
    return "\n".join(lines)
