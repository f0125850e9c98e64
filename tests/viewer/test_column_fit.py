"""Column widths of the tree/table views on real pairs (issue 19 item 2 / build d).

Every visible cell's displayed text is compared with the width Qt renders it in: no
number may be elided, no header clipped; names may be elided only on the left side of
their qualifier (the function name stays) and, when any is, the window has no empty
area left that could have shown it.  Checked in the side-by-side, diff, by-cost-centre
and bottom-up tabs on the hs-ad GHC pair, a Julia pprof pair and a perf script pair, at
1000x700 and 2560x1440.
"""

from __future__ import annotations

import pytest
from tool_requirements import require_module

require_module("PySide6", "pip install PySide6-Essentials")
require_module("pytestqt", "pip install pytest-qt")

from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtGui import QFont, QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem  # noqa: E402
from qt_style import style_sheet  # noqa: E402

from profdiff.viewer.qt.column_sizing import elide_label, split_label  # noqa: E402
from profdiff.viewer.qt.main_window import MainWindow  # noqa: E402
from profdiff.viewer.qt.models import ComparisonTreeModel  # noqa: E402

PAIRS = {
    "hs-ad": ("hs-ad/v1/ad.prof", "hs-ad/v2/ad.prof"),
    "julia": ("pprof/julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz",
              "pprof/julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz"),
    "perf": ("perf/c-vm/v1/perf.script.txt.gz", "perf/c-vm/v2/perf.script.txt.gz"),
}
SIZES = [(1000, 700), (2560, 1440)]


@pytest.fixture(autouse=True)
def app_style():
    """The app's own style sheet (9 pt trees, bold padded headers), as the window has it."""
    with style_sheet():
        yield


def _window(qtbot, tmp_path, data_dir, pair: str, size: tuple[int, int]) -> MainWindow:
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.resize(*size)
    w.load_paths([str(data_dir / p) for p in PAIRS[pair]])
    assert w.comparison is not None and w.comparison.n_rows > 0, w.message_bar.messages
    w.show()
    w.flush_pending()
    QApplication.processEvents()
    return w


def _panes(w: MainWindow, view: str):
    w.show_view(view)
    for _ in range(3):
        QApplication.processEvents()
    if view == "side":
        return [p for p in w.side.panes if p.isVisible()]
    if view == "diff":
        return [w.diff.tree]
    if view == "bottom-up":
        from profdiff.viewer.qt.views import TreePane

        tree = w.findChild(TreePane, "bottomUpTree")
        assert tree is not None and tree.isVisible(), "no bottom-up tab"
        return [tree]
    return [w.flat.table]


def _text_room(view, idx) -> tuple[int, QFontMetrics]:
    """Pixels Qt's delegate has for ``idx``'s text, and the font it draws it in."""
    opt = QStyleOptionViewItem()
    opt.initFrom(view.viewport())
    opt.rect = view.visualRect(idx)
    opt.font = view.font()
    view.itemDelegateForIndex(idx).initStyleOption(opt, idx)
    font = idx.data(Qt.ItemDataRole.FontRole)
    fm = QFontMetrics(font if isinstance(font, QFont) else view.font())
    style = view.style()
    r = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, view)
    margin = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)
    return r.width() - margin, fm


def _visible_rows(view):
    """Indexes (column 0) of the rows painted in the viewport."""
    out = []
    idx = view.indexAt(view.viewport().rect().topLeft())
    bottom = view.viewport().height()
    while idx.isValid() and view.visualRect(idx).top() < bottom:
        out.append(idx)
        # a tree's next shown row; a table (the flat tab) has no indexBelow: its next row
        idx = view.indexBelow(idx) if hasattr(view, "indexBelow") else \
            idx.sibling(idx.row() + 1, 0)
    return out


def _check_view(view) -> tuple[int, int, list[str]]:
    """(numbers checked, names checked, names elided); asserts the numbers and headers."""
    m = view.model()
    assert isinstance(m, ComparisonTreeModel)
    h = view.header()
    bold = QFont(view.header().font())
    bold.setBold(True)
    fb = QFontMetrics(bold)
    for i, c in enumerate(m.columns):
        need = max(fb.horizontalAdvance(x) for x in c.header.split("\n")) + 8
        assert h.sectionSize(i) >= need, f"header {c.header!r} clipped: {h.sectionSize(i)} px"
    numbers = names = 0
    elided = []
    rows = _visible_rows(view)
    assert rows, "no row painted"
    for idx0 in rows:
        for i, c in enumerate(m.columns):
            idx = idx0.siblingAtColumn(i)
            text = str(idx.data() or "")
            if not text or h.isSectionHidden(i):
                continue
            room, fm = _text_room(view, idx)
            if c.numeric or c.kind == "sig":
                numbers += 1
                assert fm.horizontalAdvance(text) <= room, \
                    f"{c.header!r}: {text!r} needs {fm.horizontalAdvance(text)} px, has {room}"
            elif c.kind == "name":
                names += 1
                if fm.horizontalAdvance(text) > room:
                    elided.append(text)
    return numbers, names, elided


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_displayed_number_is_elided(qtbot, tmp_path, data_dir, pair, size):
    w = _window(qtbot, tmp_path, data_dir, pair, size)
    assert (w.width(), w.height()) == size
    total_numbers = 0
    for view in ("side", "diff", "flat", "bottom-up"):
        for pane in _panes(w, view):
            numbers, names, elided = _check_view(pane)
            assert names > 0
            total_numbers += numbers
            if elided:
                # names are cut only when the columns already fill the viewport
                used = pane.header().length()
                assert used >= pane.viewport().width() - 4, (view, elided[:3], used)
            if size[0] >= 2560 and view == "diff":
                # every name fits but those longer than a wide screen itself (Julia's
                # 250-character method signatures on the opening path)
                assert not [e for e in elided if len(e) < 120], elided[:5]
    assert total_numbers > 50


def test_name_column_fits_the_deep_hot_path(qtbot, tmp_path, data_dir):
    """hs-ad at 1000x700: the opened path down to addGrad shows whole names (it showed
    `…` side by side), and the name column is wider than the old fixed 220/280 px."""
    w = _window(qtbot, tmp_path, data_dir, "hs-ad", (1000, 700))
    for view in ("diff", "side"):
        for pane in _panes(w, view):
            idx = pane.currentIndex().siblingAtColumn(0)
            assert idx.data() == "addGrad"
            room, fm = _text_room(pane, idx)
            assert fm.horizontalAdvance("addGrad") <= room, (view, room)


def test_julia_names_keep_the_function_name():
    """A left-first elision drops qualifiers, then the signature, never the name first."""
    fm = QFontMetrics(QFont())
    text = "Base.Broadcast.materialize!(::Vector{Float64}, ::Base.Broadcast.Broadcasted)"
    assert split_label(text) == ("Base.Broadcast.", "materialize!",
                                 "(::Vector{Float64}, ::Base.Broadcast.Broadcasted)")
    assert split_label("exprcalc::parse::term") == ("exprcalc::parse::", "term", "")
    assert split_label("trainStep.(...)") == ("", "trainStep.", "(...)")
    wide = fm.horizontalAdvance(text)
    for width in (wide, wide * 3 // 4, wide // 2, wide // 4):
        out = elide_label(text, fm, width)
        assert fm.horizontalAdvance(out) <= width
        if width >= fm.horizontalAdvance("…materialize!…"):
            assert "materialize!" in out, (width, out)
    assert elide_label(text, fm, wide) == text


def test_first_look_expansion_stays_within_its_row_budget(data_dir):
    """``depth_mask`` with a budget opens whole levels only while the shown rows fit."""
    import numpy as np

    from profdiff.parsers import load
    from profdiff.viewer.compare import align
    from profdiff.viewer.qt.bulk_ops import depth_mask

    cmp = align([load(str(data_dir / p)) for p in PAIRS["hs-ad"]], mode="tree")
    par, depth = np.asarray(cmp.parent), np.asarray(cmp.depth)
    kids = np.bincount(par[par >= 0], minlength=cmp.n_rows)
    has = kids > 0

    def shown(mask):
        return int((par < 0).sum() + kids[mask].sum())

    full = depth_mask(par, depth, has, 4)
    assert full.tolist() == ((depth < 4) & has).tolist()
    assert shown(full) > 40
    for budget in (1, 10, 40, shown(full)):
        m = depth_mask(par, depth, has, 4, max_rows=budget)
        assert shown(m) <= max(budget, 1)
        assert not (m & ~full).any()
        levels = sorted(set(depth[m].tolist()))
        assert levels == list(range(len(levels)))  # whole levels, from the top
    assert depth_mask(par, depth, has, 4, max_rows=shown(full)).tolist() == full.tolist()
    # the view passes its child lists: the same masks, counted over the top rows only;
    # with a filter's visible rows too (hidden children do not count against the budget)
    csr = cmp.children_offsets_ids
    vis = np.asarray(cmp.name, dtype=str) != str(cmp.name[int(np.argmax(kids))])
    for visible in (None, vis):
        for budget in (1, 10, 40, 200, shown(full)):
            assert depth_mask(par, depth, has, 4, visible, budget, csr).tolist() == \
                depth_mask(par, depth, has, 4, visible, budget).tolist(), (budget, visible)
    assert not (depth_mask(par, depth, has, 4, vis, 10**6, csr) & ~vis).any()


def test_hidden_tree_panes_wait_for_their_tab(qtbot, tmp_path, data_dir):
    """Resizing the window while the diff tab shows leaves the side-by-side panes' row
    layout for when their tab is shown (a hidden QTreeView laid out every shown row on
    each resize)."""
    w = _window(qtbot, tmp_path, data_dir, "hs-ad", (1000, 700))
    w.show_view("diff")
    QApplication.processEvents()
    w.resize(1200, 800)
    QApplication.processEvents()
    pane = w.side.panes[0]
    assert not pane.isVisible() and pane.geometry_stale
    w.show_view("side")
    QApplication.processEvents()
    assert pane.isVisible() and not pane.geometry_stale
    assert pane.currentIndex().data() == "addGrad"  # the selection made while hidden
