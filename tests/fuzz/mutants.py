"""Damaged copies of real corpus files, and how a reader's answer to one is judged.

Shared by the hypothesis suite (``test_fuzz_readers.py``) and the counting script
(``tests/bench/damage_counts.py``), so the figures the script prints are the properties
the suite asserts.

A mutant is judged against the reader's answer for the whole file:

* ``error``     - a :class:`parsers.errors.ProfdiffError` (a located message): fine;
* ``internal``  - any other exception: a bug (the CLI would print "internal error");
* ``marked``    - loaded with ``incomplete=True``;
* ``unknown``   - loaded, not marked, but the metadata says completeness cannot be told
  (folded stacks, a ``.hp`` cut between samples): honest;
* ``same``      - loaded, not marked, and every number equals the whole file's: a cut
  that lost nothing measurable (trailing blank lines, a zero-cost row);
* ``silent``    - a *truncation* that loaded, unmarked, with numbers that differ: the bug
  issue 18 is about.
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from parsers import load
from parsers.errors import ProfdiffError

DATA = Path(__file__).resolve().parents[1] / "data"

# (format id, corpus file): at least one file per reader; small ones keep the suite fast.
CORPUS: list[tuple[str, str]] = [
    ("ghc-prof", "hs-ad/v1/ad.prof"),
    ("ghc-prof", "ghc-prof/ghc-8.0-flamingra-fib-P.prof"),
    ("ghc-prof", "ghc-prof/ghc-testsuite-scc001-2018-02.prof"),
    ("ghc-prof", "ghc-prof/ghc-8.x-jaeger-flamegraph-P-2018-11.prof.gz"),
    ("ghc-prof-json", "hs-ad/v1/ad.prof.json"),
    ("ghc-hp", "ghc-hp/ghc-7.8-dilcue-2014-10.hp"),
    ("ghc-hp", "ghc-hp/ghc-7.x-ilp-main-v2.hp.gz"),
    ("ghc-ticky", "ghc-ticky/hs-ad-v1.ticky.txt"),
    ("ghc-ticky", "ghc-ticky/ghc-7.x-haskell-opengl-src-Main.ticky"),
    ("ghc-rts-s", "ghc-rts/hs-ad-v1.stats.txt"),
    ("ghc-rts-t", "ghc-rts/hs-ad-v1.t-machine-readable.txt"),
    ("julia-mem", "julia-mem/gvfn-test.jl.mem"),
    ("julia-profile-print", "julia-profile-print/julia-1.10-grass-eclipse-Profile.print.txt"),
    ("folded", "folded/flamegraph-perf-java-stacks-01-collapsed-all.txt"),
    ("callgrind", "callgrind/malloc-KGuzikowski-mdriver-xterm.callgrind.out"),
    ("callgrind", "callgrind/hcy2c-runner-callgrind.out.48538.gz"),
    ("speedscope", "speedscope/speedscope-0.6.0-two-sampled.speedscope.json"),
    ("speedscope", "speedscope/pyinstrument-molehill-evented.speedscope.json"),
    ("folded", "folded/inferno-example-perf-stacks-collapsed.txt.gz"),
    ("pprof", "pprof/go-resolv-2018-cpu.pprof"),
    ("pprof", "pprof/julia-1.8.5-pprofjl-julox-cpu-profile.pb.gz"),
    ("perf-script", "perf/script/flamegraph-perf-funcab-cmd-01.txt"),
    ("perf-script", "perf/script/firefox-profiler-simple-perf.txt.gz"),
]

# Formats whose content cannot show a cut at a line end (no end marker, no totals).
CANNOT_TELL = {"folded"}
# Formats another change owns the completeness rule of (issue 23): counted, not asserted.
NOT_ASSERTED = {"perf-script", "perf-data"}

HUGE = [b"9223372036854775808", b"18446744073709551616", b"99999999999999999999999",
        b"1e400", b"-5", b"nan"]


@dataclass(frozen=True)
class Mutant:
    source: str       # corpus path relative to tests/data
    fmt: str
    kind: str         # truncate-line, truncate-byte, flip, number, ...
    truncation: bool  # a pure cut of the (decompressed) content
    data: bytes       # what is written to disk
    gz: bool          # written gzipped


def content(rel: str) -> tuple[bytes, bool]:
    """(decompressed bytes, was gzipped) of a corpus file."""
    raw = (DATA / rel).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw), True
    return raw, False


def make(rel: str, fmt: str, rng: random.Random) -> Mutant:
    """One random mutant of ``rel``."""
    data, gz = content(rel)
    binary = fmt == "pprof"
    kinds = ["truncate-byte", "flip", "gzip-cut"] if binary else [
        "truncate-line", "truncate-byte", "truncate-line", "flip", "number", "latin1",
        "crlf", "dup-line", "drop-line", "gzip-cut"]
    kind = rng.choice(kinds)
    if kind == "truncate-line":
        ends = [i + 1 for i in range(len(data) - 1) if data[i] == 10]
        cut = rng.choice(ends) if ends else len(data) // 2
        return Mutant(rel, fmt, kind, True, data[:cut], gz)
    if kind == "truncate-byte":
        cut = rng.randrange(1, max(2, len(data)))
        return Mutant(rel, fmt, kind, True, data[:cut], gz)
    if kind == "gzip-cut":
        packed = gzip.compress(data, mtime=0)
        cut = rng.randrange(20, max(21, len(packed) - 8))
        return Mutant(rel, fmt, kind, True, packed[:cut], False)
    buf = bytearray(data)
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(buf))
            buf[i] = rng.randrange(256)
    elif kind == "number":
        runs = [m for m in _digit_runs(data)]
        if runs:
            a, b = rng.choice(runs)
            buf[a:b] = rng.choice(HUGE)
    elif kind == "latin1":
        i = rng.randrange(len(buf))
        buf[i:i] = "größe".encode("latin-1")
    elif kind == "crlf":
        buf = bytearray(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    elif kind in ("dup-line", "drop-line"):
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        if kind == "dup-line":
            lines.insert(i, lines[i])
        else:
            del lines[i]
        buf = bytearray(b"\n".join(lines))
    return Mutant(rel, fmt, kind, False, bytes(buf), gz)


def _digit_runs(data: bytes, limit: int = 4000) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i, n = 0, len(data)
    while i < n and len(out) < limit:
        if 48 <= data[i] <= 57:
            j = i
            while j < n and 48 <= data[j] <= 57:
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def write(m: Mutant, folder: Path) -> Path:
    name = Path(m.source).name
    if name.endswith(".gz"):
        name = name[:-3]
    if m.gz or m.kind == "gzip-cut":
        name += ".gz"
    path = folder / name
    path.write_bytes(gzip.compress(m.data, mtime=0) if m.gz else m.data)
    return path


# Columns that do not add up and so cannot show a lost row: a GHC row's entry count.  A
# .prof row whose costs all print as 0.0 (or 0 ticks and 0 bytes with -P) can vanish
# without the header totals noticing: that is the precision of the report, not a bug.
UNSUMMABLE = {"ghc-prof": {"entries"}, "ghc-prof-json": {"entries"}}


def fingerprint(p) -> tuple:
    """The numbers a silent cut would change: totals and the sums of the cost columns
    (plus the node count where every node carries a measurable cost)."""
    skip = UNSUMMABLE.get(p.format, set())
    sums = tuple(sorted((k, round(float(np.nansum(np.asarray(v, dtype=np.float64))), 6))
                        for k, v in p.values.items() if k not in skip))
    totals = tuple(sorted((k, round(float(v), 6)) for k, v in p.totals.items()
                          if isinstance(v, (int, float))))
    return (0 if skip else p.n_nodes, totals, sums)


def judge(m: Mutant, path: Path, whole: tuple, *, lenient: bool = False,
          fmt: str | None = None) -> tuple[str, str]:
    """(verdict, detail) for one mutant on disk (see the module docstring)."""
    try:
        p = load(path, lenient=lenient, format=fmt)
    except ProfdiffError as e:
        return "error", str(e)
    except Exception as e:  # noqa: BLE001 - exactly what the suite hunts for
        return "internal", f"{type(e).__name__}: {e}"
    if p.incomplete:
        return "marked", p.incomplete_reason
    if str(p.meta.get("completeness", "")).startswith("cannot tell"):
        return "unknown", ""
    if fingerprint(p) == whole:
        return "same", ""
    return ("silent" if m.truncation else "changed"), ""
