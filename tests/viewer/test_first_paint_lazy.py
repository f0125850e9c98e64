"""What a window computes before its first paint: only what the tab shown first needs.

The diff tree of the hs-ad pair (real GHC profiles) must not wait for the flat
comparison nor the Summary; each is built, with the same numbers, when its tab is shown.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from synth_profiles import VIEWER_DATA

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"


def _open(make_window, *options: str):
    from profdiff.viewer.options import build_app_parser
    from profdiff.viewer.qt.app import _apply_options

    w = make_window()
    args = build_app_parser().parse_args([str(V1), str(V2), *options])
    _apply_options(w, args)  # applied the moment the comparison is in, as the live window
    w.load_paths([str(V1), str(V2)])
    return w


def test_diff_tree_first_aligns_no_flat_comparison(make_window):
    w = _open(make_window, "--view", "diff")
    assert w.tabs.currentWidget() is w.diff
    assert w.flat_if_aligned() is None and w.flat.model is None
    assert w.summary_view.links == []  # built when the Summary is shown
    # the diff tree is open along the path to the top culprit, that row current
    cur = w.diff.current_row()
    assert str(w.comparison.name[cur]) == "addGrad"
    anc = w.diff.layout_.ancestors(cur)[:-1]
    assert set(anc) <= set(w.diff.expanded_rows().tolist())
    assert w.details.toPlainText().startswith("addGrad")


def test_diff_tree_first_paint_gathers_no_label_column_whole(make_window):
    """Names, modules, source locations and match keys of a tree's rows are gathered
    from the frame tables when something reads them whole (a filter, a sort by name,
    Copy); the first paint (column widths, cells, the details pane, its call path)
    reads the rows it shows, with the texts the whole columns give."""
    w = _open(make_window, "--view", "diff", "--expand", "hot")
    w.grab()
    cmp = w.comparison
    assert not {"name", "module", "src", "keys"} & set(vars(cmp))
    cur = w.diff.current_row()
    shown = w.details.toPlainText()
    path = cmp.path_labels(cur)
    rows = np.asarray(w.diff.layout_.ancestors(cur), dtype=np.intp)
    src = cmp.label_at("src", cur)
    assert shown.startswith(f"{cmp.label_at('name', cur)}\nmodule {cmp.label_at('module', cur)}")
    assert f"src {src}" in shown and src.startswith("AD/")
    assert not {"name", "module", "src", "keys"} & set(vars(cmp))
    # the rows read one by one are the whole columns' (gathered from here on)
    assert path == [f"{m}.{n}" if m else n for n, m in zip(cmp.name[rows], cmp.module[rows],
                                                            strict=True)]
    assert path[-1] == f"{cmp.module[cur]}.{cmp.name[cur]}" and cmp.src[cur] == src
    assert np.array_equal(cmp.label_at("module", rows), cmp.module[rows])
    assert {"name", "module", "src"} <= set(vars(cmp)) and "keys" not in vars(cmp)


def test_flat_table_and_summary_are_built_when_shown(make_window):
    w = _open(make_window, "--view", "diff")
    w.show_view("flat")
    flat = w.flat_if_aligned()
    assert flat is not None and w.flat.cmp is flat and w.flat_comparison is flat
    first = w.flat.first_row()
    assert (str(flat.name[first]), str(flat.module[first])) == ("addGrad", "AD.Eval")
    w.tabs.setCurrentWidget(w.summary_view)
    links = w.summary_view.links_of("tree")
    assert links and w.flat_if_aligned() is flat  # the Summary reads the same comparison


def test_summary_first_leaves_the_culprit_path_to_the_tree_tab(make_window):
    w = _open(make_window)
    assert w.tabs.currentWidget() is w.summary_view and w.summary_view.links_of("tree")
    assert w.diff.current_row() < 0  # nothing ranked for a tree nobody sees yet
    w.show_view("diff")
    assert str(w.comparison.name[w.diff.current_row()]) == "addGrad"


def test_culprits_ranked_ahead_open_the_same_path(make_window):
    w = _open(make_window)
    w.rank_culprits_now()  # what the live window does when the noise estimate is in
    w.show_view("diff")
    assert str(w.comparison.name[w.diff.current_row()]) == "addGrad"


def test_first_paint_builds_no_metrics_array_of_every_run(make_window):
    """The diff tree paints, sizes its columns, colours its Δ cells, opens along the
    culprit and fades what is within noise from the runs' own arrays: no metric's
    [row, run] array is built for it (on 10^6 rows each one is 16 MB the first paint
    would pay for).  Sorting by a column builds what the sort needs, with the same
    numbers."""
    w = _open(make_window, "--view", "diff")
    w.resize(1400, 800)
    w.show()
    w.wait_for_noise()
    w.grab()
    cmp = w.comparison
    assert cmp.noise is not None and "time_pct" in cmp.noise.metrics
    assert str(cmp.name[w.diff.current_row()]) == "addGrad"
    assert [m.name for m in cmp.metrics if cmp.values.is_built(m.name)] == []
    model = w.diff.models[0]
    col = next(i for i, c in enumerate(model.columns)
               if c.kind == "delta" and c.metric == "time_pct")
    rows = np.arange(cmp.n_rows)
    painted = model.column_at(col, rows)
    w.diff.tree.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    np.testing.assert_array_equal(model.column_array(col), painted)
    np.testing.assert_array_equal(painted, cmp.values["time_pct"][:, 1]
                                  - cmp.values["time_pct"][:, 0])


def _fits(pane, model, col: int, rows: np.ndarray) -> list[str]:
    """Texts of column ``col`` at ``rows`` wider than the column leaves for its text."""
    from profdiff.viewer.qt.column_sizing import text_margin

    room = pane.header().sectionSize(col) - text_margin(pane)
    fm = pane.fontMetrics()
    return [t for t in model.cell_texts(col, rows) if t and fm.horizontalAdvance(t) > room]


@pytest.mark.parametrize("tab", ["diff", "side"])
def test_big_tree_sizes_to_its_shown_rows_then_reads_whole_columns_after_painting(
        make_window, monkeypatch, qtbot, tab):
    """A comparison of more than EXTREMES_ONLY rows (the threshold lowered here to below
    the hs-ad pair's) paints first with its numeric columns sized to the rows shown,
    none of the whole columns read; once painted it reads them, a turn of the event
    loop each, and then every value of every row fits, shown or not, in every pane."""
    from profdiff.viewer.qt import whole_widths

    monkeypatch.setattr(whole_widths, "EXTREMES_ONLY", 10)
    w = _open(make_window, "--view", tab, "--expand", "hot")
    w.show()
    view = w.diff if tab == "diff" else w.side
    panes = [p for p in view.panes if p.isVisible()]
    assert len(panes) == (1 if tab == "diff" else 2) and not view.whole_widths_known()
    lay = view.layout_
    shown = np.unique(np.concatenate([lay.children(-1), *(lay.children(int(r))
                                                           for r in view.expanded_rows())]))
    assert shown.size > 20
    for pane in panes:
        model = pane.model()
        numeric = [i for i, c in enumerate(model.columns) if c.numeric]
        assert len(numeric) >= 5
        assert all(model.width_candidates(i, compute=False).size == 0 for i in numeric)
        for i in numeric:  # the first paint: every shown value fits
            assert _fits(pane, model, i, shown) == [], model.columns[i].header
    panes[0].grab()  # painted: the whole columns follow from the event loop
    qtbot.waitUntil(view.whole_widths_known, timeout=5000)
    every = np.arange(w.comparison.n_rows)
    for pane in panes:
        model = pane.model()
        for i, c in enumerate(model.columns):
            if c.numeric:
                assert model.width_candidates(i, compute=False).size > 0
                assert _fits(pane, model, i, every) == [], c.header


def test_small_tree_reads_whole_columns_at_once(make_window):
    w = _open(make_window, "--view", "diff")
    assert w.comparison.n_rows <= 50_000 and w.diff.whole_widths_known()
    model = w.diff.models[0]
    assert all(model.width_candidates(i, compute=False).size > 0
               for i, c in enumerate(model.columns) if c.numeric)


def test_once_whole_columns_are_read_shown_rows_add_no_width(make_window, monkeypatch):
    """``measure`` with the whole columns read does not read the shown rows' numbers:
    the whole column's candidates bound them.  Checked on the real pair, its columns
    reduced to their extremes as a 10^6-row one's are (the threshold lowered below its
    size): for sets of rows as an expansion, a selection or the whole tree shows them,
    their own values never need more room than the whole column's candidates."""
    from profdiff.viewer.qt import column_sizing, whole_widths
    from profdiff.viewer.qt.column_sizing import numeric_width
    from profdiff.viewer.qt.views import measure

    monkeypatch.setattr(column_sizing, "EXTREMES_ONLY", 10)
    monkeypatch.setattr(whole_widths, "EXTREMES_ONLY", 10)
    w = _open(make_window, "--view", "diff")
    w.show()
    pane, model = w.diff.panes[0], w.diff.models[0]
    n = w.comparison.n_rows
    assert n > 200 and len(model.width_candidates(1)) < n // 4  # extremes, not every row
    rng = np.random.default_rng(5)
    sets = [np.arange(n), rng.choice(n, 40, replace=False), w.diff.layout_.children(-1),
            np.flatnonzero(w.comparison.depth == int(w.comparison.depth.max()))]
    numeric = [i for i, c in enumerate(model.columns) if c.numeric or c.kind == "sig"]
    assert len(numeric) >= 5
    for rows in sets:
        got = measure(pane, model, rows, w.comparison.depth, whole=True)
        for i in numeric:
            own = numeric_width(pane, model, i, np.sort(rows), whole=True)
            assert got[i] == own == numeric_width(pane, model, i, None), \
                (model.columns[i].header, len(rows))


def test_suggestions_summary_counts_unmatched_rows_without_judging_them(qtbot, monkeypatch):
    """The panel's counts come from presence (the same numbers as the statuses'): a big
    comparison is shown while another thread still judges its rows, and the panel must
    not wait for it."""
    from profdiff.parsers import load
    from profdiff.viewer.compare import Comparison, align
    from profdiff.viewer.qt.suggestions_panel import SuggestionsPanel

    runs = [load(str(V1)), load(str(V2))]
    judged = align(runs, mode="tree").status_counts()
    cmp = align(runs, mode="tree")
    presence = cmp.presence_counts()
    assert presence == {"matched": judged["same"] + judged["changed"],
                        "added": judged["added"], "removed": judged["removed"]}
    assert judged["added"] > 0 and judged["removed"] > 0

    def no_judging(*_a, **_k):
        raise AssertionError("the panel judged the rows")

    monkeypatch.setattr(Comparison, "status_for", no_judging)
    panel = SuggestionsPanel()
    qtbot.addWidget(panel)
    panel.set_comparison(cmp)
    assert (f"{judged['removed']:,} removed and {judged['added']:,} added rows"
            in panel.summary.text())
