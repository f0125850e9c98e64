"""GHC ticky-ticky report reader (``+RTS -r<file>`` of a program built with ``-ticky``).

A ticky report has three parts, all plain text (GHC's ``rts/Ticky.c``):

1. an optional quoted command line (``'./prog' '20' +RTS '-rprog.ticky'``; absent in the
   GHC 7.x files), then the **summary**: ``ENTERS`` and its breakdown, ``FUNCTION
   ENTRIES``, ``TAIL CALLS`` (with the share to known functions), ``SLOW APPLICATIONS``
   and its FUN/PAP table, ``RETURNS`` (with the share from new constructors), the
   ``RET_NEW`` / ``RET_OLD`` / ``RET_UNBOXED_TUP`` histograms (percent per arity 0..8),
   ``UPDATE FRAMES``, ``CATCH FRAMES``, ``UPDATES`` and its breakdown;
2. the **per-closure table**, one row per registered ``StgEntCounter``;
3. after a line of stars, the **raw counters**, ``<number> <COUNTER_NAME>`` per line,
   always ending with ``GC_FAILED_PROMOTION_ctr`` (used to notice a cut file).

Table layouts (told apart by the header line; column widths come from the header):

* GHC 7.8 .. 9.2 (``ghc_layout = "<=9.2"``): ``%11d%11d%11d %3lu %-20.20s %s`` -
  Entries, Alloc, Alloc'd, arity, argument kinds (cut to 20 chars), STG name;
* GHC 9.4+ (``ghc_layout = "9.4+"``): ``%11d%12d%12d %3lu %-60.60s %s``.  The argument
  field holds either the kind letters or a JSON object
  ``{"type":"entCntr","subTy":"fun|lne|thk|thk_u|con","fvs_c":N,"fvs":"...","args":"..."}``;
  both are read.  The JSON may be cut by the 60-char precision, so fields are recovered
  one by one from what is there (``info_truncated`` says so).  No public 9.4 file was
  found; the tests use a file synthesised from the format in GHC's source.
* GHC < 7.8 (``ghc_layout = "<=9.2"``, ``meta["table_format"] = "allocs-words"``):
  ``Entries Allocs Arity Stack Kinds Function``, allocation counted in **words** (the
  "All allocation numbers are in bytes" line only appears from 7.8 on), so the column is
  the metric ``alloc_words`` rather than ``alloc``, and there is no ``allocd``.

Model: a one-level tree, one root node per table row, in file order (the RTS prints the
counters in registration order).  Metrics (all ``Kind.SELF``, deterministic counters):

* ``entries`` (count) - times the closure's code was entered;
* ``alloc`` (bytes) - heap allocated *by* the closure's code while it ran
  (``StgEntCounter.allocs``, "Heap allocated by this thing");
* ``allocd`` (bytes) - heap allocated *for* instances of this closure, i.e. how much the
  closure itself cost to build (``StgEntCounter.allocd``); only counted with
  ``-ticky-allocd``, zero otherwise.

Identity: STG names carry build-specific uniques and parents,
``$weval0{v skDS} (BenchMnistTools) (fun) in rigR`` (local: module in parentheses,
``in <unique of the enclosing binding>``) or ``AD.Dual.$wmulD{v r2Xp} (fun)`` (global).
Frames keep the raw STG name as ``name`` (display) and get a ``match`` string without
uniques: ``"<name> (<kind>) in <enclosing> in <its enclosing>..."`` where the enclosing
bindings are found by looking their uniques up in the same table (``?`` when the parent
was never entered).  ``sat_s79n{v}``-style system names lose their ``_<unique>`` suffix.
A local and a global spelling of one binding (``$wevalDelta{v r4Bn} (AD.Eval) (fun)`` vs
``AD.Eval.$wevalDelta{v r47g} (fun)``) get the same key.  Several rows may share a key
(many ``sat`` closures in one function); they stay separate nodes, the comparison pairs
them by order, and ``extras["ambiguous_keys"]`` lists those keys.  ``kind`` is
``closure:fun|thk|con|lne|...`` (``closure`` when GHC 7.x printed no kind).

Run-level data:

* ``extras["counters"]``: every raw counter, keyed by the **GHC counter name as printed**
  (``ALLOC_HEAP_tot``, ``RET_NEW_hst_2``, ...; the ``E!NT_``/``U!PD_`` spellings of old
  RTSs are repaired, the "requires +RTS -Z" note goes to ``extras["counter_notes"]``);
* ``totals`` (with ``total_metrics``), snake_case: the summary (``enters``,
  ``enters_direct_pct``, ``enters_thunks``, ``enters_data_values``, ``function_entries``,
  ``tail_calls``, ``known_tail_calls``, ``known_tail_calls_pct``,
  ``slow_apps_evaluated``, ``returns``, ``returns_new``, ``ret_new_pct``,
  ``update_frames``, ``catch_frames``, ``updates``, ...), the main raw counters
  (``alloc_total`` = ``ALLOC_HEAP_tot`` in bytes, ``heap_allocations``, ``known_calls``,
  ``unknown_calls``, ``slow_calls``, ``thunks_allocated``, ...) and table sums
  (``closures``, ``table_entries``, ``table_alloc``, ``table_allocd``) - only what the
  file has;
* ``extras["summary"]``: the same summary numbers; ``extras["slow_applications"]`` the
  FUN/PAP table; ``extras["histograms"]``: ``{"RET_NEW": {"total", "percent", "counts"}}``;
* ``extras["closures"]``: per-node columns ``occ`` (normalised name), ``arity``, ``args``
  (argument kind letters), and for
  JSON rows ``info_type``, ``sub_type``, ``fv_count``, ``fv_kinds``, ``info_truncated``;
  ``stack`` for the pre-7.8 table.

``meta``: ``program``, ``command_line``, ``ghc_layout``, ``table_format``,
``table_header``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .builder import flat_profile
from .errors import ParseError
from .gzip_io import LATIN1_FALLBACK, read_all
from .model import Kind, Metric, Profile, Unit, make_frame_table
from .values import BadValue, count

FORMAT = "ghc-ticky"
DESCRIPTION = "GHC ticky-ticky report (+RTS -r)"

_EXPECTED = (
    "a GHC ticky-ticky report (+RTS -r): the 'STACK USAGE:'/'ENTERS:' summary, "
    "the 'Entries  Alloc ...' table or raw '<n> ALLOC_HEAP_ctr' counters"
)

METRIC_ENTRIES = Metric(
    "entries", Unit.COUNT, Kind.SELF, "entries", "times the closure's code was entered"
)
METRIC_ALLOC = Metric(
    "alloc", Unit.BYTES, Kind.SELF, "alloc",
    "heap bytes allocated by the closure's code while it ran (Alloc)",
)
METRIC_ALLOCD = Metric(
    "allocd", Unit.BYTES, Kind.SELF, "alloc'd",
    "heap bytes allocated for instances of this closure (Alloc'd; 0 unless -ticky-allocd)",
)
METRIC_ALLOC_WORDS = Metric(
    "alloc_words", Unit.COUNT, Kind.SELF, "alloc (words)",
    "heap words allocated by the closure's code (GHC < 7.8 counted words, not bytes)",
)

# The last raw counter every RTS since GHC 6.x prints: a file that stops before it was cut.
_LAST_COUNTER = "GC_FAILED_PROMOTION_ctr"

# ----------------------------------------------------------------------------------------
# Line patterns
# ----------------------------------------------------------------------------------------
_STARS = re.compile(r"^\*{10,}\s*$")
_COUNTER = re.compile(r"^\s*(-?\d+) ([A-Z][A-Za-z0-9_!]*_[A-Za-z0-9_!]+)(?:\s+(.*?))?\s*$")
_ROW_NEW = re.compile(r"^\s*(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(\d+) (.*)$")
_ROW_OLD = re.compile(r"^\s*(-?\d+)\s+(-?\d+)\s+(\d+)\s+(\d+)\s(.*)$")
_ENTERS = re.compile(r"^ENTERS:\s*(\d+)\s+of which\s+(\d+)\s+\(\s*([\d.]+)%\)")
_TAIL = re.compile(r"^TAIL CALLS:\s*(\d+),\s*of which\s+(\d+)\s+\(\s*([\d.]+)%\)")
_SLOW = re.compile(r"^SLOW APPLICATIONS:\s*(\d+) evaluated,\s*(\d+) unevaluated")
_SLOW_ROW = re.compile(r"^(FUN|PAP)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_UPDF = re.compile(r"^UPDATE FRAMES:\s*(\d+)\s+\((\d+) omitted")
_BREAKDOWN = re.compile(r"^(-?\d+)\s+\(\s*([\d.]+)%\)\s+(.*?)\s*$")
_INPLACE = re.compile(r"^\[(\d+) in place,\s*(\d+) allocated new space\]")
_HIST = re.compile(r"^([A-Z][A-Z_ ]*?)\s*:\s*(-?\d+):\s*(.*)$")
_ALLOCS_HDR = re.compile(r"^ALLOCATIONS:\s*(\d+)\s+\((\d+) words total")
_GENERIC = re.compile(r"^([A-Z][A-Za-z ]*[A-Za-z]):\s*(-?\d+)\b")
_GEN_UPD = re.compile(r"^(NEW|OLD) GEN UPDATES:\s*(\d+)")
_HEADING = re.compile(r"[A-Z][A-Z ]*[A-Z]")
_SECTIONS = {"SLOW APPLICATIONS": "slow_apps", "UPDATE FRAMES": "update_frames"}

# summary breakdown labels -> nicer total names (section, label) -> key
_BREAKDOWN_KEYS = {
    ("enters", "thunks"): "enters_thunks",
    ("enters", "data values"): "enters_data_values",
    ("enters", "normal indirections"): "enters_normal_ind",
    ("enters", "permanent indirections"): "enters_permanent_ind",
    ("returns", "from entering a new constructor"): "returns_new",
    ("returns", "vectored [the rest unvectored]"): "returns_vectored",
    ("updates", "data values"): "updates_data_values",
    ("updates", "partial applications"): "updates_paps",
    ("updates", "updates by squeezing"): "updates_squeezed",
}
_PCT_KEYS = {"returns_new": "ret_new_pct"}

# raw counters worth a place in ``totals`` (bytes where the layout counts bytes)
_COUNTER_TOTALS: tuple[tuple[str, str, str], ...] = (
    ("ALLOC_HEAP_ctr", "heap_allocations", "heap allocation points executed (ALLOC_HEAP_ctr)"),
    ("KNOWN_CALL_ctr", "known_calls", "calls to known functions, exact arity (KNOWN_CALL_ctr)"),
    ("UNKNOWN_CALL_ctr", "unknown_calls", "calls to unknown functions (UNKNOWN_CALL_ctr)"),
    ("SLOW_CALL_ctr", "slow_calls", "slow calls through the generic apply (SLOW_CALL_ctr)"),
    ("VERY_SLOW_CALL_ctr", "very_slow_calls", "calls with no built-in pattern (VERY_SLOW_CALL_ctr)"),
    ("ENT_LNE_ctr", "lne_entries", "let-no-escape entries (ENT_LNE_ctr)"),
    ("ALLOC_CON_ctr", "cons_allocated", "constructors allocated (ALLOC_CON_ctr)"),
    ("ALLOC_FUN_ctr", "funs_allocated", "function closures allocated (ALLOC_FUN_ctr)"),
    ("ALLOC_PAP_ctr", "paps_allocated", "partial applications allocated (ALLOC_PAP_ctr)"),
    ("HEAP_CHK_ctr", "heap_checks", "heap checks (HEAP_CHK_ctr)"),
    ("STK_CHK_ctr", "stack_checks", "stack checks (STK_CHK_ctr)"),
)
_BYTE_TOTALS: tuple[tuple[str, str, str], ...] = (
    ("ALLOC_HEAP_tot", "alloc_total", "heap bytes allocated by ticky-compiled code (ALLOC_HEAP_tot)"),
    ("ALLOC_CON_gds", "con_alloc_bytes", "bytes of constructors allocated (ALLOC_CON_gds)"),
    ("ALLOC_THK_gds", "thunk_alloc_bytes", "bytes of thunks allocated (ALLOC_THK_gds)"),
    ("ALLOC_FUN_gds", "fun_alloc_bytes", "bytes of function closures allocated (ALLOC_FUN_gds)"),
)

_TOTAL_LABELS: dict[str, tuple[str, str]] = {
    "enters": ("enters", "closures entered (all kinds)"),
    "enters_direct": ("direct enters", "enters straight to the entry code"),
    "enters_direct_pct": ("direct enters %", "share of enters straight to the entry code"),
    "function_entries": ("function entries", "direct entries of functions"),
    "tail_calls": ("tail calls", "known + unknown tail calls"),
    "known_tail_calls": ("known tail calls", "tail calls to known functions"),
    "known_tail_calls_pct": ("known tail calls %", "share of tail calls to known functions"),
    "slow_apps_evaluated": ("slow apps", "slow applications (evaluated function)"),
    "slow_apps_unevaluated": ("slow apps uneval.", "slow applications of unevaluated functions"),
    "returns": ("returns", "returns to a continuation"),
    "returns_new": ("returns (new con)", "returns from entering a new constructor"),
    "ret_new_pct": ("returns new con %", "share of returns from a new constructor"),
    "update_frames": ("update frames", "update frames pushed"),
    "update_frames_omitted": ("update frames omitted", "update frames omitted from thunks"),
    "catch_frames": ("catch frames", "catch frames pushed"),
    "updates": ("updates", "thunk updates"),
    "alloc_total_words": ("alloc (words)", "heap words allocated (ALLOC_HEAP_tot, GHC < 7.8)"),
    "closures": ("closures", "rows of the per-closure table"),
    "table_entries": ("table entries", "sum of the table's Entries column"),
    "table_alloc": ("table alloc", "sum of the table's Alloc column"),
    "table_allocd": ("table alloc'd", "sum of the table's Alloc'd column"),
    "table_alloc_words": ("table alloc (words)", "sum of the table's Allocs column (words)"),
    "thunks_allocated": ("thunks allocated", "ALLOC_UP_THK_ctr + ALLOC_SE_THK_ctr"),
}


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


# ----------------------------------------------------------------------------------------
# Detection
# ----------------------------------------------------------------------------------------
def sniff(head: bytes, path: Path) -> float:
    """Confidence from content: the summary headings, the table header or raw counters."""
    text = head[:65536]
    score = 0.0
    if b"STACK USAGE:" in text and b"ENTERS:" in text:
        score = 0.95
    elif b"ENTERS:" in text and (b"FUNCTION ENTRIES:" in text or b"TAIL CALLS:" in text):
        score = 0.9
    elif re.search(rb"(?m)^ *Entries +Alloc +Alloc'd +Non-void Arguments +STG Name", text) or (
        re.search(rb"(?m)^ *Entries +Allocs +Arity +Stack +Kinds +Function", text)
    ):
        score = 0.85
    elif re.search(rb"(?m)^ *\d+ ALLOC_HEAP_ctr\s*$", text) and re.search(
        rb"(?m)^ *\d+ ALLOC_HEAP_tot\s*$", text
    ):
        score = 0.8
    if score and path.suffix.lower() == ".ticky":
        score = min(1.0, score + 0.02)
    return score


# ----------------------------------------------------------------------------------------
# STG names
# ----------------------------------------------------------------------------------------
class StgName(NamedTuple):
    """The parts of one ticky STG name (see :func:`parse_stg_name`)."""

    occ: str  # name without module qualification or unique, e.g. "$wmulD", "sat"
    module: str  # "AD.Dual" (package prefix removed)
    kind: str  # base closure kind: "fun", "thk", "con", "lne" or ""
    flags: str  # the whole parenthesised kind as printed: "fun,se", "con: Just", ""
    unique: str  # "r2Xp" or "" (system names carry it in the occ suffix)
    parent: str  # unique of the enclosing binding ("in r76X") or ""


_BRACES = re.compile(r"^(?P<q>.+?)\{v(?: (?P<u>[^}]*))?\}(?P<rest>.*)$")
_QUAL = re.compile(r"^(?:[\w.\-]+:)?(?P<mod>:?(?:[A-Z][\w']*\.)+)(?P<occ>.+)$")
_PKG = re.compile(r"^[\w.\-]+:(?=[A-Z])")
_REST_MOD = re.compile(r"^\s*\((?P<mod>(?:[\w.\-]+:)?[A-Z][\w'.]*)\)")
_REST_KIND = re.compile(r"^\s*\((?P<kind>(?:fun|thk|con|LNE|lne)[^()]*)\)")
_REST_IN = re.compile(r"\bin (?P<p>\S+)\s*$")
_SYS_UNIQUE = re.compile(r"^(?P<occ>.+?)_(?P<u>[a-zA-Z][0-9a-zA-Z]+)$")


def parse_stg_name(raw: str) -> StgName:
    """Split a ticky STG name into occurrence name, module, kind, unique and parent unique.

    Handles GHC 7.x (``main:M.f{v r1}``, ``a{v r2} (main:M) in r3``, no kind) through 9.x
    (``f{v r1} (M) (fun,se) in r3``, ``M.f{v r1} (fun)``, ``sat_s79n{v} (M) (fun) in r3``).
    Unparseable text comes back whole as ``occ`` so it still displays and matches exactly.
    """
    raw = raw.strip()
    m = _BRACES.match(raw)
    if m is None:
        q, unique = raw.split(" ", 1)[0], ""
        rest = raw[len(q):]
    else:
        q, unique, rest = m.group("q"), (m.group("u") or "").strip(), m.group("rest")
    module = ""
    occ = q
    qm = _QUAL.match(q)
    if qm is not None:
        module, occ = qm.group("mod")[:-1], qm.group("occ")
    if m is not None and not unique:
        sm = _SYS_UNIQUE.match(occ)
        if sm is not None:
            occ, unique = sm.group("occ"), sm.group("u")
    kind = flags = parent = ""
    mm = _REST_MOD.match(rest)
    if mm is not None:
        module = _PKG.sub("", mm.group("mod"))
        rest = rest[mm.end():]
    km = _REST_KIND.match(rest)
    if km is not None:
        flags = km.group("kind").strip()
        base = re.split(r"[,:\s]", flags, maxsplit=1)[0]
        kind = base.lower()
        rest = rest[km.end():]
    im = _REST_IN.search(rest)
    if im is not None:
        parent = im.group("p")
    return StgName(occ, module, kind, flags, unique, parent)


# ----------------------------------------------------------------------------------------
# Argument field (kind letters or 9.4 JSON info)
# ----------------------------------------------------------------------------------------
_J_STR = {
    k: re.compile(rf'"{k}"\s*:\s*"((?:[^"\\]|\\.)*)') for k in ("type", "subTy", "fvs", "args")
}
_J_INT = re.compile(r'"fvs_c"\s*:\s*(-?\d+)')


def parse_arg_info(text: str) -> dict[str, Any]:
    """Columns of the 9.4+ JSON info field; partial (``truncated``) when the RTS cut it."""
    text = text.strip()
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            fvc = str(obj.get("fvs_c", ""))
            return {
                "type": str(obj.get("type", "")),
                "sub_type": str(obj.get("subTy", "")),
                "fv_count": int(fvc) if fvc.lstrip("-").isdigit() else -1,
                "fv_kinds": str(obj.get("fvs", "")),
                "args": str(obj.get("args", "")),
                "truncated": False,
            }
    except ValueError:
        pass
    out: dict[str, Any] = {"type": "", "sub_type": "", "fv_count": -1, "fv_kinds": "",
                           "args": "", "truncated": True}
    for key, col in (("type", "type"), ("subTy", "sub_type"), ("fvs", "fv_kinds"),
                     ("args", "args")):
        m = _J_STR[key].search(text)
        if m is not None:
            out[col] = m.group(1)
    m = _J_INT.search(text)
    if m is not None:
        out["fv_count"] = int(m.group(1))
    return out


def _json_end(s: str) -> int:
    """Index just past the JSON object that starts ``s`` (-1 when it never closes)."""
    depth = 0
    in_str = esc = False
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


# ----------------------------------------------------------------------------------------
# Reader
# ----------------------------------------------------------------------------------------
class _Table:
    """Column lists of the per-closure table (one entry per row)."""

    def __init__(self) -> None:
        self.entries: list[int] = []
        self.alloc: list[int] = []
        self.allocd: list[int] = []
        self.arity: list[int] = []
        self.stack: list[int] = []
        self.args: list[str] = []
        self.names: list[str] = []
        self.info: list[dict[str, Any] | None] = []

    def __len__(self) -> int:
        return len(self.names)


def _command_line(line: str) -> tuple[str, str]:
    """(program, command line) from the quoted first line the RTS writes."""
    cmd = line.strip()
    try:
        toks = shlex.split(cmd, posix=True)
    except ValueError:
        toks = cmd.split()
    prog = toks[0] if toks else ""
    prog = re.split(r"[\\/]", prog)[-1]
    return prog, cmd


@dataclass
class _Scan:
    """The state of one pass over a ticky report, shared by the per-section steps.

    ``state`` runs summary -> header -> table -> after_table -> counters; the other fields
    are what the sections found so far.
    """

    path: Path
    lenient: bool
    warnings: list[str] = field(default_factory=list)
    summary: dict[str, float] = field(default_factory=dict)
    slow_apps: dict[str, dict[str, int]] = field(default_factory=dict)
    hist_pct: dict[str, dict[str, Any]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    counter_notes: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    table: _Table = field(default_factory=lambda: _Table())
    state: str = "summary"
    section: str = ""
    last_label: str = ""
    saw_summary: bool = False
    header_line: int = 0
    table_closed: bool = False
    arg_width: int = 20
    old_layout: bool = False
    last_counter: str = ""
    cut_line: int = 0
    first_content: tuple[int, str] | None = None

    def fail(self, lineno: int, expected: str, found: str) -> None:
        """Raise in strict mode; record a warning naming the line in lenient mode."""
        if not self.lenient:
            raise ParseError(self.path, expected, line=lineno, found=found)
        self.warnings.append(
            f"line {lineno}: skipped, expected {expected}, found {found[:80]!r}")


def _scan_table(sc: _Scan, lineno: int, line: str, s: str) -> None:
    """One line inside the per-closure table (or the dashed line under its header)."""
    if sc.state == "table":
        if not s:
            sc.state, sc.table_closed = "after_table", True
            return
        if _STARS.match(s):
            sc.state, sc.table_closed = "counters", True
            return
        try:
            if not _table_row(line, sc.table, sc.arg_width, sc.old_layout):
                sc.fail(lineno, "a per-closure table row (Entries Alloc Alloc'd arity kinds "
                        "STG-name)", s)
        except BadValue as e:
            sc.fail(lineno, f"{e.field} as {e.expected}", e.value)
        return
    # state == "header"
    if set(s) == {"-"}:
        sc.state = "table"
        return
    sc.state = "table"  # no dashes: tolerate and treat this line as a row
    try:
        if s and not _table_row(line, sc.table, sc.arg_width, sc.old_layout):
            sc.fail(lineno, "the dashed line under the table header", s)
    except BadValue as e:
        sc.fail(lineno, f"{e.field} as {e.expected}", e.value)


def _scan_table_header(sc: _Scan, lineno: int, line: str, s: str) -> bool:
    """Recognise the table's header line; its wording and column positions tell which
    GHC layout (and so which row parser settings) the table uses."""
    if not ("Entries" in s and ("STG Name" in s or "Function" in s) and sc.state != "counters"):
        return False
    sc.state, sc.header_line = "header", lineno
    meta = sc.meta
    meta["table_header"] = " ".join(s.split())
    if "Allocs" in s and "Stack" in s:
        sc.old_layout = True
        meta["table_format"] = "allocs-words"
        meta["ghc_layout"] = "<=9.2"
    else:
        nva = line.find("Non-void Arguments")
        stg = line.find("STG Name")
        if nva >= 0 and stg > nva:
            sc.arg_width = max(1, stg - 1 - nva - 3)
        meta["table_format"] = "alloc-allocd"
        meta["ghc_layout"] = "9.4+" if sc.arg_width >= 60 else "<=9.2"
    return True


def _scan_counter(sc: _Scan, lineno: int, line: str, s: str) -> bool:
    """A raw counter line, or (once counters or the table's end were seen) an error
    for anything else; True when the line was consumed."""
    cm = _COUNTER.match(line)
    if cm is not None:
        name = cm.group(2).replace("!", "")
        try:
            sc.counters[name] = count(cm.group(1), f"counter {name}")
        except BadValue as e:
            sc.fail(lineno, f"{e.field} as {e.expected}", e.value)
            return True
        if cm.group(3):
            sc.counter_notes[name] = cm.group(3)
        sc.last_counter = name
        sc.state = "counters"
        return True
    if sc.state == "counters":
        sc.fail(lineno, "a raw counter line '<number> <COUNTER_NAME>'", s)
        return True
    if sc.state == "after_table":
        sc.fail(lineno, "the line of stars before the raw counters", s)
        return True
    return False


def _scan_summary(sc: _Scan, lineno: int, s: str) -> None:
    """A line of the summary above the table (or the command line before it); a file
    whose first content is none of these is not a ticky report."""
    try:
        is_summary = _summary_line(s, sc.summary, sc.slow_apps, sc.hist_pct, sc.section,
                                   sc.last_label)
    except BadValue as e:
        sc.fail(lineno, f"{e.field} as {e.expected}", e.value)
        return
    if is_summary:
        sc.saw_summary = True
        head = s.split(":", 1)[0]
        if head != s and _HEADING.fullmatch(head):
            sc.section = _SECTIONS.get(head, _snake(head))
        bm = _BREAKDOWN.match(s)
        if bm is not None:
            sc.last_label = bm.group(3)
        return
    fc = sc.first_content
    if (not sc.saw_summary and "program" not in sc.meta and fc is not None
            and fc[0] == lineno and (s.startswith(("'", '"')) or "+RTS" in s)):
        sc.meta["program"], sc.meta["command_line"] = _command_line(s)
        return
    if sc.saw_summary and s.startswith(("The following", "All allocation")):
        return  # prose before the table
    if sc.saw_summary:
        sc.warnings.append(f"line {lineno}: unrecognised summary line ignored: {s[:80]!r}")
        return
    # nothing recognised yet and this is not a ticky line
    raise ParseError(sc.path, _EXPECTED, line=lineno, found=s)


def _scan(sc: _Scan, lines: list[str], ends_cleanly: bool,
          progress: Callable[[float], None] | None) -> None:
    """One pass over the lines, handing each to the step for the current section."""
    n_lines = len(lines)
    step = max(1, n_lines // 50)
    for idx, line in enumerate(lines):
        lineno = idx + 1
        if progress is not None and idx % step == 0:
            progress(idx / max(1, n_lines))
        s = line.strip()
        if idx == n_lines - 1 and not ends_cleanly and not s.endswith(_LAST_COUNTER):
            sc.cut_line = lineno  # a line cut mid-way: its numbers/name cannot be trusted
            break
        if sc.first_content is None and s:
            sc.first_content = (lineno, s)
        if sc.state == "table" or sc.state == "header":
            _scan_table(sc, lineno, line, s)
            continue
        if not s:
            continue
        if _STARS.match(s):
            if sc.state == "after_table":
                sc.state = "counters"
            continue
        if _scan_table_header(sc, lineno, line, s):
            continue
        if _scan_counter(sc, lineno, line, s):
            continue
        _scan_summary(sc, lineno, s)


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **options: object,
) -> Profile:
    """Read a ticky report into a flat profile (see the module docstring for the model).

    Steps: lines (:func:`_lines`), scan (:func:`_scan`, one step per section),
    completeness (:func:`_completeness`), build (:func:`_build`).
    """
    path = Path(path)
    lines, ends_cleanly, gz_cut = _lines(path)
    n_lines = len(lines)
    sc = _Scan(path, lenient)
    _scan(sc, lines, ends_cleanly, progress)
    if progress is not None:
        progress(1.0)

    if not sc.saw_summary and not sc.header_line and not sc.counters:
        ln, found = sc.first_content if sc.first_content else (1, "")
        raise ParseError(path, _EXPECTED, line=ln, found=found)

    # ---- completeness ------------------------------------------------------------------
    warnings, table = sc.warnings, sc.table
    incomplete, reason = _completeness(sc.header_line, sc.table_closed, len(table),
                                       bool(sc.counters), sc.last_counter, n_lines,
                                       sc.cut_line, gz_cut, warnings)
    if not sc.header_line and sc.counters:
        warnings.append("no per-closure table in the file: only the global counters were loaded")
    elif sc.header_line and len(table) == 0 and sc.table_closed:
        warnings.append("the per-closure table is empty (no -ticky code was entered)")

    sc.meta.setdefault("ghc_layout", "<=9.2")
    return _build(path, table, sc.meta, sc.summary, sc.slow_apps, sc.hist_pct, sc.counters,
                  sc.counter_notes, sc.old_layout, incomplete, reason, warnings)


def _lines(path: Path) -> tuple[list[str], bool, str]:
    """The report's lines, whether it ends with a newline, and where a gzip stream ended.

    GHC prints STG names as the source's bytes: UTF-8 usually, Latin-1 in older code, so
    bytes that are not UTF-8 are read as Latin-1 (``$wgröße``, not replacement marks)."""
    data, gz_cut = read_all(path)
    if not data.strip():
        raise ParseError(path, "a GHC ticky-ticky report, but the file is empty")
    if b"\x00" in data[:65536]:
        raise ParseError(path, _EXPECTED, found="binary data", offset=data.index(b"\x00"))
    text = data.decode("utf-8", errors=LATIN1_FALLBACK)
    return text.splitlines(), text.endswith(("\n", "\r")), gz_cut


def _completeness(header_line: int, table_closed: bool, n_rows: int, has_counters: bool,
                  last_counter: str, n_lines: int, cut_line: int, gz_cut: str,
                  warnings: list[str]) -> tuple[bool, str]:
    """A whole report has its table closed and its raw counters up to the last one."""
    incomplete = False
    reason = ""
    if header_line and not table_closed:
        incomplete = True
        reason = (f"the file ends inside the per-closure table (after {n_rows} rows, "
                  f"line {n_lines}); the raw counters are missing")
    elif header_line and not has_counters:
        incomplete = True
        reason = (f"the file ends after the per-closure table (line {n_lines}), without the "
                  "raw counters")
    elif not header_line and not has_counters:
        incomplete = True
        reason = f"the file ends in the summary (line {n_lines}), before the per-closure table"
    elif has_counters and last_counter != _LAST_COUNTER:
        incomplete = True
        reason = (f"the raw counter block is cut short after {last_counter} "
                  f"(line {n_lines}); {_LAST_COUNTER} was expected last")
    if cut_line:
        incomplete = True
        reason = reason or f"the file ends in the middle of line {cut_line}"
        warnings.append(f"line {cut_line}: cut short by the end of the file, not read")
    if gz_cut:
        incomplete = True
        reason = f"{gz_cut}; {reason}" if reason else gz_cut
    return incomplete, reason


def _table_row(line: str, t: _Table, width: int, old: bool) -> bool:
    """Parse one table row into ``t``; False when the line is not a row."""
    if old:
        m = _ROW_OLD.match(line)
        if m is None:
            return False
        arity = count(m.group(3), "arity")
        rest = m.group(5).lstrip()
        kinds, name = rest[:arity], rest[arity:].strip()
        if not name:
            return False
        t.entries.append(count(m.group(1), "Entries"))
        t.alloc.append(count(m.group(2), "Allocs"))
        t.allocd.append(0)
        t.arity.append(arity)
        t.stack.append(count(m.group(4), "Stack"))
        t.args.append(kinds)
        t.info.append(None)
    else:
        m = _ROW_NEW.match(line)
        if m is None:
            return False
        arity = count(m.group(4), "Arity")
        rest = m.group(5)
        info: dict[str, Any] | None = None
        if rest.startswith("{"):
            # A whole JSON object (padded, or wider than the column) ends before a space;
            # one cut by the RTS's %-60.60s never closes (the name's {v ..} keeps the
            # brace depth above zero), so then the column width decides.
            end = _json_end(rest)
            if end > 0 and (end == len(rest) or rest[end] == " "):
                field, name = rest[:end], rest[end:]
            else:
                field, name = rest[:width], rest[width + 1:]
            info = parse_arg_info(field)
            kinds = info["args"]
        elif len(rest) > width and rest[width] == " ":
            kinds, name = rest[:width].strip(), rest[width + 1:]
        else:  # narrower than the header says (hand-trimmed file): kinds then spaces
            parts = rest.split(None, 1) if arity else ["", rest]
            kinds, name = (parts + [""])[:2]
        name = name.strip()
        if not name:
            return False
        t.entries.append(count(m.group(1), "Entries"))
        t.alloc.append(count(m.group(2), "Alloc"))
        t.allocd.append(count(m.group(3), "Alloc'd"))
        t.arity.append(arity)
        t.args.append(kinds.strip())
        t.info.append(info)
    t.names.append(name)
    return True


def _summary_line(
    s: str,
    summary: dict[str, float],
    slow_apps: dict[str, dict[str, int]],
    hist: dict[str, dict[str, Any]],
    section: str,
    last_label: str,
) -> bool:
    """Record one summary line; False when it is not one."""
    if s in ("STACK USAGE:",):
        return True
    m = _ENTERS.match(s)
    if m:
        summary["enters"] = count(m.group(1), "a summary count")
        summary["enters_direct"] = count(m.group(2), "a summary count")
        summary["enters_direct_pct"] = float(m.group(3))
        return True
    m = _TAIL.match(s)
    if m:
        summary["tail_calls"] = count(m.group(1), "a summary count")
        summary["known_tail_calls"] = count(m.group(2), "a summary count")
        summary["known_tail_calls_pct"] = float(m.group(3))
        return True
    m = _SLOW.match(s)
    if m:
        summary["slow_apps_evaluated"] = count(m.group(1), "a summary count")
        summary["slow_apps_unevaluated"] = count(m.group(2), "a summary count")
        return True
    if s.startswith("Too few args"):
        return True
    m = _SLOW_ROW.match(s)
    if m:
        slow_apps[m.group(1)] = {"too_few": count(m.group(2), "a summary count"), "correct": count(m.group(3), "a summary count"),
                                 "too_many": count(m.group(4), "a summary count")}
        return True
    m = _UPDF.match(s)
    if m:
        summary["update_frames"] = count(m.group(1), "a summary count")
        summary["update_frames_omitted"] = count(m.group(2), "a summary count")
        return True
    m = _ALLOCS_HDR.match(s)
    if m:
        summary["allocations"] = count(m.group(1), "a summary count")
        summary["allocation_words"] = count(m.group(2), "a summary count")
        return True
    m = _GEN_UPD.match(s)
    if m:
        summary[f"{m.group(1).lower()}_gen_updates"] = count(m.group(2), "a summary count")
        return True
    m = _HIST.match(s)
    if m and (m.group(1).startswith(("RET_", "UPD_"))):
        name = m.group(1).strip().replace(" ", "_")
        rest = m.group(3)
        entry: dict[str, Any] = {"total": count(m.group(2), "a summary count")}
        if "%" in rest:
            entry["percent"] = [float(x) for x in re.findall(r"(-?[\d.]+)%", rest)]
        else:
            entry["counts"] = [count(x, "a summary count") for x in rest.split()]
        hist[name] = entry
        return True
    m = _BREAKDOWN.match(s)
    if m:
        label = m.group(3)
        key = _BREAKDOWN_KEYS.get((section, label)) or f"{section or 'summary'}_{_snake(label)}"
        summary[key] = count(m.group(1), "a summary count")
        summary[_PCT_KEYS.get(key, f"{key}_pct")] = float(m.group(2))
        return True
    m = _INPLACE.match(s)
    if m:
        base = _BREAKDOWN_KEYS.get((section, last_label)) or f"{section}_{_snake(last_label)}"
        summary[f"{base}_in_place"] = count(m.group(1), "a summary count")
        summary[f"{base}_new_space"] = count(m.group(2), "a summary count")
        return True
    if s.startswith("[the rest"):
        return True
    m = _GENERIC.match(s)
    if m:
        summary[_snake(m.group(1))] = count(m.group(2), "a summary count")
        return True
    return False


_COUNTER_DESCS = {key: desc for _ctr, key, desc in _COUNTER_TOTALS + _BYTE_TOTALS}


def _total_metric(key: str, bytes_units: bool) -> Metric:
    """Description of one ``totals`` key (unit from its name and the layout's units)."""
    label, desc = _TOTAL_LABELS.get(
        key, (key.replace("_", " "), _COUNTER_DESCS.get(key, f"ticky summary: {key}")))
    if key.endswith("_pct"):
        unit = Unit.PERCENT
    elif bytes_units and (key.endswith("_bytes") or key in ("alloc_total", "table_alloc",
                                                            "table_allocd")):
        unit = Unit.BYTES
    else:
        unit = Unit.COUNT
    return Metric(key, unit, Kind.NODE, label, desc)


def _ambiguous_keys(modules: list[str], matches: list[str]) -> list[dict[str, Any]]:
    """(module, match) keys shared by several rows: alignment cannot pair those rows, so
    the views say so instead of pairing them silently."""
    seen: dict[tuple[str, str], int] = {}
    for m, k in zip(modules, matches, strict=True):
        seen[(m, k)] = seen.get((m, k), 0) + 1
    return [{"module": m, "match": k, "count": c} for (m, k), c in seen.items() if c > 1]


def _totals(summary: dict[str, float], counters: dict[str, int], meta: dict[str, Any],
            n: int, columns: dict[str, np.ndarray], old_layout: bool) -> dict[str, float]:
    """Run totals: the summary, the raw counters that have a meaning, and the table sums
    (words in the old layout, bytes in the new one, never mixed)."""
    totals: dict[str, float] = dict(summary)
    bytes_units = not old_layout
    for ctr, key, _desc in _COUNTER_TOTALS:
        if ctr in counters:
            totals[key] = counters[ctr]
    if "ALLOC_UP_THK_ctr" in counters or "ALLOC_SE_THK_ctr" in counters:
        totals["thunks_allocated"] = counters.get("ALLOC_UP_THK_ctr", 0) + counters.get(
            "ALLOC_SE_THK_ctr", 0)
    if bytes_units:
        for ctr, key, _desc in _BYTE_TOTALS:
            if ctr in counters:
                totals[key] = counters[ctr]
    elif "ALLOC_HEAP_tot" in counters:
        totals["alloc_total_words"] = counters["ALLOC_HEAP_tot"]
    if meta.get("table_header"):
        totals["closures"] = n
        totals["table_entries"] = int(columns["entries"].sum())
        if old_layout:
            totals["table_alloc_words"] = int(columns["alloc_words"].sum())
        else:
            totals["table_alloc"] = int(columns["alloc"].sum())
            totals["table_allocd"] = int(columns["allocd"].sum())
    return totals


def _histograms(hist: dict[str, dict[str, Any]],
                counters: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Histograms from the summary's percent lines plus the raw ``*_hst_i`` counters
    (the counts the percentages were rounded from)."""
    histograms: dict[str, dict[str, Any]] = {k: dict(v) for k, v in hist.items()}
    hst = re.compile(r"^(\w+?)_hst_(\d+)$")
    raw_h: dict[str, dict[int, int]] = {}
    for name, val in counters.items():
        hm = hst.match(name)
        if hm:
            raw_h.setdefault(hm.group(1), {})[int(hm.group(2))] = val
    for name, bins in raw_h.items():
        h = histograms.setdefault(name, {})
        h["counts"] = [bins.get(i, 0) for i in range(max(bins) + 1)]
        h.setdefault("total", counters.get(f"{name}_ctr", sum(bins.values())))
    return histograms


def _closures(t: _Table, names_out: list[str], old_layout: bool) -> dict[str, list[Any]]:
    """Per-closure columns that are not metrics (arity, argument kinds, 9.4+ info)."""
    closures: dict[str, list[Any]] = {"occ": names_out, "arity": list(t.arity),
                                      "args": list(t.args)}
    if old_layout:
        closures["stack"] = list(t.stack)
    if any(i is not None for i in t.info):
        blank = {"type": "", "sub_type": "", "fv_count": -1, "fv_kinds": "", "truncated": False}
        infos = [i if i is not None else blank for i in t.info]
        closures["info_type"] = [i["type"] for i in infos]
        closures["sub_type"] = [i["sub_type"] for i in infos]
        closures["fv_count"] = [i["fv_count"] for i in infos]
        closures["fv_kinds"] = [i["fv_kinds"] for i in infos]
        closures["info_truncated"] = [bool(i["truncated"]) for i in infos]
    return closures


def _build(
    path: Path,
    t: _Table,
    meta: dict[str, Any],
    summary: dict[str, float],
    slow_apps: dict[str, dict[str, int]],
    hist: dict[str, dict[str, Any]],
    counters: dict[str, int],
    counter_notes: dict[str, str],
    old_layout: bool,
    incomplete: bool,
    reason: str,
    warnings: list[str],
) -> Profile:
    """Assemble the flat profile: identities, metric columns, totals and extras."""
    n = len(t)
    parsed = [parse_stg_name(r) for r in t.names]
    names_out, modules, kinds, matches = _identities(parsed, t.info)
    ambiguous = _ambiguous_keys(modules, matches)

    frames = make_frame_table(t.names, modules, kinds=kinds, match=matches)
    entries = np.asarray(t.entries, dtype=np.int64)
    alloc = np.asarray(t.alloc, dtype=np.int64)
    if old_layout:
        metrics: list[Metric] = [METRIC_ENTRIES, METRIC_ALLOC_WORDS]
        columns = {"entries": entries, "alloc_words": alloc}
        default = "alloc_words"
    else:
        metrics = [METRIC_ENTRIES, METRIC_ALLOC, METRIC_ALLOCD]
        columns = {"entries": entries, "alloc": alloc,
                   "allocd": np.asarray(t.allocd, dtype=np.int64)}
        default = "alloc"
    totals = _totals(summary, counters, meta, n, columns, old_layout)
    total_metrics = {key: _total_metric(key, not old_layout) for key in totals}

    extras: dict[str, Any] = {
        "counters": counters,
        "summary": summary,
        "histograms": _histograms(hist, counters),
        "closures": _closures(t, names_out, old_layout),
        "ambiguous_keys": ambiguous,
    }
    if slow_apps:
        extras["slow_applications"] = slow_apps
    if counter_notes:
        extras["counter_notes"] = counter_notes

    return flat_profile(
        path=str(path),
        format=FORMAT,
        frames=frames,
        metrics=metrics,
        columns=columns,
        meta=meta,
        totals=totals,
        total_metrics=total_metrics,
        incomplete=incomplete,
        incomplete_reason=reason,
        warnings=tuple(warnings),
        extras=extras,
        default_metric=default,
    )


def _identities(
    parsed: list[StgName], infos: list[dict[str, Any] | None]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """(normalised names, modules, frame kinds, match strings) for all rows.

    Parents are named by unique; the unique -> row map covers the whole table because a
    closure may be printed before its enclosing binding.
    """
    by_unique: dict[str, int] = {}
    for i, p in enumerate(parsed):
        if p.unique and p.unique not in by_unique:
            by_unique[p.unique] = i

    def chain(i: int) -> str:
        parts: list[str] = []
        seen = {i}
        u = parsed[i].parent
        while u:
            j = by_unique.get(u)
            if j is None or j in seen or len(parts) >= 12:
                parts.append("?")
                break
            seen.add(j)
            parts.append(parsed[j].occ)
            u = parsed[j].parent
        return " in ".join(parts)

    names, modules, kinds, matches = [], [], [], []
    for i, p in enumerate(parsed):
        kind = p.kind
        info = infos[i]
        if not kind and info is not None and info.get("sub_type"):
            kind = str(info["sub_type"]).lower()
        key = f"{p.occ} ({kind})" if kind else p.occ
        where = chain(i)
        if where:
            key += f" in {where}"
        names.append(p.occ)
        modules.append(p.module)
        kinds.append(f"closure:{kind}" if kind else "closure")
        matches.append(key)
    return names, modules, kinds, matches
