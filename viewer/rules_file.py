"""Where a comparison's rename rules live: ``.profdiff.toml`` beside the runs.

Why its own module: every command looks for the file, and most find none; looking
must not import the rules themselves (TOML, regular expressions, dataclasses: ~20 ms
of a 0.25 s ``profdiff show``).  :mod:`viewer.rules` reads what is found.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

RULES_FILE = ".profdiff.toml"


def find_rules_file(paths: Iterable[str | Path]) -> Path | None:
    """The first ``.profdiff.toml`` in the folders of the given runs (baseline first)."""
    for p in paths:
        folder = Path(p) if Path(p).is_dir() else Path(p).parent
        cand = folder / RULES_FILE
        if cand.is_file():
            return cand
    return None
