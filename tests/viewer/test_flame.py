"""FlameView (Qt, offscreen): widths, zoom + breadcrumb, search share, removed frames,
selection signals, toggles, and the real GHC pair hs-ad v1 vs v2."""

from __future__ import annotations

import numpy as np
import pytest
from tool_requirements import require_module

from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer import flame_layout as fl
from profdiff.viewer.compare import Status, align

require_module("PySide6", "pip install PySide6-Essentials")
from PySide6.QtCore import QPoint, Qt  # noqa: E402

from profdiff.viewer.qt.flame_view import HATCH, OUTLINE, ROW_H, FlameView, render_flame_png  # noqa: E402

METRICS = [
    Metric("own", Unit.TICKS, Kind.SELF, "self ticks"),
    Metric("total", Unit.TICKS, Kind.INCLUSIVE, "total ticks", self_of="own"),
]
W, H = 1000, 400


def build(stacks, path="t"):
    b = TreeBuilder(["own"])
    for frames, v in stacks:
        b.add_stack([b.frame(n, "M") for n in frames], own=v)
    return b.build(path=path, format="test", metrics=METRICS, inclusive={"total": "own"},
                   default_metric="own")


BASE = [(["main", "parse", "lex"], 300), (["main", "parse"], 100),
        (["main", "eval", "step", "lookup"], 400), (["main", "eval", "step"], 200),
        (["main", "eval", "gc"], 50), (["main", "print"], 80),
        (["main", "eval", "step", "oldhelper"], 120)]
NEW = [(["main", "parse", "lex"], 250), (["main", "parse"], 100),
       (["main", "eval", "step", "lookup"], 700), (["main", "eval", "step"], 200),
       (["main", "eval", "gc"], 90), (["main", "print"], 80),
       (["main", "eval", "step", "newhelper"], 60)]


def rows_by_name(c):
    return {str(c.name[i]): i for i in range(c.n_rows)}


@pytest.fixture
def cmp():
    return align([build(BASE, "v1/run.prof"), build(NEW, "v2/run.prof")])


@pytest.fixture
def view(qtbot, cmp):
    v = FlameView()
    qtbot.addWidget(v)
    v.resize(W, H + 120)
    v.set_comparison(cmp)
    v.canvas.resize(W, H)
    return v


def drawn(view):
    view.render_image((W, H))
    lr = view.canvas.last_rects
    return {int(r): (int(a), int(b), int(d)) for r, a, b, d in
            zip(lr["rows"], lr["left"], lr["right"], lr["depth"], strict=True)}


def test_rect_widths_are_inclusive_shares(view, cmp):
    assert view.width_metric() == "total"
    rects = drawn(view)
    r = rows_by_name(cmp)
    removed_below = {"main": 120, "eval": 120, "step": 120}  # oldhelper's ghost
    total = cmp.value("total", 1)[r["main"]] + 120
    for name, row in r.items():
        if cmp.status[row] == Status.REMOVED:
            continue
        share = (cmp.value("total", 1)[row] + removed_below.get(name, 0)) / total
        a, b, _ = rects[row]
        # the drawn rectangle leaves a 1px gap on its right
        assert abs((b - a + 1) - share * W) <= 1.5, name
    # left heavy: eval (1050 + ghost) left of parse (350) left of print (80)
    assert rects[r["eval"]][0] == 0 < rects[r["parse"]][0] < rects[r["print"]][0]
    # text is only drawn in wide rectangles, and every drawn row is at its depth's band
    assert all(d == cmp.depth[row] for row, (_, _, d) in rects.items())


def test_zoom_to_spans_full_width_and_breadcrumb_lists_ancestors(view, cmp):
    r = rows_by_name(cmp)
    view.zoom_to(r["step"])
    assert view.breadcrumb_rows() == [r["main"], r["eval"], r["step"]]
    text = view.breadcrumb.text()
    assert "main" in text and "eval" in text and "<b>step</b>" in text
    rects = drawn(view)
    a, b, d = rects[r["step"]]
    assert a == 0 and b >= W - 1 and d == cmp.depth[r["step"]]
    assert r["main"] not in rects and r["parse"] not in rects  # outside the zoomed frame
    # children of step are laid out across the full width in proportion
    la, lb, _ = rects[r["lookup"]]
    step_w = cmp.value("total", 1)[r["step"]] + 120
    assert abs((lb - la + 1) - 700 / step_w * W) <= 1.5
    # zoom out through the breadcrumb link and with Escape
    view.breadcrumb.linkActivated.emit(str(r["eval"]))
    assert view.zoom_row() == r["eval"]
    view.canvas.keyPressEvent(_key_event(Qt.Key.Key_Escape))
    assert view.zoom_row() == r["main"]
    view.zoom_to(-1)
    assert view.breadcrumb_rows() == []
    assert drawn(view)[r["main"]][:2] == (0, W - 1)


def _key_event(key):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    return QKeyEvent(QEvent.Type.KeyPress, key, Qt.KeyboardModifier.NoModifier)


def test_search_share_is_outermost_matches_over_total(view, cmp):
    r = rows_by_name(cmp)
    share = view.search("step")
    lay = view._layout
    assert share == pytest.approx(lay.values[r["step"]] / lay.total)
    # "a" matches main (everything): nested matches count once
    assert view.search("a") == pytest.approx(1.0)
    # "e": eval (with the removed oldhelper's ghost) and parse; lex/step/gc inside count once
    r_e = lay.values[r["eval"]] + lay.values[r["parse"]]
    assert view.search("e") == pytest.approx(r_e / lay.total) == pytest.approx(1520 / 1600)
    # two disjoint matches add up
    share = view.search("/^M\\.(lex|gc)$/")
    assert share == pytest.approx((250 + 90) / lay.total)
    assert "2 frames" in view.share_label.text()
    # non-matching frames are dimmed, matching keep their colour
    img_rows = drawn(view)
    assert r["lex"] in img_rows
    assert view.search("") == 0.0 and view.share_label.text() == ""


def test_removed_frames_are_visible_hatched_and_outlined(view, cmp):
    r = rows_by_name(cmp)
    old = r["oldhelper"]
    assert cmp.status[old] == Status.REMOVED
    rects = drawn(view)
    a, b, d = rects[old]
    assert b - a + 1 == pytest.approx(120 / 1600 * W, abs=1.5)  # baseline width
    img = view.render_image((W, H))
    y = int(d) * ROW_H + ROW_H // 2
    line = [img.pixelColor(x, y).getRgb()[:3] for x in range(a, b)]
    assert HATCH in line
    assert img.pixelColor(a, y).getRgb()[:3] == OUTLINE
    # the added frame is in the "added" colour
    from profdiff.viewer.colors import ADDED

    na, nb, nd = rects[r["newhelper"]]
    assert img.pixelColor(na + 2, nd * ROW_H + 3).getRgb()[:3] == ADDED
    # with baseline widths the removed frame keeps the same width, the added one a ghost's
    view.set_width_basis("baseline")
    assert view._layout.values[old] == 120
    assert view._layout.values[r["newhelper"]] == 60
    view.set_width_basis("max")
    assert view._layout.values[r["lookup"]] == 700


def test_click_selects_emits_and_zooms_select_row_does_not_emit(qtbot, view, cmp):
    r = rows_by_name(cmp)
    view.show()
    qtbot.waitExposed(view)
    rects = drawn(view)
    a, b, d = rects[r["lookup"]]
    pos = QPoint((a + b) // 2, int(d) * ROW_H + ROW_H // 2)
    with qtbot.waitSignal(view.rowSelected, timeout=1000) as sig:
        qtbot.mouseClick(view.canvas, Qt.MouseButton.LeftButton, pos=pos)
    assert sig.args == [r["lookup"]]
    assert view.zoom_row() == r["lookup"] and view.selected_row() == r["lookup"]
    # from the trees: highlight, make visible, no echo
    with qtbot.assertNotEmitted(view.rowSelected):
        view.select_row(r["lex"])
    assert view.selected_row() == r["lex"]
    rects = drawn(view)
    assert r["lex"] in rects and rects[r["lex"]][1] - rects[r["lex"]][0] >= 8
    assert "lex" in view.tooltip_html(r["lex"]) and "Δ" in view.tooltip_html(r["lex"])


def test_select_row_zooms_to_a_tiny_frame(qtbot):
    # one heavy leaf and a frame of 1/100000 of the total: sub-pixel until zoomed
    stacks = [(["main", "big"], 100000), (["main", "small", "leaf"], 1)]
    c = align([build(stacks), build(stacks)])
    v = FlameView()
    qtbot.addWidget(v)
    v.resize(W, H + 120)
    v.set_comparison(c)
    v.canvas.resize(W, H)
    r = rows_by_name(c)
    assert r["leaf"] not in drawn(v)
    v.select_row(r["leaf"])
    rects = drawn(v)
    assert r["leaf"] in rects and rects[r["leaf"]][1] - rects[r["leaf"]][0] >= 8


def test_subpixel_children_are_merged_not_drawn(qtbot):
    stacks = [(["main", f"f{i}"], 1) for i in range(5000)] + [(["main", "big"], 5000)]
    c = align([build(stacks), build(stacks)])
    v = FlameView()
    qtbot.addWidget(v)
    v.set_comparison(c)
    v.canvas.resize(W, H)
    rows = drawn(v)
    assert len(rows) == 2  # main and big; 5000 sub-pixel frames merged into a strip
    assert 0 < v.canvas.last_merged_px <= W


def test_toggles_palette_and_color_modes(view, cmp):
    r = rows_by_name(cmp)
    lookup = r["lookup"]
    red = view._colors[lookup]
    view.set_palette("colorblind")
    assert view._colors[lookup] != red
    assert view._scale.palette == "colorblind"
    for mode in fl.COLOR_MODES:
        view.set_color_mode(mode)
        drawn(view)
        assert view.color_description()
    with pytest.raises(ValueError):
        view.set_width_basis("both")
    view.set_width_metric("own")  # a self metric: its inclusive partner gives widths
    assert view._layout.total == pytest.approx(1480 + 120)
    view.set_width_metric(None)
    assert view.width_metric() == "total"


def test_single_run_flame_graph(qtbot):
    c = align([build(BASE)])
    v = FlameView()
    qtbot.addWidget(v)
    v.set_comparison(c)
    v.canvas.resize(W, H)
    assert v._color_mode == "module" and len(drawn(v)) == c.n_rows


def test_ghc_pair_hs_ad(qtbot, data_dir, tmp_path):
    """The real pair: v2 adds addGrad (0 % -> 24.7 % inherited time); sigmoidD was removed."""
    from profdiff import parsers

    a = parsers.load(data_dir / "flame" / "ad-v1.prof")
    b = parsers.load(data_dir / "flame" / "ad-v2.prof")
    c = align([a, b])
    v = FlameView()
    qtbot.addWidget(v)
    v.set_comparison(c)
    assert v.width_metric() == "inherited_time_pct"
    v.canvas.resize(1400, 700)
    rects = drawn_sized(v, 1400, 700)
    lay = v._layout
    grad = [i for i in range(c.n_rows) if c.name[i] == "addGrad"]
    assert len(grad) == 1
    g = grad[0]
    assert c.values["inherited_time_pct"][g].tolist() == [0.0, 24.7]
    assert lay.width[g] == pytest.approx(24.7 / lay.total)
    assert abs(rects[g][1] - rects[g][0] + 1 - 24.7 / lay.total * 1400) <= 1.5
    # MAIN is 100 % in both runs; the removed sigmoidD (0.1 % in v1) is drawn at baseline width
    sig = [i for i in range(c.n_rows) if c.name[i] == "sigmoidD" and lay.values[i] > 0]
    assert sig and all(c.status[i] == Status.REMOVED for i in sig)
    assert lay.values[sig[0]] == pytest.approx(0.1)
    share = v.search("addDelta")
    assert 0 < share < 1
    png = render_flame_png(c, tmp_path / "f.png", (700, 400))
    from PySide6.QtGui import QImage

    assert QImage(str(png)).size().width() == 700


def drawn_sized(view, w, h):
    view.render_image((w, h))
    lr = view.canvas.last_rects
    return {int(r): (int(a), int(b), int(d)) for r, a, b, d in
            zip(lr["rows"], lr["left"], lr["right"], lr["depth"], strict=True)}


def test_layout_arrays_consistent_with_widget(view):
    lay = view._layout
    assert np.all(lay.width >= 0) and lay.width[view.comparison().parent < 0].sum() == \
        pytest.approx(1.0)
