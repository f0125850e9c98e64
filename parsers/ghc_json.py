"""GHC ``+RTS -pj`` JSON cost-centre profile reader.

The file holds run facts (program, arguments, end time, total ticks/alloc, tick
interval), a ``cost_centres`` table (id, label, module, src_loc, is_caf) and the
cost-centre-stack tree as nested ``{"id", "entries", "alloc", "ticks", "children"}``
objects whose ``ticks``/``alloc`` are exclusive.  It often carries the ``.prof``
extension, so detection is by content.

Why it is read the way it is:

* Unlike the text report, the JSON includes the system cost centres (GC, SYSTEM, IDLE,
  OVERHEAD_of, DONT_CARE, PINNED) and every library CAF, and its totals count them.
  Percentages are therefore recomputed from the raw ticks/bytes over the JSON totals
  (stated in ``meta["percent_basis"]``); they do not equal the text report's.
* GHC 9.0's JSON escaper escapes backslashes but not ``"`` or control characters, so a
  cost centre named ``"foo"`` makes the file invalid JSON.  When ``json.loads`` fails, a
  tolerant reader takes the fixed key layout GHC writes (``{"id": .., "label": "..",
  "module": "..", "src_loc": "..", "is_caf": ..}``) apart with anchored patterns and
  reads the tree, which holds only numbers, with a bracket scanner; this is reported in
  ``warnings``.  The same scanner makes a cut file loadable (``incomplete``).
* The tree is walked iteratively (deep stacks cannot overflow the recursion limit) and
  only flat lists are kept per node.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .builder import FrameInterner, profile_from_arrays
from .errors import ParseError
from .gc_pause import gc_paused
from .ghc_prof import (
    DISPLAY_METRICS,
    M_ALLOC_B,
    M_ALLOC_PCT,
    M_BYTES,
    M_ENTRIES,
    M_IALLOC_B,
    M_IALLOC_PCT,
    M_ITIME_PCT,
    M_ITIME_S,
    M_TICKS,
    M_TIME_PCT,
    M_TIME_S,
    SYSTEM_CCS,
    TOTAL_METRICS,
    read_maybe_gzip,
    subtree_sums,
    time_scale,
    tree_from_depth,
)
from .ghc_prof_columns import gather, parse8
from .model import Kind, Metric, Profile, Unit
from .values import INT64_MAX

FORMAT = "ghc-prof-json"
DESCRIPTION = "GHC JSON cost-centre profile (+RTS -pj)"

PERCENT_BASIS_JSON = (
    "Percentages are recomputed from the raw ticks and bytes over the JSON header's "
    "total_ticks and total_alloc. Those header totals, and this tree, include the GC, "
    "SYSTEM, IDLE, OVERHEAD_of, DONT_CARE and PINNED cost centres that the text .prof "
    "report hides, so the figures are lower than the .prof percentages of the same run. "
    "The run totals (total alloc, total ticks) are the program's: the header's minus those "
    "cost centres, as the text report prints them; the rest is rts_alloc_bytes / rts_ticks."
)

RTS_TOTAL_METRICS = {
    "rts_alloc_bytes": Metric("rts_alloc_bytes", Unit.BYTES, Kind.SELF, "RTS alloc",
                              "allocation of the RTS and profiler cost centres (SYSTEM, "
                              "OVERHEAD_of, ...), not part of the program's"),
    "rts_ticks": Metric("rts_ticks", Unit.TICKS, Kind.SELF, "RTS ticks",
                        "ticks of the GC, SYSTEM, OVERHEAD_of, ... cost centres",
                        sampled=True),
    "header_total_alloc_bytes": Metric("header_total_alloc_bytes", Unit.BYTES, Kind.SELF,
                                       "header alloc", "the JSON header's total_alloc, "
                                       "profiling overhead included"),
}


def sniff(head: bytes, path: Path) -> float:
    """A JSON object whose first KiB names GHC's keys (``program`` + ``rts_arguments`` /
    ``total_ticks`` / ``cost_centres``)."""
    first = head[:1024].lstrip()
    if not first.startswith(b"{"):
        return 0.0
    if b'"cost_centres"' in head and b'"program"' in head:
        return 0.95
    if b'"program"' in first and (b'"rts_arguments"' in first or b'"total_ticks"' in first
                                  or b'"tick_interval"' in first):
        return 0.9
    return 0.0


_NODE_EVENT = re.compile(r'\{([^{}\[\]"]*(?:"\w+"\s*:\s*-?\d+\s*,\s*)*)"children"\s*:\s*\[|\]')
_FIELD = re.compile(r'"(\w+)"\s*:\s*(-?\d+)')
_NON_INT_COUNT = re.compile(r'"(entries|ticks|alloc)"\s*:\s*(-?[0-9.]+[eE][-+]?[0-9]+|'
                            r'-?[0-9]*\.[0-9]+|-?Infinity|NaN)')


def _check_counts(path: Path, data: bytes, name: str, col: list, lenient: bool,
                  warnings: list[str]) -> None:
    """Counts must be integers from 0 to 2^63-1 (int64 columns): otherwise a located
    error naming the field and value (the line found by searching the value), or under
    ``lenient`` the value is replaced by 0 and reported."""
    if len(col) == 0:
        return
    if isinstance(col, np.ndarray):  # the vectorised reader: already int64
        if col.dtype.kind in "iu" and (col.dtype.kind == "u" or col.min() >= 0):
            return
        hi, lo = col.max(), col.min()
    else:
        hi, lo = max(col), min(col)
    if lo >= 0 and hi <= INT64_MAX:
        return
    for i, v in enumerate(col):
        if 0 <= v <= INT64_MAX:
            continue
        at = data.find(f'"{name}":{v}'.encode())
        at = data.find(str(v).encode()) if at < 0 else at
        line = data.count(b"\n", 0, at) + 1 if at >= 0 else None
        if not lenient:
            raise ParseError(path, f"'{name}' as an integer from 0 to 2^63-1", line=line,
                             found=str(v))
        warnings.append(f"{path}:{line}: '{name}' {v} out of range, read as 0")
        col[i] = 0


_CC = re.compile(
    r'\{\s*"id"\s*:\s*(\d+)\s*,\s*"label"\s*:\s*"(.*?)"\s*,\s*"module"\s*:\s*"(.*?)"\s*,'
    r'\s*"src_loc"\s*:\s*"(.*?)"\s*,\s*"is_caf"\s*:\s*(true|false)\s*\}', re.S)


def _unescape(s: str) -> str:
    """Undo what GHC's escaper did (backslashes, and ``\\"`` if a later GHC escapes it)."""
    try:
        return json.loads(f'"{s}"')
    except json.JSONDecodeError:
        return re.sub(r"\\(.)", r"\1", s)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _missing_sections(path: Path, text: str, cstart: int, pstart: int,
                      err_line: int | None) -> ParseError:
    """Why a JSON text that is not a whole -pj profile cannot be read, in the user's
    terms: a file cut inside the cost-centre table (still being written, or copied
    short) is told from a JSON object of another kind."""
    expected = "a GHC -pj JSON profile: its cost_centres table, then the profile tree"
    if cstart >= 0 and pstart < 0:
        return ParseError(path, expected, line=_line_of(text, len(text.rstrip())),
                          found=f"the end of the file inside cost_centres (from line "
                                f"{_line_of(text, cstart)}): cut short or still being written")
    if cstart < 0 and pstart >= 0:
        return ParseError(path, expected, line=_line_of(text, pstart),
                          found="a profile tree with no cost_centres table before it")
    if cstart >= 0:
        return ParseError(path, expected, line=_line_of(text, pstart),
                          found="the profile tree before the cost_centres table")
    return ParseError(path, expected, line=err_line,
                      found="neither key (a JSON object of another kind?)")


def _tolerant_header(text: str) -> dict[str, Any]:
    """Run facts by anchored patterns; strings may hold raw quotes (GHC 9.0 escaper)."""
    out: dict[str, Any] = {}
    m = re.search(r'"program"\s*:\s*"(.*?)"\s*,\s*"arguments"', text, re.S)
    if m:
        out["program"] = _unescape(m.group(1))
    for key in ("arguments", "rts_arguments"):
        m = re.search(rf'"{key}"\s*:\s*\[(.*?)\]\s*,\s*"', text, re.S)
        if m:
            out[key] = [_unescape(a) for a in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))]
    m = re.search(r'"end_time"\s*:\s*"(.*?)"\s*,', text, re.S)
    if m:
        out["end_time"] = _unescape(m.group(1))
    for key in ("initial_capabilities", "total_time", "total_ticks", "tick_interval",
                "total_alloc"):
        m = re.search(rf'"{key}"\s*:\s*(-?[\d.]+(?:[eE][-+]?\d+)?)', text)
        if m:
            v = float(m.group(1))
            out[key] = int(v) if v.is_integer() and "." not in m.group(1) else v
    return out


def read(path: Path, *, lenient: bool = False, progress: Callable[[float], None] | None = None,
         **options: object) -> Profile:
    """Parse a ``-pj`` JSON profile (plain or gzipped)."""
    path = Path(path)
    data, cut_reason = read_maybe_gzip(path)
    if not data.strip():
        raise ParseError(path, "a GHC -pj JSON profile, but the file is empty")
    if b"\x00" in data[:4096]:
        raise ParseError(path, "a GHC -pj JSON profile", found="binary data")
    if not data.lstrip().startswith(b"{"):
        first = data.lstrip()[:4096].decode("utf-8", "replace")
        raise ParseError(path, "a GHC -pj JSON profile (a JSON object)", line=1,
                         found=first.split("\n", 1)[0])
    warnings: list[str] = []
    incomplete_reason = cut_reason
    doc: dict[str, Any] | None
    vec = _vector_tree(data)
    text = "" if vec is not None else data.decode("utf-8", "replace")  # the other paths
    tree = vec[1] if vec is not None else None
    try:
        doc = vec[0] if vec is not None else _loads_without_gc(text)
    except json.JSONDecodeError as e:
        doc = None
        warnings.append(
            f"not valid JSON at line {e.lineno} ({e.msg}); read with a tolerant parser "
            "(GHC 9.0's -pj does not escape quotes or control characters in names)")
        err_line = e.lineno
    except RecursionError:
        # valid JSON nested deeper than Python's parser recurses (a deep call chain):
        # nothing is wrong with the file, so no warning about GHC's escaping
        doc = None
        err_line = None
    if progress:
        progress(0.3)

    interner = FrameInterner()
    cc_frame: dict[int, int] = {}
    if doc is not None:
        if not isinstance(doc, dict) or "cost_centres" not in doc or "profile" not in doc:
            raise ParseError(path, "a GHC -pj JSON object with 'cost_centres' and 'profile'",
                             line=1, found=", ".join(list(doc)[:8]) if isinstance(doc, dict)
                             else type(doc).__name__)
        header = {k: v for k, v in doc.items() if k not in ("cost_centres", "profile")}
        for cc in doc["cost_centres"]:
            try:
                label, module, src = str(cc["label"]), str(cc["module"]), str(cc["src_loc"])
                cc_frame[int(cc["id"])] = interner(label, module, src, 0,
                                                   _kind(label, bool(cc.get("is_caf"))))
            except (KeyError, TypeError, ValueError) as e:
                raise ParseError(path, "cost_centres entries with id, label, module, src_loc",
                                 found=str(cc)[:100]) from e
        try:
            ids, parent, entries, ticks, alloc, depth = (
                tree if tree is not None else _walk_fixed(path, doc["profile"]))
        except OverflowError as e:  # a count like 1e400: JSON has it, int64 cannot
            m = _NON_INT_COUNT.search(text, text.find('"profile"'))
            raise ParseError(path, f"'{m.group(1) if m else 'count'}' as an integer from 0 "
                             "to 2^63-1", line=text.count("\n", 0, m.start()) + 1 if m else
                             None, found=m.group(2) if m else str(e)) from None
        del doc  # the node dicts go now, by reference counting, before the GC runs again
    else:
        header = _tolerant_header(text)
        pstart = text.rfind('"profile"')
        cstart = text.find('"cost_centres"')
        if cstart < 0 or pstart < 0 or pstart < cstart:
            raise _missing_sections(path, text, cstart, pstart, err_line)
        for m in _CC.finditer(text, cstart, pstart):
            label, module, src = (_unescape(m.group(i)) for i in (2, 3, 4))
            cc_frame[int(m.group(1))] = interner(label, module, src, 0,
                                                 _kind(label, m.group(5) == "true"))
        ids, parent, entries, ticks, alloc, depth, open_left = _scan_tree(text, pstart)
        if open_left:
            incomplete_reason = incomplete_reason or (
                f"the JSON ends inside the profile tree (line {_line_of(text, len(text))}); "
                f"{open_left} nodes were still open")
    if progress:
        progress(0.7)
    if not len(ids):
        raise ParseError(path, "a 'profile' tree with at least one node", found="none")

    frame = _frames_of(path, np.asarray(ids, dtype=np.int64), cc_frame, interner, lenient,
                       warnings)
    for name, col in (("entries", entries), ("ticks", ticks), ("alloc", alloc)):
        _check_counts(path, data, name, col, lenient, warnings)
    prof = _build(path, header, interner, np.asarray(parent, np.int32),
                  np.asarray(depth, np.int32), frame, np.asarray(entries, np.int64),
                  np.asarray(ticks, np.int64), np.asarray(alloc, np.int64), warnings,
                  incomplete_reason)
    if progress:
        progress(1.0)
    return prof


# the node token's grammar: what :func:`_node_numbers` reads (its tests check the two agree)
_NODE_TOKEN = re.compile(r'\{"id": ([0-9]+), "entries": ([0-9]+), "alloc": ([0-9]+), '
                         r'"ticks": ([0-9]+), "children": \[')
_TOKEN_TEXT = '{"id": , "entries": , "alloc": , "ticks": , "children": ['  # without digits
_TOKEN_FIXED, _TOKEN_SPACES, _TOKEN_COMMAS = (len(_TOKEN_TEXT), _TOKEN_TEXT.count(" "),
                                              _TOKEN_TEXT.count(","))
_NOT_STRUCTURAL = bytes(c for c in range(256) if c not in b"{}[]")
_LOOSE = b" \n\r\t,]}"  # what may stand between the node tokens
_SLICE = 4 << 20  # bytes of the tree section per :func:`_node_numbers`


def _vector_tree(data: bytes) -> tuple[dict[str, Any], tuple] | None:
    """The tree section read as GHC writes it, without a dict per node.

    GHC prints nodes in pre-order as ``{"id": N, "entries": N, "alloc": N, "ticks": N,
    "children": [ ... ]}``.  One regex pass takes the numbers; a node's depth is ``2k -
    p`` where ``p`` is the position of its ``[`` among the section's brackets.  The
    section is accepted only if nothing but those tokens, ``]}`` pairs and separators
    remain; the header and cost-centre table are parsed by ``json.loads``.  Returns
    (document without the tree, tree columns) or None (then the whole text goes through
    ``json.loads``: other spacing, a cut or invalid file, huge numbers).  Reads the
    file's bytes: only the part above the tree is decoded.
    """
    pstart = data.rfind(b'"profile"')
    colon = data.find(b":", pstart)
    if pstart < 0 or colon < 0:
        return None
    head = data[:pstart].decode("utf-8", "replace").rstrip()
    try:
        doc = _loads_without_gc(head + ' "profile": null}')
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict) or "cost_centres" not in doc:
        return None
    section = data[colon + 1 :]
    if not section.isascii():
        return None
    return _vector_columns(doc, section)


def _vector_columns(doc: dict[str, Any], section: bytes) -> tuple[dict[str, Any], tuple] | None:
    """The tree columns of :func:`_vector_tree` (None when the section is not as expected).

    Acceptance, all by counting: every character of the section is either inside a node
    token or one of ``] } , space newline``; in the order of the structural characters
    each ``{`` is followed by ``[`` (its token) and each ``]`` by ``}``; the brackets
    balance.  That is exactly the grammar GHC writes, so nothing ``json.loads`` would
    reject (or read differently) passes.  The numbers are read a 4 MB slice at a time
    (:func:`_node_numbers`), so the temporary arrays stay small (memory <= a few times
    the file).
    """
    vals_parts: list[np.ndarray] = []
    n = n_digits = 0
    pos, end = 0, len(section)
    while pos < end:  # the section is ASCII: its bytes are its characters
        cut = section.find(b"{", min(pos + _SLICE, end))
        cut = end if cut < 0 else cut
        got = _node_numbers(section[pos:cut])
        pos = cut
        if got is None:
            return None
        vals, digits = got
        if len(vals):
            n += len(vals)
            n_digits += digits
            vals_parts.append(vals)
    if not n:
        return None
    # the separators and closers (one pass: what deleting them takes away), less the
    # spaces and commas inside the tokens
    loose = len(section) - len(section.translate(None, _LOOSE))
    loose -= n * (_TOKEN_SPACES + _TOKEN_COMMAS)
    if len(section) != n * _TOKEN_FIXED + n_digits + loose:
        return None
    struct = np.frombuffer(section.translate(None, _NOT_STRUCTURAL), dtype=np.uint8)
    if len(struct) != 4 * n + 1 or struct[-1] != 125:
        return None
    opens_at = np.flatnonzero(struct == 123)
    closes_at = np.flatnonzero(struct == 93)
    if len(opens_at) != n or len(closes_at) != n or (struct[opens_at + 1] != 91).any() \
            or (struct[closes_at + 1] != 125).any():
        return None
    brackets = struct[(struct == 91) | (struct == 93)]
    balance = np.cumsum(np.where(brackets == 91, 1, -1))
    if balance.min() < 0 or balance[-1] != 0:
        return None
    depth = 2 * np.arange(n, dtype=np.int64) - np.flatnonzero(brackets == 91)
    vals = np.concatenate(vals_parts)
    if len(vals) != n:
        return None
    return doc, (vals[:, 0], [], vals[:, 1], vals[:, 3], vals[:, 2], depth.astype(np.int32))


_KEYS = (b', "entries": ', b', "alloc": ', b', "ticks": ', b', "children": [')
_EDGE = 32  # bytes of zeros around a slice: every window read near its ends stays inside


def _node_numbers(chunk: bytes) -> tuple[np.ndarray, int] | None:
    """The four numbers of every node token ``{"id": N, "entries": N, "alloc": N,
    "ticks": N, "children": [`` in ``chunk`` (k, 4) and their digit count, found with
    numpy: each ``{`` must start such a token, each ``N`` 1-18 digits (else None: the
    careful path decides).  This is :data:`_NODE_TOKEN`'s grammar; the regex made a tuple
    of four strings per node (0.7 s on 10^6 nodes), this makes none.  The grammar has no
    other digits, so the chunk's digit runs are the numbers, four per token, in order."""
    buf = np.zeros(len(chunk) + 2 * _EDGE, dtype=np.uint8)
    buf[_EDGE : _EDGE + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
    opens = np.flatnonzero(buf == 123)
    if not len(opens):
        return np.zeros((0, 4), dtype=np.int64), 0
    digit = (buf - np.uint8(48)) < 10
    edge = np.flatnonzero(digit[1:] != digit[:-1]) + 1  # run starts and ends, in turn
    if len(edge) != 8 * len(opens) or not _literal(buf, opens, b'{"id": '):
        return None
    starts, stops = edge[0::2].reshape(-1, 4), edge[1::2].reshape(-1, 4)
    at = opens + 7
    for f, key in enumerate(_KEYS):  # each number where the token puts it, then its key
        if not np.array_equal(starts[:, f], at):
            return None
        at = stops[:, f]
        if not _literal(buf, at, key):
            return None
        at = at + len(key)
    width = stops - starts
    if width.max() > 18:  # may not fit int64: the careful path says so
        return None
    vals = np.empty((len(opens), 4), dtype=np.int64)
    for f in range(4):
        vals[:, f] = _digits_value(buf, stops[:, f], width[:, f])
    return vals, int(width.sum())


def _literal(buf: np.ndarray, starts: np.ndarray, text: bytes) -> bool:
    """Whether ``text`` is at every one of ``starts`` in ``buf``."""
    want = np.frombuffer(text, dtype=np.uint8)
    return bool((gather(buf, starts, len(text)) == want).all())


def _digit_masks() -> tuple[np.ndarray, np.ndarray]:
    """Per digit count L (0-24): the three little-endian words' masks of the last L of 24
    bytes, and those masks' ``'0'`` bytes (subtracted after masking: no borrow)."""
    keep = np.zeros((25, 24), dtype=np.uint8)
    for n in range(25):
        keep[n, 24 - n :] = 0xFF
    mask = keep.view(np.uint64).copy()
    return mask, mask & np.uint64(0x3030303030303030)


_MASK, _ZEROS = _digit_masks()


def _digits_value(buf: np.ndarray, stop: np.ndarray, width: np.ndarray) -> np.ndarray:
    """The numbers whose ``width`` digits end just before ``stop``: the 24 bytes ending
    there as three words of eight digits, the bytes before the digits masked off
    (:func:`ghc_prof_columns.parse8`)."""
    w = gather(buf, stop - 24, 24).view(np.uint64)
    out = np.zeros(len(stop), dtype=np.int64)
    for j, scale in enumerate((10**16, 10**8, 1)):
        word = w[:, j] & _MASK[width, j]
        word -= _ZEROS[width, j]
        out += parse8(word).view(np.int64) * scale
    return out


def _loads_without_gc(text: str) -> Any:
    """``json.loads`` with the cyclic GC paused: a 10^6-node tree makes ~10^6 dicts, and
    the collections they trigger cost 2.5x the parse itself (none of them is garbage)."""
    with gc_paused():
        return json.loads(text)


def _frames_of(path: Path, ids: np.ndarray, cc_frame: dict[int, int],
               interner: FrameInterner, lenient: bool, warnings: list[str]) -> np.ndarray:
    """Frame id per node from its cost-centre id, by one table look-up for all nodes."""
    known = np.array(sorted(cc_frame), dtype=np.int64)
    pos = np.searchsorted(known, ids)
    ok = pos < len(known)
    ok[ok] = known[pos[ok]] == ids[ok]
    if not ok.all():
        for cid in dict.fromkeys(ids[~ok].tolist()):
            if not lenient:
                raise ParseError(path, f"cost centre id {cid} in the 'cost_centres' table",
                                 found="an unknown id in the profile tree")
            warnings.append(f"tree node with unknown cost-centre id {cid}")
            cc_frame[cid] = interner(f"<unknown cost centre {cid}>", "", "", 0, "cc")
        return _frames_of(path, ids, cc_frame, interner, lenient, [])
    table = np.array([cc_frame[k] for k in known.tolist()], dtype=np.int32)
    return table[pos] if len(ids) else np.zeros(0, dtype=np.int32)


_NODE_FIELDS = operator.itemgetter("id", "entries", "alloc", "ticks", "children")


def _walk_fixed(path: Path, root: Any) -> tuple[Any, ...]:
    """Pre-order walk for nodes with all five keys GHC writes: one C-level item fetch per
    node, no per-node try.  Anything else (a missing key, a non-dict) goes to
    :func:`_walk_dicts`, which applies the defaults and reports bad nodes."""
    ids: list[int] = []
    entries: list[int] = []
    alloc: list[int] = []
    ticks: list[int] = []
    depth: list[int] = []
    stack = [root]
    dstack = [0]
    pop, dpop = stack.pop, dstack.pop
    with gc_paused():
        try:
            while stack:
                i, e, a, t, kids = _NODE_FIELDS(pop())
                d = dpop()
                ids.append(i)
                entries.append(e)
                alloc.append(a)
                ticks.append(t)
                depth.append(d)
                if kids:
                    stack.extend(reversed(kids))
                    dstack.extend([d + 1] * len(kids))
        except (KeyError, TypeError):
            return _walk_dicts(path, root)
    try:  # the columns as int64 at once; odd values (strings, None) take the careful walk
        cols = [np.array(c, dtype=np.int64) for c in (ids, entries, ticks, alloc)]
    except (TypeError, ValueError, OverflowError):
        return _walk_dicts(path, root)
    return cols[0], [], cols[1], cols[2], cols[3], depth


def _walk_dicts(path: Path, root: Any) -> tuple[list[int], ...]:
    """Pre-order walk of the nested node objects with an explicit stack."""
    ids: list[int] = []
    parent: list[int] = []
    entries: list[int] = []
    ticks: list[int] = []
    alloc: list[int] = []
    depth: list[int] = []
    stack: list[tuple[Any, int, int]] = [(root, -1, 0)]
    while stack:
        node, par, d = stack.pop()
        try:
            idx = len(ids)
            ids.append(int(node["id"]))
            entries.append(int(node.get("entries", 0)))
            ticks.append(int(node.get("ticks", 0)))
            alloc.append(int(node.get("alloc", 0)))
            kids = node.get("children", [])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ParseError(path, "profile nodes with id, entries, alloc, ticks, children",
                             found=str(node)[:100]) from e
        parent.append(par)
        depth.append(d)
        for c in reversed(kids):
            stack.append((c, idx, d + 1))
    return ids, parent, entries, ticks, alloc, depth


def _scan_tree(text: str, start: int) -> tuple[list[int], list[int], list[int], list[int],
                                                list[int], list[int], int]:
    """Bracket scanner over the number-only profile section (works on cut files)."""
    ids: list[int] = []
    parent: list[int] = []
    entries: list[int] = []
    ticks: list[int] = []
    alloc: list[int] = []
    depth: list[int] = []
    stack: list[int] = []
    for m in _NODE_EVENT.finditer(text, start):
        body = m.group(1)
        if body is None:
            if stack:
                stack.pop()
            continue
        f = dict(_FIELD.findall(body))
        if "id" not in f:
            continue
        parent.append(stack[-1] if stack else -1)
        depth.append(len(stack))
        stack.append(len(ids))
        ids.append(int(f["id"]))
        entries.append(int(f.get("entries", 0)))
        ticks.append(int(f.get("ticks", 0)))
        alloc.append(int(f.get("alloc", 0)))
    return ids, parent, entries, ticks, alloc, depth, len(stack)


def _build(path: Path, header: dict[str, Any], interner: FrameInterner, parent: np.ndarray,
           depth: np.ndarray, frame: np.ndarray, entries: np.ndarray, ticks: np.ndarray,
           alloc: np.ndarray, warnings: list[str], incomplete_reason: str) -> Profile:
    args = [str(a) for a in header.get("arguments", [])]
    rts = [str(a) for a in header.get("rts_arguments", [])]
    cmd = " ".join(args + (["+RTS", *rts, "-RTS"] if rts else []))
    procs = header.get("initial_capabilities")
    procs = int(procs) if isinstance(procs, (int, float)) and procs > 0 else None
    interval = header.get("tick_interval")
    meta: dict[str, Any] = {
        "program": str(header.get("program", "")),
        "command_line": cmd,
        "date": str(header.get("end_time", "")),
        "tick_interval_us": interval,
        "processors": procs,
        "percent_basis": PERCENT_BASIS_JSON,
        "arguments": args,
        "rts_arguments": rts,
    }
    totals, tt, ta, scale = _program_totals(header, interner, frame, ticks, alloc, procs)
    tree_parent, end = tree_from_depth(depth)
    if len(parent) != len(depth):  # the fast walk leaves parents to the depths
        parent = tree_parent
    iticks = subtree_sums(ticks, end)
    ialloc = subtree_sums(alloc, end)
    tpc = 100.0 / tt if tt > 0 else 0.0
    apc = 100.0 / ta if ta > 0 else 0.0
    cols = {
        "entries": entries,
        "time_pct": ticks * tpc, "alloc_pct": alloc * apc,
        "inherited_time_pct": iticks * tpc, "inherited_alloc_pct": ialloc * apc,
        "ticks": ticks, "bytes": alloc,
        "time_s": ticks * scale, "alloc_bytes": alloc.astype(np.float64),
        "inherited_time_s": iticks * scale, "inherited_alloc_bytes": ialloc.astype(np.float64),
    }
    metrics = [M_ENTRIES, M_TIME_PCT, M_ALLOC_PCT, M_ITIME_PCT, M_IALLOC_PCT, M_TICKS,
               M_BYTES, M_TIME_S, M_ALLOC_B, M_ITIME_S, M_IALLOC_B]
    prof = profile_from_arrays(
        path=str(path), format=FORMAT, frames=interner.table(), parent=parent, frame=frame,
        metrics=metrics, columns=cols, meta=meta, totals=totals,
        total_metrics={k: v for k, v in {**TOTAL_METRICS, **RTS_TOTAL_METRICS}.items()
                       if k in totals},
        incomplete=bool(incomplete_reason), incomplete_reason=incomplete_reason,
        warnings=tuple(warnings), extras={},
        default_metric="inherited_time_pct" if tt > 0 else "inherited_alloc_pct",
        display_metrics=DISPLAY_METRICS,
    )
    prof.offer_subtree_ends(end)  # nodes numbered in the walk's pre-order
    return prof


def _program_totals(header: dict[str, Any], interner: FrameInterner, frame: np.ndarray,
                    ticks: np.ndarray, alloc: np.ndarray, procs: int | None,
                    ) -> tuple[dict[str, float], float, float, float]:
    """Run totals of the program itself, with the RTS's cost centres reported apart.

    Why: the JSON header's totals include the profiler's own ``OVERHEAD_of`` and the
    ``SYSTEM`` cost centre, which can grow by hundreds of MB between two builds whose
    program allocates byte for byte the same.  A ``total.`` gate on the header total would
    fire on that.  Program totals equal the text report's header of the same run.
    Returns (totals, header ticks, header bytes, seconds per tick).
    """
    names = interner.table().name
    rts = np.isin(names[frame], list(SYSTEM_CCS)) if len(frame) else np.zeros(0, bool)
    rts_ticks = float(ticks[rts].sum())
    rts_alloc = float(alloc[rts].sum())
    head_ticks = float(header["total_ticks"]) if "total_ticks" in header else float(ticks.sum())
    head_alloc = float(header["total_alloc"]) if "total_alloc" in header else float(alloc.sum())
    head_time = float(header["total_time"]) if "total_time" in header else np.nan
    interval = header.get("tick_interval")
    scale = time_scale(head_ticks, head_time, float(interval) if interval else None, procs)
    tt = max(head_ticks - rts_ticks, 0.0)
    ta = max(head_alloc - rts_alloc, 0.0)
    totals: dict[str, float] = {}
    if "total_time" in header:
        totals["total_time_s"] = tt * scale
    if "total_ticks" in header:
        totals["total_ticks"] = int(tt)
    if "total_alloc" in header:
        totals["total_alloc_bytes"] = int(ta)
        totals["header_total_alloc_bytes"] = int(head_alloc)
    totals["rts_alloc_bytes"] = int(rts_alloc)
    totals["rts_ticks"] = int(rts_ticks)
    return totals, head_ticks, head_alloc, scale


def _kind(label: str, is_caf: bool) -> str:
    """Frame kind as the text reader gives it: ``system`` for the RTS's cost centres."""
    return "system" if label in SYSTEM_CCS else ("caf" if is_caf else "cc")
