"""perf started before the command line has imported what it needs to read its output.

Why: ``profdiff show`` of a small perf.data is mostly perf's own run (~0.1 s), and the
command's imports before the read (argparse, the options and session modules and the
dataclasses they define, ~40 ms) used to come before perf started.  The command line
(:mod:`viewer.cli`) calls :func:`start` with the file first, right after the interpreter
is up; the read (:func:`parsers.perf_data.read`) then :func:`take`\\ s the running perf
instead of starting its own, while the imports ran beside perf on the other core.

Only the table filter's runs start early (:func:`parsers.perf_data.start_tables`); for
the text path the read takes the workspace (perf's HOME) alone.  Anything that fails
here (no perf, a cut header) is left to the read, which fails with its own messages.  A
run nobody takes (a usage error, another ``--format``) is killed by :func:`discard`.
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
    """Whether perf started here runs and waits to be taken (the command can load what
    it needs after the read beside it)."""
    return any(ws.tables is not None for ws in _started.values())


def looks_like_perf_data(path: str) -> bool:
    """A regular file starting with perf's magic (cheap: one 8-byte read)."""
    from .perf_data import MAGICS

    try:
        with open(path, "rb") as f:
            return f.read(8) in MAGICS
    except OSError:
        return False


def start(path: str | Path, cores: int | None = None, timeout: float | None = None) -> bool:
    """Set up the read of ``path`` as :func:`parsers.perf_data.read` with these ``cores``
    and ``timeout`` (None: its default) would, and start perf's table runs; True when a
    workspace is kept for the read (:func:`take`), with perf running or (for the text
    path, or when perf did not start) without: the read then starts what it needs, but
    does not set up perf's HOME again (a ``perf buildid-cache`` run for binaries beside
    the recording costs ~0.1 s).  Never raises: whatever fails here fails again in the
    read, which says so properly."""
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
    _started[key] = ws._replace(tables=tables if isinstance(tables, perf_data.Tables) else None)
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
