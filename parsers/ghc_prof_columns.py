"""Column-wise (numpy) parsing of the fixed-layout rows of a GHC ``.prof`` cost-centre tree.

Used by :mod:`profdiff.parsers.ghc_prof` for the bulk of a report's rows; rows that do not
fit the layout are handed back (line number + bytes) for its per-line parser.

Why it is done this way (a 10^6-row report must parse in a few times the cost of merely
iterating over its lines):

* The rows of one report share a byte layout (found from a sample, :func:`layout_from_sample`):
  the numbers are right-aligned in fixed columns.  Each chunk's rows are grouped by byte
  length, their numeric regions gathered into a small byte matrix and checked column-wise
  by one boolean expression (:class:`RowSpec`), so odd rows cost no Python.
* Numbers are converted eight digits at a time inside 64-bit words (SWAR: three
  multiply-shift-mask steps), straight from the checked matrix while it is in the caches.
* The left part (indent + name + module + SRC) is hashed to 64 bits; each distinct hash
  gets a small integer id the first time it is seen, so only distinct frames are decoded.
* GHC pads columns by characters: a row with ``s`` UTF-8 continuation bytes (non-ASCII
  names) has its numbers ``s`` bytes further right.  Such rows are found from the words
  already gathered for the hash (a byte >= 0x80 in the first ``lw`` bytes), counted, and
  parsed with the others as rows of ``s`` fewer bytes whose numbers start ``s`` bytes
  later (same checks); their left part's hash covers its ``lw + s`` bytes.  Before, they
  went through the per-line parser (43 % of the reader's time with 4 % such rows).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

TABLE_BITS = 16  # slots of the left-part hash table (a few thousand distinct parts)
FIELD_NAMES = ["no.", "entries", "%time2", "%alloc3", "%time4", "%alloc5", "ticks", "bytes"]
MAX_DIGITS = 18  # digits of an int64 field converted without overflow (<= 10^18 - 1)
RAW_OVERFLOW = 17  # the -P ``bytes`` column may overflow its width by up to this much

_M1 = np.uint64(0x00FF00FF00FF00FF)
_M2 = np.uint64(0x0000FFFF0000FFFF)
_M3 = np.uint64(0x00000000FFFFFFFF)


@dataclass
class Layout:
    """Byte columns shared by the rows of one report (found from a sample of rows).

    ``lw``: width of the left part (indent + name + module + SRC, padded); the numeric
    fields are right-aligned and end at ``ends`` (no., entries, 4 percentages, and for
    ``-P`` the ticks); the ``bytes`` column ends at the line end (it may overflow).
    """

    lw: int
    ends: list[int]
    raw: bool


def layout_from_sample(lines_b: list[bytes], k: int) -> Layout | None:
    """The layout most sample rows share (``k`` numeric columns), None if no clear one.

    Columns are counted in characters, as GHC pads them, so that rows with non-ASCII
    names share the layout too: the left part ``lw`` must reach the end of the longest
    SRC of the sample, which may be on such a row (then the ASCII rows' byte columns,
    which equal their character columns, are still the layout's)."""
    raw = k == 8
    nf = 7 if raw else 6
    rows: list[tuple[tuple[int, ...], int]] = []
    for ln_b in lines_b:
        ln = ln_b.decode("utf-8", "replace")
        toks = [(m.start(), m.end()) for m in re.finditer(r"\S+", ln)]
        if len(toks) >= k + 2:
            rows.append((tuple(t[1] for t in toks[-k:][:nf]), toks[-k - 1][1]))
    if not rows:
        return None
    ends, count = Counter(r[0] for r in rows).most_common(1)[0]
    if count < max(1, len(rows) // 4):
        return None
    lw = max(r[1] for r in rows if r[0] == ends)
    if lw >= ends[0] - 1:
        return None
    return Layout(lw, list(ends), raw)


def gather(work: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``work[s : s + width]`` for every start, as one (n, width) uint8 matrix.

    Items of a ``width``-byte void dtype are copied whole (twice as fast as indexing a
    sliding-window view, which copies byte by byte)."""
    items = np.ndarray((len(work) - width + 1,), dtype=np.dtype((np.void, width)),
                       buffer=work, strides=(1,))
    return items[starts].view(np.uint8).reshape(len(starts), width)


def parse8(u: np.ndarray) -> np.ndarray:
    """Eight decimal digits per little-endian word (byte values 0-9, most significant
    first in memory) to their number, in place: pairs, then quads, then the eight, each
    step one multiply (``x * (1 + 10^k * 2^s) >> s`` adds each lane to 10^k times its
    left neighbour; no lane overflows)."""
    u *= np.uint64(1 + (10 << 8))
    u >>= np.uint64(8)
    u &= _M1
    u *= np.uint64(1 + (100 << 16))
    u >>= np.uint64(16)
    u &= _M2
    u *= np.uint64(1 + (10000 << 32))
    u >>= np.uint64(32)
    return u


def _spans(lay: Layout, line_len: int) -> list[tuple[int, int, str]]:
    """(separator, end, kind) of each numeric field, relative to the left part's end."""
    lw = lay.lw
    bounds = lay.ends + ([line_len] if lay.raw else [])
    spans = [(0, bounds[0] - lw, "int")]
    for j in range(1, len(bounds)):
        spans.append((bounds[j - 1] - lw, bounds[j] - lw, "pct" if 2 <= j <= 5 else "int"))
    return spans


class RowSpec:
    """Column checks and digit words for rows of one byte length.

    Every numeric field is a right-aligned span ``[a, b)`` of the region that starts at
    the left part's end: ``a`` is a separator space, ``b - 1`` a digit, percentages have
    their decimal point at ``b - 2``, the rest are digits or leading spaces.  The checks
    are one expression over the whole byte matrix, ``bad = (x & A) ^ (y & B) ^ C`` with
    ``x = not a digit``, ``y = space`` and per-column constants A, B, C, so that odd rows
    cost no Python.  Values are read as the 8-byte words ending at each field's end (and
    8, 16 bytes before), masked to the field's digits (:meth:`values`).
    """

    def __init__(self, lay: Layout, line_len: int) -> None:
        self.key = line_len
        spans = _spans(lay, line_len)
        wr = spans[-1][1]
        self.wr8 = (wr + 7) // 8 * 8
        A = np.zeros(self.wr8, dtype=bool)
        B = np.zeros(self.wr8, dtype=bool)
        C = np.zeros(self.wr8, dtype=bool)
        pair = np.zeros(self.wr8, dtype=bool)  # (c, c+1) inside one field
        dots: list[int] = []
        for a, b, kind in spans:
            A[a + 1 : b] = B[a + 1 : b] = True  # digit or space
            B[b - 1] = False  # digit only
            B[a] = C[a] = True  # space only (separator)
            pair[a : b - 1] = True
            if kind == "pct":
                A[b - 2] = B[b - 2] = False  # the '.' is checked on its own
                dots.append(b - 2)
        self.A, self.B, self.C, self.pair = A, B, C, pair
        self.dots = dots
        # leading columns of int fields too wide for int64: must be spaces (else slow path)
        self.wide = [(a + 1, b - (MAX_DIGITS if kind == "int" else 7))
                     for a, b, kind in spans[1:]
                     if b - a - 1 > (MAX_DIGITS if kind == "int" else 7)]
        # a percentage's word must fit in the region (always so after no. and entries)
        self.usable = all(b >= 8 for _a, b, kind in spans if kind == "pct")
        self.terms = [self._terms(a, b, kind) for a, b, kind in spans[1:]]
        self.pct = [kind == "pct" for _a, _b, kind in spans[1:]]
        self._tiles: dict[str, np.ndarray] = {}

    @staticmethod
    def _terms(a: int, b: int, kind: str) -> list[tuple[int, int, int, int]]:
        """(word offset, left shift, byte mask, power of 10^8) of each 8-byte word of a
        field's digits [a+1, b), last word first.  A percentage is one word ending at
        ``b``: its integer digits (mask ``lo``) move up one byte over the '.', next to
        the tenth (mask in the shift's place), so the word reads as tenths."""
        if kind == "pct":
            lo = 0
            for c in range(max(a + 1, b - 7), b - 2):
                lo |= 0x0F << (8 * (c - (b - 8)))
            return [(b - 8, 0x0F << 56, lo, 0)]
        lo_col = max(a + 1, b - MAX_DIGITS)
        out = []
        hi, q = b, 0
        while hi > lo_col:
            off = max(hi - 8, 0)
            mask = 0
            for p in range(8):
                if max(lo_col, hi - 8) <= off + p < hi:
                    mask |= 0x0F << (8 * p)
            shl = 8 * (8 - (hi - off))  # a word cut by the region's start: move it up
            out.append((off, shl, mask, q))
            hi, q = hi - 8, q + 1
        return out

    def tile(self, name: str, n: int) -> np.ndarray:
        t = self._tiles.get(name)
        if t is None or len(t) < n:
            t = np.tile(getattr(self, name), (max(n, 1), 1))
            self._tiles[name] = t
        return t[:n]

    def check(self, R: np.ndarray) -> np.ndarray:
        """True for the rows of the (n, wr8) byte matrix that fit every field."""
        n = len(R)
        y = R == 32
        bad = (R - np.uint8(48)) > 9
        bad &= self.tile("A", n)
        bad ^= y & self.tile("B", n)
        bad ^= self.tile("C", n)
        # no space right after a digit inside a field
        yf = y.ravel()
        step = np.greater(yf[1:], yf[:-1])  # a space right after a non-space
        step &= self.tile("pair", n).ravel()[:-1]
        bad.ravel()[:-1] |= step
        words = bad.view(np.uint64)
        acc = words[:, 0].copy()
        for c in range(1, words.shape[1]):
            acc |= words[:, c]
        ok = acc == 0
        for c in self.dots:
            ok &= R[:, c] == 46
        for lo, hi in self.wide:
            ok &= (R[:, lo:hi] == 32).all(axis=1)
        return ok

    def values(self, R: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(fields, n) int64 values of checked rows (``R`` contiguous (n, wr8) bytes),
        written to ``out`` if given; percentages in tenths."""
        n = len(R)
        if out is None:
            out = np.empty((len(self.terms), n), dtype=np.int64)
        for fi, terms in enumerate(self.terms):
            acc = out[fi]
            for ti, (off, shl, mask, q) in enumerate(terms):
                word = np.ndarray((n,), dtype="<u8", buffer=R, offset=off, strides=(self.wr8,))
                if self.pct[fi]:  # (integer digits << 8) | tenth; ``shl`` is its mask
                    u = word & np.uint64(mask)
                    u <<= np.uint64(8)
                    u |= word & np.uint64(shl)
                else:
                    u = word & np.uint64(mask)
                    if shl:
                        u <<= np.uint64(shl)
                v = parse8(u).view(np.int64)
                if ti == 0:
                    acc[:] = v
                else:
                    v *= 10 ** (8 * q)
                    acc += v
        return out


def _splitmix64(seed: int, n: int) -> list[int]:
    """``n`` well-mixed 64-bit words from ``seed`` (Vigna's splitmix64): the row hash's
    per-word keys.  Why not ``numpy.random``: importing it costs 12 ms, a tenth of
    ``profdiff show`` of a small ``.prof``, for a few keys."""
    out, mask = [], (1 << 64) - 1
    for _ in range(n):
        seed = (seed + 0x9E3779B97F4A7C15) & mask
        z = seed
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


class FastTree:
    """Parses chunks of tree rows with numpy; rows that do not fit the layout are kept
    (line number + bytes) in ``slow`` for the per-line parser.

    Outputs, in file order: ``lines``/``ids``/``vals`` chunks (line numbers, left-part ids
    into ``reps``, and a (fields, n) value matrix with the fields of ``field_names``).
    """

    def __init__(self, layout: Layout, expect_rows: int = 0) -> None:
        self.lay = layout
        self.nw = (layout.lw + 7) // 8
        self.specs: dict[int, RowSpec] = {}
        keys = np.array(_splitmix64(0x5EED, 2 * self.nw), dtype=np.uint64)
        self.hk = keys[: self.nw] | np.uint64(1)
        self.hk2 = keys[self.nw :] | np.uint64(1)
        rem = layout.lw % 8
        self.lastmask = (np.frombuffer(b"\xff" * rem + b"\x00" * (8 - rem), np.uint64)[0]
                         if rem else None)
        self.field_names = FIELD_NAMES[1 : (8 if layout.raw else 6)]
        # the longest row the layout can take: widest bytes column, shift <= lw
        self.max_len = layout.ends[-1] + (RAW_OVERFLOW if layout.raw else 0) + layout.lw
        # outputs, in file order: the first ``n`` entries of buffers grown on demand
        # (sized from the expected row count: pages never written cost no memory)
        self.n = 0
        cap = max(int(expect_rows), 1024)
        self._line = np.empty(cap, dtype=np.int64)
        self._id = np.empty(cap, dtype=np.int32)
        self._val = np.empty((len(self.field_names), cap), dtype=np.int64)
        self.slow: list[tuple[int, bytes]] = []
        self.reps: list[bytes] = []  # the left part's bytes, per id
        self.rep_line: list[int] = []  # the line number of its first row, per id
        self._known = np.zeros(0, dtype=np.uint64)  # sorted hashes seen so far
        self._known_id = np.zeros(0, dtype=np.int32)
        # and a direct-mapped table of them by their top bits (a gather per row instead
        # of a binary search); a hash whose slot is taken is looked up in the sorted ones
        self._tab_h = np.zeros(1 << TABLE_BITS, dtype=np.uint64)
        self._tab_id = np.full(1 << TABLE_BITS, -1, dtype=np.int32)

    def spec(self, line_len: int) -> RowSpec:
        sp = self.specs.get(line_len)
        if sp is None:
            sp = self.specs[line_len] = RowSpec(self.lay, line_len)
        return sp

    @property
    def has_rows(self) -> bool:
        return self.n > 0

    def feed(self, work: np.ndarray, nbytes: int, line0: int) -> int:
        """Parse the complete lines in ``work[:nbytes]`` (``work`` is zero-padded beyond);
        ``line0`` is the file line number of its first line.  Returns the line count."""
        nl = np.flatnonzero(work[:nbytes] == 10)
        nlines = len(nl)
        if nlines == 0:
            return 0
        starts = np.empty(nlines, dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl
        cr = work[ends - 1] == 13
        if cr.any():
            cr &= ends > starts
            ends = ends - cr
        lens = ends - starts
        out = _Chunk(nlines, line0)
        # Left parts of every line: hashed now.  A non-ASCII byte there marks a shifted
        # row: its first lw bytes are fewer than lw characters.  (A row whose first lw
        # bytes are ASCII has its numbers at lw, where GHC's character columns put them.)
        words = gather(work, np.minimum(starts, len(work) - 8 * self.nw), 8 * self.nw)
        h = self._hash(words.view(np.uint64), self.hk)
        wide = self._non_ascii(words.view(np.uint64))
        if len(wide):
            out.shift[wide] = _continuation_bytes(work, starts[wide], lens[wide],
                                                  self.max_len)
        for L, idx in self._groups(lens - out.shift, np.arange(nlines)):
            self._rows(self.spec(L), work, starts[idx], out.shift[idx], idx, out)
        self._collect(out, work, starts, h)
        for j in np.flatnonzero(~out.ok & (lens > 0)).tolist():
            self.slow.append((line0 + j, bytes(work[starts[j] : ends[j]])))
        return nlines

    def _non_ascii(self, w: np.ndarray) -> np.ndarray:
        """Rows whose first ``lw`` bytes (the (n, nw) words ``w``) hold a non-ASCII byte."""
        acc = np.zeros(len(w), dtype=np.uint64)
        last = self.nw - 1
        for c in range(self.nw):
            col = w[:, c] & self.lastmask if c == last and self.lastmask is not None else w[:, c]
            acc |= col
        acc &= np.uint64(0x8080808080808080)
        return np.flatnonzero(acc)

    def _collect(self, out: _Chunk, work: np.ndarray, starts: np.ndarray,
                 h: np.ndarray) -> None:
        """Append the chunk's fast rows in line order (the parts of the length groups,
        merged by one scatter of their positions when there are several), with the ids
        of their left parts."""
        if not out.parts:
            return
        if len(out.parts) == 1:
            idx, R, spec = out.parts[0]
            a, b = self._reserve(len(idx))
            spec.values(R, self._val[:, a:b])
        else:  # each part's values go straight to their rank among the chunk's rows
            rank = np.cumsum(out.ok) - 1
            idx = np.flatnonzero(out.ok)
            a, b = self._reserve(len(idx))
            dest = self._val[:, a:b]
            for part_idx, R, spec in out.parts:
                at, vals = rank[part_idx], spec.values(R)
                for f in range(len(dest)):  # row by row: (7, n)[:, at] loops 7 at a time
                    dest[f][at] = vals[f]
        st, sh, hh = starts[idx], out.shift[idx], h[idx]
        moved = np.flatnonzero(sh)
        if len(moved):  # a shifted row's left part is lw + s bytes: hash [s, s + lw) too
            st_m, sh_m = st[moved], sh[moved]
            w2 = gather(work, st_m + sh_m, 8 * self.nw).view(np.uint64)
            hh[moved] += (self._hash(w2, self.hk2) * np.uint64(0x9E3779B97F4A7C15)
                          + sh_m.astype(np.uint64))
        hh *= np.uint64(0xBF58476D1CE4E5B9)
        hh ^= hh >> np.uint64(32)
        self._line[a:b] = out.line0 + idx
        self._id[a:b] = self._ids(hh, work, st, sh, out.line0 + idx)

    def _groups(self, lens: np.ndarray, rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The rows by byte length, for the lengths the layout allows (the modal first)."""
        e_last = self.lay.ends[-1]
        lr = lens[rows]
        if not self.lay.raw:
            return [(e_last, rows[lr == e_last])]
        keep = (lr >= e_last + 2) & (lr <= e_last + RAW_OVERFLOW)
        rows, lr = rows[keep], lr[keep]
        if not len(rows):
            return []
        modal = int(np.bincount(lr - e_last).argmax()) + e_last
        is_modal = lr == modal
        groups = [(modal, rows[is_modal])]
        rest, lrest = rows[~is_modal], lr[~is_modal]
        for L in np.unique(lrest).tolist():
            groups.append((L, rest[lrest == L]))
        return groups

    def _rows(self, spec: RowSpec, work: np.ndarray, st: np.ndarray, sh: np.ndarray,
              idx: np.ndarray, out: _Chunk) -> None:
        """Check and convert the rows starting at ``st`` whose numbers sit ``sh`` bytes
        right of the layout's; their values go to ``out`` with their positions ``idx``."""
        if not spec.usable:
            return
        # s <= lw: the two hashed windows [0, lw) and [s, s + lw) cover the left part
        fits = sh <= self.lay.lw
        if not fits.all():
            st, sh, idx = st[fits], sh[fits], idx[fits]
        R = gather(work, st + sh + self.lay.lw, spec.wr8)
        ok = spec.check(R)
        okidx = np.flatnonzero(ok)
        if len(okidx) == 0:
            return
        if len(okidx) < len(st):
            R, idx = R[okidx], idx[okidx]
        out.parts.append((idx, R, spec))
        out.ok[idx] = True

    def _hash(self, w: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Hash of each row's left-part words ``w`` ((n, nw) uint64; bytes past ``lw``
        masked off): the sum over its words of ``m ^ (m >> 29)``, ``m`` the word times a
        per-word odd key.  Word by word on (n,) columns: numpy broadcasting over an
        (n, 11) matrix loops 11 elements at a time and cost 3x more."""
        n = len(w)
        h = np.zeros(n, dtype=np.uint64)
        t = np.empty(n, dtype=np.uint64)
        t2 = np.empty(n, dtype=np.uint64)
        last = self.nw - 1
        for c in range(self.nw):
            col = w[:, c]
            if c == last and self.lastmask is not None:
                np.bitwise_and(col, self.lastmask, out=t2)
                col = t2
            np.multiply(col, keys[c], out=t)
            np.right_shift(t, np.uint64(29), out=t2)
            t ^= t2
            h += t
        return h

    def _ids(self, h: np.ndarray, work: np.ndarray, st: np.ndarray, sh: np.ndarray,
             line_no: np.ndarray) -> np.ndarray:
        """Left-part id of each row (``h`` its final hash): from the table, else from the
        sorted hashes, else a new id (with the part's bytes kept in ``reps``)."""
        slot = (h >> np.uint64(64 - TABLE_BITS)).astype(np.intp)
        ids = self._tab_id[slot]
        hit = self._tab_h[slot] == h
        hit &= ids >= 0
        if not hit.all():
            miss = np.flatnonzero(~hit)
            ids[miss] = self._ids_sorted(h[miss], work, st[miss], sh[miss], line_no[miss])
        return ids

    def _ids_sorted(self, h: np.ndarray, work: np.ndarray, st: np.ndarray, sh: np.ndarray,
                    line_no: np.ndarray) -> np.ndarray:
        """:meth:`_ids` for the rows the table did not answer."""
        pos, hit = self._lookup(h)
        if not hit.all():
            miss = np.flatnonzero(~hit)
            new_h, first = np.unique(h[miss], return_index=True)
            lw = self.lay.lw
            n0 = len(self.reps)
            for j in miss[first].tolist():
                end = int(st[j]) + lw + int(sh[j])
                self.reps.append(bytes(work[int(st[j]) : end]))
                self.rep_line.append(int(line_no[j]))
            new_id = np.arange(n0, n0 + len(new_h), dtype=np.int32)
            all_h = np.concatenate([self._known, new_h])
            all_id = np.concatenate([self._known_id, new_id])
            order = np.argsort(all_h)
            self._known, self._known_id = all_h[order], all_id[order]
            slot = (new_h >> np.uint64(64 - TABLE_BITS)).astype(np.intp)
            free_slot, at = np.unique(slot, return_index=True)
            free = self._tab_id[free_slot] < 0
            self._tab_h[free_slot[free]] = new_h[at[free]]
            self._tab_id[free_slot[free]] = new_id[at[free]]
            pos, hit = self._lookup(h)
        return self._known_id[pos]

    def _lookup(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(self._known) == 0:
            return np.zeros(len(h), dtype=np.int64), np.zeros(len(h), dtype=bool)
        pos = np.searchsorted(self._known, h)
        np.minimum(pos, len(self._known) - 1, out=pos)
        return pos, self._known[pos] == h

    def finish(self) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """(line numbers, left-part ids, values by field name) of all fast rows, in file
        order."""
        n = self.n
        return (self._line[:n], self._id[:n],
                dict(zip(self.field_names, self._val[:, :n], strict=True)))

    def absorb(self, later: FastTree, line_offset: int) -> None:
        """Append what ``later`` parsed from the part of the file after this one's (its
        line numbers counted from 0 there, ``line_offset`` being this part's line count
        from the same origin), as if this tree had read both parts: rows, their left
        parts (one id per distinct part's bytes), and the rows left for the line parser.
        This tree is not fed afterwards."""
        index = {rep: i for i, rep in enumerate(self.reps)}
        remap = np.empty(len(later.reps), dtype=np.int32)
        for j, rep in enumerate(later.reps):
            i = index.get(rep)
            if i is None:
                i = index[rep] = len(self.reps)
                self.reps.append(rep)
                self.rep_line.append(later.rep_line[j] + line_offset)
            remap[j] = i
        lines, ids, vals = later.finish()
        a, b = self._reserve(len(lines))
        self._line[a:b] = lines + line_offset
        self._id[a:b] = remap[ids]
        for f, name in enumerate(self.field_names):
            self._val[f, a:b] = vals[name]
        self.slow.extend((ln + line_offset, raw) for ln, raw in later.slow)

    def _reserve(self, m: int) -> tuple[int, int]:
        """Room for ``m`` more rows; returns their slice bounds."""
        a, b = self.n, self.n + m
        if b > len(self._line):
            cap = max(2 * len(self._line), b)
            self._line = np.resize(self._line, cap)
            self._id = np.resize(self._id, cap)
            val = np.empty((len(self._val), cap), dtype=np.int64)
            val[:, :a] = self._val[:, :a]
            self._val = val
        self.n = b
        return a, b


class _Chunk:
    """Per-chunk state: which lines the fast path took, each line's shift (UTF-8
    continuation bytes left of its numbers), and per length group the (line positions,
    values) of its rows."""

    def __init__(self, nlines: int, line0: int) -> None:
        self.line0 = line0
        self.ok = np.zeros(nlines, dtype=bool)
        self.shift = np.zeros(nlines, dtype=np.int64)
        self.parts: list[tuple[np.ndarray, np.ndarray, RowSpec]] = []


def _continuation_bytes(work: np.ndarray, starts: np.ndarray, lens: np.ndarray,
                        width: int) -> np.ndarray:
    """UTF-8 continuation bytes (10xxxxxx) in each of the lines ``work[s : s + len]``
    (0 for lines longer than ``width``, which no layout row can be)."""
    m = gather(work, np.minimum(starts, len(work) - width), width)
    cont = (m & np.uint8(0xC0)) == np.uint8(0x80)
    cont &= np.arange(width) < lens[:, None]
    out = cont.sum(axis=1, dtype=np.int64)
    out[lens > width] = 0
    return out
