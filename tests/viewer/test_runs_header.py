"""The runs' header above the views (:func:`viewer.qt.widgets.summary_html`): totals
that can be read apart, and Δ colours only where a direction is better."""

from __future__ import annotations

import re
from pathlib import Path

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.qt.widgets import GAP_PX, summary_html

DATA = Path(__file__).parents[1] / "data"


def _cells(html: str) -> list[list[str]]:
    return [re.findall(r"<t[dh]([^>]*)>", row) for row in html.split("<tr>")[1:]]


def test_the_totals_side_by_side_are_spaced_apart():
    """hs-ad .prof pair: total ticks and total alloc are right-aligned next to each other
    ('7,718,382 12,517,993,311,808 B' read as one number with 2 px between them); every
    column after the file's starts with a gap."""
    cmp = align([load(DATA / "hs-ad/v1/ad.prof"), load(DATA / "hs-ad/v2/ad.prof")])
    html = summary_html(cmp)
    assert "total ticks" in html and "total alloc" in html
    rows = _cells(html)
    assert len(rows) == 4  # head, baseline, current, Δ
    gap = f"padding-left:{GAP_PX}px"
    for attrs in rows[:3]:  # the head and the runs: every column after the file's
        assert len(attrs) > 4
        assert all(gap in a for a in attrs[2:]), attrs
    totals = [a for a in rows[3] if "align=right" in a]  # the Δ row: its totals
    assert len(totals) == len(rows[1]) - 4 and all(gap in a for a in totals)
    assert GAP_PX >= 10


def test_heap_totals_without_a_better_direction_are_not_coloured():
    """hs-ad heap profiles: more heap samples (31 -> 40) and a later peak (1.738 s ->
    2.651 s) are neither worse nor better (grey); the mean heap grew (red, +27.1 %); the
    peak fell by 4.4 %, within what one census of each run can tell (grey, as in the
    Run totals table: neutral within ±5 % for a total measured once)."""
    cmp = align([load(DATA / "ghc-hp/hs-ad-v1.hp"), load(DATA / "format-views/hs-ad-v2.hp")])
    delta_row = summary_html(cmp).split("<tr>")[-1]
    cells = re.findall(r"color:(#[0-9a-f]{3,6})[^>]*><b>([^<]*)</b>", delta_row)
    colour = {text.split(" (")[0]: c for c, text in cells}
    assert colour["+9"] == "#555"
    assert colour["+0.913 s"] == "#555"
    assert colour["−75,336 B"] == "#555"
    assert colour["≈+254,691 B"] == "#b2182b"


def test_program_and_date_columns_only_when_a_run_has_them():
    """Julia's pprof files carry no command line and no time (time_nanos 0): the header
    leaves both columns out, so the totals follow the file names; the hs-ad .prof pair
    has both (GHC's first line names the program and the date)."""
    pp = DATA / "pprof"
    cmp = align([load(pp / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz"),
                 load(pp / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz")])
    assert not any(p.meta.get("date") or p.meta.get("program") for p in cmp.runs)
    html = summary_html(cmp)
    assert "command line" not in html and ">date<" not in html
    rows = _cells(html)
    assert len(rows[1]) == 2 + len([a for a in rows[1] if "align=right" in a])
    assert "18,894" in html and "7,006" in html  # the events totals, in the run rows
    ghc = summary_html(align([load(DATA / "hs-ad/v1/ad.prof"), load(DATA / "hs-ad/v2/ad.prof")]))
    assert "program / command line" in ghc and ">date<" in ghc


def test_a_self_total_equal_to_its_inclusive_twin_is_shown_once():
    """A PProf.jl allocation profile totals its allocations as self and as total sums,
    the same number for a whole run (11,570 and 526,952 B here): the header, the
    Summary and ``diff``'s totals show each once; the comparison keeps every key (JSON,
    gates, the Run totals tab)."""
    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.summary import build_summary

    p = load(DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz")
    cmp = align([p, p])
    assert p.totals["self_alloc_count"] == p.totals["total_alloc_count"] == 11_570
    assert {"self_alloc_count", "self_alloc_bytes"} <= set(cmp.total_keys)
    shown = cmp.distinct_total_keys
    assert "self_alloc_count" not in shown and "self_alloc_bytes" not in shown
    assert {"total_alloc_count", "total_alloc_bytes", "total_samples"} <= set(shown)
    html = summary_html(cmp)
    assert html.count(">11,570<") == 2 * 2  # total allocs and samples, in two runs
    keys = [t.key for t in build_summary(Session(SessionSpec(), [p, p])).totals]
    assert "self_alloc_count" not in keys and "total_alloc_count" in keys
