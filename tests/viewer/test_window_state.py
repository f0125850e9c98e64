"""Main window: settings restored on reopen, 3+ runs (pane run choice, baseline choice),
the drop overlay during a drag, and the progress bar + cancel of a background load."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QSettings, Qt, QThreadPool, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent
from PySide6.QtWidgets import QApplication
from synth_profiles import VIEWER_DATA

from profdiff.viewer.qt.main_window import MainWindow

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"
HS_AD = Path(__file__).parent.parent / "data" / "hs-ad"
RENAME = "AD.Dual:logisticD=sigmoidD"  # v2 renamed sigmoidD
THREE = [HS_AD / "v1" / "ad.prof", HS_AD / "v2" / "ad.prof", HS_AD / "noise-v1" / "run1" / "ad.prof"]


def _window(qtbot, ini: Path, synchronous: bool = True) -> MainWindow:
    w = MainWindow(settings=QSettings(str(ini), QSettings.Format.IniFormat),
                   synchronous=synchronous)
    qtbot.addWidget(w)
    return w


def _row(cmp, *labels):
    want = list(labels)
    for i in range(cmp.n_rows):
        if cmp.path_labels(i)[-len(want):] == want:
            return i
    raise KeyError(labels)


# ------------------------------------------------------------------------------------------
# settings
# ------------------------------------------------------------------------------------------
def test_layout_and_options_are_restored_by_a_new_window(qtbot, tmp_path):
    ini = tmp_path / "s.ini"
    w = _window(qtbot, ini)
    w.resize(761, 543)  # within the offscreen screen (800x600)
    w.show()
    w.load_paths([str(V1), str(V2)])
    w.flush_pending()
    metric = next(m for m in w._available_metrics() if m not in w.metrics)
    w.toggle_metric(metric, True)
    w.act_palette.setChecked(True)
    w.act_percent.setChecked(False)
    chosen = list(w.metrics)
    w.diff.tree.header().resizeSection(0, 333)
    w.diff.tree.header().resizeSection(2, 91)
    w.flat.table.header().resizeSection(1, 177)
    w.side.panes[0].header().resizeSection(0, 251)
    assert w.side.panes[1].header().sectionSize(0) == 251  # mirrored
    w.splitter.setSizes([500, 200])
    w.side.splitter.setSizes([300, 900])
    main_sizes, side_sizes = w.splitter.sizes(), w.side.splitter.sizes()
    # the diff column 2 is a metric column: widths keyed by column signature
    diff_widths = [w.diff.tree.header().sectionSize(i)
                   for i in range(w.diff.tree.header().count())]
    w.close()

    w2 = _window(qtbot, ini)
    w2.show()
    assert (w2.width(), w2.height()) == (761, 543)
    assert w2.act_palette.isChecked() and w2.scale.palette == "colorblind"
    assert not w2.act_percent.isChecked()
    w2.load_paths([str(V1), str(V2)])
    w2.flush_pending()  # the flat table gets its comparison (and widths) when shown
    QApplication.processEvents()
    assert w2.splitter.sizes() == main_sizes
    assert w2.side.splitter.sizes() == side_sizes
    assert w2.metrics == chosen
    assert [w2.diff.tree.header().sectionSize(i)
            for i in range(w2.diff.tree.header().count())] == diff_widths
    assert w2.diff.tree.header().sectionSize(0) == 333
    assert w2.flat.table.header().sectionSize(1) == 177
    assert w2.side.panes[0].header().sectionSize(0) == 251
    assert w2.side.panes[1].header().sectionSize(0) == 251


def test_column_widths_survive_a_reload(qtbot, tmp_path):
    w = _window(qtbot, tmp_path / "s.ini")
    w.load_paths([str(V1), str(V2)])
    w.diff.tree.header().resizeSection(0, 345)
    w.swap_runs()
    assert w.diff.tree.header().sectionSize(0) == 345


# ------------------------------------------------------------------------------------------
# three runs
# ------------------------------------------------------------------------------------------
@pytest.fixture
def three(qtbot, tmp_path):
    w = _window(qtbot, tmp_path / "s.ini")
    w.resize(1400, 800)
    w.show()
    w.load_paths([str(p) for p in THREE])
    w.flush_pending()
    assert w.comparison.n_runs == 3
    return w


def test_each_pane_chooses_its_run(three):
    w = three
    cmp = w.comparison
    combos = w.side.run_combos
    w.tabs.setCurrentWidget(w.side)
    assert all(c.isVisibleTo(w) for c in combos) and [c.count() for c in combos] == [3, 3]
    assert w.side.pane_runs == [0, 2]  # baseline | current (the last run)
    assert [c.currentIndex() for c in combos] == [0, 2]
    add_grad = _row(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.tabs.setCurrentWidget(w.side)
    w.side.select_row(add_grad)
    parent = int(cmp.parent[add_grad])

    combos[1].setCurrentIndex(1)  # the user picks run 1 for the right pane
    assert w.side.pane_runs == [0, 1]
    right = w.side.models[1]
    assert right.pane_run == 1
    assert {c.run for c in right.columns if c.kind == "value"} == {1}
    assert "[1]" in w.side.titles[1].text()
    # what the user was looking at is kept, rows still line up
    assert w.side.panes[1].isExpanded(right.index_for_row(parent))
    assert int(w.side.panes[1].currentIndex().internalId()) == add_grad
    a, b = w.side.panes
    assert a.visualRect(w.side.models[0].index_for_row(add_grad)).top() == \
        b.visualRect(right.index_for_row(add_grad)).top()
    # the value shown is run 1's
    col = next(i for i, c in enumerate(right.columns) if c.kind == "value"
               and cmp.values[c.metric][add_grad, 1] != cmp.values[c.metric][add_grad, 0])
    shown = right.data(right.index_for_row(add_grad, col))
    other = w.side.models[0].data(w.side.models[0].index_for_row(add_grad, col))
    assert shown != other


def test_choose_the_baseline_among_three_runs(three):
    w = three
    cmp = w.comparison
    add_grad = _row(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.tabs.setCurrentWidget(w.diff)
    w.diff.select_row(add_grad)
    w.filter_edit.setText("eval")
    w.apply_filter()
    acts = [a for a in w.baseline_menu.actions() if a.isCheckable()]
    assert len(acts) == 3 and acts[0].isChecked()

    acts[1].trigger()  # View > Baseline > [1]
    new = w.comparison
    assert new is not cmp and new.baseline == 1 and new.n_runs == 3
    assert new.current == 2
    assert [Path(p.path) for p in new.runs] == THREE  # runs keep their order
    assert w.side.pane_runs == [1, 2]
    assert w.side.run_combos[0].currentIndex() == 1
    assert [a.isChecked() for a in w.baseline_menu.actions() if a.isCheckable()] == \
        [False, True, False]
    # state kept: selection, filter, tab
    cur = w.diff.current_row()
    assert cur >= 0 and new.name[cur] == "addGrad"
    assert w.diff.layout_.filter_text == "eval"
    assert w.tabs.currentWidget() is w.diff
    # Δ is now against run 1: current - baseline
    m = "alloc_bytes"
    r = cur
    assert new.delta(m)[r] == pytest.approx(new.values[m][r, 2] - new.values[m][r, 1])

    w.set_baseline(2)  # the last run as baseline: current becomes the one before
    assert w.comparison.baseline == 2 and w.comparison.current == 1
    assert w.side.pane_runs == [2, 1]


def test_baseline_choice_keeps_the_rename_rules(three):
    from profdiff.viewer.rules import name_rule

    w = three
    w.set_rules([name_rule(RENAME)])
    n_rules = int((w.comparison.matched_by > 0).sum())
    assert n_rules > 0
    w.set_baseline(1)
    assert len(w.rules) == 1
    assert int((w.comparison.matched_by > 0).sum()) == n_rules


# ------------------------------------------------------------------------------------------
# drag and drop overlay
# ------------------------------------------------------------------------------------------
def _mime(*paths) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def test_drop_overlay_shows_during_a_drag(qtbot, tmp_path):
    w = _window(qtbot, tmp_path / "s.ini")
    w.resize(900, 600)
    w.show()
    assert not w.overlay.isVisible()
    mime = _mime(V1, V2)
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    w.dragEnterEvent(enter)
    assert enter.isAccepted()
    assert w.overlay.isVisible()
    assert "compare" in w.overlay.text
    assert w.overlay.geometry() == w.centralWidget().rect()
    w.dragLeaveEvent(QDragLeaveEvent())
    assert not w.overlay.isVisible()
    # text mime (no files): ignored, no overlay
    plain = QMimeData()
    plain.setText("hello")
    ev = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, plain,
                         Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    w.dragEnterEvent(ev)
    assert not ev.isAccepted() and not w.overlay.isVisible()


def test_pane_overlay_names_the_slot(qtbot, tmp_path):
    w = _window(qtbot, tmp_path / "s.ini")
    w.resize(1200, 700)
    w.show()
    w.load_paths([str(V1), str(V2)])
    w.tabs.setCurrentWidget(w.side)
    pane = w.side.panes[0]
    mime = _mime(V1)  # the event does not own its mime data: keep it alive
    ev = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime,
                         Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    pane.dragEnterEvent(ev)
    assert pane._overlay.isVisible() and "BASELINE" in pane._overlay.text
    pane.dragLeaveEvent(QDragLeaveEvent())
    assert not pane._overlay.isVisible()


# ------------------------------------------------------------------------------------------
# background load: progress and cancel
# ------------------------------------------------------------------------------------------
def _scaled_prof(dst: Path, target_mb: float) -> Path:
    """A big real report: hs-ad v1's subtrees under MAIN repeated (as the benchmark does)."""
    lines = (HS_AD / "v1" / "ad.prof").read_text(encoding="utf-8").split("\n")
    hi = next(i for i, ln in enumerate(lines) if "no." in ln and "entries" in ln)
    main_at = next(i for i in range(hi + 1, len(lines)) if lines[i].startswith("MAIN"))
    head = "\n".join(lines[: main_at + 1]) + "\n"
    block = "\n".join(ln for ln in lines[main_at + 1:] if ln.strip()) + "\n"
    reps = max(1, int(target_mb * 1e6) // len(block))
    with open(dst, "w", encoding="utf-8") as f:
        f.write(head)
        for _ in range(reps):
            f.write(block)
    return dst


def test_progress_and_cancel_keep_the_previous_runs(qtbot, tmp_path):
    w = _window(qtbot, tmp_path / "s.ini", synchronous=False)
    w.show()
    w.load_paths([str(V1), str(V2)])
    qtbot.waitUntil(lambda: w.comparison is not None, timeout=20_000)
    before = w.comparison
    big = _scaled_prof(tmp_path / "big.prof", 12)

    w.open_as_current(str(big))
    assert w.loading and w.progress_row.isVisible()
    assert "big.prof" in w.progress_label.text()
    seen: list[float] = []
    task = w._task

    def on_progress(f: float) -> None:  # runs in the GUI thread, before "finished"
        seen.append(f)
        if f > 0.05 and w.loading:
            w.cancel_button.click()

    task.signals.progress.connect(on_progress)
    qtbot.waitUntil(lambda: not w.loading, timeout=20_000)
    assert seen and w.progress.value() > 0  # the bar moved before the cancel
    assert not w.progress_row.isVisible()
    assert "cancelled" in w.message_bar.text.lower() and "big.prof" in w.message_bar.text
    QThreadPool.globalInstance().waitForDone(20_000)
    QApplication.processEvents()
    assert w.comparison is before
    assert [Path(p.path).name for p in w.runs] == [V1.name, V2.name]
    assert not np.any([p.path.endswith("big.prof") for p in w.comparison.runs])


def test_an_empty_window_says_what_it_reads_until_the_runs_show(qtbot, tmp_path):
    """While its first files are read, the empty page names them instead of inviting a
    drop (its Open and sample buttons hidden); a cancelled read invites it again, and the
    runs, once read, replace the page."""
    w = _window(qtbot, tmp_path / "s.ini", synchronous=False)
    w.show()
    big = _scaled_prof(tmp_path / "big.prof", 12)
    w.load_paths([str(big)])
    assert w.stack.currentWidget() is w.empty
    assert w.empty.hint.text().startswith("Loading big.prof")
    assert not any(b.isVisible() for b in w.empty.buttons)
    w.cancel_button.click()
    assert w.empty.hint.text() == w.empty.IDLE_HINT
    assert all(b.isVisible() for b in w.empty.buttons)
    QThreadPool.globalInstance().waitForDone(20_000)
    w.load_paths([str(V1), str(V2)])
    assert w.empty.hint.text().startswith("Loading ")
    qtbot.waitUntil(lambda: w.comparison is not None, timeout=20_000)
    assert w.stack.currentWidget() is w.content and not w.loading
    assert w.empty.hint.text() == w.empty.IDLE_HINT  # a later empty window invites a drop


def _open_in_qt(view) -> set[int]:
    """The rows Qt itself shows expanded in every pane of a tree view (not the view's own
    bookkeeping), as one set per view (the panes of a side-by-side view agree)."""
    got = []
    for pane, m in zip(view.panes, view.models, strict=True):
        rows = np.flatnonzero(view.state.expanded)
        got.append({int(r) for r in rows if pane.isExpanded(m.index_for_row(int(r)))})
    assert all(g == got[0] for g in got)
    return got[0]


def _diff_shown(qtbot, tmp_path):
    """A window shown at 1400x900 on the hs-ad pair, the diff tree shown, every tab's
    deferred update applied."""
    w = _window(qtbot, tmp_path / "s.ini")
    w.resize(1400, 900)
    w.show()
    w.load_paths([str(V1), str(V2)])
    w.show_view("diff")
    w.flush_pending()
    return w


@pytest.mark.parametrize("toggle", ["sig column", "percent", "metric"])
def test_replacing_the_columns_keeps_the_open_rows_and_the_current_row(qtbot, tmp_path,
                                                                         toggle):
    """Turning the significance column on, switching % of run off or adding a metric
    rebuilds the tree views' columns (a model reset): the rows open before stay open in
    Qt (and the views' own record of them stays true), the current row stays current.
    The significance column used to collapse the diff tree to MAIN."""
    w = _diff_shown(qtbot, tmp_path)
    cmp = w.comparison
    culprit = _row(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.diff.select_row(culprit)
    w.side.select_row(culprit)
    w.show_view("flat")
    flat_row = int(np.flatnonzero(np.asarray(w.flat.cmp.name) == "addGrad")[0])
    w.flat.select_row(flat_row)
    w.show_view("diff")
    before = {v: _open_in_qt(v) for v in (w.diff, w.side)}
    assert len(before[w.diff]) > 5 and len(before[w.side]) > 5
    if toggle == "sig column":
        w.act_sig.setChecked(True)
        assert any(c.kind == "sig" for c in w.diff.models[0].columns)
    elif toggle == "percent":
        w.act_percent.setChecked(False)
    else:
        w.set_metrics([*w.metrics, "entries"])
    QApplication.processEvents()
    for v in (w.diff, w.side):
        assert set(np.flatnonzero(v.state.expanded).tolist()) == before[v], toggle
        assert _open_in_qt(v) == before[v], toggle
    assert w.diff.current_row() == culprit
    assert w.side.current_row() == culprit
    w.show_view("flat")
    cur = w.flat.table.currentIndex()
    assert cur.isValid() and int(cur.internalId()) == flat_row, toggle


@pytest.mark.parametrize("how", ["reload", "other files"])
def test_a_replaced_comparison_is_freed(qtbot, tmp_path, how):
    """After the runs are replaced (a reload keeps the view's state, other files do not),
    nothing the window keeps holds the old comparison: not the views' lazy sibling order
    (kept per comparison) nor the mark of the opening paths a tree view owes.  The mark
    kept the replaced comparison of a reload - every array of it - alive."""
    import gc
    import weakref

    from PySide6.QtCore import QCoreApplication, QEvent

    w = _window(qtbot, tmp_path / "s.ini")
    w.load_paths([str(V1), str(V2)])
    key = w.hot_key("value")
    assert key is not None and len(key) == w.comparison.n_rows
    assert w._culprit_owed is not None  # the hidden tree tabs owe their opening paths
    old = weakref.ref(w.comparison)
    del key
    if how == "reload":
        w.reload()
    else:
        w.load_paths([str(V2), str(V1)])
    assert w.comparison is not None and w.comparison is not old()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # old models
    gc.unfreeze()  # the window freezes what is alive after each load (_settle_gc)
    gc.collect()
    assert old() is None


def test_a_comparison_replaced_while_reading_its_whole_columns_is_freed(qtbot, tmp_path,
                                                                        monkeypatch):
    """A big comparison (threshold lowered) shown in every tab, its whole columns being
    read (:mod:`viewer.qt.whole_widths`), is replaced by other runs, not big: nothing
    keeps it alive - not the columns still to read, nor the hidden flame graph, which
    gets the new runs only when shown (it kept the old ones until then)."""
    import gc
    import weakref

    from PySide6.QtCore import QCoreApplication, QEvent

    from profdiff.viewer.qt import whole_widths

    monkeypatch.setattr(whole_widths, "EXTREMES_ONLY", 10)
    w = _diff_shown(qtbot, tmp_path)
    assert not w.diff.whole_widths_known()
    w.diff.tree.viewport().repaint()  # painted: the first column is read on the next turn
    QCoreApplication.processEvents()
    assert not w.diff.whole_widths_known()  # more columns still to read
    old = weakref.ref(w.comparison)
    monkeypatch.setattr(whole_widths, "EXTREMES_ONLY", 50_000)
    w.load_paths([str(V2), str(V1)])
    assert w.comparison is not old() and w.diff.whole_widths_known()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # old models
    gc.unfreeze()
    gc.collect()
    assert old() is None
