"""One malloc arena and a kept heap for the profdiff program (Linux with glibc; Qt-free;
no numpy import).

Why: a comparison of big runs allocates and frees arrays of megabytes each, in several
threads at once (the readers, the loader, the noise estimate, the GUI thread).  glibc
gives each thread an arena of its own, serves big blocks with ``mmap`` and hands freed
memory back to the kernel, so the next array of that size faults in fresh pages, which
the kernel clears first: ``perf record`` of the window opening the 100 MB hs-ad pair put
15 % of its samples in the kernel's ``clear_page_erms``.  With one arena whose heap keeps
up to :data:`KEPT_BYTES` of freed memory for the next array, on a 2-core machine (whole
processes, alternating with the same code without it, medians):

- the window's first paint of that pair: 0.87x the time (10 rounds), system time 0.31 s
  against 0.60 s, peak memory 569 MB against 626 MB;
- ``profdiff diff`` of the pair: 0.92x (10 rounds), peak memory 330 MB against 408 MB;
- ``profdiff show`` of a 10^6-node ``-pj`` file 0.83x, of a 10^6-sample pprof 0.94x, of
  a 100 MB ``.prof`` 0.97x (3 rounds each).

Set by the program's entry points only (:func:`viewer.cli.main` and
:func:`viewer.qt.app.main` run as the program), before numpy is imported; a setting the
user gave in the environment (``MALLOC_ARENA_MAX`` and the like) is kept, and a process
that imports profdiff as a library is left alone.  The cost: up to :data:`KEPT_BYTES` of
freed memory stays with the process until it is reused.
"""

from __future__ import annotations

import os
import sys

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter numbers (``<malloc.h>``)."""

KEPT_BYTES = 256 << 20
"""Blocks smaller than this come from the heap, and this much freed memory at its top is
kept for the next allocation instead of going back to the kernel."""

SETTINGS: tuple[tuple[int, int, str], ...] = (
    (M_ARENA_MAX, 1, "MALLOC_ARENA_MAX"),
    (M_MMAP_THRESHOLD, KEPT_BYTES, "MALLOC_MMAP_THRESHOLD_"),
    (M_TRIM_THRESHOLD, KEPT_BYTES, "MALLOC_TRIM_THRESHOLD_"),
    (M_TOP_PAD, 64 << 20, "MALLOC_TOP_PAD_"),
)
"""(parameter, value, the environment variable through which a user sets it instead)."""


def tune_malloc() -> bool:
    """Apply :data:`SETTINGS` the user did not set; False when nothing was applied: not
    glibc, numpy already imported (its threads and arrays are there: too late to matter),
    or ``mallopt`` refused."""
    if not sys.platform.startswith("linux") or "numpy" in sys.modules:
        return False
    if not glibc_version():
        return False  # musl's mallopt is a stub; other C libraries have other knobs
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    applied = False
    for param, value, env in SETTINGS:
        if env not in os.environ:
            applied = bool(mallopt(param, value)) or applied
    return applied


def glibc_version() -> str:
    """``"glibc 2.36"``, or "" when the C library is not glibc."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError, AttributeError):
        return ""
