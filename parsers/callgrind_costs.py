"""Vectorised parsing of callgrind cost lines (the bulk of every callgrind file).

A callgrind file is mostly cost lines - ``<subpositions> <cost> <cost> ...`` - with a
spec line (``fn=``, ``cfn=``, ``calls=``, ...) every few lines.  Parsing each cost line
in Python would cost a microsecond a line; instead the reader hands this module the
byte ranges of all cost lines at once and gets back either an exact matrix [cost line,
event column] from pandas' C tokenizer (:func:`cost_matrix`, the usual path) or, for
input that does not fit it, every cost token as (cost line, event column, value), found
and converted with a few whole-buffer numpy passes (:func:`tokenize_costs`, which also
locates bad numbers).

Subpositions (line numbers, addresses, ``+N``/``-N``/``*``) are skipped by position:
profdiff keeps function-level costs, and the function is set by spec lines, so
subposition compression never has to be expanded.  Their first byte was already
checked by the caller (a digit, ``+``, ``-`` or ``*``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MAX_DIGITS = 19  # 10**19 - 1 overflows int64; callgrind counters are 64-bit unsigned


@dataclass(frozen=True)
class CostTokens:
    """Every cost number of the cost lines: ``line`` indexes the caller's cost-line
    arrays, ``column`` is the event column (0 = first event of that line's part)."""

    line: np.ndarray  # int64
    column: np.ndarray  # int64
    value: np.ndarray  # int64
    bad: np.ndarray  # indices (into the three arrays) of tokens that are not decimal
    too_long: np.ndarray  # indices of tokens with more than 19 digits


def tokenize_costs(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   n_positions: np.ndarray) -> CostTokens:
    """Cost tokens of the lines ``buf[starts[i]:ends[i]]`` (every line starts with a
    non-blank byte; ``n_positions[i]`` subposition tokens lead line ``i``)."""
    n = len(buf)
    if len(starts) == 0:
        z = np.zeros(0, dtype=np.int64)
        return CostTokens(z, z, z, z, z)
    mark = np.zeros(n + 1, dtype=np.int8)
    mark[starts] = 1
    mark[ends] = -1  # a line ends on its newline, the next one starts after it: no clash
    inside = np.cumsum(mark[:n], dtype=np.int8).view(bool)
    # in a cost line every byte above the space is a token byte (tab, CR, space are not)
    content = inside & (buf > 32)
    step = np.diff(content.view(np.int8))
    t_start = np.flatnonzero(step == 1) + 1
    t_end = np.flatnonzero(step == -1) + 1
    if content[0]:
        t_start = np.concatenate([[0], t_start])
    if content[-1]:
        t_end = np.append(t_end, n)
    # a cost line starts at the line start with a non-blank byte; later tokens follow a blank
    first = buf[np.maximum(t_start - 1, 0)] == 10
    first[t_start == 0] = True
    line = np.cumsum(first) - 1
    first_idx = np.flatnonzero(first)
    column = np.arange(len(t_start)) - first_idx[line] - n_positions[line]
    keep = column >= 0
    line, column, t_start, t_end = line[keep], column[keep], t_start[keep], t_end[keep]
    value, bad, too_long = parse_uints(buf, t_start, t_end)
    return CostTokens(line, column, value, bad, too_long)


def parse_uints(buf: np.ndarray, s: np.ndarray, e: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decimal values of the tokens ``buf[s:e]``, one digit column at a time over the
    tokens still long enough (most counts are 1-3 digits, so the work shrinks fast).
    Returns (values, indices of tokens with a non-digit, indices of over-long tokens)."""
    length = e - s
    value = np.zeros(len(s), dtype=np.int64)
    bad = np.zeros(len(s), dtype=bool)
    too_long = np.flatnonzero(length > _MAX_DIGITS)
    idx = np.flatnonzero((length > 0) & (length <= _MAX_DIGITS))
    j = 0
    while idx.size:
        d = buf[s[idx] + j].astype(np.int64) - 48
        bad[idx] |= (d < 0) | (d > 9)
        value[idx] = value[idx] * 10 + d
        j += 1
        idx = idx[length[idx] > j]
    # 19 digits can exceed int64 (the loop wraps them negative): let Python judge those
    too_long = np.union1d(too_long, np.flatnonzero(value < 0))
    bad_idx = np.flatnonzero(bad)
    value[bad_idx] = 0
    value[too_long] = 0
    return value, bad_idx, too_long


def _cost_text(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, is_cost: np.ndarray
               ) -> bytes:
    """The cost lines alone, each with its newline (temporaries freed as soon as they
    are used: at 100 MB of input each is tens of MB)."""
    lengths = ends - starts + 1  # with the newline
    lengths[-1] = min(int(lengths[-1]), len(buf) - int(starts[-1]))
    mask = np.repeat(is_cost, lengths)
    del lengths
    picked = buf[mask]
    del mask
    text = picked.tobytes()
    del picked
    return text if text.endswith(b"\n") else text + b"\n"


def _fields(text: bytes, n_lines: int) -> tuple[str, int]:
    """(separator for pandas, number of blank-separated fields in ``text``).

    ``" "`` when the lines are separated by single spaces only (what valgrind writes: no
    tabs, CRs, double or trailing blanks), which pandas splits twice as fast as the
    general whitespace separator ``\\s+``.  The field count lets the caller notice lines
    with surplus numbers, which pandas drops silently when they are not the first."""
    tb = np.frombuffer(text, dtype=np.uint8)
    space = tb == 32
    if np.count_nonzero(tb < 32) == n_lines and not np.any(space[:-1] & (tb[1:] <= 32)):
        return " ", int(np.count_nonzero(space)) + n_lines  # every line starts non-blank
    solid = tb > 32
    return r"\s+", int(solid[0]) + int(np.count_nonzero(solid[1:] & ~solid[:-1]))


def cost_matrix(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, is_cost: np.ndarray,
                n_positions: int, width: int) -> np.ndarray | None:
    """All cost lines at once through pandas' C tokenizer: an int64 matrix [cost line,
    event column], column-contiguous (missing trailing costs are 0), the subposition
    columns skipped unread.  ``None`` when the lines do not fit (more numbers than
    columns, a non-integer or negative cost, a value beyond int64): the caller then
    uses :func:`tokenize_costs`, which locates the problem."""
    import csv
    import io

    import pandas as pd

    n_cost = int(np.count_nonzero(is_cost))
    if n_cost == 0:
        return np.zeros((0, width), dtype=np.int64)
    text = _cost_text(buf, starts, ends, is_cost)
    cols = list(range(n_positions + width))
    sep, n_fields = _fields(text, n_cost)
    try:  # nullable integers: exact, and a missing trailing cost is NA (then 0)
        df = pd.read_csv(io.BytesIO(text), sep=sep, header=None, names=cols,
                         usecols=cols[n_positions:], dtype="Int64", engine="c",
                         quoting=csv.QUOTE_NONE, skip_blank_lines=False)
    except (ValueError, TypeError, OverflowError, pd.errors.ParserError):
        return None
    del text
    # every field is a subposition or a cost in the matrix, else some line has surplus
    # numbers (or too few subpositions): the token path locates it
    if len(df) != n_cost or n_fields != n_cost * n_positions + int(df.count().sum()):
        return None
    m = np.empty((n_cost, width), dtype=np.int64, order="F")
    for j, c in enumerate(cols[n_positions:]):
        m[:, j] = df[c].to_numpy(dtype=np.int64, na_value=0)
    del df
    if m.size and m.min() < 0:
        return None
    return m
