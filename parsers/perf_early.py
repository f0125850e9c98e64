"""perf started before the command line has imported what it needs to read its output.

Why: ``profdiff show`` of a small perf.data is mostly perf's own run (~0.1 s), and the
command's imports before the read (argparse, the options and session modules and the
dataclasses they define, ~40 ms) used to come before perf started.  The command line
(:mod:`viewer.cli`) calls :func:`start` with the file first, right after the interpreter
is up; the read (:func:`parsers.perf_data.read`) then :func:`take`\\ s the running perf
instead of starting its own, while the imports ran beside perf on the other core.

Only the table filter's runs start early (:func:`parsers.perf_data.start_tables`);
anything unusual (no perf, a cut header, the text path) starts nothing here and the read
does as it always did, with its own messages.  A run nobody takes (a usage error, another
``--format``) is killed by :func:`discard`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .perf_data import Workspace

_started: dict[tuple[str, int | None, float], Workspace] = {}


def _key(path: Path, cores: int | None, timeout: float) -> tuple[str, int | None, float]:
    return os.path.abspath(path), cores, float(timeout)


def pending() -> bool:
    """Whether a run started here waits to be taken (the command can load what it needs
    after the read beside it)."""
    return bool(_started)


def looks_like_perf_data(path: str) -> bool:
    """A regular file starting with perf's magic (cheap: one 8-byte read)."""
    from .perf_data import MAGICS

    try:
        with open(path, "rb") as f:
            return f.read(8) in MAGICS
    except OSError:
        return False


def start(path: str | Path, cores: int | None = None, timeout: float | None = None) -> bool:
    """Start perf's table runs for ``path`` as :func:`parsers.perf_data.read` with these
    ``cores`` and ``timeout`` (None: its default) would; True when they run.  Never
    raises: whatever fails here fails again in the read, which says so properly."""
    from . import perf_data

    timeout = perf_data.DEFAULT_TIMEOUT_S if timeout is None else timeout
    p = Path(path)
    key = _key(p, cores, timeout)
    if key in _started:
        return True
    try:
        ws = perf_data.open_workspace(p)
    except Exception:  # noqa: BLE001 - the read reports it
        return False
    try:
        tables = perf_data.start_tables(ws, p, cores, timeout)
    except Exception:  # noqa: BLE001 - perf did not start: the read tries again
        tables = None
    if not isinstance(tables, perf_data.Tables):
        ws.tmpdir.cleanup()
        return False
    _started[key] = ws._replace(tables=tables)
    return True


def take(path: Path, cores: int | None, timeout: float) -> Workspace | None:
    """The workspace and running perf :func:`start` made for this read, now the
    caller's (it waits for the runs and removes the folder); None if none."""
    return _started.pop(_key(path, cores, timeout), None)


def discard() -> None:
    """Kill the runs nobody took and remove their folders."""
    from .perf_dlfilter import discard_parts

    while _started:
        _key_, ws = _started.popitem()
        if ws.tables is not None:
            discard_parts(ws.tables.running)
        ws.tmpdir.cleanup()
