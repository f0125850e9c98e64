"""Fault in heap memory ahead of use, on the core a thread would leave idle.

Why: the live window aligns the tree in its loader thread while the GUI thread waits, and
then builds its views, ranks the changes and paints on the GUI thread alone: for ~0.3 s
one of two cores is idle.  Meanwhile both threads ask for fresh memory (on the 100 MB
hs-ad pair the heap grew by ~130 MB between the second file's read and the first paint),
and each new page costs a fault in which the kernel clears it: ~2.8 us a page on the
2-core machine, ~20,000 faults and ~55 ms of the 170 ms between the comparison's
arrival and the paint.

:func:`start` asks for such a block of the kept heap (:func:`memory_settings.heap_is_kept`)
in a thread of its own, has the kernel fill its pages in one call
(``madvise(MADV_POPULATE_WRITE)``, Linux 5.14: ~1.8 us a page, no page written by us)
and frees it: the heap keeps those pages, and the arrays the alignment and the first paint
allocate next reuse them instead of faulting.  Where that cannot work (another C library,
a heap that gives freed memory back, an older kernel) it does nothing: the pages fault in
where they are used, as before.
"""

from __future__ import annotations

import mmap
import threading

from .memory_settings import KEPT_BYTES, heap_is_kept

MADV_POPULATE_WRITE = 23
"""Linux's ``madvise`` advice number (``<linux/mman.h>``, 5.14 and later)."""

BYTES_PER_ROW = 192
"""Memory faulted in per node of the largest run.  The 100 MB hs-ad pair's live window
(0.65 M nodes a run, 0.71 M rows) faulted ~20,000 pages between the comparison's arrival
and its first paint with 64 MB faulted in ahead, ~6,000 with 96 MB, ~750 with 128 MB."""

MIN_BYTES = 16 << 20
"""Less than this is not worth a thread: a small comparison faults little."""

MAX_BYTES = KEPT_BYTES // 2
"""At most this much.  Freed, the block and the heap's 64 MB top pad
(:data:`memory_settings.SETTINGS`) stay under the trim threshold (:data:`KEPT_BYTES`), which
would otherwise give the pages straight back to the kernel."""


def bytes_for(rows: int) -> int:
    """How much to fault in ahead of a comparison of ``rows`` rows (0: nothing)."""
    want = min(rows * BYTES_PER_ROW, MAX_BYTES)
    return want if want >= MIN_BYTES else 0


def start(nbytes: int) -> threading.Thread | None:
    """Fault in ``nbytes`` of the kept heap in a daemon thread; None when there is nothing
    to do (no kept heap, or ``nbytes`` 0)."""
    if nbytes <= 0 or not heap_is_kept():
        return None
    t = threading.Thread(target=populate, args=(min(nbytes, MAX_BYTES),),
                         name="profdiff-prefault", daemon=True)
    t.start()
    return t


def populate(nbytes: int) -> bool:
    """Allocate ``nbytes`` from the heap, have the kernel fault its pages in, free it;
    True when the kernel did (the C calls release the interpreter's lock)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        malloc, free, madvise = libc.malloc, libc.free, libc.madvise
    except (OSError, AttributeError):
        return False
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    p = malloc(nbytes)
    if not p:
        return False
    try:
        page = mmap.PAGESIZE
        first = -(-p // page) * page  # whole pages inside the block only
        length = (p + nbytes - first) // page * page
        return length > 0 and madvise(first, length, MADV_POPULATE_WRITE) == 0
    finally:
        free(p)
