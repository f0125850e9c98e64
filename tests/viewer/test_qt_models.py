"""The Qt item model over a Comparison: model tester, sorting, filtering, placeholders."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from synth_profiles import METRICS

from profdiff.viewer.compare import Status, align
from profdiff.viewer.qt.layout import RowLayout, map_rows, path_hashes
from profdiff.viewer.qt.models import (
    PLACEHOLDER_TEXT,
    ComparisonTreeModel,
    diff_columns,
    metric_pairs,
    pane_columns,
)


def _labels(model, parent=None):
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    return [model.data(model.index(i, 0, parent)) for i in range(model.rowCount(parent))]


@pytest.mark.parametrize("mode", ["tree", "flat"])
def test_model_tester_after_sort_and_filter(qapp, pair, mode, model_tester):
    c = align(list(pair), mode=mode)
    m = ComparisonTreeModel(c, diff_columns(c, ["time_pct", "alloc_bytes"], status=True))
    t = model_tester(m)
    for col in range(m.columnCount()):
        m.sort(col, Qt.SortOrder.DescendingOrder)
        m.sort(col, Qt.SortOrder.AscendingOrder)
    m.layout.set_filter("insert")
    m.layout.set_filter("^(f|g)$", regex=True)
    m.layout.set_filter("", keep=c.status != Status.SAME)
    m.layout.set_filter("")
    del t


def test_pane_models_share_layout_and_show_placeholders(qapp, pair, model_tester):
    c = align(list(pair))
    lay = RowLayout(c)
    a = ComparisonTreeModel(c, pane_columns(c, ["time_pct"], 0), pane_run=0, layout=lay)
    b = ComparisonTreeModel(c, pane_columns(c, ["time_pct"], 1), pane_run=1, layout=lay)
    ta, tb = model_tester(a), model_tester(b)
    rows = {"/".join(c.path_labels(i)): i for i in range(c.n_rows)}
    h = rows["Main.MAIN/Main.main/Main.f/Main.h"]  # removed in the new run
    k = rows["Main.MAIN/Main.main/Main.k"]  # added in the new run
    assert a.data(a.index_for_row(h)) == "h"
    assert b.data(b.index_for_row(h)) == PLACEHOLDER_TEXT
    assert a.data(a.index_for_row(k)) == PLACEHOLDER_TEXT
    assert b.data(b.index_for_row(k)) == "k"
    # one sort reorders both panes identically
    col = [i for i, cc in enumerate(a.columns) if cc.metric == "time_pct"][0]
    a.sort(col, Qt.SortOrder.DescendingOrder)
    main = rows["Main.MAIN/Main.main"]
    ia, ib = a.index_for_row(main), b.index_for_row(main)
    assert _labels(a, ia) == ["f", "g", PLACEHOLDER_TEXT]  # f 40 > g 30 > k absent (0)
    assert [b.data(b.index(i, 0, ib), Qt.ItemDataRole.UserRole + 1) for i in range(3)] == \
        [a.data(a.index(i, 0, ia), Qt.ItemDataRole.UserRole + 1) for i in range(3)]
    del ta, tb


def test_sort_orders_children_by_column(qapp, pair, model_tester):
    c = align(list(pair))
    cols = diff_columns(c, ["time_pct"])
    m = ComparisonTreeModel(c, cols)
    _t = model_tester(m)
    dcol = [i for i, cc in enumerate(cols) if cc.kind == "delta"][0]
    m.sort(dcol, Qt.SortOrder.DescendingOrder)
    root = m.index(0, 0)
    main = m.index(0, 0, root)
    assert m.data(main) == "main"
    assert _labels(m, main) == ["g", "k", "f"]  # +20, +5, -20
    m.sort(dcol, Qt.SortOrder.AscendingOrder)
    assert _labels(m, m.index(0, 0, m.index(0, 0)))[0] == "f"


def test_filter_keeps_ancestors_and_highlights(qapp, pair, model_tester):
    c = align(list(pair))
    m = ComparisonTreeModel(c, diff_columns(c, ["time_pct"]))
    _t = model_tester(m)
    m.layout.set_filter("map.ins")
    main = m.index(0, 0, m.index(0, 0))
    assert _labels(m, main) == ["g"]
    g = m.index(0, 0, main)
    hit = m.index(0, 0, g)
    assert m.data(hit) == "Data.Map.insert"
    assert m.data(hit, Qt.ItemDataRole.FontRole).bold()
    assert m.data(g, Qt.ItemDataRole.FontRole) is None
    # regex over modules too
    m.layout.set_filter("^Data$", regex=True)
    assert m.layout.matched.sum() == 1


def test_delta_cells_are_formatted_and_coloured(qapp, pair):
    c = align(list(pair))
    cols = diff_columns(c, ["time_pct"])
    m = ComparisonTreeModel(c, cols)
    rows = {"/".join(c.path_labels(i)): i for i in range(c.n_rows)}
    g = rows["Main.MAIN/Main.main/Main.g"]
    dcol = [i for i, cc in enumerate(cols) if cc.kind == "delta"][0]
    idx = m.index_for_row(g, dcol)
    assert m.data(idx) == "+20.0"
    assert m.data(m.index_for_row(g, dcol + 1)) == "+66.7%"
    bg = m.data(idx, Qt.ItemDataRole.BackgroundRole).color()
    assert bg.red() > bg.green()  # worse = red in the default palette
    f = rows["Main.MAIN/Main.main/Main.f"]
    bg = m.data(m.index_for_row(f, dcol), Qt.ItemDataRole.BackgroundRole).color()
    assert bg.green() > bg.red()


def test_metric_pairs_from_metric_data():
    p = metric_pairs(METRICS)
    assert p["alloc_pct"] == "alloc_bytes" and p["alloc_bytes"] == "alloc_pct"
    assert p["inherited_alloc_pct"] == "inherited_alloc_bytes"
    assert "time_pct" not in p  # no absolute time column in the synthetic profile


def test_map_rows_across_comparisons(pair):
    a = align(list(pair))
    b = align([pair[1], pair[0]])
    assert len(set(path_hashes(a).tolist())) == a.n_rows
    rows = np.arange(a.n_rows)
    mapped = map_rows(a, b, rows)
    assert (mapped >= 0).all()
    for r, s in zip(rows, mapped, strict=True):
        assert a.path_labels(int(r)) == b.path_labels(int(s))


def test_one_switch_colours_every_view_by_baseline_total_or_share(qtbot, tmp_path):
    """Default: Δ colour against the baseline's total (identical bytes neutral); View ▸
    Colour by share of run switches every model and the flame graph together."""
    from pathlib import Path

    from PySide6.QtCore import QSettings

    from profdiff import parsers
    from profdiff.viewer.compare import align
    from profdiff.viewer.qt.main_window import MainWindow

    hs = Path(__file__).parents[1] / "data" / "hs-ad"
    runs = [parsers.load(hs / "v1" / "ad.P.prof"), parsers.load(hs / "v2" / "ad.P.prof")]
    c = align(runs, mode="tree")
    same = np.flatnonzero(c.present.all(axis=1) & (c.delta("bytes") == 0)
                          & (c.delta("alloc_pct") < -0.5))
    assert same.size
    m = ComparisonTreeModel(c, diff_columns(c, ["alloc_pct"], status=True))
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    legend = w.diff.legend
    try:
        assert (m.change_pp("alloc_pct")[same] == 0).all()
        # the legend says what the colours measure, and why a % Δ may have the other sign
        assert legend.unit_text.endswith("by cost") and "share" in legend.toolTip()
        w.act_share.setChecked(True)
        assert w.view_state.colour_by_share
        assert (m.change_pp("alloc_pct")[same] < -0.5).all()  # shares of a grown run fell
        assert legend.unit_text == "pp of run" and "own run" in legend.toolTip()
    finally:
        w.act_share.setChecked(False)
    assert (m.change_pp("alloc_pct")[same] == 0).all()
    assert legend.unit_text.endswith("by cost")


def _key_paths(cmp) -> list[tuple]:
    """Each row's path of (match key, rank among its parent's rows of that key)."""
    keys, parent = cmp.keys.tolist(), cmp.parent.tolist()
    seen: dict[tuple, int] = {}
    out: list[tuple] = []
    for r in range(cmp.n_rows):  # parents come before their children (level order)
        p = parent[r]
        rank = seen[(p, keys[r])] = seen.get((p, keys[r]), -1) + 1
        out.append((*out[p], (keys[r], rank)) if p >= 0 else ((keys[r], rank),))
    return out


def test_map_rows_finds_the_same_key_path_in_real_runs():
    """hs-ad v1 -> v2 (renamed and added cost centres): each row maps to the row of the
    other tree with the same path of match keys, or -1 where that path is gone - checked
    against the paths themselves, without hashes.  Two sibling rows share a key there
    (``trainStep.(...)``, SRC Main.hs:22 and :23): their rank tells them apart, so the
    second maps to the second (it had one hash with the first, and a reload opened the
    first where the second had been open)."""
    from pathlib import Path

    from profdiff.parsers import load

    hs = Path(__file__).parents[1] / "data" / "hs-ad"
    old = align([load(hs / "v1/ad.prof"), load(hs / "v1/ad.prof")])
    new = align([load(hs / "v2/ad.prof"), load(hs / "v2/ad.prof")])
    first: dict[tuple, int] = {}
    for r, path in enumerate(_key_paths(new)):
        first.setdefault(path, r)
    want = [first.get(path, -1) for path in _key_paths(old)]
    got = map_rows(old, new, np.arange(old.n_rows)).tolist()
    assert got == want
    assert -1 in got and sum(g >= 0 for g in got) > 200  # some paths gone, most kept
    assert len(set(path_hashes(old).tolist())) == old.n_rows
    groups: dict[tuple, list[int]] = {}
    for r, (par, key) in enumerate(zip(old.parent.tolist(), old.keys.tolist(), strict=True)):
        groups.setdefault((par, key), []).append(r)
    twins = [rows for rows in groups.values() if len(rows) > 1]
    assert twins and any(old.name[rows[0]] == "trainStep.(...)" for rows in twins)
    for rows in twins:  # each of the twins maps to a row of its own
        assert len({got[r] for r in rows}) == len(rows)


def test_a_share_cell_coloured_by_its_absolute_cost_says_so(qapp):
    """The c-vm perf pair (v2's interpreter 52 % slower): the root's total % reads
    100 -> 100 (+<0.1 pp) and its Δ cell is coloured by the root's total samples,
    +1,639 = 52.4 pp of the baseline's 3,129: its tooltip says so.  A Δ cell coloured by
    its own value, or by share, says nothing of it."""
    from pathlib import Path

    from profdiff.parsers import load

    d = Path(__file__).parents[1] / "data" / "perf" / "c-vm"
    c = align([load(d / "v1/perf.script.txt.gz"), load(d / "v2/perf.script.txt.gz")],
              mode="tree")
    root = int(np.flatnonzero(c.parent < 0)[0])
    assert c.values["total_samples"][root].tolist() == [3129, 4768]
    m = ComparisonTreeModel(c, diff_columns(c, ["total_pct", "total_samples"]))
    heads = [m.headerData(i, Qt.Orientation.Horizontal) for i in range(m.columnCount())]

    def tip(head: str) -> str:
        idx = m.index_for_row(root, next(i for i, h in enumerate(heads) if head in h))
        return m.data(idx, Qt.ItemDataRole.ToolTipRole)

    pct = next(h for h in heads if h.startswith("total %") and h.endswith("Δ"))
    assert "colour: total samples +1,639, +52.4 pp of the baseline run's total" in tip(pct)
    samples = next(h for h in heads if h.startswith("total samples") and h.endswith("Δ"))
    assert "colour:" not in tip(samples)
    from profdiff.viewer.qt.models import set_colour_by_share

    set_colour_by_share(True)
    try:
        assert "colour:" not in tip(pct)
    finally:
        set_colour_by_share(False)
