"""Cost of one formatted cell (viewer.units) per kind of value, on real columns.

Why: the Qt models format every visible cell on each repaint, so the per-value cost of
the formatting rule bounds the repaint of a screenful (~40 rows x 20 columns).  Prints
microseconds per call; no timing asserts.

    .venv/bin/python tests/bench/bench_units.py
"""

from __future__ import annotations

import time
from pathlib import Path

from profdiff.parsers import load
from profdiff.viewer.units import column_scale, format_delta, format_value

DATA = Path(__file__).resolve().parents[1] / "data"


def per_call_us(fn, values, rounds: int = 5) -> float:
    """Best of ``rounds`` passes over ``values``, in µs per call."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for v in values:
            fn(v)
        best = min(best, time.perf_counter() - t)
    return best / len(values) * 1e6


def main() -> None:
    ghc = load(DATA / "hs-ad" / "v1" / "ad.prof")
    perf = load(DATA / "perf" / "c-vm" / "v1" / "perf.script.txt.gz")
    cases = []
    for name in ("alloc_bytes", "time_s", "time_pct", "entries"):
        m, h = ghc.metric(name), ghc.rounding.get(name, 0.0)
        vals = ghc.values[name].tolist() * 40
        cases.append((f"ghc -p {name}", lambda v, u=m.unit, h=h: format_value(v, u, rounding=h),
                      vals))
    m = perf.metric("total_period")
    sc = column_scale(perf.values[m.name], m.unit)
    vals = perf.values[m.name].tolist() * 200
    cases.append(("perf period (column scale)",
                  lambda v, u=m.unit: format_value(v, u, suffix=False, scale=sc), vals))
    cases.append(("perf period (own scale)", lambda v, u=m.unit: format_value(v, u), vals))
    cases.append(("perf period delta", lambda v, u=m.unit: format_delta(v - 1e6, u), vals))
    for label, fn, vals in cases:
        print(f"{label:28s} {per_call_us(fn, vals):6.2f} µs/value  ({len(vals)} values)")


if __name__ == "__main__":
    main()
