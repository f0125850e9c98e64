"""perf runs started together under one deadline, and their stderr read as one.

Why shared: both ways of reading a perf.data (its text, :mod:`parsers.perf_data`, and
its tables, :mod:`parsers.perf_dlfilter`) run one perf per time slice at once; each must
kill all of them when the deadline passes (and say so), and report every distinct line
they printed once (each slice prints perf's warnings).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from typing import IO


class ProcessGroup:
    """Processes appended to :attr:`procs`, all killed ``timeout`` seconds after
    :meth:`start_clock`; :meth:`close` (always call it) kills and reaps what is left."""

    def __init__(self, timeout: float) -> None:
        self.procs: list[subprocess.Popen] = []
        self.expired = threading.Event()  # set when the deadline killed them
        self._timer = threading.Timer(timeout, self._kill_all)

    def _kill_all(self) -> None:
        self.expired.set()
        for q in self.procs:
            q.kill()

    def start_clock(self) -> None:
        self._timer.start()

    def close(self) -> None:
        self._timer.cancel()
        for q in self.procs:
            if q.poll() is None:
                q.kill()
            q.wait()

    def all_succeeded(self, expected: int) -> bool:
        """All ``expected`` processes started and exited with status 0."""
        return len(self.procs) == expected and not any(q.returncode for q in self.procs)


def distinct_stderr(errs: Sequence[IO[bytes]]) -> str:
    """The text of the (seekable) stderr files, each distinct line once, in order;
    closes them."""
    seen: dict[str, None] = {}
    for e in errs:
        e.seek(0)
        for ln in e.read().decode("utf-8", "replace").splitlines():
            seen.setdefault(ln, None)
        e.close()
    return "\n".join(seen)
