"""GHC ``+RTS -s`` statistics summary reader (also inside a ``+RTS -S`` GC log).

The summary is what the RTS prints at exit::

       6,688,508,720 bytes allocated in the heap
       2,690,763,320 bytes copied during GC
           2,668,152 bytes maximum residency (658 sample(s))
    ...
      Productivity  64.0% of total user, 62.5% of total elapsed

It usually sits at the end of a program's stderr, after any other output, or after the
per-collection table of ``+RTS -S``.  The reader therefore *searches* for the summary
(the last ``bytes allocated in the heap`` line) instead of expecting it on line 1, and
reads it line by line with one regex per line kind, covering GHC 6.x to 9.x layouts
(``Generation 0: ...`` and ``Gen  0 ... colls``, ``MB``/``MiB``, parallel GC, TASKS and
SPARKS lines, nonmoving GC lines, the ``gc_alloc_block_sync`` counters).

Keys are documented in :mod:`parsers.ghc_rts`.  When a ``-S`` table precedes the summary
its columns are kept in ``extras["gc_log"]`` (numpy arrays, one entry per collection).

Bad input policy: a file without any summary is a :class:`ParseError`; a summary cut
short (no ``Productivity`` line) loads what was read with ``incomplete=True``; a ``-S``
log without a summary (program still running) loads totals derived from the log, also
``incomplete=True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ParseError
from .ghc_rts import fill_derived, program_of, rts_profile
from .gzip_io import read_all
from .model import Profile

FORMAT = "ghc-rts-s"
DESCRIPTION = "GHC RTS statistics summary (+RTS -s / -S)"

_MIB = 1024 * 1024
_N = r"([\d,]+)"
_F = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+|nan|-?inf))"

_START_RE = re.compile(r"^\s*[\d,]+ bytes allocated in the heap\s*$", re.M)
_SLOG_HEADER_RE = re.compile(
    r"^\s*Alloc\s+Copied\s+Live\s+GC\s+GC\s+TOT\s+TOT\s+Page Flts", re.M
)
_SLOG_ROW_RE = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)"
    r"\s+\d+\s+\d+\s+\(Gen:\s*(\d+)\)\s*$",
    re.M,
)


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _gen_colls(m: re.Match[str], t: dict[str, float]) -> None:
    g = m.group(1)
    t[f"gen{g}_collections"] = _num(m.group(2))
    t[f"gen{g}_par_collections"] = _num(m.group(3))
    t[f"gen{g}_cpu_s"] = _num(m.group(4))
    t[f"gen{g}_elapsed_s"] = _num(m.group(5))
    if m.lastindex and m.lastindex >= 7:
        t[f"gen{g}_avg_pause_s"] = _num(m.group(6))
        t[f"gen{g}_max_pause_s"] = _num(m.group(7))


def _gen_nonmoving(prefix: str) -> Callable[[re.Match[str], dict[str, float]], None]:
    def f(m: re.Match[str], t: dict[str, float]) -> None:
        g = m.group(1)
        vals = [_num(x) for x in m.groups()[1:]]
        names = (["syncs", "sync_elapsed_s", "sync_avg_pause_s", "sync_max_pause_s"]
                 if prefix == "sync" else
                 ["conc_cpu_s", "conc_elapsed_s", "conc_avg_pause_s", "conc_max_pause_s"])
        for n, v in zip(names, vals, strict=True):
            t[f"gen{g}_{n}"] = v
    return f


def _phase(m: re.Match[str], t: dict[str, float]) -> None:
    p = m.group(1).lower().replace(" ", "_")
    t[f"{p}_cpu_s"] = _num(m.group(2))
    t[f"{p}_elapsed_s"] = _num(m.group(3))


def _memory(m: re.Match[str], t: dict[str, float]) -> None:
    t["total_memory_in_use_bytes"] = _num(m.group(1)) * _MIB
    if m.group(2) is not None:
        t["fragmentation_bytes"] = _num(m.group(2)) * _MIB


def _sparks(m: re.Match[str], t: dict[str, float]) -> None:
    t["sparks_count"] = _num(m.group(1))
    for n, what in re.findall(r"(\d+) ([A-Za-z']+)", m.group(2)):
        t["sparks_" + what.lower().replace("'", "")] = _num(n)


def _set(*keys: str) -> Callable[[re.Match[str], dict[str, float]], None]:
    def f(m: re.Match[str], t: dict[str, float]) -> None:
        for k, v in zip(keys, m.groups(), strict=False):
            if k and v is not None:
                t[k] = _num(v)
    return f


def _counter(m: re.Match[str], t: dict[str, float]) -> None:
    name = m.group(1)
    g = re.match(r"gen\[(\d+)\]\.sync$", name)
    t[f"gen{g.group(1)}_sync" if g else name] = _num(m.group(2))


def _old_balance(m: re.Match[str], t: dict[str, float]) -> None:
    if m.group(1) != "nan":
        t["par_gc_work_balance"] = _num(m.group(1))
    t["par_gc_work_balance_ideal"] = _num(m.group(2))


_LINE_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str], dict[str, float]], None]]] = [
    (re.compile(rf"^\s*{_N} bytes allocated in the heap"), _set("bytes_allocated")),
    (re.compile(rf"^\s*{_N} bytes copied during GC \(not scavenged\)"),
     _set("bytes_copied_not_scavenged")),
    (re.compile(rf"^\s*{_N} bytes copied during GC"), _set("bytes_copied")),
    (re.compile(rf"^\s*{_N} bytes maximum residency \((?:[\d.]+%, )?(\d+) sample\(s\)\)"),
     _set("max_residency_bytes", "max_residency_samples")),
    (re.compile(rf"^\s*{_N} bytes maximum slop"), _set("max_slop_bytes")),
    (re.compile(rf"^\s*{_N} (?:MiB|MB|Mb) total memory in use"
                rf"(?: \({_N} (?:MiB|MB|Mb) lost due to fragmentation\))?"), _memory),
    (re.compile(rf"^\s*Gen\s+(\d+)\s+(\d+) colls,\s+(\d+) par\s+{_F}s\s+{_F}s\s+{_F}s\s+{_F}s"),
     _gen_colls),
    (re.compile(rf"^\s*Gen\s+(\d+)\s+(\d+) syncs,\s+{_F}s\s+{_F}s\s+{_F}s"),
     _gen_nonmoving("sync")),
    (re.compile(rf"^\s*Gen\s+(\d+)\s+concurrent,\s+{_F}s\s+{_F}s\s+{_F}s\s+{_F}s"),
     _gen_nonmoving("conc")),
    (re.compile(rf"^\s*Generation (\d+):\s+(\d+) collections,\s+(\d+) parallel,\s+{_F}s,\s+"
                rf"{_F}s elapsed"), _gen_colls),
    (re.compile(rf"^\s*(\d+) collections in generation (\d+) \(\s*{_F}s\)"),
     lambda m, t: t.update({f"gen{m.group(2)}_collections": _num(m.group(1)),
                            f"gen{m.group(2)}_cpu_s": _num(m.group(3))})),
    (re.compile(rf"^\s*Parallel GC work balance:\s+{_F}% \(serial 0%, perfect 100%\)"),
     _set("par_gc_work_balance_pct")),
    (re.compile(r"^\s*Parallel GC work balance:\s+([\d.]+|nan) \(\d+ / \d+, ideal (\d+)\)"),
     _old_balance),
    (re.compile(r"^\s*TASKS:\s+(\d+) \((\d+) bound, (\d+) peak workers \((\d+) total\), "
                r"using -N(\d+)\)"),
     _set("task_count", "bound_task_count", "peak_worker_count", "worker_count",
          "n_capabilities")),
    (re.compile(r"^\s*SPARKS:\s+(\d+)\s+\((.*)\)"), _sparks),
    (re.compile(rf"^\s*(INIT|MUT|GC|CONC GC|RP|PROF|EXIT|Total|Sync)\s+time\s+{_F}s\s+"
                rf"\(\s*{_F}s elapsed\)"), _phase),
    (re.compile(rf"^\s*%GC\s+time\s+{_F}%\s+\(\s*{_F}% elapsed\)"),
     _set("gc_time_pct", "gc_elapsed_pct")),
    (re.compile(rf"^\s*Alloc rate\s+{_N} bytes per MUT second"), _set("alloc_rate_bytes_per_s")),
    (re.compile(rf"^\s*Productivity\s+{_F}% of total user,\s+{_F}% of total elapsed"),
     _set("productivity_cpu_pct", "productivity_elapsed_pct")),
    (re.compile(r"^\s*(gc_alloc_block_sync|whitehole_spin|gen\[\d+\]\.sync):\s*(\d+)\s*$"),
     _counter),
]
# lines that belong to the summary but carry nothing we keep
_IGNORED_RE = re.compile(
    r"^\s*(?:Tot time \(elapsed\)|MUT time \(elapsed\)|Task\s+\d+|GC\s+time:|Internal Counters|"
    r"SpinLock|\S+\s+\d+\s+(?:\d+|n/a)\s*$|\d+ garbage collections performed)"
)
_MAX_UNKNOWN = 20


def sniff(head: bytes, path: Path) -> float:
    """The summary's first line anywhere in the head, or the ``-S`` table header."""
    text = head.decode("utf-8", "replace")
    score = 0.0
    if _START_RE.search(text):
        score = 0.7
        if "bytes copied during GC" in text:
            score = 0.85
        if re.search(r"MUT\s+time", text) or "Productivity" in text:
            score = 0.95
    elif _SLOG_HEADER_RE.search(text):
        score = 0.8
    return score


def _parse_slog(text: str, start: int, end: int) -> dict[str, np.ndarray]:
    """The ``-S`` per-collection table between two offsets, as columns."""
    rows = _SLOG_ROW_RE.findall(text, start, end)
    if not rows:
        return {}
    a = np.array(rows, dtype=object)
    cols: dict[str, np.ndarray] = {}
    for j, name in enumerate(("alloc_bytes", "copied_bytes", "live_bytes")):
        cols[name] = a[:, j].astype(np.int64)
    for j, name in enumerate(("gc_cpu_s", "gc_elapsed_s", "total_cpu_s", "total_elapsed_s"), 3):
        cols[name] = a[:, j].astype(np.float64)
    cols["gen"] = a[:, 7].astype(np.int16)
    return cols


def _totals_from_slog(log: dict[str, np.ndarray]) -> dict[str, float]:
    """Best-effort run totals from the ``-S`` table when the summary is missing."""
    t: dict[str, float] = {
        "bytes_allocated": float(log["alloc_bytes"].sum()),
        "bytes_copied": float(log["copied_bytes"].sum()),
        "gc_cpu_s": float(log["gc_cpu_s"].sum()),
        "gc_elapsed_s": float(log["gc_elapsed_s"].sum()),
        "total_cpu_s": float(log["total_cpu_s"][-1]),
        "total_elapsed_s": float(log["total_elapsed_s"][-1]),
    }
    gen = log["gen"]
    top = int(gen.max())
    for g in range(top + 1):
        sel = gen == g
        t[f"gen{g}_collections"] = float(sel.sum())
        t[f"gen{g}_cpu_s"] = float(log["gc_cpu_s"][sel].sum())
        t[f"gen{g}_elapsed_s"] = float(log["gc_elapsed_s"][sel].sum())
    major = gen == top
    if major.any():
        t["max_residency_bytes"] = float(log["live_bytes"][major].max())
        t["max_residency_samples"] = float(major.sum())
    return t


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **options: Any,
) -> Profile:
    """Find and parse the ``-s`` summary (and a preceding ``-S`` table) of ``path``."""
    path = Path(path)
    data, gz_cut = read_all(path)
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    warnings: list[str] = []
    meta: dict[str, Any] = {"kind": "rts-summary", "program": "", "command_line": ""}

    starts = [m.start() for m in _START_RE.finditer(text)]
    slog = _SLOG_HEADER_RE.search(text)
    if not starts and slog is None:
        n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        raise ParseError(
            path, "a GHC RTS '+RTS -s' summary ('<n> bytes allocated in the heap')",
            line=max(n_lines, 1),
            found=("binary data" if "\x00" in text[:4096] else
                   f"end of file after {n_lines} lines without it"),
        )
    if len(starts) > 1:
        warnings.append(f"{len(starts)} RTS summaries in the file; read the last one")

    block_start = starts[-1] if starts else len(text)
    first_at = min(block_start, slog.start() if slog else block_start)
    # a command line precedes the block when the RTS wrote the stats to a file (-s<file>)
    before = text[:first_at].split("\n")
    pre = [ln for ln in before if ln.strip()]
    if len(pre) == 1 and "+RTS" in pre[0]:
        meta["command_line"] = pre[0].strip()
        meta["program"] = program_of(pre[0])

    extras: dict[str, Any] = {}
    if slog is not None and slog.start() < block_start:
        log = _parse_slog(text, slog.end(), block_start)
        if log:
            extras["gc_log"] = log
            meta["gc_log_rows"] = len(log["gen"])
    if progress is not None:
        progress(0.5)

    totals: dict[str, float] = {}
    incomplete = False
    reason = ""
    if not starts:
        if "gc_log" not in extras:
            raise ParseError(path, "'+RTS -S' rows or the '+RTS -s' summary after the -S header",
                             line=text.count("\n", 0, slog.start()) + 1,
                             found="no GC rows")
        totals = _totals_from_slog(extras["gc_log"])
        incomplete = True
        reason = (f"no '+RTS -s' summary after the -S log (program still running or killed?): "
                  f"totals derived from the {len(extras['gc_log']['gen'])} GC rows")
    else:
        line0 = text.count("\n", 0, block_start) + 1
        meta["summary_line"] = line0
        seen_productivity = False
        pending: list[str] = []  # unknown lines, reported only if the summary goes on after them
        last_line = line0
        for k, line in enumerate(text[block_start:].split("\n")):
            lineno = line0 + k
            if not line.strip():
                continue
            for rx, fn in _LINE_RULES:
                m = rx.match(line)
                if m:
                    fn(m, totals)
                    last_line = lineno
                    warnings.extend(pending)
                    pending.clear()
                    seen_productivity = seen_productivity or "productivity_cpu_pct" in totals
                    break
            else:
                if _IGNORED_RE.match(line):
                    continue
                if seen_productivity or len(pending) >= _MAX_UNKNOWN:
                    break  # the program's own output after (or instead of) the rest
                pending.append(f"line {lineno}: not an RTS summary line, ignored: {line[:80]!r}")
        if not seen_productivity:
            incomplete = True
            reason = (f"the RTS summary starting at line {line0} stops after line {last_line} "
                      f"without its 'Productivity' line (file cut short?); loaded what was there")

    if gz_cut:
        incomplete = True
        reason = f"{gz_cut}; {reason}" if reason else gz_cut
    fill_derived(totals, meta, warnings)
    if progress is not None:
        progress(1.0)
    return rts_profile(
        path=str(path), format=FORMAT, totals=totals, meta=meta, warnings=warnings,
        incomplete=incomplete, incomplete_reason=reason, extras=extras,
    )
