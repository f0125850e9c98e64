"""GHC ``.prof`` text report reader (``+RTS -p``, ``-P``, ``-pa``; GHC 6.x to 9.x, ``.prof.gz``).

The report is a header (date, program + RTS command line, total time/ticks/interval/
processors, total alloc), a flat "top" table per cost centre, and the cost-centre-stack
tree, one line per node::

    COST CENTRE  MODULE  SRC  no.  entries  %time %alloc   %time %alloc  [ticks  bytes]
    MAIN         MAIN    <built-in>  157   0    0.0    0.0   100.0  100.0      0   816
     CAF         AD.Dual <entire-module> 312 ...

Why it is parsed the way it is:

* Numbers are read from the right (``rsplit``): SRC may contain spaces
  (``<no location info>``), and names may be empty, quoted, operators or CJK.
* Depth is the count of leading spaces; the parent is the nearest earlier node with a
  smaller depth (GHC 6 sometimes skips a level when it hides a stack).
* Name/module/SRC are cut at the columns of the tree's own header line; when a row does
  not fit those columns (GHC 6 names overflow their fixed 24-column field) it falls back
  to whitespace tokens.
* Speed: a 10^6-row report must parse in a few times the cost of merely iterating over
  its lines, so the tree is streamed in 4 MB chunks of raw bytes and parsed with numpy
  (:class:`~profdiff.parsers.ghc_prof_columns.FastTree`).  Rows sharing the layout of
  the bulk of the file (found from a sample; nearly all rows for GHC >= 7.4, non-ASCII
  names included: their numbers sit as many bytes further right as they have UTF-8
  continuation bytes) are checked and converted column-wise; their left part (indent +
  name + module + SRC) is deduplicated by a hash so only distinct frames are decoded in
  Python.  Rows that do not fit (overflowing ``ticks``, GHC 6 layouts, corrupt lines) go
  through a per-line parser, which also writes the located error messages;
  ``read(..., fast=False)`` uses it for every row.
* Cut files: a last line without its newline is never trusted; a cut exactly at a line
  end is noticed when the last rows' ancestors print inherited costs their children do
  not add up to.  Both give ``incomplete=True`` with the header's totals.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .builder import FrameInterner, profile_from_arrays
from .errors import ParseError
from .ghc_prof_columns import FastTree, layout_from_sample
from .gzip_io import cut_of, open_binary, read_all
from .model import Kind, Metric, Profile, Unit
from .reader import usable_cores
from .values import INT64_MAX

FORMAT = "ghc-prof"
DESCRIPTION = "GHC time/allocation profile (.prof text report)"

REPORT_MARK = b"Time and Allocation Profiling Report"

# ---------------------------------------------------------------------------------------
# Metric descriptions, shared with the -pj JSON reader.
# ---------------------------------------------------------------------------------------
M_ENTRIES = Metric("entries", Unit.COUNT, Kind.NODE, "entries",
                   "times the cost-centre stack was entered")
M_TIME_PCT = Metric("time_pct", Unit.PERCENT, Kind.SELF, "%time",
                    "individual share of profiled time", sampled=True,
                    percent_of="time_s")
M_ALLOC_PCT = Metric("alloc_pct", Unit.PERCENT, Kind.SELF, "%alloc",
                     "individual share of allocation", percent_of="alloc_bytes")
M_ITIME_PCT = Metric("inherited_time_pct", Unit.PERCENT, Kind.INCLUSIVE, "inherited %time",
                     "share of profiled time including callees", sampled=True,
                     self_of="time_pct", percent_of="inherited_time_s")
M_IALLOC_PCT = Metric("inherited_alloc_pct", Unit.PERCENT, Kind.INCLUSIVE, "inherited %alloc",
                      "share of allocation including callees", self_of="alloc_pct",
                      percent_of="inherited_alloc_bytes")
M_TICKS = Metric("ticks", Unit.TICKS, Kind.SELF, "ticks", "profiler ticks (samples)",
                 sampled=True)
M_BYTES = Metric("bytes", Unit.BYTES, Kind.SELF, "bytes", "bytes allocated")
M_TIME_S = Metric("time_s", Unit.SECONDS, Kind.SELF, "time",
                  "individual time: share of the header's total time", sampled=True)
M_ALLOC_B = Metric("alloc_bytes", Unit.BYTES, Kind.SELF, "alloc", "individual allocation")
M_ITIME_S = Metric("inherited_time_s", Unit.SECONDS, Kind.INCLUSIVE, "inherited time",
                   "time including callees", sampled=True, self_of="time_s")
M_IALLOC_B = Metric("inherited_alloc_bytes", Unit.BYTES, Kind.INCLUSIVE, "inherited alloc",
                    "allocation including callees", self_of="alloc_bytes")

# the columns of GHC's own report, in its order
DISPLAY_METRICS = ("entries", "time_pct", "alloc_pct", "inherited_time_pct",
                   "inherited_alloc_pct")

TOTAL_METRICS = {
    "total_time_s": Metric("total_time_s", Unit.SECONDS, Kind.SELF, "total time",
                           "header 'total time'", sampled=True),
    "total_ticks": Metric("total_ticks", Unit.TICKS, Kind.SELF, "total ticks",
                          "header tick count", sampled=True),
    "total_alloc_bytes": Metric("total_alloc_bytes", Unit.BYTES, Kind.SELF, "total alloc",
                                "header 'total alloc' (excludes profiling overheads)"),
}

PERCENT_BASIS_TEXT = (
    "Percentages are those printed by GHC: shares of the header's total ticks and total "
    "alloc, which exclude profiling overheads and the GC, SYSTEM, IDLE, OVERHEAD_of and "
    "DONT_CARE cost centres (they are not in the text report)."
)
PERCENT_BASIS_TEXT_PA = (
    "Percentages are those printed by GHC: shares of the header's total ticks and total "
    "alloc. This report was made with -pa, so the GC/SYSTEM/OVERHEAD_of cost centres "
    "are included in the tree and in the totals."
)

SYSTEM_CCS = {"GC", "SYSTEM", "IDLE", "OVERHEAD_of", "DONT_CARE", "PINNED"}


def frame_kind(name: str) -> str:
    """``"caf"`` for CAF cost centres (``CAF``, ``CAF:foo`` with -fprof-cafs), ``"system"``
    for the RTS's own (GC, SYSTEM, OVERHEAD_of, ...: -pa and -pj), else ``"cc"``."""
    if name in SYSTEM_CCS:
        return "system"
    return "caf" if name == "CAF" or name.startswith("CAF:") else "cc"


def time_scale(total_ticks: float, total_time_s: float, interval_us: float | None,
               processors: int | None) -> float:
    """Seconds per tick such that the ticks add up to the header's total time.

    GHC prints ``total time = ticks * interval / processors`` in most versions, so the
    exact ``interval / processors`` is used when it reproduces the (2-decimal) header
    time; newer ``-N`` reports print a different total, then the header total is spread
    over the ticks so ``sum(time_s) == total_time_s`` still holds.
    """
    procs = processors or 1
    if interval_us:
        exact = interval_us * 1e-6 / procs
        if total_ticks <= 0 or abs(total_ticks * exact - total_time_s) <= 0.0051:
            return exact
    if total_ticks > 0:
        return total_time_s / total_ticks
    return (interval_us or 0.0) * 1e-6


# ---------------------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------------------
def sniff(head: bytes, path: Path) -> float:
    """Content decides: the report title line, or a tree header without it."""
    first = head[:1024]
    if REPORT_MARK in first:
        return 0.95
    if b"COST CENTRE" in head and b"MODULE" in head and b"entries" in head and b"no." in head:
        return 0.6
    return 0.0


# ---------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------
def read_maybe_gzip(path: Path) -> tuple[bytes, str]:
    """Whole file, gunzipped if needed.  A cut gzip stream yields what it held plus a reason
    (the report may still be usable up to the cut)."""
    return read_all(path)


# ---------------------------------------------------------------------------------------
# Header
# ---------------------------------------------------------------------------------------
_RE_REPORT = re.compile(r"^\s*(?P<date>.*?)\s*Time and Allocation Profiling Report\s*(?:\((?P<kind>[^)]*)\))?")
_RE_TIME = re.compile(
    r"total time\s*=\s*(?P<secs>[\d.]+)\s*secs\s*\(\s*(?P<ticks>[\d,]+)\s*ticks\s*@\s*"
    r"(?P<iv>[\d.]+)\s*(?P<unit>us|ms)(?:\s*,\s*(?P<procs>\d+)\s*processors?)?\s*\)")
_RE_ALLOC = re.compile(r"total alloc\s*=\s*(?P<bytes>[\d,]+)\s*bytes")
_RE_TREE_HEADER = re.compile(rb"^[ \t]*COST CENTRE[ \t]+MODULE\b[^\n]*?\bno\.[ \t]+entries\b[^\n]*$",
                             re.M)
_TREE_NUM_COLS = ["no.", "entries", "%time", "%alloc", "%time", "%alloc"]


@dataclass
class _Header:
    meta: dict[str, Any] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _parse_header(path: Path, lines: list[str], lenient: bool) -> _Header:
    """Header facts from the lines above the tree header (1-based numbering = index + 1)."""
    h = _Header()
    rep = None
    for i, ln in enumerate(lines):
        m = _RE_REPORT.match(ln)
        if m and "Time and Allocation Profiling Report" in ln:
            rep = i
            h.meta["date"] = m.group("date").strip()
            h.meta["report"] = (m.group("kind") or "").strip()
            break
    cmd = ""
    start = 0 if rep is None else rep + 1
    for ln in lines[start:]:
        if ln.strip():
            if "total time" not in ln and "total alloc" not in ln:
                cmd = ln.strip()
            break
    h.meta["program"] = cmd.split()[0] if cmd else ""
    h.meta["command_line"] = cmd
    tm = am = None
    for i, ln in enumerate(lines):
        if tm is None and "total time" in ln:
            tm = _RE_TIME.search(ln)
            if tm is None:
                _header_problem(path, h, lenient, i + 1,
                                "'total time = <secs> secs (<n> ticks @ <interval> us|ms...)'", ln)
        if am is None and "total alloc" in ln:
            am = _RE_ALLOC.search(ln)
            if am is None:
                _header_problem(path, h, lenient, i + 1, "'total alloc = <n> bytes'", ln)
    if tm is None and not any("total time" in ln for ln in lines):
        _header_problem(path, h, lenient, len(lines), "a 'total time = ...' header line", None)
    if am is None and not any("total alloc" in ln for ln in lines):
        _header_problem(path, h, lenient, len(lines), "a 'total alloc = ...' header line", None)
    if tm is not None:
        iv = float(tm.group("iv")) * (1000.0 if tm.group("unit") == "ms" else 1.0)
        h.meta["tick_interval_us"] = int(iv) if iv.is_integer() else iv
        h.meta["processors"] = int(tm.group("procs")) if tm.group("procs") else None
        h.totals["total_time_s"] = float(tm.group("secs"))
        h.totals["total_ticks"] = int(tm.group("ticks").replace(",", ""))
    else:
        h.meta["tick_interval_us"] = None
        h.meta["processors"] = None
    if am is not None:
        h.totals["total_alloc_bytes"] = int(am.group("bytes").replace(",", ""))
    return h


def _header_problem(path: Path, h: _Header, lenient: bool, line: int, expected: str,
                    found: str | None) -> None:
    if not lenient:
        raise ParseError(path, expected, line=line, found=found)
    h.warnings.append(f"line {line}: expected {expected}; header value missing")


# ---------------------------------------------------------------------------------------
# Column layout of the tree (and top table) header
# ---------------------------------------------------------------------------------------
@dataclass
class _Cols:
    """Where name/module/SRC start (characters == bytes: header lines are ASCII)."""

    mod_col: int
    src_col: int | None
    num_names: list[str]

    @property
    def k(self) -> int:
        return len(self.num_names)


def _cols_of(header: str, first_num: str) -> _Cols | None:
    mod_col = header.find("MODULE")
    if mod_col < 0:
        return None
    m = re.search(r"\bSRC\b", header[mod_col:])
    src_col = mod_col + m.start() if m else None
    if first_num == "no.":
        idx = header.find("no.")
    else:
        m2 = re.search(r"%time", header)
        idx = m2.start() if m2 else -1
    if idx < 0:
        return None
    return _Cols(mod_col, src_col, header[idx:].split())


def _split_left(left: str, cols: _Cols) -> tuple[str, str, str, bool]:
    """(name, module, src, fits_columns) of the text left of the numbers (indent included).

    Column cuts are used when the row lines up with the header; otherwise whitespace
    tokens (GHC 6 lets long names push the module column to the right).
    """
    mc, sc = cols.mod_col, cols.src_col
    n = len(left)
    ok = n > mc and left[mc - 1] == " " and left[mc] != " "
    if ok and sc is not None:
        ok = n > sc and left[sc - 1] == " " and left[sc] != " "
    if ok:
        name = left[:mc].strip()
        if sc is None:
            module, src = left[mc:].strip(), ""
        else:
            module, src = left[mc:sc].strip(), left[sc:].strip()
        if module and " " not in module:
            return name, module, src, True
    # Off the columns: whitespace tokens, and no empty names (they need the columns).
    toks = left.split()
    if sc is None:
        if len(toks) < 2:
            return "", "", "", False
        return " ".join(toks[:-1]), toks[-1], "", False
    if len(toks) < 3:
        return "", "", "", False
    return toks[0], toks[1], " ".join(toks[2:]), False


_RE_INT = re.compile(r"\d+")
_RE_PCT = re.compile(r"\d+\.\d")


class _RowError(Exception):
    """A row that is not a cost-centre row; ``found`` is the offending token, if one."""

    def __init__(self, expected: str, found: str | None = None) -> None:
        super().__init__(expected)
        self.found = found


def _parse_line(line: str, cols: _Cols) -> tuple[int, str, str, str, list[float]]:
    """One tree row the slow way: (depth, name, module, src, numbers). Raises _RowError."""
    s = line.rstrip()
    k = cols.k
    parts = s.rsplit(None, k)
    if len(parts) != k + 1 or not parts[0].strip():
        raise _RowError(f"a cost-centre row: name, module, then {k} numeric columns "
                        f"({' '.join(cols.num_names)})")
    nums: list[float] = []
    for colname, tok in zip(cols.num_names, parts[1:], strict=True):
        if colname.startswith("%"):
            if not _RE_PCT.fullmatch(tok) or len(tok) > 8:
                raise _RowError(f"a percentage like 12.3 in column {colname}")
            nums.append(float(tok))
        else:
            if not _RE_INT.fullmatch(tok):
                raise _RowError(f"an integer in column {colname}")
            if int(tok) > INT64_MAX:
                raise _RowError(f"an integer below 2^63 in column {colname}", tok)
            nums.append(int(tok))
    left = parts[0]
    depth = len(left) - len(left.lstrip(" "))
    name, module, src, _fits = _split_left(left, cols)
    if not module:
        raise _RowError("a MODULE column")
    if depth >= cols.mod_col and left[:cols.mod_col].strip() == "":
        depth = -1  # empty name: the indent cannot be told from the padding
    return depth, name, module, src, nums


# ---------------------------------------------------------------------------------------
# Fast path: chunked, column-wise parsing of fixed-layout rows
# ---------------------------------------------------------------------------------------
CHUNK_BYTES = 4 << 20  # small enough that a chunk's matrices stay in the CPU caches
_PAD = 512
SPLIT_BYTES = 32 << 20
"""A plain file's tree at least this big is read in two halves at once when this read
has two cores (:func:`_stream_halves`)."""
_layout_from_sample = layout_from_sample  # module-level name: tests switch the fast path off


# ---------------------------------------------------------------------------------------
# Tree structure
# ---------------------------------------------------------------------------------------
def well_formed(depth: np.ndarray) -> bool:
    """Whether a pre-order listing's depths start at 0 and go at most one level deeper
    per row: then each row's parent is exactly one level up, so the listed depths are
    the tree's depths."""
    d = np.asarray(depth)
    return not len(d) or bool(d[0] == 0 and d.min() >= 0 and not np.any(d[1:] > d[:-1] + 1))


def tree_from_depth(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(parent, subtree end) of rows listed in pre-order with their depths.

    ``parent[i]`` is the nearest earlier row with a smaller depth (-1 if none);
    ``end[i]`` is one past the last row of ``i``'s subtree, so subtree sums are prefix-sum
    differences.  Vectorised level by level for well-formed listings (each depth at most
    one more than the previous row's: ``end[i] = min(next row at the same depth,
    end[parent])``); a plain stack pass handles GHC 6 listings that skip levels.
    """
    n = len(depth)
    parent = np.full(n, -1, dtype=np.int32)
    end = np.full(n, n, dtype=np.int64)
    if n == 0:
        return parent, end
    d = np.asarray(depth)
    if not well_formed(d):
        stack: list[int] = []
        dl = d.tolist()
        for i, di in enumerate(dl):
            while stack and dl[stack[-1]] >= di:
                end[stack.pop()] = i
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
        return parent, end
    dd = d.astype(np.int16 if int(d.max()) < 32000 else np.int64)
    order = np.argsort(dd, kind="stable")  # radix sort for 16-bit keys
    bounds = np.searchsorted(dd[order], np.arange(int(dd.max()) + 2, dtype=dd.dtype))
    # A row one deeper than the previous row is that row's first child; any other row
    # is a later sibling, whose parent is one before the first child of its run of
    # siblings (in depth-then-file order, each run starts at such a first child).
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.greater(d[1:], d[:-1], out=first[1:])
    run = np.where(first[order], np.arange(n), 0)
    np.maximum.accumulate(run, out=run)
    parent[order] = order[run] - 1  # depth-0 rows: their run starts at row 0
    parent[d == 0] = -1
    # end: the next row at the same depth, or the parent's end if that comes first
    nxt = np.empty(n, dtype=np.int64)
    nxt[:-1] = order[1:]
    nxt[bounds[1:-1] - 1] = n  # the last row of each depth
    nxt[-1] = n
    end[order[: bounds[1]]] = nxt[: bounds[1]]
    for lvl in range(1, len(bounds) - 1):
        lo, hi = int(bounds[lvl]), int(bounds[lvl + 1])
        if lo == hi:
            break
        kids = order[lo:hi]
        end[kids] = np.minimum(nxt[lo:hi], end[parent[kids]])
    return parent, end


def parents_from_depth(depth: np.ndarray) -> np.ndarray:
    """Parent of each pre-order row from the depths (see :func:`tree_from_depth`)."""
    return tree_from_depth(depth)[0]


def subtree_sums(values: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Inclusive (subtree) sums of a pre-order column, by prefix-sum differences."""
    v = np.asarray(values)
    cs = np.zeros(len(v) + 1, dtype=np.int64 if v.dtype.kind in "iub" else np.float64)
    np.cumsum(v, out=cs[1:])
    return cs[end] - cs[:-1]


# ---------------------------------------------------------------------------------------
# Top table
# ---------------------------------------------------------------------------------------
def _parse_top_table(lines: list[str]) -> list[dict[str, Any]]:
    """The flat per-cost-centre table GHC prints above the tree (its own rounding)."""
    top_i = None
    for i, ln in enumerate(lines):
        if ln.lstrip().startswith("COST CENTRE") and "%time" in ln and "no." not in ln:
            top_i = i
            break
    if top_i is None:
        return []
    cols = _cols_of(lines[top_i], "%time")
    if cols is None:
        return []
    rows: list[dict[str, Any]] = []
    started = False
    for ln in lines[top_i + 1 :]:
        if not ln.strip():
            if started:
                break
            continue
        started = True
        parts = ln.rstrip().rsplit(None, cols.k)
        if len(parts) != cols.k + 1:
            break
        name, module, src, _ = _split_left(parts[0], cols)
        row: dict[str, Any] = {"name": name, "module": module}
        if cols.src_col is not None:
            row["src"] = src
        try:
            for cname, tok in zip(cols.num_names, parts[1:], strict=True):
                key = {"%time": "time_pct", "%alloc": "alloc_pct"}.get(cname, cname)
                row[key] = float(tok) if cname.startswith("%") else int(tok)
        except ValueError:
            break
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------
# Reader
# ---------------------------------------------------------------------------------------
def _read_block(f, size: int) -> tuple[bytes, str]:
    """One block; a cut gzip stream ends the input with a reason instead of an error."""
    blk = f.read(size)
    return blk, cut_of(f)


def _read_until_tree_header(path: Path, f: Any) -> tuple[bytearray, Any, bool, str]:
    """Read blocks until the cost-centre tree header has been seen (with bytes after it).

    Only the part above the tree is held in memory; the tree itself is streamed by
    :func:`_stream_tree`.  Returns the bytes read, the header match (None when absent),
    whether the input ended, and the gzip cut reason of the last block.
    """
    acc = bytearray()
    cut_reason = ""
    m = None
    eof = False
    while True:
        blk, cut_reason = _read_block(f, CHUNK_BYTES)
        if not blk:
            eof = True
            break
        acc += blk
        if len(acc) == len(blk):
            if not acc.strip():
                continue
            if b"\x00" in acc[:4096]:
                raise ParseError(path, "a GHC .prof text report", found="binary data")
        m = _RE_TREE_HEADER.search(acc)
        if m is not None and m.end() < len(acc):
            break
        if len(acc) > 64 * CHUNK_BYTES:
            break
    return acc, m, eof, cut_reason


@dataclass
class _Top:
    """Everything above the tree: report header, top table, tree columns, and the rest
    of the bytes already read (the first part of the tree)."""

    header: _Header
    top_table: list[dict[str, Any]]
    cols: _Cols
    header_line_no: int
    pending: bytes


def _read_top(path: Path, acc: bytearray, m: Any, lenient: bool) -> _Top:
    """Check the bytes before the tree and parse the header, top table and tree columns,
    so that a file cut before its tree, or not a .prof at all, says so clearly."""
    if not acc.strip():
        raise ParseError(path, "a GHC .prof report, but the file is empty")
    if b"\x00" in acc[:4096]:
        raise ParseError(path, "a GHC .prof text report", found="binary data")
    if m is None:
        m = _RE_TREE_HEADER.search(acc)
    if m is None:
        head_lines = bytes(acc[:65536]).decode("utf-8", "replace").splitlines()
        if REPORT_MARK not in acc[:4096]:
            raise ParseError(
                path, "a GHC .prof report ('Time and Allocation Profiling Report')",
                line=1, found=head_lines[0] if head_lines else "")
        raise ParseError(path, "the cost-centre tree header ('COST CENTRE  MODULE ... no.  "
                         "entries  %time %alloc ...'); the file ends before the tree",
                         line=acc.count(b"\n") + (0 if acc.endswith(b"\n") else 1))
    top_lines = [ln.rstrip("\r") for ln in
                 bytes(acc[: m.start()]).decode("utf-8", "replace").split("\n")]
    header_line_no = len(top_lines)  # 1-based line number of the tree header
    tree_header = m.group(0).decode("ascii", "replace").rstrip("\r")
    cols = _cols_of(tree_header, "no.")
    if cols is None or cols.num_names not in (_TREE_NUM_COLS,
                                              _TREE_NUM_COLS + ["ticks", "bytes"]):
        raise ParseError(path, "tree header columns 'no. entries %time %alloc %time %alloc "
                         "[ticks bytes]'", line=header_line_no, found=tree_header.strip())
    header = _parse_header(path, top_lines, lenient)
    top_table = _parse_top_table(top_lines)
    return _Top(header, top_table, cols, header_line_no, bytes(acc[m.end() + 1 :]))


def _tree_layout(top: _Top, fast: bool) -> tuple[Any, float]:
    """The fast parser's layout, from a sample of the tree's first rows (None: every row
    goes through the line parser), and the sample's mean line length (bytes)."""
    if not fast:
        return None, 0.0
    sample = [ln for ln in top.pending[:262144].split(b"\n")[:-1][:400] if ln.strip()]
    layout = _layout_from_sample([ln.rstrip(b"\r") for ln in sample], top.cols.k)
    return layout, sum(len(ln) + 1 for ln in sample) / max(1, len(sample))


_StreamOut = tuple[FastTree | None, list[tuple[int, bytes]], int, bytes, str]


def _stream_tree(f: Any, top: _Top, fast: bool, eof: bool,
                 cut_reason: str, line0: int, total_size: int,
                 progress: Callable[[float], None] | None,
                 layout: tuple[Any, float] | None = None) -> _StreamOut:
    """Stream the tree rows through the fast columnar parser (or collect them for the
    line parser), block by block, so memory stays proportional to one block.

    Returns the fast tree (None without a fast layout), the rows left for the line
    parser, the next line number, the unterminated tail and the gzip cut reason.
    ``top.pending`` is taken over (and cleared) so that it is freed once copied.
    """
    lay, mean = _tree_layout(top, fast) if layout is None else layout
    pending, top.pending = top.pending, b""
    ft = None
    if lay is not None:  # rows expected from the sample's mean line length
        ft = FastTree(lay, expect_rows=int(1.02 * total_size / mean))
    slow: list[tuple[int, bytes]] = []
    # Blocks are read straight into one reusable buffer; the partial last line of a
    # block is moved to the front for the next one.
    work = np.zeros(max(2 * CHUNK_BYTES, len(pending) + CHUNK_BYTES) + _PAD, np.uint8)
    mv = memoryview(work)
    nfill = len(pending)
    work[:nfill] = np.frombuffer(pending, np.uint8)
    del pending
    done_bytes = 0
    while True:
        if not eof:
            if nfill + CHUNK_BYTES + _PAD > len(work):  # a line longer than the buffer
                bigger = np.zeros(2 * len(work), np.uint8)
                bigger[:nfill] = work[:nfill]
                work, mv = bigger, memoryview(bigger)
            got = f.readinto(mv[nfill : nfill + CHUNK_BYTES])
            cut_reason = cut_reason or cut_of(f)
            if got:
                nfill += got
            else:
                eof = True
        tail = work[max(0, nfill - 65536) : nfill]
        nls = np.flatnonzero(tail == 10)
        if len(nls):
            cut = max(0, nfill - 65536) + int(nls[-1]) + 1
        else:
            hits = np.flatnonzero(work[:nfill] == 10)
            cut = int(hits[-1]) + 1 if len(hits) else 0
        if cut == 0:
            if eof:
                break
            continue
        work[nfill : nfill + _PAD] = 0
        if ft is not None:
            line0 += ft.feed(work, cut, line0)
        else:
            for ln in work[:cut].tobytes().split(b"\n")[:-1]:
                ln = ln.rstrip(b"\r")
                if ln.strip():
                    slow.append((line0, ln))
                line0 += 1
        done_bytes += cut
        rest = nfill - cut
        work[:rest] = work[cut:nfill].copy()
        nfill = rest
        if progress:
            progress(min(0.7, 0.05 + 0.65 * done_bytes / total_size))
        if eof:
            break
    return ft, slow, line0, work[:nfill].tobytes(), cut_reason


def _stream_halves(path: Path, f: Any, top: _Top, lay: tuple[Any, float], eof: bool,
                   line0: int, total_size: int, progress: Callable[[float], None] | None,
                   cores: Any) -> _StreamOut | None:
    """:func:`_stream_tree` of a big plain file's tree in two halves at once, the second
    in a thread of its own: the chunks are parsed by numpy, which lets the other thread
    run, so the halves take 0.75-0.8x the time of one pass.  The second half's rows are
    then appended to the first's (:meth:`FastTree.absorb`): the same rows, ids and line
    numbers as one pass.  None (and ``f`` where it was) when the stream cannot seek (a
    gzipped file), is small, has no fast layout, or this read has one core."""
    if lay[0] is None or eof or not f.seekable() \
            or (int(cores) if cores else usable_cores()) < 2:
        return None
    start = f.tell()
    if total_size - start < SPLIT_BYTES:
        return None
    mid = _line_start(path, start + (total_size - start) // 2)
    if mid is None:
        return None
    pending0 = top.pending
    sizes = (mid - start + len(pending0), max(1, total_size - mid))
    stop = threading.Event()
    report = _HalvesProgress(progress, sizes, stop)

    def second() -> _StreamOut:
        with open(path, "rb") as g:
            g.seek(mid)
            top2 = _Top(top.header, top.top_table, top.cols, top.header_line_no, b"")
            return _stream_tree(g, top2, True, False, "", 0, sizes[1], report.of(1), lay)

    with ThreadPoolExecutor(1) as pool:
        later = pool.submit(second)
        try:
            ft, _, end, tail, _ = _stream_tree(_Bounded(f, mid - start), top, True, False,
                                               "", line0, sizes[0], report.of(0), lay)
        except BaseException:
            stop.set()  # the second half stops at its next chunk
            wait([later])
            raise
        ft2, _, end2, tail2, cut2 = later.result()
    if ft is None or ft2 is None or tail:  # not cut at a line start (a file being written)
        top.pending = pending0
        f.seek(start)
        return None
    ft.absorb(ft2, end)
    return ft, [], end + end2, tail2, cut2


def _line_start(path: Path, pos: int) -> int | None:
    """The offset of the first line that starts at or after ``pos`` (None: none in the
    next MB)."""
    with open(path, "rb") as g:
        g.seek(max(0, pos - 1))
        probe = g.read(1 << 20)
    nl = probe.find(b"\n")
    return None if nl < 0 else max(0, pos - 1) + nl + 1


class _Bounded:
    """The next ``limit`` bytes of the binary file ``f`` (``readinto`` only: what
    :func:`_stream_tree` reads)."""

    def __init__(self, f: Any, limit: int) -> None:
        self.f, self.left = f, limit

    def readinto(self, buf: Any) -> int:
        if self.left <= 0:
            return 0
        got = self.f.readinto(memoryview(buf)[: self.left]) or 0
        self.left -= got
        return got


class _HalvesProgress:
    """One ``progress`` for the two halves of :func:`_stream_halves`: each half reports
    its own share (0.05..0.7 of its bytes), summed here by bytes; a half whose partner
    failed stops at its next report."""

    def __init__(self, progress: Callable[[float], None] | None, sizes: tuple[int, int],
                 stop: threading.Event) -> None:
        self.progress, self.sizes, self.stop = progress, sizes, stop
        self.done = [0.0, 0.0]
        self.lock = threading.Lock()

    def of(self, half: int) -> Callable[[float], None]:
        def report(v: float) -> None:
            if self.stop.is_set():
                raise _Stopped()
            if self.progress is None:
                return
            with self.lock:
                self.done[half] = max(0.0, (v - 0.05) / 0.65) * self.sizes[half]
                frac = sum(self.done) / sum(self.sizes)
            self.progress(min(0.7, 0.05 + 0.65 * frac))
        return report


class _Stopped(Exception):
    """The other half of a two-half read failed: this one stops (never seen outside)."""


_Rows = tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], bool]


def _fast_rows(ft: FastTree | None, cols: _Cols, interner: FrameInterner,
               num_keys: list[str]) -> _Rows:
    """Line numbers, depths, frame ids and values of the fast-path rows, decoding each
    distinct left part (indent + names) once, in the order of its first row so frames
    are interned in file order; also whether the rows are in line order (they are)."""
    if ft is not None and ft.has_rows:
        f_line, f_ids, f_vals = ft.finish()
        n_reps = len(ft.reps)
        u_depth = np.empty(n_reps, dtype=np.int32)
        u_frame = np.empty(n_reps, dtype=np.int32)
        for u in np.argsort(ft.rep_line, kind="stable").tolist():
            d, name, module, src = _split_window(ft.reps[u], cols)
            u_depth[u] = d
            u_frame[u] = interner(name, module, src, 0, frame_kind(name))
        f_depth = u_depth[f_ids]
        f_frame = u_frame[f_ids]
    else:
        f_line = np.zeros(0, dtype=np.int64)
        f_depth = np.zeros(0, dtype=np.int32)
        f_frame = np.zeros(0, dtype=np.int32)
        f_vals = {key: np.zeros(0, dtype=np.int64) for key in num_keys}
    return f_line, f_depth, f_frame, f_vals, True


def _merge_slow_rows(path: Path, slow: list[tuple[int, bytes]], fast_rows: _Rows,
                     cols: _Cols, interner: FrameInterner, num_keys: list[str],
                     lenient: bool, warnings: list[str],
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Parse the rows the fast path did not take (odd layouts, corrupt lines) with the
    line parser and merge them with the fast rows in file order."""
    f_line, f_depth, f_frame, f_vals, f_sorted = fast_rows
    s_line: list[int] = []
    s_depth: list[int] = []
    s_frame: list[int] = []
    s_vals: list[list[int]] = []
    for line_no, ln_b in slow:
        line = ln_b.decode("utf-8", "replace")
        try:
            d, name, module, src, vals = _parse_line(line, cols)
        except _RowError as e:
            if not lenient:
                raise ParseError(path, str(e), line=line_no,
                                 found=e.found or line.strip()) from None
            warnings.append(f"line {line_no}: skipped, expected {e}: "
                            f"{(e.found or line.strip())[:100]!r}")
            continue
        s_line.append(line_no)
        s_depth.append(d)
        s_frame.append(interner(name, module, src, 0, frame_kind(name)))
        s_vals.append([round(v * 10) if c.startswith("%") else int(v)
                       for c, v in zip(num_keys, vals[1:], strict=True)])
    if s_line or not f_sorted:
        line_of_row = np.concatenate([f_line, np.asarray(s_line, dtype=np.int64)])
        order = _order_of_unique(line_of_row)
        line_of_row = line_of_row[order]
        depth = np.concatenate([f_depth, np.asarray(s_depth, dtype=np.int32)])[order]
        frame = np.concatenate([f_frame, np.asarray(s_frame, dtype=np.int32)])[order]
        sv = np.asarray(s_vals, dtype=np.int64).reshape(len(s_line), len(num_keys))
        all_vals = {key: np.concatenate([f_vals[key], sv[:, i]])[order]
                    for i, key in enumerate(num_keys)}
        return line_of_row, depth, frame, all_vals
    return f_line, f_depth, f_frame, f_vals


def read(path: Path, *, lenient: bool = False, progress: Callable[[float], None] | None = None,
         fast: bool = True, **options: object) -> Profile:
    """Parse a ``.prof`` report (plain or gzipped), streaming the tree in chunks.

    ``fast=False`` sends every row through the per-line parser (tests use it to check that
    both paths agree).  Steps: header (:func:`_read_top`), body (:func:`_stream_tree`,
    :func:`_fast_rows`, :func:`_merge_slow_rows`), build (:func:`_build`).
    """
    path = Path(path)
    try:
        total_size = max(1, path.stat().st_size)
    except OSError as e:
        raise ParseError(path, "a readable file", found=str(e)) from e
    with open_binary(path) as f:
        acc, m, eof, cut_reason = _read_until_tree_header(path, f)
        top = _read_top(path, acc, m, lenient)
        del acc
        cols, header_line_no = top.cols, top.header_line_no
        warnings = list(top.header.warnings)
        lay = _tree_layout(top, fast)
        got = _stream_halves(path, f, top, lay, eof, header_line_no + 1, total_size, progress,
                             options.get("cores"))
        if got is None:
            got = _stream_tree(f, top, fast, eof, cut_reason, header_line_no + 1, total_size,
                               progress, lay)
        ft, slow, line0, pending, cut_reason = got
    if ft is not None:
        slow = ft.slow
    # A final line without its newline was cut while being written: never trust it.
    incomplete_reason = cut_reason
    if pending:  # even a few spaces: the rest of that row never arrived
        incomplete_reason = incomplete_reason or (
            f"the file ends in the middle of line {line0} (cut while being written?)")

    interner = FrameInterner()
    num_keys = ["entries", "%time2", "%alloc3", "%time4", "%alloc5"] + (
        ["ticks", "bytes"] if cols.k == 8 else [])
    fast_rows = _fast_rows(ft, cols, interner, num_keys)
    if progress:
        progress(0.75)
    line_of_row, depth, frame, vals = _merge_slow_rows(
        path, slow, fast_rows, cols, interner, num_keys, lenient, warnings)
    # Empty names hide their indent: guess "child of the previous row".
    for i in np.flatnonzero(depth < 0).tolist():
        depth[i] = depth[i - 1] + 1 if i > 0 else 0
        warnings.append(f"line {int(line_of_row[i])}: empty cost-centre name, depth guessed "
                        "as a child of the previous row")
    parent, end = tree_from_depth(depth)
    if len(depth) == 0 and not incomplete_reason:
        incomplete_reason = f"the file ends after the tree header (line {header_line_no})"
    prof = _build(path, top.header, top.top_table, cols, parent, end, frame, interner, vals,
                  warnings, incomplete_reason, line_of_row)
    if well_formed(depth):  # the listing's depths are the tree's: no pass to derive them
        prof.adopt_depth(depth)
    prof.offer_subtree_ends(end)  # rows listed depth first: ids in pre-order
    if progress:
        progress(1.0)
    return prof


def _order_of_unique(keys: np.ndarray) -> np.ndarray:
    """Sorting permutation of distinct integers in a small range (line numbers): one
    scatter instead of a comparison sort."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    lo = int(keys.min())
    slot = np.full(int(keys.max()) - lo + 1, -1, dtype=np.int64)
    slot[keys - lo] = np.arange(len(keys))
    return slot[slot >= 0]


def _split_window(lb: bytes, cols: _Cols) -> tuple[int, str, str, str]:
    """(depth, name, module, src) of a fast row's left part (bytes, cut at byte columns:
    such rows share the header's byte layout)."""
    mc, sc = cols.mod_col, cols.src_col
    name_b = lb[:mc]
    depth = len(name_b) - len(name_b.lstrip(b" "))
    if lb[mc - 1 : mc] == b" " and lb[mc : mc + 1] not in (b" ", b"") and (
        sc is None or (lb[sc - 1 : sc] == b" " and lb[sc : sc + 1] not in (b" ", b""))
    ):
        name = name_b.strip().decode("utf-8", "replace")
        if sc is None:
            module, src = lb[mc:].strip().decode("utf-8", "replace"), ""
        else:
            module = lb[mc:sc].strip().decode("utf-8", "replace")
            src = lb[sc:].strip().decode("utf-8", "replace")
    else:
        left = lb.decode("utf-8", "replace")
        name, module, src, _ = _split_left(left, cols)
        depth = len(left) - len(left.lstrip(" "))
    if not name and depth >= mc:
        depth = -1
    return depth, name, module, src


def _build(path: Path, header: _Header, top_table: list[dict[str, Any]], cols: _Cols,
           parent: np.ndarray, end: np.ndarray, frame: np.ndarray, interner: FrameInterner,
           vals: dict[str, np.ndarray], warnings: list[str], incomplete_reason: str,
           line_of_row: np.ndarray) -> Profile:
    raw = cols.k == 8
    totals = dict(header.totals)
    meta = dict(header.meta)
    total_ticks = float(totals.get("total_ticks", np.nan))
    total_alloc = float(totals.get("total_alloc_bytes", np.nan))
    total_time = float(totals.get("total_time_s", np.nan))
    scale = time_scale(total_ticks, total_time, meta.get("tick_interval_us"),
                       meta.get("processors")) if np.isfinite(total_ticks) else np.nan
    frames = interner.table()
    names = frames.name
    used = np.zeros(len(frames), dtype=bool)
    used[frame] = True
    is_pa = bool(np.isin(names[used], list(SYSTEM_CCS)).any())
    meta["percent_basis"] = PERCENT_BASIS_TEXT_PA if is_pa else PERCENT_BASIS_TEXT
    meta["src_column"] = cols.src_col is not None
    meta["raw_columns"] = raw
    # int64 columns as read (no copies); percentages from exact ticks/bytes when the
    # header has totals, else the printed (rounded) ones
    cols_out: dict[str, np.ndarray] = {"entries": np.asarray(vals["entries"], dtype=np.int64)}
    metrics = [M_ENTRIES, M_TIME_PCT, M_ALLOC_PCT, M_ITIME_PCT, M_IALLOC_PCT]
    if raw:
        ticks = np.asarray(vals["ticks"], dtype=np.int64)
        nbytes = np.asarray(vals["bytes"], dtype=np.int64)
        iticks = subtree_sums(ticks, end)
        ibytes = subtree_sums(nbytes, end)
        by_ticks, by_bytes = total_ticks > 0, total_alloc > 0
        time_pct = ticks * (100.0 / total_ticks) if by_ticks else vals["%time2"] / 10.0
        itime_pct = iticks * (100.0 / total_ticks) if by_ticks else vals["%time4"] / 10.0
        alloc_pct = nbytes * (100.0 / total_alloc) if by_bytes else vals["%alloc3"] / 10.0
        ialloc_pct = ibytes * (100.0 / total_alloc) if by_bytes else vals["%alloc5"] / 10.0
        cols_out.update(ticks=ticks, bytes=nbytes, time_s=ticks * scale,
                        alloc_bytes=nbytes.astype(np.float64),
                        inherited_time_s=iticks * scale,
                        inherited_alloc_bytes=ibytes.astype(np.float64))
        metrics += [M_TICKS, M_BYTES]
    else:
        time_pct = vals["%time2"] / 10.0
        alloc_pct = vals["%alloc3"] / 10.0
        itime_pct = vals["%time4"] / 10.0
        ialloc_pct = vals["%alloc5"] / 10.0
        cols_out.update(time_s=time_pct / 100.0 * total_time,
                        alloc_bytes=alloc_pct / 100.0 * total_alloc,
                        inherited_time_s=itime_pct / 100.0 * total_time,
                        inherited_alloc_bytes=ialloc_pct / 100.0 * total_alloc)
    cols_out.update(time_pct=time_pct, alloc_pct=alloc_pct, inherited_time_pct=itime_pct,
                    inherited_alloc_pct=ialloc_pct)
    rounding = _rounding(raw, total_time, total_alloc)
    metrics += [M_TIME_S, M_ALLOC_B, M_ITIME_S, M_IALLOC_B]
    if not incomplete_reason and len(parent):
        incomplete_reason = _check_cut(parent, end, vals, raw, total_ticks, total_alloc,
                                       line_of_row, frame, frames, top_table)
    default = "inherited_time_pct" if total_ticks and total_ticks > 0 else "inherited_alloc_pct"
    return profile_from_arrays(
        path=str(path), format=FORMAT, frames=frames, parent=parent, frame=frame,
        metrics=metrics, columns=cols_out, meta=meta, totals=totals,
        total_metrics={k: v for k, v in TOTAL_METRICS.items() if k in totals},
        incomplete=bool(incomplete_reason), incomplete_reason=incomplete_reason,
        warnings=tuple(warnings), extras={"top_table": top_table},
        default_metric=default,
        display_metrics=DISPLAY_METRICS,
        rounding=rounding,
    )


PRINTED_PCT_HALF = 0.05
"""GHC prints %time and %alloc with one decimal: each is known to +-0.05 points."""


def _rounding(raw: bool, total_time: float, total_alloc: float) -> dict[str, float]:
    """Half-widths of the rounding interval of each value (see ``Profile.rounding``).

    ``-P`` reports print ticks and bytes, so every value is exact there.  A plain ``-p``
    report prints only rounded percentages: a cost centre's 0.1 %alloc of a 4.3 GB run may
    be anything from 2.1 to 6.4 MB, and the bytes derived from it carry that uncertainty.
    """
    if raw:
        return {}
    half = PRINTED_PCT_HALF
    out = {"time_pct": half, "alloc_pct": half, "inherited_time_pct": half,
           "inherited_alloc_pct": half}
    if np.isfinite(total_time):
        out["time_s"] = out["inherited_time_s"] = half / 100.0 * total_time
    if np.isfinite(total_alloc):
        out["alloc_bytes"] = out["inherited_alloc_bytes"] = half / 100.0 * total_alloc
    return out


def _check_cut(parent: np.ndarray, end: np.ndarray, vals: dict[str, np.ndarray], raw: bool,
               total_ticks: float, total_alloc: float, line_of_row: np.ndarray,
               frame: np.ndarray | None = None, frames: Any = None,
               top_table: list[dict[str, Any]] | None = None) -> str:
    """Does the tree account for the header's totals, within its columns' precision?

    A report cut exactly at a line end loses whole rows; what was read still parses.
    ``-P`` reports print exact ticks and bytes, and GHC's header totals are their sums,
    so any missing cost shows exactly.  ``-p`` reports print percentages rounded to 0.1:
    a row's inherited share must equal its own share plus its children's inherited
    shares, within 0.05 per rounded term (checked on the last row's ancestors, the only
    rows a cut can rob of children), and every cost centre of GHC's flat top table must
    find its share in the tree.  Rows whose costs all round to 0.0 cannot be missed.
    """
    if raw:
        for key, tot, unit in (("ticks", total_ticks, "ticks"), ("bytes", total_alloc, "bytes")):
            if not np.isfinite(tot) or tot <= 0:
                continue
            got = int(vals[key].sum())
            if got < tot:
                return (f"the tree seems cut after line {int(line_of_row[-1])}: its rows hold "
                        f"{got:,} of the header's {int(tot):,} {unit}")
    n = len(parent)
    anc = []
    node = n - 1
    while node >= 0:
        anc.append(node)
        node = int(parent[node])
    anc_a = np.asarray(anc, dtype=np.int64)
    is_anc = np.zeros(n, dtype=bool)
    is_anc[anc_a] = True
    # children of the ancestors: their printed inherited shares and how many there are
    kids = np.flatnonzero((parent >= 0) & is_anc[np.maximum(parent, 0)])
    slot = np.full(n, -1, dtype=np.int64)
    slot[anc_a] = np.arange(len(anc_a))
    for inh_key, self_key in (("%alloc5", "%alloc3"), ("%time4", "%time2")):
        printed = vals[inh_key][anc_a].astype(np.int64)  # tenths of a percent
        kid_sum = np.zeros(len(anc_a), dtype=np.int64)
        n_kids = np.zeros(len(anc_a), dtype=np.int64)
        np.add.at(kid_sum, slot[parent[kids]], vals[inh_key][kids].astype(np.int64))
        np.add.at(n_kids, slot[parent[kids]], 1)
        have = vals[self_key][anc_a].astype(np.int64) + kid_sum
        # each rounded term is off by at most half a tenth; one tenth of slack on top
        tol = (n_kids + 2) * 0.5 + 1
        bad = np.flatnonzero(printed - have > tol)
        if len(bad):
            j = int(bad[-1])
            return (f"the tree seems cut after line {int(line_of_row[-1])}: the row at line "
                    f"{int(line_of_row[anc_a[j]])} prints inherited costs its children do "
                    f"not add up to ({printed[j] / 10:.1f}% vs {have[j] / 10:.1f}%)")
    if top_table and frames is not None and frame is not None:
        return _check_top_table(vals, frame, frames, top_table, line_of_row)
    return ""


def _check_top_table(vals: dict[str, np.ndarray], frame: np.ndarray, frames: Any,
                     top_table: list[dict[str, Any]], line_of_row: np.ndarray) -> str:
    """Every cost centre GHC lists in its flat table must have its share in the tree."""
    key_of = {(nm, md): i for i, (nm, md) in enumerate(zip(frames.name.tolist(),
                                                           frames.module.tolist(),
                                                           strict=True))}
    fid_of_cc = np.asarray([key_of.get((nm, md), -1) for nm, md in
                            zip(frames.name.tolist(), frames.module.tolist(), strict=True)])
    nf = len(fid_of_cc)

    def per_cc(weights: np.ndarray | None) -> np.ndarray:
        """Sums per cost centre: per frame over the rows, then over the frames."""
        by_frame = np.bincount(frame, weights=weights, minlength=nf)
        return np.bincount(fid_of_cc, weights=by_frame, minlength=nf) if nf else by_frame

    rows = per_cc(None)
    for col, key in (("time_pct", "%time2"), ("alloc_pct", "%alloc3")):
        tenth = per_cc(vals[key])
        for r in top_table:
            want = round(float(r.get(col) or 0.0) * 10)
            fid = key_of.get((r.get("name", ""), r.get("module", "")))
            got = float(tenth[fid]) if fid is not None else 0.0
            n_rows = int(rows[fid]) if fid is not None else 0
            if want - got > (n_rows + 1) * 0.5 + 1:
                return (f"the tree seems cut after line {int(line_of_row[-1])}: cost centre "
                        f"{r.get('module', '')}.{r.get('name', '')} has {want / 10:.1f}% "
                        f"{'time' if col == 'time_pct' else 'alloc'} in the header's table "
                        f"but only {got / 10:.1f}% in the tree")
    return ""
