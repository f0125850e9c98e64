"""The profdiff program asks glibc for one malloc arena and a kept heap
(viewer/memory_settings.py), before numpy is imported, leaving what the user set alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profdiff.viewer import memory_settings
from profdiff.viewer.memory_settings import SETTINGS, glibc_version

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import ctypes, sys
from profdiff.viewer import memory_settings
calls = []

class FakeLibc:
    def mallopt(self, param, value):
        calls.append((param, value))
        return 1

ctypes.CDLL = lambda name: FakeLibc()  # what the program would ask, without asking it
memory_settings.glibc_version = lambda: "glibc 2.36"
sys.platform = "linux"
{before}
print(memory_settings.tune_malloc(), calls, "numpy" in sys.modules)
"""


def _probe(before: str = "", **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", PROBE.format(before=before)], cwd=ROOT,
                         env={**clean, **env}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _asked(skip: tuple[str, ...] = ()) -> list[tuple[int, int]]:
    return [(param, value) for param, value, env in SETTINGS if env not in skip]


def test_a_fresh_program_asks_for_every_setting_before_numpy_is_imported():
    assert _probe() == f"True {_asked()} False"
    assert (memory_settings.M_ARENA_MAX, 1) in _asked()


def test_a_setting_the_user_gave_is_kept():
    assert _probe(MALLOC_ARENA_MAX="4") == f"True {_asked(('MALLOC_ARENA_MAX',))} False"


def test_too_late_once_numpy_is_imported():
    assert _probe(before="import numpy") == "False [] True"


def test_not_glibc_asks_nothing():
    assert _probe(before="memory_settings.glibc_version = lambda: ''") == "False [] False"


@pytest.mark.skipif(not glibc_version(), reason="the C library is not glibc")
def test_glibc_takes_the_settings():
    out = subprocess.run(
        [sys.executable, "-c", "from profdiff.viewer.memory_settings import tune_malloc; "
         "print(tune_malloc())"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")})
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


PAGES = """
import os, sys
from profdiff.viewer.memory_settings import small_pages
{before}
asked = small_pages()
import numpy
from numpy._core import multiarray
print(asked, os.environ.get("NUMPY_MADVISE_HUGEPAGE"), multiarray._get_madvise_hugepage())
"""


def _pages(before: str = "", **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", PAGES.format(before=before)], cwd=ROOT,
                         env={**clean, **env}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_numpy_is_asked_for_ordinary_pages_before_it_is_imported():
    assert _pages() == ["True", "0", "False"]


def test_the_users_own_huge_page_choice_is_kept():
    assert _pages(NUMPY_MADVISE_HUGEPAGE="1") == ["True", "1", "True"]


def test_huge_pages_are_left_alone_once_numpy_is_imported():
    assert _pages(before="import numpy") == ["False", "None", "True"]


class _Ended(Exception):
    pass


SMALL = ROOT / "tests" / "data" / "ghc-prof" / "ghc-6.12-ann-run-0134-2010-07-02.prof"


@pytest.mark.parametrize("entry", ["cli", "app"])
def test_the_program_entry_points_set_memory_up_and_a_call_with_arguments_does_not(monkeypatch, entry):
    from profdiff.viewer import cli
    from profdiff.viewer.qt import app as qt_app

    calls: list[str] = []
    monkeypatch.setattr(memory_settings, "tune_malloc", lambda: calls.append("tuned") or True)
    monkeypatch.setattr(memory_settings, "small_pages", lambda: calls.append("pages") or True)

    def ended(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr("profdiff.viewer.options.exit_now", ended)
    monkeypatch.setattr(qt_app, "exit_now", ended)
    args = ["show", str(SMALL)] if entry == "cli" else [str(SMALL), "--no-such-option"]
    main = cli.main if entry == "cli" else qt_app.main
    monkeypatch.setattr(sys, "argv", ["profdiff", *args])
    with pytest.raises((_Ended, SystemExit)):
        main()
    assert calls == ["tuned", "pages"]
    calls.clear()
    with pytest.raises(SystemExit) if entry == "app" else _no_raise():
        main(args)
    assert calls == []


def _no_raise():
    import contextlib

    return contextlib.nullcontext()
