"""Units and precision in the window (issue 19 item 6): headers name the unit in absolute
mode, cells keep the digits their values have, the |Δ| threshold names its unit, on the
real hs-ad pair and the c-vm perf pair (perf script text: no perf binary needed)."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt

from profdiff.viewer.qt.widgets import details_html

DATA = Path(__file__).resolve().parents[1] / "data"
HS1, HS2 = DATA / "hs-ad" / "v1" / "ad.prof", DATA / "hs-ad" / "v2" / "ad.prof"
VM1 = DATA / "perf" / "c-vm" / "v1" / "perf.script.txt.gz"
VM2 = DATA / "perf" / "c-vm" / "v2" / "perf.script.txt.gz"


def _headers(model) -> list[str]:
    return [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]


def _column(model, header: str) -> int:
    return _headers(model).index(header)


def _cells(model, col: int) -> list[str]:
    """Every cell of column ``col``, the whole tree walked."""
    out, todo = [], [QModelIndex()]
    while todo:
        parent = todo.pop()
        for r in range(model.rowCount(parent)):
            out.append(model.data(model.index(r, col, parent)))
            todo.append(model.index(r, 0, parent))
    return out


def test_absolute_mode_headers_carry_units_and_cells_their_digits(make_window):
    w = make_window(1400, 800)
    w.load_paths([str(HS1), str(HS2)])
    w.act_percent.setChecked(False)
    model = w.diff.models[0]
    heads = _headers(model)
    assert "time (s)\nbase" in heads and "time (s)\nΔ" in heads
    assert "alloc (B)\nnew" in heads and "time\nΔ%" in heads
    # the threshold follows the mode: the same number, named for what it is
    assert w.threshold_spin.suffix() == " % of total"
    times = _cells(model, _column(model, "time (s)\nbase"))
    assert "0.000" not in times and "0" in times
    assert {len(t.split(".")[1]) for t in times if "." in t} == {3}  # ± 1.44 ms
    alloc = [t for t in _cells(model, _column(model, "alloc (B)\nbase")) if t not in ("0", "·")]
    assert alloc and all(re.fullmatch(r"≈[\d,]+,000,000", t) for t in alloc)
    w.act_percent.setChecked(True)
    assert w.threshold_spin.suffix() == " pp"
    assert "%time\nbase" in _headers(w.diff.models[0])  # a percent title needs no unit


def test_perf_periods_are_scaled_times_in_headers_cells_and_details(make_window):
    w = make_window(1400, 800)
    w.load_paths([str(VM1), str(VM2)])
    w.act_percent.setChecked(False)
    model = w.diff.models[0]
    head = "total period (cpu-clock) (s)\nbase"
    assert head in _headers(model)
    cmp = w.comparison
    top = int(cmp.values["total_period"][:, cmp.baseline].argmax())
    w.diff.select_row(top)
    col = _column(model, head)
    idx = model.index_for_row(top, col)
    ns = float(cmp.values["total_period"][top, cmp.baseline])
    assert model.data(idx) == f"{ns / 1e9:.3f}"  # 3,133,133,130 ns -> 3.133 (s)
    html = details_html(cmp, top)
    assert f"{ns / 1e9:.3f} s" in html and not re.search(r"\d ns\b", html)


def test_percent_toggle_is_offered_only_where_a_metric_has_a_percent_form(make_window):
    """callgrind counts events in their own unit: "% of run", checked by default, changed
    nothing there, so it is disabled and says why; a .prof pair has %time and %alloc."""
    cg = DATA / "callgrind" / "cargo-profiler-rsmat-valgrind-3.10.0.SVN.callgrind.out.gz"
    cg2 = DATA / "callgrind" / "cargo-profiler-rsmat-valgrind-3.10.1.callgrind.out.19118.gz"
    w = make_window(1400, 800)
    w.load_paths([str(cg), str(cg2)])
    assert w.comparison is not None and w.comparison.runs[0].format == "callgrind"
    assert not w.percent_box.isEnabled() and not w.act_percent.isEnabled()
    assert "(callgrind) have no percent-of-run form" in w.percent_box.toolTip()
    w.load_paths([str(HS1), str(HS2)])
    assert w.percent_box.isEnabled() and w.act_percent.isEnabled()
    assert w.percent_box.toolTip().startswith("Percent of own run")
