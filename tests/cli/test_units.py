"""One formatting rule per metric kind (viewer.units), on values read from real files.

Checked against what the files print themselves (GHC's header and bytes column, perf
report's event count, the periods summed straight from perf script text), so a rule
that invents or drops digits fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.parsers.model import Unit
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.table import render_comparison, render_profile, render_totals
from profdiff.viewer.units import (
    APPROX,
    column_scale,
    digits_rounding,
    format_delta,
    format_precision,
    format_rel,
    format_total_delta,
    format_value,
    step_of,
    with_unit,
)

DATA = Path(__file__).resolve().parents[1] / "data"
HS = DATA / "hs-ad"
PERF = DATA / "perf"


def _header_number(path: Path, what: str) -> str:
    """``total alloc = 4,291,393,792 bytes`` -> ``4,291,393,792`` (GHC's own text)."""
    m = re.search(rf"total {what}\s*=\s*([\d,.]+)", path.read_text())
    assert m, f"no 'total {what}' in {path}"
    return m.group(1)


def test_exact_bytes_print_as_ghc_prints_them():
    for f in (HS / "v1" / "ad.P.prof", HS / "v2" / "ad.P.prof", HS / "v1" / "ad.prof"):
        p = load(f)
        assert format_value(p.totals["total_alloc_bytes"], Unit.BYTES) == \
            _header_number(f, "alloc") + " B"
    # a -P row's bytes column, digit for digit (exact: no ≈)
    p = load(HS / "v1" / "ad.P.prof")
    line = next(x for x in (HS / "v1" / "ad.P.prof").read_text().splitlines()
                if x.strip().startswith("evalDelta") and len(x.split()) == 11)  # a tree line
    printed = int(line.split()[-1])
    row = next(i for i in range(p.n_nodes) if p.name[i] == "evalDelta"
               and p.values["bytes"][i] == printed)
    assert format_value(p.values["bytes"][row], Unit.BYTES) == f"{printed:,} B"


def test_bytes_from_rounded_percentages_are_marked_and_rounded_to_what_is_known():
    """``-p``: a row's bytes are %alloc (0.1 % steps) times the total: known to ± 0.05 %
    of 4.29 GB = ± 2.1 MB, so they print as ≈ and to the million, never to the byte."""
    p = load(HS / "v1" / "ad.prof")
    h = p.rounding["alloc_bytes"]
    assert h == pytest.approx(0.0005 * p.totals["total_alloc_bytes"])
    assert step_of(h) == 1e6
    texts = [format_value(v, Unit.BYTES, rounding=h) for v in p.values["alloc_bytes"]]
    nonzero = [t for t, v in zip(texts, p.values["alloc_bytes"], strict=True) if v]
    assert nonzero and all(t.startswith(APPROX) and t.endswith(",000,000 B") for t in nonzero)
    assert all(t == "0 B" for t, v in zip(texts, p.values["alloc_bytes"], strict=True) if not v)
    assert format_precision(h, Unit.BYTES) == "± 2,100,000 B"


def test_times_get_the_digits_their_rounding_allows():
    """GHC ``-p`` times: %time (0.1 % steps) x 2.88 s, known to ± 1.44 ms: millisecond
    digits, no more; zero is 0, not 0.000."""
    p = load(HS / "v1" / "ad.prof")
    h = p.rounding["time_s"]
    assert h == pytest.approx(0.0005 * float(_header_number(HS / "v1" / "ad.prof", "time")))
    texts = [format_value(v, Unit.SECONDS, rounding=h, suffix=False) for v in p.values["time_s"]]
    assert {len(t.split(".")[1]) for t in texts if "." in t} == {3}
    assert "0" in texts and "0.000" not in texts
    # the percentages themselves: one decimal, as GHC printed them
    pct = [format_value(v, Unit.PERCENT, rounding=p.rounding["time_pct"], suffix=False)
           for v in p.values["time_pct"]]
    assert {len(t.split(".")[1]) for t in pct if "." in t} == {1}
    # a value known to ± 50 ms (a 100 s run) would get one decimal only
    assert format_value(12.3456, Unit.SECONDS, rounding=0.05) == "12.3 s"


def test_perf_cpu_clock_periods_are_times_with_a_scaled_unit():
    """perf's cpu-clock period is in ns: 3133133130 (perf report's 'Event count') is
    3.133 s; a column shares the scale of its largest value."""
    report = (PERF / "c-vm" / "v1" / "perf.report.txt").read_text()
    count = int(re.search(r"Event count \(approx\.\): (\d+)", report).group(1))
    p = load(PERF / "c-vm" / "v1" / "perf.script.txt.gz")
    assert p.metric("self_period").unit is Unit.NANOSECONDS
    assert p.totals["total_period"] == count
    assert format_value(count, Unit.NANOSECONDS) == f"{count / 1e9:.3f} s"
    sc = column_scale(p.values["total_period"], Unit.NANOSECONDS)
    assert sc is not None and sc.label == "s"
    assert with_unit(p.metric("self_period").title, Unit.NANOSECONDS, sc) == \
        "self period (cpu-clock) (s)"
    # one sample (~1 ms at 999 Hz) on its own reads in ms, four significant digits
    one = int(np.min(p.values["self_period"][p.values["self_period"] > 0]))
    assert format_value(one, Unit.NANOSECONDS) == f"{one / 1e6:.3f} ms"
    # the task-clock / pprof cpu kind too: names with their own "(nanoseconds)" lose it
    go = load(DATA / "pprof" / "go-1.18-wordcount-amd64-B4KO-cpu.pprof")
    m = go.metric("self_cpu_ns")
    sc = column_scale(go.values[m.name], m.unit)
    assert with_unit(m.title, m.unit, sc) == "self cpu (ms)"
    assert format_value(go.totals["self_cpu_ns"], m.unit) == "620.0 ms"


def test_perf_cycles_are_counts_with_thousands_separators():
    f = PERF / "script" / "inferno-cpp-stacks-std-function.perf.txt"
    summed = sum(int(x) for x in re.findall(r":\s+(\d+) cycles:uppp:", f.read_text()))
    p = load(f)
    assert p.metric("total_period").unit is Unit.COUNT
    assert p.totals["total_period"] == summed
    assert format_value(summed, Unit.COUNT) == f"{summed:,}"
    assert with_unit("total period (cycles)", Unit.COUNT) == "total period (cycles)"


def test_julia_pprof_and_mem_counts_and_bytes_are_whole():
    a = load(DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz")
    b = load(DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz")
    for p in (a, b):
        assert all("." not in format_value(v, Unit.SAMPLES) for v in p.values["self_samples"])
    d = b.totals["self_samples"] - a.totals["self_samples"]
    assert format_delta(d, Unit.SAMPLES) == ("+" if d > 0 else "−") + f"{abs(int(d)):,}"
    mem = load(DATA / "julia-mem" / "gvfn-test.jl.mem")
    summed = sum(int(x.split()[0]) for x in
                 (DATA / "julia-mem" / "gvfn-test.jl.mem").read_text().splitlines()
                 if x.split() and x.split()[0].isdigit())
    assert format_value(mem.totals["bytes"], Unit.BYTES) == f"{summed:,} B"


def test_means_of_repeated_runs_are_approximate_bytes():
    """The "−868.6 bytes" of the issue: a mean over repeated runs is not a byte count."""
    runs = sorted(str(p) for p in (HS / "noise-v1").glob("run*/ad.prof"))
    s = Session.open(SessionSpec(base=tuple(runs), new=(str(HS / "v1" / "ad.prof"),)))
    cmp = s.main
    vals = cmp.values["alloc_bytes"][:, cmp.baseline]
    frac = vals[np.abs(vals - np.round(vals)) > 1e-6]
    assert frac.size, "expected fractional means in the noise group"
    for v in frac[:20]:
        t = format_value(float(v), Unit.BYTES)
        assert t.startswith(APPROX) and "." not in t


def test_percent_zero_and_tiny_values():
    assert format_value(0.0, Unit.PERCENT) == "0 %"
    assert format_value(0.00091, Unit.PERCENT) == "<0.1 %"
    assert format_delta(-0.00091, Unit.PERCENT) == "−<0.1 pp"
    assert format_rel(0.0003) == "+<0.1%"
    assert format_delta(492976.0, Unit.BYTES, rounding=4.3e6) == "≈0"


def test_cli_table_uses_the_runs_rounding_for_digits():
    s = Session.open(SessionSpec(files=(str(HS / "v1" / "ad.prof"), str(HS / "v2" / "ad.prof"))))
    cmp = s.flat
    assert digits_rounding(cmp.runs, "time_s", cmp.current, cmp.baseline) == pytest.approx(
        sum(p.rounding["time_s"] for p in cmp.runs))
    rows = np.argsort(-np.abs(cmp.delta("alloc_bytes")))[:5]
    text = render_comparison(cmp, rows, ["alloc_bytes", "time_s"])
    row = next(x for x in text.splitlines() if "evalDelta" in x)
    assert "≈133,000,000 B" in row          # 3.1 % of 4.29 GB, to the million
    assert re.search(r"\b0\.325 s\b", row)  # 11.3 % of 2.88 s, to the millisecond


RTS = DATA / "ghc-rts"


def _pause_texts(path: Path, gen: int) -> tuple[str, str]:
    """GHC's own ``Avg pause``/``Max pause`` of one generation (``0.0022``, ``0.0828``)."""
    m = re.search(rf"Gen\s+{gen}\s.*?([\d.]+)s\s+([\d.]+)s\s*$", path.read_text(), re.M)
    assert m, f"no Gen {gen} line in {path}"
    return m.group(1), m.group(2)


def _shifted(text: str, places: int) -> str:
    """``0.0022`` moved ``places`` digits to the left of the point (3: ms, 6: µs) with
    the same digits: ``2.2`` (none added, none dropped)."""
    whole, frac = text.split(".")
    frac += "0" * max(0, places - len(frac))
    digits = (whole + frac[:places]).lstrip("0") or "0"
    return digits + ("." + frac[places:] if frac[places:] else "")


def _expected(text: str) -> str:
    """The text of a sub-second time GHC printed as ``text`` seconds: ms from 1 ms,
    µs below."""
    return f"{_shifted(text, 3)} ms" if float(text) >= 1e-3 else f"{_shifted(text, 6)} µs"


def test_rts_pauses_keep_every_digit_ghc_printed_and_no_more():
    """GHC prints pauses to 0.1 ms (``0.0022s``): ``2.2 ms``, not ``0.002 s`` (a digit
    lost) nor ``2.200 ms`` (digits GHC did not print); the CLI's totals agree."""
    path = RTS / "hs-ad-v1.stats.txt"
    p = load(path)
    for gen in (0, 1):
        avg, mx = _pause_texts(path, gen)
        for key, text in ((f"gen{gen}_avg_pause_s", avg), (f"gen{gen}_max_pause_s", mx)):
            assert p.totals[key] == float(text)
            assert format_value(p.totals[key], Unit.SECONDS) == _expected(text), (key, text)
    shown = render_profile(p, [], [], color=False)
    assert f"gen 1 average pause: {_expected(_pause_texts(path, 1)[0])}\n" in shown
    assert "gen 1 average pause: 2.2 ms\n" in shown  # (the file's 0.0022s)
    assert "gen 0 average pause: 300 µs\n" in shown  # 0.0003s: not 300.0 µs


def test_rts_pause_delta_has_the_digits_and_unit_of_its_values():
    """``0.0022s`` -> ``0.0028s``: ``2.2 ms → 2.8 ms, Δ +600 µs`` (it was ``0.002 s →
    0.003 s, Δ +600.0 µs``); a Δ of a whole ms keeps the 0.1 ms digit (``+1.0 ms``)."""
    a, b = RTS / "hs-ad-v1.stats.txt", RTS / "hs-ad-v2.stats.txt"
    (x, _), (y, _) = _pause_texts(a, 1), _pause_texts(b, 1)
    pa, pb = load(a), load(b)
    base, new = pa.totals["gen1_avg_pause_s"], pb.totals["gen1_avg_pause_s"]
    assert (base, new) == (float(x), float(y))
    delta_us = round((float(y) - float(x)) * 1e6)
    assert format_total_delta(base, new, Unit.SECONDS) == f"+{delta_us} µs"
    s = Session.open(SessionSpec(files=(str(a), str(b))))
    row = next(ln for ln in render_totals(s.flat, color=False)
               if ln.startswith("gen 1 average pause"))
    assert row.startswith("gen 1 average pause † ")  # a time measured once
    assert row.split()[5:12] == [*_expected(x).split(), *_expected(y).split(),
                                 f"+{delta_us}", "µs", "+27.3%"]
    # one more 0.1 ms step on top of a whole-ms change: the digit GHC printed stays
    assert format_total_delta(base, base + 0.001, Unit.SECONDS) == "+1.0 ms"


def test_rts_machine_readable_times_keep_their_six_decimals_under_a_millisecond():
    """``-t --machine-readable`` prints seconds to 1 µs: ``"0.000257"`` is ``257 µs``
    (not ``257.0 µs``), ``"0.001346"`` is ``1.346 ms`` (not ``0.001 s``)."""
    path = RTS / "hs-ad-v1.t-machine-readable.txt"
    text = path.read_text()
    p = load(path)
    for key, field in (("gen0_avg_pause_s", "gen_0_avg_pause_seconds"),
                       ("gen1_avg_pause_s", "gen_1_avg_pause_seconds")):
        raw = re.search(rf'"{field}", "([\d.]+)"', text)
        assert raw and p.totals[key] == float(raw.group(1))
    assert format_value(p.totals["gen0_avg_pause_s"], Unit.SECONDS) == "257 µs"
    assert format_value(p.totals["gen1_avg_pause_s"], Unit.SECONDS) == "1.346 ms"
    # above a second: still seconds to the millisecond, the Δ too
    b = load(RTS / "hs-ad-v2.t-machine-readable.txt")
    assert format_total_delta(p.totals["mut_cpu_s"], b.totals["mut_cpu_s"], Unit.SECONDS) == \
        f"+{b.totals['mut_cpu_s'] - p.totals['mut_cpu_s']:.3f} s"
