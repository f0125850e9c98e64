"""GHC ``+RTS -t --machine-readable`` statistics reader.

The RTS prints a Haskell ``[(String, String)]`` list, one pair per line::

    ad 20 +RTS -tad.stats --machine-readable      <- only when written to a file
     [("bytes allocated", "6688508720")
     ,("num_GCs", "6434")
     ...
     ]

Keys are GHC's own (``"bytes allocated"``, ``GC_cpu_seconds``, ``gen_0_collections``,
...) and vary with the GHC version; known ones are mapped onto the ``-s`` summary's keys
(:mod:`parsers.ghc_rts`) so the two kinds of file compare with each other, the rest are
snake_cased (``*_seconds`` -> ``*_s``, ``wall`` -> ``elapsed``, ``*_percent`` fractions
-> ``*_pct`` x100).  ``meta["rts_keys"]`` records GHC key -> profdiff key.  GHC's
machine-readable "percent" values are fractions (``0.622838``), so they are scaled to
0..100 like the ``-s`` summary's.

The plain ``+RTS -t`` one-liner (``<<ghc: 6688508720 bytes, 6434 GCs, ... :ghc>>``) is
read too (``meta["kind"] = "rts-t"``), with the same keys.

Bad input: a line inside the list that is not a ``("key", "value")`` pair raises a
located :class:`ParseError` (``lenient`` skips it with a warning); a list without its
closing ``]`` (cut short) loads the pairs read with ``incomplete=True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import ParseError
from .ghc_rts import fill_derived, program_of, rts_profile, snake_key
from .gzip_io import read_all
from .model import Profile

FORMAT = "ghc-rts-t"
DESCRIPTION = "GHC RTS statistics, machine-readable (+RTS -t --machine-readable)"

#: GHC key -> (profdiff key, scale).  Several GHC keys may land on one profdiff key
#: (GHC prints ``bytes allocated`` and ``allocated_bytes``); the first one wins.
KEY_MAP: dict[str, tuple[str, float]] = {
    "bytes allocated": ("bytes_allocated", 1.0),
    "allocated_bytes": ("bytes_allocated", 1.0),
    "num_GCs": ("num_gcs", 1.0),
    "average_bytes_used": ("average_bytes_used", 1.0),
    "max_bytes_used": ("max_residency_bytes", 1.0),
    "max_live_bytes": ("max_residency_bytes", 1.0),
    "num_byte_usage_samples": ("max_residency_samples", 1.0),
    "major_gcs": ("major_gcs", 1.0),
    "peak_megabytes_allocated": ("peak_megabytes_allocated", 1.0),
    "max_mem_in_use_bytes": ("total_memory_in_use_bytes", 1.0),
    "max_slop_bytes": ("max_slop_bytes", 1.0),
    "copied_bytes": ("bytes_copied", 1.0),
    "fragmentation_bytes": ("fragmentation_bytes", 1.0),
    "init_cpu_seconds": ("init_cpu_s", 1.0),
    "init_wall_seconds": ("init_elapsed_s", 1.0),
    "mut_cpu_seconds": ("mut_cpu_s", 1.0),
    "mut_wall_seconds": ("mut_elapsed_s", 1.0),
    "mutator_cpu_seconds": ("mut_cpu_s", 1.0),
    "mutator_wall_seconds": ("mut_elapsed_s", 1.0),
    "GC_cpu_seconds": ("gc_cpu_s", 1.0),
    "GC_wall_seconds": ("gc_elapsed_s", 1.0),
    "exit_cpu_seconds": ("exit_cpu_s", 1.0),
    "exit_wall_seconds": ("exit_elapsed_s", 1.0),
    "rp_cpu_seconds": ("rp_cpu_s", 1.0),
    "rp_wall_seconds": ("rp_elapsed_s", 1.0),
    "hc_cpu_seconds": ("prof_cpu_s", 1.0),  # -s prints heap-census time as "PROF"
    "hc_wall_seconds": ("prof_elapsed_s", 1.0),
    "total_cpu_seconds": ("total_cpu_s", 1.0),
    "total_wall_seconds": ("total_elapsed_s", 1.0),
    "gc_cpu_percent": ("gc_time_pct", 100.0),
    "gc_wall_percent": ("gc_elapsed_pct", 100.0),
    "alloc_rate": ("alloc_rate_bytes_per_s", 1.0),
    "productivity_cpu_percent": ("productivity_cpu_pct", 100.0),
    "productivity_wall_percent": ("productivity_elapsed_pct", 100.0),
    "work_balance": ("par_gc_work_balance_pct", 100.0),
    "sparks_dud ": ("sparks_dud", 1.0),  # GHC's key has a trailing space
}

_STR = r'"((?:[^"\\]|\\.)*)"'
_PAIR_RE = re.compile(rf'^\s*([\[,])\s*\(\s*{_STR}\s*,\s*{_STR}\s*\)\s*(\])?\s*$')
_START_RE = re.compile(r'^\s*\[\s*\(\s*"', re.M)
_END_RE = re.compile(r"^\s*\]\s*$")
_F = r"([\d.]+)"
_ONELINE_RE = re.compile(
    rf"<<ghc: (\d+) bytes, (\d+) GCs, (\d+)/(\d+) avg/max bytes residency \((\d+) samples\), "
    rf"(\d+)M in use, {_F} INIT \({_F} elapsed\), {_F} MUT \({_F} elapsed\), "
    rf"{_F} GC \({_F} elapsed\) :ghc>>"
)
_ONELINE_KEYS = (
    "bytes_allocated", "num_gcs", "average_bytes_used", "max_residency_bytes",
    "max_residency_samples", "peak_megabytes_allocated", "init_cpu_s", "init_elapsed_s",
    "mut_cpu_s", "mut_elapsed_s", "gc_cpu_s", "gc_elapsed_s",
)


def sniff(head: bytes, path: Path) -> float:
    """The list opens with ``[("bytes allocated", "<n>")`` near the top of the file."""
    text = head[:8192].decode("utf-8", "replace")
    if _ONELINE_RE.search(text):
        return 0.9
    m = re.search(r'^\s*\[\s*\(\s*"([^"]*)"\s*,\s*"[-\d.e+]*"\s*\)', text, re.M)
    if not m:
        return 0.0
    if text.count("\n", 0, m.start()) > 3:
        return 0.3
    return 0.95 if m.group(1) in KEY_MAP else 0.6


def _unescape(s: str) -> str:
    return s.replace('\\"', '"').replace("\\\\", "\\")


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **options: Any,
) -> Profile:
    """Parse the key/value list; map keys onto the shared RTS statistics keys."""
    path = Path(path)
    data, gz_cut = read_all(path)
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    warnings: list[str] = []
    meta: dict[str, Any] = {"kind": "rts-machine-readable", "program": "", "command_line": ""}

    start = next((i for i, ln in enumerate(lines) if _START_RE.match(ln)), None)
    if start is None and (one := _ONELINE_RE.search(text)) is not None:
        return _read_oneline(path, text, one, meta, warnings)
    if start is None:
        raise ParseError(path, "a GHC '+RTS -t --machine-readable' list ' [(\"key\", \"value\")'",
                         line=min(len(lines), 2) or None,
                         found=lines[0][:80] if lines else "an empty file")
    pre = [ln.strip() for ln in lines[:start] if ln.strip()]
    if pre:
        meta["command_line"] = pre[-1]
        meta["program"] = program_of(pre[-1])

    totals: dict[str, float] = {}
    rts_keys: dict[str, str] = {}
    strings: dict[str, str] = {}
    closed = False
    for i in range(start, len(lines)):
        line = lines[i]
        lineno = i + 1
        if not line.strip():
            continue
        if _END_RE.match(line):
            closed = True
            break
        m = _PAIR_RE.match(line)
        if m is None or (m.group(1) == "[") != (i == start):
            if i == len(lines) - 1 and not text.endswith(("\n", "\r")):
                break  # the last line itself is cut short: incomplete, not corrupt
            what = "'[(\"key\", \"value\")'" if i == start else "',(\"key\", \"value\")' or ']'"
            if not lenient:
                raise ParseError(path, what, line=lineno, found=line)
            warnings.append(f"line {lineno}: skipped, expected {what}, found {line[:80]!r}")
            continue
        ghc_key, raw = _unescape(m.group(2)), _unescape(m.group(3))
        key, scale = KEY_MAP.get(ghc_key) or snake_key(ghc_key)
        try:
            value = float(raw) * scale
        except ValueError:
            strings[key] = raw
            rts_keys[ghc_key] = key
            continue
        if key in totals:
            if abs(totals[key] - value) > 1e-9 * max(abs(value), 1.0):
                warnings.append(f"line {lineno}: {ghc_key!r} = {raw} differs from an earlier "
                                f"key mapped to {key} ({totals[key]:g}); kept the first")
        else:
            totals[key] = value
        rts_keys[ghc_key] = key
        if m.group(4):
            closed = True
            break
    if progress is not None:
        progress(1.0)

    incomplete = not closed
    reason = ("the key/value list has no closing ']' (file cut short?); "
              f"loaded the {len(rts_keys)} pairs read") if incomplete else ""
    if gz_cut:
        incomplete = True
        reason = f"{gz_cut}; {reason}" if reason else gz_cut
    if not rts_keys:
        raise ParseError(path, "at least one '(\"key\", \"value\")' pair", line=start + 1,
                         found=lines[start][:80])
    meta["rts_keys"] = rts_keys
    if strings:
        meta["rts_strings"] = strings
    fill_derived(totals, meta, warnings)
    return rts_profile(
        path=str(path), format=FORMAT, totals=totals, meta=meta, warnings=warnings,
        incomplete=incomplete, incomplete_reason=reason,
    )


def _read_oneline(
    path: Path, text: str, m: re.Match[str], meta: dict[str, Any], warnings: list[str]
) -> Profile:
    """The plain ``-t`` summary line; a preceding line is the command (``-t<file>``)."""
    meta["kind"] = "rts-t"
    pre = [ln.strip() for ln in text[: m.start()].splitlines() if ln.strip()]
    if pre:
        meta["command_line"] = pre[-1]
        meta["program"] = program_of(pre[-1])
    totals = {k: float(v) for k, v in zip(_ONELINE_KEYS, m.groups(), strict=True)}
    totals["total_memory_in_use_bytes"] = totals["peak_megabytes_allocated"] * 1024 * 1024
    fill_derived(totals, meta, warnings)
    return rts_profile(path=str(path), format=FORMAT, totals=totals, meta=meta,
                       warnings=warnings)
