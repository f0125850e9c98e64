"""Per-instruction sample counts of a perf.data, from ``perf script``.

Why ``perf script -F event,ip,sym,symoff,dso -G``: one line per sample naming the leaf
symbol and the offset into it, so counts per ``(dso, symbol, offset)`` need no address
arithmetic and no knowledge of where the binary was loaded.  Identical lines are counted
with :class:`collections.Counter` over the raw lines (C speed) and only distinct lines are
parsed, which keeps 10^6 samples well under a second of Python.  perf runs with the same
throw-away HOME and build-id cache as :mod:`parsers.perf_data`, so binaries beside the
recording resolve and the user's ``~/.debug`` is not written.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from profdiff.parsers import perf_data
from profdiff.parsers.errors import ExternalToolError, ParseError

from .binaries import recorded_build_ids

LINE_RE = re.compile(r"^\s*(?P<ev>\S.*?):\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)"
                     r"(?:\+0x(?P<off>[0-9a-f]+))?\s+\((?P<dso>.*)\)\s*$")
FIELDS = "event,ip,sym,symoff,dso"


@dataclass
class RecordingSamples:
    """Leaf-sample counts of one recording, by (dso, symbol) and offset."""

    path: Path
    event: str  # the event counted (the one with most samples if several)
    total: int  # samples of that event in the whole recording
    by_symbol: dict[tuple[str, str], Counter] = field(default_factory=dict)  # -> off -> n
    build_ids: dict[str, str] = field(default_factory=dict)  # recorded dso -> build-id
    events: dict[str, int] = field(default_factory=dict)  # every event -> samples
    unparsed: int = 0  # lines perf printed that were not samples of this shape
    incomplete: str | None = None  # why perf stopped early (then counts are partial)

    def symbol_total(self, key: tuple[str, str]) -> int:
        return sum(self.by_symbol.get(key, Counter()).values())


def read_samples(path: str | Path, event: str | None = None,
                 timeout: float = perf_data.DEFAULT_TIMEOUT_S) -> RecordingSamples:
    """Count leaf samples per (dso, symbol, offset) in a perf.data.

    ``event``: count only this event (default: the event with the most samples).  Raises
    :class:`ExternalToolError` without perf, :class:`ParseError` for a file perf rejects.
    """
    p = Path(path)
    _check_magic(p)
    perf = perf_data.find_perf()
    if perf is None:
        raise ExternalToolError(f"{p}: reading perf.data needs the 'perf' program: "
                                f"{perf_data.INSTALL_HINT}")
    warnings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="profdiff-annotate-") as tmpdir:
        env = perf_data.recording_env(perf, p, Path(tmpdir), warnings)
        cmd = [perf, "script", "-i", str(p), "-F", FIELDS, "-G"]
        with tempfile.TemporaryFile() as errf:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=errf,
                                    stdin=subprocess.DEVNULL, text=True, errors="replace")
            expired = threading.Event()
            def _expire() -> None:
                expired.set()
                proc.kill()

            timer = threading.Timer(timeout, _expire)
            timer.start()
            try:
                lines = Counter(proc.stdout)  # type: ignore[arg-type]
                rc = proc.wait()
            finally:
                timer.cancel()
            if expired.is_set():
                raise ExternalToolError(f"{p}: 'perf script' did not finish within "
                                        f"{timeout:.0f} s")
            errf.seek(0)
            err = errf.read().decode("utf-8", "replace")
        build_ids = recorded_build_ids(perf, p, env)
    if rc != 0 and not lines:
        first = next((ln for ln in err.splitlines() if ln.strip()), f"exit status {rc}")
        raise ParseError(p, "a perf.data this perf can read", offset=0,
                         found=f"perf script exit {rc}: {first}")
    rec = _count(p, lines, event, build_ids)
    if rc != 0:
        first = next((ln for ln in err.splitlines() if ln.strip()), f"exit status {rc}")
        rec.incomplete = (f"perf script stopped with an error ({first.strip()}); only the "
                          "samples before it are counted")
    return rec


def _check_magic(p: Path) -> None:
    try:
        with open(p, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise ParseError(p, "a readable perf.data file", found=str(e.strerror or e)) from None
    if perf_data.sniff(head, p) <= 0:
        raise ParseError(p, "a perf.data file starting with 'PERFILE2'", offset=0,
                         found=head)


def _count(p: Path, lines: Counter, event: str | None,
           build_ids: dict[str, str]) -> RecordingSamples:
    events: Counter = Counter()
    parsed: list[tuple[str, str, str, int, int]] = []
    unparsed = 0
    for line, n in lines.items():
        m = LINE_RE.match(line)
        if not m:
            unparsed += n
            continue
        ev = m.group("ev")
        events[ev] += n
        parsed.append((ev, m.group("dso"), m.group("sym"), int(m.group("off") or "0", 16), n))
    if not events:
        raise ParseError(p, "a recording with at least one sample",
                         found="no samples (perf script printed none)")
    if event is None:
        event = events.most_common(1)[0][0]
    elif not any(e == event or e.split(":")[0] == event for e in events):
        raise ParseError(p, f"samples of event {event!r}",
                         found="events " + ", ".join(sorted(events)))
    by_symbol: dict[tuple[str, str], Counter] = {}
    total = 0
    for ev, dso, sym, off, n in parsed:
        if ev != event and ev.split(":")[0] != event:
            continue
        total += n
        by_symbol.setdefault((dso, sym), Counter())[off] += n
    return RecordingSamples(p, event, total, by_symbol, build_ids, dict(events), unparsed)
