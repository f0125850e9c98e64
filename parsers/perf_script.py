"""Reader for Linux ``perf script`` text (plain or gzipped).

The text is a sequence of samples separated by blank lines::

    comm [pid/]tid [cpu] [time:] [period] event[:mods]: [ip sym+off (dso)]
    \\t    addr symbol+0xoff (dso)      <- leaf first
    \\t    addr caller (dso)
    <blank>

Every part of the header except ``comm``, ``tid`` and the event is optional (it depends
on the perf version and on ``-F``), ``comm`` may contain spaces, and the callchain may be
missing (then the sampled ip sits at the end of the header line and samples are not
separated by blank lines).  Some old tools print frames without indentation.

Why it is fast: a file of 10^6 samples has ~10^7 callchain lines but only a few thousand
*distinct* callchains.  The text is read in large chunks and split into sample blocks;
each block's callchain text is looked up whole in a dict (one hash per sample, no per-line
work), so only a header regex runs per sample.  Per-sample ids go to compact arrays that
numpy aggregates per (stack, event, group) at the end; each distinct stack is then merged
into the :class:`~parsers.builder.TreeBuilder` once, with its summed values.  Blocks the
fast path does not understand (comments, one-line samples, unindented frames, garbage)
fall back to a line-by-line state machine that gives exact line numbers.

Public entry points: :func:`read` (a file) and :func:`read_stream` (any text stream,
used by :mod:`parsers.perf_data` on ``perf script``'s stdout).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from . import perf_kernel
from .builder import (
    FrameInterner,
    inclusive_by_levels,
    percent_of,
    profile_from_arrays,
    self_and_total,
)
from .errors import ParseError
from .gc_pause import gc_paused
from .gzip_io import cut_of, open_text, with_cut
from .model import FrameTable, Kind, Metric, Profile, Unit
from .perf_tree import tree_from_paths

FORMAT = "perf-script"
DESCRIPTION = "Linux perf script text"

CHUNK_CHARS = 8 << 20
CHAIN_CACHE_CHARS = 64 << 20  # callchain texts remembered whole (one hash per repeat)
SHORT_STACK = 8  # stacks up to this depth are deduplicated by their frame ids
TABLE_PIECE = 1 << 22  # frame ids mapped at once from perf's tables (read_parts)
# the parts of a usual sample header that change from sample to sample: time and period
# the last three words of a usual sample header, all of a chunk's checked at once
_TIMES_RE = re.compile(r"[0-9]+\.[0-9]+:(?:\n[0-9]+\.[0-9]+:)*")
_PERIODS_RE = re.compile(r"[0-9]+(?:\n[0-9]+)*")
_EVENTS_RE = re.compile(r"[A-Za-z_]\S*:(?:\n[A-Za-z_]\S*:)*")
_BLANK, _UNSEEN, _IGNORED = -1, -2, -3  # line codes besides frame ids (see _feed_chunk)

# comm [pid/]tid [cpu] [time:] [period] event: [rest]   - comm is lazy so it may hold spaces;
# the event must start with a letter so a timestamp is never taken for it.
_HEADER_RE = re.compile(
    r"\s*(\S.*?)\s+(?:(-?\d+)/)?(-?\d+)\s+(?:\[(\d+)\]\s+)?(?:(\d+\.\d+):\s+)?(?:(\d+)\s+)?"
    r"([A-Za-z_][^\s]*?):(?:\s+(.*?))?\s*$"
)
_FRAME_RE = re.compile(r"\s*([0-9a-fA-F]+)\s+(.*?)\s*$")
_OFFSET_RE = re.compile(r"\+0x[0-9a-fA-F]+$")
_RUST_HASH_RE = re.compile(r"(::h[0-9a-f]{16}|17h[0-9a-f]{16}E)$")
_JIT_MAP_RE = re.compile(r"^(perf|jitted)-\d+(?:-\d+)?\.(map|so)$")
_USER_PSEUDO_DSOS = frozenset(
    ["[unknown]", "[vdso]", "[vsyscall]", "[heap]", "[stack]", "[anon]", "[jit]", "[vectors]",
     "[uprobes]", "[vvar]"]
)
_COMMENT_KEYS = {
    "captured on": "date",
    "hostname": "hostname",
    "os release": "os_release",
    "perf version": "perf_version",
    "arch": "arch",
    "cmdline": "command_line",
    "nrcpus online": "processors",
}
_TIME_EVENTS = ("cpu-clock", "task-clock")
NO_STACK = "[no callchain]"


def sniff(head: bytes, path: Path) -> float:
    """A perf script header line (ending in ``event:``) followed by a frame or a blank line."""
    text = head.decode("utf-8", "replace")
    lines = [ln for ln in text.split("\n")[:400] if not ln.startswith("#")]
    for i, ln in enumerate(lines[:-1]):
        if not ln.strip():
            continue
        m = _HEADER_RE.match(ln)
        if m is None:
            return 0.0
        nxt = lines[i + 1]
        if m.group(8) or not nxt.strip() or _FRAME_RE.match(nxt):
            return 0.9
        return 0.0
    return 0.0


# --------------------------------------------------------------------------------------
class _Parser:
    """Streaming state: interned frames, distinct stacks, per-sample id arrays."""

    def __init__(self, path: str, *, lenient: bool, group_by: str, split_by: str | None,
                 demangle: bool) -> None:
        if group_by not in ("symbol+dso", "symbol"):
            raise ValueError(f"group_by must be 'symbol+dso' or 'symbol', not {group_by!r}")
        if split_by not in (None, "comm", "pid"):
            raise ValueError(f"split_by must be None, 'comm' or 'pid', not {split_by!r}")
        self.path = path
        self.lenient = lenient
        self.by_dso = group_by == "symbol+dso"
        self.split_by = split_by
        self.demangler = _Demangler() if demangle else None
        # frames: (name, module, kind) -> id
        self.frame_ids: dict[tuple[str, str, str], int] = {}
        self.frame_rows: list[tuple[str, str, str]] = []
        self.line_frame: dict[str, int] = {"": _BLANK}  # raw frame text -> frame id
        self.chain_sid: dict[str, int] = {}  # raw callchain text -> stack id (bounded)
        self.chain_budget = CHAIN_CACHE_CHARS
        self.short_sid: dict[tuple[int, ...], int] = {}  # short stacks, deduplicated
        # stacks, root-first frame ids one after the other: stack s is
        # stack_frames[stack_off[s]:stack_off[s + 1]]
        self.stack_frames = array("i")
        self.stack_off = array("q", [0])
        self.shape_ids: dict[str, int] = {}  # header without time and period -> shape
        self.shapes: list[int] = []  # (event, comm, pid) ids, three per shape
        self.events: dict[str, int] = {}
        self.comms: dict[str, int] = {}
        self.pids: dict[tuple[str, str], int] = {}
        self.s_stack = array("i")
        self.s_event = array("i")
        self.s_comm = array("i")
        self.s_pid = array("i")
        self.s_period = array("q")
        self.meta: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.ignored_lines = 0
        self.cut_samples = 0  # perf's zero-filled samples of a cut perf.data, not counted
        self.cut_sample_after = -1  # how many real samples came before the last of them
        self.t_first: str | None = None
        self.t_last: str | None = None
        self.cur_line = 0  # line number of the block being parsed (for errors)

    # ----- frames ------------------------------------------------------------------
    def _frame(self, text: str) -> int | None:
        """Frame id of one callchain line (cached by its raw text); None if not a frame."""
        fid = self.line_frame.get(text)
        if fid is not None:
            return fid
        m = _FRAME_RE.match(text)
        if m is None:
            return None
        addr, rest = m.groups()
        if rest.endswith(")") and (i := rest.rfind(" (")) >= 0:
            sym, dso = rest[:i].rstrip(), rest[i + 2 : -1]
        elif rest.startswith("(") and rest.endswith(")"):
            sym, dso = "", rest[1:-1]
        else:
            sym, dso = rest, ""
        sym = _OFFSET_RE.sub("", sym) or "[unknown]"
        module = dso.rsplit("/", 1)[-1]
        kernel = (
            module.startswith(("[kernel", "[guest.kernel"))
            or module == "vmlinux"
            or (len(addr) == 16 and addr[:4].lower() == "ffff")
            or (module.startswith("[") and module.endswith("]") and module not in _USER_PSEUDO_DSOS)
        )
        if self.demangler is not None:
            sym = self.demangler(sym)
        jm = _JIT_MAP_RE.match(module)
        if jm:  # per-process JIT maps: same identity in every run
            module = f"{jm.group(1)}-PID.{jm.group(2)}"
        fid = self._intern(sym, module if self.by_dso else "", "kernel" if kernel else "")
        self.line_frame[text] = fid
        return fid

    def _intern(self, name: str, module: str, kind: str) -> int:
        key = (name, module, kind)
        fid = self.frame_ids.get(key)
        if fid is None:
            fid = len(self.frame_rows)
            self.frame_ids[key] = fid
            self.frame_rows.append(key)
        return fid

    def _stack(self, leaf_first: list[int]) -> int:
        """Store a stack (given leaf first) and return its id.

        Long stacks are not deduplicated here (a tuple per distinct stack cost half the
        memory of a 10^6-sample recording); the tree build merges equal paths anyway.
        """
        if len(leaf_first) <= SHORT_STACK:
            key = tuple(leaf_first)
            sid = self.short_sid.get(key)
            if sid is not None:
                return sid
            self.short_sid[key] = len(self.stack_off) - 1
        leaf_first.reverse()
        self.stack_frames.extend(leaf_first)
        self.stack_off.append(len(self.stack_frames))
        return len(self.stack_off) - 2

    def _chain(self, chain: str) -> int | None:
        """Stack id of a block's callchain text; None if a line is not a frame line."""
        lines = chain.split("\n")
        fids = list(map(self.line_frame.get, lines))
        if None in fids or _BLANK in fids:
            fids = self._chain_lines(lines)
            if fids is None:
                return None
        sid = self._stack(fids)
        if self.chain_budget > 0:
            self.chain_sid[chain] = sid
            self.chain_budget -= len(chain)
        return sid

    def _chain_lines(self, lines: list[str]) -> list[int] | None:
        """Frame ids of callchain lines, parsing the ones not seen before."""
        fids = []
        for ln in lines:
            if not ln.strip():
                return None
            if ln not in self.line_frame and _is_header(ln):
                return None  # samples without blank lines between them: line by line
            fid = self._frame(ln)
            if fid is None:
                if ln[0] in " \t":  # srcline / brstack extras printed under a frame
                    self.ignored_lines += 1
                    continue
                return None
            fids.append(fid)
        return fids

    # ----- samples -----------------------------------------------------------------
    def _sample(self, g: tuple, sid: int) -> None:
        comm, pid, tid, _cpu, time, period, event, _rest = g
        per = _period(period) if period else -1
        if per == 0 and self._is_cut_sample(time, sid):
            self.cut_samples += 1
            self.cut_sample_after = len(self.s_stack)
            return
        ev = self.events.get(event)
        if ev is None:
            ev = self.events[event] = len(self.events)
        c = self.comms.get(comm)
        if c is None:
            c = self.comms[comm] = len(self.comms)
        self.s_stack.append(sid)
        self.s_event.append(ev)
        self.s_comm.append(c)
        self.s_period.append(per)
        if self.split_by == "pid":
            key = (comm, pid or tid)
            p = self.pids.get(key)
            if p is None:
                p = self.pids[key] = len(self.pids)
            self.s_pid.append(p)
        if time:
            if self.t_first is None:
                self.t_first = time
            self.t_last = time

    def _is_cut_sample(self, time: str | None, sid: int) -> bool:
        """True for the sample perf prints for a perf.data cut inside a sample record
        (the caller has checked that its period is printed and 0).

        Why it is not a sample: perf reads the cut record's missing bytes as zeros, so
        its time, period and callchain are 0 (only the ip, before the time, may be
        kept), and a time of 0 makes perf print it at once, while the real samples it
        still held back for time ordering are lost when it stops at the zero bytes
        after it (``failed to process type: 0``).  No real sample has time 0 and
        period 0; a period that is not printed tells nothing (``--reltime`` prints the
        first sample at time 0), so such a sample is kept.
        """
        if not time or time.strip("0."):
            return False
        return self.stack_off[sid + 1] - self.stack_off[sid] <= 1

    @property
    def ends_with_cut_sample(self) -> bool:
        """True when the last sample of the text was perf's zero-filled cut sample."""
        return self.cut_samples > 0 and self.cut_sample_after == len(self.s_stack)

    def feed_blocks(self, body: str, line_base: int) -> int:
        """Parse complete sample blocks (``body`` ends at a blank-line boundary); returns
        the number of lines in ``body``.

        Leading comment blocks go to :meth:`_feed_each`; the rest takes the whole-chunk
        path (:meth:`_feed_chunk`) unless that finds a line it does not understand.
        """
        lines_before = 0
        if body.startswith("#"):
            end = 0
            while body.startswith("#", end):
                nxt = body.find("\n\n", end)
                if nxt < 0:
                    self._feed_each(body[end:], line_base + body.count("\n", 0, end))
                    return body.count("\n") + 1
                end = nxt + 2
            self._feed_each(body[: end - 2], line_base)
            lines_before = body.count("\n", 0, end)
            body = body[end:]
        if not body:
            return lines_before
        n = self._feed_chunk(body, line_base + lines_before)
        if n < 0:
            self._feed_each(body, line_base + lines_before)
            n = body.count("\n") + 1
        return lines_before + n

    def _feed_chunk(self, body: str, line_base: int) -> int:
        """Parse a run of ordinary samples with one dict look-up per line and whole-array
        steps; returns the number of lines, or -1 (nothing consumed) when a line needs
        the careful path.

        Why: deep recordings print ~100 callchain lines per sample and almost every
        sample's stack is new, so any per-line Python work dominates.
        """
        lines = body.split("\n")
        n = len(lines)
        codes = np.fromiter(map(self.line_frame.get, lines, repeat(_UNSEEN, n)),
                            dtype=np.int32, count=n)
        blank = codes == _BLANK
        is_hdr = np.zeros(n, dtype=bool)
        is_hdr[0] = True
        is_hdr[1:] = blank[:-1] & ~blank[1:]
        unseen = np.flatnonzero((codes == _UNSEEN) & ~is_hdr)
        if unseen.size and not self._learn(lines, unseen, codes):
            return -1
        heads = np.flatnonzero(is_hdr)
        hdrs = [lines[i] for i in heads.tolist()]
        shaped = self._headers(hdrs)
        if shaped is None:
            groups = list(map(_split_header, hdrs))
            if None in groups or any(g[7] for g in groups):
                return -1
        keep = codes >= 0
        keep[heads] = False
        fl = np.flatnonzero(keep)
        sample_of = np.cumsum(is_hdr)[fl] - 1
        counts = np.bincount(sample_of, minlength=len(heads))
        off = np.zeros(len(heads) + 1, dtype=np.int64)
        np.cumsum(counts, out=off[1:])
        # root first: element p of sample k goes to 2*off[k] + count[k] - 1 - p
        seg = off[:-1][sample_of]
        dest = 2 * seg + counts[sample_of] - 1 - np.arange(len(fl))
        out = np.empty(len(fl), dtype=np.int32)
        out[dest] = codes[fl]
        base_sid = len(self.stack_off) - 1
        base_len = len(self.stack_frames)
        self.stack_frames.frombytes(out.tobytes())
        self.stack_off.frombytes((off[1:] + base_len).astype(np.int64).tobytes())
        if shaped is not None:
            self._add_samples(shaped, base_sid)
            return n
        sample = self._sample
        for k, g in enumerate(groups):
            try:
                sample(g, base_sid + k)
            except _BadValue as e:
                self._bad_value(e, line_base + int(heads[k]))
        return n

    def _headers(self, hdrs: list[str]) -> tuple | None:
        """Sample headers of a chunk decoded without a Python step per sample.

        Headers differ mostly in their time and period, their last words but one;
        with those cut off (one ``rsplit`` per header, each column checked by one regex
        over the whole chunk), the rest (comm, pid/tid, event) takes a handful of
        distinct "shapes", each split once.  Returns per-sample (event, comm, pid) ids, periods and the
        first/last time, or None when a header is not of the usual
        ``comm pid/tid time: period event:`` form (the caller then splits each one).
        """
        words = list(map(str.rsplit, hdrs, repeat(None), repeat(3)))
        if set(map(len, words)) != {4}:
            return None
        prefix, times, periods, evs = zip(*words, strict=True)
        if not (_TIMES_RE.fullmatch("\n".join(times))
                and _PERIODS_RE.fullmatch("\n".join(periods))
                and _EVENTS_RE.fullmatch("\n".join(evs))):
            return None
        try:
            period = np.array(periods).astype(np.int64)
        except (ValueError, OverflowError):
            return None  # out-of-range values: the per-sample path locates them
        if int(period.max(initial=0)) >= 1 << 62:  # let the careful path check the edge
            return None
        if not period.all():  # a zero period: _sample checks for perf's cut sample
            return None
        keys = list(map("{}\0{}".format, prefix, evs))  # the header without time and period
        shape_get = self.shape_ids.get
        sids = np.fromiter(map(shape_get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        for i in np.flatnonzero(sids < 0).tolist():
            key = keys[i]
            sh = shape_get(key)
            if sh is None:
                g = _split_header(hdrs[i])
                if g is None or g[7] or (g[4], g[5]) != (times[i][:-1], periods[i]):
                    return None
                sh = self._shape(key, g)
            sids[i] = sh
        shapes = np.asarray(self.shapes, dtype=np.int32).reshape(-1, 3)
        return shapes[sids], period, times[0][:-1], times[-1][:-1]

    def _shape(self, key: str, g: tuple) -> int:
        """Intern a header shape (its event, comm and pid/tid) and return its id."""
        comm, pid, tid, _cpu, _time, _period, event, _rest = g
        ev = self.events.setdefault(event, len(self.events))
        c = self.comms.setdefault(comm, len(self.comms))
        p = self.pids.setdefault((comm, pid or tid), len(self.pids)) if self.split_by == "pid" \
            else -1
        sh = len(self.shapes) // 3
        self.shapes.extend((ev, c, p))
        self.shape_ids[key] = sh
        return sh

    def _add_samples(self, shaped: tuple, base_sid: int) -> None:
        ids, period, t_first, t_last = shaped
        n = len(period)
        self.s_stack.frombytes(np.arange(base_sid, base_sid + n, dtype=np.int32).tobytes())
        self.s_event.frombytes(np.ascontiguousarray(ids[:, 0]).tobytes())
        self.s_comm.frombytes(np.ascontiguousarray(ids[:, 1]).tobytes())
        self.s_period.frombytes(period.tobytes())
        if self.split_by == "pid":
            self.s_pid.frombytes(np.ascontiguousarray(ids[:, 2]).tobytes())
        if self.t_first is None:
            self.t_first = t_first
        self.t_last = t_last

    def _learn(self, lines: list[str], idx: np.ndarray, codes: np.ndarray) -> bool:
        """Parse callchain lines not seen before; False if one is not a frame line.

        Each distinct line is parsed once (a small recording's first chunk is nearly all
        unseen lines, mostly repeats of a few hundred), then the codes are set in one step.
        """
        picked = list(map(lines.__getitem__, idx.tolist()))
        learned: dict[str, int] = {}
        for ln in dict.fromkeys(picked):
            fid = self.line_frame.get(ln)
            if fid is None:
                if not ln.strip() or _is_header(ln):
                    return False  # samples without blank lines between them
                fid = self._frame(ln)
                if fid is None:
                    if ln[:1] not in (" ", "\t"):
                        return False
                    fid = _IGNORED  # srcline / brstack extras under a frame
            learned[ln] = fid
        got = np.fromiter(map(learned.__getitem__, picked), dtype=np.int32, count=len(picked))
        codes[idx] = got
        self.ignored_lines += int(np.count_nonzero(got == _IGNORED))
        return True

    def _feed_each(self, body: str, line_base: int) -> None:
        """Block by block, for chunks with comments, odd lines or errors to locate."""
        fast = _split_header
        chain_get = self.chain_sid.get
        sample = self._sample
        blocks = body.split("\n\n")
        for bi, blk in enumerate(blocks):
            nl = blk.find("\n")
            if nl > 0:
                hdr = blk[:nl]
                chain = blk[nl + 1 :]
            elif nl < 0:
                hdr = blk
                chain = ""
            else:
                hdr = ""
                chain = blk
            g = fast(hdr) if hdr and hdr[0] != "#" else None
            if g is not None:
                if chain:
                    sid = chain_get(chain)
                    if sid is None:
                        sid = self._chain(chain)
                elif g[7]:
                    sid = self._rest_stack(g[7])
                else:
                    sid = self._stack([])
                if sid is not None:
                    try:
                        sample(g, sid)
                    except _BadValue as e:
                        self._bad_value(e, line_base + _lines_before(blocks, bi))
                    continue
            if not blk.strip():
                continue
            # slow path: exact line numbers
            start = line_base + _lines_before(blocks, bi)
            self.feed_lines(blk.split("\n"), start)

    def _rest_stack(self, rest: str) -> int:
        """Stack of a sample whose ip sits on the header line (no callchain recorded)."""
        fid = self._frame(rest)
        return self._stack([] if fid is None else [fid])

    def _bad_value(self, e: _BadValue, lineno: int) -> None:
        """A header number out of range: a located error, or (lenient) a skipped sample."""
        if not self.lenient:
            raise ParseError(self.path, f"a {e.field} from 0 to 2^63-1 in the sample header",
                             line=lineno, found=f"{e.field} {e.value}")
        self.warnings.append(f"line {lineno}: skipped a sample whose {e.field} {e.value} "
                             "is out of range")

    def _sample_at(self, cur: tuple, fids: list[int], lineno: int) -> None:
        try:
            self._sample(cur, self._stack(fids))
        except _BadValue as e:
            self._bad_value(e, lineno)

    def feed_lines(self, lines: list[str], first_line: int) -> None:
        """Line-by-line state machine for everything the block path did not take."""
        cur: tuple | None = None
        cur_line = first_line
        fids: list[int] = []
        for i, ln in enumerate(lines):
            lineno = first_line + i
            if not ln.strip():
                if cur is not None:
                    self._sample_at(cur, fids, cur_line)
                    cur = None
                continue
            if ln[0] == "#":
                if cur is None:
                    self._comment(ln)
                    continue
            if ln not in self.line_frame and _is_header(ln):
                if cur is not None:
                    self._sample_at(cur, fids, cur_line)
                cur = _HEADER_RE.match(ln).groups()  # type: ignore[union-attr]
                cur_line = lineno
                fids = []
                if cur[7]:
                    fid = self._frame(cur[7])
                    if fid is not None:
                        fids.append(fid)
                continue
            if cur is not None:
                fid = self._frame(ln)
                if fid is not None:
                    fids.append(fid)
                    continue
                if ln[0] in " \t":
                    self.ignored_lines += 1
                    continue
            what = "a perf script sample header 'comm pid time: period event:'"
            if cur is not None:
                what += " or a callchain line 'address symbol (dso)'"
            if not self.lenient:
                raise ParseError(self.path, what, line=lineno, found=ln.strip())
            self.warnings.append(f"line {lineno}: skipped unrecognised line {ln.strip()[:80]!r}")
        if cur is not None:
            self._sample_at(cur, fids, cur_line)

    def add_part(self, part: Any, *, has_period: bool, has_time: bool) -> None:
        """Take one table part (:func:`read_parts`): frames, stacks and samples."""
        fmap = np.empty(len(part.frame_lines), dtype=np.int32)
        for i, text in enumerate(part.frame_lines):
            fid = self._frame(text)
            if fid is None:
                raise ValueError(f"not a callchain line: {text!r}")
            fmap[i] = fid
        lens = np.asarray(part.stack_len, dtype=np.int64)
        off = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        base_sid = len(self.stack_off) - 1
        base_len = len(self.stack_frames)
        ids = part.stack_ids  # root first; mapped in pieces (10^8 ids at 10^6 samples)
        for a in range(0, len(ids), TABLE_PIECE):
            self.stack_frames.frombytes(fmap[ids[a : a + TABLE_PIECE]].tobytes())
        self.stack_off.frombytes((off[1:] + base_len).tobytes())
        shape_ids = np.array([self._table_shape(*row) for row in part.shapes], dtype=np.int64)
        shapes = np.asarray(self.shapes, dtype=np.int32).reshape(-1, 3)
        smp = part.samples
        if not len(smp):
            return
        ids = shapes[shape_ids[smp["shape"].astype(np.int64)]]
        period = smp["period"]
        if has_period and int(period.max()) >= 1 << 63:
            raise ValueError("a period beyond int64: the text reader locates it")
        self.s_stack.frombytes((smp["stack"].astype(np.int64) + base_sid).astype(np.int32)
                               .tobytes())
        self.s_event.frombytes(np.ascontiguousarray(ids[:, 0]).tobytes())
        self.s_comm.frombytes(np.ascontiguousarray(ids[:, 1]).tobytes())
        per = period.astype(np.int64) if has_period else np.full(len(smp), -1, dtype=np.int64)
        self.s_period.frombytes(per.tobytes())
        if self.split_by == "pid":
            self.s_pid.frombytes(np.ascontiguousarray(ids[:, 2]).tobytes())
        if has_time:
            if self.t_first is None:
                self.t_first = _perf_time(int(smp["time"][0]))
            self.t_last = _perf_time(int(smp["time"][-1]))

    def _table_shape(self, pid: str, tid: str, event: str, comm: str) -> int:
        """Shape id of a table's (pid, tid, event, comm), parsed as perf script prints
        that sample header."""
        key = f"\1{pid}\0{tid}\0{event}\0{comm}"
        sh = self.shape_ids.get(key)
        if sh is not None:
            return sh
        g = _split_header(f"{comm} {pid}/{tid} 0.000000: 1 {event}: ")
        if g is None or g[0] != comm.strip() or g[6] != event:
            raise ValueError(f"a sample header perf script would print ambiguously: {comm!r}")
        return self._shape(key, g)

    def _comment(self, ln: str) -> None:
        body = ln[1:].strip()
        if ":" not in body:
            return
        k, v = body.split(":", 1)
        key = _COMMENT_KEYS.get(k.strip())
        if key and key not in self.meta:
            v = v.strip()
            if key == "processors":
                try:
                    self.meta[key] = int(v)
                except ValueError:
                    return
            elif key == "date":
                # perf prints the perf.data's modification time here: a recording copied
                # or checked out shows the copy's time, not the recording's
                self.meta[key] = f"{v} (perf.data file time)"
            else:
                self.meta[key] = v

    @property
    def n_samples(self) -> int:
        return len(self.s_stack)


def _perf_time(ns: int) -> str:
    """A sample time as ``perf script`` prints it: seconds with microseconds."""
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000 // 1000:06d}"


class _BadValue(ValueError):
    """A header number that does not fit the int64 columns (the caller adds the line)."""

    def __init__(self, field: str, value: str) -> None:
        super().__init__(f"{field} {value}")
        self.field = field
        self.value = value


def _period(text: str) -> int:
    """The sample period as an int64 (``str.isdigit`` also passes digits like '²')."""
    try:
        v = int(text)
    except ValueError:
        raise _BadValue("period", text) from None
    if v >= 1 << 63:
        raise _BadValue("period", text)
    return v


def _split_header(hdr: str) -> tuple | None:
    """Header fields like ``_HEADER_RE.groups()``, by splitting from the right.

    About twice as fast as the regex for the usual callchain header (ending in
    ``event:``); anything else goes to the regex.
    """
    t = hdr.split()
    n = len(t)
    if n < 3 or t[-1][-1] != ":":
        m = _HEADER_RE.match(hdr)
        return None if m is None else m.groups()
    event = t[-1][:-1]
    i = n - 2
    period = time = cpu = None
    if t[i].isdigit():
        period = t[i]
        i -= 1
    w = t[i]
    if w[-1] == ":" and "." in w:
        time = w[:-1]
        i -= 1
    w = t[i]
    if w[0] == "[" and w[-1] == "]":
        cpu = w[1:-1]
        i -= 1
    pid, _, tid = t[i].rpartition("/")
    if i < 1 or not tid.isdigit() or (pid and not pid.isdigit()) or not event[:1].isalpha():
        m = _HEADER_RE.match(hdr)
        return None if m is None else m.groups()
    return (" ".join(t[:i]), pid or None, tid, cpu, time, period, event, None)


def _is_header(ln: str) -> bool:
    """True for a sample header line (distinguishes ``dd 123 1.0: cpu-clock:`` from a frame)."""
    m = _HEADER_RE.match(ln)
    if m is None:
        return False
    if _FRAME_RE.match(ln) is None:
        return True
    g = m.groups()
    return bool(g[4] or g[3] or g[1] or not ln.rstrip().endswith(")"))


class _Demangler:
    """Optional C++/Rust demangling of names perf left mangled (it demangles most itself).

    Uses the ``cxxfilt`` package (libstdc++'s ``__cxa_demangle`` through ctypes) for
    ``_Z`` names and ``rust-demangler`` for Rust v0 ``_R`` names when installed; names it
    cannot demangle stay as they are.
    """

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}
        self.missing: list[str] = []
        try:
            import cxxfilt  # type: ignore[import-not-found]

            self._cxx = cxxfilt.demangle
        except Exception:
            self._cxx = None
            self.missing.append("cxxfilt (C++ and Rust legacy names)")
        try:
            import rust_demangler  # type: ignore[import-not-found]

            self._rust = rust_demangler.demangle
        except Exception:
            self._rust = None
            self.missing.append("rust-demangler (Rust v0 names)")

    def __call__(self, sym: str) -> str:
        out = self.cache.get(sym)
        if out is not None:
            return out
        out = sym
        try:
            if sym.startswith("_R") and self._rust is not None:
                out = self._rust(sym)
            elif sym.startswith("_Z") and self._cxx is not None:
                out = self._cxx(sym)
        except Exception:
            out = sym
        self.cache[sym] = out
        return out


# --------------------------------------------------------------------------------------
def read(
    path: str | Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    event: str | None = None,
    group_by: str = "symbol+dso",
    split_by: str | None = None,
    demangle: bool = False,
    **_options: object,
) -> Profile:
    """Read a ``perf script`` text file (optionally gzipped) into a Profile of one event.

    ``event`` picks the event (default: the one with most samples; all are listed with
    their sample counts in ``meta["events"]``).  ``group_by="symbol"`` drops the DSO from
    frames so runs whose binaries moved still align; ``split_by`` adds a top-level frame
    per ``"comm"`` or ``"pid"``; ``demangle`` demangles names perf left mangled.
    """
    p = Path(path)
    size = p.stat().st_size
    with open_text(p) as f:  # a cut gzip stream reads as a shorter text
        prof = read_stream(
            f, p, size=size, lenient=lenient, progress=progress, event=event,
            group_by=group_by, split_by=split_by, demangle=demangle,
        )
        return with_cut(prof, cut_of(f))


def read_stream(
    stream: TextIO,
    path: str | Path,
    *,
    size: int | None = None,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    event: str | None = None,
    group_by: str = "symbol+dso",
    split_by: str | None = None,
    demangle: bool = False,
    format: str = FORMAT,
    meta: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
) -> Profile:
    """Parse perf script text from any stream (file or ``perf script`` stdout)."""
    ps = _Parser(str(path), lenient=lenient, group_by=group_by, split_by=split_by,
                 demangle=demangle)
    carry = ""
    line_base = 1
    done = 0
    blank_seen = False  # samples are blank-line separated (they carry callchains)
    incomplete_reason = ""
    with gc_paused():
        while True:
            try:
                data = stream.read(CHUNK_CHARS)
            except (EOFError, OSError) as e:  # truncated gzip: keep what was read
                incomplete_reason = f"the compressed stream ends early ({e})"
                data = ""
            if not data:
                break
            done += len(data)
            buf = carry + data if carry else data
            cut = buf.rfind("\n\n")
            if cut < 0:
                carry = buf
                continue
            blank_seen = True
            body, carry = buf[:cut], buf[cut + 2 :]
            line_base += ps.feed_blocks(body, line_base) + 1
            if progress is not None and size:
                progress(min(done / size, 1.0))
    carry, reason = _unterminated_tail(carry, line_base, blank_seen, bool(incomplete_reason))
    if carry.strip():
        ps.feed_lines(carry.split("\n"), line_base)
    reasons = (incomplete_reason, reason, _cut_sample_reason(ps))
    incomplete_reason = "; ".join(r for r in reasons if r)
    if not incomplete_reason and format == FORMAT:
        ps.meta["completeness"] = (
            "cannot tell: the text ends with a whole sample, and a file cut exactly between "
            "two samples looks the same")
    return _finish(ps, event=event, format=format, meta=meta, warnings=warnings,
                   incomplete_reason=incomplete_reason)


def read_parts(
    parts: list[Any],
    path: str | Path,
    header: str,
    *,
    has_period: bool,
    has_time: bool,
    lenient: bool = False,
    event: str | None = None,
    group_by: str = "symbol+dso",
    split_by: str | None = None,
    demangle: bool = False,
    format: str = FORMAT,
    meta: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
    **_options: object,
) -> Profile:
    """The profile of samples that perf already split into tables
    (:class:`parsers.perf_dlfilter.Part`, in time order), built with the same steps as
    the text: each distinct frame goes through the callchain-line parser as the line
    ``perf script`` would print, each (comm, pid/tid, event) through the header parser.

    ``header`` is the ``perf script --header`` comment text; ``has_period`` and
    ``has_time`` say whether the samples carry those fields (perf's text then prints
    them).  Raises ValueError when a table holds what the text could not (the caller
    then reads the text, which locates the problem).
    """
    ps = _Parser(str(path), lenient=lenient, group_by=group_by, split_by=split_by,
                 demangle=demangle)
    with gc_paused():
        for ln in header.splitlines():
            if ln.startswith("#"):
                ps._comment(ln)
        for part in parts:
            ps.add_part(part, has_period=has_period, has_time=has_time)
    return _finish(ps, event=event, format=format, meta=meta, warnings=warnings,
                   incomplete_reason="")


def _finish(ps: _Parser, *, event: str | None, format: str, meta: dict[str, Any] | None,
            warnings: list[str] | None, incomplete_reason: str) -> Profile:
    """The steps after the samples are in, shared by the text and the tables."""
    if ps.ignored_lines:
        ps.warnings.append(
            f"{ps.ignored_lines} indented lines that are not frames (srcline, branch info) "
            "were ignored"
        )
    if ps.demangler is not None and ps.demangler.missing:
        ps.warnings.append("demangling limited: not installed: " + ", ".join(ps.demangler.missing))
    if warnings:
        ps.warnings[:0] = warnings
    extra_meta = dict(meta or {})
    prof = _build(ps, event=event, format=format, extra_meta=extra_meta,
                  incomplete_reason=incomplete_reason)
    return perf_kernel.collapse_unresolved(prof)


def _cut_sample_reason(ps: _Parser) -> str:
    """Warn about perf's zero-filled cut samples (:meth:`_Parser._is_cut_sample`) that
    were not counted; the incomplete reason when the text ends with one.

    Why incomplete: the text then comes from a perf.data that is cut or damaged there,
    and perf lost the samples it had not printed yet, so the profile lacks samples."""
    if not ps.cut_samples:
        return ""
    ps.warnings.append(
        f"{ps.cut_samples} sample(s) with time 0, period 0 and no callchain were not "
        "counted: perf prints such a zero-filled sample for a perf.data cut inside a sample")
    if not ps.ends_with_cut_sample or not ps.n_samples:
        return ""
    return ("the text ends with the zero-filled sample perf prints for a cut or damaged "
            "perf.data; the samples perf had not printed yet are missing")


def _lines_before(blocks: list[str], bi: int) -> int:
    """Lines taken by ``blocks[:bi]`` and their blank separators (for error positions)."""
    return sum(b.count("\n") + 2 for b in blocks[:bi])


def _unterminated_tail(carry: str, line_base: int, blank_seen: bool,
                       cut_stream: bool) -> tuple[str, str]:
    """(text to parse, incomplete reason) for what follows the last blank line.

    A perf script file with callchains is complete when every sample ends with its blank
    line, so text after the last one is a cut sample and is dropped.  Without callchains
    (one line per sample, no blank lines) only a missing final newline shows a cut.
    """
    if not carry.strip():
        return "", ""
    n_lines = line_base + carry.count("\n")
    if blank_seen or cut_stream or _has_callchain(carry):
        kept = _drop_last_block(carry)
        if kept == carry:  # no sample header at all: let the line parser report it
            return carry, ""
        where = ("in the middle of a line" if not carry.endswith("\n")
                 else "inside a sample (its blank line is missing)")
        if not blank_seen and not kept.strip():  # the only sample: keep it, marked as cut
            return carry, (f"the file ends {where} (line {n_lines}); its only sample may "
                           "be cut short")
        return kept, f"the file ends {where} (line {n_lines}); the last sample was dropped"
    if carry.endswith("\n"):
        return carry, ""
    return carry[: carry.rfind("\n") + 1], (
        f"the file ends in the middle of a line (line {n_lines}); the last sample was dropped")


def _has_callchain(text: str) -> bool:
    """True when a frame line (indented ``addr symbol (dso)``) follows a header line."""
    lines = text.split("\n", 3)
    return len(lines) > 1 and lines[1][:1].isspace() and _FRAME_RE.match(lines[1]) is not None


def _drop_last_block(text: str) -> str:
    """Remove the (cut) last sample of ``text``: everything from its header line on."""
    lines = text.split("\n")[:-1]  # the last line is the cut one
    if not "".join(lines).strip():
        return ""
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i]
        if ln and ln[0] != "#" and _is_header(ln):
            return "\n".join(lines[:i])
    return text  # no sample header at all: let the line parser report what it is


def _choose_event(ps: _Parser, event: str | None) -> tuple[dict[str, int], str, np.ndarray]:
    """Sample counts per event, the event read (the most sampled, or ``event``) and the
    mask of its samples: one run shows one event, never a sum of unlike counts."""
    ev_names = list(ps.events)
    s_event = np.frombuffer(ps.s_event, dtype=np.int32)
    counts = np.bincount(s_event, minlength=len(ev_names))
    events = {ev_names[i]: int(counts[i]) for i in np.argsort(-counts, kind="stable")}
    if event is None:
        chosen = int(np.argmax(counts))
    else:
        matches = [i for i, n in enumerate(ev_names) if n == event or n.split(":")[0] == event]
        if not matches:
            raise ParseError(ps.path, f"samples of event {event!r}",
                             found="events " + ", ".join(events))
        chosen = matches[0]
    return events, ev_names[chosen], s_event == chosen


def _split_groups(ps: _Parser, mask: np.ndarray, comm: np.ndarray,
                  n: int) -> tuple[np.ndarray, int]:
    """Group id of each chosen sample (its comm or pid with ``split_by``, else 0) and
    the number of groups, so each group gets its own root."""
    if ps.split_by == "comm":
        group = comm.astype(np.int64)
        ngroup = len(ps.comms)
    elif ps.split_by == "pid":
        group = np.frombuffer(ps.s_pid, dtype=np.int32)[mask].astype(np.int64)
        ngroup = len(ps.pids)
    else:
        group = np.zeros(n, dtype=np.int64)
        ngroup = 1
    return group, ngroup


def _sample_metrics(ev_name: str, has_period: bool) -> tuple[list[Metric], dict[str, str]]:
    """Samples and percent metrics, plus period metrics when every sample has a period
    (nanoseconds for time events, counts otherwise)."""
    s_samples, t_samples = self_and_total("samples", Unit.SAMPLES, "samples", sampled=True)
    s_pct, t_pct = self_and_total("pct", Unit.PERCENT, "%", sampled=True,
                                  percent_of="samples")
    metrics: list[Metric] = [s_samples, t_samples, s_pct, t_pct]
    inclusive = {"total_samples": "self_samples"}
    if has_period:
        unit = Unit.NANOSECONDS if ev_name.split(":")[0] in _TIME_EVENTS else Unit.COUNT
        s_per, t_per = self_and_total("period", unit, f"period ({ev_name.split(':')[0]})",
                                      sampled=True)
        metrics += [s_per, t_per]
        inclusive["total_period"] = "self_period"
    return metrics, inclusive


def _run_meta(ps: _Parser, comm: np.ndarray, ev_name: str, events: dict[str, int],
              has_period: bool, extra_meta: dict[str, Any]) -> dict[str, Any]:
    """Run metadata: the parser's header facts, the event choice, top commands, span."""
    comm_names = list(ps.comms)
    comm_counts = np.bincount(comm, minlength=len(ps.comms))
    top = np.argsort(-comm_counts, kind="stable")[:50]
    comms = {comm_names[i]: int(comm_counts[i]) for i in top if comm_counts[i]}
    meta: dict[str, Any] = dict(ps.meta)
    meta.update(extra_meta)
    meta.update(
        event=ev_name,
        events=events,
        comms=comms,
        weighting="period" if has_period else "samples",
        group_by="symbol+dso" if ps.by_dso else "symbol",
        split_by=ps.split_by,
        percent_basis=("percentages are shares of the event's "
                       f"{'period' if has_period else 'samples'} over the whole recording, "
                       "as perf report --no-children shows them"),
    )
    meta.setdefault("program", next(iter(comms), ""))
    if ps.t_first is not None and ps.t_last is not None:
        meta["duration_s"] = round(float(ps.t_last) - float(ps.t_first), 6)
    return meta


def _no_samples(ps: _Parser) -> ParseError:
    """The error for text without a sample; it names perf's zero-filled cut sample when
    that was all there was, so a text from a cut perf.data says why it is empty."""
    found = "no samples"
    if ps.cut_samples:
        found += (" (only the zero-filled sample, time 0 and period 0, that perf prints "
                  "for a cut or damaged perf.data)")
    return ParseError(ps.path, "at least one perf sample ('comm pid time: period event:' "
                      "followed by its callchain)", found=found)


def _build(ps: _Parser, *, event: str | None, format: str, extra_meta: dict[str, Any],
           incomplete_reason: str) -> Profile:
    """Assemble the profile of one event: distinct (stack, group) keys -> tree, then
    inclusive and percent columns, Rust-hash-free identities, totals and metadata."""
    if ps.n_samples == 0:
        raise _no_samples(ps)
    events, ev_name, mask = _choose_event(ps, event)
    sid = np.frombuffer(ps.s_stack, dtype=np.int32)[mask].astype(np.int64)
    period = np.frombuffer(ps.s_period, dtype=np.int64)[mask]
    has_period = bool(period.size) and bool((period >= 0).all())
    comm = np.frombuffer(ps.s_comm, dtype=np.int32)[mask]
    group, ngroup = _split_groups(ps, mask, comm, len(sid))
    key = sid * ngroup + group
    ukey, first, inv = np.unique(key, return_index=True, return_inverse=True)
    # the keys in the order of their first sample, so the tree's node order (first path
    # first) does not depend on how stacks were numbered: the text numbers every long
    # stack anew and reuses short or repeated ones, perf's tables number each once
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ukey, inv = ukey[order], rank[inv]
    n_samples = np.bincount(inv, minlength=len(ukey))
    sum_period = np.bincount(inv, weights=period, minlength=len(ukey)) if has_period else None

    base, bounds = _tree(ps, ukey, ngroup, n_samples, sum_period)
    total_samples = int(mask.sum())
    total_period = int(period.sum()) if has_period else None
    metrics, inclusive = _sample_metrics(ev_name, has_period)
    cols = dict(base.values)
    for inc, self_name in inclusive.items():
        cols[inc] = inclusive_by_levels(base.parent, cols[self_name], bounds)
    cols["self_pct"] = percent_of(cols["self_samples"].astype(np.float64), total_samples)
    cols["total_pct"] = percent_of(cols["total_samples"].astype(np.float64), total_samples)

    frames = base.frames
    match = np.array([_RUST_HASH_RE.sub("", n) for n in frames.name.tolist()], dtype=object)
    if len(match) and (match != frames.name).any():
        frames = FrameTable(frames.name, frames.module, frames.src, frames.line, frames.kind,
                            match)
    meta = _run_meta(ps, comm, ev_name, events, has_period, extra_meta)
    totals: dict[str, float] = {"total_samples": total_samples}
    total_metrics: dict[str, Metric] = {
        "total_samples": Metric("total_samples", Unit.SAMPLES, Kind.NODE,
                                f"samples of {ev_name}", sampled=True),
    }
    if total_period is not None:
        totals["total_period"] = total_period
        total_metrics["total_period"] = Metric("total_period", metrics[-1].unit, Kind.NODE,
                                               f"period sum of {ev_name}", sampled=True)
    return Profile(
        path=ps.path,
        format=format,
        frames=frames,
        parent=base.parent,
        frame=base.frame,
        metrics=tuple(metrics),
        values={m.name: cols[m.name] for m in metrics},
        meta=meta,
        totals=totals,
        total_metrics=total_metrics,
        incomplete=bool(incomplete_reason),
        incomplete_reason=incomplete_reason,
        warnings=tuple(ps.warnings),
        default_metric="self_period" if has_period else "self_samples",
    )


def _tree(ps: _Parser, ukey: np.ndarray, ngroup: int, n_samples: np.ndarray,
          sum_period: np.ndarray | None) -> tuple[Profile, np.ndarray]:
    """The call tree of the distinct (stack, group) keys, merged with whole-array steps.

    Returns a bare Profile (frames, parent, frame and the self columns) that
    :func:`_build` completes, and the level bounds of its nodes.  A group (``split_by``) is a top-level frame above the
    stack; a sample without a callchain gets the ``[no callchain]`` frame.
    """
    fi = FrameInterner()
    fmap = np.array([fi(n, m, "", 0, k) for (n, m, k) in ps.frame_rows] or [0], dtype=np.int32)
    off = np.frombuffer(ps.stack_off, dtype=np.int64)
    flat = np.frombuffer(ps.stack_frames, dtype=np.int32) if len(ps.stack_frames) \
        else np.zeros(0, dtype=np.int32)
    if not np.array_equal(fmap[: len(ps.frame_rows)], np.arange(len(ps.frame_rows))):
        flat = fmap[flat]  # (parser rows are distinct, so this is the identity: no copy)
    sid, grp = np.divmod(ukey, ngroup)
    starts, lengths = off[sid], off[sid + 1] - off[sid]
    pieces = [flat]
    empty = lengths == 0
    if empty.any():
        pieces.append(np.array([fi(NO_STACK, "", "", 0, "synthetic")], dtype=np.int32))
        starts = np.where(empty, len(flat), starts)
        lengths = np.where(empty, 1, lengths)
    if ps.split_by is not None:
        if ps.split_by == "comm":
            labels = [(c, "comm") for c in ps.comms]
        else:
            labels = [(f"{c} [{pid}]", "pid") for c, pid in ps.pids]
        _, first = np.unique(grp, return_index=True)
        gf = np.zeros(max(len(labels), 1), dtype=np.int32)
        for g in grp[np.sort(first)].tolist():  # interned in order of first use
            gf[g] = fi(labels[g][0], "", "", 0, labels[g][1])
        whole = np.concatenate(pieces)
        # each path is copied behind its group frame: element o of row k is whole[start+o-1]
        pos = np.cumsum(lengths + 1) - (lengths + 1)
        src = np.repeat(starts - pos - 1, lengths + 1) + np.arange(int((lengths + 1).sum()))
        prefixed = whole[np.clip(src, 0, max(len(whole) - 1, 0))]
        prefixed[pos] = gf[grp]
        pieces = [prefixed]
        starts, lengths = pos, lengths + 1
    whole = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    parent, frame, leaf, bounds = tree_from_paths(whole, starts, lengths,
                                                  len(fi))
    cols = {"self_samples": np.bincount(leaf, weights=n_samples, minlength=len(parent))
            .astype(np.int64)}
    metrics = [Metric("self_samples", Unit.SAMPLES, Kind.SELF)]
    if sum_period is not None:
        cols["self_period"] = np.bincount(leaf, weights=sum_period, minlength=len(parent)) \
            .astype(np.int64)
        metrics.append(Metric("self_period", Unit.COUNT, Kind.SELF))
    prof = profile_from_arrays(path=ps.path, format=FORMAT, frames=fi.table(), parent=parent,
                               frame=frame, metrics=metrics, columns=cols)
    return prof, bounds
