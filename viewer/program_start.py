"""What the profdiff program sets up for itself before numpy is imported: one BLAS
thread (:mod:`viewer.blas_threads`), one malloc arena with a kept heap and numpy's arrays
on ordinary pages (:mod:`viewer.memory_settings`).

Called by the program's entry points (:func:`viewer.cli.main`, :func:`viewer.qt.app.main`
run as the program) and by the benchmarks that time the program in-process; never by a
process that imports profdiff as a library, whose threads and allocator are its own.
"""

from __future__ import annotations

from . import blas_threads, memory_settings


def set_up_program() -> None:
    """Every setting, each a no-op once numpy is imported or when the user set it."""
    blas_threads.one_blas_thread()
    memory_settings.tune_malloc()
    memory_settings.small_pages()
