"""The profdiff program asks glibc for one malloc arena and a kept heap, and numpy for
ordinary pages (viewer/memory_settings.py), before numpy is imported, leaving what the
user set alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_process import fresh_output

from profdiff.viewer import memory_settings
from profdiff.viewer.memory_settings import SETTINGS, glibc_version

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
    return fresh_output(PROBE.format(before=before), lambda k: k.startswith("MALLOC_"), **env)


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
    code = "from profdiff.viewer.memory_settings import tune_malloc; print(tune_malloc())"
    assert fresh_output(code, lambda k: k.startswith("MALLOC_")) == "True"


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
    return fresh_output(PAGES.format(before=before),
                        lambda k: k == "NUMPY_MADVISE_HUGEPAGE", **env).split()


def test_numpy_is_asked_for_ordinary_pages_before_it_is_imported():
    assert _pages() == ["True", "0", "False"]


def test_the_users_own_huge_page_choice_is_kept():
    assert _pages(NUMPY_MADVISE_HUGEPAGE="1") == ["True", "1", "True"]


def test_huge_pages_are_left_alone_once_numpy_is_imported():
    assert _pages(before="import numpy") == ["False", "None", "True"]


GIVE_BACK = """
import os
from profdiff.viewer import memory_settings

def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

before = memory_settings.give_back_freed()  # nothing kept yet: not tuned
memory_settings.tune_malloc()
blocks = [b"\x01" * (40 << 20) for _ in range(3)]  # 120 MB, every page written
alive = b"\x02" * (1 << 20)  # what stays allocated above them, as a window's data does
del blocks
kept = resident_mb()
given = memory_settings.give_back_freed()
print(before, given, round(kept), round(resident_mb()))
"""


@pytest.mark.skipif(not glibc_version() or not Path("/proc/self/statm").exists(),
                    reason="glibc's heap and /proc's resident size")
def test_the_kept_heap_goes_back_to_the_kernel_when_asked():
    """Freed blocks stay with a tuned process (the next arrays reuse them) until it hands
    them back, as the window does when idle and ``watch`` after each run; an untuned
    process has nothing to hand back."""
    before, given, kept, after = fresh_output(
        GIVE_BACK, lambda k: k.startswith("MALLOC_")).split()
    assert (before, given) == ("False", "True")
    assert int(kept) >= 120 and int(after) < int(kept) - 100
