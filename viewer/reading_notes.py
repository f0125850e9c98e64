"""Notes on how runs were read that qualify every number compared (Qt-free): said once
in ``diff``'s header, the Summary's notes and the HTML report, beside the warnings of
:func:`viewer.compare.incomparable_warnings`."""

from __future__ import annotations

from collections.abc import Sequence

from profdiff.parsers.model import Profile

ALLOCATIONS_SAMPLED = (
    "allocation counts read as samples: Profile.Allocs records a sample of the "
    "allocations (sample_rate 0.1 by default) and PProf.jl does not write the rate; if "
    "every allocation was recorded, --alloc-sample-rate 1 (in the app: File ▸ Reading "
    "options) judges them as exact")


def reading_notes(runs: Sequence[Profile]) -> list[str]:
    """The notes that apply to ``runs`` (each once).

    Why said: a Julia allocation profile's counts are judged as samples by default, so a
    5 -> 6 change in one row reads "within sampling error"; a user who recorded every
    allocation must learn that one option makes it exact."""
    out = []
    if any(p.meta.get("allocations_sampled") for p in runs):
        out.append(ALLOCATIONS_SAMPLED)
    return out


READER_WARNINGS_SHOWN = 3
"""Reader warnings said per run beside a comparison; ``profdiff show FILE`` lists all."""


def reader_warnings(runs: Sequence[Profile], labels: Sequence[str]) -> list[str]:
    """Each run's reader warnings (skipped lines, binaries not found, a cut header), the
    first few per run, named by ``[i] label``.

    Why beside every comparison: they qualify the numbers (frames shown as [unknown],
    lines not counted), and ``diff`` and the Summary said none of them."""
    out = []
    for i, p in enumerate(runs):
        for w in p.warnings[:READER_WARNINGS_SHOWN]:
            out.append(f"[{i}] {labels[i]}: {w}")
        if len(p.warnings) > READER_WARNINGS_SHOWN:
            out.append(f"[{i}] {labels[i]}: ... and {len(p.warnings) - READER_WARNINGS_SHOWN}"
                       f" more (profdiff show {p.path} lists them)")
    return out
