"""Flat rows are cost centres as GHC defines them: (label, module, SRC).

GHC prints a per-cost-centre summary at the top of every ``.prof``.  Summing the tree's
rows per flat row must reproduce it within the rounding of the printed percentages; a
flat key of (label, module) alone merges the two ``trainStep.(...)`` pattern bindings of
hs-ad's ``Main`` (lines 22 and 23) into one row and misses the summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff import parsers
from profdiff.parsers.errors import ProfdiffError
from profdiff.viewer.compare import align

DATA = Path(__file__).parents[1] / "data"
PROFS = sorted((DATA / "ghc-prof").glob("*.prof*")) + sorted((DATA / "hs-ad").rglob("ad*.prof"))


def _load(path: Path):
    try:
        p = parsers.load(path)
    except ProfdiffError:
        return None
    return p if p.format == "ghc-prof" and p.extras.get("top_table") else None


@pytest.mark.parametrize("path", PROFS, ids=lambda p: p.name)
def test_flat_rows_reproduce_ghc_summary(path: Path) -> None:
    p = _load(path)
    if p is None or p.incomplete:
        pytest.skip("no summary table or not a complete GHC text report")
    cmp = align([p, p], mode="flat")
    by_cc = {}
    for i in range(cmp.n_rows):
        by_cc.setdefault((cmp.name[i], cmp.module[i], cmp.src[i]), []).append(i)
    # Reports without a SRC column (GHC 7.x) print one summary line per cost centre but
    # give no way to tell two instance methods of one module apart: those lines are summed,
    # and since the summary leaves out small cost centres, they bound the row from below.
    summary: dict[tuple, list[dict]] = {}
    for e in p.extras["top_table"]:
        if e.get("time_pct") or e.get("alloc_pct"):  # -pa lists never-entered ones too
            summary.setdefault((e["name"], e["module"], e.get("src")), []).append(e)
    checked = 0
    for (name, module, src), entries in summary.items():
        rows = by_cc.get((name, module, src), []) if src else [
            i for (n, m, _s), ids in by_cc.items() if (n, m) == (name, module) for i in ids]
        assert len(rows) == 1, (name, module, src, rows)
        (i,) = rows
        for metric in ("time_pct", "alloc_pct"):
            printed = sum(e[metric] for e in entries)
            half = cmp.rounding[metric][i, 0] if metric in cmp.rounding else 0.0
            tol = half + 0.05 * len(entries) + 1e-9
            if src:
                assert abs(cmp.values[metric][i, 0] - printed) <= tol, (name, module, metric)
            else:  # the summary omits the small ones of the same name: a lower bound only
                assert cmp.values[metric][i, 0] >= printed - tol, (name, module, metric)
        checked += 1
    assert checked


def test_one_label_at_two_srcs_is_two_rows() -> None:
    p = parsers.load(DATA / "hs-ad" / "v1" / "ad.prof")
    cmp = align([p, parsers.load(DATA / "hs-ad" / "v2" / "ad.prof")], mode="flat")
    rows = np.flatnonzero(cmp.name == "trainStep.(...)")
    assert sorted(cmp.src[rows].tolist()) == ["Main.hs:22:7-57", "Main.hs:23:7-57"]
    assert cmp.present[rows].all()  # matched across the two versions


def test_ghcs_own_table_narrows_a_flat_rows_rounding() -> None:
    """hcy2c (GHC 7.8): length' sums 39 call sites, each printed to 0.1 % of the run, so
    its sum alone is 6.7 s ± 3.6 s and its +4.3 s read "≈0, within rounding".  GHC's own
    table above the tree prints it once: 3.9 % of 187.08 s and 11.4 % of 98.47 s, to
    ±0.05 %.  The row takes the overlap of both intervals, and its change is real."""
    ghc = DATA / "ghc-prof"
    runs = [parsers.load(ghc / f"ghc-7.8.4-hcy2c-{w}-regex-removal-2015-09-09.prof")
            for w in ("before", "after")]
    cmp = align(runs, mode="flat")
    (r,) = np.flatnonzero(cmp.name == "length'")
    totals = [p.totals["total_time_s"] for p in runs]
    printed = [e["time_pct"] for p in runs for e in p.extras["top_table"]
               if e["name"] == "length'"]
    assert printed == [3.9, 11.4] and totals == [187.08, 98.47]
    for i in (0, 1):
        lo = printed[i] * totals[i] / 100 - 0.05 * totals[i] / 100
        hi = printed[i] * totals[i] / 100 + 0.05 * totals[i] / 100
        v, h = cmp.values["time_s"][r, i], cmp.rounding["time_s"][r, i]
        assert lo - 1e-9 <= v - h and v + h <= hi + 1e-9  # inside GHC's own interval
        assert h <= 0.05 * totals[i] / 100 + 1e-9
        assert abs(cmp.values["time_pct"][r, i] - printed[i]) <= 0.05 + 1e-9
    assert cmp.changed_at("time_s", r) and cmp.changed_at("time_pct", r)
