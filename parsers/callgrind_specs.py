"""Vectorised pass over callgrind spec lines (``fn=(12)``, ``cfn=``, ``calls=``, ...).

In a real callgrind file about half the lines are spec lines, and almost all of them
are compressed references like ``fn=(12)`` or ``cfi=(3)``.  Walking them one by one in
Python costs more than the whole cost-line pass, so this module does it with numpy:

1. every non-cost line is classified by its first three bytes (a sorted table of the
   prefixes), the longer prefixes checked on the lines that have them;
2. references ``X=(N)`` are parsed in bulk, digit column by digit column from the
   ``)``; only definitions (``fn=(12) name``), uncompressed names and header lines go
   through Python, one id space at a time, which is where the names are interned (their
   numbering is free: functions are numbered later, by first appearance);
3. the state machine (current object, file, function; the callee of a call) becomes
   cumulative counts over line indices ("the last ``ob=`` at or before this line"), and
   function / call-edge identities are factorised in order of first appearance,
   exactly as the sequential reader numbers them.

Anything unusual (an id defined twice with different names, a reference before its
definition, a malformed ``calls=``) makes :func:`scan` return ``None`` and the caller
falls back to the sequential reader, which reports the located error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .builder import factorize  # pandas only for big key arrays

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


def _key3(prefix: bytes) -> int:
    return prefix[0] << 16 | prefix[1] << 8 | prefix[2]


# the first three bytes of every prefix are distinct: a sorted table of them gives the
# kind and the prefix length; the bytes after the third are checked separately
_BY_KEY = sorted((_key3(p), code, p) for p, code in _PREFIXES)
_K3_KEYS = np.array([k for k, _, _ in _BY_KEY], dtype=np.int32)
# one entry more at the end for "no prefix"
_K3_KIND = np.array([code for _, code, _ in _BY_KEY] + [OTHER], dtype=np.int8)
_K3_LEN = np.array([len(p) for _, _, p in _BY_KEY] + [0], dtype=np.int64)
_K3_TAIL = np.full((3, len(_BY_KEY) + 1), -1, dtype=np.int16)  # [byte 3, 4, 5] or -1
for _j, (_, _, _p) in enumerate(_BY_KEY):
    for _t, _ch in enumerate(_p[3:]):
        _K3_TAIL[_t, _j] = _ch


def classify(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kind code, value start offset) of the lines ``buf[s:e]``: a table lookup on the
    first three bytes, then the rest of the longer prefixes on the lines that have them.

    Every prefix byte is printable, so a match never reaches into the next line; at the
    end of the buffer ``take(mode="clip")`` repeats the last byte, which cannot complete a
    prefix either (each prefix ends with a byte unlike the one before it)."""
    b0 = buf.take(s, mode="clip")
    key = (b0.astype(np.int32) << 16) | (buf.take(s + 1, mode="clip").astype(np.int32) << 8)
    key |= buf.take(s + 2, mode="clip")
    none = len(_K3_KEYS)
    j = np.searchsorted(_K3_KEYS, key)
    np.minimum(j, none - 1, out=j)
    j[_K3_KEYS[j] != key] = none
    rows = np.flatnonzero(_K3_LEN[j] > 3)
    for t in range(_K3_TAIL.shape[0]):
        need = _K3_TAIL[t, j[rows]]
        has = need >= 0
        sub = rows[has]
        j[sub[buf.take(s[sub] + 3 + t, mode="clip") != need[has]]] = none
        rows = sub
    kind = _K3_KIND[j]
    vstart = s + _K3_LEN[j]
    other = j == none
    length = e - s
    kind[other & (length == 0)] = BLANK
    kind[other & (length == 1) & (b0 == 13)] = BLANK
    kind[other & (b0 == 35)] = COMMENT
    return kind, vstart


def _right_digits(buf: np.ndarray, end: np.ndarray, nd: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(value, ok) of the ``nd`` decimal digits ending before ``end``; ok is False for
    a non-digit or when nd is not in 1..9 (then the caller takes the Python path)."""
    ok = (nd >= 1) & (nd <= 9)
    val = np.zeros(len(end), dtype=np.int64)
    width = int(nd.max(initial=0, where=ok))
    pos = end - 1
    for j in range(width):
        d = buf.take(pos, mode="clip")
        d -= np.uint8(48)  # wraps for non-digits
        d *= nd > j  # 0 left of the number
        ok &= d < 10
        val += np.multiply(d, 10**j, dtype=np.int64)
        pos -= 1
    return val, ok


def scan(r: _Reader, starts: np.ndarray, ends: np.ndarray, others: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The sequential ``_Reader.scan`` result, vectorised; ``None`` = use the sequential one."""
    if len(others) == 0:
        return None
    lines = _spec_lines(r, starts[others], ends[others], others)
    if lines is None:
        return None
    kind, name_id, count, part_change = lines
    return _state(r, kind, name_id, count, part_change, others, len(starts))


def _spec_lines(r: _Reader, s: np.ndarray, e: np.ndarray, others: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int]]] | None:
    """(kind, name id, the counts of the calls= lines, part starts) of the lines
    ``s:e`` (the byte offsets and temporaries die here, before the state pass)."""
    buf = np.frombuffer(r.data, dtype=np.uint8)
    if r.data.find(b"\r") >= 0:  # CRLF line ends
        e = e - ((e > s) & (buf.take(e - 1, mode="clip") == 13))
    kind, vs = classify(buf, s, e)
    if np.any((kind == JFI) | (kind == JFN)):
        return None  # rare (--collect-jumps with file changes): sequential path
    spec = _IS_SPEC[kind]
    # compressed references "X=(N)": "(" digits ")" and nothing else
    fast = spec & (e - vs >= 3) & (buf.take(vs, mode="clip") == 40)
    fast &= buf.take(e - 1, mode="clip") == 41
    rows = np.flatnonzero(fast)
    ref, ok = _right_digits(buf, e[rows] - 1, e[rows] - vs[rows] - 2)
    fast[rows[~ok]] = False
    rows, ref = rows[ok], ref[ok]
    count = _calls_counts(buf, vs, e, kind == CALLS)
    if count is None:
        return None
    names = _names(r, kind, vs, e, spec & ~fast, others)
    part_change = _headers(r, s, e, kind, others)
    if names is None or part_change is None:
        return None
    del s, e, vs, spec, fast
    name_id, def_ids, def_lines, offset = names
    # resolve references (must be defined on an earlier line), all spaces at once
    space = _SPACE_INDEX[kind[rows]]
    if np.any(ref >= offset[space + 1] - offset[space]):
        return None
    ref += offset[space]
    nid = def_ids[ref]
    if np.any(nid < 0) or np.any(def_lines[ref] >= others[rows]):
        return None
    name_id[rows] = nid
    return kind, name_id, count, part_change


def _calls_counts(buf: np.ndarray, vs: np.ndarray, e: np.ndarray, calls: np.ndarray
                  ) -> np.ndarray | None:
    """The count of each ``calls=<count> ...`` line in order (digits up to a blank)."""
    ci = np.flatnonzero(calls)
    if not ci.size:
        return np.zeros(0, dtype=np.int64)
    start, end = vs[ci], e[ci]
    stop = end.copy()
    val = np.zeros(len(ci), dtype=np.int64)
    active = np.arange(len(ci))
    for j in range(19):
        if not active.size:
            break
        pos = start[active] + j
        d = buf.take(pos, mode="clip").astype(np.int64) - 48
        digit = (d >= 0) & (d <= 9) & (pos < end[active])
        done = active[~digit]
        stop[done] = start[done] + j
        val[active[digit]] = val[active[digit]] * 10 + d[digit]
        active = active[digit]
    if active.size:
        return None  # 19+ digits
    ok = stop > start
    after = buf.take(stop, mode="clip")
    ok &= (stop == end) | (after == 32) | (after == 9)
    if not ok.all():
        return None
    return val


def _names(r: _Reader, kind, vs, e, slow, others
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Name ids of the definitions (``fn=(12) name``) and plain names (``fn=name``),
    one space at a time (the numbering of names is free: functions are numbered by
    first appearance later), plus the tables id -> name id (-1 = undefined) and
    id -> defining line of the three spaces end to end (space ``i`` at ``offset[i]``)."""
    data = r.data
    name_id = np.full(len(kind), -1, dtype=np.int64)
    slow_rows = np.flatnonzero(slow)
    space_of_row = _SPACE_INDEX[kind[slow_rows]]
    ids_parts, line_parts, offset = [], [], [0]
    for si, space in enumerate(("ob", "fl", "fn")):
        rows = slow_rows[space_of_row == si]
        texts: list[bytes] = []
        defs: dict[int, tuple[bytes, int, int]] = {}  # id -> (name, line, index in texts)
        for a, b, line in zip(vs[rows].tolist(), e[rows].tolist(), others[rows].tolist(),
                              strict=True):
            val = data[a:b]
            close = val.find(b")")
            if val[:1] == b"(" and close > 1 and val[1:close].isdigit():
                rest = val[close + 1 :].strip()
                if not rest:
                    return None  # "(N) " with trailing blanks: sequential path
                prev = defs.setdefault(int(val[1:close]), (rest, line, len(texts)))
                if prev[0] != rest:
                    return None  # redefined id
                texts.append(rest)
            else:
                texts.append(val.strip())
        nids = np.array(r.intern_all(space, [t.decode("utf-8", "replace") for t in texts]),
                        dtype=np.int64)
        name_id[rows] = nids
        size = max(defs, default=-1) + 1
        if size > 4 * len(defs) + (1 << 20):
            return None  # very sparse ids: the sequential reader's dicts
        ids = np.full(size, -1, dtype=np.int64)
        lines = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
        if defs:
            idents = np.fromiter(defs, dtype=np.int64, count=len(defs))
            ids[idents] = nids[[v[2] for v in defs.values()]]
            lines[idents] = [v[1] for v in defs.values()]
        ids_parts.append(ids)
        line_parts.append(lines)
        offset.append(offset[-1] + size)
    return (name_id, np.concatenate(ids_parts), np.concatenate(line_parts),
            np.array(offset, dtype=np.int64))


def _headers(r: _Reader, s, e, kind, others) -> list[tuple[int, int]] | None:
    """Header lines (``key: value``) in file order; the (line, part) where parts start."""
    data = r.data
    part_change: list[tuple[int, int]] = []
    todo = np.flatnonzero(kind == OTHER)
    reset = reset_line = -1  # the last header line that ended a body
    for k, start, end, line in zip(todo.tolist(), s[todo].tolist(), e[todo].tolist(),
                                   others[todo].tolist(), strict=True):
        raw = data[start:end]
        colon = raw.find(b":")
        hkey = raw[:colon].decode("ascii", "replace") if colon > 0 else ""
        if not (hkey.isidentifier() and hkey.islower()):
            return None  # the sequential reader reports (or skips) it
        # cost lines or body spec lines since the last header: a new part may start
        in_body = line - reset_line != k - reset or bool(
            _IS_BODY[kind[reset + 1 : k]].any())
        before = len(r.parts)
        r.header_line(hkey, raw[colon + 1 :].decode("utf-8", "replace").strip(),
                      line + 1, in_body)
        if len(r.parts) != before:
            part_change.append((k, len(r.parts) - 1))
        if hkey not in ("summary", "totals"):
            reset, reset_line = k, line
    return part_change


def _last(mask: np.ndarray, name_id: np.ndarray, *at: np.ndarray, default: int = -1
          ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per query array of ``at``: (name id of the last ``mask`` line at or before each
    query, else ``default``; how many ``mask`` lines come at or before it, minus one)."""
    dtype = np.int32 if len(mask) < 2**31 else np.int64
    counts = np.cumsum(mask, dtype=dtype)
    vals = np.append(name_id[np.flatnonzero(mask)], default)  # rank -1 -> default
    out = []
    for q in at:
        rank = counts[q].astype(np.int64) - 1
        out.append((vals[rank], rank))
    return out


def _state(r: _Reader, kind, name_id, count, part_change, others, n_lines):
    """Forward-filled state -> per-line (function, pending edge, part), plus the reader's
    function and edge tables, numbered in order of first appearance."""
    n = len(kind)
    is_fn, is_call = kind == FN, kind == CALLS
    fn_lines, c = np.flatnonzero(is_fn), np.flatnonzero(is_call)
    no_ob, no_fl = r.intern_all("ob", [""])[0], r.intern_all("fl", [""])[0]
    is_file = (kind == FL) | (kind == FI) | (kind == FE)
    (ob_fn, _), (ob_c, _) = _last(kind == OB, name_id, fn_lines, c, default=no_ob)
    (fl_fn, _), (fl_c, _) = _last(is_file, name_id, fn_lines, c, default=no_fl)
    [(cob, cob_rank)] = _last(kind == COB, name_id, c)
    [(cfi, cfi_rank)] = _last(kind == CFI, name_id, c)
    [(cfn, cfn_rank)] = _last(kind == CFN, name_id, c)
    if np.any(cfn_rank < 0):
        return None
    # cob= / cfi= apply to the next calls= only (a line between the previous one and it)
    callee_ob = np.where(cob_rank > np.concatenate([[-1], cob_rank[:-1]]), cob, ob_c)
    callee_fl = np.where(cfi_rank > np.concatenate([[-1], cfi_rank[:-1]]), cfi, fl_c)
    # function identities in order of first appearance (fn= lines and callees)
    n_fl, n_fn = len(r.names["fl"]) + 1, len(r.names["fn"]) + 1
    key = np.empty(n, dtype=np.int64)
    key[fn_lines] = (ob_fn * n_fl + fl_fn) * n_fn + name_id[fn_lines]
    key[c] = (callee_ob * n_fl + callee_fl) * n_fn + cfn
    where = np.flatnonzero(is_fn | is_call)
    codes, uniques = factorize(key[where])
    del key
    at_fn = is_fn[where]
    fn_at = np.append(codes[at_fn], -1)[np.cumsum(is_fn) - 1]  # -1 before the first fn=
    caller = fn_at[c]
    if np.any(caller < 0):
        return None
    ecodes, euniq = factorize(caller * (len(uniques) + 1) + codes[~at_fn])
    _fill_tables(r, uniques, n_fl, n_fn, euniq, len(uniques) + 1, ecodes, count)
    pend = _pending(kind, others, c, ecodes)
    if pend is None:
        return None
    part = _fill_forward(part_change, n)
    r.incomplete = r.incomplete or _cut_after_calls(others, c, n_lines)
    return fn_at, pend, part


def _fill_forward(change: list[tuple[int, int]], n: int) -> np.ndarray:
    """Each line's part (-1 before the first): parts are few, so one slice fill each."""
    out = np.full(n, -1, dtype=np.int64)
    ends = [k for k, _ in change[1:]] + [n] if change else []
    for (a, part), b in zip(change, ends, strict=True):
        out[a:b] = part
    return out


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
