"""Reader for collapsed ("folded") stacks: one ``frame;frame;...;frame count`` per line.

The lingua franca of flame graphs: written by ``stackcollapse-*.pl`` (FlameGraph), inferno
(``inferno-collapse-perf``, ``-ghcprof``, ...), async-profiler (``-o collapsed``), austin,
py-spy (``--format raw``), the Firefox profiler.  Stacks are root first; the weight is the
last space-separated token (an integer, or a float: some tools write fractional weights).
Identical stacks on several lines (concatenated or unsorted inputs) are summed.

Frames are split on ``;`` only (frames may contain spaces: C++ signatures), and kept as
printed, with three dialects recognised because they carry a location:

* perf-style annotations (``func_[k]`` kernel, ``_[j]`` JIT, ``_[i]`` inlined, ``_[w]``
  waker) stay in ``name`` (that is how the other tools show them) and set ``kind``
  (``"kernel"``, ``"jit"``, ``"inline"``, ``"waker"``);
* ``name (file:line)`` (py-spy): ``name``, ``module`` = the file, ``line``;
* austin (``# austin: <version>`` header or ``P<pid>;T<tid>`` leading frames):
  ``file:function:line`` frames -> ``module`` = file, ``name`` = function, ``line``; the
  ``P<pid>``/``T<tid>`` frames get ``kind`` ``"process"``/``"thread"`` and align across
  runs as ``P``/``T`` (``FrameTable.match``), since the ids change every run.  Austin's full
  mode writes ``time,idle,memory`` as the weight: the first number (time) is taken.

Everything else has ``module`` "" and ``src`` "", so runs align by frame text.  ``#`` lines
are comments; austin's ``# key: value`` ones go to ``meta`` (``austin``, ``mode``,
``interval``, ``duration``, ...).

Metrics: ``self_samples`` (the weights, SELF) and ``total_samples`` (INCLUSIVE, derived),
``self_pct``/``total_pct`` of the sum of weights; ``totals["total_samples"]`` = that sum.
The weight is whatever the producer counted - samples for perf/async-profiler/py-spy,
microseconds for austin (``meta["mode"]`` says wall or cpu), bytes or ticks for
``inferno-collapse-ghcprof`` - so ``meta["weight"]`` names it when the dialect tells.

A file that does not end with a newline was probably cut: its last line is kept when it
parses (the count may be short) and dropped when not; either way ``incomplete=True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .builder import TreeBuilder, percent_of, self_and_total
from .errors import ParseError
from .gzip_io import cut_of, open_text
from .model import FrameTable, Kind, Metric, Profile, Unit
from .values import INT64_MAX

FORMAT = "folded"
DESCRIPTION = "collapsed/folded stacks (frame;frame;frame count)"

_COUNT = re.compile(r"^\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_AUSTIN_COUNT = re.compile(r"^-?\d+(?:,-?\d+)+$")
_SNIFF_LINE = re.compile(rb"^\S(?:.*\S)? \d+(?:\.\d+)?(?:,-?\d+)*\r?$")
_AUSTIN_FRAME = re.compile(r"^(?P<file>.+):(?P<func>[^:]+):(?P<line>\d+)$")
_PYSPY_FRAME = re.compile(r"^(?P<func>.+) \((?P<file>[^()]+):(?P<line>\d+)\)$")
_AUSTIN_PT = re.compile(r"^[PT]\d+$")
_META = re.compile(r"^#\s*([A-Za-z_][\w ]*?)\s*:\s*(.*?)\s*$")
_SUFFIX_KIND = {"_[k]": "kernel", "_[j]": "jit", "_[i]": "inline", "_[w]": "waker"}

S_SAMPLES, T_SAMPLES = self_and_total("samples", Unit.SAMPLES, "samples", sampled=True)
S_PCT, T_PCT = self_and_total("pct", Unit.PERCENT, "%", sampled=True,
                              percent_of="samples")
METRICS = (S_SAMPLES, T_SAMPLES, S_PCT, T_PCT)
TOTAL = Metric("total_samples", Unit.SAMPLES, Kind.NODE, "sum of the stack weights",
               sampled=True)


def sniff(head: bytes, path: Path) -> float:
    """Conservative, so it never takes other text formats: of the non-comment lines, at
    least 95 % are ``<text> <number>`` with exactly one space before the number (column
    formats pad with several), at least half hold a ``;``, and none starts with
    whitespace (perf script frames, GHC ``.prof`` rows and ``.mem`` lines do)."""
    lines = head.split(b"\n")
    if len(head) >= 4096 and len(lines) == 1:
        return _sniff_long_first_line(head)
    if len(lines) > 1:  # the last line is cut when the head stops there (or the file
        lines = lines[:-1]  # does: one being written); whole lines end with a newline
    lines = [ln for ln in lines[:500] if ln.strip() and not ln.startswith(b"#")]
    if not lines:
        return 0.0
    good = semi = 0
    for ln in lines:
        if ln[:1] in (b" ", b"\t"):
            return 0.0
        if _SNIFF_LINE.match(ln):
            good += 1
            semi += b";" in ln
    if good < 0.95 * len(lines) or semi < 0.5 * len(lines):
        return 0.0
    score = 0.7
    name = Path(path).name.lower()
    if any(s in name for s in (".folded", ".collapsed", "collapsed", "folded")):
        score += 0.1
    return score


def _sniff_long_first_line(head: bytes) -> float:
    """The head holds no newline at all: a first stack longer than the head (deep Java or
    recursive stacks pass 64 KiB).  Its count is out of sight, so judge the frames: many
    ``;``-separated, non-empty, no leading blank, nothing that marks JSON or XML."""
    if head[:1] in (b" ", b"\t", b"{", b"[", b"<") or b"\t" in head or b"\x00" in head:
        return 0.0
    frames = head.split(b";")
    if len(frames) < 32 or sum(1 for f in frames[:-1] if not f.strip()) > len(frames) // 10:
        return 0.0
    return 0.5


def _frame_parts(text: str, austin: bool) -> tuple[str, str, str, int, str]:
    """(name, module, src, line, kind) of one frame's text."""
    if austin:
        if _AUSTIN_PT.match(text):
            return text, "", "", 0, "process" if text[0] == "P" else "thread"
        m = _AUSTIN_FRAME.match(text)
        if m:
            file, line = m.group("file"), m.group("line")
            return m.group("func"), file, f"{file}:{line}", int(line), ""
    m = _PYSPY_FRAME.match(text)
    if m:
        file, line = m.group("file"), m.group("line")
        return m.group("func"), file, f"{file}:{line}", int(line), ""
    kind = _SUFFIX_KIND.get(text[-4:], "") if text.endswith("]") else ""
    return text, "", "", 0, kind


def _count(token: str) -> float | None:
    if _COUNT.match(token):
        return int(token) if token.isdigit() else float(token)
    if _AUSTIN_COUNT.match(token):
        return int(token.split(",", 1)[0])
    return None


def _in_range(value: float, total_int: int) -> bool:
    """A weight (and the running sum of integer weights) that fits the int64/float64
    columns: a larger one would overflow numpy far from any line number."""
    if isinstance(value, int):
        return value + total_int <= INT64_MAX
    return value < 2.0**63


def _with_match(frames: FrameTable) -> FrameTable:
    """Austin's ``P<pid>``/``T<tid>`` frames align across runs as ``P``/``T`` (the ids
    change every run); other frames keep their name as identity."""
    match = np.array([n[0] if k in ("process", "thread") else n
                      for n, k in zip(frames.name.tolist(), frames.kind.tolist(), strict=True)],
                     dtype=object)
    return FrameTable(frames.name, frames.module, frames.src, frames.line, frames.kind, match)


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **_options: Any,
) -> Profile:
    """Read a folded-stacks file (plain or gzipped) into a call tree.

    Steps: :func:`_lines` (input), :func:`_parse_stacks` (one stack per line),
    :func:`_build` (columns, metadata, completeness)."""
    path = Path(path)
    lines, ends_with_newline, gz_cut = _lines(path)
    st = _parse_stacks(path, lines, ends_with_newline, lenient, progress)
    return _build(path, st, gz_cut, progress)


def _lines(path: Path) -> tuple[list[str], bool, str]:
    """The lines, whether the file ends with a newline, and where a gzip stream ended."""
    with open_text(path) as f:
        text = f.read()
        gz_cut = cut_of(f)
    if not text.strip():
        raise ParseError(path, "collapsed stacks 'frame;frame;... count'", found="an empty file")
    if "\x00" in text[:4096]:
        raise ParseError(path, "collapsed stacks 'frame;frame;... count'", line=1,
                         found="binary data")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    return lines, ends_with_newline, gz_cut


@dataclass
class _Stacks:
    """The stacks read so far, and what the lines said about the file."""

    tb: TreeBuilder = field(default_factory=lambda: TreeBuilder(["self_samples"]))
    frame_ids: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    austin: bool = False
    is_float: bool = False
    n_stacks: int = 0
    total_int: int = 0
    incomplete: str = ""


def _parse_stacks(path: Path, lines: list[str], ends_with_newline: bool, lenient: bool,
                  progress: Callable[[float], None] | None) -> _Stacks:
    """One ``frame;...;frame count`` per line; comments and austin metadata."""
    st = _Stacks()
    n = len(lines)
    last = n - 1
    for idx, raw in enumerate(lines):
        line = raw.rstrip("\r")
        no = idx + 1
        if progress and idx % 50000 == 0:
            progress(idx / max(n, 1))
        if not line.strip():
            continue
        if line.startswith("#"):
            m = _META.match(line)
            if m:
                key = m.group(1).strip().lower().replace(" ", "_")
                val = m.group(2)
                st.meta.setdefault(key, int(val) if val.isdigit() else val)
                if key == "austin":
                    st.austin = True
            continue
        stack, sep, token = line.rpartition(" ")
        value = _count(token) if sep else None
        stack = stack.rstrip()
        if value is not None and stack and not _in_range(value, st.total_int):
            if idx == last and not ends_with_newline:
                st.incomplete = (f"the file ends inside line {no} (no final newline): that line "
                              "was dropped")
                break
            if not lenient:
                raise ParseError(path, "a stack count below 2^63 (and a sum of counts below "
                                 "2^63)", line=no, found=token)
            st.warnings.append(f"{path}:{no}: skipped line whose count {token[:40]!r} is out of "
                            "range")
            continue
        if value is None or not stack:
            if idx == last and not ends_with_newline:
                st.incomplete = (f"the file ends inside line {no} (no final newline): that line "
                              "was dropped")
                break
            if not lenient:
                raise ParseError(path, "a collapsed stack line 'frame;frame;... <count>'",
                                 line=no, found=line)
            st.warnings.append(f"{path}:{no}: skipped line that is not 'frame;...;frame count'")
            continue
        if st.n_stacks == 0 and not st.austin and stack.startswith("P"):
            head = stack.split(";", 2)
            st.austin = len(head) > 2 and bool(_AUSTIN_PT.match(head[0])) \
                and head[1].startswith("T") and bool(_AUSTIN_PT.match(head[1]))
        if idx == last and not ends_with_newline:
            st.incomplete = (f"the file does not end with a newline: its last line ({no}) may be "
                          "cut short")
        ids = []
        for ftext in stack.split(";"):
            fid = st.frame_ids.get(ftext)
            if fid is None:
                fid = st.tb.frame(*_frame_parts(ftext, st.austin))
                st.frame_ids[ftext] = fid
            ids.append(fid)
        st.is_float = st.is_float or isinstance(value, float)
        if isinstance(value, int):
            st.total_int += value
        st.tb.add_stack(ids, self_samples=value)
        st.n_stacks += 1
    if st.n_stacks == 0:
        raise ParseError(path, "at least one collapsed stack line 'frame;frame;... <count>'",
                         found="only comments" if st.meta else "no stack line")

    return st


def _build(path: Path, st: _Stacks, gz_cut: str,
           progress: Callable[[float], None] | None) -> Profile:
    """Self and total columns, percentages, metadata and the completeness verdict."""
    base = st.tb.build(path=str(path), format=FORMAT, metrics=[S_SAMPLES, T_SAMPLES],
                    inclusive={"total_samples": "self_samples"})
    dtype = np.float64 if st.is_float else np.int64
    self_col = np.asarray(base.values["self_samples"]).astype(dtype)
    total_col = np.asarray(base.values["total_samples"]).astype(dtype)
    total = self_col.sum()
    total = float(total) if st.is_float else int(total)
    cols = {"self_samples": self_col, "total_samples": total_col,
            "self_pct": percent_of(self_col, total), "total_pct": percent_of(total_col, total)}
    if st.austin:
        st.meta.setdefault("program", "austin")
        mode = st.meta.get("mode", "")
        st.meta["weight"] = "microseconds" if mode in ("wall", "cpu", "") else mode
    st.meta["stacks"] = st.n_stacks
    st.meta["completeness"] = (
        "cannot tell: folded stacks have no end marker; a file cut exactly at a line end "
        "looks whole (only a missing final newline shows a cut)")
    if gz_cut:
        st.incomplete = f"{gz_cut}; {st.incomplete}" if st.incomplete else gz_cut
    if progress:
        progress(1.0)
    return Profile(
        path=str(path),
        format=FORMAT,
        frames=_with_match(base.frames) if st.austin else base.frames,
        parent=base.parent,
        frame=base.frame,
        metrics=METRICS,
        values=cols,
        meta=st.meta,
        totals={"total_samples": total},
        total_metrics={"total_samples": TOTAL},
        incomplete=bool(st.incomplete),
        incomplete_reason=st.incomplete,
        warnings=tuple(st.warnings),
        default_metric="self_samples",
        display_metrics=("self_samples", "total_samples", "self_pct", "total_pct"),
    )
