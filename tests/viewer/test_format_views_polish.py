"""Format views polish: ticky "group by module", heap MARK lines, the RTS -S GC-log plot,
and column widths kept when the shown metrics change.

Values are read from the files in tests/data/ghc-ticky, ghc-hp and ghc-rts; files the
corpus lacks (heap profiles with MARK lines, a second -S log) are derived from them here.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from profdiff.parsers import ghc_heap, ghc_rts_summary, ghc_ticky  # noqa: E402
from profdiff.viewer.compare import align  # noqa: E402
from profdiff.viewer.ticky_groups import NO_MODULE, group_by_module  # noqa: E402

DATA = Path(__file__).parent.parent / "data"
TICKY = DATA / "ghc-ticky"
S_LOG = DATA / "ghc-rts" / "ghc-7.x-haskell-opengl-rts-S-full.txt.gz"




def _col(model, kind: str, metric: str | None = None, run: int | None = None) -> int:
    for i, c in enumerate(model.columns):
        if c.kind == kind and c.metric == metric and (run is None or c.run == run):
            return i
    raise AssertionError(f"no column {kind} {metric} {run}")


# ------------------------------------------------------------------------------------------
# ticky: group by module
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ticky_runs():
    return [ghc_ticky.read(TICKY / f"hs-ad-v{i}.ticky.txt") for i in (1, 2)]


def _module_sum(p, module: str, metric: str) -> float:
    """Sum of ``metric`` over the closures of ``module``, straight from the reader."""
    mods = p.frames.module[p.frame]
    return float(np.asarray(p.values[metric])[mods == module].sum())


def test_group_by_module_profile_sums(ticky_runs):
    p = ticky_runs[0]
    g = group_by_module(p)
    roots = np.flatnonzero(g.parent < 0)
    assert g.n_nodes == p.n_nodes + len(roots)
    names = g.frames.name[g.frame]
    assert set(names[roots]) == set(p.frames.module[p.frame]) - {""} | (
        {NO_MODULE} if "" in set(p.frames.module[p.frame]) else set())
    for r in roots:
        kids = g.parent == r
        for m in ("entries", "alloc"):
            assert g.values[m][r] == g.values[m][kids].sum()
            assert g.values[m][r] == _module_sum(p, names[r], m)
    # the closures keep the reader's unique-free identity
    leaf_keys = set(g.frames.key[g.frame[g.parent >= 0]])
    assert leaf_keys == set(p.frames.key[p.frame])


def test_ticky_grouped_view_module_delta_is_sum_of_closures(qtbot, ticky_runs, model_tester):
    from profdiff.viewer.qt.ticky_view import TickyClosuresView

    w = TickyClosuresView(align(ticky_runs, mode="flat"))
    qtbot.addWidget(w)
    n_flat = w.model.rowCount()
    w.group_modules.setChecked(True)
    m, cmp = w.model, w.cmp
    assert m.grouped and cmp.mode == "tree"
    model_tester(m)
    ev = w.row_of("AD.Eval")
    assert ev >= 0
    kids = np.flatnonzero(cmp.parent == ev)
    assert len(kids) == 8  # 5 closures in v1, 6 in v2, 3 shared (go9, $wevalDelta, $wbackprop)
    d_alloc = cmp.delta("alloc")
    assert d_alloc[ev] == pytest.approx(np.nansum(d_alloc[kids]))
    # ... and equals the change of the module's total read straight from the files:
    # v1 11,084,800 + 98,713,600 + 246,906,880 + 40,960 = 356,746,240;
    # v2 14,410,240 + 98,713,600 + 495,206,400 + 10,240 = 608,340,480
    expect = _module_sum(ticky_runs[1], "AD.Eval", "alloc") - \
        _module_sum(ticky_runs[0], "AD.Eval", "alloc")
    assert d_alloc[ev] == expect == 251_594_240
    # the module row shows it in its Δ alloc cell and is the top row (largest Δ alloc)
    assert w.first_rows(1) == [ev]
    idx = m.index_for_row(ev, _col(m, "delta", "alloc"))
    assert idx.data() == "+251,594,240"
    # the first module is opened: its closures are rows under it
    assert w.view.isExpanded(m.index_for_row(ev))
    assert m.rowCount(m.index_for_row(ev)) == 8
    # modules whose closures are all unchanged are "="; AD.Eval is not
    assert not m.identical[ev] and m.identical[w.row_of("Model.MLP")]
    assert "8 modules" in w.summary.text()
    # hide identical keeps only changed closures and their modules
    w.hide_identical.setChecked(True)
    model_tester(m)
    assert w.first_rows(10) == [ev, w.row_of("AD.Dual")]
    w.hide_identical.setChecked(False)
    w.group_modules.setChecked(False)
    assert not w.model.grouped and w.model.rowCount() == n_flat


def test_ticky_grouped_sum_duplicates_matches_flat(qtbot, model_tester):
    """With *sum duplicates*, every closure row of the grouped tree has the flat
    alignment's summed values (reports with ambiguous keys)."""
    from profdiff.viewer.qt.ticky_view import TickyClosuresView

    runs = [ghc_ticky.read(TICKY / n) for n in ("ghc-7.x-haskell-opengl-Modern-Main.ticky",
                                                 "ghc-7.x-haskell-opengl-src-Main.ticky")]
    assert runs[0].extras["ambiguous_keys"]
    flat = align(runs, mode="flat")
    w = TickyClosuresView(flat)
    qtbot.addWidget(w)
    w.group_modules.setChecked(True)
    w.sum_dups.setChecked(True)
    m, cmp = w.model, w.cmp
    model_tester(m)
    assert m.summed and "(summed)" in w.summary.text()
    leaf = cmp.parent >= 0
    assert leaf.sum() == flat.n_rows
    by_key = {k: r for r, k in enumerate(flat.keys)}
    for r in np.flatnonzero(leaf):
        np.testing.assert_array_equal(cmp.values["alloc"][r],
                                      flat.values["alloc"][by_key[cmp.keys[r]]])
    amb = [r for r in np.flatnonzero(leaf) if m.ambiguous[r]]
    assert amb and all(m.notes[r].startswith("sum of") or "sum of" in m.notes[r] for r in amb)
    # module sums per run equal the run totals of its closures
    for r in np.flatnonzero(~leaf):
        kids = cmp.parent == r
        np.testing.assert_allclose(cmp.values["alloc"][r],
                                   np.nansum(cmp.values["alloc"][kids], axis=0))


def test_ticky_grouped_colours_on_run_scale(qtbot, ticky_runs):
    """Δ colours use the flat table's scale (share of the run), not the largest module."""
    from profdiff.viewer.qt.ticky_view import TickyClosuresView

    w = TickyClosuresView(align(ticky_runs, mode="flat"))
    qtbot.addWidget(w)
    flat = w.cmp
    changed = np.flatnonzero(np.nan_to_num(flat.delta("alloc")) != 0)
    flat_rgb = {flat.keys[r]: w.model._cell_rgb("alloc", None, int(r)) for r in changed}
    w.group_modules.setChecked(True)
    g = w.cmp
    rows = {k: r for r, k in enumerate(g.keys) if g.parent[r] >= 0}
    assert len(flat_rgb) >= 5
    for k, rgb in flat_rgb.items():
        assert w.model._cell_rgb("alloc", None, rows[k]) == rgb, k


# ------------------------------------------------------------------------------------------
# heap: MARK lines
# ------------------------------------------------------------------------------------------
def test_no_corpus_heap_profile_has_marks():
    """Why the MARK test synthesises its input (update it if a real file gains marks)."""
    for f in sorted((DATA / "ghc-hp").iterdir()):
        assert ghc_heap.read(f).extras["series"]["marks"] == [], f.name


def _with_marks(src: Path, dst: Path, marks: tuple[float, ...]) -> Path:
    """``src`` with ``MARK t`` lines inserted before the first sample at or after ``t``."""
    out, todo = [], sorted(marks)
    for line in src.read_text().split("\n"):
        m = re.match(r"BEGIN_SAMPLE ([\d.]+)", line)
        while m and todo and todo[0] <= float(m.group(1)):
            out.append(f"MARK {todo.pop(0):.6f}")
        out.append(line)
    dst.write_text("\n".join(out))
    return dst


def test_heap_marks_drawn_in_each_chart(qtbot, tmp_path):
    from profdiff.viewer.qt.heap_view import HeapView, run_marks

    a = _with_marks(DATA / "ghc-hp" / "hs-ad-v1.hp", tmp_path / "a.hp", (1.0, 2.5))
    runs = [ghc_heap.read(a), ghc_heap.read(DATA / "ghc-hp" / "hs-ad-v2.hp")]
    assert runs[0].extras["series"]["marks"] == [1.0, 2.5]
    w = HeapView(align(runs, mode="flat"))
    qtbot.addWidget(w)
    np.testing.assert_array_equal(run_marks(w.cmp, 0), [1.0, 2.5])
    c0, c1 = w.charts
    assert [ln.value() for ln in c0.marks] == [1.0, 2.5]
    assert all(ln in c0.plot.items for ln in c0.marks)
    assert c1.marks == []  # the run without marks draws none
    # marks do not stretch the y range / survive a rebuild (top N changed)
    w.top_spin.setValue(3)
    assert [ln.value() for ln in w.charts[0].marks] == [1.0, 2.5]
    # overlay mode draws them too
    w.mode_combo.setCurrentIndex(1)
    from pyqtgraph import InfiniteLine

    lines = [i for i in w._overlay_plot.items if isinstance(i, InfiniteLine)]
    assert sorted(ln.value() for ln in lines) == [1.0, 2.5]


# ------------------------------------------------------------------------------------------
# RTS: -S GC log plot
# ------------------------------------------------------------------------------------------
def _scaled_s_log(dst: Path, factor: float) -> Path:
    """The -S log with the Alloc/Copied/Live columns of every GC row scaled."""
    text = gzip.open(S_LOG, "rt").read()
    rx = re.compile(r"^(\s*)(\d+)(\s+)(\d+)(\s+)(\d+)(?=\s+\d+\.\d+)", re.M)

    def scale(m: re.Match) -> str:
        a, c, li = (int(int(m.group(i)) * factor) for i in (2, 4, 6))
        return f"{m.group(1)}{a}{m.group(3)}{c}{m.group(5)}{li}"

    dst.write_text(rx.sub(scale, text))
    return dst


def test_rts_gc_log_plot_one_curve_per_run(qtbot, tmp_path):
    from profdiff.viewer.qt.format_views import primary_view

    runs = [ghc_rts_summary.read(S_LOG),
            ghc_rts_summary.read(_scaled_s_log(tmp_path / "scaled.txt", 2.0))]
    log0, log1 = (p.extras["gc_log"] for p in runs)
    assert len(log0["gen"]) == len(log1["gen"]) == 7902
    _title, w = primary_view(align(runs, mode="flat"))
    qtbot.addWidget(w)
    plot = w.gc_plot
    assert plot is not None and sorted(plot.curves) == [0, 1]
    x0, y0 = plot.curves[0].getData()
    x1, y1 = plot.curves[1].getData()
    np.testing.assert_array_equal(y0, log0["live_bytes"])
    np.testing.assert_array_equal(y1, 2 * log0["live_bytes"])
    np.testing.assert_array_equal(x0, np.arange(1, 7903))
    # max residency is sampled at major collections (Gen 1 rows)
    major = log0["gen"] == 1
    assert y0[major].max() == runs[0].totals["max_residency_bytes"] == 28_653_768
    plot.y_combo.setCurrentText("allocated (cumulative)")
    plot.x_combo.setCurrentText("elapsed time")
    x0, y0 = plot.curves[0].getData()
    assert y0[-1] == log0["alloc_bytes"].sum()
    assert x0[-1] == 30.74  # last row's TOT elapsed
    plot.y_combo.setCurrentText("copied per GC")
    np.testing.assert_array_equal(plot.curves[1].getData()[1], 2 * log0["copied_bytes"])


def test_rts_view_without_gc_log_has_no_plot(qtbot):
    from profdiff.viewer.qt.rts_view import RtsView

    runs = [ghc_rts_summary.read(DATA / "ghc-rts" / f"hs-ad-v{i}.stats.txt") for i in (1, 2)]
    w = RtsView(align(runs, mode="flat"))
    qtbot.addWidget(w)
    assert w.gc_plot is None


def test_rts_gc_log_plot_only_for_runs_with_a_log(qtbot):
    from profdiff.viewer.qt.rts_view import RtsView

    runs = [ghc_rts_summary.read(DATA / "ghc-rts" / "hs-ad-v1.stats.txt"),
            ghc_rts_summary.read(S_LOG)]
    w = RtsView(align(runs, mode="flat"))
    qtbot.addWidget(w)
    assert w.gc_plot is not None and list(w.gc_plot.curves) == [1]


# ------------------------------------------------------------------------------------------
# column widths survive metric changes
# ------------------------------------------------------------------------------------------
def test_diff_tree_keeps_user_widths_on_metric_toggle(qtbot, pair):
    from profdiff.viewer.qt.views import DiffTreeView

    v = DiffTreeView()
    qtbot.addWidget(v)
    v.resize(1200, 600)
    v.show()
    v.set_comparison(align(list(pair)), ["time_pct", "alloc_pct"])
    h, m = v.tree.header(), v.models[0]
    d_time = _col(m, "delta", "time_pct")
    h.resizeSection(0, 333)
    h.resizeSection(d_time, 171)
    default_entries = None
    v.set_metrics(["entries", "time_pct", "alloc_pct"])  # an unrelated metric on
    assert h.sectionSize(0) == 333
    assert h.sectionSize(_col(m, "delta", "time_pct")) == 171
    default_entries = h.sectionSize(_col(m, "value", "entries", 0))
    assert default_entries not in (0, 171, 333)
    # the % toggle swaps alloc_pct for alloc_bytes: kept columns keep their widths
    v.set_metrics(["entries", "time_pct", "alloc_bytes"])
    assert h.sectionSize(0) == 333
    assert h.sectionSize(_col(m, "delta", "time_pct")) == 171
    # the significance column on and off keeps them too
    v.set_sig_metric("time_pct")
    assert h.sectionSize(0) == 333 and h.sectionSize(_col(m, "delta", "time_pct")) == 171
    v.set_sig_metric(None)
    assert h.sectionSize(0) == 333 and h.sectionSize(_col(m, "delta", "time_pct")) == 171


def test_side_by_side_keeps_user_widths_on_metric_toggle(qtbot, pair):
    from profdiff.viewer.qt.views import SideBySideView

    v = SideBySideView()
    qtbot.addWidget(v)
    v.resize(1400, 600)
    v.show()
    v.set_comparison(align(list(pair)), ["time_pct", "alloc_pct"])
    a, b = (p.header() for p in v.panes)
    col = _col(v.models[0], "value", "alloc_pct")
    a.resizeSection(0, 301)
    a.resizeSection(col, 123)
    assert b.sectionSize(0) == 301 and b.sectionSize(col) == 123  # mirrored
    v.set_metrics(["entries", "time_pct", "alloc_pct"])
    col = _col(v.models[0], "value", "alloc_pct")
    for h in (a, b):
        assert h.sectionSize(0) == 301
        assert h.sectionSize(col) == 123
