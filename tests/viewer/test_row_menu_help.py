"""Issue 19 items 4/e, 5, 8, 10: row context menus and copy, Help menu, first-click sort
order, flame labels elided on the left, every toolbar switch on screen at 1000x700.

Expected texts come from the real files (call paths read back from the ``.prof`` text
by indentation; formats from the reader registry; version from package metadata)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolBar
from synth_profiles import VIEWER_DATA

from profdiff.viewer.compare import Status
from profdiff.viewer.qt.row_focus import FocusBar
from profdiff.viewer.qt.row_menu import RowMenu, RowRef

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"
DATA = Path(__file__).parent.parent / "data"
CPP = DATA / "perf" / "script" / "inferno-cpp-stacks-std-function.perf.txt"


@pytest.fixture
def loaded(make_window):
    w = make_window(1400, 800)
    w.load_paths([str(V1), str(V2)])
    assert w.comparison is not None and w.comparison.n_runs == 2
    return w


def prof_call_path(path: Path, *tail: str) -> str:
    """The call path (``Module.name ▸ …``) of the first tree line of a GHC ``.prof`` whose
    path ends with ``tail``, read from the text by indentation (not through the reader)."""
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("COST CENTRE")
                 and "no." in ln) + 1
    stack: list[tuple[int, str]] = []
    for ln in lines[start:]:
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip())
        name, module = ln.split()[:2]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, f"{module}.{name}"))
        labels = [s for _, s in stack]
        if labels[-len(tail):] == list(tail):
            return " ▸ ".join(labels)
    raise KeyError(tail)


def row_of(cmp, *tail: str) -> int:
    for i in range(cmp.n_rows):
        if cmp.path_labels(i)[-len(tail):] == list(tail):
            return i
    raise KeyError(tail)


def menu_actions(view, ref, window):
    menu = RowMenu.of(view).bind(window).build(ref)
    return {a.objectName(): a for a in menu.actions() if a.objectName()}


# ----- 4/e: the row menu -------------------------------------------------------------------
def test_copy_name_and_call_path_of_a_diff_tree_row(loaded):
    w = loaded
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    acts = menu_actions(w.diff.tree, RowRef(cmp, r), w)
    acts["copyName"].trigger()
    assert QApplication.clipboard().text() == "addGrad"
    acts["copyCallPath"].trigger()
    want = prof_call_path(V2, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    assert want.startswith("MAIN.MAIN ▸ Main.main ▸") and want.count("▸") == 13
    assert QApplication.clipboard().text() == want


def test_popup_on_a_real_row_offers_every_entry(loaded, qtbot):
    w = loaded
    w.show()
    qtbot.waitExposed(w)
    w.tabs.setCurrentWidget(w.diff)
    tree = w.diff.tree
    idx = tree.model().index(0, 0)  # MAIN
    pos = tree.visualRect(idx).center()
    tree.customContextMenuRequested.emit(pos)
    menu = RowMenu.of(tree).last_menu
    assert menu is not None and menu.isVisible()
    names = {a.objectName() for a in menu.actions()}
    assert {"copyName", "copyCallPath", "filterToThis", "showInTree", "showInFlame",
            "showInBottomUp", "focusSubtree", "copyRows"} <= names
    menu.close()


def test_filter_to_this_keeps_exactly_that_function(loaded):
    w = loaded
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    menu_actions(w.diff.tree, RowRef(cmp, r), w)["filterToThis"].trigger()
    assert w.regex_box.isChecked()
    assert w.filter_edit.text() == r"^AD\.Eval\.addGrad$"
    matched = np.flatnonzero(w.diff.layout_.matched)
    # every call site of addGrad in the .prof files, and nothing else
    n_lines = sum(1 for ln in V1.read_text().splitlines()[20:] + V2.read_text().splitlines()[20:]
                  if ln.split()[:2] == ["addGrad", "AD.Eval"])
    assert matched.size >= 1 and set(cmp.name[matched]) == {"addGrad"}
    assert set(cmp.module[matched]) == {"AD.Eval"}
    assert matched.size <= n_lines  # union rows: a call site in both runs is one row


def test_show_in_flame_and_bottom_up_and_back(loaded):
    w = loaded
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    acts = menu_actions(w.diff.tree, RowRef(cmp, r), w)
    acts["showInFlame"].trigger()
    assert w.tabs.currentWidget() is w.flame
    assert w.flame.selected_row() == r
    acts["showInBottomUp"].trigger()
    bu = w.tabs.currentWidget()
    assert type(bu).__name__ == "BottomUpView"
    b = bu.diff.current_row()
    # the inverted tree: addGrad, called from evalDelta, from drainPending, ...
    labels = bu.cmp.path_labels(b)
    assert labels[:3] == ["AD.Eval.addGrad", "AD.Eval.evalDelta", "AD.Eval.drainPending"]
    assert labels[::-1] == cmp.path_labels(r)
    # and back: "Show in tree" on a bottom-up row selects its top-down call path
    caller = int(bu.cmp.parent[bu.cmp.parent[b]])  # addGrad ▸ evalDelta ▸ drainPending
    acts = menu_actions(bu.diff.tree, RowRef(bu.cmp, caller), w)
    acts["copyCallPath"].trigger()
    assert QApplication.clipboard().text().endswith(
        "AD.Eval.drainPending ▸ AD.Eval.evalDelta ▸ AD.Eval.addGrad")
    acts["showInTree"].trigger()
    assert w.tabs.currentWidget() is w.diff
    shown = w.diff.current_row()
    assert cmp.path_labels(shown)[-3:] == ["AD.Eval.drainPending", "AD.Eval.evalDelta",
                                            "AD.Eval.addGrad"]


def test_flat_row_copies_the_call_path_of_each_call_site(loaded):
    w = loaded
    flat = w.flat_comparison
    f = int(np.flatnonzero((flat.name == "evalDelta") & (flat.module == "AD.Eval"))[0])
    acts = menu_actions(w.flat.table, RowRef(flat, f), w)
    assert not acts["focusSubtree"].isEnabled()  # a flat table has no subtrees
    acts["copyCallPaths" if "copyCallPaths" in acts else "copyCallPath"].trigger()
    lines = QApplication.clipboard().text().splitlines()
    sites = np.flatnonzero((w.comparison.name == "evalDelta")
                           & (w.comparison.module == "AD.Eval"))
    assert len(lines) == sites.size >= 2
    assert all(ln.startswith("MAIN.MAIN ▸ ") and ln.endswith("▸ AD.Eval.evalDelta")
               for ln in lines)
    assert prof_call_path(V2, "AD.Eval.drainPending", "AD.Eval.evalDelta") in lines
    acts["showInTree"].trigger()
    assert w.comparison.name[w.diff.current_row()] == "evalDelta"


def test_focus_in_side_by_side_shows_a_one_line_bar(loaded, qtbot):
    w = loaded
    w.show()
    qtbot.waitExposed(w)
    w.tabs.setCurrentWidget(w.side)
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.drainPending", "AD.Eval.evalDelta")
    menu_actions(w.side.panes[0], RowRef(cmp, r), w)["focusSubtree"].trigger()
    QApplication.processEvents()
    bar = w.side.findChild(FocusBar, "focusBar")
    assert bar.isVisible() and bar.height() <= 3 * bar.fontMetrics().height()
    assert w.side.panes[0].height() > 10 * bar.height()  # the trees keep the room
    outside = row_of(cmp, "Main.trainStep", "Main.trainStep.lossD")
    for m in w.side.models:  # both panes show the focus
        assert m.index_for_row(r).isValid() and not m.index_for_row(outside).isValid()


def test_focus_on_a_subtree_and_clear_it(loaded):
    w = loaded
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.drainPending", "AD.Eval.evalDelta")
    menu_actions(w.diff.tree, RowRef(cmp, r), w)["focusSubtree"].trigger()
    vis = w.diff.layout_.visible
    # shown: the path to evalDelta and everything below it, nothing else
    below = {i for i in range(cmp.n_rows) if cmp.path_labels(i)[:len(cmp.path_labels(r))]
             == cmp.path_labels(r)}
    path = set(w.diff.layout_.ancestors(r))
    assert set(np.flatnonzero(vis).tolist()) == below | path
    assert len(below) > 3
    bar = w.diff.findChild(FocusBar, "focusBar")
    assert bar is not None and not bar.isHidden() and "evalDelta" in bar.label.text()
    # a filter now applies within the focus
    w.filter_edit.setText("addGrad")
    w.apply_filter()
    m = np.flatnonzero(w.diff.layout_.matched & w.diff.layout_.visible)
    assert m.size >= 1 and all(i in below for i in m.tolist())
    # the row menu offers the way back
    acts = menu_actions(w.diff.tree, RowRef(cmp, r), w)
    acts["clearFocus"].trigger()
    assert bar.isHidden() and w.diff.focus_keep is None
    w.filter_edit.setText("")
    w.apply_filter()
    assert w.diff.layout_.visible is None


def test_flame_frame_menu_focuses_and_clears(loaded):
    w = loaded
    cmp = w.comparison
    w.tabs.setCurrentWidget(w.flame)
    r = row_of(cmp, "AD.Eval.drainPending", "AD.Eval.evalDelta")
    menu = RowMenu.of(w.flame.canvas)
    acts = {a.objectName(): a for a in menu.build(RowRef(cmp, r)).actions()}
    assert not acts["showInFlame"].isEnabled()
    acts["focusSubtree"].trigger()
    assert w.flame.zoom_row() == r
    acts = {a.objectName(): a for a in menu.build(RowRef(cmp, r)).actions()}
    acts["clearFocus"].trigger()
    assert w.flame.zoom_row() == -1
    acts["copyCallPath"].trigger()
    assert QApplication.clipboard().text() == prof_call_path(V2, "AD.Eval.drainPending",
                                                             "AD.Eval.evalDelta")


def test_ctrl_c_copies_the_selected_row_with_headers(loaded, qtbot):
    w = loaded
    w.show()
    qtbot.waitExposed(w)
    w.windowHandle().requestActivate()  # shortcuts go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    w.tabs.setCurrentWidget(w.diff)
    cmp = w.comparison
    r = row_of(cmp, "AD.Eval.evalDelta", "AD.Eval.addGrad")
    w.diff.select_row(r)
    tree = w.diff.tree
    tree.setFocus()
    QApplication.clipboard().clear()
    QTest.keyClick(tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    head, line = QApplication.clipboard().text().split("\n")
    m = tree.model()
    assert head.split("\t") == [m.headerData(c, Qt.Orientation.Horizontal).replace("\n", " ")
                                for c in range(m.columnCount())]
    cells = line.split("\t")
    assert cells[:2] == ["addGrad", "AD.Eval"]
    # the %time of addGrad in v2 as the .prof prints it (individual %time: 24.7)
    col = head.split("\t").index("%time new")
    assert cells[col] == "24.7"
    QTest.keyClick(tree, Qt.Key.Key_C,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QApplication.clipboard().text() == "addGrad"


# ----- 4/e: the Help menu --------------------------------------------------------------------
def test_help_shortcuts_dialog_lists_every_action_shortcut(loaded):
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QTableWidget

    from profdiff.viewer.qt.help_menu import keys_text

    w = loaded
    w.act_shortcuts.trigger()
    dlg = w.help_dialog
    assert dlg.objectName() == "shortcutsDialog" and dlg.isVisible()
    t = dlg.findChild(QTableWidget, "shortcutsTable")
    rows = {(t.item(i, 1).text(), t.item(i, 2).text()) for i in range(t.rowCount())}
    native = QKeySequence.SequenceFormat.NativeText
    assert ("Reload", "F5") in rows
    assert ("Open…", QKeySequence(QKeySequence.StandardKey.Open).toString(native)) in rows
    assert ("Copy row(s) with headers", "Ctrl+C") in rows
    assert ("Zoom out one level", "Esc, Backspace") in rows
    # generated: every action of the window that has a shortcut is listed
    for a in w.findChildren(QAction):
        if keys_text(a):
            assert (re.sub("&", "", a.text()), keys_text(a)) in rows, a.text()
    dlg.close()


def test_help_formats_dialog_lists_the_reader_registry(loaded):
    from PySide6.QtWidgets import QTableWidget

    from profdiff.parsers.detect import readers

    w = loaded
    w.act_formats.trigger()
    t = w.help_dialog.findChild(QTableWidget, "formatsTable")
    shown = {t.item(i, 0).text(): t.item(i, 1).text() for i in range(t.rowCount())}
    assert shown == {fid: m.DESCRIPTION for fid, m in readers().items()}
    assert {"ghc-prof", "perf-data", "pprof", "callgrind"} <= set(shown)


def test_help_about_names_the_version_and_qt(loaded):
    from importlib.metadata import version

    import PySide6
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QLabel

    w = loaded
    w.act_about.trigger()
    text = w.help_dialog.findChild(QLabel, "aboutText").text()
    assert f"profdiff {version('profdiff')}" in text
    assert f"Qt {qVersion()}" in text and f"PySide6 {PySide6.__version__}" in text


# ----- 5: the first click on a numeric header sorts largest first ----------------------------
def _click_header(view, col: int) -> None:
    h = view.header()
    x = h.sectionViewportPosition(col) + h.sectionSize(col) // 2
    QTest.mouseClick(h.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(x, h.height() // 2))


def test_first_click_on_a_numeric_column_sorts_descending(loaded, qtbot):
    w = loaded
    w.show()
    qtbot.waitExposed(w)
    w.tabs.setCurrentWidget(w.flat)
    table = w.flat.table
    m = table.model()
    col = next(i for i, c in enumerate(m.columns) if c.kind == "value"
               and c.header == "%alloc\nnew")
    assert table.header().sortIndicatorSection() != col
    _click_header(table, col)
    assert table.header().sortIndicatorSection() == col
    assert table.header().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    vals = [float(m.index(i, col).data(Qt.ItemDataRole.UserRole + 2)) for i in range(m.rowCount())]
    assert vals[0] == max(vals) > 0 and vals == sorted(vals, reverse=True)
    # the biggest %alloc in v2 is addGrad's 33.3 (the .prof's own top table)
    assert m.index(0, 0).data() == "addGrad" and m.index(0, col).data() == "33.3"
    _click_header(table, col)  # the second click flips
    assert table.header().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    # names sort A-Z on their first click
    _click_header(table, 0)
    assert table.header().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    names = [str(m.index(i, 0).data()).lower() for i in range(m.rowCount())]
    assert names == sorted(names)


def test_delta_of_a_higher_is_better_metric_sorts_regressions_first():
    from profdiff.viewer.qt.models import Column, initial_sort_order

    assert initial_sort_order(Column("delta", "x")) == Qt.SortOrder.DescendingOrder.value
    assert initial_sort_order(Column("name")) == Qt.SortOrder.AscendingOrder.value
    assert initial_sort_order(Column("sig", "x")) == Qt.SortOrder.AscendingOrder.value


# ----- 8: flame labels elided on the left ----------------------------------------------------
def test_frame_label_drops_the_namespace_first(qapp):
    from profdiff.viewer.qt.flame_canvas import frame_label, qualified_parts

    fm = QFontMetrics(QFont())
    name = "exprcalc::parser::eval_expr(exprcalc::Node const*)"
    assert qualified_parts(name) == ("exprcalc", "parser", "eval_expr(exprcalc::Node const*)")
    assert frame_label(name, fm, fm.horizontalAdvance(name)) == name
    w = fm.horizontalAdvance("…::eval_expr(exprcalc::Node const*)")
    assert frame_label(name, fm, w) == "…::eval_expr(exprcalc::Node const*)"
    assert frame_label(name, fm, fm.horizontalAdvance("…::eval_expr(…)")) == "…::eval_expr(…)"
    assert frame_label(name, fm, fm.horizontalAdvance("…::eval_expr")) == "…::eval_expr"
    short = frame_label(name, fm, fm.horizontalAdvance("…::eval"))  # then cut on the right
    assert short.startswith("eval") and short.endswith("…")
    assert fm.horizontalAdvance(short) <= fm.horizontalAdvance("…::eval")
    assert qualified_parts("std::vector<std::pair<int, int> >::push_back") == \
        ("std", "vector<std::pair<int, int> >", "push_back")


def test_flame_of_a_cpp_perf_profile_keeps_function_names(qtbot):
    from profdiff.parsers import load
    from profdiff.viewer.compare import align
    from profdiff.viewer.qt.flame_canvas import qualified_parts
    from profdiff.viewer.qt.flame_view import FlameView

    p = load(CPP)
    cmp = align([p], mode="tree")
    view = FlameView()
    qtbot.addWidget(view)
    view.set_comparison(cmp)
    drawn = {}
    for width in (300, 500, 800, 3000):
        view.render_image((width, 600))
        drawn[width] = dict(view.canvas.last_labels)
    qualified = {}  # (width, row) -> label, for C++ frames too narrow for their whole name
    for width in (300, 500, 800):
        for r, t in drawn[width].items():
            if t != str(cmp.name[r]) and "::" in str(cmp.name[r]):
                qualified[width, r] = t
    assert qualified, "some C++ frame must be too narrow for its full name"
    assert any(t.startswith("…::") for t in qualified.values())
    for (_w, r), t in qualified.items():
        name = str(cmp.name[r])
        bare = qualified_parts(name)[-1].split("(")[0]
        if t.startswith("…::"):  # namespaces dropped from the left
            assert name.endswith(t[1:]) or t.endswith("(…)") or t == "…::" + bare, (name, t)
        else:  # no room for "…::": the function name alone, or its start
            assert t == bare or (t.endswith("…") and bare.startswith(t[:-1])), (name, t)
        tip = view.tooltip_html(r)
        assert f"<b>{html.escape(name)}</b>" in tip  # the tooltip has the whole name
    # wide enough: the same frames show their whole names
    assert any(drawn[3000].get(r) == str(cmp.name[r]) for _w, r in qualified)


# ----- 10: every switch of the toolbar on screen at 1000x700 ---------------------------------
def test_every_toolbar_switch_is_visible_at_1000x700(make_window, qtbot):
    w = make_window(1000, 700, show=True)
    qtbot.waitExposed(w)
    w.load_paths([str(V1), str(V2)])
    QApplication.processEvents()
    tb = w.findChild(QToolBar, "mainToolbar")
    QApplication.processEvents()
    assert tb.width() <= 1000
    ext = next((c for c in tb.children() if c.objectName() == "qt_toolbar_ext_button"), None)
    assert ext is None or not ext.isVisible(), "controls overflow into the » menu"
    for wd in (w.filter_edit, w.regex_box, w.changed_box, w.significant_box,
               w.threshold_spin, w.percent_box, w.palette_box):
        assert wd.isVisible(), wd.text() if hasattr(wd, "text") else wd
        geo = wd.geometry()
        assert geo.right() <= tb.width(), wd
    for a in (w.act_open, w.act_reload, w.act_swap, w.act_hot):
        assert tb.widgetForAction(a).isVisible()
        assert tb.widgetForAction(a).toolTip()
    # and the switches stay in the View menu
    view_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&View")
    texts = {a.text() for a in view_menu.actions()}
    assert {"Changed rows only", "Significant changes only", "Colour-blind safe palette",
            "Show percent of own run (else absolute units)"} <= texts
    w.act_changed.setChecked(True)
    assert w.changed_box.isChecked() and w.changed_only
    # a wide window gets the buttons' texts back
    w.resize(1900, 800)
    QApplication.processEvents()
    assert tb.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon


# ----- flame frames within the noise are faded, as the tables' Δ cells -----------------------
def test_flame_fades_frames_whose_change_is_within_the_noise(loaded):
    from profdiff.viewer import flame_layout as fl
    from profdiff.viewer.qt.flame_canvas import pack_rgb
    from profdiff.viewer.qt.flame_view import fade_rgbs

    w = loaded
    flame = w.flame
    w.tabs.setCurrentWidget(flame)
    w.flush_pending()
    cmp = flame.comparison()
    m = flame.noise_metric()
    assert cmp.metric_by_name[m].sampled  # GHC time ticks are samples
    mn = cmp.noise.metrics[m]
    colour_metric = flame.metric_combo.currentData()
    raw = fl.row_colors(cmp, colour_metric, "self_pct", flame.color_scale)
    change = fl.color_changes(cmp, colour_metric, "self_pct")
    plain = np.isin(cmp.status, [Status.SAME, Status.CHANGED])
    noisy = np.flatnonzero(~mn.significant & (change != 0) & plain)
    real = np.flatnonzero(mn.significant & (change != 0) & plain)
    assert noisy.size and real.size
    got = flame.colors_now()
    assert (got[noisy] == pack_rgb(fade_rgbs(raw[noisy]))).all()
    assert (got[real] == pack_rgb(raw[real])).all()
    assert "faded: within sampling error" in flame.legend_title()
    assert "within the noise" in flame.tooltip_html(int(noisy[0]))
    w.act_fade.setChecked(False)  # View ▸ Fade changes within noise: off
    assert (flame.colors_now()[noisy] == pack_rgb(raw[noisy])).all()


# ----- format tabs get the same row menu ------------------------------------------------------
def _tab(w, title: str):
    i = next(i for i in range(w.tabs.count()) if w.tabs.tabText(i) == title)
    w.tabs.setCurrentIndex(i)
    return w.tabs.widget(i)


def test_ticky_closures_rows_have_the_row_menu(make_window):
    from PySide6.QtWidgets import QTreeView

    fv = DATA / "format-views"
    w = make_window(1000, 700)
    w.load_paths([str(fv / "hs-ad-v1.ticky.txt"), str(fv / "hs-ad-v2.ticky.txt")])
    view = _tab(w, "Ticky closures").findChild(QTreeView)
    idx = view.model().index(0, 0)
    menu = RowMenu.of(view)
    ref = menu.ref_at(idx)
    assert ref is not None  # the closure as the baseline's ticky report prints it
    assert ref.name in (fv / "hs-ad-v1.ticky.txt").read_text()
    acts = {a.objectName(): a for a in menu.build(ref, idx).actions() if a.objectName()}
    acts["copyName"].trigger()
    assert QApplication.clipboard().text() == ref.name
    acts["showInFlat"].trigger()
    assert w.tabs.currentWidget() is w.flat
    assert str(w.flat_comparison.name[w.flat.table.currentIndex().internalId()]) == ref.name


def test_callgrind_callers_callees_rows_have_the_row_menu(make_window):
    from PySide6.QtWidgets import QTableWidget

    cg = DATA / "callgrind"
    w = make_window(1000, 700)
    w.load_paths([str(cg / "cargo-profiler-rsmat-valgrind-3.10.0.SVN.callgrind.out.gz"),
                  str(cg / "cargo-profiler-rsmat-valgrind-3.10.1.callgrind.out.19118.gz")])
    table = _tab(w, "Callers / callees").findChild(QTableWidget, "callGraphFunctions")
    label = table.item(0, 0).text()
    idx = table.model().index(0, 0)
    menu = RowMenu.of(table)
    ref = menu.ref_at(idx)
    assert ref is not None and label in (ref.qualified, ref.name)
    acts = {a.objectName(): a for a in menu.build(ref, idx).actions() if a.objectName()}
    acts["copyName"].trigger()
    assert QApplication.clipboard().text() == ref.name
    acts["showInTree"].trigger()
    cmp = w.comparison
    shown = w.tabs.currentWidget()
    assert shown in (w.diff, w.side)
    assert str(cmp.keys[shown.current_row()]) == ref.key
