"""What a window computes before its first paint: only what the tab shown first needs.

The diff tree of the hs-ad pair (real GHC profiles) must not wait for the flat
comparison nor the Summary; each is built, with the same numbers, when its tab is shown.
"""

from __future__ import annotations

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
