"""What the window's reading options can be set to, read from the runs open (Qt-free).

Why: every reader option of the command line (``--event``, ``--sample-type``,
``--alloc-sample-rate``, ``--group-by``, ``--split-by``, ``--demangle``, ``--profile``,
``--lenient``) must be reachable by a user who opened files by dragging them onto the
window.  The dialog offers the values the open files actually have (a perf file's events
with their sample counts, a pprof file's sample types, a speedscope file's profiles), so a
choice cannot name something no run has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from profdiff.parsers.model import Profile

from .options import READER_OPTIONS

PERF_FORMATS = frozenset({"perf-script", "perf-data"})
GROUP_BY = ("symbol+dso", "symbol")
SPLIT_BY = (None, "comm", "pid")


@dataclass(frozen=True)
class ReadingChoices:
    """The choices the open runs offer, each as (value, label) pairs in file order.

    ``events``: perf events with their samples summed over the runs; ``sample_types``:
    pprof sample types; ``profiles``: speedscope profiles by name; ``julia_allocs``: a
    run is a Julia allocation profile (PProf.jl Allocs), whose sample rate matters;
    ``formats``: the runs' formats (empty: no run open, every option applies to the files
    opened next)."""

    formats: frozenset[str]
    events: tuple[tuple[str, str], ...] = ()
    sample_types: tuple[tuple[str, str], ...] = ()
    profiles: tuple[tuple[str, str], ...] = ()
    julia_allocs: bool = False

    def applies(self, section: str) -> bool:
        """Whether the dialog's ``section`` ('perf', 'pprof', 'speedscope', 'julia')
        concerns a run open (every section does when none is)."""
        if not self.formats:
            return True
        if section == "perf":
            return bool(self.formats & PERF_FORMATS)
        if section == "julia":
            return self.julia_allocs
        return section in self.formats


def reading_choices(runs: Sequence[Profile]) -> ReadingChoices:
    """The choices of :class:`ReadingChoices` for ``runs``."""
    events: dict[str, int] = {}
    types: dict[str, str] = {}
    profiles: dict[str, str] = {}
    allocs = False
    for p in runs:
        for name, n in (p.meta.get("events") or {}).items():
            events[str(name)] = events.get(str(name), 0) + int(n)
        for t in p.meta.get("sample_types") or ():
            types.setdefault(str(t[0]), f"{t[0]} ({t[1]})")
        for info in p.meta.get("profiles") or ():
            name = str(info.get("name") or info.get("index"))
            profiles.setdefault(name, f"{info.get('index')}: {name} ({info.get('type')})")
        allocs = allocs or _is_julia_allocs(p)
    return ReadingChoices(
        formats=frozenset(p.format for p in runs),
        events=tuple((e, f"{e} ({n:,} samples)") for e, n in events.items()),
        sample_types=tuple(types.items()),
        profiles=tuple(profiles.items()),
        julia_allocs=allocs)


def _is_julia_allocs(p: Profile) -> bool:
    """A PProf.jl allocation profile, read as samples or (``alloc_sample_rate`` 1) not."""
    if p.format != "pprof":
        return False
    from profdiff.parsers.pprof import is_julia_allocs

    types = [(str(t[0]), str(t[1])) for t in p.meta.get("sample_types") or ()]
    period = tuple(p.meta.get("period_type") or ())
    return is_julia_allocs(types, (str(period[0]), str(period[1])) if len(period) == 2
                           else ("", ""))


def clean_reader_options(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """``options`` as :attr:`SessionSpec.reader_options` holds them: only known reader
    keywords, unset ones (None, '', False) dropped, sorted as the command line's are."""
    out = {}
    for k, v in options.items():
        if k not in READER_OPTIONS:
            raise ValueError(f"unknown reader option {k!r}")
        if v is None or v == "" or v is False:
            continue
        out[k] = v
    return tuple(sorted(out.items()))
