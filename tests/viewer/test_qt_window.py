"""The main window on real GHC profiles: synced panes, drops, flat table, errors, screenshot."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from synth_profiles import VIEWER_DATA

from profdiff.viewer.qt.main_window import MainWindow

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"


@pytest.fixture
def win(make_window):
    return make_window(1400, 800)


@pytest.fixture
def loaded(win):
    win.load_paths([str(V1), str(V2)])
    assert win.comparison is not None and win.comparison.n_runs == 2
    return win


def _row(cmp, *labels):
    want = list(labels)
    for i in range(cmp.n_rows):
        if cmp.path_labels(i)[-len(want):] == want:
            return i
    raise KeyError(labels)


def test_models_pass_the_tester_on_real_files(loaded, model_tester):
    w = loaded
    w.flush_pending()  # the flat table gets its comparison when first shown
    models = [*w.side.models, *w.diff.models, w.flat.model]
    testers = [model_tester(m) for m in models]
    w.filter_edit.setText("addGrad")
    w.apply_filter()
    w.flush_pending()  # the side-by-side panes filter when shown
    w.changed_box.setChecked(True)
    w.flush_pending()
    for m in models:
        m.sort(3, Qt.SortOrder.DescendingOrder)
    w.changed_box.setChecked(False)
    w.filter_edit.setText("")
    w.apply_filter()
    w.flush_pending()
    assert len(testers) == 4


def test_side_by_side_expansion_and_selection_are_synchronised(loaded, qtbot):
    w = loaded
    a, b = w.side.panes
    ma, mb = w.side.models
    cmp = w.comparison
    loop = _row(cmp, "Main.main", "Main.main.loop")
    a.collapseAll()
    b.collapseAll()
    w.side.state.expanded[:] = False
    # expand in the left pane -> the right pane follows (by row id)
    for r in cmp.path_labels(loop) and w.side.layout_.ancestors(loop):
        a.setExpanded(ma.index_for_row(r), True)
    assert b.isExpanded(mb.index_for_row(loop))
    a.setExpanded(ma.index_for_row(loop), False)
    assert not b.isExpanded(mb.index_for_row(loop))
    # select in the right pane -> the left pane and the details follow
    w.tabs.setCurrentWidget(w.side)
    add_grad = _row(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.side.expand_rows(w.side.layout_.ancestors(add_grad)[:-1])
    b.setCurrentIndex(mb.index_for_row(add_grad))
    assert int(a.currentIndex().internalId()) == add_grad
    assert "addGrad" in w.details.toPlainText()
    assert int(w.diff.tree.currentIndex().internalId()) == add_grad
    # rows line up: same row id at the same visual position in both panes
    assert a.visualRect(ma.index_for_row(add_grad)).top() == \
        b.visualRect(mb.index_for_row(add_grad)).top()
    # scrolling one pane scrolls the other
    a.verticalScrollBar().setValue(3)
    assert b.verticalScrollBar().value() == a.verticalScrollBar().value()


def test_flat_table_first_row_is_the_addgrad_regression(loaded):
    w = loaded
    w.show_view("flat")
    first = w.flat.first_row()
    assert w.flat_comparison.name[first] == "addGrad"
    assert w.flat_comparison.module[first] == "AD.Eval"
    # call sites and reveal in the trees
    sites = w.flat.call_sites(first)
    assert len(sites) >= 1 and all(w.comparison.name[s] == "addGrad" for s in sites)
    w.flat.select_row(first)
    assert w.flat.sites.model().rowCount() == len(sites)
    w.reveal_key(str(w.flat_comparison.keys[first]))
    assert w.tabs.currentWidget() is w.diff
    assert w.comparison.name[w.diff.current_row()] == "addGrad"


def test_flat_table_opens_in_the_order_diff_lists_changes(loaded):
    """No column sorted: the rows are culprit first, as ``profdiff diff`` and the Summary
    list them (addGrad, evalDelta, then addPending, whose allocation fell 1,017 MB ->
    971 MB, 1.1 % of the run, then backprop, +0.027 s, 0.9 %: the largest real changes
    either way, above every row that did not change); sorted by status, the changed rows
    come first.  It used to be the Δ of %time: evalDelta's +87 % allocation was off the
    first screen, every improvement at the bottom."""
    from profdiff.viewer.compare import Status
    from profdiff.viewer.ranking import rank_changes

    w = loaded
    w.show_view("flat")
    cmp, m = w.flat_comparison, w.flat.model
    assert w.flat.table.header().sortIndicatorSection() == -1
    shown = [int(m.index(i, 0).internalId()) for i in range(m.rowCount())]
    assert shown == rank_changes(cmp).order.tolist()
    assert [str(cmp.name[r]) for r in shown[:4]] == ["addGrad", "evalDelta", "addPending",
                                                      "backprop"]
    status_col = next(i for i, c in enumerate(m.columns) if c.kind == "status")
    w.flat.table.sortByColumn(status_col, Qt.SortOrder.DescendingOrder)
    st = [int(cmp.status[int(m.index(i, 0).internalId())]) for i in range(m.rowCount())]
    first_same = st.index(Status.SAME)
    assert all(x == Status.SAME for x in st[first_same:])
    assert str(cmp.name[int(m.index(0, 0).internalId())]) == "addGrad"


def test_filter_keeps_ancestors_and_status_counts(loaded):
    w = loaded
    w.filter_edit.setText("addGrad")
    w.apply_filter()
    lay = w.diff.layout_
    assert lay.matched is not None and lay.matched.sum() >= 1
    vis = np.flatnonzero(lay.visible)
    assert set(w.comparison.name[lay.matched].tolist()) == {"addGrad"}
    assert "MAIN" in set(w.comparison.name[vis].tolist())
    assert "rows shown" in w.status_label.text()
    w.filter_edit.setText("")
    w.apply_filter()
    assert lay.visible is None
    assert "7 added" in w.status_label.text() and "7 removed" in w.status_label.text()


def test_drop_two_files_orders_them_by_name_not_by_age(win, tmp_path):
    """A baseline copied just now (the newest file) must stay the baseline: dropped
    files are ordered by name, never by modification time."""
    a, b = tmp_path / "a.prof", tmp_path / "b.prof"
    shutil.copy(V1, a)  # a (v1): the baseline by name, but the newest file
    shutil.copy(V2, b)
    os.utime(b, (1_000_000, 1_000_000))
    os.utime(a, (2_000_000, 2_000_000))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(b)), QUrl.fromLocalFile(str(a))])
    ev = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                    Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    win.dropEvent(ev)
    assert [Path(p.path).name for p in win.runs] == ["a.prof", "b.prof"]
    assert win.comparison.runs[0].totals["total_alloc_bytes"] == 4_291_393_792  # v1's header
    assert "Baseline: a.prof" in win.statusBar().currentMessage()


def test_drop_one_file_on_a_pane_replaces_that_run(loaded, tmp_path):
    w = loaded
    c = tmp_path / "c.prof"
    shutil.copy(V1, c)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(c))])
    pane = w.side.panes[1]
    ev = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    pane.dropEvent(ev)
    assert Path(w.runs[0].path).name == V1.name
    assert Path(w.runs[1].path).name == "c.prof"
    assert w.comparison.status_counts()["added"] == 0


def test_broken_file_shows_error_and_keeps_loaded_runs(loaded, tmp_path):
    w = loaded
    bad = tmp_path / "broken.prof"
    bad.write_bytes(b"\x00\x01garbage\xff" * 50)
    w.open_as_current(str(bad))
    assert w.message_bar.isVisibleTo(w)
    assert "broken.prof" in w.message_bar.text
    assert len(w.runs) == 2 and Path(w.runs[1].path).name == V2.name
    assert w.comparison.n_runs == 2


def test_keep_state_when_runs_are_replaced(loaded):
    w = loaded
    cmp = w.comparison
    add_grad = _row(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.diff.select_row(add_grad)
    w.filter_edit.setText("eval")
    w.apply_filter()
    w.set_runs(list(reversed(w.runs)), keep_state=True)
    new = w.comparison
    cur = w.diff.current_row()
    assert cur >= 0 and new.name[cur] == "addGrad"
    assert w.diff.layout_.filter_text == "eval"


def test_single_file_and_async_load(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.load_paths([str(V1)])
    qtbot.waitUntil(lambda: w.comparison is not None, timeout=10_000)
    assert w.comparison.n_runs == 1
    assert w.stack.currentWidget() is w.content
    assert not w.side.panes[1].parentWidget().isVisibleTo(w)


def test_empty_window_offers_the_sample(win):
    assert win.stack.currentWidget() is win.empty
    win.open_sample()
    assert win.comparison is not None and win.comparison.n_runs == 2


def test_expand_hottest_delta_reaches_addgrad(loaded):
    w = loaded
    last = w.expand_hottest("delta")
    assert w.comparison.name[last] == "addGrad"
    assert w.diff.tree.isExpanded(w.diff.models[0].index_for_row(int(w.comparison.parent[last])))


def test_screenshot_writes_png(tmp_path):
    from profdiff.viewer.qt.app import main

    out = tmp_path / "shot.png"
    rc = main([str(V1), str(V2), "--screenshot", str(out), "--view", "diff", "--size", "900x600"])
    assert rc == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_status_cell_says_what_a_change_rests_on(loaded):
    """MAIN reads 100.0 -> 100.0 in every share column, yet "changed": its tooltip names
    the inherited time 2.880 s -> 3.790 s (GHC's header) and the inherited alloc."""
    w = loaded
    w.show_view("flat")
    m, cmp = w.flat.model, w.flat_comparison
    col = next(i for i, c in enumerate(m.columns) if c.kind == "status")
    row = next(i for i in range(m.rowCount())
               if cmp.name[int(m.index(i, 0).internalId())] == "MAIN")
    assert m.index(row, col).data() == "changed"
    tip = m.index(row, col).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[:2] == ["changed: judged on",
                                    "  inherited time: 2.880 s → 3.790 s (+31.6%)"]
    assert "inherited alloc" in tip
    same = next(i for i in range(m.rowCount())
                if cmp.name[int(m.index(i, 0).internalId())] == "dotD")
    assert m.index(same, col).data(Qt.ItemDataRole.ToolTipRole) is None
