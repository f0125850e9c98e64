"""Alignment of two instruction sequences: a longest common subsequence, bit-parallel.

Why not :class:`difflib.SequenceMatcher`: with its junk heuristic off (needed, because
``mov``/``nop`` lines are frequent and must still match) it is quadratic in Python and
took seconds at 6k x 6k (see tests/bench/bench_annotate.py).  The bit-vector LCS of
Allison-Dix/Hyyrö processes one row of the dynamic-programming table per instruction of
B as a few operations on a Python integer of len(A) bits, which run in C, then walks
back through the stored rows.  Tokens are the normalised instruction strings mapped to
integers; the common prefix and suffix are matched first (the usual case for builds that
differ in a few places).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

Pair = tuple[int | None, int | None]


def align(a: Sequence[str], b: Sequence[str], filler: frozenset[str] = frozenset()) -> list[Pair]:
    """Pairs ``(i, j)`` in order; ``(i, None)`` = removed from A, ``(None, j)`` = inserted.

    Tokens in ``filler`` (alignment padding: ``nop``) match only inside the common prefix
    and suffix; elsewhere they would pair up padding of unrelated code.
    """
    n, m = len(a), len(b)
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        hi += 1
    mid_a: list[Any] = list(a[lo:n - hi])
    mid_b: list[Any] = list(b[lo:m - hi])
    if filler:
        mid_a = [(t, "a", k) if t in filler else t for k, t in enumerate(mid_a)]
        mid_b = [(t, "b", k) if t in filler else t for k, t in enumerate(mid_b)]
    middle = _lcs_pairs(mid_a, mid_b)
    out: list[Pair] = [(k, k) for k in range(lo)]
    ia, jb = 0, 0
    for i, j in middle:
        out += [(lo + x, None) for x in range(ia, i)]
        out += [(None, lo + y) for y in range(jb, j)]
        out.append((lo + i, lo + j))
        ia, jb = i + 1, j + 1
    out += [(lo + x, None) for x in range(ia, n - lo - hi)]
    out += [(None, lo + y) for y in range(jb, m - lo - hi)]
    out += [(n - hi + k, m - hi + k) for k in range(hi)]
    return out


def _lcs_pairs(a: Sequence, b: Sequence) -> list[tuple[int, int]]:
    """Matched index pairs of one longest common subsequence of ``a`` and ``b``."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    masks: dict = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << n) - 1
    v = full
    rows = [v]  # rows[j]: bit i is 0 where LCS(a[:i+1], b[:j]) > LCS(a[:i], b[:j])
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif (rows[j] >> (i - 1)) & 1:
            i -= 1  # L[i-1][j] == L[i][j]: a[i-1] is not needed
        else:
            j -= 1
    pairs.reverse()
    return pairs


_REGISTER = re.compile(r"%([a-z][a-z0-9]*)")
_WIDTH = (  # (pattern, class): x86-64 register names by the width they name
    (re.compile(r"r(?:[0-9]+|[a-ds][xi]|[sb]p|di)$"), "q"),  # rax..rdi, rsp, rbp, r8..r15
    (re.compile(r"r[0-9]+d$|e(?:[a-ds][xi]|[sb]p|di)$"), "d"),
    (re.compile(r"r[0-9]+w$|[a-d]x$|[sd]i$|[sb]p$"), "w"),
    (re.compile(r"r[0-9]+b$|[a-d][lh]$|(?:si|di|bp|sp)l$"), "b"),
    (re.compile(r"([xyz]mm|k|st|cr|dr)[0-9]*$"), ""),  # the kind itself: xmm, ymm, k...
)


def _register_class(m: re.Match) -> str:
    name = m.group(1)
    if name == "rip":
        return "%rip"  # an address relative to the code, not a register choice
    for pattern, cls in _WIDTH:
        hit = pattern.match(name)
        if hit:
            return f"%R{cls or hit.group(1)}"
    return f"%{name}"  # segment and other named registers stay as they are


def register_shape(token: str) -> str:
    """An instruction's normalised form with its registers abstracted to their width
    (AT&T ``%rax`` -> ``%Rq``, ``%ebx`` -> ``%Rd``): ``add %r12,%rax`` and ``add
    %r14,%rax`` have one shape; ``mov %rcx,N(%rip)`` and ``mov %ebx,N(%rip)`` do not
    (a 64-bit and a 32-bit store are not the same instruction with other registers)."""
    return _REGISTER.sub(_register_class, token)


def align_refined(a: Sequence[str], b: Sequence[str],
                  filler: frozenset[str] = frozenset(),
                  shape: Callable[[str], str] = register_shape) -> list[Pair]:
    """:func:`align`, then each stretch left unpaired on both sides (between two exact
    matches) aligned again by ``shape``.

    Why: a compiler that allocates registers differently changes most instructions of
    a hot loop by their registers only; matched exactly, the dispatch loop of the c-vm
    pair read as 7 instructions removed and 17 added, so ``add %r12,%rax`` (13.0 % of A)
    stood beside nothing instead of its twin ``add %r14,%rax`` (2.9 % of B).  The second
    pass stays inside one stretch, so it never crosses code that matched exactly."""
    out: list[Pair] = []
    gap_a: list[int] = []
    gap_b: list[int] = []

    def flush() -> None:
        if gap_a and gap_b:
            sub = align([shape(a[i]) for i in gap_a], [shape(b[j]) for j in gap_b], filler)
            out.extend((None if x is None else gap_a[x], None if y is None else gap_b[y])
                       for x, y in sub)
        else:
            out.extend((i, None) for i in gap_a)
            out.extend((None, j) for j in gap_b)
        gap_a.clear()
        gap_b.clear()

    for i, j in align(a, b, filler):
        if i is not None and j is not None:
            flush()
            out.append((i, j))
        elif i is not None:
            gap_a.append(i)
        elif j is not None:
            gap_b.append(j)
    flush()
    return out
