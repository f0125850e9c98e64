"""Memory settings of the profdiff program (Qt-free; no numpy import): one malloc arena
and a kept heap (Linux with glibc), and numpy's arrays on ordinary pages.

Why: a comparison of big runs allocates and frees arrays of megabytes each, in several
threads at once (the readers, the loader, the noise estimate, the GUI thread).

- glibc gives each thread an arena of its own, serves big blocks with ``mmap`` and hands
  freed memory back to the kernel, so the next array of that size faults in fresh pages,
  which the kernel clears first: ``perf record`` of the window opening the 100 MB hs-ad
  pair put 15 % of its samples in the kernel's ``clear_page_erms``.
  :func:`tune_malloc` asks for one arena whose heap keeps up to :data:`KEPT_BYTES` of
  freed memory for the next array.
- numpy asks for transparent huge pages for every array of 4 MB or more
  (``madvise(MADV_HUGEPAGE)``), and the window's system time then varied from 0.3 s to
  0.9 s between runs of the same files, with the kernel's supply of free huge pages.
  :func:`small_pages` turns that off (``NUMPY_MADVISE_HUGEPAGE=0``).

Measured on a 2-core machine, whole processes alternating with the same code without the
setting (medians):

- one arena and a kept heap: the window's first paint of the 100 MB hs-ad pair 0.87x the
  time (10 rounds), system time 0.31 s against 0.60 s, peak memory 569 MB against
  626 MB; ``profdiff diff`` of the pair 0.92x (10 rounds), peak memory 330 MB against
  408 MB; ``profdiff show`` of a 10^6-node ``-pj`` file 0.83x, of a 10^6-sample pprof
  0.94x, of a 100 MB ``.prof`` 0.97x (3 rounds each); of a 1.02M-sample perf.data 1.02x,
  its peak memory 494 MB against 445 MB (the kept heap);
- then small pages: the live window's first paint 0.87x [0.82-0.99] (10 rounds), its
  system time 0.36 s [0.32-0.43] against 0.56 s [0.43-0.89]; the ``--screenshot`` first
  paint 0.96x; ``profdiff diff`` 1.03x, ``show`` of the ``-pj`` and pprof files 1.01x
  and 1.02x (6 and 5 rounds).

Set by the program's entry points only (:mod:`viewer.program_start`), before numpy is
imported; a setting the user gave in the environment (``MALLOC_ARENA_MAX``,
``NUMPY_MADVISE_HUGEPAGE`` and the like) is kept, and a process that imports profdiff as
a library is left alone.  The cost: freed memory stays with the process until it is
reused, or until the process goes idle and hands it back (:func:`give_back_freed`).
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


_tuned = False
"""Whether :func:`tune_malloc` applied its settings in this process."""


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
    global _tuned
    applied = False
    for param, value, env in SETTINGS:
        if env not in os.environ:
            applied = bool(mallopt(param, value)) or applied
    _tuned = _tuned or applied
    return applied


def heap_is_kept() -> bool:
    """Whether :func:`tune_malloc` set this process's heap up to keep freed memory (one
    arena, blocks under :data:`KEPT_BYTES` from the heap): what memory faulted in ahead
    of use stays there for the next arrays (:mod:`viewer.heap_prefault`)."""
    return _tuned


def give_back_freed() -> bool:
    """Hand the heap's free memory back to the kernel (glibc's ``malloc_trim``), when
    :func:`tune_malloc` made the heap keep it; True when some was given back.

    Why: what a comparison no longer shown freed stays with the process for the next
    arrays; a window left open, or a watched folder, should not hold it.  Called when
    the process goes idle (the window a few seconds after it shows a comparison,
    ``watch`` after each landed run): on the 100 MB hs-ad pair, freed after a tree
    comparison and its estimate, the process went from 361 MB to 37 MB resident in
    14 ms."""
    if not _tuned:
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL(None).malloc_trim(0))
    except (OSError, AttributeError):
        return False


NUMPY_HUGEPAGE_VARIABLE = "NUMPY_MADVISE_HUGEPAGE"
"""What numpy reads, when it is imported, for whether to ask for huge pages."""


def small_pages() -> bool:
    """Ask numpy for ordinary pages unless the user chose; False when numpy is already
    imported (it read its setting then: too late to ask)."""
    if "numpy" in sys.modules:
        return False
    os.environ.setdefault(NUMPY_HUGEPAGE_VARIABLE, "0")
    return True


def glibc_version() -> str:
    """``"glibc 2.36"``, or "" when the C library is not glibc."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError, AttributeError):
        return ""
