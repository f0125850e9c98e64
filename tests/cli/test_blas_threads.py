"""The profdiff program asks numpy's BLAS for one thread (viewer/blas_threads.py)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profdiff.viewer import blas_threads, cli
from profdiff.viewer.qt import app as qt_app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "ghc-prof" / "ghc-6.12-ann-run-0134-2010-07-02.prof"

PROBE = """
import os, sys
from profdiff.viewer.blas_threads import one_blas_thread
{before}
asked = one_blas_thread()
print(asked, os.environ.get("OPENBLAS_NUM_THREADS"), "numpy" in sys.modules)
"""


def _probe(before: str = "", **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in blas_threads.BLAS_THREAD_VARIABLES}
    out = subprocess.run([sys.executable, "-c", PROBE.format(before=before)], cwd=ROOT,
                         env={**clean, **env}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_fresh_program_asks_for_one_thread_before_numpy_is_imported():
    assert _probe() == ["True", "1", "False"]


def test_the_users_own_thread_count_is_kept():
    assert _probe(OPENBLAS_NUM_THREADS="3") == ["True", "3", "False"]


def test_too_late_once_numpy_is_imported_and_the_environment_is_left_alone():
    assert _probe(before="import numpy") == ["False", "None", "True"]


class _Ended(Exception):
    pass


@pytest.mark.parametrize("entry", ["cli", "app"])
def test_the_program_entry_points_ask_and_a_call_with_arguments_does_not(monkeypatch, entry):
    calls: list[str] = []
    monkeypatch.setattr(blas_threads, "one_blas_thread", lambda: calls.append("asked") or True)

    def ended(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr("profdiff.viewer.options.exit_now", ended)
    monkeypatch.setattr(qt_app, "exit_now", ended)
    args = ["show", str(SMALL)] if entry == "cli" else [str(SMALL), "--no-such-option"]
    main = cli.main if entry == "cli" else qt_app.main
    monkeypatch.setattr(sys, "argv", ["profdiff", *args])
    with pytest.raises((_Ended, SystemExit)):
        main()
    assert calls == ["asked"]
    calls.clear()
    with pytest.raises(SystemExit) if entry == "app" else contextlib.nullcontext():
        main(args)
    assert calls == []
