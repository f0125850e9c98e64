"""Checked conversion of the numbers readers take from a file.

Counts, bytes and ticks end up in ``int64`` / ``float64`` numpy columns.  A value that
does not fit (2^63 and more), is not a number, or is negative where a count cannot be,
must become a located error naming the field and the value - not an ``OverflowError``
deep in numpy with no file or line.  Readers call :func:`count` / :func:`amount` per
field and turn :class:`BadValue` into a :class:`~parsers.errors.ParseError` (or a
skipped line under ``--lenient``) with :func:`located`.
"""

from __future__ import annotations

import math
from os import PathLike

from .errors import ParseError

INT64_MAX = 2**63 - 1


class BadValue(ValueError):
    """One field's value is out of range or not a number (the reader adds file and line)."""

    def __init__(self, field: str, value: str, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{field}: expected {expected}, found {value!r}")


def count(text: str | bytes | int, field: str, *, signed: bool = False) -> int:
    """An integer count that fits an int64 (``signed=False``: also >= 0)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    try:
        v = int(text)
    except (TypeError, ValueError):
        raise BadValue(field, str(text), "an integer") from None
    lo = -INT64_MAX - 1 if signed else 0
    if v < lo or v > INT64_MAX:
        raise BadValue(field, str(text), "an integer from 0 to 2^63-1" if not signed
                       else "an integer within ±2^63")
    return v


def amount(text: str | bytes | float, field: str, *, signed: bool = False) -> float:
    """A finite real amount (seconds, bytes, percent); ``signed=False``: also >= 0."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise BadValue(field, str(text), "a number") from None
    if not math.isfinite(v) or abs(v) >= 2.0**63 or (v < 0 and not signed):
        raise BadValue(field, str(text), "a finite number >= 0 and below 2^63" if not signed
                       else "a finite number within ±2^63")
    return v


def located(path: str | PathLike[str] | None, line: int | None, e: BadValue) -> ParseError:
    """The ParseError for ``e`` at ``path:line``."""
    return ParseError(path, f"{e.field} as {e.expected}", line=line, found=e.value)
