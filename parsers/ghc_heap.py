"""GHC heap profile (``.hp``, written by ``+RTS -h<mode>``) reader.

The format (documented with ``hp2ps``) is a header of ``JOB "<command>"``, ``DATE "..."``,
``SAMPLE_UNIT "seconds"`` and ``VALUE_UNIT "bytes"`` (strings quote ``"`` as ``""``),
then samples ``BEGIN_SAMPLE t`` ... ``END_SAMPLE t`` holding one ``band<TAB>bytes`` line
per band (cost-centre stack, closure type, module, ... depending on the ``-h`` mode),
and optional ``MARK t`` lines.

Model: a one-level tree with one node per band.  Per band:

* ``peak_bytes`` - the largest value of the band over all samples;
* ``mean_bytes`` - the **time-weighted** mean, ``integral_byte_s / duration`` (samples
  are not always evenly spaced: with ``-i`` and the idle GC the gaps vary, so a plain
  mean over-weights bursts of samples); a plain mean when the run has a single sample
  or zero duration;
* ``integral_byte_s`` - trapezoid integral over the sample times (byte-seconds), the
  "area" a band covers in ``hp2ps`` output.

``totals`` hold the same three numbers for the sum of all bands (``peak_bytes`` is the
largest sample total, not the sum of band peaks) plus ``n_samples``, ``duration_s`` and
``peak_time_s``.  ``extras["series"]`` keeps the whole time series for stacked-area plots.

Band names in cost-centre-stack modes (``-hc``, GHC 7's profiled ``-h``) start with the
cost-centre-stack id ``(123)`` which changes from build to build; the frame table's
``match`` drops it so runs align, while ``name`` keeps it for display.

A program that is still running (or was killed) leaves a file cut inside its last
sample: the complete samples load and the profile says ``incomplete=True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .builder import flat_profile
from .errors import ParseError
from .ghc_rts import program_of
from .gzip_io import read_all
from .model import Kind, Metric, Profile, Unit, make_frame_table

FORMAT = "ghc-hp"
DESCRIPTION = "GHC heap profile (.hp, +RTS -h)"

# Timed (``Metric.timed``): censuses fall where the run's timing puts them, so three runs
# of one hs-ad binary differ by 11-34 % in most bands (tests/data/ghc-hp-noise).
METRICS: tuple[Metric, ...] = (
    Metric("peak_bytes", Unit.BYTES, Kind.SELF, "peak",
           "largest size of the band over all heap samples", timed=True),
    Metric("mean_bytes", Unit.BYTES, Kind.SELF, "mean",
           "time-weighted mean size of the band (integral / duration)", timed=True),
    Metric("integral_byte_s", Unit.BYTE_SECONDS, Kind.SELF, "byte·s",
           "area under the band over time (trapezoid over sample times)", timed=True),
)

TOTAL_METRICS: dict[str, Metric] = {
    "peak_bytes": Metric("peak_bytes", Unit.BYTES, Kind.NODE, "peak heap",
                         "largest sample total (sum of all bands in one sample)", timed=True),
    "mean_bytes": Metric("mean_bytes", Unit.BYTES, Kind.NODE, "mean heap",
                         "time-weighted mean of the sample totals", timed=True),
    "integral_byte_s": Metric("integral_byte_s", Unit.BYTE_SECONDS, Kind.NODE, "heap byte·s",
                              "area under the total heap curve", timed=True),
    "n_samples": Metric("n_samples", Unit.COUNT, Kind.NODE, "heap samples",
                        "number of complete samples", better="none",
                        timed=True),
    "duration_s": Metric("duration_s", Unit.SECONDS, Kind.NODE, "profiled time",
                         "time between the first and the last sample", timed=True),
    "peak_time_s": Metric("peak_time_s", Unit.SECONDS, Kind.NODE, "peak at",
                          "sample time of the largest sample total", better="none",
                          timed=True),
}

# ``-h`` flag letter -> heap_mode name.
_MODE_BY_FLAG = {
    "c": "cost-centre-stack",
    "m": "module",
    "d": "closure-description",
    "y": "type",
    "r": "retainer",
    "b": "biography",
    "T": "closure-type",
    "i": "info-table",
    "e": "era",
}
_FLAG_RE = re.compile(r"(?<!\S)-h([cmdyrbTie]?)(?![A-Za-z0-9])")
_CCS_ID_RE = re.compile(r"^\(\d+\)")
_CLOSURE_TYPE_RE = re.compile(
    r"^(?:[\w.\-]+:[A-Z]|THUNK|FUN|PAP|AP|ARR_WORDS|MUT_ARR_PTRS|SMALL_MUT_ARR|BLACKHOLE|"
    r"MUT_VAR|MVAR|TVAR|WEAK|STACK|TSO|BCO|BLOCKING_QUEUE|IND|CONSTR|PRIM)"
)
_BIOGRAPHY = {"LAG", "DRAG", "VOID", "USE", "INHERENT_USE"}
_HEADER_KEYS = ("JOB", "DATE", "SAMPLE_UNIT", "VALUE_UNIT")
_MAX_BYTES = 2.0**63  # a band's residency is a machine word


def sniff(head: bytes, path: Path) -> float:
    """A ``.hp`` file starts with ``JOB "..."``; the other header keys confirm it."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"JOB"):
        return 0.0
    score = 0.6
    if b"\nSAMPLE_UNIT" in text[:4096] or b"\nVALUE_UNIT" in text[:4096]:
        score = 0.9
    if b"\nBEGIN_SAMPLE" in text:
        score += 0.05
    if str(path).endswith((".hp", ".hp.gz")):
        score += 0.03
    return min(score, 1.0)


def _unquote(rest: str) -> str:
    """Header string value: ``"a ""b"" c"`` -> ``a "b" c`` (hp2ps doubles quotes)."""
    s = rest.strip()
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        return s[1:-1].replace('""', '"')
    return s


def strip_ccs_id(name: str) -> str:
    """``(782)startOnFire/holdEs`` -> ``startOnFire/holdEs`` (the id is build-specific)."""
    return _CCS_ID_RE.sub("", name, count=1)


def guess_heap_mode(job: str, names: list[str]) -> tuple[str, str]:
    """(heap_mode, how it was found): from the ``-h`` flag in JOB, else from band names.

    Plain ``-h`` meant ``-hc`` in profiled builds and means ``-hT`` in non-profiled ones
    since GHC 9.2, so it is resolved from the names too.
    """
    rts = job.split("+RTS", 1)[1] if "+RTS" in job else ""
    for m in _FLAG_RE.finditer(rts):
        letter = m.group(1)
        if letter:
            return _MODE_BY_FLAG[letter], "flag"
        break
    if not names:
        return "unknown", "none"
    sample = names[:2000]
    n = len(sample)
    if sum(1 for x in sample if _CCS_ID_RE.match(x)) >= 0.5 * n:
        return "cost-centre-stack", "names"
    if all(x in _BIOGRAPHY for x in sample):
        return "biography", "names"
    if sum(1 for x in sample if _CLOSURE_TYPE_RE.match(x)) >= 0.5 * n:
        return "closure-type", "names"
    if sum(1 for x in sample if x.startswith("<") and x.endswith(">")) >= 0.3 * n:
        return "closure-description", "names"
    return "unknown", "names"


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **options: Any,
) -> Profile:
    """Parse a ``.hp`` file (optionally gzipped) into a one-level band profile.

    Strict mode raises :class:`ParseError` on the first malformed line; ``lenient``
    skips it and records a warning.  A file ending inside a sample is not an error.
    Steps: :func:`_lines` (input), :func:`_parse_samples` (header and body),
    :func:`_completeness`, :func:`_build`.
    """
    path = Path(path)
    lines, last_line_cut, gz_cut = _lines(path)
    warnings: list[str] = []
    st = _parse_samples(path, lines, lenient, warnings, progress)
    incomplete, reason = _completeness(path, st, len(lines) + last_line_cut, last_line_cut,
                                       gz_cut)
    return _build(path, st, incomplete, reason, warnings, progress)


def _lines(path: Path) -> tuple[list[str], bool, str]:
    """The file's lines (gunzipped), whether the last one was cut, and any gzip cut.

    A file still being written may end in the middle of a line.  That line is never
    read: a number cut in half still parses ("END_SAMPLE 0.5" -> "END_SAMPLE 0."), so
    only a line with its newline is trusted.
    """
    data, gz_cut = read_all(path)
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    last_line_cut = bool(text) and not text.endswith(("\n", "\r"))
    if last_line_cut:
        lines.pop()
    return lines, last_line_cut, gz_cut


@dataclass
class _Samples:
    """What the body of a ``.hp`` holds: header keys, marks, sample times and the
    (sample index, band id, value) triples (duplicates within a sample summed later)."""

    header: dict[str, str] = field(default_factory=dict)
    marks: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    band_id: dict[str, int] = field(default_factory=dict)
    s_idx: list[int] = field(default_factory=list)
    b_idx: list[int] = field(default_factory=list)
    vals: list[float] = field(default_factory=list)
    in_sample: bool = False
    begin_line: int = 0
    cur_time: float = 0.0
    cur_start: int = 0  # length of the triple lists when the current sample began
    seen_job: bool = False


def _parse_samples(path: Path, lines: list[str], lenient: bool, warnings: list[str],
                   progress: Callable[[float], None] | None) -> _Samples:
    """Header lines and BEGIN_SAMPLE ... END_SAMPLE blocks, line by line."""
    st = _Samples()
    n_lines = len(lines)
    step = max(n_lines // 50, 20000)

    def bad(lineno: int, expected: str, found: str) -> None:
        if not lenient:
            raise ParseError(path, expected, line=lineno, found=found)
        warnings.append(f"line {lineno}: skipped ({expected}, found {found[:80]!r})")

    for i, line in enumerate(lines):
        lineno = i + 1
        if progress is not None and i % step == 0 and i:
            progress(i / n_lines)
        tab = line.rfind("\t")
        if tab >= 0:
            # band line: "name<TAB>bytes" (split on the last tab; names may contain tabs)
            if not st.seen_job:
                raise ParseError(path, 'a GHC heap profile header line JOB "..."',
                                 line=lineno, found=line)
            if not st.in_sample:
                bad(lineno, "a band line inside BEGIN_SAMPLE/END_SAMPLE", line)
                continue
            try:
                v = float(line[tab + 1 :])
            except ValueError:
                bad(lineno, "a band line 'name<TAB>bytes'", line)
                continue
            if not (0.0 <= v < _MAX_BYTES):
                bad(lineno, "a band's bytes: a finite number >= 0", line)
                continue
            name = line[:tab]
            bid = st.band_id.get(name)
            if bid is None:
                bid = st.band_id[name] = len(st.band_id)
            st.s_idx.append(len(st.times))
            st.b_idx.append(bid)
            st.vals.append(v)
            continue
        s = line.strip()
        if not s:
            continue
        key, _, rest = s.partition(" ")
        if key == "BEGIN_SAMPLE":
            try:
                t = float(rest)
            except ValueError:
                bad(lineno, "'BEGIN_SAMPLE <time>'", line)
                continue
            if not np.isfinite(t):
                bad(lineno, "'BEGIN_SAMPLE <time>' with a finite time", line)
                continue
            if st.in_sample:
                bad(lineno, f"END_SAMPLE for the sample begun at line {st.begin_line}", line)
                # lenient: the unfinished sample is kept as if it had ended here
                st.times.append(st.cur_time)
            st.in_sample, st.begin_line, st.cur_time, st.cur_start = True, lineno, t, len(st.vals)
        elif key == "END_SAMPLE":
            if not st.in_sample:
                bad(lineno, "BEGIN_SAMPLE before END_SAMPLE", line)
                continue
            st.times.append(st.cur_time)
            st.in_sample = False
        elif key == "MARK":
            try:
                st.marks.append(float(rest))
            except ValueError:
                bad(lineno, "'MARK <time>'", line)
        elif key in _HEADER_KEYS:
            if key == "JOB":
                st.seen_job = True
            st.header[key] = _unquote(rest)
        elif not st.seen_job and not st.times and not st.in_sample:
            raise ParseError(path, 'a GHC heap profile header line JOB "..."', line=lineno,
                             found=line)
        else:
            bad(lineno, "BEGIN_SAMPLE, END_SAMPLE, MARK or 'band<TAB>bytes'", line)

    if not st.seen_job:
        raise ParseError(path, 'a GHC heap profile header line JOB "..."',
                         line=1 if lines else None,
                         found=lines[0] if lines else "an empty file")

    return st


def _completeness(path: Path, st: _Samples, n_lines: int, last_line_cut: bool,
                  gz_cut: str) -> tuple[bool, str]:
    """Complete when the last sample has its END_SAMPLE and the last line its newline;
    a cut last sample is dropped here."""
    incomplete = False
    reason = ""
    cut_note = f"the last line ({n_lines}) is cut short (no newline); it was ignored"
    if st.in_sample:
        # cut inside the last sample (a running program): drop the partial sample
        del st.s_idx[st.cur_start:], st.b_idx[st.cur_start:], st.vals[st.cur_start:]
        incomplete = True
        reason = (f"file ends inside the sample begun at line {st.begin_line} "
                  f"(BEGIN_SAMPLE {st.cur_time:g}) without END_SAMPLE - the program was "
                  f"probably still running; loaded the {len(st.times)} complete samples")
        if last_line_cut:
            reason += f"; {cut_note}"
    elif last_line_cut:
        incomplete = True
        reason = cut_note
    if gz_cut:
        incomplete = True
        reason = f"{gz_cut}; {reason}" if reason else gz_cut
    if not st.times:
        raise ParseError(path, "at least one complete BEGIN_SAMPLE ... END_SAMPLE block",
                         line=n_lines or None, found="no complete sample")

    return incomplete, reason


def _build(path: Path, st: _Samples, incomplete: bool, reason: str, warnings: list[str],
           progress: Callable[[float], None] | None) -> Profile:
    """Band matrix, per-band statistics and run totals."""
    names = list(st.band_id)
    n_s, n_b = len(st.times), len(names)
    t = np.asarray(st.times, dtype=np.float64)
    bands = np.zeros((n_s, n_b), dtype=np.float64)
    if st.vals:
        np.add.at(bands, (np.asarray(st.s_idx, dtype=np.int64), np.asarray(st.b_idx, dtype=np.int64)),
                  np.asarray(st.vals, dtype=np.float64))
    # only bands whose bytes survived (a band seen only in the dropped partial sample goes)
    if incomplete and n_b:
        seen = np.zeros(n_b, dtype=bool)
        seen[np.asarray(st.b_idx, dtype=np.int64)] = True
        if not seen.all():
            bands = bands[:, seen]
            names = [nm for nm, k in zip(names, seen.tolist(), strict=True) if k]
            n_b = len(names)

    if n_s > 1 and np.any(np.diff(t) < 0):
        warnings.append("sample times are not in increasing order; samples were sorted by time")
        order = np.argsort(t, kind="stable")
        t, bands = t[order], bands[order]
    if n_b == 0:
        warnings.append(f"no heap bands in any of the {n_s} samples (nothing was sampled)")

    peak, mean, integral = _band_stats(t, bands)
    total_series = bands.sum(axis=1)
    tpeak, tmean, tint = _band_stats(t, total_series[:, None])
    ipeak = int(np.argmax(total_series)) if n_s else 0

    job = st.header.get("JOB", "")
    mode, mode_source = guess_heap_mode(job, names)
    sample_unit = st.header.get("SAMPLE_UNIT", "")
    value_unit = st.header.get("VALUE_UNIT", "")
    if sample_unit and sample_unit != "seconds":
        warnings.append(f"SAMPLE_UNIT is {sample_unit!r}, treated as seconds")
    if value_unit and value_unit != "bytes":
        warnings.append(f"VALUE_UNIT is {value_unit!r}, treated as bytes")

    match = [strip_ccs_id(nm) for nm in names]
    frames = make_frame_table(
        names, [""] * n_b, kinds=["band"] * n_b,
        match=match if any(a != b for a, b in zip(match, names, strict=True)) else None,
    )
    meta = {
        "program": program_of(job),
        "job": job,
        "command_line": job,
        "date": st.header.get("DATE", ""),
        "sample_unit": sample_unit,
        "value_unit": value_unit,
        "heap_mode": mode,
        "heap_mode_source": mode_source,
        "mean_kind": "time-weighted",
        "completeness": "cannot tell: a .hp has no end marker; a cut inside a sample or a "
                        "line shows, a cut exactly between two samples looks like the end "
                        "of the run",
    }
    totals = {
        "peak_bytes": float(tpeak[0]),
        "mean_bytes": float(tmean[0]),
        "integral_byte_s": float(tint[0]),
        "n_samples": float(n_s),
        "duration_s": float(t[-1] - t[0]),
        "peak_time_s": float(t[ipeak]),
    }
    if progress is not None:
        progress(1.0)
    return flat_profile(
        path=str(path),
        format=FORMAT,
        frames=frames,
        metrics=METRICS,
        columns={"peak_bytes": peak, "mean_bytes": mean, "integral_byte_s": integral},
        meta=meta,
        totals=totals,
        total_metrics=dict(TOTAL_METRICS),
        incomplete=incomplete,
        incomplete_reason=reason,
        warnings=tuple(warnings),
        extras={"series": {"times": t, "bands": bands, "marks": st.marks}},
        default_metric="peak_bytes",
    )


def _band_stats(t: np.ndarray, bands: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(peak, time-weighted mean, trapezoid integral) per column of ``bands``."""
    n_s, n_b = bands.shape
    if n_b == 0:
        z = np.zeros(0, dtype=np.float64)
        return z, z.copy(), z.copy()
    peak = bands.max(axis=0)
    if n_s < 2:
        return peak, bands.mean(axis=0), np.zeros(n_b, dtype=np.float64)
    dt = np.diff(t)
    integral = (0.5 * (bands[1:] + bands[:-1]) * dt[:, None]).sum(axis=0)
    duration = float(t[-1] - t[0])
    mean = integral / duration if duration > 0 else bands.mean(axis=0)
    return peak, mean, integral
