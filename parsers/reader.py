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
  when it does not know them.  ``cores=N``, given by the session to every reader, is
  how many cores this read may keep busy: its share of :func:`usable_cores` while other
  files are read at the same time (the perf.data reader runs that many perf at once).

Optional: ``ACCEPTS_DIRECTORY = True`` for readers of folders (Julia ``.mem`` files).
"""

from __future__ import annotations

import os
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


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
