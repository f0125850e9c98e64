"""Runs that are one Julia ``.mem`` file each, matched as one source file whatever the
``.mem`` files are called (Qt-free).

Why: Julia names a ``.mem`` file after its source (``test.jl.12345.mem``), and the reader
takes the source file's name from it (:mod:`parsers.julia_mem`).  A user who keeps two
runs as ``before.mem`` and ``after.mem`` compared two different "files": every line of
one read "removed" and every line of the other "added" (23 and 23 for gvfn's
``test.jl``), and the stray 32-byte allocation the diff was for was lost among them.
Runs that each hold one source file known only by their ``.mem`` file's name are lines of
one file: each run's source is matched to the baseline's, by a module rule that marks
no row as renamed, and a note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules module is imported only when a rule is made (start-up)
    from profdiff.parsers.model import Profile

    from .rules import ModuleRename

SAME_FILE = "same file"
"""The ``origin`` of these rules: rows they match are not marked as renamed (every row of
the file would be)."""


def same_source_rules(profiles: Sequence[Profile], baseline: int = 0
                      ) -> tuple[list[ModuleRename], str]:
    """(module rules mapping each run's one source file onto the baseline's, the note
    saying so): none unless every run is one ``.mem`` file named after its source
    (``meta["source_from_file_name"]``) and the names differ."""
    found = [p.meta.get("source_from_file_name") for p in profiles]
    names = [n for n in found if isinstance(n, str) and n]
    if len(profiles) < 2 or len(names) < len(found) or len(set(names)) == 1:
        return [], ""
    from .rules import ModuleRename

    base = names[baseline]
    others = [n for n in dict.fromkeys(names) if n != base]
    rules = [ModuleRename(old=n, new=base, prefix=False, origin=SAME_FILE) for n in others]
    files = ", ".join(dict.fromkeys(names))
    return rules, (f"one source file per run, known only by the .mem files' names ({files}): "
                   f"compared line by line as one file, {base}")
