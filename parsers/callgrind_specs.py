"""Vectorised pass over callgrind spec lines (``fn=(12)``, ``cfn=``, ``calls=``, ...).

In a real callgrind file about half the lines are spec lines, and almost all of them
are compressed references like ``fn=(12)`` or ``cfi=(3)``.  Walking them one by one in
Python costs more than the whole cost-line pass, so this module does it with numpy:

1. every non-cost line is classified by its first bytes;
2. references ``X=(N)`` are converted to ids in bulk; only definitions
   (``fn=(12) name``), uncompressed names and header lines go through Python, in file
   order, which is where the names are interned;
3. the state machine (current object, file, function; the callee of a call) becomes
   forward fills over line indices, and function / call-edge identities are factorised
   in order of first appearance, exactly as the sequential reader numbers them.

Anything unusual (an id defined twice with different names, a reference before its
definition, a malformed ``calls=``) makes :func:`scan` return ``None`` and the caller
falls back to the sequential reader, which reports the located error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .callgrind_costs import parse_uints

if TYPE_CHECKING:
    from .callgrind import _Reader

# kind codes
OB, FL, FI, FE, FN, COB, CFI, CFN, JFI, JFN, CALLS, JUMP, BLANK, COMMENT, OTHER = range(15)
_PREFIXES = [(b"ob=", OB), (b"fl=", FL), (b"fi=", FI), (b"fe=", FE), (b"fn=", FN),
             (b"cob=", COB), (b"cfi=", CFI), (b"cfl=", CFI), (b"cfn=", CFN), (b"jfi=", JFI),
             (b"jfn=", JFN), (b"calls=", CALLS), (b"jump=", JUMP), (b"jcnd=", JUMP)]
_SPACE_OF = {OB: "ob", COB: "ob", FL: "fl", FI: "fl", FE: "fl", CFI: "fl", JFI: "fl",
             FN: "fn", CFN: "fn", JFN: "fn"}
_IS_SPEC = np.zeros(16, dtype=bool)
_IS_SPEC[list(_SPACE_OF)] = True
_IS_BODY = _IS_SPEC.copy()
_IS_BODY[[CALLS, JUMP]] = True
_SPACE_INDEX = np.full(16, -1, dtype=np.int8)  # kind -> 0 ob, 1 fl, 2 fn
for _k, _sp in _SPACE_OF.items():
    _SPACE_INDEX[_k] = ("ob", "fl", "fn").index(_sp)


def _two(a: bytes) -> int:
    return a[0] << 8 | a[1]


# first two bytes -> (kind, prefix length); "cf", "jf", "co" are refined by the third byte
_LUT_KIND = np.full(1 << 16, OTHER, dtype=np.int8)
_LUT_LEN = np.zeros(1 << 16, dtype=np.int64)
for _p, _code in _PREFIXES:
    _LUT_KIND[_two(_p)] = _code
    _LUT_LEN[_two(_p)] = len(_p)
_THIRD = {_two(b"cf"): {ord("i"): CFI, ord("l"): CFI, ord("n"): CFN},
          _two(b"jf"): {ord("i"): JFI, ord("n"): JFN}, _two(b"co"): {ord("b"): COB}}


def classify(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kind code, value start offset) of the lines ``buf[s:e]``: a lookup on the first
    two bytes, refined by the third, then the whole prefix is checked where it matters."""
    n = len(buf)
    length = e - s

    def byte(j: int) -> np.ndarray:
        return np.where(length > j, buf[np.minimum(s + j, n - 1)], 0)

    b0, b1 = byte(0), byte(1)
    two = (b0.astype(np.int32) << 8) | b1
    kind = _LUT_KIND[two]
    plen = _LUT_LEN[two]
    b2 = byte(2)
    for pair, third in _THIRD.items():
        m = two == pair
        if m.any():
            k = np.full(int(m.sum()), OTHER, dtype=np.int8)
            for ch, code in third.items():
                k[b2[m] == ch] = code
            kind[m] = k
    cand = np.flatnonzero(kind != OTHER)
    # the prefix ends with "=" ...
    pl = plen[cand]
    ok = (length[cand] >= pl) & (buf[np.minimum(s[cand] + pl - 1, n - 1)] == 61)
    # ... and the long ones ("calls=", "jump=", "jcnd=") have their middle bytes
    for prefix, _code in _PREFIXES:
        if len(prefix) <= 4:
            continue
        sel = np.flatnonzero(two[cand] == _two(prefix))
        rows = cand[sel]
        for j in range(2, len(prefix) - 1):
            ok[sel] &= buf[np.minimum(s[rows] + j, n - 1)] == prefix[j]
    kind[cand[~ok]] = OTHER
    vstart = np.where(kind != OTHER, s + plen, s)
    kind[length == 0] = BLANK
    kind[(length == 1) & (b0 == 13)] = BLANK
    kind[(kind == OTHER) & (b0 == 35)] = COMMENT
    return kind, vstart


def _ffill(mask: np.ndarray) -> np.ndarray:
    """Index of the last True at or before each position (-1 before the first)."""
    idx = np.where(mask, np.arange(len(mask)), -1)
    return np.maximum.accumulate(idx) if len(idx) else idx


def scan(r: _Reader, starts: np.ndarray, ends: np.ndarray, others: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The sequential ``_Reader.scan`` result, vectorised; ``None`` = use the sequential one."""
    buf = np.frombuffer(r.data, dtype=np.uint8)
    s, e = starts[others], ends[others]
    if len(s) == 0:
        return None
    e = e - ((e > s) & (buf[np.maximum(e - 1, 0)] == 13))  # CRLF
    kind, vs = classify(buf, s, e)
    if np.any((kind == JFI) | (kind == JFN)):
        return None  # rare (--collect-jumps with file changes): sequential path
    spec = _IS_SPEC[kind]
    # compressed references "X=(N)": "(" digits ")" and nothing else
    fast = spec & (buf[np.minimum(vs, len(buf) - 1)] == 40) & (e - vs >= 3)
    fast &= buf[np.maximum(e - 1, 0)] == 41
    ref = np.full(len(s), -1, dtype=np.int64)
    fi = np.flatnonzero(fast)
    val, bad, long_ = parse_uints(buf, vs[fi] + 1, e[fi] - 1)
    ok = np.ones(len(fi), dtype=bool)
    ok[bad] = False
    ok[long_] = False
    fast[fi[~ok]] = False
    ref[fi[ok]] = val[ok]
    calls = kind == CALLS
    count = _calls_counts(buf, vs, e, calls)
    if count is None:
        return None
    slow = (spec & ~fast) | (kind == OTHER)
    res = _python_pass(r, s, e, kind, slow, others)
    if res is None:
        return None
    name_id, part_of_line, def_line = res
    # resolve references (must be defined on an earlier line)
    space_of_line = _SPACE_INDEX[kind]
    for si, space in enumerate(("ob", "fl", "fn")):
        m = fast & (space_of_line == si)
        ids, lines = def_line[space]
        n_ids = len(ids)
        rv = ref[m]
        known = rv < n_ids
        if not known.all():
            return None
        nid = ids[rv]
        if np.any(nid < 0) or np.any(lines[rv] >= others[m]):
            return None
        name_id[m] = nid
    return _state(r, kind, name_id, count, part_of_line, others, len(starts))


def _calls_counts(buf: np.ndarray, vs: np.ndarray, e: np.ndarray, calls: np.ndarray
                  ) -> np.ndarray | None:
    """The count of every ``calls=<count> ...`` line (digits up to a blank)."""
    ci = np.flatnonzero(calls)
    out = np.zeros(len(vs), dtype=np.int64)
    if not ci.size:
        return out
    start, end = vs[ci], e[ci]
    stop = end.copy()
    val = np.zeros(len(ci), dtype=np.int64)
    active = np.arange(len(ci))
    for j in range(19):
        if not active.size:
            break
        pos = start[active] + j
        inside = pos < end[active]
        d = np.where(inside, buf[np.minimum(pos, len(buf) - 1)].astype(np.int64) - 48, -1)
        digit = (d >= 0) & (d <= 9)
        done = active[~digit]
        stop[done] = start[done] + j
        val[active[digit]] = val[active[digit]] * 10 + d[digit]
        active = active[digit]
    if active.size:
        return None  # 19+ digits
    ok = stop > start
    after = buf[np.minimum(stop, len(buf) - 1)]
    ok &= (stop == end) | (after == 32) | (after == 9)
    if not ok.all():
        return None
    out[ci] = val
    return out


def _python_pass(r: _Reader, s, e, kind, slow, others):
    """Definitions, plain names and headers in file order (names interned here)."""
    data = r.data
    name_id = np.full(len(s), -1, dtype=np.int64)
    part_change = np.full(len(s), -1, dtype=np.int64)
    defs: dict[str, dict[int, tuple[int, int]]] = {"ob": {}, "fl": {}, "fn": {}}
    body = np.cumsum(_IS_BODY[kind])  # body spec lines so far
    reset = -1  # others index of the last header line that ended a body
    todo = np.flatnonzero(slow)
    rows = zip(todo.tolist(), kind[todo].tolist(), s[todo].tolist(), e[todo].tolist(),
               others[todo].tolist(), strict=True)
    reset_line = -1
    for k, code, start, end, line in rows:
        raw = data[start:end]
        if code == OTHER:
            colon = raw.find(b":")
            hkey = raw[:colon].decode("ascii", "replace") if colon > 0 else ""
            if not (hkey.isidentifier() and hkey.islower()):
                return None  # the sequential reader reports (or skips) it
            in_body = bool(body[k] - (body[reset] if reset >= 0 else 0) > 0
                           or line - reset_line != k - reset)
            before = len(r.parts)
            r.header_line(hkey, raw[colon + 1 :].decode("utf-8", "replace").strip(),
                          line + 1, in_body)
            if len(r.parts) != before:
                part_change[k] = len(r.parts) - 1
            if hkey not in ("summary", "totals"):
                reset, reset_line = k, line
            continue
        space = _SPACE_OF[code]
        val = raw[raw.find(b"=") + 1 :]
        close = val.find(b")")
        if val[:1] == b"(" and close > 1 and val[1:close].isdigit():
            rest = val[close + 1 :].strip()
            if not rest:
                return None  # "(N) " with trailing blanks: sequential path
            ident = int(val[1:close])
            nid = r._intern(space, rest.decode("utf-8", "replace"))
            prev = defs[space].get(ident)
            if prev is not None and prev[0] != nid:
                return None  # redefined id
            if prev is None:
                defs[space][ident] = (nid, line)
        else:
            nid = r._intern(space, val.strip().decode("utf-8", "replace"))
        name_id[k] = nid
    def_line = {}
    for space, d in defs.items():
        size = max(d, default=-1) + 1
        ids = np.full(size, -1, dtype=np.int64)
        lines = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
        for ident, (nid, line) in d.items():
            ids[ident], lines[ident] = nid, line
        def_line[space] = (ids, lines)
    return name_id, part_change, def_line


def _value_at(lines: np.ndarray, name_id: np.ndarray, queries: np.ndarray, default: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """(name id of the last line of ``lines`` at or before each query, that line or -1)."""
    if not len(lines):
        return np.full(len(queries), default, dtype=np.int64), np.full(len(queries), -1)
    j = np.searchsorted(lines, queries, side="right") - 1
    at = np.where(j >= 0, lines[np.maximum(j, 0)], -1)
    return np.where(j >= 0, name_id[np.maximum(at, 0)], default), at


def _state(r: _Reader, kind, name_id, count, part_change, others, n_lines):
    """Forward-filled state -> per-line (function, pending edge, part), plus the reader's
    function and edge tables, numbered in order of first appearance."""
    n = len(kind)
    fn_lines, c = np.flatnonzero(kind == FN), np.flatnonzero(kind == CALLS)
    q = np.concatenate([fn_lines, c])  # where object and file matter
    ob_q, _ = _value_at(np.flatnonzero(kind == OB), name_id, q, r._intern("ob", ""))
    file_lines = np.flatnonzero((kind == FL) | (kind == FI) | (kind == FE))
    fl_q, _ = _value_at(file_lines, name_id, q, r._intern("fl", ""))
    prev_calls = np.concatenate([[-1], c[:-1]])
    cob, cob_at = _value_at(np.flatnonzero(kind == COB), name_id, c, -1)
    cfi, cfi_at = _value_at(np.flatnonzero(kind == CFI), name_id, c, -1)
    cfn, cfn_at = _value_at(np.flatnonzero(kind == CFN), name_id, c, -1)
    if np.any(cfn_at < 0):
        return None
    nf = len(fn_lines)
    callee_ob = np.where(cob_at > prev_calls, cob, ob_q[nf:])
    callee_fl = np.where(cfi_at > prev_calls, cfi, fl_q[nf:])
    # function identities in order of first appearance (fn= lines and callees)
    n_fl, n_fn = len(r.names["fl"]) + 1, len(r.names["fn"]) + 1
    fkey = np.concatenate([(ob_q[:nf] * n_fl + fl_q[:nf]) * n_fn + name_id[fn_lines],
                           (callee_ob * n_fl + callee_fl) * n_fn + cfn])
    order = np.argsort(q, kind="stable")
    codes, uniques = pd.factorize(fkey[order])
    fid = np.empty(len(fkey), dtype=np.int64)
    fid[order] = codes
    fid_fn, fid_callee = fid[:nf], fid[nf:]
    cur_fn_line = _ffill(kind == FN)
    fn_at = np.full(n, -1, dtype=np.int64)
    has = cur_fn_line >= 0
    fn_at[has] = fid_fn[np.searchsorted(fn_lines, cur_fn_line[has])]
    caller = fn_at[c]
    if np.any(caller < 0):
        return None
    ecodes, euniq = pd.factorize(caller * (len(uniques) + 1) + fid_callee)
    _fill_tables(r, uniques, n_fl, n_fn, euniq, len(uniques) + 1, ecodes, count[c])
    pend = _pending(kind, others, c, ecodes)
    if pend is None:
        return None
    part = np.maximum.accumulate(np.where(part_change >= 0, part_change, -1)) if n else part_change
    r.incomplete = r.incomplete or _cut_after_calls(others, c, n_lines)
    return fn_at, pend, part


def _pending(kind, others, c, ecodes) -> np.ndarray | None:
    """Per line, the call edge its next cost line belongs to: the calls= line itself and
    any blank or comment lines right after it.  ``None`` when a spec line follows a
    calls= directly (the sequential reader reports it)."""
    n = len(kind)
    pend = np.full(n, -1, dtype=np.int64)
    pend[c] = ecodes
    cur, edge = c, ecodes
    while cur.size:
        nxt = cur + 1
        keep = nxt < n
        cur, edge, nxt = cur[keep], edge[keep], nxt[keep]
        adjacent = others[nxt] == others[cur] + 1  # no cost line in between
        cur, edge, nxt = cur[adjacent], edge[adjacent], nxt[adjacent]
        quiet = (kind[nxt] == BLANK) | (kind[nxt] == COMMENT)
        if not quiet.all():
            return None
        pend[nxt] = edge
        cur = nxt
    return pend


def _fill_tables(r: _Reader, uniques, n_fl, n_fn, euniq, radix, ecodes, counts) -> None:
    """The reader's function and edge tables from the factorised keys."""
    from .callgrind import Tables

    u = np.asarray(uniques, dtype=np.int64)
    rest = u // n_fn
    eu = np.asarray(euniq, dtype=np.int64)
    calls = np.bincount(ecodes, weights=counts, minlength=len(eu)) if len(eu) else np.zeros(0)
    r.arrays = Tables(rest // n_fl, rest % n_fl, u % n_fn, eu // radix, eu % radix,
                      np.rint(calls).astype(np.int64))


def _cut_after_calls(others: np.ndarray, calls_idx: np.ndarray, n_lines: int) -> str:
    """A calls= with no cost line after it at the end of the file: the file was cut."""
    if not len(calls_idx):
        return ""
    c = int(calls_idx[-1])
    if others[-1] == n_lines - 1 and others[-1] - others[c] == len(others) - 1 - c:
        return (f"the file ends after 'calls=' at line {int(others[c]) + 1} without the "
                "call's cost line: it was cut")
    return ""
