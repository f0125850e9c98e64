"""The interface every reader module provides (a :class:`typing.Protocol`).

A reader is a module in ``parsers/`` that :func:`parsers.detect.readers` discovers by
these names; the protocol states them so a type checker (and a test) can hold every
reader to them:

* ``FORMAT``: the format id (``--format``), e.g. ``"ghc-prof"``;
* ``DESCRIPTION``: one line for help texts and "expected ..." errors;
* ``sniff(head, path) -> float``: how sure the reader is that it reads the file whose
  first bytes (gunzipped) are ``head``: 0 no, 1 certain;
* ``read(path, *, lenient=False, progress=None, **options) -> Profile``: the profile,
  or a :class:`~parsers.errors.ParseError` naming the file and line.  ``options`` are
  reader keywords (``event=`` for perf, ``sample_type=`` for pprof) a reader ignores
  when it does not know them.

Optional: ``ACCEPTS_DIRECTORY = True`` for readers of folders (Julia ``.mem`` files).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .model import Profile


@runtime_checkable
class Reader(Protocol):
    FORMAT: str
    DESCRIPTION: str

    def sniff(self, head: bytes, path: Path) -> float: ...

    def read(self, path: Path, *, lenient: bool = False,
             progress: Callable[[float], None] | None = None, **options: Any) -> Profile: ...
