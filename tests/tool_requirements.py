"""Optional tools in tests: skip with a reason locally, fail under CI.

Why: ``.ci/run`` installs every tool the suite needs (perf, a C compiler, valgrind, the
demanglers, speedscope-check).  A skip there would hide a broken install step and let a
whole feature go untested, so when ``CI`` is set a missing tool fails the test instead.
Import from any test module: ``from tool_requirements import require, require_tool``.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType

import pytest


def on_ci() -> bool:
    """True when the suite runs under CI (``CI=true``, as ``.ci/run`` is started)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require(ok: bool, reason: str) -> None:
    """Skip (locally) or fail (under CI) the calling test unless ``ok``."""
    if ok:
        return
    if on_ci():
        pytest.fail(f"{reason} — CI=true, and .ci/run installs every tool the tests need",
                    pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_tool(name: str, hint: str = "") -> str:
    """The path of executable ``name`` on PATH, or skip/fail with an install hint."""
    path = shutil.which(name)
    require(path is not None, f"{name} is not installed" + (f" ({hint})" if hint else ""))
    assert path is not None
    return path


def require_module(name: str, hint: str = "") -> ModuleType:
    """Import the optional Python module ``name``, or skip/fail with an install hint."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        require(False, f"Python module {name} is not importable: {e}"
                + (f" ({hint})" if hint else ""))
        raise  # unreachable: require() skipped or failed
