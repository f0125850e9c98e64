"""What a fresh interpreter prints: the program's process settings are made before numpy
is imported, so a test sees them only in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fresh_output(code: str, unset: Callable[[str], bool], **env: str) -> str:
    """Standard output of ``python -c code`` run in the checkout, with the environment's
    variables that ``unset`` names removed and ``env`` added; fails on a non-zero exit."""
    clean = {k: v for k, v in os.environ.items() if not unset(k)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**clean, **env},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()
