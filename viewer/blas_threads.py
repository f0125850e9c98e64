"""One BLAS thread for the profdiff program (Qt-free; no numpy import).

Why: numpy's OpenBLAS starts one thread per core when numpy is imported, and each new
thread spins (``blas_thread_server``) for about 0.1 s waiting for work before it sleeps.
profdiff does no linear algebra, so the spinning only took a core from the readers:
``perf record`` of ``profdiff diff`` on the 100 MB hs-ad pair put 6 % of its samples in
``blas_thread_server``, and with one BLAS thread the command took 0.85x the time
(medians of 10 alternating rounds on a 2-core machine).

Set by the program's entry points only (:func:`viewer.cli.main` and
:func:`viewer.qt.app.main` run as the program), before anything imports numpy; a value
the user set is kept, and a process that imports profdiff as a library is left alone.
"""

from __future__ import annotations

import os
import sys

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS",)
"""What numpy's bundled OpenBLAS reads for its thread count (before GOTO_ and OMP_)."""


def one_blas_thread() -> bool:
    """Ask for one BLAS thread unless the user chose a count; False when numpy is already
    imported (its BLAS has started its threads: too late to ask)."""
    if "numpy" in sys.modules:
        return False
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    return True
