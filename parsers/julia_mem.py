"""Julia ``--track-allocation`` reader: ``.mem`` files, or a folder of them as one run.

Julia writes, for every source file it ran, a copy ``<file>.jl.<pid>.mem`` (older
versions: ``<file>.jl.mem``) in which every source line is prefixed by the bytes
allocated on that line, right-aligned in a 9-character field and followed by one space,
or by ``-`` for lines that carry no data (not code, or never run)::

            - function TD!(weights, α, ρ, state_t, state_tp1, reward, gamma, terminal)
            0     if terminal
     23530432     cycleobs = [[1.0,1.0,0.0],

A number wider than 9 digits simply widens the field, so a line is parsed as
``spaces, "-" or digits, one space, source text``.

One run is usually a whole folder of ``.mem`` files (one per source file, in the source
tree), so a folder is read as one profile (``ACCEPTS_DIRECTORY``), searched recursively.
When it holds files of several processes (several ``<pid>``: leftovers of earlier runs
are common, Julia never deletes them) the newest process's files are read and a warning
names the others; option ``pid=<n>`` picks one and ``pid="all"`` sums them.

Model: a one-level tree with one node per (file, line) that has a number - ``0``
included, since "ran and allocated nothing" is information a diff needs:

* ``name``: the source text, whitespace-collapsed and shortened to 80 characters
  (``"<file>:<line>"`` for a blank line);
* ``module``: the source file (``.<pid>.mem`` removed; for a folder, its path relative
  to the folder, so two run folders of the same tree align);
* ``line``: the line number, and ``src`` the same as text (the views show it in a "line"
  column and ``diff`` as ``file:line``: a name is only a line's text, and two equal lines
  of a file differ only there); ``kind``: ``"line"``.
* metric ``bytes`` (SELF, bytes, deterministic); ``totals["bytes"]``.

Alignment across versions: code moves between versions, so line numbers are useless as
an identity.  ``FrameTable.match`` is the whitespace-collapsed source text, plus
``"\\x1e<k>"`` for its k-th (k >= 2) occurrence in the same file, so runs align by
source text (``module`` + text); an edited line shows up as one removed and one added.

``meta``: ``files`` (source files read), ``mem_files``, ``pids``, ``n_lines`` (lines
with data), and for a single file ``source_from_file_name``: its source file, known only
from the ``.mem`` file's name (a renamed copy, ``before.mem``, names none:
:mod:`viewer.single_source` matches such runs line by line).
``extras["by_file"]``: ``[{"file", "bytes", "lines"}]`` sorted by bytes.
A run without any data line loads as an empty profile with a warning (the code never
ran with allocation tracking on) rather than failing, so a folder diff still works.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .builder import flat_profile
from .errors import ParseError
from .gzip_io import read_all
from .model import Kind, Metric, Profile, Unit, make_frame_table
from .values import INT64_MAX

FORMAT = "julia-mem"
DESCRIPTION = "Julia --track-allocation .mem file or folder"
ACCEPTS_DIRECTORY = True

_NEWLINE = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"^ *(-|\d+)(?: (.*))?$")
_HEAD_LINE = re.compile(rb"^ *(-|\d+)(?: |$)")
_MEM_NAME = re.compile(r"^(?P<src>.+?)(?:\.(?P<pid>\d+))?\.mem$")
_WS = re.compile(r"\s+")
_MAX_NAME = 80
_MAX_SCAN = 20000  # directory entries looked at when sniffing a folder

BYTES = Metric("bytes", Unit.BYTES, Kind.SELF, "bytes allocated",
               "bytes allocated on the line (Julia --track-allocation)")


def _mem_files(folder: Path, limit: int | None = None) -> list[Path]:
    out: list[Path] = []
    seen = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for f in sorted(files):
            seen += 1
            if f.endswith(".mem"):
                out.append(Path(root) / f)
            if limit is not None and seen >= limit:
                return out
    return out


def sniff(head: bytes, path: Path) -> float:
    """Folders: 1.0 when they hold ``*.mem`` files.  Files: most lines look like
    ``<9-column count or -> <source>`` (the 9th column being where the field ends);
    a ``.mem`` name raises the score, since ``.cov`` coverage files share the layout."""
    p = Path(path)
    if p.is_dir():
        return 1.0 if _mem_files(p, _MAX_SCAN) else 0.0
    lines = head.split(b"\n")
    if len(head) >= 4096:
        lines = lines[:-1]  # the last one may be cut
    lines = [ln.rstrip(b"\r") for ln in lines[:400]]
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return 0.0
    good = 0
    aligned = 0
    numbers = 0
    for ln in lines:
        m = _HEAD_LINE.match(ln)
        if m:
            good += 1
            aligned += m.end(1) == 9
            numbers += m.group(1) != b"-"
    if good < 0.95 * len(lines) or aligned < 0.9 * good:
        return 0.0
    score = 0.5 if numbers else 0.3
    if p.name.endswith(".mem"):
        score += 0.4
    return score


def _source_name(mem: Path, base: Path | None) -> tuple[str, str | None]:
    """(source file for ``module``, pid or None) from ``foo.jl.123.mem``."""
    m = _MEM_NAME.match(mem.name)
    src, pid = (m.group("src"), m.group("pid")) if m else (mem.name, None)
    if base is not None:
        rel = mem.parent.relative_to(base).as_posix()
        src = src if rel in ("", ".") else f"{rel}/{src}"
    return src, pid


def _parse_file(
    mem: Path, lenient: bool, warnings: list[str]
) -> tuple[list[tuple[int, int, str]], str]:
    """(line number, bytes, source text) for every line with a number, and why the file
    is incomplete (``""``: it is whole).

    Julia writes every line with its newline, so a last line without one was cut while
    being written: its number may be cut in half (``23530432`` -> ``2353``), so the line
    is dropped rather than read as a smaller number.
    """
    rows: list[tuple[int, int, str]] = []
    data, gz_cut = read_all(mem)
    text_all = data.decode("utf-8", errors="replace")
    lines = _NEWLINE.split(text_all)  # LF, CRLF or CR, like universal newlines
    cut = ""
    if lines[-1] == "":
        lines.pop()
    else:
        lines.pop()
        cut = (f"{mem.name}: the file ends inside line {len(lines) + 1} (no final newline): "
               "that line was dropped")
    for no, text in enumerate(lines, 1):
        m = _LINE.match(text)
        bad = ""
        if m is None:
            # Julia writes "        - " even for blank source lines, so any other
            # line (a bare empty one included) means an edited or foreign file.
            bad = "a .mem line: a 9-column byte count or '-', a space, the source text"
        elif m.group(1) != "-" and int(m.group(1)) > INT64_MAX:
            bad = "a .mem byte count below 2^63"
        if bad:
            if not lenient:
                raise ParseError(mem, bad, line=no, found=text)
            warnings.append(f"{mem}:{no}: skipped line, expected {bad}")
            continue
        if m.group(1) != "-":
            rows.append((no, int(m.group(1)), m.group(2) or ""))
    if not rows and not data:
        raise ParseError(mem, "a Julia .mem file", found="an empty file")
    if gz_cut:
        cut = f"{mem.name}: {gz_cut}" + (f"; {cut}" if cut else "")
    return rows, cut


def _choose_pids(path: Path, mems: list[Path], base: Path | None, pid: int | str | None,
                 warnings: list[str]) -> tuple[dict[str | None, list[tuple[Path, str]]],
                                               list[str | None]]:
    """Group the .mem files by the process that wrote them and pick which to read: one
    run is one process (the newest, unless ``pid`` says otherwise), never a silent mix."""
    by_pid: dict[str | None, list[tuple[Path, str]]] = {}
    for mem in mems:
        src, p = _source_name(mem, base)
        by_pid.setdefault(p, []).append((mem, src))
    pids = sorted((p for p in by_pid if p is not None), key=int)
    chosen: list[str | None]
    if pid is not None and str(pid) != "all":
        if str(pid) not in by_pid:
            raise ParseError(path, f"a process id among {pids} (option pid)", found=str(pid))
        chosen = [str(pid)]
    elif len(by_pid) > 1 and pid is None:
        newest = max(by_pid, key=lambda k: max(m.stat().st_mtime for m, _ in by_pid[k]))
        chosen = [newest]
        others = [p for p in by_pid if p != newest]
        warnings.append(
            f".mem files of several processes: read pid {newest} (newest); ignored "
            f"{', '.join(str(o) for o in others)} (option pid=<n> or pid='all')"
        )
    else:
        chosen = list(by_pid)
    return by_pid, chosen


def _read_mems(todo: list[tuple[Path, str]], base: Path | None, lenient: bool,
               warnings: list[str], progress: Callable[[float], None] | None,
               ) -> tuple[dict[tuple[str, int], list], list[str], list[str], list[str]]:
    """Parse each file and sum bytes per (source file, line), so several .mem files of
    one source add up.  Returns the sums, source files, .mem names read and cuts."""
    acc: dict[tuple[str, int], list] = {}  # (file, line) -> [bytes, text]
    files: list[str] = []
    mem_read: list[str] = []
    cuts: list[str] = []
    for i, (mem, src) in enumerate(todo):
        if progress:
            progress(i / len(todo))
        rows, cut = _parse_file(mem, lenient, warnings)
        if cut:
            cuts.append(cut)
        mem_read.append(mem.name if base is None else mem.relative_to(base).as_posix())
        if src not in files:
            files.append(src)
        for no, b, text in rows:
            cell = acc.get((src, no))
            if cell is None:
                acc[(src, no)] = [b, text]
            else:
                cell[0] += b
    return acc, files, mem_read, cuts


def _line_frames(acc: dict[tuple[str, int], list], files: list[str],
                 ) -> tuple[list[str], list[str], list[str], list[int], list[str], list[int]]:
    """One frame per source line, in file order; the identity is the line's text (so an
    edit above it does not break alignment), numbered when a text repeats in a file."""
    names, modules, srcs, lines, matches, values = [], [], [], [], [], []
    occurrences: dict[tuple[str, str], int] = {}
    for (src, no), (b, text) in sorted(acc.items(), key=lambda kv: (files.index(kv[0][0]),
                                                                      kv[0][1])):
        norm = _WS.sub(" ", text).strip()
        k = occurrences.get((src, norm), 0) + 1
        occurrences[(src, norm)] = k
        if norm:
            name = norm if len(norm) <= _MAX_NAME else norm[: _MAX_NAME - 1] + "…"
        else:
            name = f"{src}:{no}"
        names.append(name)
        modules.append(src)
        srcs.append(str(no))
        lines.append(no)
        matches.append(norm if k == 1 else f"{norm}\x1e{k}")
        values.append(b)
    return names, modules, srcs, lines, matches, values


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    pid: int | str | None = None,
    **_options: Any,
) -> Profile:
    """Read one ``.mem`` file, or every ``.mem`` file under a folder, as one run.

    Steps: choose the process (:func:`_choose_pids`), read and sum (:func:`_read_mems`),
    frames (:func:`_line_frames`), then the flat profile with per-file totals.
    """
    path = Path(path)
    warnings: list[str] = []
    if path.is_dir():
        mems = _mem_files(path)
        if not mems:
            raise ParseError(path, "a folder holding Julia .mem files", found="no *.mem file")
        base: Path | None = path
    else:
        mems = [path]
        base = None
    by_pid, chosen = _choose_pids(path, mems, base, pid, warnings)
    todo = [item for k in chosen for item in by_pid[k]]
    acc, files, mem_read, cuts = _read_mems(todo, base, lenient, warnings, progress)
    names, modules, srcs, lines, matches, values = _line_frames(acc, files)
    if not values:
        warnings.append(
            f"{path}: no line has allocation data (every line is '-'): the code was not run "
            "with --track-allocation, or this file's code never executed"
        )
    n = len(values)
    frames = make_frame_table(names, modules, srcs, lines, ["line"] * n, match=matches)
    total = sum(values)
    if total > INT64_MAX:
        raise ParseError(path, "byte counts whose sum is below 2^63", found=str(total))
    col = np.asarray(values, dtype=np.int64)
    by_file: dict[str, list[int]] = {}
    for m, v in zip(modules, values, strict=True):
        cell = by_file.setdefault(m, [0, 0])
        cell[0] += v
        cell[1] += 1
    meta = {
        "files": files,
        "mem_files": mem_read,
        "pids": [int(p) for p in chosen if p is not None],
        "n_lines": n,
        "completeness": "cannot tell: a .mem file is a copy of the source with no end "
                        "marker; only a last line without its newline shows a cut",
    }
    if base is None:  # the one source file is known only by the .mem file's own name
        meta["source_from_file_name"] = files[0] if files else ""
    extras = {"by_file": [
        {"file": f, "bytes": b, "lines": c}
        for f, (b, c) in sorted(by_file.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ]}
    if progress:
        progress(1.0)
    return flat_profile(
        path=str(path),
        format=FORMAT,
        frames=frames,
        metrics=[BYTES],
        columns={"bytes": col},
        meta=meta,
        totals={"bytes": total},
        total_metrics={"bytes": BYTES},
        warnings=tuple(warnings),
        extras=extras,
        default_metric="bytes",
        incomplete=bool(cuts),
        incomplete_reason="; ".join(cuts),
    )
