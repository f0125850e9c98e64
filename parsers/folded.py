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
from pathlib import Path
from typing import Any

import numpy as np

from .builder import TreeBuilder, percent_of, self_and_total
from .detect import open_text
from .errors import ParseError
from .model import FrameTable, Kind, Metric, Profile, Unit

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
    if len(head) >= 4096:
        lines = lines[:-1]  # the last one may be cut
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
    """Read a folded-stacks file (plain or gzipped) into a call tree."""
    path = Path(path)
    with open_text(path) as f:
        text = f.read()
    if not text.strip():
        raise ParseError(path, "collapsed stacks 'frame;frame;... count'", found="an empty file")
    if "\x00" in text[:4096]:
        raise ParseError(path, "collapsed stacks 'frame;frame;... count'", line=1,
                         found="binary data")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    tb = TreeBuilder(["self_samples"])
    frame_ids: dict[str, int] = {}
    meta: dict[str, Any] = {}
    warnings: list[str] = []
    austin = False
    is_float = False
    n_stacks = 0
    incomplete = ""
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
                meta.setdefault(key, int(val) if val.isdigit() else val)
                if key == "austin":
                    austin = True
            continue
        stack, sep, token = line.rpartition(" ")
        value = _count(token) if sep else None
        stack = stack.rstrip()
        if value is None or not stack:
            if idx == last and not ends_with_newline:
                incomplete = (f"the file ends inside line {no} (no final newline): that line "
                              "was dropped")
                break
            if not lenient:
                raise ParseError(path, "a collapsed stack line 'frame;frame;... <count>'",
                                 line=no, found=line)
            warnings.append(f"{path}:{no}: skipped line that is not 'frame;...;frame count'")
            continue
        if n_stacks == 0 and not austin and stack.startswith("P"):
            head = stack.split(";", 2)
            austin = len(head) > 2 and bool(_AUSTIN_PT.match(head[0])) \
                and head[1].startswith("T") and bool(_AUSTIN_PT.match(head[1]))
        if idx == last and not ends_with_newline:
            incomplete = (f"the file does not end with a newline: its last line ({no}) may be "
                          "cut short")
        ids = []
        for ftext in stack.split(";"):
            fid = frame_ids.get(ftext)
            if fid is None:
                fid = tb.frame(*_frame_parts(ftext, austin))
                frame_ids[ftext] = fid
            ids.append(fid)
        is_float = is_float or isinstance(value, float)
        tb.add_stack(ids, self_samples=value)
        n_stacks += 1
    if n_stacks == 0:
        raise ParseError(path, "at least one collapsed stack line 'frame;frame;... <count>'",
                         found="only comments" if meta else "no stack line")

    base = tb.build(path=str(path), format=FORMAT, metrics=[S_SAMPLES, T_SAMPLES],
                    inclusive={"total_samples": "self_samples"})
    dtype = np.float64 if is_float else np.int64
    self_col = np.asarray(base.values["self_samples"]).astype(dtype)
    total_col = np.asarray(base.values["total_samples"]).astype(dtype)
    total = self_col.sum()
    total = float(total) if is_float else int(total)
    cols = {"self_samples": self_col, "total_samples": total_col,
            "self_pct": percent_of(self_col, total), "total_pct": percent_of(total_col, total)}
    if austin:
        meta.setdefault("program", "austin")
        mode = meta.get("mode", "")
        meta["weight"] = "microseconds" if mode in ("wall", "cpu", "") else mode
    meta["stacks"] = n_stacks
    if progress:
        progress(1.0)
    return Profile(
        path=str(path),
        format=FORMAT,
        frames=_with_match(base.frames) if austin else base.frames,
        parent=base.parent,
        frame=base.frame,
        metrics=METRICS,
        values=cols,
        meta=meta,
        totals={"total_samples": total},
        total_metrics={"total_samples": TOTAL},
        incomplete=bool(incomplete),
        incomplete_reason=incomplete,
        warnings=tuple(warnings),
        default_metric="self_samples",
        display_metrics=("self_samples", "total_samples", "self_pct", "total_pct"),
    )
