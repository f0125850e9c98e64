"""Bounded waits and data paths for the watch tests (no fixed sleeps beyond what is needed)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

WATCH_DATA = Path(__file__).resolve().parent.parent / "data" / "watch"
SETTLE = 0.25  # debounce used in tests: short, but longer than the pauses between chunks


def wait_for(cond: Callable[[], object], timeout: float = 10.0, interval: float = 0.02):
    """Poll ``cond`` until it is truthy; fail with a clear message at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def copy(rel: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WATCH_DATA / rel, dest)
    return dest


def write_chunks(dest: Path, data: bytes, n: int, pause: float) -> None:
    """Write ``data`` in ``n`` flushed chunks with ``pause`` seconds between them."""
    step = max(1, len(data) // n)
    with open(dest, "wb") as f:
        for i in range(0, len(data), step):
            f.write(data[i : i + step])
            f.flush()
            if i + step < len(data):
                time.sleep(pause)
