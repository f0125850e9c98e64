"""Formatting numbers with their units, shared by the CLI table, Qt models and tooltips.

One place decides how a byte count or a time looks, so the terminal and the window agree.
Values keep full precision with thousands separators (users compare exact allocation
numbers such as 272,510,500 entries); times and percents get a fixed number of decimals.
"""

from __future__ import annotations

import math

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


def _is_integral(unit: Unit) -> bool:
    return unit in (Unit.BYTES, Unit.COUNT, Unit.TICKS, Unit.SAMPLES, Unit.NANOSECONDS)


def format_value(v: float | None, unit: Unit | str, *, suffix: bool = True) -> str:
    """``4291393792`` bytes -> ``4,291,393,792 B``; ``2.876`` s -> ``2.876 s``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    unit = Unit(unit)
    sfx = _SUFFIX.get(unit, "") if suffix else ""
    if math.isinf(v):
        return ("+" if v > 0 else "-") + "inf"
    if _is_integral(unit) and abs(v - round(v)) < 1e-6:
        return f"{int(round(v)):,}{sfx}"
    if unit is Unit.PERCENT:
        return f"{v:,.1f}{sfx}" if abs(v) >= 0.05 or v == 0 else f"{v:.2g}{sfx}"
    if unit is Unit.SECONDS:
        return f"{v:,.3f}{sfx}" if abs(v) >= 0.001 or v == 0 else f"{v:.3g}{sfx}"
    if abs(v) >= 1000:
        return f"{v:,.0f}{sfx}"
    return f"{v:,.4g}{sfx}"


def format_delta(d: float | None, unit: Unit | str, *, suffix: bool = True) -> str:
    """Signed delta; percent-of-run deltas are percentage points (``pp``)."""
    if d is None or (isinstance(d, float) and math.isnan(d)):
        return "-"
    unit = Unit(unit)
    if d == 0:
        return "0"
    s = format_value(abs(d), unit, suffix=False)
    sign = "+" if d > 0 else "−"
    if suffix:
        s += " pp" if unit is Unit.PERCENT else _SUFFIX.get(unit, "")
    return sign + s


def format_rel(r: float | None) -> str:
    """Relative change ``0.529`` -> ``+52.9%``; new-from-zero -> ``new``."""
    if r is None or (isinstance(r, float) and math.isnan(r)):
        return "-"
    if math.isinf(r):
        return "new" if r > 0 else "gone"
    if r == 0:
        return "0%"
    if r >= 10:  # past +1000 % a ratio reads better: x11.0
        return f"x{r + 1:,.1f}"
    return f"{r * 100:+,.1f}%".replace("-", "−")


def human_bytes(v: float) -> str:
    """Short form for summaries: 4.29 GB (decimal units, as GHC prints bytes in full)."""
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.2f} {unit}"
    return f"{v:.0f} B"
