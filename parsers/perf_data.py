"""Reader for binary ``perf.data`` recordings, through the installed ``perf`` tool.

Why a subprocess: perf.data holds raw addresses; turning them into symbols needs the
recorded binaries, the kernel symbol table and perf's own unwinding/DSO logic.  Re-doing
that in Python would be large and wrong in corner cases, so perf does it.  Where they give
the same profile, perf hands over its resolved samples as tables through a small
``--dlfilter`` (:mod:`parsers.perf_dlfilter`, several times faster than its text);
otherwise ``perf script``'s text is streamed into the text reader
(:func:`parsers.perf_script.read_stream`).  ``meta["perf_reader"]`` says which ran.

Symbols: perf finds binaries by their recorded path or in its build-id cache.  Binaries
kept *beside* the perf.data (as the sample recordings do) are added to a throw-away
build-id cache in a temporary ``HOME``, so the user's ``~/.debug`` is never written; the
user's existing cache entries are linked into it so they still resolve.  Frames whose
binary is gone come out as ``[unknown]`` and a warning names the missing binaries.

Start-up: numpy and the text reader are imported only once perf is running, so their
~0.2 s import overlaps perf's own start (most of the time of a small recording); the
command line loads the file before it imports its views for the same reason, and
``profdiff show`` starts perf before its own imports (:mod:`parsers.perf_early`; the read
takes that perf: :func:`open_workspace`, :func:`start_tables`).
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .errors import ExternalToolError, ParseError, ProfdiffError
from .perf_header import (
    HEADER_SIZE_V2,
    data_end,
    recorded_build_ids,
    recorded_dsos,
    sample_time_span,
)
from .process_group import ProcessGroup, distinct_stderr
from .reader import usable_cores

if TYPE_CHECKING:
    from .model import Profile
    from .perf_dlfilter import Layout, Running

FORMAT = "perf-data"
DESCRIPTION = "Linux perf.data recording (read with perf script)"

MAGICS = (b"PERFILE2", b"PERFFILE", b"2ELIFREP")
FIELDS = ["comm", "pid", "tid", "time", "period", "event", "ip", "sym", "dso"]
DEFAULT_TIMEOUT_S = 600.0
MAX_BESIDE = 64  # binaries beside the recording that are offered to perf
MAX_SLICES = 4  # perf script runs at once over disjoint time ranges (one per core)
SLICE_MIN_BYTES = 16 << 20  # smaller recordings: one run (a perf start costs ~0.1 s)
# perf's message when it stops at a record it cannot read: its byte, size and type
_STOPPED_RE = re.compile(r"^(0x[0-9a-f]+) \[(?:0x)?[0-9a-f]+\]: failed to process type\b.*$",
                         re.MULTILINE)
INSTALL_HINT = (
    "install perf (Debian/Ubuntu: 'apt-get install linux-perf' or 'linux-tools-generic'; "
    "Fedora: 'dnf install perf'), or run 'perf script -i FILE > FILE.txt' where perf is "
    "available and open the text file instead"
)


def sniff(head: bytes, path: Path) -> float:
    """perf.data starts with the ``PERFILE2`` magic (``PERFFILE`` for the old v1 layout)."""
    return 1.0 if head[:8] in MAGICS else 0.0


def find_perf() -> str | None:
    """The perf binary: ``$PROFDIFF_PERF`` or ``perf`` on PATH."""
    env = os.environ.get("PROFDIFF_PERF")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("perf")


def _check_header(path: Path) -> None:
    with open(path, "rb") as f:
        head = f.read(HEADER_SIZE_V2)
    if head[:8] not in MAGICS:
        raise ParseError(path, "a perf.data file starting with 'PERFILE2'", offset=0,
                         found=head[:8])
    if head[:8] != b"PERFFILE" and len(head) < HEADER_SIZE_V2:
        raise ParseError(path, f"a {HEADER_SIZE_V2}-byte perf.data header", offset=len(head),
                         found=f"end of file after {len(head)} bytes")


def _elf_beside(path: Path) -> list[Path]:
    """Executables/shared objects in the recording's folder (candidates for the cache)."""
    out = []
    try:
        entries = sorted(path.resolve().parent.iterdir())
    except OSError:
        return out
    for p in entries:
        if len(out) >= MAX_BESIDE:
            break
        try:
            if p.is_file() and p.stat().st_size > 64:
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        out.append(p)
        except OSError:
            continue
    return out


def _private_home(tmp: Path, build_ids: Sequence[str] = ()) -> dict[str, str]:
    """Environment with HOME=tmp whose ``.debug`` mirrors the user's build-id cache.

    perf writes ``buildid-cache --add`` results under ``$HOME/.debug``; pointing HOME at a
    temporary folder keeps the user's cache clean.  The user's build-id links are linked
    (by absolute path) so binaries cached by earlier ``perf record`` runs still resolve:
    those of ``build_ids`` (the recording's table: perf looks up no others) when given,
    else all of them.  Why not all of them always: a developer's cache holds thousands,
    one symlink each, for a recording that names five.
    """
    env = dict(os.environ)
    user_home = Path(os.path.expanduser("~"))
    env["HOME"] = str(tmp)
    env.pop("PERF_BUILDID_DIR", None)
    user_ids = user_home / ".debug" / ".build-id"
    mine = tmp / ".debug" / ".build-id"
    mine.mkdir(parents=True)
    if user_ids.is_dir():
        try:
            for d, name in _cache_links(user_ids, build_ids):
                (mine / d).mkdir(exist_ok=True)
                os.symlink(user_ids.absolute() / d / name, mine / d / name)
        except OSError:
            pass
    cfg = user_home / ".perfconfig"
    if cfg.exists():
        os.symlink(cfg, tmp / ".perfconfig")
    return env


def _cache_links(user_ids: Path, build_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(first two hex digits, the rest) of the user's build-id links to mirror."""
    if not build_ids:
        return [(d.name, e.name) for d in user_ids.iterdir() if d.is_dir() for e in d.iterdir()]
    wanted = sorted({(b[:2], b[2:]) for b in build_ids if len(b) > 2})
    return [(d, e) for d, e in wanted if os.path.lexists(user_ids / d / e)]


def _cache_beside(perf: str, beside: list[Path], env: dict[str, str],
                  warnings: list[str]) -> None:
    """Offer the binaries beside the recording to perf's (private) build-id cache: one
    ``perf buildid-cache -a a,b,c`` run for all of them (a perf start costs ~0.1 s, which
    was most of the time on a small recording); names with commas go one by one."""
    listed = [b for b in beside if "," not in str(b)]
    batches = ([listed] if listed else []) + [[b] for b in beside if b not in listed]
    for batch in batches:
        try:
            _run_limited([perf, "buildid-cache", "-a", ",".join(map(str, batch))], env, 60)
        except subprocess.TimeoutExpired:
            warnings.append("perf buildid-cache timed out on " + ", ".join(b.name for b in batch))


def recording_env(perf: str, recording: Path, tmp: Path, warnings: list[str]) -> dict[str, str]:
    """Environment for running perf on ``recording`` without touching the user's HOME.

    HOME is the (caller-owned, temporary) folder ``tmp`` whose build-id cache mirrors the
    user's and also holds the ELF files beside the recording, so perf resolves symbols of
    binaries copied next to a perf.data.  Also used by :mod:`viewer.annotate`.
    """
    recorded = recorded_build_ids(recording)  # the header's table, read once
    env = _private_home(tmp, [b.build_id for b in recorded])
    env["LC_ALL"] = "C"
    env.pop("PAGER", None)
    needed = _needed_beside(recording, _elf_beside(recording), [b.name for b in recorded])
    _cache_beside(perf, needed, env, warnings)
    return env


def _needed_beside(recording: Path, beside: list[Path],
                   dsos: list[str] | None = None) -> list[Path]:
    """The binaries beside the recording perf would not find anyway: those that are not
    the very file recorded (same inode as a path in the recording's build-id table).

    Why: caching a recorded file adds nothing (perf opens it by its path and checks the
    same build-id either way), and the ``perf buildid-cache`` start it saves was a third
    of the time of loading a small recording.
    """
    if dsos is None:
        dsos = recorded_dsos(recording)
    recorded = [r for r in dsos if r.startswith("/")]  # not [vdso]
    if not recorded:
        return beside
    kept = []
    for b in beside:
        same = False
        for r in recorded:
            try:
                same = os.path.samefile(b, r)
            except OSError:
                same = False
            if same:
                break
        if not same:
            kept.append(b)
    return kept


def kernel_symbol_args(recording: Path, env: dict[str, str]) -> list[str]:
    """perf's options naming the kernel symbols it would read anyway
    (:func:`parsers.perf_kallsyms.script_args`), for the HOME of ``env``."""
    from . import perf_kallsyms
    from .perf_header import os_release, recorded_build_ids

    return perf_kallsyms.script_args(recorded_build_ids(recording), os_release(recording),
                                     Path(env["HOME"]))


def elf_beside(path: Path) -> list[Path]:
    """Public name of the ELF files beside a recording (see :func:`recording_env`)."""
    return _elf_beside(path)


def _run_limited(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


class Workspace(NamedTuple):
    """What a read sets up before perf runs: the perf binary, a temporary HOME (removed
    with ``tmpdir``), perf's environment and kernel-symbol options, the warnings said so
    far, and the tables' perf runs when :mod:`parsers.perf_early` started them."""

    perf: str
    tmpdir: tempfile.TemporaryDirectory
    env: dict[str, str]
    kernel: list[str]
    warnings: list[str]
    tables: Tables | None = None


class Tables(NamedTuple):
    """The filter runs of :func:`start_tables` and the layout they read."""

    layout: Layout
    running: Running


def open_workspace(p: Path) -> Workspace:
    """Check the header, find perf and set up its HOME (see :class:`Workspace`); the
    caller owns ``tmpdir``.  Raises what :func:`read` raises for these."""
    _check_header(p)
    perf = find_perf()
    if perf is None:
        raise ExternalToolError(f"{p}: reading perf.data needs the 'perf' program: {INSTALL_HINT}")
    tmpdir = tempfile.TemporaryDirectory(prefix="profdiff-perf-")
    try:
        warnings: list[str] = []
        env = recording_env(perf, p, Path(tmpdir.name), warnings)
        return Workspace(perf, tmpdir, env, kernel_symbol_args(p, env), warnings)
    except BaseException:
        tmpdir.cleanup()
        raise


def start_tables(ws: Workspace, p: Path, cores: int | None, timeout: float) -> Tables | str:
    """Start perf with the table filter (:mod:`parsers.perf_dlfilter`), one run per time
    slice; or why the text is read instead.  Raises OSError when perf cannot start."""
    from . import perf_dlfilter as agg

    if agg.disabled():
        return "PROFDIFF_PERF_TEXT is set"
    layout = agg.sample_layout(p)
    if layout is None:
        return "samples perf unwinds itself, or events of unlike layouts"
    so = agg.compiled_filter(Path(ws.tmpdir.name))
    if so is None:
        return "no C compiler for the perf filter"
    ranges = _slice_ranges(p, cores) or [""]
    return Tables(layout, agg.start_parts(ws.perf, p, ws.env, timeout, so, layout, ranges,
                                          ws.kernel))


def read(
    path: str | Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    event: str | None = None,
    group_by: str = "symbol+dso",
    split_by: str | None = None,
    demangle: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    cores: int | None = None,
    **_options: object,
) -> Profile:
    """Load a perf.data through perf's tables or its text (see the module docstring).

    Options are those of :func:`parsers.perf_script.read` plus ``timeout`` (seconds for
    perf to finish) and ``cores`` (this read's share of the cores: :func:`slice_count`).
    Raises :class:`ExternalToolError` if perf is missing or times out,
    :class:`ParseError` (with perf's own message) if perf cannot read the file.
    """
    from . import perf_early

    p = Path(path)
    ws = perf_early.take(p, cores, timeout) or open_workspace(p)
    perf, env, kernel, warnings = ws.perf, ws.env, ws.kernel, ws.warnings
    with ws.tmpdir:
        fields = list(FIELDS)
        opts = dict(lenient=lenient, progress=progress, event=event, group_by=group_by,
                    split_by=split_by, demangle=demangle)
        reader, tables = _read_tables(ws, p, timeout, opts, cores)
        sliced = tables or _read_sliced(perf, p, env, timeout, warnings, opts, cores, kernel)
        prof, rc, err = sliced if sliced is not None else (None, 0, "")
        for _attempt in range(0 if sliced is not None else len(FIELDS)):
            cmd = [perf, "script", "--header", *kernel, "-i", str(p), "-F", ",".join(fields)]
            try:
                prof, rc, err = _stream(cmd, env, p, timeout, warnings, **opts)
            except subprocess.TimeoutExpired:
                raise ExternalToolError(
                    f"{p}: 'perf script' did not finish within {timeout:.0f} s"
                ) from None
            m = re.search(r"Cannot print '(\w+)' field", err)
            if prof is None and m and m.group(1) in fields and m.group(1) not in ("ip", "event"):
                fields.remove(m.group(1))  # not recorded in this file: ask for less
                continue
            break
        missing: list[str] = []
        if prof is not None and _may_lack_binaries(prof):
            missing = _missing_binaries(perf, p, env)  # only worth a perf run when needed
    if prof is None:
        raise _no_profile_error(perf, p, rc, err)
    meta = dict(prof.meta)
    meta["perf_binary"] = perf
    meta["perf_fields"] = ",".join(fields)
    meta["perf_reader"] = reader
    meta["perf_kallsyms"] = "the build-id cache's copy" if kernel else "perf's own search"
    extra: list[str] = []
    incomplete, reason = prof.incomplete, prof.incomplete_reason
    if rc != 0:
        incomplete = True
        msg = next((ln for ln in err.splitlines() if ln.strip()), f"exit status {rc}")
        if rc < 0:
            reason = f"{_killed(rc)}; the samples it printed before were loaded"
        else:
            reason = f"perf script stopped with an error ({msg}); the samples before it were loaded"
    unknown = _unknown_share(prof)
    meta["unresolved_pct"] = round(unknown, 2)
    if missing:
        meta["missing_binaries"] = missing
        extra.append(
            "binaries of this recording were not found, so their frames are shown as "
            f"[unknown] ({unknown:.1f} % of samples end in an unresolved frame): "
            + ", ".join(missing)
            + ". Put them beside the perf.data (same file name) or load 'perf script' text "
            "made where they exist."
        )
    extra.extend(_cut_features_warning(p, meta))
    said, kernel_id = _perf_messages(err, "kernel_unresolved" in prof.meta)
    extra.extend(said[: max(0, 10 - len(extra))])
    own = tuple(prof.warnings)
    if kernel_id:
        from . import perf_kernel  # with numpy: never before perf has started

        own = tuple(perf_kernel.with_build_id(w, kernel_id) for w in own)
    from dataclasses import replace

    return replace(prof, meta=meta, warnings=own + tuple(extra),
                   incomplete=incomplete, incomplete_reason=reason)


_NO_KALLSYMS_RE = re.compile(r"No kallsyms or vmlinux with build-id ([0-9a-fA-F]+) was found")


def _perf_messages(err: str, kernel_said: bool) -> tuple[list[str], str | None]:
    """(perf's stderr lines as warnings, the kernel build-id perf found no symbols for).

    With ``kernel_said`` (the reader's own warning explains the unresolved kernel frames),
    perf's "No kallsyms or vmlinux with build-id ..." is left out and its build-id goes
    into that warning instead (:func:`perf_kernel.with_build_id`)."""
    out: list[str] = []
    kernel_id: str | None = None
    for ln in err.splitlines():
        ln = ln.strip()
        if not ln or ln.startswith("#"):
            continue
        m = _NO_KALLSYMS_RE.fullmatch(ln)
        if m and kernel_said:
            kernel_id = kernel_id or m.group(1).lower()
            continue
        out.append(f"perf: {ln}")
    return out, kernel_id


def _read_tables(ws: Workspace, p: Path, timeout: float, opts: dict[str, object],
                 cores: int | None) -> tuple[str, tuple[Profile | None, int, str] | None]:
    """Load ``p`` through perf's tables (:mod:`parsers.perf_dlfilter`): (which reader
    ran or why the text is read, the result or None to read the text).  Waits for the
    runs ``ws`` started early, else starts them.

    Why a fallback and not an error: the text reader handles every recording perf can
    print, and locates problems by line; the tables only stand in where they give the
    same profile, several times faster.
    """
    from . import perf_dlfilter as agg
    from . import perf_inlines

    text = "perf script text"
    perf, env, tmp = ws.perf, ws.env, Path(ws.tmpdir.name)
    try:
        started = ws.tables or start_tables(ws, p, cores, timeout)
        if isinstance(started, str):
            return f"{text} ({started})", None
        layout = started.layout
        prefixes, header, err = agg.finish_parts(started.running)
        parts = [agg.read_part(pre) for pre in prefixes]
        dsos = sorted({d for part in parts for d in part.dsos})
        if perf_inlines.expands_inlines(
                perf, lambda rec, home: recording_env(perf, rec, home, []), tmp):
            why = perf_inlines.debug_info_reason(dsos, Path(env["HOME"]) / ".debug")
            if why:
                return f"{text} (this perf prints inlined frames, and {why})", None
        from . import perf_script

        # perf prints a period for every sample, the attribute's fixed one when the
        # samples carry none (perf record -c), and hands the filter the same value
        prof = perf_script.read_parts(parts, p, header, has_period=True,
                                      has_time=layout.time, format=FORMAT,
                                      warnings=ws.warnings, meta={"source": "perf.data"},
                                      **opts)
    except subprocess.TimeoutExpired:
        raise ExternalToolError(
            f"{p}: 'perf script' did not finish within {timeout:.0f} s") from None
    except (agg.NotComplete, ValueError, OSError, ParseError):
        return f"{text} (the perf filter did not finish cleanly)", None
    return "perf script tables (--dlfilter)", (prof, 0, err)


def _stream(
    cmd: list[str], env: dict[str, str], p: Path, timeout: float, warnings: list[str],
    **opts: object,
) -> tuple[Profile | None, int, str]:
    """Run perf script and parse its stdout while it is written; (profile|None, rc, stderr).

    perf writes to a file in the temporary HOME that the parser reads as it grows
    (:class:`_GrowingFile`), for the reason :func:`_start_slices` gives.
    """
    out_path = Path(env["HOME"]) / "script.txt"
    with tempfile.TemporaryFile() as errf, open(out_path, "wb") as out:
        group = ProcessGroup(timeout)
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=errf,
                                stdin=subprocess.DEVNULL)
        group.procs.append(proc)
        group.start_clock()
        prof: Profile | None = None
        parse_error: ParseError | None = None
        try:
            text = _GrowingFile(out_path, proc)
            from . import perf_script  # with numpy: imported while perf starts

            try:
                prof = perf_script.read_stream(text, p, format=FORMAT, warnings=warnings,
                                               meta={"source": "perf.data"}, **opts)
            except ParseError as e:
                parse_error = e
            text.close()
            rc = proc.wait()
        finally:
            group.close()
        killed = group.expired.is_set()
        errf.seek(0)
        err = errf.read().decode("utf-8", "replace")
    if killed:
        raise subprocess.TimeoutExpired(cmd, timeout)
    if parse_error is not None and "no samples" not in (parse_error.found or ""):
        raise parse_error
    return prof, rc, err


def slice_count(cores: int | None = None) -> int:
    """How many perf script runs a big recording is split into: ``cores`` (this read's
    share of the cores, given when other files are read at the same time) or the usable
    cores, at most :data:`MAX_SLICES`; ``$PROFDIFF_PERF_SLICES`` overrides both (1: one
    run, as on a busy machine).

    Why a share: two recordings read side by side, each split in two, ran four perf on
    two cores and took 1.1x as long as one run each (``profdiff diff``, ~90k samples)."""
    env = os.environ.get("PROFDIFF_PERF_SLICES", "")
    if env.isdigit() and int(env) >= 1:
        return min(int(env), 16)
    return max(1, min(usable_cores() if cores is None else cores, MAX_SLICES))


def _slice_ranges(path: Path, cores: int | None = None) -> list[str]:
    """``perf script --time`` ranges splitting a big recording into equal time spans, one
    per usable core; [] for one run (small file, one core, no sample times).

    Why: printing the call chains is most of ``perf script``'s time (~2x ``perf report``)
    and perf is single-threaded, so K perf runs over disjoint time ranges print the same
    text K times faster.  The ranges are inclusive and meet without overlap (ns integers),
    and their outputs laid end to end are byte-identical to one run's.
    """
    k = slice_count(cores)
    span = sample_time_span(path)
    if k < 2 or span is None or path.stat().st_size < SLICE_MIN_BYTES:
        return []
    first, last = span
    cuts = [first + (last - first) * i // k for i in range(1, k)]

    def ns(t: int) -> str:
        return f"{t // 1_000_000_000}.{t % 1_000_000_000:09d}"

    lows = [""] + [ns(c + 1) for c in cuts]
    highs = [ns(c) for c in cuts] + [""]
    return [f"{lo},{hi}" for lo, hi in zip(lows, highs, strict=True)]


class _SliceFailed(Exception):
    """A ``perf script`` slice did not finish cleanly: the caller reruns it whole."""


def _start_slices(perf: str, p: Path, ranges: list[str], env: dict[str, str],
                  errs: list, procs: list[subprocess.Popen], kernel: Sequence[str] = ()
                  ) -> list[Path]:
    """Start one ``perf script --time RANGE`` per range (appended to ``procs``), each
    writing to its own file in the temporary HOME; returns the files in order.

    Why files and not a pipe for the first slice: a pipe holds 64 KiB, and the thread
    that drains it needs the GIL, which the parser holds for tens of ms per chunk, so
    that perf spent much of its time blocked and the parse waited for it; a file never
    blocks its writer (:class:`_GrowingFile` reads it while it grows).
    """
    files = [Path(env["HOME"]) / f"slice{i}.txt" for i in range(len(ranges))]
    for i, rng in enumerate(ranges):
        cmd = [perf, "script", *(["--header"] if i == 0 else []), *kernel, "-i", str(p),
               "-F", ",".join(FIELDS), "--time", rng]
        with open(files[i], "wb") as out:
            procs.append(subprocess.Popen(cmd, env=env, stdout=out, stderr=errs[i],
                                          stdin=subprocess.DEVNULL))
    return files


def _read_sliced(perf: str, p: Path, env: dict[str, str], timeout: float,
                 warnings: list[str], opts: dict[str, object], cores: int | None = None,
                 kernel: Sequence[str] = ()) -> tuple[Profile | None, int, str] | None:
    """Load ``p`` from several ``perf script --time`` runs at once; None to run it whole.

    Each slice writes to a file in the (private, temporary) HOME, and the files are
    parsed in time order while they are written, so the parser sees exactly the text of
    one run.  Any failure (a slice's error, a field this file
    lacks, a parse error, no disk room) gives None: the caller's single run then reports
    it with the positions of one run's text.
    """
    ranges = _slice_ranges(p, cores)
    if not ranges:
        return None
    group = ProcessGroup(timeout)
    errs = [tempfile.TemporaryFile() for _ in ranges]
    prof: Profile | None = None
    try:
        files = _start_slices(perf, p, ranges, env, errs, group.procs, kernel)
        group.start_clock()
        text = _SlicesText(group.procs, files)
        from . import perf_script  # with numpy: imported while perf starts

        prof = perf_script.read_stream(text, p, format=FORMAT, warnings=warnings,
                                       meta={"source": "perf.data"}, **opts)
        text.finish()
    except (_SliceFailed, ParseError, OSError):
        prof = None
    finally:
        group.close()
        err = distinct_stderr(errs)
    if group.expired.is_set():
        raise subprocess.TimeoutExpired([perf, "script"], timeout)
    if prof is None or not group.all_succeeded(len(ranges)):
        return None
    return prof, 0, err


class _SlicesText:
    """The text of the slices in order, each file read *while* its perf still writes it
    (:class:`_GrowingFile`), once the slices before it have exited cleanly (else
    :class:`_SliceFailed`).

    Why not wait for a slice to finish before reading its file: the other slices would
    be done long before the parse reached them, and the rest of the parse would run
    alone on one core; reading as they write keeps both cores busy.
    """

    def __init__(self, procs: list[subprocess.Popen], files: list[Path]) -> None:
        self._procs = procs
        self._files = files
        self._part = 0
        self._cur = _GrowingFile(files[0], procs[0])

    def read(self, n: int) -> str:
        while self._part < len(self._procs):
            s = self._cur.read(n)
            if s:
                return s
            self._cur.drain()
            self._cur.close()
            self._part += 1
            if self._part < len(self._procs):
                self._cur = self._open(self._part)
        return ""

    def _open(self, part: int) -> _GrowingFile:
        """Slice ``part``'s file, after every slice before it ended cleanly."""
        for i in range(part):  # their text ended: their perf has exited or is exiting
            if self._procs[i].wait() != 0:
                raise _SliceFailed(f"perf script slice {i} failed")
        return _GrowingFile(self._files[part], self._procs[part])

    def finish(self) -> None:
        """After the parse: every slice must have been read to its end, and its perf
        must have exited cleanly (a slice cut by a crash is not a whole slice)."""
        if self._part < len(self._procs) or any(q.wait() != 0 for q in self._procs):
            raise _SliceFailed("the parser stopped before the last slice, or a slice failed")


class _GrowingFile:
    """Text of a file that a perf process is still writing: what is there now, then
    (after short sleeps) what it adds, until the process has exited and all is read."""

    WAIT_S = 0.005

    def __init__(self, path: Path, writer: subprocess.Popen) -> None:
        self._f = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._writer = writer
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")
        self._writer_done = False
        self._eof = False

    def read(self, n: int) -> str:
        """Up to ``n`` bytes' worth of text (waits for the writer to add some); "" at
        the end: the writer has exited and its last byte was read."""
        out: list[str] = []
        got = 0
        while got < n and not self._eof:
            b = self._f.read(n - got)
            if b:
                s = self._dec.decode(b)
                out.append(s)
                got += len(b)
            elif self._writer_done:
                out.append(self._dec.decode(b"", final=True))
                self._eof = True
            elif self._writer.poll() is not None:
                self._writer_done = True  # one more read takes what it wrote last
            else:
                time.sleep(self.WAIT_S)
        return "".join(out)

    def drain(self) -> None:
        """Nothing to discard: the writer never waits on a file."""

    def close(self) -> None:
        self._f.close()


def _no_profile_error(perf: str, p: Path, rc: int, err: str) -> ProfdiffError:
    """Why perf gave no sample of ``p`` (exit status ``rc``, stderr ``err``): none
    recorded, perf killed, stopped at a cut or damaged record, or a file it cannot read."""
    first = next((ln for ln in err.splitlines() if ln.strip()), "")
    if "has no samples" in err or (rc == 0 and not first):
        return ParseError(p, "a recording with at least one sample",
                          found="no samples (perf script printed none)")
    if rc < 0:
        return ExternalToolError(f"{p}: {_killed(rc)} while reading this file"
                                 + (f" ({first})" if first else "") + cut_note(p))
    stopped = _stopped_before_samples(p, err)
    if stopped is not None:
        return stopped
    if "incompatible file format" in err:
        first = _verbose_reason(perf, p, env_plain()) or first
    return ParseError(p, "a perf.data this perf can read", offset=0,
                      found=f"perf script exit {rc}: {first}")


_FEATURE_META = {"HOSTNAME": "hostname", "OSRELEASE": "os_release",
                 "VERSION": "perf_version", "ARCH": "arch", "CMDLINE": "command_line",
                 "NRCPUS": "processors"}
"""The run facts (meta keys) perf prints from each header feature."""


def _cut_features_warning(p: Path, meta: dict) -> list[str]:
    """A warning when the header features after the samples are cut (every sample is
    there, so the run is whole), and the run facts perf then made up are dropped from
    ``meta``: perf prints "arch: (null)", "nrcpus online: 0" and the reading machine's
    CPUID for features it could not read."""
    from .perf_header import cut_features

    lost = cut_features(p)
    if not lost:
        return []
    for name in lost:
        meta.pop(_FEATURE_META.get(name, ""), None)
    return [f"the file is cut after its samples (every sample was read): the header "
            f"sections {', '.join(lost)} lie past its end ({p.stat().st_size:,} bytes), "
            "so the recording's facts they held are unknown and perf decoded the samples "
            "without them: frames may differ from the whole file's"]


def cut_note(p: Path) -> str:
    """``; the file is cut: ...`` when it is shorter than its header says (perf, reading
    past the end of a mapped file, dies of SIGBUS without saying why), or ``; the file
    is cut after its samples: ...`` when only the header features that follow them are
    (perf 6.1 dies of SIGSEGV on the fork-exec recording cut there), else ''."""
    end = data_end(p)
    try:
        size = p.stat().st_size
    except OSError:
        return ""
    if end is not None and size >= end:
        from .perf_header import cut_features

        lost = cut_features(p)  # the samples are whole; what follows them is not
        return (f"; the file is cut after its samples: its header sections "
                f"{', '.join(lost)} lie past its end ({size:,} bytes)") if lost else ""
    if end is None:
        return ""
    return (f"; the file is cut: its header says its samples end at byte {end:,}, "
            f"the file has {size:,} bytes")


def _stopped_before_samples(p: Path, err: str) -> ParseError | None:
    """The error for a recording of which perf printed no sample before it stopped at a
    record it could not read ('0x226d0 [0]: failed to process type: 0'), located at
    that record (at most the file's end); None when perf's message is another one.

    Why its own message: this is how perf stops on a cut or damaged file, and perf loses
    the samples it held back for time ordering, so even a file cut near its end may
    give none; 'a perf.data this perf can read' at byte 0 would blame the whole file.
    """
    m = _STOPPED_RE.search(err)
    if m is None:
        return None
    try:
        at = min(int(m.group(1), 16), p.stat().st_size)
    except OSError:
        at = int(m.group(1), 16)
    return ParseError(p, "a sample before perf stopped reading here (the file is cut or "
                      "damaged)", offset=at,
                      found=f"none; perf: {m.group(0).strip()}")


def _killed(rc: int) -> str:
    """'perf script was killed by signal 7 (SIGBUS)' for a negative return code."""
    try:
        name = f" ({signal.Signals(-rc).name})"
    except ValueError:
        name = ""
    return f"perf script was killed by signal {-rc}{name}"


def env_plain() -> dict[str, str]:
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env


def _verbose_reason(perf: str, p: Path, env: dict[str, str]) -> str:
    """perf's specific reason for 'incompatible file format' (only printed with -v)."""
    try:
        r = _run_limited([perf, "report", "-v", "--header-only", "-i", str(p)], env, 60)
    except subprocess.TimeoutExpired:
        return ""
    for ln in r.stderr.splitlines():
        if "unsupported" in ln or "ABI" in ln or "magic" in ln.lower():
            return ln.strip()
    return ""


def _may_lack_binaries(prof: Profile) -> bool:
    """True when an unresolved frame sits in a named binary (or the DSO is not kept), so
    a missing binary may be why; ``[unknown]`` in ``[unknown]`` is an address outside any
    mapping, which no binary would resolve."""
    fr = prof.frames
    mods = fr.module[fr.name == "[unknown]"].tolist()
    return any(not str(m).startswith("[") for m in mods)


def _missing_binaries(perf: str, p: Path, env: dict[str, str]) -> list[str]:
    """Recorded user-space DSOs with samples that exist neither on disk nor in the cache."""
    try:
        r = _run_limited([perf, "buildid-list", "-i", str(p)], env, 60)
    except subprocess.TimeoutExpired:
        return []
    cache = Path(env["HOME"]) / ".debug" / ".build-id"
    out = []
    for ln in r.stdout.splitlines():
        parts = ln.split(None, 1)
        if len(parts) != 2:
            continue
        bid, dso = parts
        if dso.startswith("[") or not dso.startswith("/"):
            continue
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{32}|[0-9a-f]{64}", bid):
            continue
        if Path(dso).exists() or (cache / bid[:2] / bid[2:]).exists():
            continue
        out.append(dso)
    return out


def _unknown_share(prof: Profile) -> float:
    """Percent of samples whose leaf frame is unresolved (``[unknown]``)."""
    import numpy as np

    v = np.asarray(prof.values["self_samples"], dtype=np.float64)
    tot = v.sum()
    if not tot:
        return 0.0
    return float(v[prof.name == "[unknown]"].sum() * 100.0 / tot)
