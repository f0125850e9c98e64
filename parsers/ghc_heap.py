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

METRICS: tuple[Metric, ...] = (
    Metric("peak_bytes", Unit.BYTES, Kind.SELF, "peak",
           "largest size of the band over all heap samples"),
    Metric("mean_bytes", Unit.BYTES, Kind.SELF, "mean",
           "time-weighted mean size of the band (integral / duration)"),
    Metric("integral_byte_s", Unit.BYTE_SECONDS, Kind.SELF, "byte·s",
           "area under the band over time (trapezoid over sample times)"),
)

TOTAL_METRICS: dict[str, Metric] = {
    "peak_bytes": Metric("peak_bytes", Unit.BYTES, Kind.NODE, "peak heap",
                         "largest sample total (sum of all bands in one sample)"),
    "mean_bytes": Metric("mean_bytes", Unit.BYTES, Kind.NODE, "mean heap",
                         "time-weighted mean of the sample totals"),
    "integral_byte_s": Metric("integral_byte_s", Unit.BYTE_SECONDS, Kind.NODE, "heap byte·s",
                              "area under the total heap curve"),
    "n_samples": Metric("n_samples", Unit.COUNT, Kind.NODE, "heap samples",
                        "number of complete samples"),
    "duration_s": Metric("duration_s", Unit.SECONDS, Kind.NODE, "profiled time",
                         "time between the first and the last sample"),
    "peak_time_s": Metric("peak_time_s", Unit.SECONDS, Kind.NODE, "peak at",
                          "sample time of the largest sample total"),
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
    """
    path = Path(path)
    data, gz_cut = read_all(path)
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    warnings: list[str] = []
    n_lines = len(lines)
    # A file still being written may end in the middle of a line.  That line is never
    # read: a number cut in half still parses ("END_SAMPLE 0.5" -> "END_SAMPLE 0."), so
    # only a line with its newline is trusted.
    last_line_cut = bool(text) and not text.endswith(("\n", "\r"))
    if last_line_cut:
        lines.pop()

    def bad(lineno: int, expected: str, found: str) -> None:
        if not lenient:
            raise ParseError(path, expected, line=lineno, found=found)
        warnings.append(f"line {lineno}: skipped ({expected}, found {found[:80]!r})")

    header: dict[str, str] = {}
    marks: list[float] = []
    times: list[float] = []
    band_id: dict[str, int] = {}
    # (sample index, band id, value) triples; duplicates within a sample are summed later
    s_idx: list[int] = []
    b_idx: list[int] = []
    vals: list[float] = []

    step = max(n_lines // 50, 20000)
    in_sample = False
    begin_line = 0
    cur_time = 0.0
    cur_start = 0  # length of the triple lists when the current sample began
    seen_job = False

    for i, line in enumerate(lines):
        lineno = i + 1
        if progress is not None and i % step == 0 and i:
            progress(i / n_lines)
        tab = line.rfind("\t")
        if tab >= 0:
            # band line: "name<TAB>bytes" (split on the last tab; names may contain tabs)
            if not seen_job:
                raise ParseError(path, 'a GHC heap profile header line JOB "..."',
                                 line=lineno, found=line)
            if not in_sample:
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
            bid = band_id.get(name)
            if bid is None:
                bid = band_id[name] = len(band_id)
            s_idx.append(len(times))
            b_idx.append(bid)
            vals.append(v)
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
            if in_sample:
                bad(lineno, f"END_SAMPLE for the sample begun at line {begin_line}", line)
                # lenient: the unfinished sample is kept as if it had ended here
                times.append(cur_time)
            in_sample, begin_line, cur_time, cur_start = True, lineno, t, len(vals)
        elif key == "END_SAMPLE":
            if not in_sample:
                bad(lineno, "BEGIN_SAMPLE before END_SAMPLE", line)
                continue
            times.append(cur_time)
            in_sample = False
        elif key == "MARK":
            try:
                marks.append(float(rest))
            except ValueError:
                bad(lineno, "'MARK <time>'", line)
        elif key in _HEADER_KEYS:
            if key == "JOB":
                seen_job = True
            header[key] = _unquote(rest)
        elif not seen_job and not times and not in_sample:
            raise ParseError(path, 'a GHC heap profile header line JOB "..."', line=lineno,
                             found=line)
        else:
            bad(lineno, "BEGIN_SAMPLE, END_SAMPLE, MARK or 'band<TAB>bytes'", line)

    if not seen_job:
        raise ParseError(path, 'a GHC heap profile header line JOB "..."',
                         line=1 if lines else None,
                         found=lines[0] if lines else "an empty file")

    incomplete = False
    reason = ""
    cut_note = f"the last line ({n_lines}) is cut short (no newline); it was ignored"
    if in_sample:
        # cut inside the last sample (a running program): drop the partial sample
        del s_idx[cur_start:], b_idx[cur_start:], vals[cur_start:]
        incomplete = True
        reason = (f"file ends inside the sample begun at line {begin_line} "
                  f"(BEGIN_SAMPLE {cur_time:g}) without END_SAMPLE - the program was "
                  f"probably still running; loaded the {len(times)} complete samples")
        if last_line_cut:
            reason += f"; {cut_note}"
    elif last_line_cut:
        incomplete = True
        reason = cut_note
    if gz_cut:
        incomplete = True
        reason = f"{gz_cut}; {reason}" if reason else gz_cut
    if not times:
        raise ParseError(path, "at least one complete BEGIN_SAMPLE ... END_SAMPLE block",
                         line=n_lines or None, found="no complete sample")

    names = list(band_id)
    n_s, n_b = len(times), len(names)
    t = np.asarray(times, dtype=np.float64)
    bands = np.zeros((n_s, n_b), dtype=np.float64)
    if vals:
        np.add.at(bands, (np.asarray(s_idx, dtype=np.int64), np.asarray(b_idx, dtype=np.int64)),
                  np.asarray(vals, dtype=np.float64))
    # only bands whose bytes survived (a band seen only in the dropped partial sample goes)
    if incomplete and n_b:
        seen = np.zeros(n_b, dtype=bool)
        seen[np.asarray(b_idx, dtype=np.int64)] = True
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

    job = header.get("JOB", "")
    mode, mode_source = guess_heap_mode(job, names)
    sample_unit = header.get("SAMPLE_UNIT", "")
    value_unit = header.get("VALUE_UNIT", "")
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
        "date": header.get("DATE", ""),
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
        extras={"series": {"times": t, "bands": bands, "marks": marks}},
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
