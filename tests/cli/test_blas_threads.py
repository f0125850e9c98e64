"""The profdiff program asks numpy's BLAS for one thread (viewer/blas_threads.py)."""

from __future__ import annotations

from fresh_process import fresh_output

from profdiff.viewer import blas_threads

PROBE = """
import os, sys
from profdiff.viewer.blas_threads import one_blas_thread
{before}
asked = one_blas_thread()
print(asked, os.environ.get("OPENBLAS_NUM_THREADS"), "numpy" in sys.modules)
"""


def _probe(before: str = "", **env: str) -> list[str]:
    return fresh_output(PROBE.format(before=before),
                        lambda k: k in blas_threads.BLAS_THREAD_VARIABLES, **env).split()


def test_a_fresh_program_asks_for_one_thread_before_numpy_is_imported():
    assert _probe() == ["True", "1", "False"]


def test_the_users_own_thread_count_is_kept():
    assert _probe(OPENBLAS_NUM_THREADS="3") == ["True", "3", "False"]


def test_too_late_once_numpy_is_imported_and_the_environment_is_left_alone():
    assert _probe(before="import numpy") == ["False", "None", "True"]
