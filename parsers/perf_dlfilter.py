"""perf.data without perf's text: ``perf script --dlfilter`` with a small C filter.

Why: ``perf script`` prints every frame of every sample (about 3 KB of text a sample on
deep stacks), and formatting that text is most of perf's time; splitting it again is
most of ours.  With the filter in ``perf_aggregate.c`` perf still reads the recording,
follows the threads and their maps and resolves each address with its own symbol tables
(the same symbol and DSO names ``perf script`` prints), but drops each sample before it
would format it; the filter keeps the distinct frames and callchains, and this module
reads its tables with numpy and hands them to :func:`parsers.perf_script.read_parts`,
which builds the profile with the text reader's own steps.

When the text and the filter could differ, the text is read instead (the profile's
``meta["perf_reader"]`` tells which one ran, and why):
- no C compiler, or a perf without ``--dlfilter`` (before 5.14): the filter cannot run;
- user-space DWARF unwinding or branch-stack call chains: perf builds those stacks
  itself, the filter sees only the kernel's;
- a perf that expands inlined functions and a binary with debug information: that perf
  adds inlined frames to its text (:mod:`parsers.perf_inlines`);
- event attributes that differ between events (the text drops a field for all events).

The compiled filter is cached by the hash of its source under ``$PROFDIFF_CACHE_DIR``
(default ``$XDG_CACHE_HOME/profdiff`` or ``~/.cache/profdiff``); ``PROFDIFF_PERF_TEXT=1``
always reads the text.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, NamedTuple

from .process_group import ProcessGroup, distinct_stderr

SOURCE = Path(__file__).with_name("perf_aggregate.c")
MAX_STACK = 127  # perf script's default --max-stack (PERF_MAX_STACK_DEPTH)
# perf_event_attr.sample_type bits
S_IP, S_TID, S_TIME, S_CALLCHAIN, S_PERIOD = 1 << 0, 1 << 1, 1 << 2, 1 << 5, 1 << 8
S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = 1 << 11, 1 << 12, 1 << 13
SAMPLE_DTYPE = [("stack", "<u4"), ("shape", "<u4"), ("time", "<u8"), ("period", "<u8")]


class Layout(NamedTuple):
    """What every sample of a recording carries (from its event attributes).  (A
    NamedTuple, not a dataclass: this module is imported before perf starts, and the
    dataclasses import costs ~8 ms there.)"""

    callchain: bool  # the filter reads the call chain, else the sampled ip alone
    period: bool  # informational: perf gives a period either way (-c: the fixed one)
    time: bool  # the text prints sample times, so the profile has a duration


class Part(NamedTuple):
    """One filter run's tables (one ``--time`` slice): frames as the callchain lines
    ``perf script`` prints, stacks root first as frame ids, shapes, samples."""

    frame_lines: list[str]
    stack_len: object  # np.ndarray of uint32
    stack_ids: object  # np.ndarray of uint32
    shapes: list[tuple[str, str, str, str]]  # (pid, tid, event, comm)
    samples: object  # structured np.ndarray of SAMPLE_DTYPE
    dsos: list[str]  # the DSO names of its frames


class NotComplete(Exception):
    """A filter run did not finish cleanly: the caller reads the text instead."""


def sample_layout(path: Path) -> Layout | None:
    """The recording's sample layout from its attribute section, or None when the filter
    cannot stand in for the text (see the module docstring) or the header is unusual."""
    try:
        with open(path, "rb") as f:
            head = f.read(104)
            if len(head) < 104 or head[:8] != b"PERFILE2":
                return None
            size, attr_size, attrs_off, attrs_size = struct.unpack_from("<QQQQ", head, 8)
            if size != 104 or attr_size < 40 or not 0 < attrs_size <= 1 << 20:
                return None
            f.seek(attrs_off)
            raw = f.read(attrs_size)
    except (OSError, struct.error):
        return None
    if len(raw) != attrs_size or attrs_size % attr_size:
        return None
    types = {struct.unpack_from("<Q", raw, i + 24)[0] for i in range(0, attrs_size, attr_size)}
    if len(types) != 1:
        return None
    st = types.pop()
    if not st & S_IP or not st & S_TID or st & (S_BRANCH_STACK | S_REGS_USER | S_STACK_USER):
        return None
    return Layout(callchain=bool(st & S_CALLCHAIN), period=bool(st & S_PERIOD),
                  time=bool(st & S_TIME))


def disabled() -> bool:
    return os.environ.get("PROFDIFF_PERF_TEXT", "") not in ("", "0")


def cache_dir() -> Path:
    """Where the compiled filter (and the inline probe's answer) are kept."""
    env = os.environ.get("PROFDIFF_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".cache"
    return base / "profdiff"


def _compiler() -> str | None:
    for cc in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if cc and (found := shutil.which(cc)):
            return found
    return None


def compiled_filter(workdir: Path) -> Path | None:
    """The filter's shared object: cached by source checksum, built on first use (about
    0.2 s); None without a compiler or when the build fails.

    Why CRC-32 and Adler-32 and not SHA-256: the key only tells apart the versions of
    one file we ship, and importing hashlib (OpenSSL) cost 3.5 ms of a small
    recording's 0.25 s, before perf could start."""
    try:
        src = SOURCE.read_bytes()
    except OSError:
        return None
    name = f"perf_aggregate-{zlib.crc32(src):08x}{zlib.adler32(src):08x}.so"
    cached = cache_dir() / name
    if cached.is_file():
        return cached
    cc = _compiler()
    if cc is None:
        return None
    built = workdir / name
    try:
        done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(built), str(SOURCE)],
                              capture_output=True, timeout=60, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not built.is_file():
        return None
    try:  # keep it for the next read; another process may be doing the same
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".so.part")
        os.close(fd)
        shutil.copyfile(built, tmp)
        os.replace(tmp, cached)
    except OSError:
        return built
    return cached


def command(perf: str, p: Path, so: Path, prefix: Path, layout: Layout, rng: str,
            header: bool, extra: Sequence[str] = ()) -> list[str]:
    """The filter's ``perf script`` run; ``extra``: options for perf's symbol search
    (:func:`parsers.perf_kallsyms.script_args`)."""
    cmd = [perf, "script", *(["--header"] if header else []), *extra, "-i", str(p),
           "--dlfilter", str(so), "--dlarg", str(prefix),
           "--dlarg", "1" if layout.callchain else "0", "--dlarg", str(MAX_STACK)]
    if rng:  # perf calls the filter before it applies --time: the filter cuts the slice
        lo, hi = time_bounds(rng)
        cmd += ["--dlarg", str(lo), "--dlarg", str(hi)]
    return cmd


def time_bounds(rng: str) -> tuple[int, int]:
    """The ns bounds of a ``perf script --time`` range ``"s.nnnnnnnnn,s.nnnnnnnnn"``
    (either side empty: open), both included, as perf reads them."""
    def ns(text: str, default: int) -> int:
        if not text:
            return default
        sec, _, frac = text.partition(".")
        return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])

    lo, _, hi = rng.partition(",")
    return ns(lo, 0), ns(hi, (1 << 64) - 1)


class Running(NamedTuple):
    """Filter runs started by :func:`start_parts`, for :func:`finish_parts`."""

    prefixes: list[Path]
    group: ProcessGroup
    errs: list[IO[bytes]]
    out: IO[bytes]  # the first run's stdout: perf's header text
    timeout: float


def start_parts(perf: str, p: Path, env: dict[str, str], timeout: float, so: Path,
                layout: Layout, ranges: list[str], extra: Sequence[str] = ()) -> Running:
    """Start one filter per time range, under one deadline; the caller must end them
    with :func:`finish_parts` (or :func:`discard_parts`).

    Why apart from the wait: the command line starts perf before it has imported what it
    needs for the rest (:mod:`parsers.perf_early`), and waits for it afterwards."""
    home = Path(env["HOME"])
    run = Running([home / f"agg{i}" for i in range(len(ranges))], ProcessGroup(timeout),
                  [tempfile.TemporaryFile() for _ in ranges], tempfile.TemporaryFile(), timeout)
    try:
        for i, rng in enumerate(ranges):
            run.group.procs.append(subprocess.Popen(
                command(perf, p, so, run.prefixes[i], layout, rng, header=i == 0, extra=extra),
                env=env, stdout=run.out if i == 0 else subprocess.DEVNULL, stderr=run.errs[i],
                stdin=subprocess.DEVNULL))
        run.group.start_clock()
    except BaseException:
        discard_parts(run)
        raise
    return run


def discard_parts(run: Running) -> None:
    """Kill and reap the runs and close their files (a run nobody will read)."""
    run.group.close()
    run.out.close()
    for e in run.errs:
        e.close()


def finish_parts(run: Running) -> tuple[list[Path], str, str]:
    """Wait for the runs of :func:`start_parts`; (output prefixes, header text, stderr).

    Raises :class:`NotComplete` when a run fails or leaves incomplete tables, and
    ``subprocess.TimeoutExpired`` when they do not finish within the deadline."""
    group = run.group
    with run.out as out:
        try:
            # numpy and the reader load while perf runs (most of a small recording's time)
            import numpy  # noqa: F401

            from . import perf_script  # noqa: F401
            for q in group.procs:
                q.wait()
        finally:
            group.close()
        out.seek(0)
        header = out.read().decode("utf-8", "replace")
    err = distinct_stderr(run.errs)
    if group.expired.is_set():
        raise subprocess.TimeoutExpired("perf script", run.timeout)
    if not group.all_succeeded(len(run.prefixes)):
        raise NotComplete(err)
    if not all(Path(f"{pre}.done").exists() for pre in run.prefixes):
        raise NotComplete(err)
    return run.prefixes, header, err


def read_part(prefix: Path) -> Part:
    """Load one run's tables (see the layout in ``perf_aggregate.c``)."""
    import numpy as np

    samples = np.fromfile(f"{prefix}.samples", dtype=np.dtype(SAMPLE_DTYPE))
    raw = np.fromfile(f"{prefix}.stacks", dtype="<u4")
    if raw.size < 1 or raw.size < 1 + int(raw[0]):
        raise NotComplete(f"{prefix}.stacks is cut")
    n = int(raw[0])
    lens = raw[1 : 1 + n]
    ids = raw[1 + n :]
    if int(lens.sum(dtype=np.int64)) != ids.size:
        raise NotComplete(f"{prefix}.stacks does not add up")
    frames = Path(f"{prefix}.frames").read_bytes().split(b"\0")[:-1]
    shapes = Path(f"{prefix}.shapes").read_bytes().split(b"\0")[:-1]
    if len(frames) % 3 or len(shapes) % 4:
        raise NotComplete(f"{prefix}: a table is cut")
    lines = [_frame_line(frames[i], frames[i + 1], frames[i + 2])
             for i in range(0, len(frames), 3)]
    dsos = sorted({os.fsdecode(frames[i]) for i in range(2, len(frames), 3)} - {""})
    shape_rows = [tuple(s.decode("utf-8", "replace") for s in shapes[i : i + 4])
                  for i in range(0, len(shapes), 4)]
    if samples.size and (int(samples["stack"].max()) >= n
                         or int(samples["shape"].max()) >= len(shape_rows)):
        raise NotComplete(f"{prefix}: a sample points past the tables")
    if ids.size and int(ids.max()) >= len(lines):
        raise NotComplete(f"{prefix}: a stack points past the frames")
    return Part(lines, lens, ids, shape_rows, samples, dsos)  # type: ignore[arg-type]


def _frame_line(addr: bytes, sym: bytes, dso: bytes) -> str:
    """The callchain line ``perf script -F ip,sym,dso`` prints for this frame."""
    s = sym.decode("utf-8", "replace") or "[unknown]"
    d = dso.decode("utf-8", "replace") or "[unknown]"
    return f"\t{addr.decode('ascii', 'replace'):>16} {s} ({d})"
