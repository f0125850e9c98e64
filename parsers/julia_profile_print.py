"""Reader for Julia's ``Profile.print()`` text report (the default ``format=:tree`` and
``format=:flat``).

Tree format (Julia 1.x, ``stdlib/Profile/src/Profile.jl``: ``print_tree``/``tree_format``)::

    Overhead ╎ [+additional indent] Count File:Line; Function
    =========================================================
         ╎132306 @Base/client.jl:552; _start()
         ╎ 132306 @Base/client.jl:333; exec_options(opts::Base.JLOptions)
       50╎  50     @Base/cmem.jl:26; memmove
         ╎    ╎    ╎  +2 1      …educedim.jl:316; _mapredu…
    Total snapshots: 138959. Utilization: 100% across all threads and tasks. Use ...

Every line is ``<overhead, right-aligned or blank>╎<indent><count> <file>:<line>; <function>``.
The indent after the first ``╎`` is the depth: one character per level (Julia prints the
prefix of ``"    ╎" * 10`` that is ``depth - 1`` characters long, then one space), and past
half the terminal width it is capped and the rest is printed as ``+n``: the depth is then
the indent's length plus ``n``.  ``<line>`` may be ``?``; ``[unknown stackframe]`` and
``[unknown function] (pointer: 0x...)`` replace ``file:line; function``.

What the numbers are (from ``StackFrameTree`` in Profile.jl):

* ``Count`` = snapshots (backtraces) in which this frame appears on this call path, once per
  snapshot even under recursion: an INCLUSIVE count -> ``total_samples``.
* ``Overhead`` = snapshots in which this frame was the innermost *printed* frame (the one
  executing; C frames are hidden unless ``C=true`` and are charged to their Julia caller):
  the SELF count -> ``self_samples``.  So ``count == overhead + sum(children's counts)``
  unless ``mincount``/``noisefloor``/``maxdepth`` hid children; the reader takes both
  columns as printed (no re-derivation).  ``meta["unattributed_samples"]`` is the sum of
  ``count - overhead - children`` (Julia itself leaves the odd snapshot unattributed: 1 in
  the GRASS sample, a leaf with count 1 and no overhead); above 1 % of the snapshots a
  warning says children were hidden.
* ``Total snapshots: N`` counts every snapshot, including the ones with no Julia frame at
  all (only C frames: GC, idle, foreign code), which appear in no line.  Percentages
  (``self_pct``, ``total_pct``) are of N, as Julia's own report implies; ``totals`` holds
  ``total_samples`` = N and ``meta["samples_in_tree"]`` = the sum of the root counts.

Flat format (``format=:flat``): a ``Count Overhead File Line Function`` header, an underline,
and one row per frame (``Count`` counted once per snapshot, ``Overhead`` innermost) - read
as a one-level profile with the same metrics.

With ``groupby=:thread``/``:task`` every group (``Thread 1``, ``Task 0x...``, or nested
``Task 0x... / Thread 1``) prints its own tree and ``Total snapshots: N (X% utilization)``;
each group becomes a root node (``kind`` ``"thread"``/``"task"``) whose total is the group's
snapshots and whose self is the group's snapshots without Julia frames.  Task ids are
addresses, so task groups do not align between runs.

Frames: ``name`` = the function as printed, ``module`` = the file's basename, ``src`` =
``"file:line"`` as printed, ``line`` = the line (0 for ``?``).  Julia truncates long file
names on the left and function signatures on the right (``…``) to the terminal width, and
that width depends on the digits of the largest count; so runs are aligned
(``FrameTable.match``) by the function name without its argument signature
(``kwcall(::NamedTuple, …`` -> ``kwcall``) and a leading ``…`` is removed from ``module``.
A file name cut inside its basename (``…ce_eclipse.jl``) can still differ between two runs
printed at different widths: print with a wide ``IOContext(io, :displaysize => (1000, 1000))``.

meta: ``program`` ("julia"), ``variant`` ("tree"/"flat"), ``total_snapshots``,
``utilization`` (percent, when printed), ``samples_in_tree``, ``threads``/``tasks`` (ids of
the printed groups, when grouped).  A file without its ``Total snapshots`` trailer loads
what was read with ``incomplete=True`` (the totals then come from the root counts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .builder import TreeBuilder, flat_profile, percent_of, self_and_total
from .errors import ParseError
from .gzip_io import cut_of, open_text, with_cut
from .model import FrameTable, Kind, Metric, Profile, Unit, make_frame_table
from .values import INT64_MAX

FORMAT = "julia-profile-print"
DESCRIPTION = "Julia Profile.print() text report (tree or flat)"

BAR = "╎"
_TREE_HEADER = re.compile(r"^\s*Overhead ╎ \[\+additional indent\] Count File:Line; Function\s*$")
_FLAT_HEADER = re.compile(r"^\s*Count\s+Overhead\s+File\s+Line\s+Function\s*$")
_UNDERLINE = re.compile(r"^\s*=+(?:\s+=+)*\s*$")
# after the first ╎: indent, optional +n, count, at least one space, the frame text
_TREE_REST = re.compile(r"^(?P<indent>[ ╎]*)(?:\+(?P<extra>\d+) )?(?P<count>\d+) +(?P<text>\S.*)$")
_OVERHEAD = re.compile(r"^ *(\d*)$")
_FRAME = re.compile(r"^(?P<file>.*?):(?P<line>\d+|\?|-?\d+); (?P<func>.*)$")
_TRAILER = re.compile(r"^\s*Total snapshots: (\d+)")
_UTIL = re.compile(r"Utilization: (\d+(?:\.\d+)?)%|\((\d+(?:\.\d+)?)% utilization")
_GROUP = re.compile(r"^(?P<lead> ?)(?P<a>Thread \d+|Task 0x[0-9a-fA-F]+)"
                    r"(?: (?P<b>Thread \d+|Task 0x[0-9a-fA-F]+))?\s*$")

S_SAMPLES, T_SAMPLES = self_and_total("samples", Unit.SAMPLES, "snapshots", sampled=True)
S_PCT, T_PCT = self_and_total("pct", Unit.PERCENT, "% of snapshots", sampled=True,
                              percent_of="samples")
METRICS = (S_SAMPLES, T_SAMPLES, S_PCT, T_PCT)
TOTAL = Metric("total_samples", Unit.SAMPLES, Kind.NODE, "total snapshots", sampled=True)


def sniff(head: bytes, path: Path) -> float:
    """The tree header or the flat header, or (header cut off) tree lines ``  ╎12 f:1; g``."""
    text = head.decode("utf-8", "replace")
    lines = [ln for ln in text.split("\n")[:200] if ln.strip()]
    for ln in lines[:20]:
        if _TREE_HEADER.match(ln):
            return 0.95
        if _FLAT_HEADER.match(ln):
            i = lines.index(ln)
            if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]):
                return 0.9
    sample = lines[:100]
    if len(head) >= 4096 and len(sample) == len(lines):
        sample = sample[:-1]  # the last line may be cut
    if len(sample) < 2:
        return 0.0
    good = sum(1 for ln in sample if _tree_line(ln) is not None)
    return 0.8 if good >= 0.9 * len(sample) else 0.0


def _tree_line(text: str) -> tuple[int, int, int, str] | None:
    """(overhead, depth, count, frame text) of one tree line, or None."""
    bar = text.find(BAR)
    if bar < 0:
        return None
    mo = _OVERHEAD.match(text[:bar])
    if mo is None:
        return None
    m = _TREE_REST.match(text[bar + 1 :])
    if m is None:
        return None
    depth = len(m.group("indent"))
    if m.group("extra") is not None:
        depth += len(m.group("extra")) + 2 + int(m.group("extra"))
    return int(mo.group(1) or 0), depth, int(m.group("count")), m.group("text").rstrip()


def _frame_parts(text: str) -> tuple[str, str, str, int, str, str]:
    """(name, module, src, line, kind, match) of a ``file:line; function`` text."""
    m = _FRAME.match(text)
    if m is None:  # [unknown stackframe], [unknown function] (pointer: 0x...)
        kind = "unknown" if text.startswith("[unknown") else ""
        return text, "", "", 0, kind, text
    file, line_s, func = m.group("file"), m.group("line"), m.group("func")
    base = re.split(r"[/\\]", file)[-1]
    module = base.lstrip("…").removeprefix("...")
    line = int(line_s) if line_s.lstrip("-").isdigit() else 0
    cut = func.find("(")
    match = func[:cut] if cut > 0 else func
    return func, module, f"{file}:{line_s}", max(line, 0), "", match


class _Frames:
    """Interns frames with their match key (the builder's interner has no ``match``)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.rows: list[tuple[str, str, str, int, str, str]] = []

    def __call__(self, text: str, parts: tuple | None = None) -> int:
        fid = self.ids.get(text)
        if fid is None:
            fid = len(self.rows)
            self.ids[text] = fid
            self.rows.append(parts if parts is not None else _frame_parts(text))
        return fid

    def table(self) -> FrameTable:
        if not self.rows:
            return make_frame_table([], [], [], [], [])
        name, module, src, line, kind, match = (list(c) for c in zip(*self.rows, strict=True))
        return make_frame_table(name, module, src, line, kind, match=match)


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **_options: Any,
) -> Profile:
    """Read a ``Profile.print()`` report (tree or flat) into a call tree / flat profile."""
    path = Path(path)
    with open_text(path) as f:
        lines = f.read().split("\n")
        gz_cut = cut_of(f)
    complete_last = lines[-1] == ""  # the file ends with a newline
    if complete_last:
        lines.pop()
    if not any(ln.strip() for ln in lines):
        raise ParseError(path, "a Julia Profile.print() report", found="an empty file")
    start = 0
    variant = "tree"
    warnings: list[str] = []
    header = 0
    for i, ln in enumerate(lines[:50]):
        if _TREE_HEADER.match(ln):
            start, header = i + 1, i
            break
        if _FLAT_HEADER.match(ln):
            start, header, variant = i + 1, i, "flat"
            break
    if start > 1 and any(ln.strip() for ln in lines[: start - 1]):
        warnings.append(f"{path}: ignored {start - 1} line(s) before the report header")
    if start < len(lines) and _UNDERLINE.match(lines[start]):
        start += 1
    if variant == "flat":
        prof = _read_flat(path, lines, start, complete_last, lenient, warnings,
                          header=lines[header])
    else:
        prof = _read_tree(path, lines, start, complete_last, lenient, warnings, progress)
    return with_cut(prof, gz_cut)


def _trailer(text: str) -> tuple[int, float | None] | None:
    m = _TRAILER.match(text)
    if m is None:
        return None
    u = _UTIL.search(text)
    util = float(u.group(1) or u.group(2)) if u else None
    return int(m.group(1)), util


def _bad(path: Path, lenient: bool, warnings: list[str], no: int, text: str,
         expected: str) -> None:
    if not lenient:
        raise ParseError(path, expected, line=no, found=text)
    warnings.append(f"{path}:{no}: skipped line, expected {expected}")


_TREE_EXPECTED = ("a Profile.print tree line '<overhead>╎<indent><count> <file>:<line>; "
                  "<function>' or the 'Total snapshots' trailer")


@dataclass
class _TreeState:
    """What one pass over the tree lines found: the group (Thread/Task) nodes, their
    trailers, and per node the sum of its children's counts (to check Count)."""

    stack: list[int] = field(default_factory=list)  # node id per depth (below the groups)
    groups: list[int] = field(default_factory=list)  # current group nodes (outer first)
    group_roots: dict[int, int] = field(default_factory=dict)  # group -> sum of root counts
    group_total: dict[int, int] = field(default_factory=dict)
    group_ids: dict[str, list[str]] = field(
        default_factory=lambda: {"threads": [], "tasks": []})
    group_nodes: list[int] = field(default_factory=list)
    children_sum: list[int] = field(default_factory=list)  # per node
    total_snapshots: int = 0
    utilization: float | None = None
    n_trailers: int = 0
    root_sum: int = 0
    incomplete: str = ""


def _on_trailer(st: _TreeState, tr: tuple[int, float | None]) -> None:
    """A 'Total snapshots' trailer ends one tree (of the current group, if any)."""
    st.n_trailers += 1
    if st.groups:
        st.group_total[st.groups[-1]] = tr[0]
    st.total_snapshots += tr[0]
    if tr[1] is not None and not st.groups:
        st.utilization = tr[1]
    st.stack.clear()


def _on_group(st: _TreeState, g: re.Match[str], tb: TreeBuilder, frames: _Frames) -> None:
    """A Thread/Task heading: its node(s) become the parents of the following tree."""
    groups = st.groups
    if not g.group("lead"):
        groups.clear()
    elif groups:
        del groups[1:]
    st.stack.clear()
    for part in (g.group("a"), g.group("b")):
        if part is None:
            continue
        kind, _, gid = part.partition(" ")
        kind = kind.lower()
        fid = frames(part, (part, "", "", 0, kind, part))
        parent = groups[-1] if groups else -1
        nid = tb.add_child(parent, fid)
        st.children_sum.append(0)
        groups.append(nid)
        st.group_nodes.append(nid)
        ids = st.group_ids["threads" if kind == "thread" else "tasks"]
        if gid not in ids:
            ids.append(gid)


def _scan_tree(path: Path, lines: list[str], start: int, complete_last: bool, lenient: bool,
               warnings: list[str], progress: Callable[[float], None] | None,
               tb: TreeBuilder, frames: _Frames) -> _TreeState:
    """One pass over the lines: tree lines go straight into the builder (the hot path,
    kept inline); trailers and group headings are handed to their steps."""
    st = _TreeState()
    stack, groups, children_sum = st.stack, st.groups, st.children_sum
    group_roots = st.group_roots
    root_sum = 0
    n = len(lines)
    last = n - 1
    for idx in range(start, n):
        text = lines[idx].rstrip("\r")
        no = idx + 1
        if progress and idx % 20000 == 0:
            progress(idx / n)
        if not text.strip():
            continue
        if idx == last and not complete_last and _TRAILER.match(text) is None:
            st.incomplete = (f"the file ends inside line {no} (no newline, no 'Total "
                             "snapshots' trailer): that line was dropped")
            break
        row = _tree_line(text)
        if row is not None and not (row[0] <= INT64_MAX and row[2] + root_sum <= INT64_MAX):
            _bad(path, lenient, warnings, no, text,
                 "a tree line whose Count and Overhead are below 2^63")
            continue
        if row is not None:
            overhead, depth, count, ftext = row
            if depth > len(stack):
                _bad(path, lenient, warnings, no, text,
                     f"a tree line at depth <= {len(stack)} (one deeper than the line above)")
                continue
            del stack[depth:]
            parent = stack[-1] if stack else (groups[-1] if groups else -1)
            nid = tb.add_child(parent, frames(ftext), self_samples=overhead,
                               total_samples=count)
            children_sum.append(0)
            if parent >= 0:
                children_sum[parent] += count
            if not stack:
                root_sum += count
                if groups:
                    group_roots[groups[-1]] = group_roots.get(groups[-1], 0) + count
            stack.append(nid)
            continue
        tr = _trailer(text)
        if tr is not None and tr[0] > INT64_MAX:
            _bad(path, lenient, warnings, no, text, "a 'Total snapshots' count below 2^63")
            continue
        if tr is not None:
            _on_trailer(st, tr)
            continue
        g = _GROUP.match(text)
        if g is not None:
            _on_group(st, g, tb, frames)
            continue
        _bad(path, lenient, warnings, no, text, _TREE_EXPECTED)
    st.root_sum = root_sum
    return st


def _tree_columns(base: Profile, st: _TreeState,
                  warnings: list[str]) -> tuple[dict[str, np.ndarray], int, int]:
    """Self/total columns with the group nodes filled in (total = the group's snapshots,
    self = those without a Julia frame), the run's snapshot count, and the samples the
    printed counts leave unattributed (warned about: the report hid children)."""
    self_col = np.asarray(base.values["self_samples"], dtype=np.int64).copy()
    total_col = np.asarray(base.values["total_samples"], dtype=np.int64).copy()
    kids = np.asarray(st.children_sum, dtype=np.int64)
    group_total, group_roots = st.group_total, st.group_roots
    is_group = np.zeros(len(total_col), dtype=bool)
    is_group[st.group_nodes] = True
    parent_arr = np.asarray(base.parent)
    for gnode in reversed(st.group_nodes):  # inner groups first
        if gnode in group_total or gnode in group_roots:
            t = group_total.get(gnode, group_roots.get(gnode, 0))
            total_col[gnode] = t
            self_col[gnode] = t - group_roots.get(gnode, 0)
        else:  # an outer group (Task with several Thread subgroups): sum of its subgroups
            total_col[gnode] = int(total_col[parent_arr == gnode].sum())
    gap = np.where(is_group, 0, total_col - self_col - kids)
    unattributed = int(gap.sum())
    total_snapshots = st.total_snapshots
    if total_snapshots == 0:
        total_snapshots = st.root_sum if not group_total else int(sum(group_total.values()))
    if abs(unattributed) > 0.01 * max(total_snapshots, 1):
        warnings.append(
            f"{int((gap != 0).sum())} line(s) have Count != Overhead + children's Counts "
            f"({unattributed} snapshots in all): the report was printed with "
            "mincount/noisefloor/maxdepth (hidden children) or recur=:flat; self_samples is "
            "Julia's Overhead column as printed"
        )
    cols = {
        "self_samples": self_col,
        "total_samples": total_col,
        "self_pct": percent_of(self_col.astype(np.float64), total_snapshots),
        "total_pct": percent_of(total_col.astype(np.float64), total_snapshots),
    }
    return cols, total_snapshots, unattributed


def _read_tree(path: Path, lines: list[str], start: int, complete_last: bool, lenient: bool,
               warnings: list[str], progress: Callable[[float], None] | None) -> Profile:
    """The tree variant: scan (:func:`_scan_tree`), group columns (:func:`_tree_columns`),
    then the profile with run metadata."""
    tb = TreeBuilder(["self_samples", "total_samples"])
    frames = _Frames()
    st = _scan_tree(path, lines, start, complete_last, lenient, warnings, progress, tb, frames)
    incomplete = st.incomplete
    if len(tb) == 0:
        raise ParseError(path, "a Julia Profile.print() report with at least one tree line",
                         found="no tree line")
    if st.n_trailers == 0 and not incomplete:
        incomplete = "no 'Total snapshots' trailer: the report was cut short"

    base = tb.build(path=str(path), format=FORMAT, metrics=[S_SAMPLES, T_SAMPLES])
    cols, total_snapshots, unattributed = _tree_columns(base, st, warnings)
    meta: dict[str, Any] = {"program": "julia", "variant": "tree",
                            "total_snapshots": total_snapshots, "samples_in_tree": st.root_sum,
                            "unattributed_samples": unattributed}
    if st.utilization is not None:
        meta["utilization"] = st.utilization
    for k, v in st.group_ids.items():
        if v:
            meta[k] = [int(x) if x.isdigit() else x for x in v]
    if progress:
        progress(1.0)
    return Profile(
        path=str(path),
        format=FORMAT,
        frames=frames.table(),
        parent=base.parent,
        frame=base.frame,
        metrics=METRICS,
        values=cols,
        meta=meta,
        totals={"total_samples": total_snapshots},
        total_metrics={"total_samples": TOTAL},
        incomplete=bool(incomplete),
        incomplete_reason=incomplete,
        warnings=tuple(warnings),
        default_metric="self_samples",
        display_metrics=("self_samples", "total_samples", "self_pct", "total_pct"),
    )


def _read_flat(path: Path, lines: list[str], start: int, complete_last: bool, lenient: bool,
               warnings: list[str], header: str) -> Profile:
    """Rows ``lpad(count) lpad(overhead) rpad(file) lpad(line) function``; the File column
    starts where the header's ``File`` does and the Line column ends where ``Line`` ends, so
    file names with spaces are cut correctly."""
    file_at = header.find("File")
    line_end = header.find("Line", file_at) + 4
    frames = _Frames()
    counts: dict[int, list[int]] = {}
    total_snapshots = 0
    utilization: float | None = None
    incomplete = ""
    last = len(lines) - 1
    for idx in range(start, len(lines)):
        text = lines[idx].rstrip("\r")
        no = idx + 1
        if not text.strip():
            continue
        tr = _trailer(text)
        if tr is not None:
            total_snapshots += tr[0]
            utilization = tr[1] if tr[1] is not None else utilization
            continue
        if idx == last and not complete_last:
            incomplete = f"the file ends inside line {no} (no newline): that line was dropped"
            break
        nums = text[:file_at].split()
        if len(nums) != 2 or not all(x.isdigit() and int(x) <= INT64_MAX for x in nums):
            _bad(path, lenient, warnings, no, text,
                 "a Profile.print flat row '<count> <overhead> <file> <line> <function>'")
            continue
        rest = text[file_at:]
        if rest.startswith(("[any unknown", "@0x")):
            ftext = rest.strip()
            parts = (ftext, "", "", 0, "unknown", ftext)
        else:
            fl = text[file_at:line_end].rsplit(None, 1)
            file = fl[0] if len(fl) == 2 else ""
            line_s = fl[-1] if fl else "?"
            func = text[line_end + 1 :].rstrip() if len(text) > line_end else ""
            ftext = f"{file}:{line_s}; {func}"
            parts = _frame_parts(ftext)
        fid = frames(ftext, parts)
        cell = counts.setdefault(fid, [0, 0])
        cell[0] += int(nums[1])
        cell[1] += int(nums[0])
    if not counts:
        raise ParseError(path, "a Julia Profile.print(format=:flat) report with at least one "
                         "row", found="no row")
    if total_snapshots == 0 and not incomplete:
        incomplete = "no 'Total snapshots' trailer: the report was cut short"
    table = frames.table()
    order = sorted(counts)
    self_col = np.array([counts[i][0] for i in order], dtype=np.int64)
    total_col = np.array([counts[i][1] for i in order], dtype=np.int64)
    basis = total_snapshots or int(self_col.sum())
    cols = {"self_samples": self_col, "total_samples": total_col,
            "self_pct": percent_of(self_col.astype(np.float64), basis),
            "total_pct": percent_of(total_col.astype(np.float64), basis)}
    meta: dict[str, Any] = {"program": "julia", "variant": "flat", "total_snapshots": basis,
                            "samples_in_tree": int(self_col.sum())}
    if utilization is not None:
        meta["utilization"] = utilization
    return flat_profile(
        path=str(path), format=FORMAT, frames=table, metrics=METRICS, columns=cols, meta=meta,
        totals={"total_samples": basis}, total_metrics={"total_samples": TOTAL},
        incomplete=bool(incomplete), incomplete_reason=incomplete, warnings=tuple(warnings),
        default_metric="self_samples",
        display_metrics=("self_samples", "total_samples", "self_pct", "total_pct"),
    )
