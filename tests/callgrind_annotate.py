"""Run valgrind's ``callgrind_annotate`` and read its function table (test helper).

It is the independent tool the callgrind reader is checked against: its
``PROGRAM TOTALS`` line and one row per ``file:function [object]`` with one column
per event (``.`` for zero).  It keys functions by the *current* file, so code inlined
from a header (``fi=``) gets a row of its own; the tests therefore compare costs summed
per function name.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_PCT = re.compile(r"\(\s*[\d.]+%\)")


def annotate(tool: str, path: Path, events: list[str], *, inclusive: bool = False
             ) -> tuple[list[int], list[tuple[str, list[int]]]]:
    """(program totals, [(row text, costs)]) from ``callgrind_annotate``."""
    out = subprocess.run(
        [tool, "--threshold=100", "--auto=no", f"--inclusive={'yes' if inclusive else 'no'}",
         str(path)],
        capture_output=True, text=True, check=True, cwd=path.parent,
    ).stdout.splitlines()
    totals: list[int] | None = None
    rows: list[tuple[str, list[int]]] = []
    in_table = False
    n = len(events)
    for line in out:
        text = _PCT.sub(" ", line)
        if "PROGRAM TOTALS" in text:
            totals = _numbers(text.split()[:n])
        elif text.rstrip().endswith("file:function"):
            in_table = True
        elif in_table and text.startswith("---"):
            continue
        elif in_table and not text.strip():
            if rows:
                break
        elif in_table:
            parts = text.split(None, n)
            rows.append((parts[n].strip(), _numbers(parts[:n])))
    assert totals is not None, "no PROGRAM TOTALS line in callgrind_annotate output"
    return totals, rows


def _numbers(tokens: list[str]) -> list[int]:
    return [0 if t == "." else int(t.replace(",", "")) for t in tokens]


def function_name(row: str, objects: set[str]) -> str:
    """The function part of ``file:function [object]``."""
    for ob in objects:
        if ob and row.endswith(f" [{ob}]"):
            row = row[: -len(ob) - 3]
            break
    return row.split(":", 1)[1] if ":" in row else row
