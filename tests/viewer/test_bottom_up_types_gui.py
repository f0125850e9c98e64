"""The "Bottom up" and "Allocated types" tabs of the main window on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from profdiff.viewer.qt.alloc_types_view import AllocTypesView
from profdiff.viewer.qt.bottom_up_view import BottomUpView

DATA = Path(__file__).parents[1] / "data"
PERF = [DATA / f"perf/c-vm/v{i}/perf.script.txt.gz" for i in (1, 2)]
TICKY = [DATA / f"ghc-ticky/hs-ad-v{i}.ticky.txt" for i in (1, 2)]
JULIA = [DATA / "pprof/julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz",
         DATA / "pprof/julia-1.9-pprofjl-heapsnapshotparser-alloc-profile.pb.gz"]


@pytest.fixture
def win(make_window):
    return make_window(1400, 800, show=True)


def _tabs(w) -> dict[str, object]:
    return {w.tabs.tabText(i): w.tabs.widget(i) for i in range(w.tabs.count())}




def test_bottom_up_tab_for_perf_is_lazy_and_shows_callers(win, model_tester):
    win.load_paths([str(p) for p in PERF])
    tabs = _tabs(win)
    view = tabs["Bottom up"]
    assert isinstance(view, BottomUpView)
    assert not view.computed  # opening files did not invert anything
    assert "Allocated types" not in tabs
    win.show_view("bottom-up")
    assert win.tabs.currentWidget() is view and view.computed and view.error is None
    model = view.diff.models[0]
    tester = model_tester(model)
    assert model.rowCount() > 5
    # hottest root first: the leaf function where the samples were spent
    top = model.index(0, 0)
    assert top.data() == "vm_run.constprop.0"
    cmp = view.cmp
    r = int(top.internalId())
    assert cmp.values["self_samples"][r].tolist() == [2982, 4613]
    # its only caller below it
    assert model.rowCount(top) == 1
    assert model.index(0, 0, top).data() == "run_benchmark.constprop.0.isra.0"
    model.sort(3, Qt.SortOrder.DescendingOrder)
    assert tester is not None
    model.sort(3, Qt.SortOrder.DescendingOrder)  # back to hottest first
    # selecting a row fills the window's details pane with the bottom-up row
    child = int(model.index(0, 0, top).internalId())
    view.diff.select_row(child)
    view.diff.rowSelected.emit(child)
    assert "run_benchmark.constprop.0.isra.0" in win.details.toPlainText()


def test_bottom_up_follows_new_runs(win):
    win.load_paths([str(p) for p in PERF])
    win.show_view("bottom-up")
    first = _tabs(win)["Bottom up"]
    assert first.computed
    win.swap_runs()  # new comparison: the tab is rebuilt (and lazy again if not shown)
    view = _tabs(win)["Bottom up"]
    view.ensure()
    r = next(i for i in range(view.cmp.n_rows)
             if view.cmp.parent[i] < 0 and view.cmp.name[i] == "vm_run.constprop.0")
    assert view.cmp.values["self_samples"][r].tolist() == [4613, 2982]


def test_no_bottom_up_tab_for_flat_formats(win):
    win.load_paths([str(p) for p in TICKY])
    assert win.comparison is not None
    tabs = _tabs(win)
    assert "Bottom up" not in tabs and "Allocated types" not in tabs
    assert "Ticky closures" in tabs


def test_allocated_types_tab_for_julia_alloc_profiles(win, model_tester):
    win.load_paths([str(p) for p in JULIA])
    tabs = _tabs(win)
    assert "Bottom up" in tabs  # pprof allocation profiles have call trees too
    view = tabs["Allocated types"]
    assert isinstance(view, AllocTypesView)
    win.show_view("types")
    assert win.tabs.currentWidget() is view
    model = view.model
    model_tester(model)
    assert model.rowCount() == 14
    assert model.headerData(0, Qt.Orientation.Horizontal) == "allocated type"
    rows = {model.index(i, 0).data(): i for i in range(model.rowCount())}
    i = rows["Vector{Int32}"]
    status_col = next(c for c, col in enumerate(model.columns) if col.kind == "status")
    assert model.index(i, status_col).data() == "added"
    bytes_new = next(c for c, col in enumerate(model.columns)
                     if col.kind == "value" and col.metric == "alloc_bytes" and col.run == 1)
    assert model.index(i, bytes_new).data() == "288"
    # the largest byte changes first, either way, as diff --by-type lists them:
    # BufferType 3,080 B -> 64 B, then UnknownType 64 B -> 2,640 B
    assert [model.index(i, 0).data() for i in (0, 1)] == ["Profile.Allocs.BufferType",
                                                          "Profile.Allocs.UnknownType"]
    assert "3,192 B → 5,008 B" in view.note.text()
    for c in range(model.columnCount()):
        model.sort(c, Qt.SortOrder.AscendingOrder)


# ----- the bottom-up tab follows the toolbar ------------------------------------------------
def _shown_bottom_up(win) -> BottomUpView:
    win.show_view("bottom-up")
    view = win.tabs.currentWidget()
    assert isinstance(view, BottomUpView) and view.computed and view.error is None
    return view


def _visible_rows(view: BottomUpView) -> set[int]:
    vis = view.diff.layout_.visible
    return set(range(view.cmp.n_rows)) if vis is None else set(vis.nonzero()[0].tolist())


def _model_rows(view: BottomUpView) -> set[int]:
    """Row ids the Qt model actually serves (expanding everything)."""
    model = view.diff.models[0]
    out: set[int] = set()
    stack = [model.index(i, 0) for i in range(model.rowCount())]
    while stack:
        idx = stack.pop()
        out.add(int(idx.internalId()))
        stack += [model.index(i, 0, idx) for i in range(model.rowCount(idx))]
    return out


def test_bottom_up_follows_the_filter_text(win):
    win.load_paths([str(p) for p in PERF])
    view = _shown_bottom_up(win)
    cmp = view.cmp
    assert _visible_rows(view) == set(range(cmp.n_rows))
    win.filter_edit.setText("native")
    win.apply_filter()
    # native_isqrt, native_hash, native_listlen.constprop.0 (module "vm") are roots of the
    # inverted tree: each matches, nothing else is shown (no ancestors to add)
    hits = {r for r in range(cmp.n_rows)
            if "native" in f"{cmp.name[r]} {cmp.module[r]}".lower()}
    assert {str(cmp.name[r]) for r in hits} == {
        "native_isqrt", "native_hash", "native_listlen.constprop.0"}
    shown = _visible_rows(view)
    ancestors = {int(a) for r in shown for a in [cmp.parent[r]] if a >= 0}
    assert hits <= shown
    assert all(r in hits or any(_is_ancestor(cmp, r, h) for h in hits) for r in shown)
    assert ancestors <= shown
    assert _model_rows(view) == shown
    model = view.diff.models[0]
    assert sorted(model.index(i, 0).data() for i in range(model.rowCount())) == sorted(
        str(cmp.name[r]) for r in hits if cmp.parent[r] < 0)
    # a filter matching callers (children here) keeps their callee ancestors
    win.filter_edit.setText("run_benchmark")
    win.apply_filter()
    shown = _visible_rows(view)
    hits = {r for r in range(cmp.n_rows) if "run_benchmark" in str(cmp.name[r])}
    assert hits and hits <= shown and len(shown) < cmp.n_rows
    for r in shown - hits:
        assert any(_is_ancestor(cmp, r, h) for h in hits)
    assert any(cmp.parent[h] >= 0 for h in hits)  # some only visible through an ancestor
    # clearing the filter shows every row again
    win.filter_edit.setText("")
    win.apply_filter()
    assert _visible_rows(view) == set(range(cmp.n_rows))


def _is_ancestor(cmp, a: int, r: int) -> bool:
    p = int(cmp.parent[r])
    while p >= 0:
        if p == a:
            return True
        p = int(cmp.parent[p])
    return False


def test_bottom_up_follows_changed_only_and_threshold(win, tmp_path):
    # the same run twice: every bottom-up row is unchanged, "changed only" hides them all
    same = tmp_path / "again" / PERF[0].name
    same.parent.mkdir()
    same.write_bytes(PERF[0].read_bytes())
    win.load_paths([str(PERF[0]), str(same)])
    view = _shown_bottom_up(win)
    assert view.status_counts()["same"] == view.cmp.n_rows > 0
    win.changed_box.setChecked(True)
    assert _visible_rows(view) == set() and view.diff.models[0].rowCount() == 0
    win.changed_box.setChecked(False)
    assert view.diff.models[0].rowCount() > 0
    # the pair: a |Δ| threshold keeps rows whose change is large (or added/removed) and
    # their ancestors
    win.load_paths([str(p) for p in PERF])
    view = _shown_bottom_up(win)
    cmp = view.cmp
    win.threshold_spin.setValue(2.0)
    shown = _visible_rows(view)
    assert 0 < len(shown) < cmp.n_rows
    from profdiff.viewer.compare import Status
    from profdiff.viewer.qt.bottom_up_view import pp_factor

    def big(r: int) -> bool:
        if cmp.status[r] in (Status.ADDED, Status.REMOVED):
            return True
        return any(abs(float(cmp.delta(m)[r])) * pp_factor(cmp, m) >= 2.0
                   for m in view.shown_metrics)

    kept = {r for r in range(cmp.n_rows) if big(r)}
    assert kept <= shown
    assert all(r in kept or any(_is_ancestor(cmp, r, k) for k in kept) for r in shown)
    # vm_run.constprop.0: 2982 -> 4613 of the samples, a big change, stays
    vm = next(r for r in range(cmp.n_rows)
              if cmp.parent[r] < 0 and cmp.name[r] == "vm_run.constprop.0")
    assert vm in shown
    win.threshold_spin.setValue(0.0)
    assert _visible_rows(view) == set(range(cmp.n_rows))
    # significant only: a subset of the rows, through the same noise estimate
    win.significant_box.setChecked(True)
    sig = _visible_rows(view)
    assert vm in sig and len(sig) <= cmp.n_rows


def _headers(view: BottomUpView) -> list[str]:
    model = view.diff.models[0]
    return [str(model.headerData(i, Qt.Orientation.Horizontal) or "")
            for i in range(model.columnCount())]


def test_bottom_up_follows_percent_of_run_and_metrics(win):
    win.load_paths([str(p) for p in PERF])
    assert win.percent_mode
    view = _shown_bottom_up(win)
    assert view.shown_metrics == ["self_pct", "self_period"]
    before = _headers(view)
    win.act_percent.setChecked(False)
    assert view.shown_metrics == ["self_samples", "self_period"]
    after = _headers(view)
    assert after != before and len(after) == len(before)
    assert "self %\nbase" in before and "self samples\nbase" not in before
    assert "self samples\nbase" in after and "self %\nbase" not in after
    # the value under a column is the new metric's: samples of the hottest root
    model = view.diff.models[0]
    top = next(i for i in range(model.rowCount())
               if model.index(i, 0).data() == "vm_run.constprop.0")
    texts = [model.index(top, c).data() for c in range(model.columnCount())]
    assert "2,982" in texts and "4,613" in texts
    win.act_percent.setChecked(True)
    assert view.shown_metrics == ["self_pct", "self_period"] and _headers(view) == before
    # dropping metrics from the window's choice drops their bottom-up column (total_pct
    # maps onto self_pct too: the inverted tree has only self costs)
    win.toggle_metric("self_pct", False)
    assert view.shown_metrics == ["self_pct", "self_period"]
    win.toggle_metric("total_pct", False)
    assert view.shown_metrics == ["self_period"]
    assert len(_headers(view)) < len(before)


def test_bottom_up_colours_shares_by_their_absolute_change(win):
    """The hs-ad pair: dotD's allocation is the same in both runs (≈841 MB; GHC's own
    table) while its share falls 19.6 % -> 12.8 % as addGrad's grows.  Bottom up colours
    %alloc by the bytes, as the other views do, so dotD is neutral and evalDelta, whose
    bytes grew, is a regression; the inverted runs keep the twins of their metrics."""
    from profdiff.viewer.view_state import colour_change

    hs = DATA / "hs-ad"
    win.load_paths([str(hs / "v1/ad.prof"), str(hs / "v2/ad.prof")])
    win.show_view("bottom-up")
    cmp = _tabs(win)["Bottom up"].cmp
    m = cmp.metric_by_name["alloc_pct"]
    assert m.percent_of == "alloc_bytes" and cmp.metric_by_name["time_pct"].percent_of == "time_s"
    roots = cmp.parent < 0
    dot = int(next(i for i in range(cmp.n_rows) if roots[i] and cmp.name[i] == "dotD"))
    ev = int(next(i for i in range(cmp.n_rows) if roots[i] and cmp.name[i] == "evalDelta"))
    assert cmp.delta("alloc_pct")[dot] < -6  # the share fell 6.8 points
    assert colour_change(cmp, "alloc_pct")[dot] == 0.0  # the bytes did not change
    assert colour_change(cmp, "alloc_pct")[ev] > 0
