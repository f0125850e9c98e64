"""GHC's own per-cost-centre table tightens the flat rows' rounding (Qt-free).

Why: a flat row sums a cost centre's call sites, each printed to 0.1 % of the run, so its
half-width grows with the number of sites: ``length'`` of the hcy2c reports sums 39 sites
into 6.7 s ± 3.6 s, and its +4.3 s (+64 %) read "≈0, within rounding".  GHC prints the
same cost centre's own %time and %alloc once more in the table above the tree (3.9 % ->
11.4 %), to ±0.05 % of the run.  The true value lies in both intervals, so the row takes
their intersection: ``7.30 ± 0.09 s -> 11.23 ± 0.05 s``.

Only runs whose reader kept that table (``extras["top_table"]``: GHC text reports) and
only the self percent metrics it prints and their absolute twins (``time_s``,
``alloc_bytes``) with a rounding, i.e. not the exact ticks and bytes of a ``-P`` report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from profdiff.parsers.model import Kind, Profile, Unit

PRINTED_HALF = 0.05
"""Half-width, in percent of the run, of one percentage in GHC's table (one decimal)."""


def tighten_flat(profiles: Sequence[Profile], node: np.ndarray, values: dict[str, np.ndarray],
                 rounding: dict[str, np.ndarray]) -> None:
    """Intersect each flat row's interval with the one GHC's table gives, in place
    (``node``: each row's representative node per run, -1 where absent)."""
    for r, p in enumerate(profiles):
        table = p.extras.get("top_table") if p.extras else None
        if not table or p.incomplete:
            continue
        printed = _printed_by_key(table)
        rows, keys = _rows_and_keys(p, node[:, r])
        for m in p.metrics:
            if m.kind is not Kind.SELF or m.unit is not Unit.PERCENT or m.name not in rounding:
                continue
            twin = m.percent_of if m.percent_of in rounding else None
            scale = _scale(p, m.name, twin)
            for row, key in zip(rows, keys, strict=True):
                got = printed.get(key)
                if got is None or got[0].get(m.name) is None:
                    continue
                pct, k = got[0][m.name], got[1]
                _intersect(values[m.name], rounding[m.name], row, r, pct, PRINTED_HALF * k)
                if twin is not None and scale:
                    _intersect(values[twin], rounding[twin], row, r, pct * scale,
                               PRINTED_HALF * k * scale)


def _printed_by_key(table: list[dict[str, Any]]) -> dict[tuple, tuple[dict[str, float], int]]:
    """(name, module, src or None) -> (summed percentages, number of lines summed): GHC 7
    reports have no SRC, and two instance methods of one module print two lines."""
    out: dict[tuple, tuple[dict[str, float], int]] = {}
    for e in table:
        key = (e["name"], e["module"], e.get("src") or None)
        sums, k = out.get(key, ({}, 0))
        for metric in ("time_pct", "alloc_pct"):
            if e.get(metric) is not None:
                sums[metric] = sums.get(metric, 0.0) + float(e[metric])
        out[key] = (sums, k + 1)
    return out


def _rows_and_keys(p: Profile, nodes: np.ndarray) -> tuple[list[int], list[tuple]]:
    """The rows present in ``p`` and their (name, module, src or None) in ``p``."""
    rows = np.flatnonzero(nodes >= 0)
    f = p.frame[nodes[rows]]
    names, modules = p.frames.name[f].tolist(), p.frames.module[f].tolist()
    srcs = [s or None for s in p.frames.src[f].tolist()]
    return rows.tolist(), list(zip(names, modules, srcs, strict=True))


def _scale(p: Profile, pct: str, twin: str | None) -> float:
    """Absolute units per percentage point of the run: the twin's rounding over the
    percentage's (both are the same 0.05 % of the run's total)."""
    if twin is None:
        return 0.0
    hp, ht = float(p.rounding.get(pct, 0.0)), float(p.rounding.get(twin, 0.0))
    return ht / hp if hp else 0.0


def _intersect(v: np.ndarray, h: np.ndarray, row: int, run: int, centre: float,
               half: float) -> None:
    """``v[row, run] ± h[row, run]`` narrowed to its overlap with ``centre ± half`` (left
    as it is when they do not overlap: then one of them is not what it claims)."""
    lo = max(v[row, run] - h[row, run], centre - half)
    hi = min(v[row, run] + h[row, run], centre + half)
    if lo <= hi:
        v[row, run] = 0.5 * (lo + hi)
        h[row, run] = 0.5 * (hi - lo)
