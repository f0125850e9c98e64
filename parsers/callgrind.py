"""valgrind callgrind / cachegrind reader (``callgrind.out.<pid>``, ``cachegrind.out.<pid>``).

The format (valgrind's "Callgrind Format, Version 1"; cachegrind writes a subset):

* header ``key: value`` lines: ``version``, ``creator``, ``pid``, ``cmd``, ``part``,
  ``thread``, ``desc``, ``positions`` (``line``, ``instr``, ``instr line``), ``events``
  (the cost columns: ``Ir``, or ``Ir Dr Dw I1mr ... Bc Bcm Bi Bim``), ``event`` (long
  names), ``summary`` and, at the end of a part, ``totals``;
* spec lines ``ob=`` (object), ``fl=`` / ``fi=`` / ``fe=`` (source file; ``fi``/``fe`` for
  inlined code), ``fn=`` (function), and for calls ``cob=`` / ``cfi=`` / ``cfl=`` /
  ``cfn=`` then ``calls=<count> <target>`` followed by one cost line holding the
  *inclusive* cost of those calls; ``jump=`` / ``jcnd=`` are ignored (as
  callgrind_annotate does);
* name compression: ``fn=(12) name`` defines id 12, ``fn=(12)`` refers to it (one id
  space each for objects, files and functions);
* cost lines: subpositions (absolute, ``+N``, ``-N``, ``*``; decimal or ``0x`` hex) then
  one number per event, missing trailing ones being 0;
* several parts (``--combine-dumps=yes``, ``--separate-threads=yes``): every part has
  its own header; parts are summed into one run and listed in ``meta["parts"]``.

Model: callgrind records caller -> callee *edges*, not call stacks, so the profile is
**flat** (one root node per function, see :func:`parsers.builder.flat_profile`) and the
edges are kept in ``extras["call_graph"]`` (a :class:`parsers.call_graph.CallGraph`),
which the callers/callees views read.  No call tree is invented.  A function is
identified like callgrind_annotate does: (object, file, name), the file being the one
current at its ``fn=`` line.

Metrics, per event ``E`` (names sanitised to ``[A-Za-z0-9_]``): ``self_E`` (SELF) and
``total_E`` (INCLUSIVE: see :func:`parsers.call_graph.inclusive_costs`), plus ``calls``
(NODE: calls into the function); a cachegrind file (no call edges) has ``self_E`` only.  All are exact counts from valgrind's simulation
(``sampled=False``, ``meta["precision"] = "exact"``).  ``totals[self_E]`` is the
program total as callgrind_annotate shows it, summed over parts: each part's
``summary:`` (which may exceed the cost lines by a few instructions valgrind did not
attribute), else its ``totals:``, else the sum of its cost lines.  Recursion levels that
callgrind separates (``fib'2``) stay separate functions, as in KCachegrind.

Speed: spec lines are classified and resolved with whole-array numpy passes
(:mod:`parsers.callgrind_specs`; only name definitions and headers go through Python),
cost lines are parsed by pandas' C tokenizer as exact integers and summed with one
``bincount`` per event (:mod:`parsers.callgrind_costs`), and the C heap keeps freed
memory during a big read (:mod:`parsers.callgrind_heap`).  Unusual input falls back to
the sequential spec pass or the numpy cost tokenizer (same numbers, slower).

A file cut short (no final newline, a ``calls=`` without its cost line, or valgrind's
``totals:`` line missing) loads with ``incomplete=True``; malformed lines raise a
:class:`ParseError` with the line number (``lenient``: skipped with a warning).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import callgrind_specs
from .builder import (  # factorize: numpy below 200k keys, so small files skip pandas
    factorize,
    flat_profile,
)
from .call_graph import CallGraph, inclusive_costs
from .callgrind_costs import cost_matrix, tokenize_costs
from .callgrind_heap import roomy_heap
from .detect import read_bytes
from .errors import ParseError
from .model import FrameTable, Kind, Metric, Profile, Unit

FORMAT = "callgrind"
DESCRIPTION = "valgrind callgrind / cachegrind output (callgrind.out.*, cachegrind.out.*)"

_COST_FIRST = np.zeros(256, dtype=bool)  # first byte of a cost line: digit, + - *
_COST_FIRST[np.frombuffer(b"0123456789+-*", dtype=np.uint8)] = True
_PART_KEYS = {"version", "creator", "pid", "cmd", "part", "thread", "positions", "events",
              "desc", "event"}
_SPACE = {b"ob": "ob", b"cob": "ob", b"fl": "fl", b"fi": "fl", b"fe": "fl", b"cfi": "fl",
          b"cfl": "fl", b"jfi": "fl", b"fn": "fn", b"cfn": "fn", b"jfn": "fn"}
_SNIFF_LINE = re.compile(
    rb"^(?:#.*|\s*|[a-z]+:.*|(?:c?ob|fl|fi|fe|c?fn|cf[il]|jf[in])=.*|(?:calls|jump|jcnd)=.*"
    rb"|(?:[+-]?\d+|0x[0-9a-fA-F]+|\*)(?:[ \t]+\S+)*)\r?$")
_NAME_RE = re.compile(r"(?:callgrind|cachegrind)\.out")
_EXPECTED_BODY = ("a callgrind line: a cost line (subpositions, then costs), a spec line "
                  "(ob= fl= fi= fe= fn= cob= cfi= cfn= calls= jump= jcnd=) or a header "
                  "'key: value'")


def sniff(head: bytes, path: Path) -> float:
    """``# callgrind format`` decides; otherwise an ``events:`` header, ``fn=``/``fl=``
    lines and every other line of the head being callgrind-shaped."""
    if head.startswith(b"# callgrind format"):
        return 1.0
    lines = head.split(b"\n")
    if len(head) >= 4096:
        lines = lines[:-1]
    lines = lines[:400]
    if not any(ln.startswith(b"events:") for ln in lines):
        return 0.0
    if not any(ln[:3] in (b"fn=", b"fl=", b"ob=") for ln in lines):
        return 0.0
    good = sum(1 for ln in lines if _SNIFF_LINE.match(ln))
    if good < 0.98 * len(lines):
        return 0.0
    return 0.95 if _NAME_RE.search(Path(path).name) else 0.9


def _metric_base(event: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", event).strip("_") or "event"


@dataclass(frozen=True)
class Tables:
    """Functions (object, file, name ids) and call edges (caller, callee, calls), by id."""

    func_ob: np.ndarray
    func_fl: np.ndarray
    func_fn: np.ndarray
    caller: np.ndarray
    callee: np.ndarray
    calls: np.ndarray


class _Part:
    """One part's header: its events (as global event ids), positions and totals."""

    def __init__(self, index: int, line: int) -> None:
        self.index = index
        self.line = line
        self.info: dict[str, str] = {}
        self.events: list[str] | None = None
        self.n_positions = 1
        self.summary: list[int] | None = None
        self.totals: list[int] | None = None


class _Reader:
    """State machine over the spec/header lines; cost lines are left to numpy."""

    def __init__(self, path: Path, data: bytes, lenient: bool) -> None:
        self.path = path
        self.data = data
        self.lenient = lenient
        self.warnings: list[str] = []
        self.names: dict[str, list[str]] = {"ob": [], "fl": [], "fn": []}
        self._name_ids: dict[str, dict[str, int]] = {"ob": {}, "fl": {}, "fn": {}}
        self._refs: dict[str, dict[bytes, int]] = {"ob": {}, "fl": {}, "fn": {}}
        self.funcs: dict[tuple[int, int, int], int] = {}
        self.edges: dict[tuple[int, int], int] = {}
        self.edge_calls: list[int] = []
        self.arrays: Tables | None = None  # set by the vectorised pass instead of the dicts
        self.parts: list[_Part] = []
        self.events: list[str] = []
        self.header: dict[str, Any] = {"desc": {}, "event_names": {}}
        self.incomplete = ""

    # ----- names --------------------------------------------------------------------
    def _intern(self, space: str, name: str) -> int:
        ids = self._name_ids[space]
        nid = ids.get(name)
        if nid is None:
            nid = ids[name] = len(self.names[space])
            self.names[space].append(name)
        return nid

    def intern_all(self, space: str, names: list[str]) -> list[int]:
        """Name ids of many names at once (new names get the next ids)."""
        ids, known = self._name_ids[space], self.names[space]
        out = []
        for name in names:
            nid = ids.get(name)
            if nid is None:
                nid = ids[name] = len(known)
                known.append(name)
            out.append(nid)
        return out

    def resolve(self, space: str, val: bytes, line: int) -> int:
        """Name id of a position value: ``(id) name`` defines, ``(id)`` refers, else plain."""
        refs = self._refs[space]
        nid = refs.get(val)
        if nid is not None:
            return nid
        close = val.find(b")")
        if val[:1] == b"(" and close > 1 and val[1:close].isdigit():
            ident, rest = val[: close + 1], val[close + 1 :].strip()
            if rest:
                nid = refs[ident] = self._intern(space, rest.decode("utf-8", "replace"))
                return nid
            nid = refs.get(ident)
            if nid is None:
                raise ParseError(self.path, f"a {space} id defined earlier as '{space}="
                                 f"{ident.decode()} <name>'", line=line, found=val.decode(
                                     "utf-8", "replace"))
            return nid
        nid = refs[val] = self._intern(space, val.strip().decode("utf-8", "replace"))
        return nid

    def function(self, ob: int, fl: int, fn: int) -> int:
        key = (ob, fl, fn)
        fid = self.funcs.get(key)
        if fid is None:
            fid = self.funcs[key] = len(self.funcs)
        return fid

    def tables(self) -> Tables:
        if self.arrays is None:
            f = np.array(sorted(self.funcs, key=self.funcs.__getitem__),
                         dtype=np.int64).reshape(-1, 3)
            e = np.array(sorted(self.edges, key=self.edges.__getitem__),
                         dtype=np.int64).reshape(-1, 2)
            self.arrays = Tables(f[:, 0], f[:, 1], f[:, 2], e[:, 0], e[:, 1],
                                 np.asarray(self.edge_calls, dtype=np.int64))
        return self.arrays

    # ----- header lines ---------------------------------------------------------------
    def header_line(self, key: str, value: str, line: int, in_body: bool) -> None:
        if key in _PART_KEYS and (not self.parts or in_body):
            self.parts.append(_Part(len(self.parts), line))
        part = self.parts[-1] if self.parts else None
        if part is None:  # totals:/summary: before any header: start a part anyway
            part = _Part(0, line)
            self.parts.append(part)
        if key == "events":
            part.events = value.split()
            for ev in part.events:
                if ev not in self.events:
                    self.events.append(ev)
        elif key == "positions":
            part.n_positions = max(1, len(value.split()))
        elif key in ("summary", "totals"):
            nums = value.split()
            if not all(t.isdigit() for t in nums):
                raise ParseError(self.path, f"'{key}:' followed by decimal costs", line=line,
                                 found=value)
            setattr(part, key, [int(t) for t in nums])
        elif key == "desc":
            k, _, v = value.partition(":")
            self.header["desc"][k.strip()] = v.strip()
        elif key == "event":
            k, _, v = value.partition(":")
            self.header["event_names"][k.split("=")[0].strip()] = v.strip()
        else:
            part.info[key] = value
            self.header.setdefault(key, value)

    def bad_line(self, line: int, text: bytes, expected: str = _EXPECTED_BODY) -> None:
        found = text.decode("utf-8", "replace")
        if not self.lenient:
            raise ParseError(self.path, expected, line=line, found=found)
        self.warnings.append(f"{self.path}:{line}: skipped line {found[:60]!r}")

    # ----- the spec/header pass ----------------------------------------------------------
    def scan(self, starts: np.ndarray, ends: np.ndarray, others: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Walk the non-cost lines; per line, the context its following cost lines get:
        (function id or -1, pending call edge or -1, part index)."""
        data = self.data
        n = len(others)
        ctx_fn = np.empty(n, dtype=np.int64)
        ctx_call = np.empty(n, dtype=np.int64)
        ctx_part = np.empty(n, dtype=np.int64)
        ob, cur_file = self._intern("ob", ""), self._intern("fl", "")
        fn = pending = -1
        cob = cfi = cfn = None
        calls_line = 0
        in_body = False
        prev = -1
        s_list, e_list = starts[others].tolist(), ends[others].tolist()
        for k, i in enumerate(others.tolist()):
            if i - prev > 1:  # cost lines ran since the previous spec line
                in_body = True
                pending = -1
            prev = i
            raw = data[s_list[k] : e_list[k]].rstrip(b"\r")
            eq = raw.find(b"=")
            key = raw[:eq] if eq > 0 else b""
            space = _SPACE.get(key)
            if pending >= 0 and raw.strip() and raw[:1] != b"#":
                raise ParseError(self.path, "a cost line after 'calls=' (the inclusive cost "
                                 "of the call)", line=i + 1, found=raw.decode("utf-8", "replace"))
            if space is not None:
                in_body = True
                nid = self.resolve(space, raw[eq + 1 :], i + 1)
                if key == b"fn":
                    fn = self.function(ob, cur_file, nid)
                elif key in (b"fl", b"fi", b"fe"):  # file switches: costs go to this file
                    cur_file = nid
                elif key == b"ob":
                    ob = nid
                elif key == b"cob":
                    cob = nid
                elif key in (b"cfi", b"cfl"):
                    cfi = nid
                elif key == b"cfn":
                    cfn = nid
            elif key == b"calls":
                in_body = True
                pending = self.call(raw[eq + 1 :], i + 1, fn, ob if cob is None else cob,
                                    cur_file if cfi is None else cfi, cfn)
                cob = cfi = None
                calls_line = i + 1
            elif key in (b"jump", b"jcnd"):
                in_body = True
            elif not raw.strip() or raw[:1] == b"#":
                pass
            else:
                colon = raw.find(b":")
                hkey = raw[:colon].decode("ascii", "replace") if colon > 0 else ""
                if hkey.isidentifier() and hkey.islower():
                    self.header_line(hkey, raw[colon + 1 :].decode("utf-8", "replace").strip(),
                                     i + 1, in_body)
                    in_body = in_body and hkey in ("summary", "totals")
                else:
                    self.bad_line(i + 1, raw)
            ctx_fn[k] = fn
            ctx_call[k] = pending
            ctx_part[k] = len(self.parts) - 1
        if pending >= 0 and prev == others[-1] and prev == len(starts) - 1:
            self.incomplete = (f"the file ends after 'calls=' at line {calls_line} without "
                               "the call's cost line: it was cut")
        return ctx_fn, ctx_call, ctx_part

    def call(self, rest: bytes, line: int, fn: int, ob: int, fl: int, cfn: int | None) -> int:
        """Register a ``calls=`` line; returns its edge id."""
        count = rest.split(None, 1)[0] if rest.strip() else b""
        if not count.isdigit():
            raise ParseError(self.path, "'calls=<count> <target position>'", line=line,
                             found=("calls=" + rest.decode("utf-8", "replace")))
        if fn < 0 or cfn is None:
            raise ParseError(self.path, "'fn=' and 'cfn=' lines before 'calls='", line=line,
                             found="calls=" + rest.decode("utf-8", "replace"))
        callee = self.function(ob, fl, cfn)
        key = (fn, callee)
        eid = self.edges.get(key)
        if eid is None:
            eid = self.edges[key] = len(self.edges)
            self.edge_calls.append(0)
        self.edge_calls[eid] += int(count)
        return eid

    # ----- the cost pass -------------------------------------------------------------
    def cost_context(self, starts: np.ndarray, ends: np.ndarray, cost_lines: np.ndarray,
                     others: np.ndarray, ctx: tuple[np.ndarray, np.ndarray, np.ndarray]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per cost line: (code = function id, or number of functions + call edge id;
        part; whether it is a call's inclusive cost).  Cost lines before any header or
        ``fn=`` are located errors."""
        ctx_fn, ctx_call, ctx_part = ctx
        n_fn = len(self.tables().func_fn)
        # the spec line before each cost line: others and cost_lines partition the lines
        p = cost_lines - np.arange(len(cost_lines)) - 1
        # parts only grow along the file: the first cost line has the smallest
        if len(p) and (p[0] < 0 or ctx_part[p[0]] < 0):
            self._missing_header(int(cost_lines[0]) + 1)
        one = len(self.parts) == 1
        part = np.zeros(len(p), dtype=np.int64) if one else ctx_part[p]
        evmap, npos = self._event_map()
        if len(part) and (evmap[0, 0] < 0 if one else np.any(evmap[part, 0] < 0)):
            bad = int(cost_lines[np.flatnonzero(evmap[part, 0] < 0)[0]]) + 1
            self._missing_header(bad)
        fn = ctx_fn[p]
        if np.any(fn < 0):
            line = int(cost_lines[np.flatnonzero(fn < 0)[0]]) + 1
            raise ParseError(self.path, "an 'fn=' line before the first cost line", line=line,
                             found=self._text(starts, ends, line - 1))
        call = ctx_call[p]
        is_call = (call >= 0) & (others[p] == cost_lines - 1)
        return np.where(is_call, n_fn + call, fn), part, is_call

    def costs(self, starts: np.ndarray, ends: np.ndarray, cost_lines: np.ndarray,
              is_cost: np.ndarray, line_ctx: tuple[np.ndarray, np.ndarray, np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(self costs [function, event], edge costs [edge, event], per-part self sums)."""
        code, part, is_call = line_ctx
        t = self.tables()
        n_fn, n_edge, n_ev = len(t.func_fn), len(t.caller), len(self.events)
        evmap, npos = self._event_map()
        sums = self._matrix_sums(starts, ends, is_cost, code, part, is_call, evmap, npos,
                                 n_fn, n_fn + n_edge)
        if sums is not None:
            table, per_part = sums
            return table[:n_fn], table[n_fn:], per_part
        tpart, col, value, line = self._cost_tokens(starts, ends, cost_lines, part, npos)
        width = evmap.shape[1]
        over = col >= width
        if not over.any():
            gev = evmap[tpart, col]
            over = gev < 0
        if over.any():
            j = int(line[np.flatnonzero(over)[0]])
            pe = self.parts[int(part[j])].events or []
            raise ParseError(self.path, f"at most {len(pe)} cost(s) after the subpositions "
                             f"(events: {' '.join(pe)})", line=int(cost_lines[j]) + 1,
                             found=self._text(starts, ends, int(cost_lines[j])))
        table = _sum_by(code[line] * n_ev + gev, value, (n_fn + n_edge) * n_ev)
        table = table.reshape(n_fn + n_edge, n_ev)
        selfish = ~is_call[line]
        per_part = _sum_by(tpart[selfish] * n_ev + gev[selfish], value[selfish],
                           len(self.parts) * n_ev).reshape(len(self.parts), n_ev)
        return table[:n_fn], table[n_fn:], per_part

    def _matrix_sums(self, starts, ends, is_cost, code, part, is_call, evmap, npos, n_fn,
                     n_code) -> tuple[np.ndarray, np.ndarray] | None:
        """(costs [code, event], per-part self sums) from pandas' C tokenizer, one
        ``bincount`` per event column.  ``None`` when the parts differ in subpositions, a
        line does not fit the matrix, a cost lies past its part's events, or a column sum
        could lose exactness in float64: the token path handles (or locates) those."""
        if len(set(npos.tolist())) != 1:
            return None
        m = cost_matrix(np.frombuffer(self.data, dtype=np.uint8), starts, ends, is_cost,
                        int(npos[0]), evmap.shape[1])
        if m is None:
            return None
        n_ev, n_parts = len(self.events), len(self.parts)
        table = np.zeros((n_code, n_ev), dtype=np.float64)
        per_part = np.zeros((n_parts, n_ev), dtype=np.float64)
        one_part = bool((evmap == evmap[:1]).all())  # every part has the same events
        for j in range(m.shape[1]):
            col = m[:, j]
            # bincount adds in float64: exact while every partial sum stays below 2**53
            if len(col) and (int(col.max()) >= 2**53 or col.sum(dtype=np.float64) >= 2.0**52):
                return None
            if one_part:
                g = int(evmap[0, j])
                if g < 0:  # a column past every part's events: must be all zero
                    if col.any():
                        return None
                    continue
                table[:, g] += np.bincount(code, weights=col, minlength=n_code)
                if n_parts == 1:  # the self costs are the function rows of the table
                    per_part[0, g] = table[:n_fn, g].sum()
                else:
                    per_part[:, g] += np.bincount(part, weights=np.where(is_call, 0.0, col),
                                                  minlength=n_parts)
                continue
            gev = evmap[part, j]
            if col[gev < 0].any():
                return None
            ok = gev >= 0
            table.ravel()[:] += np.bincount(code[ok] * n_ev + gev[ok], weights=col[ok],
                                            minlength=n_code * n_ev)
            selfish = ok & ~is_call
            per_part.ravel()[:] += np.bincount(part[selfish] * n_ev + gev[selfish],
                                               weights=col[selfish], minlength=n_parts * n_ev)
        return np.rint(table).astype(np.int64), np.rint(per_part).astype(np.int64)

    def _cost_tokens(self, starts, ends, cost_lines, part, npos):
        """(part, event column, value, cost line) of every non-zero cost, by the numpy
        tokenizer, which also locates bad numbers."""
        buf = np.frombuffer(self.data, dtype=np.uint8)
        tok = tokenize_costs(buf, starts[cost_lines], ends[cost_lines], npos[part])
        value = self._fix_bad_tokens(tok, starts, ends, cost_lines, npos[part])
        keep = value != 0
        return part[tok.line[keep]], tok.column[keep], value[keep], tok.line[keep]

    def _event_map(self) -> tuple[np.ndarray, np.ndarray]:
        """[part, column] -> global event id (-1 past the part's events); subpositions per part."""
        width = max([len(pt.events or ()) for pt in self.parts] + [1])
        evmap = np.full((max(len(self.parts), 1), width), -1, dtype=np.int64)
        for pt in self.parts:
            for j, ev in enumerate(pt.events or ()):
                evmap[pt.index, j] = self.events.index(ev)
        npos = np.array([pt.n_positions for pt in self.parts] or [1], dtype=np.int64)
        return evmap, npos

    def _fix_bad_tokens(self, tok, starts, ends, cost_lines, npos_line) -> np.ndarray:
        """Hex costs (allowed by the grammar, never written by valgrind) via Python;
        anything else is a located error."""
        value = tok.value
        for idx in np.concatenate([tok.bad, tok.too_long]).tolist():
            li = int(tok.line[idx])
            j = int(cost_lines[li])
            fields = self._text(starts, ends, j).split()
            col = int(npos_line[li]) + int(tok.column[idx])
            text = fields[col] if col < len(fields) else ""
            try:
                v = int(text, 16) if text.lower().startswith("0x") else int(text)
            except ValueError:
                v = -1
            if not 0 <= v < 2**63:
                raise ParseError(self.path, "decimal event costs after the subpositions",
                                 line=j + 1, found=self._text(starts, ends, j))
            value[idx] = v
        return value

    def _missing_header(self, line: int) -> None:
        raise ParseError(self.path, "an 'events:' header line before the first cost line",
                         line=line)

    def _text(self, starts: np.ndarray, ends: np.ndarray, j: int) -> str:
        return self.data[int(starts[j]) : int(ends[j])].decode("utf-8", "replace")


def _sum_by(keys: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact int64 sums per key: ``bincount`` (float64) while sums stay below 2**53."""
    if len(values) == 0:
        return np.zeros(n, dtype=np.int64)
    if int(values.max()) * len(values) < 2**53:
        return np.rint(np.bincount(keys, weights=values, minlength=n)).astype(np.int64)
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, keys, values)
    return out


def _split_lines(data: bytes) -> tuple[np.ndarray, np.ndarray, bool]:
    """(start, end) offsets of every line and whether the last one lacks its newline."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    cut = bool(data) and not data.endswith(b"\n")
    ends = np.append(nl, len(data)) if cut else nl
    starts = np.empty_like(ends)
    if len(ends):
        starts[0] = 0
        np.add(ends[:-1], 1, out=starts[1:])
    return starts, ends, cut


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    sequential: bool = False,
    **_options: Any,
) -> Profile:
    """Read a callgrind or cachegrind file (optionally gzipped) into a flat Profile.

    ``sequential=True`` forces the line-by-line spec pass (the vectorised one,
    :mod:`parsers.callgrind_specs`, must give the same profile; tests compare them)."""
    p = Path(path)
    data = read_bytes(p)
    if not data.strip():
        raise ParseError(p, "a callgrind file", found="an empty file")
    with roomy_heap(len(data)):
        return _read(p, data, lenient, progress, sequential)


def _read(p: Path, data: bytes, lenient: bool, progress: Callable[[float], None] | None,
          sequential: bool) -> Profile:
    starts, ends, cut = _split_lines(data)
    buf = np.frombuffer(data, dtype=np.uint8)
    is_cost = _COST_FIRST[buf.take(starts, mode="clip")]  # an empty line reads its "\n"
    cost_lines, others = np.flatnonzero(is_cost), np.flatnonzero(~is_cost)
    r = _Reader(p, data, lenient)
    ctx = None if sequential else callgrind_specs.scan(r, starts, ends, others)
    if ctx is None:  # unusual input (or an error to locate): the sequential reader
        r = _Reader(p, data, lenient)
        ctx = r.scan(starts, ends, others)
    if progress:
        progress(0.5)
    if not r.events:
        raise ParseError(p, "an 'events:' header line (callgrind/cachegrind)",
                         found="no events: line")
    line_ctx = r.cost_context(starts, ends, cost_lines, others, ctx)
    del ctx, others  # per-spec-line arrays: not needed any more (memory)
    self_cost, edge_cost, per_part = r.costs(starts, ends, cost_lines, is_cost, line_ctx)
    if cut:
        r.incomplete = r.incomplete or (
            f"the file does not end with a newline: its last line ({len(starts)}) was cut "
            "and its numbers may be short")
    if progress:
        progress(0.9)
    return _assemble(r, p, self_cost, edge_cost, per_part)


def _frames(r: _Reader) -> Any:
    """Frame table: name = function, module = object file name, src = source file;
    (module, name) pairs that occur in several files are told apart by ``match``."""
    t = r.tables()
    obs = np.array([os.path.basename(o) for o in r.names["ob"]], dtype=object)
    fls = np.array(r.names["fl"], dtype=object)
    fns = np.array(r.names["fn"], dtype=object)
    names, modules, srcs = fns[t.func_fn], obs[t.func_ob], fls[t.func_fl]
    base_id = factorize(obs)[0]  # objects with the same file name share a module
    pair = base_id[t.func_ob] * (len(fns) + 1) + t.func_fn
    _, inverse, counts = np.unique(pair, return_inverse=True, return_counts=True)
    match = names.copy()
    for i in np.flatnonzero(counts[inverse] > 1).tolist():
        match[i] = f"{names[i]}\x1e{os.path.basename(srcs[i])}"
    n = len(names)
    return FrameTable(names, modules, srcs, np.zeros(n, dtype=np.int32),
                      np.full(n, "function", dtype=object), match)


def _object_paths(r: _Reader) -> np.ndarray:
    """Full object path per function (``module`` holds only the file name)."""
    return np.array(r.names["ob"], dtype=object)[r.tables().func_ob]


def _padded(costs: list[int], n: int) -> list[int]:
    """A cost list with the missing trailing events as 0 (the format's rule)."""
    return [*costs, *([0] * (n - len(costs)))][:n]


def _part_totals(r: _Reader, per_part: np.ndarray) -> tuple[np.ndarray, list[dict]]:
    """Program totals per event (sum over parts of totals:, else summary:, else the cost
    lines) and the per-part facts for ``meta["parts"]``; warns when they disagree."""
    total = np.zeros(len(r.events), dtype=np.int64)
    parts = []
    for pt in r.parts:
        evs = pt.events or []
        ids = [r.events.index(e) for e in evs]
        stated = pt.summary or pt.totals  # callgrind_annotate's order: summary may be larger
        lines = [int(per_part[pt.index, g]) for g in ids]
        use = _padded(stated, len(evs)) if stated is not None else lines
        for g, v in zip(ids, use, strict=True):
            total[g] += v
        if pt.totals is not None and _padded(pt.totals, len(evs)) != lines:
            r.warnings.append(f"part {pt.index + 1}: 'totals:' says {pt.totals}, the cost "
                              f"lines add up to {lines}")
        parts.append({"part": pt.info.get("part", str(pt.index + 1)),
                      "thread": pt.info.get("thread"), "pid": pt.info.get("pid"),
                      "events": evs, "summary": pt.summary, "totals": pt.totals,
                      "cost_lines_sum": lines})
    return total, parts


def _metrics(r: _Reader, graph: CallGraph, self_cost: np.ndarray, with_calls: bool
             ) -> tuple[list[Metric], dict[str, np.ndarray]]:
    """``self_E`` per event, with ``total_E`` and ``calls`` when the file has call edges
    (a cachegrind file has none: its inclusive costs are unknown, not equal to self)."""
    metrics: list[Metric] = []
    cols: dict[str, np.ndarray] = {}
    for g, ev in enumerate(r.events):
        b = _metric_base(ev)
        label = r.header["event_names"].get(ev) or ev
        s = Metric(f"self_{b}", Unit.COUNT, Kind.SELF, f"self {ev}",
                   f"{label}: exact count from the simulation, this function's own code")
        metrics.append(s)
        cols[s.name] = self_cost[:, g].copy()
        if with_calls:
            t = Metric(f"total_{b}", Unit.COUNT, Kind.INCLUSIVE, f"incl. {ev}",
                       f"{label}: exact count including called functions (from call edges)",
                       self_of=s.name)
            metrics.append(t)
            cols[t.name] = inclusive_costs(graph, cols[s.name], s.name)
    if with_calls:
        metrics.append(Metric("calls", Unit.COUNT, Kind.NODE, "calls",
                              "calls into the function"))
        cols["calls"] = graph.incoming_calls(len(self_cost))
    return metrics, cols


def _assemble(r: _Reader, p: Path, self_cost: np.ndarray, edge_cost: np.ndarray,
              per_part: np.ndarray) -> Profile:
    tb = r.tables()
    n_fn = len(tb.func_fn)
    bases = [_metric_base(e) for e in r.events]
    graph = CallGraph(tb.caller, tb.callee, tb.calls,
                      {f"self_{b}": edge_cost[:, g] for g, b in enumerate(bases)})
    creator = r.header.get("creator", "")
    is_callgrind = bool(len(tb.caller)) or creator.startswith("callgrind") or len(r.parts) > 1
    metrics, cols = _metrics(r, graph, self_cost, is_callgrind)
    total, parts = _part_totals(r, per_part)
    if creator.startswith("callgrind") and any(pt.summary is not None and pt.totals is None
                                               for pt in r.parts):
        r.incomplete = r.incomplete or ("no 'totals:' line at the end of a part (valgrind "
                                        "always writes one): the file was cut")
    meta = {k: v for k, v in r.header.items() if k not in ("desc", "event_names")}
    meta.update({
        "tool": "callgrind" if is_callgrind else "cachegrind", "events": list(r.events),
        "event_names": r.header["event_names"], "desc": r.header["desc"],
        "parts": parts, "precision": "exact", "n_functions": n_fn, "n_call_edges": len(tb.caller),
        "tree": "flat: callgrind records caller->callee edges, not stacks",
    })
    return flat_profile(
        path=str(p), format=FORMAT, frames=_frames(r), metrics=metrics, columns=cols,
        meta=meta, totals={f"self_{b}": int(total[g]) for g, b in enumerate(bases)},
        total_metrics={m.name: m for m in metrics if m.kind is Kind.SELF},
        incomplete=bool(r.incomplete), incomplete_reason=r.incomplete,
        warnings=tuple(r.warnings),
        extras={"call_graph": graph, "object_paths": _object_paths(r)},
        default_metric=metrics[0].name,
        display_metrics=tuple(m.name for m in metrics[:2]) + (("calls",) if is_callgrind
                                                              else ()),
    )
