"""Formatting numbers with their units: one rule per kind of metric, for every view.

The Qt models, the details pane, flame tooltips, the CLI tables and the reports all print
through this module, so the terminal and the window agree and no view invents digits:

* **bytes, counts, samples, ticks** are whole numbers with thousands separators (users
  compare exact allocation numbers such as 272,510,500).  A value that is not whole (a
  mean of repeated runs) or that was derived from a rounded percentage is shown as what it
  is, an approximation: ``≈−869``, ``≈26,000,000`` (rounded to the digit it is known to).
* **times** get a fixed number of decimals: seconds to the millisecond unless the value is
  only known more coarsely (``Profile.rounding``: a GHC ``-p`` time derived from a %time
  printed to 0.1 % is known to ± 0.05 % of the total, so it gets no more digits than
  that).  A time under a second known to better than the millisecond (a GHC RTS pause
  read as ``0.0022s``) is printed in ms / µs with the digits it was read with: ``2.2 ms``,
  ``300 µs`` (not ``0.002 s``, ``300.0 µs``); a Δ of two run totals gets the digits of its
  printed operands (:func:`format_total_delta`).  Nanosecond periods (perf
  ``cpu-clock``/``task-clock``, pprof ``cpu``) are scaled to ns / µs / ms / s - per value
  when the text carries its unit, per column (the column's largest value decides) when
  the header carries it.
* **percentages** have one decimal; deltas of percentages are percentage points (pp).
* **zero** is ``0`` in every kind; a non-zero value too small for the printed digits is
  ``<0.1`` / ``<0.001`` rather than a zero that did not happen.

Headers carry the unit when the cells do not: :func:`unit_label` / :func:`with_unit`
(``time (s)``, ``alloc (B)``, ``self period (ms)``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from profdiff.parsers.model import Unit

_SUFFIX = {
    Unit.BYTES: " B",
    Unit.SECONDS: " s",
    Unit.NANOSECONDS: " ns",
    Unit.PERCENT: " %",
    Unit.BYTE_SECONDS: " B·s",
    Unit.TICKS: "",
    Unit.SAMPLES: "",
    Unit.COUNT: "",
    Unit.RATIO: "x",
}
_WHOLE = (Unit.BYTES, Unit.COUNT, Unit.TICKS, Unit.SAMPLES)
MINUS = "−"
APPROX = "≈"
TIMED_MARK = "†"
"""After a run total measured once (:attr:`parsers.model.Metric.timed`: times, and the GC
share, productivity and allocation rate computed from them; heap residency)."""
TIMED_NOTE = (f"{TIMED_MARK} measured once: runs of one binary differ by tens of percent "
              "in these")
"""What :data:`TIMED_MARK` means, wherever it is explained (each place adds how to give
repeated runs).  Tens of percent: three ``-s`` runs of one hs-ad binary, MUT CPU
2.6-3.2 s and elapsed 4.2-13.9 s (tests/data/ghc-rts/hs-ad-noise-v1-run*.stats.txt)."""
TIMED_NEUTRAL = 0.05
"""A total measured once moving by at most this share of its baseline is not coloured as
better or worse anywhere (header, Summary, Run totals and RTS tables: the tables' colour
scale is five times wider for these, neutral within ±5 %)."""


def timed_neutral(rel: float | None) -> bool:
    """Whether a measured-once total's relative change is within :data:`TIMED_NEUTRAL`."""
    return rel is not None and rel == rel and abs(rel) <= TIMED_NEUTRAL


@dataclass(frozen=True)
class Scale:
    """A display unit for a time column: values are divided by ``factor`` and printed with
    ``decimals`` decimals; ``label`` is the unit (``ms``)."""

    factor: float
    label: str
    decimals: int


_NS_SCALES = (Scale(1e9, "s", 3), Scale(1e6, "ms", 3), Scale(1e3, "µs", 3), Scale(1.0, "ns", 0))
SECONDS_SCALE = Scale(1.0, "s", 3)


def time_scale(magnitude: float, unit: Unit | str) -> Scale | None:
    """The display scale of a time of size ``magnitude`` (in ``unit``): nanoseconds become
    the largest of s / ms / µs / ns the magnitude reaches; seconds stay seconds; other
    units have no scale (None)."""
    unit = Unit(unit)
    if unit is Unit.SECONDS:
        return SECONDS_SCALE
    if unit is not Unit.NANOSECONDS:
        return None
    m = abs(magnitude) if magnitude is not None and math.isfinite(magnitude) else 0.0
    for s in _NS_SCALES:
        if m >= s.factor:
            return s
    return _NS_SCALES[-1]


def column_scale(values: Any, unit: Unit | str) -> Scale | None:
    """One scale for a whole column (its largest |value| decides), so the rows of a
    column can be compared digit by digit under a header that names the unit."""
    unit = Unit(unit)
    if unit not in (Unit.SECONDS, Unit.NANOSECONDS):
        return None
    a = np.abs(np.asarray(values, dtype=np.float64))
    a = a[np.isfinite(a)]
    return time_scale(float(a.max()) if a.size else 0.0, unit)


def step_of(rounding: float) -> float:
    """The decimal step of the last digit a value known to ± ``rounding`` deserves
    (0: exact).  ``± 0.00144 s`` -> ``0.001``; ``± 2.1 MB`` -> ``1,000,000``."""
    if not rounding or not math.isfinite(rounding) or rounding <= 0:
        return 0.0
    return 10.0 ** math.floor(math.log10(2.0 * rounding))


def digits_rounding(runs: Any, metric: str, run: int, baseline: int | None = None) -> float:
    """The ± half-width that decides how many digits ``metric`` gets in ``run`` (a
    Δ against ``baseline``: both runs' summed): the run's own ``Profile.rounding``, the
    same for every row of a column so the column reads digit by digit (a flat row summing
    many rounded call sites is less precise still; its ≈ verdict says so)."""
    h = float(runs[run].rounding.get(metric, 0.0))
    if baseline is not None:
        h += float(runs[baseline].rounding.get(metric, 0.0))
    return h


def unit_label(unit: Unit | str, scale: Scale | None = None) -> str:
    """The unit a header names, or "" when the title already says it (percent, counts)."""
    unit = Unit(unit)
    if scale is not None:
        return scale.label
    return {Unit.BYTES: "B", Unit.SECONDS: "s", Unit.NANOSECONDS: "ns",
            Unit.BYTE_SECONDS: "B·s"}.get(unit, "")


_SPELLED_UNIT = re.compile(r"\s*\((?:nanoseconds|microseconds|milliseconds|seconds|bytes)\)$")


def with_unit(title: str, unit: Unit | str, scale: Scale | None = None) -> str:
    """``time`` -> ``time (s)``; a unit the title spells out (pprof's ``cpu
    (nanoseconds)``) gives way to the shown one; percent and count titles stay."""
    u = unit_label(unit, scale)
    return f"{_SPELLED_UNIT.sub('', title)} ({u})" if u else title


def _bad(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _decimal_text(x: float, decimals: int) -> str:
    """``x`` (>= 0) with ``decimals`` decimals; a non-zero value that would print as zero
    is ``<0.001`` (its digits are below what the column prints)."""
    text = f"{x:,.{decimals}f}"
    if x > 0 and float(text.replace(",", "")) == 0:
        return "<" + f"{10.0 ** -decimals:.{decimals}f}"
    return text


def _whole_text(x: float, rounding: float) -> tuple[str, str]:
    """(≈ or "", digits) of a byte/count magnitude: exact whole numbers as they are,
    anything else rounded to the digit it is known to and marked ≈."""
    step = max(step_of(rounding), 1.0)
    if rounding <= 0 and abs(x - round(x)) < 1e-6:
        return "", f"{int(round(x)):,}"
    return APPROX, f"{int(round(round(x / step) * step)):,}"


def carried_step(x: float) -> float:
    """The step of the last decimal digit a time read from text carries (``0.0022`` ->
    ``0.0001``; 0 when it has more than 12 decimals, i.e. was computed, not read).

    Why: totals (GHC's RTS statistics) carry no ``rounding``; the digits they were read
    with are all that is known of them, so a printed value must neither drop one of those
    digits nor add zeros the file did not print (``300.0 µs`` for ``0.0003s``).  A Δ of
    two such values has the same decimals, up to float noise (hence the tolerance)."""
    for d in range(13):
        if abs(round(x, d) - x) <= 1e-7 * x:
            return 10.0 ** -d
    return 0.0


def _own_time_scale(x: float, unit: Unit, rounding: float) -> tuple[float, Unit, float]:
    """(value, unit, step of its last known digit in that unit) a single time is printed
    from.  A seconds value under 1 s known to better than the millisecond (read from text
    with more decimals, like GHC's ``0.0022s`` pauses, or computed) moves to ns, so that
    :func:`time_scale` gives it ms / µs: ``2.2 ms``, not ``0.002 s`` (a digit lost, and
    another unit than its ``+600 µs`` Δ).  A time known only to the millisecond or worse
    (``0.893s``; GHC ``-p`` times) stays in seconds, as its column's other rows."""
    step = step_of(rounding) if rounding > 0 else 0.0
    if unit is not Unit.SECONDS or x >= 1.0:
        return x, unit, step
    if rounding <= 0:
        step = carried_step(x)
    if step >= 1e-3:
        return x, unit, step if rounding > 0 else 0.0  # (seconds: to the millisecond)
    return x * 1e9, Unit.NANOSECONDS, step * 1e9


def _time_digits(x: float, unit: Unit, rounding: float, scale: Scale | None
                 ) -> tuple[float, Scale, int, float, float]:
    """(x in the scale's unit, scale, decimals, step of the last known digit in the
    scale's unit (0: exact), size of one scale unit in ``unit``) of a time magnitude:
    the one place that decides a time's digits, for its text and for
    :func:`shown_rounding`."""
    step = step_of(rounding)
    moved = 1.0
    if scale is None:
        x0 = x
        x, unit, step = _own_time_scale(x, unit, rounding)
        moved = x0 / x if x else 1.0
    sc = scale or time_scale(x, unit) or SECONDS_SCALE
    if scale is not None or sc.label in ("s", "ns"):
        dec = sc.decimals  # a column's fixed decimals; seconds to the millisecond
    else:  # one value in ms / µs: four significant digits (1.001 ms, 123.5 µs)
        dec = max(0, 3 - math.floor(math.log10(x / sc.factor)))
    step /= sc.factor
    if step > 0:  # known only to ± rounding (or read with these decimals): no digit below
        dec = max(0, min(dec, -math.floor(math.log10(step) + 1e-12)))
    return x / sc.factor, sc, dec, step, sc.factor * moved


def _time_text(x: float, unit: Unit, rounding: float, scale: Scale | None) -> tuple[str, str]:
    """(digits, unit label) of a time magnitude in ``scale`` (default: its own scale,
    :func:`_own_time_scale`)."""
    v, sc, dec, step, _ = _time_digits(x, unit, rounding, scale)
    if step > 0 and round(v, dec) == 0:
        return APPROX + "0", sc.label  # within the rounding of zero
    return _decimal_text(v, dec), sc.label


def total_rounding(v: float | None, unit: Unit | str) -> float:
    """Half the last digit :func:`format_value` prints of a run total (a number read from
    text, with no ``rounding`` of its own); 0 but for seconds.  Summed over both runs it is
    the ``rounding`` of their Δ (:func:`format_total_delta`).

    Why: the Δ then has the digits and the unit of the values it is printed next to:
    ``2.2 ms → 3.2 ms`` is ``+1.0 ms``, not ``+0.001 s``; ``2.247 s → 3.064 s`` is
    ``+0.817 s``, not ``+816.6 ms``."""
    if v is None or _bad(v) or not math.isfinite(v) or v == 0 or Unit(unit) is not Unit.SECONDS:
        return 0.0
    _, _, dec, _, one = _time_digits(abs(float(v)), Unit.SECONDS, 0.0, None)
    return 0.5 * 10.0 ** -dec * one


def _magnitude(x: float, unit: Unit, rounding: float, scale: Scale | None
               ) -> tuple[str, str, str]:
    """(≈ or "", digits, suffix) of |value| > 0 in ``unit``: the module docstring's rules."""
    if unit in _WHOLE:
        return (*_whole_text(x, rounding), _SUFFIX[unit])
    if unit in (Unit.SECONDS, Unit.NANOSECONDS):
        digits, label = _time_text(x, unit, rounding, scale)
        return "", digits, " " + label
    if unit is Unit.PERCENT:
        return "", _decimal_text(x, 1), _SUFFIX[unit]
    if unit is Unit.BYTE_SECONDS:
        return "", (f"{x:,.0f}" if x >= 1000 else f"{x:.4g}"), _SUFFIX[unit]
    return "", (f"{x:,.0f}" if x >= 1000 else f"{x:,.4g}"), _SUFFIX.get(unit, "")


def format_value(v: float | None, unit: Unit | str, *, suffix: bool = True,
                 rounding: float = 0.0, scale: Scale | None = None) -> str:
    """``4291393792`` bytes -> ``4,291,393,792 B``; ``2.876`` s -> ``2.876 s``;
    ``3133133130`` ns -> ``3.133 s``; ``0`` -> ``0``.

    ``rounding``: the ± half-width the value is known to (``Profile.rounding``);
    ``scale``: the column's time scale (:func:`column_scale`) when the header names it.
    """
    if v is None or _bad(v):  # (the None test narrows the type)
        return "-"
    if type(unit) is not Unit:
        unit = Unit(unit)
    v = float(v)
    if math.isinf(v):
        return ("+" if v > 0 else "-") + "inf"
    if v == 0:
        sfx = _SUFFIX.get(unit, "") if unit not in (Unit.SECONDS, Unit.NANOSECONDS) else \
            " " + (scale.label if scale else "s")  # a zero time has no scale to show
        return "0" + (sfx if suffix else "")
    approx, digits, sfx = _magnitude(abs(v), unit, rounding, scale)
    if digits in ("0", APPROX + "0"):  # within the rounding of zero
        return APPROX + "0" + (sfx if suffix else "")
    return approx + (MINUS if v < 0 else "") + digits + (sfx if suffix else "")


def format_delta(d: float | None, unit: Unit | str, *, suffix: bool = True,
                 rounding: float = 0.0, scale: Scale | None = None) -> str:
    """Signed delta (``+0.910 s``, ``−869 B``); deltas of percentages are percentage
    points (``+24.7 pp``).  ``rounding``: the delta's half-width (both runs' summed)."""
    if d is None or _bad(d):  # (the None test narrows the type)
        return "-"
    if type(unit) is not Unit:
        unit = Unit(unit)
    d = float(d)
    if d == 0:
        return "0"
    if math.isinf(d):
        return ("+" if d > 0 else MINUS) + "inf"
    approx, digits, sfx = _magnitude(abs(d), unit, rounding, scale)
    if unit is Unit.PERCENT:
        sfx = " pp"
    if digits in ("0", APPROX + "0"):  # a change within the rounding: no sign to give
        return APPROX + "0"
    return approx + ("+" if d > 0 else MINUS) + digits + (sfx if suffix else "")


def format_total_delta(base: float | None, new: float | None, unit: Unit | str) -> str:
    """:func:`format_delta` of two run totals (``new − base``), with the digits of the
    printed operands (:func:`total_rounding`): totals carry no ``rounding``, and the Δ's
    own float (``0.0005999999999999998``) cannot say that ``0.0022 → 0.0032`` is
    ``+1.0 ms``.  A change below those digits is printed with its own (``2.247251 →
    2.2475 s`` is ``+249 µs``), never as a ``≈0`` the data does not support."""
    if base is None or new is None or _bad(base) or _bad(new):
        return "-"
    d = new - base
    text = format_delta(d, unit, rounding=total_rounding(base, unit) + total_rounding(new, unit))
    return format_delta(d, unit) if text == APPROX + "0" else text


def format_rel(r: float | None) -> str:
    """Relative change ``0.529`` -> ``+52.9%``; from a base of zero -> ``from 0``.

    Why not "new": the row may well have been there (hs-ad's addGrad: 4,433,920 entries
    in both runs, 0 % time in v1; a Julia line that ran and allocated 0 bytes); its
    status says whether it was added."""
    if r is None or _bad(r):  # (the None test narrows the type)
        return "-"
    if math.isinf(r):
        return "from 0" if r > 0 else "gone"
    if r == 0:
        return "0%"
    if r >= 10:  # past +1000 % a ratio reads better: x11.0
        return f"x{r + 1:,.1f}"
    return ("+" if r > 0 else MINUS) + _decimal_text(abs(r) * 100, 1) + "%"


def format_precision(h: float, unit: Unit | str) -> str:
    """The ± half-width itself, to two significant digits (``± 0.05 %``, ``± 0.0014 s``,
    ``± 2,100,000 B``): printed with the value's own rule it would round (0.05 -> 0.1)."""
    unit = Unit(unit)
    if _bad(h) or not math.isfinite(h):
        return "-"
    x = float(f"{abs(h):.2g}")
    digits = f"{int(x):,}" if x >= 100 else f"{x:g}"
    sfx = _SUFFIX.get(unit, "")
    if unit is Unit.NANOSECONDS:
        sc = time_scale(x, unit) or SECONDS_SCALE
        digits, sfx = f"{float(f'{x / sc.factor:.2g}'):g}", " " + sc.label
    return "± " + digits + sfx


def format_many(values: Any, unit: Unit | str, *, delta: bool = False,
                rounding: float = 0.0) -> list[str]:
    """:func:`format_value` (or :func:`format_delta`) of every value of a column, with a
    vectorised path for whole byte/count values (the same text, for big reports)."""
    u = Unit(unit)
    v = np.asarray(values, dtype=np.float64)
    if u in _WHOLE and not rounding and np.all(np.isfinite(v)) \
            and np.all(np.abs(v - np.round(v)) < 1e-6):
        sfx = _SUFFIX[u]
        if not delta:
            return ["0" + sfx if x == 0 else f"{MINUS if x < 0 else ''}{abs(x):,.0f}{sfx}"
                    for x in v.tolist()]
        return ["0" if x == 0 else f"{'+' if x > 0 else MINUS}{abs(x):,.0f}{sfx}"
                for x in v.tolist()]
    one = format_delta if delta else format_value
    return [one(x, u, rounding=rounding) for x in v.tolist()]


def human_bytes(v: float) -> str:
    """Short form for summaries: 4.29 GB (decimal units, as GHC prints bytes in full)."""
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.2f} {unit}"
    return f"{v:.0f} B"
