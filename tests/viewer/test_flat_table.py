"""The "By cost centre" table is a QTableView (:class:`~viewer.qt.table_pane.TablePane`)
that must look and behave like the tree pane it replaced, and cost only the rows on
screen.

* Pixels: the table and a tree pane set up as the flat table was before (a ``TreePane``
  without root decoration) are grabbed over the same real comparison (the hs-ad GHC
  pair, the app's style sheet) in the states a user puts it in - shown, a row clicked,
  moved with the keys (focus frame), scrolled to the end, sorted by a header click,
  filtered, scrolled sideways - and must be identical.
* Cost: a sort or filter of the shown table asks the model for the cells on screen,
  not for every row (QTreeView asked ``index`` and ``hasChildren`` once per row).
* Keys as in a tree: Home/End/PgDn/Up/Down between rows, Left/Right scroll sideways,
  Enter/Space do nothing, Tab leaves the table.
* Call sites of a flat row (by the tree's key codes) are the tree rows with its key.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synth_profiles import VIEWER_DATA
from tool_requirements import require_module

require_module("PySide6", "pip install PySide6-Essentials")
require_module("pytestqt", "pip install pytest-qt")

from PySide6.QtCore import (  # noqa: E402
    QEvent,
    QItemSelectionModel,
    QMimeData,
    QPoint,
    QPointF,
    Qt,
    QUrl,
)
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QHelpEvent, QImage  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QLineEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)
from qt_style import style_sheet  # noqa: E402

from profdiff.parsers import load  # noqa: E402
from profdiff.viewer.qt.layout import RowLayout  # noqa: E402
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns  # noqa: E402
from profdiff.viewer.qt.table_pane import TablePane  # noqa: E402
from profdiff.viewer.qt.views import TreePane, fit_columns  # noqa: E402
from profdiff.viewer.session import Session, SessionSpec  # noqa: E402
from profdiff.viewer.view_state import available_metrics  # noqa: E402

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"


@pytest.fixture(autouse=True)
def app_style():
    """The app's own style sheet (9 pt rows, selection colours, bold headers)."""
    with style_sheet():
        yield
        while _BOXES:  # gone before the style changes back
            box = _BOXES.pop()
            box.hide()
            box.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(scope="module")
def hs_ad():
    s = Session(SessionSpec(), [load(str(V1)), load(str(V2))])
    return s.flat, s.tree


def _pane(qtbot, flat, kind: str):
    """A shown pane of ``kind`` ("table" or "tree", as the flat table was set up before)
    over its own model of ``flat``, sorted as the tab sorts it, in a box with a line
    edit to take the focus away (kept alive by the module's list of boxes)."""
    cols = diff_columns(flat, available_metrics(flat), status=True)
    m = ComparisonTreeModel(flat, cols, None, RowLayout(flat))
    if kind == "table":
        v = TablePane()
    else:
        v = TreePane()
        v.setRootIsDecorated(False)
        v.setItemsExpandable(False)
        v.setExpandsOnDoubleClick(False)
    v.setSortingEnabled(False)
    v.setModel(m)
    delta = next(i for i, c in enumerate(cols) if c.kind == "delta")
    v.header().setSortIndicator(delta, Qt.SortOrder.DescendingOrder)
    v.setSortingEnabled(True)
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    other = QLineEdit()
    lay.addWidget(other)
    lay.addWidget(v)
    box.resize(900, 320)
    box.show()
    qtbot.waitExposed(box)
    fit_columns(v, 260)
    _settle()
    _BOXES.append(box)
    m.setParent(box)
    return v, other


_BOXES: list[QWidget] = []


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


def _pixels(view) -> np.ndarray:
    """What is on screen where ``view`` is: its window's backing store as painted so far
    (``grab()`` would paint the whole view afresh, hiding a part left unrepainted)."""
    box = view.window()
    top_left = view.mapTo(box, QPoint(0, 0))
    shot = box.screen().grabWindow(box.winId(), top_left.x(), top_left.y(),
                                   view.width(), view.height())
    im = shot.toImage().convertToFormat(QImage.Format.Format_RGB32)
    a = np.frombuffer(im.constBits(), dtype=np.uint8, count=im.sizeInBytes())
    return a.reshape(im.height(), im.bytesPerLine())[:, : im.width() * 4].copy()


def _click(view, row: int, col: int) -> None:
    at = view.visualRect(view.model().index(row, col)).center()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     Qt.KeyboardModifier.NoModifier, at)


def _click_header(view, col: int) -> None:
    h = view.header()
    x = h.sectionViewportPosition(col) + h.sectionSize(col) // 2
    QTest.mouseClick(h.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(x, h.height() // 2))


def _steps():
    """What a user does to the flat table, one step after the other."""
    def keys(*ks):
        def act(v, _other):
            v.setFocus()
            for k in ks:
                QTest.keyClick(v, k)
        return act

    def current_alone(v, _other):  # the current row moves, the selection stays
        v.setFocus()
        cur = v.currentIndex()
        v.selectionModel().setCurrentIndex(cur.sibling(cur.row() + 1, cur.column()),
                                           QItemSelectionModel.SelectionFlag.NoUpdate)

    def filt(v, _other):
        v.model().layout.set_filter("grad", False, None)

    def blur(_v, other):
        other.setFocus()

    return [
        ("shown", lambda v, o: None),
        ("row clicked", lambda v, o: _click(v, 2, 1)),
        ("two rows down (focus frame)", keys(Qt.Key.Key_Down, Qt.Key.Key_Down)),
        ("the current row moves alone", current_alone),
        ("end (scrolled to the last row)", keys(Qt.Key.Key_End)),
        ("home, page down", keys(Qt.Key.Key_Home, Qt.Key.Key_PageDown)),
        ("scrolled right", keys(Qt.Key.Key_Right, Qt.Key.Key_Right)),
        ("focus elsewhere", blur),
        ("sorted by a header click", lambda v, o: (_click_header(v, 4), v.scrollToTop())),
        ("filtered", filt),
    ]


def _act_and_grab(qtbot, view, other, act) -> np.ndarray:
    """``act`` on ``view`` in its own active window (one window has the focus), then
    its pixels (with the focus frame when it has the focus)."""
    box = view.window()
    box.activateWindow()
    qtbot.waitUntil(box.isActiveWindow, timeout=5000)
    act(view, other)
    _settle()
    return _pixels(view)


def test_table_paints_like_the_tree_pane_it_replaced(qtbot, hs_ad):
    flat, _tree = hs_ad
    table, t_other = _pane(qtbot, flat, "table")
    tree, r_other = _pane(qtbot, flat, "tree")
    assert table.rowHeight(0) == tree.rowHeight(tree.model().index(0, 0))
    widths = [table.header().sectionSize(i) for i in range(table.header().count())]
    assert widths == [tree.header().sectionSize(i) for i in range(tree.header().count())]
    for name, act in _steps():
        a = _act_and_grab(qtbot, table, t_other, act)
        b = _act_and_grab(qtbot, tree, r_other, act)
        assert table.currentIndex().row() == tree.currentIndex().row(), name
        assert table.verticalScrollBar().value() == tree.verticalScrollBar().value(), name
        assert table.horizontalScrollBar().value() == tree.horizontalScrollBar().value(), name
        assert a.shape == b.shape, name
        differ = int(np.any(a.reshape(a.shape[0], -1, 4) != b.reshape(b.shape[0], -1, 4),
                            axis=2).sum())
        assert differ == 0, f"{name}: {differ} pixels differ from the tree pane"


def test_sort_and_filter_ask_only_for_the_rows_on_screen(qtbot, hs_ad, monkeypatch):
    """126 rows, ~12 on screen: the tree pane asked ``index`` and ``hasChildren`` for
    every row on each sort; the table only for the cells it paints."""
    flat, _tree = hs_ad
    table, _other = _pane(qtbot, flat, "table")
    m = table.model()
    shown = len(table.rows_in(0, table.viewport().height()))
    assert 5 < shown < m.rowCount() // 4
    calls = {"index": 0, "hasChildren": 0}
    for name in calls:
        real = getattr(ComparisonTreeModel, name)

        def counting(self, *a, _real=real, _name=name):
            calls[_name] += 1
            return _real(self, *a)

        monkeypatch.setattr(ComparisonTreeModel, name, counting)
    for act in (lambda: _click_header(table, 3), lambda: _click_header(table, 3),
                lambda: m.layout.set_filter("a", False, None),
                lambda: m.layout.set_filter("", False, None)):
        calls.update(index=0, hasChildren=0)
        act()
        table.viewport().repaint()
        _settle()
        assert calls["hasChildren"] == 0
        # every painted cell once, a few more for the focus / current cell
        assert 0 < calls["index"] <= (shown + 2) * m.columnCount() + 10, calls
    # the tree pane, for comparison: one index() per row on the same sort
    tree, _o = _pane(qtbot, flat, "tree")
    calls.update(index=0, hasChildren=0)
    _click_header(tree, 3)
    tree.viewport().repaint()
    _settle()
    assert calls["index"] >= tree.model().rowCount()


def test_keys_move_between_rows_as_in_a_tree(qtbot, hs_ad):
    flat, _tree = hs_ad
    v, _other = _pane(qtbot, flat, "table")
    m = v.model()
    activated = []
    v.activated.connect(lambda i: activated.append(i.row()))
    _click(v, 1, 2)
    assert (v.currentIndex().row(), v.currentIndex().column()) == (1, 2)
    QTest.keyClick(v, Qt.Key.Key_Down)
    assert v.currentIndex().row() == 2
    QTest.keyClick(v, Qt.Key.Key_End)
    assert v.currentIndex().row() == m.rowCount() - 1
    assert v.verticalScrollBar().value() == v.verticalScrollBar().maximum() > 0
    # the last row fully shown, and the top row starts at the top edge (as in a tree)
    assert v.visualRect(m.index(m.rowCount() - 1, 0)).bottom() < v.viewport().height()
    top = v.rowAt(0)
    assert v.visualRect(m.index(top, 0)).top() == 0
    QTest.keyClick(v, Qt.Key.Key_Home)
    assert v.currentIndex().row() == 0 and v.verticalScrollBar().value() == 0
    QTest.keyClick(v, Qt.Key.Key_PageDown)
    assert v.currentIndex().row() > 5
    col = v.currentIndex().column()
    QTest.keyClick(v, Qt.Key.Key_Right)
    assert v.currentIndex().column() == col  # sideways is a scroll, not a move
    assert v.horizontalScrollBar().value() > 0
    QTest.keyClick(v, Qt.Key.Key_Left)
    assert v.horizontalScrollBar().value() == 0
    for k in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
        QTest.keyClick(v, k)
    assert activated == []
    sel = v.selectionModel().selectedRows()
    assert [i.row() for i in sel] == [v.currentIndex().row()]
    assert not v.tabKeyNavigation()  # Tab moves the focus on, as from a tree


def test_the_window_tab_is_a_table_with_the_tree_panes_ways(make_window, qtbot):
    """The window's flat table: a TablePane; clicking a row shows it in the details and
    its call sites; tooltips; the header state goes to the settings like the trees'."""
    w = make_window(1400, 900, show=True)
    qtbot.waitExposed(w)
    w.load_paths([str(V1), str(V2)])
    w.show_view("flat")
    _settle()
    t = w.flat.table
    assert isinstance(t, TablePane) and t.header() is t.horizontalHeader()
    assert not t.verticalHeader().isVisible() and not t.showGrid()
    assert not t.acceptDrops() and not t.viewport().acceptDrops()  # drops: the window's
    seen = []
    w.flat.flatRowSelected.connect(seen.append)
    _click(t, 3, 1)
    r = int(t.currentIndex().internalId())
    assert seen == [r]
    flat = w.flat.cmp
    assert w.details.toPlainText().startswith(str(flat.name[r]))
    sites = np.flatnonzero(w.comparison.keys == flat.keys[r])
    assert w.flat.sites.model().rowCount() == len(sites) > 0
    # a cell's tooltip: the model's, shown by the view
    idx = t.model().index(0, 3)
    at = t.visualRect(idx).center()
    QApplication.sendEvent(t.viewport(), QHelpEvent(QEvent.Type.ToolTip, at,
                                                    t.viewport().mapToGlobal(at)))
    tip = idx.data(Qt.ItemDataRole.ToolTipRole)
    assert tip and QToolTip.text() == tip
    w.save_settings()
    assert w.settings.value(f"header/flat/{w.runs[0].format}") is not None


def test_a_file_dropped_on_the_table_goes_to_the_window(make_window, qtbot, tmp_path):
    """The table takes no drops itself: the window's (one file shown with two runs: added
    as a third run), as from the tree pane before."""
    import shutil

    w = make_window(1200, 800, show=True)
    qtbot.waitExposed(w)
    w.load_paths([str(V1), str(V2)])
    w.show_view("flat")
    _settle()
    c = tmp_path / "c.prof"
    shutil.copy(V1, c)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(c))])
    vp = w.flat.table.viewport()
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(vp, enter)
    assert enter.isAccepted() and w.overlay.isVisible()
    drop = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(vp, drop)
    _settle()
    assert [Path(p.path).name for p in w.runs] == [V1.name, V2.name, "c.prof"]


@pytest.mark.parametrize("pair", [("hs-ad/v1/ad.prof", "hs-ad/v2/ad.prof"),
                                  ("perf/c-vm/v1/perf.script.txt.gz",
                                   "perf/c-vm/v2/perf.script.txt.gz")])
def test_call_sites_are_the_tree_rows_with_the_key(qtbot, data_dir, pair):
    """By key codes (no string comparison per tree row), the same rows as comparing the
    keys: every flat row's call sites, in row order."""
    from profdiff.viewer.qt.flat_view import FlatView

    s = Session(SessionSpec(), [load(str(data_dir / p)) for p in pair])
    flat, tree = s.flat, s.tree
    codes, distinct = tree.key_codes
    assert len(set(distinct.tolist())) == len(distinct)
    assert (distinct[codes] == tree.keys).all()
    fv = FlatView()
    qtbot.addWidget(fv)
    fv.set_comparison(flat, tree, available_metrics(flat), None)
    found = 0
    for r in range(flat.n_rows):
        want = np.flatnonzero(tree.keys == flat.keys[r])
        got = fv.call_sites(r)
        assert got.tolist() == want.tolist(), str(flat.keys[r])
        found += bool(got.size)
    assert found > flat.n_rows // 2


@pytest.mark.parametrize("pair", [("hs-ad/v1/ad.prof", "hs-ad/v2/ad.prof"),
                                  ("perf/c-vm/v1/perf.script.txt.gz",
                                   "perf/c-vm/v2/perf.script.txt.gz")])
def test_call_sites_pane_lists_each_sites_caller_path_and_values(qtbot, qtmodeltester,
                                                                   data_dir, pair):
    """Each call site of the rows with the most of them: its caller (the row above it),
    its whole call path, and its main metric in each run and their Δ as the tree shows
    them, the largest |Δ| first."""
    from profdiff.viewer.qt.flat_view import FlatView
    from profdiff.viewer.ranking import main_metrics
    from profdiff.viewer.units import digits_rounding, format_delta, format_value

    s = Session(SessionSpec(), [load(str(data_dir / p)) for p in pair])
    flat, tree = s.flat, s.tree
    metric = main_metrics(tree)[0]  # what the window passes: its main self metric
    assert metric in tree.values
    fv = FlatView()
    qtbot.addWidget(fv)
    fv.set_comparison(flat, tree, available_metrics(flat), metric)
    unit = tree.metric_by_name[metric].unit
    hb, hn = (digits_rounding(tree.runs, metric, i) for i in (tree.baseline, tree.current))
    busiest = sorted(range(flat.n_rows), key=lambda r: -fv.call_sites(r).size)[:3]
    assert fv.call_sites(busiest[0]).size > 1
    for fr in busiest:
        fv.show_call_sites(fr)
        m = fv.sites.model()
        assert m.rowCount() == fv.call_sites(fr).size >= 1
        assert m.columnCount() == 5
        deltas = []
        for i in range(m.rowCount()):
            def text(c: int, i: int = i, m=m) -> str:
                return m.index(i, c).data()
            r = int(m.index(i, 0).data(Qt.ItemDataRole.UserRole))
            path = tree.path_labels(r)
            assert text(0) == (path[-2] if len(path) > 1 else "(root)")
            assert text(1) == " ▸ ".join(path) == m.index(i, 1).data(Qt.ItemDataRole.ToolTipRole)
            b = float(tree.values[metric][r, tree.baseline])
            n = float(tree.values[metric][r, tree.current])
            assert [text(c) for c in (2, 3, 4)] == [
                format_value(b, unit, rounding=hb), format_value(n, unit, rounding=hn),
                format_delta(n - b, unit, rounding=hb + hn)]
            deltas.append(abs(n - b))
        assert deltas == sorted(deltas, reverse=True)
        # the callers' column fits its widest label; the numbers sit right
        fm = fv.sites.fontMetrics()
        assert fv.sites.columnWidth(0) >= max(fm.horizontalAdvance(text)
                                              for text in m.callers)
        assert m.index(0, 4).data(Qt.ItemDataRole.TextAlignmentRole) == int(
            (Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
    qtmodeltester.check(m)
    # a double-click on any cell of a line reveals the tree row it names
    fv.resize(900, 700)
    fv.show()
    got: list[int] = []
    fv.callSiteActivated.connect(got.append)
    idx = m.index(0, 2)
    fv.sites.scrollTo(idx)
    at = fv.sites.visualRect(idx).center()
    for act in (QTest.mouseClick, QTest.mouseDClick):  # Qt's double-click follows a press
        act(fv.sites.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert got[-1:] == [int(m.rows[0])]
    last = m.rowCount() - 1
    got.clear()
    fv.sites.setCurrentIndex(m.index(last, 0))  # and Enter on the current line
    QTest.keyClick(fv.sites, Qt.Key.Key_Return)
    assert got[-1:] == [int(m.rows[last])]
    fv.clear()
    assert fv.sites.model().rowCount() == 0


def test_status_cells_follow_the_noise_estimate_that_lands_after_them():
    """A status column read before the noise estimate (its rows judged by precision
    alone: a folded pair's hypercall_page_[k], 19 -> 4 samples, "changed") shows the
    verdict of the estimate once it lands ("same": within sampling error).  The column
    was kept, so the By cost centre table said "changed" or "same" for that row
    depending on which came first."""
    from profdiff.viewer.compare import Status
    from profdiff.viewer.noise import ensure_noise

    folded = Path(__file__).parents[1] / "data" / "folded"
    flat = Session(SessionSpec(), [load(folded / "inferno-vertx-collapsed-unsorted-1.txt"),
                                   load(folded / "inferno-vertx-collapsed-unsorted-2.txt")]).flat
    r = int(np.flatnonzero(flat.name == "hypercall_page_[k]")[0])
    m = ComparisonTreeModel(flat, diff_columns(flat, ["self_samples"], status=True))
    col = [c.kind for c in m.columns].index("status")
    row = next(i for i in range(m.rowCount()) if m.index(i, 0).data() == "hypercall_page_[k]")
    assert flat.noise is None and m.index(row, col).data() == "changed"
    ensure_noise(flat, ["self_samples", "total_samples"])
    m.noise_changed()  # what the window calls when an estimate lands
    assert flat.status[r] == Status.SAME
    assert m.index(row, col).data() == "same"


def test_no_module_column_for_runs_without_modules():
    """Folded stacks name frames only: an empty module column took the width of a name
    column's worth of nothing.  Runs with modules (GHC's) keep it."""
    from profdiff.viewer.qt.models import label_columns

    folded = Path(__file__).parents[1] / "data" / "folded"
    flat = Session(SessionSpec(), [load(folded / "inferno-vertx-collapsed-unsorted-1.txt"),
                                   load(folded / "inferno-vertx-collapsed-unsorted-2.txt")]).flat
    assert not any(str(m) for m in flat.module)
    assert [c.kind for c in label_columns(flat)] == ["name"]
    ghc = Session(SessionSpec(), [load(V1), load(V2)]).flat
    assert [c.kind for c in label_columns(ghc)][:2] == ["name", "module"]


def test_call_sites_pane_only_where_rows_have_callers(qtbot, make_window):
    """A .mem pair's rows are source lines with no call tree: the flat tab ("By line") has
    no empty call-sites pane under it; a .prof pair's has one (its rows' call sites)."""
    mem = VIEWER_DATA.parent / "julia-mem" / "gvfn-test.jl.mem"
    w = make_window(1400, 900, show=True)
    qtbot.waitExposed(w)
    w.load_paths([str(mem), str(mem)])
    w.show_view("flat")
    _settle()
    assert w.tabs.tabText(w.tabs.currentIndex()) == "By line"
    assert w.flat.model.rowCount() == 23 and not w.flat.sites_box.isVisible()
    w.load_paths([str(V1), str(V2)])
    w.show_view("flat")
    _settle()
    assert w.tabs.tabText(w.tabs.currentIndex()) == "By cost centre"
    assert w.flat.sites_box.isVisible()
