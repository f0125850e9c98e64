"""Differential flame graph (icicle: roots on top) of a :class:`~viewer.compare.Comparison`.

Geometry and colours come from :mod:`viewer.flame_layout` (numpy, computed once per
comparison / width basis / colour setting).  A frame is rasterised with numpy, not with
one ``QPainter`` call per rectangle, so its cost depends on the pixels on screen, not on
the tree size:

* per visible depth level, the rows overlapping the x window are one slice found by
  binary search; rows at least ``MIN_PX`` wide are painted, narrower rows whose parent
  is painted are merged into a grey "more below, zoom in" strip, and deeper sub-pixel
  rows are skipped (they lie under that strip);
* a level is one pixel line of colours, broadcast over the row height, into a
  ``uint32`` ARGB buffer that becomes the ``QImage`` drawn in one call;
* removed calls (absent from the current run) are drawn at their baseline width (see
  :func:`viewer.flame_layout.effective_widths`) with a hatch and a dark outline, added
  ones in the "added" colour; text is drawn only on rectangles wider than ``TEXT_PX``.

Widths follow the inclusive width metric in the chosen basis (current run, baseline, or
max of both); colour is the Δ of the colour metric on the same diverging scale as the
diff tree (:mod:`viewer.colors`).

Interaction: hover for a tooltip (name, module, source, each run's values, Δ); click to
select a frame (``rowSelected`` is emitted) and zoom into it; the breadcrumb above zooms
back out (Esc/Backspace: one level up); Ctrl+wheel zooms horizontally around the cursor,
drag pans, the wheel scrolls deep stacks; the search box dims frames that do not match
and reports the share of the total under the matching ones (nested matches count once).
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollBar,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from parsers.model import Unit
from viewer import flame_layout as fl
from viewer.colors import ADDED, REMOVED, DivergingScale
from viewer.compare import Comparison, Status
from viewer.units import format_delta, format_rel, format_value

ROW_H = 18  # pixels per depth level (1 of them is the gap between levels)
MIN_PX = 1.0  # narrower rectangles are not drawn individually
TEXT_PX = 30  # narrower rectangles get no text
BACKGROUND = (255, 255, 255)
MERGED = (188, 188, 196)  # strip standing for sub-pixel children ("zoom in for more")
HATCH = (140, 140, 140)
OUTLINE = (95, 95, 95)
DIM = 0.22  # search: non-matching frames keep this much of their colour


def _pack(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb, dtype=np.uint32).reshape(-1, 3)
    return (0xFF000000 | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]).astype(np.uint32)


def _pack1(rgb: tuple[int, int, int]) -> np.uint32:
    return _pack(np.array([rgb]))[0]


def run_labels(cmp: Comparison) -> list[str]:
    """Short names of the runs: file names, or parent/file when names collide."""
    paths = [Path(str(p.path)) for p in cmp.runs]
    names = [p.name for p in paths]
    if len(set(names)) < len(names):
        names = [f"{p.parent.name}/{p.name}" if p.parent.name else p.name for p in paths]
    return names


class FlameCanvas(QWidget):
    """The painted area.  All state lives in the owning :class:`FlameView`."""

    def __init__(self, view: FlameView) -> None:
        super().__init__(view)
        self._view = view
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 120)
        self._press: QPoint | None = None
        self._press_window: tuple[float, float, int] | None = None
        self._dragged = False
        self._font = QFont(self.font())
        self._font.setPointSizeF(max(7.0, self._font.pointSizeF() * 0.9))
        # what the last frame drew, for tests and hit statistics
        self.last_rects: dict[str, np.ndarray] = {}
        self.last_merged_px = 0

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(900, 500)

    # ----- painting ----------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 (Qt API)
        p = QPainter(self)
        try:
            self.render_frame(p, self.width(), self.height())
        finally:
            p.end()

    def render_frame(self, painter: QPainter, w: int, h: int) -> None:
        """Draw the current view into ``painter`` (``w`` x ``h`` pixels)."""
        v = self._view
        lay = v._layout
        img = np.empty((max(h, 1), max(w, 1)), dtype=np.uint32)
        img[:] = _pack1(BACKGROUND)
        rect_rows, rect_l, rect_r, rect_d = [], [], [], []
        self.last_merged_px = 0
        if lay is None or lay.total <= 0 or w <= 0 or h <= 0:
            self.last_rects = {}
            painter.fillRect(0, 0, w, h, QColor(*BACKGROUND))
            if v._cmp is not None:
                painter.drawText(QRect(0, 0, w, h), Qt.AlignmentFlag.AlignCenter,
                                 "nothing to draw: the width metric is zero everywhere")
            return
        vx0, vx1 = v._window
        k = w / max(vx1 - vx0, 1e-300)
        d_top = v._top_level()
        n_vis = h // ROW_H + 1
        d_end = min(lay.n_levels, d_top + n_vis)
        colors = v._colors_now()
        edges = v._edges_now()
        status = v._status
        bg = _pack1(BACKGROUND)
        merged_c = _pack1(MERGED)
        hatch_c = _pack1(HATCH)
        out_c = _pack1(OUTLINE)
        xx = np.arange(w)
        band_h = ROW_H - 1
        yy = np.arange(band_h)[:, None]
        parent = v._cmp.parent
        for d in range(d_top, d_end):
            if d > d_top and lay.level_max[d - 1] * k < MIN_PX:
                break  # nothing at the level above was drawn: nothing here either
            a, b = lay.level_window(d, vx0, vx1)
            if b <= a:
                continue
            rows = lay.order[a:b]
            px0 = (lay.xs[a:b] - vx0) * k
            px1 = (lay.xe[a:b] - vx0) * k
            pw = px1 - px0
            big = pw >= MIN_PX
            line = np.full(w, bg, dtype=np.uint32)
            # sub-pixel rows under a drawn parent: one merged strip
            tiny = ~big & (pw > 0)
            if d > d_top and tiny.any():
                tr = rows[tiny]
                pwide = lay.width[parent[tr]] * k >= MIN_PX
                if pwide.any():
                    cols = np.clip(((px0[tiny][pwide] + px1[tiny][pwide]) * 0.5).astype(np.int64),
                                   0, w - 1)
                    line[cols] = merged_c
                    self.last_merged_px += len(np.unique(cols))
            y0 = (d - d_top) * ROW_H
            if big.any():
                br = rows[big]
                left = np.clip(np.floor(px0[big] + 0.5), 0, w).astype(np.int64)
                right = np.clip(np.floor(px1[big] + 0.5), 0, w).astype(np.int64)
                right = np.maximum(right, np.minimum(left + 1, w))
                inner = np.where(right - left >= 4, right - 1, right)  # 1px gap between rects
                ln = inner - left
                keep = ln > 0
                br, left, right, inner, ln = br[keep], left[keep], right[keep], inner[keep], ln[keep]
                tot = int(ln.sum())
                edge_line = line.copy()
                if tot:
                    starts = np.cumsum(ln) - ln
                    pix = np.arange(tot) + np.repeat(left - starts, ln)
                    line[pix] = np.repeat(colors[br], ln)
                    edge_line[pix] = np.repeat(edges[br], ln)
                    ends = inner[ln >= 3] - 1
                    line[ends] = edge_line[ends]  # a darker edge so neutral frames show
                band = np.broadcast_to(line, (band_h, w)).copy()
                band[-1] = edge_line
                rem = status[br] == Status.REMOVED
                if rem.any():
                    rmask = np.zeros(w, dtype=bool)
                    rl, ri = left[rem], inner[rem]
                    rln = ri - rl
                    rs = np.cumsum(rln) - rln
                    rmask[np.arange(int(rln.sum())) + np.repeat(rl - rs, rln)] = True
                    pat = ((xx[None, :] + yy + y0) % 6 == 0) & rmask[None, :]
                    band[pat] = hatch_c
                    band[0, rmask] = out_c
                    band[-1, rmask] = out_c
                    band[:, rl] = out_c
                    band[:, np.maximum(ri - 1, rl)] = out_c
                img[y0 : min(y0 + band_h, h)] = band[: max(0, min(band_h, h - y0))]
                rect_rows.append(br)
                rect_l.append(left)
                rect_r.append(inner)
                rect_d.append(np.full(len(br), d, dtype=np.int32))
            else:
                img[y0 : min(y0 + band_h, h)] = line
        qimg = QImage(img.data, w, h, 4 * w, QImage.Format.Format_RGB32)
        painter.drawImage(0, 0, qimg)
        if rect_rows:
            rows = np.concatenate(rect_rows)
            left = np.concatenate(rect_l)
            right = np.concatenate(rect_r)
            depth = np.concatenate(rect_d)
        else:
            rows = left = right = np.zeros(0, np.int64)
            depth = np.zeros(0, np.int32)
        self.last_rects = {"rows": rows, "left": left, "right": right, "depth": depth}
        self._draw_text(painter, rows, left, right, depth, d_top, colors)
        self._draw_selection(painter, rows, left, right, depth, d_top)
        del img  # the QImage borrowed the buffer only for drawImage

    def _draw_text(self, painter, rows, left, right, depth, d_top, colors) -> None:
        wide = np.flatnonzero(right - left >= TEXT_PX)
        if wide.size == 0:
            return
        v = self._view
        painter.setFont(self._font)
        fm = QFontMetrics(self._font)
        names = v._cmp.name
        dark = v._dark_text_now()
        pen_dark, pen_light = QColor(0, 0, 0), QColor(255, 255, 255)
        for i in wide:
            r = int(rows[i])
            x, x2 = int(left[i]), int(right[i])
            text = fm.elidedText(str(names[r]), Qt.TextElideMode.ElideRight, x2 - x - 6)
            if not text or text == "…":
                continue
            painter.setPen(pen_dark if dark[r] else pen_light)
            y = (int(depth[i]) - d_top) * ROW_H
            painter.drawText(QRect(x + 3, y, x2 - x - 6, ROW_H - 1),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)

    def _draw_selection(self, painter, rows, left, right, depth, d_top) -> None:
        sel = self._view._selected
        if sel < 0:
            return
        hit = np.flatnonzero(rows == sel)
        if hit.size == 0:
            return
        i = int(hit[0])
        y = (int(depth[i]) - d_top) * ROW_H
        pen = QPen(QColor(0, 0, 0))
        pen.setWidth(2)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRect(int(left[i]) + 1, y + 1, max(int(right[i] - left[i]) - 2, 1),
                               ROW_H - 3))

    # ----- hit testing -------------------------------------------------------------------
    def row_at(self, pos: QPoint) -> int:
        v = self._view
        lay = v._layout
        if lay is None or self.width() <= 0:
            return -1
        d = v._top_level() + pos.y() // ROW_H
        if pos.y() % ROW_H == ROW_H - 1:
            return -1
        vx0, vx1 = v._window
        x = vx0 + (pos.x() + 0.5) / self.width() * (vx1 - vx0)
        r = lay.row_at(d, x)
        if r >= 0 and lay.width[r] * self.width() / (vx1 - vx0) < MIN_PX:
            return -1
        return r

    # ----- mouse and keys ----------------------------------------------------------------
    def mousePressEvent(self, e) -> None:  # noqa: N802
        if e.button() == Qt.MouseButton.LeftButton:
            self._press = e.position().toPoint()
            self._press_window = (*self._view._window, self._view._scroll)
            self._dragged = False

    def mouseMoveEvent(self, e) -> None:  # noqa: N802
        pos = e.position().toPoint()
        if self._press is not None and e.buttons() & Qt.MouseButton.LeftButton:
            dx = pos.x() - self._press.x()
            dy = pos.y() - self._press.y()
            if abs(dx) + abs(dy) >= 4:
                self._dragged = True
            if self._dragged:
                wx0, wx1, sc = self._press_window
                shift = -dx / max(self.width(), 1) * (wx1 - wx0)
                self._view._set_window(wx0 + shift, wx1 + shift)
                self._view._set_scroll(sc - round(dy / ROW_H))
            return
        r = self.row_at(pos)
        if r != self._view._hover:
            self._view._hover = r
            if r >= 0:
                QToolTip.showText(e.globalPosition().toPoint(), self._view.tooltip_html(r), self)
            else:
                QToolTip.hideText()

    def mouseReleaseEvent(self, e) -> None:  # noqa: N802
        if e.button() != Qt.MouseButton.LeftButton or self._press is None:
            return
        pos = e.position().toPoint()
        self._press = None
        if self._dragged:
            return
        r = self.row_at(pos)
        if r >= 0:
            self._view._click(r)

    def leaveEvent(self, e) -> None:  # noqa: N802
        self._view._hover = -1

    def wheelEvent(self, e) -> None:  # noqa: N802
        ang = e.angleDelta()
        v = self._view
        if e.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = ang.y() / 120.0
            vx0, vx1 = v._window
            fx = e.position().x() / max(self.width(), 1)
            cx = vx0 + fx * (vx1 - vx0)
            span = (vx1 - vx0) / (1.25 ** steps)
            v._set_window(cx - fx * span, cx - fx * span + span)
        elif ang.x():
            vx0, vx1 = v._window
            shift = -ang.x() / 120.0 * 0.1 * (vx1 - vx0)
            v._set_window(vx0 + shift, vx1 + shift)
        else:
            v._set_scroll(v._scroll - round(ang.y() / 120.0 * 3))
        e.accept()

    def keyPressEvent(self, e) -> None:  # noqa: N802
        v = self._view
        if e.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Backspace):
            z = v._zoom
            v.zoom_to(int(v._cmp.parent[z]) if z >= 0 else -1)
        elif e.key() == Qt.Key.Key_Home:
            v.zoom_to(-1)
        else:
            super().keyPressEvent(e)

    def resizeEvent(self, e) -> None:  # noqa: N802
        self._view._update_scrollbar()
        super().resizeEvent(e)


class FlameLegend(QWidget):
    """The diverging colour bar (same scale as the diff tree) and the special swatches."""

    def __init__(self, view: FlameView) -> None:
        super().__init__(view)
        self._view = view
        self.setFixedHeight(40)

    def paintEvent(self, event) -> None:  # noqa: N802
        v = self._view
        p = QPainter(self)
        try:
            p.fillRect(self.rect(), self.palette().window())
            if v._cmp is None:
                return
            fm = p.fontMetrics()
            text_c = self.palette().windowText().color()
            p.setPen(text_c)
            p.drawText(6, 2 + fm.ascent(), v.legend_title())
            if v._color_mode == "module" or v._cmp.n_runs < 2:
                return
            scale = v._scale
            y = 4 + fm.height()
            x = 6
            lo = f"{v._format_change(-scale.clamp)} better"
            hi = f"worse {v._format_change(scale.clamp)}"
            base = y + fm.ascent() - 1
            p.drawText(x, base, lo)
            x += fm.horizontalAdvance(lo) + 6
            bar_w, n = 200, 50
            stops = scale.colors(np.linspace(-scale.clamp, scale.clamp, n))
            for i in range(n):
                p.fillRect(x + i * bar_w // n, y + 1, bar_w // n + 1, 12,
                           QColor(*(int(c) for c in stops[i])))
            p.setPen(QColor(90, 90, 90))
            p.drawRect(x, y + 1, bar_w, 12)
            p.setPen(text_c)
            x += bar_w + 6
            p.drawText(x, base, hi)
            x += fm.horizontalAdvance(hi) + 18
            for label, col, hatch in (("added", ADDED, False),
                                      ("removed (at baseline width)", REMOVED, True),
                                      ("many frames < 1 px", MERGED, False)):
                p.fillRect(x, y + 1, 22, 12, QColor(*col))
                if hatch:
                    p.setPen(QColor(*HATCH))
                    for hx in range(0, 34, 6):
                        p.drawLine(x + max(0, hx - 12), y + 1 + min(12, hx), x + min(hx, 22),
                                   y + 1 + max(0, hx - 22))
                    p.setPen(QColor(*OUTLINE))
                    p.drawRect(x, y + 1, 22, 12)
                p.setPen(text_c)
                p.drawText(x + 26, base, label)
                x += 26 + fm.horizontalAdvance(label) + 14
        finally:
            p.end()


class FlameView(QWidget):
    """Flame graph of one run, or differential flame graph of the current run vs baseline.

    API used by the main window: :meth:`set_comparison`, :meth:`set_width_metric`,
    :meth:`set_width_basis`, :meth:`set_color_mode`, :meth:`set_palette`, signal
    ``rowSelected(int)`` (union-row id, emitted on user clicks only), slot
    :meth:`select_row`, :meth:`zoom_to`, :meth:`search`.
    """

    rowSelected = Signal(int)
    zoomChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._cmp: Comparison | None = None
        self._metric: str | None = None  # colour metric
        self._width_metric: str | None = None
        self._width_metric_explicit = False
        self._basis = "current"
        self._color_mode = "self_pct"
        self._color_mode_explicit = False
        self._palette = "red-green"
        self._scale_override: DivergingScale | None = None
        self._scale = DivergingScale()
        self._sort = "heavy"
        self._layout: fl.FlameLayout | None = None
        self._colors = np.zeros(0, np.uint32)
        self._colors_dim = np.zeros(0, np.uint32)
        self._edges = np.zeros(0, np.uint32)
        self._dark = np.zeros(0, bool)
        self._status = np.zeros(0, np.int8)
        self._match: np.ndarray | None = None
        self._search_text = ""
        self._share = 0.0
        self._selected = -1
        self._hover = -1
        self._zoom = -1
        self._window = (0.0, 1.0)
        self._scroll = 0
        self._building = False
        self._build_ui()

    # ----- UI ----------------------------------------------------------------------------
    def _build_ui(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        self.basis_combo = QComboBox()
        for b, label in (("current", "widths: current run"), ("baseline", "widths: baseline"),
                         ("max", "widths: max of both")):
            self.basis_combo.addItem(label, b)
        self.basis_combo.setToolTip(
            "Which run gives the frame widths. Frames missing from that run are drawn at "
            "their width in the other run (hatched if removed), so nothing disappears.")
        self.basis_combo.currentIndexChanged.connect(
            lambda i: self.set_width_basis(self.basis_combo.itemData(i)))
        self.metric_combo = QComboBox()
        self.metric_combo.setToolTip("Metric whose change colours the frames")
        self.metric_combo.currentIndexChanged.connect(self._metric_combo_changed)
        self.mode_combo = QComboBox()
        for m in fl.COLOR_MODES:
            self.mode_combo.addItem(fl.COLOR_MODE_LABELS[m], m)
        self.mode_combo.currentIndexChanged.connect(
            lambda i: self.set_color_mode(self.mode_combo.itemData(i)))
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("search frames (text or /regex/)")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self.search)
        self.share_label = QLabel("")
        self.share_label.setMinimumWidth(150)
        bar.addWidget(self.basis_combo)
        bar.addWidget(QLabel("colour:"))
        for wdg in (self.metric_combo, self.mode_combo):
            bar.addWidget(wdg)
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(self.share_label)
        outer.addLayout(bar)
        self.breadcrumb = QLabel()
        self.breadcrumb.setTextFormat(Qt.TextFormat.RichText)
        self.breadcrumb.setContentsMargins(6, 0, 6, 0)
        self.breadcrumb.linkActivated.connect(lambda href: self.zoom_to(int(href)))
        self.breadcrumb.setToolTip("Click a frame to zoom out to it (Esc: one level up)")
        outer.addWidget(self.breadcrumb)
        mid = QHBoxLayout()
        mid.setContentsMargins(0, 0, 0, 0)
        mid.setSpacing(0)
        self.canvas = FlameCanvas(self)
        self.vscroll = QScrollBar(Qt.Orientation.Vertical)
        self.vscroll.valueChanged.connect(self._set_scroll)
        mid.addWidget(self.canvas, 1)
        mid.addWidget(self.vscroll)
        outer.addLayout(mid, 1)
        self.legend = FlameLegend(self)
        outer.addWidget(self.legend)
        self._update_breadcrumb()

    # ----- public API --------------------------------------------------------------------
    def set_comparison(self, cmp: Comparison | None, metric: str | None = None) -> None:
        """Show ``cmp``; ``metric`` colours the frames (Δ), widths use its inclusive partner."""
        self._cmp = cmp
        self._selected = -1
        self._hover = -1
        self._zoom = -1
        self._window = (0.0, 1.0)
        self._scroll = 0
        if cmp is None:
            self._layout = None
            self.canvas.update()
            self.legend.update()
            return
        names = list(cmp.values)
        if metric is None or metric not in cmp.values:
            dm = cmp.runs[cmp.baseline].default_metric
            metric = dm if dm in cmp.values else (names[0] if names else None)
        self._metric = metric
        if not (self._width_metric_explicit and self._width_metric in cmp.values):
            self._width_metric_explicit = False
            self._width_metric = fl.default_width_metric(cmp, metric) if names else None
        if not self._color_mode_explicit:
            self._color_mode = "self_pct" if cmp.n_runs > 1 else "module"
        self._status = fl.status_of(cmp)
        self._building = True
        try:
            self.metric_combo.clear()
            for m in cmp.metrics:
                self.metric_combo.addItem(m.title, m.name)
            i = self.metric_combo.findData(metric)
            self.metric_combo.setCurrentIndex(max(i, 0))
            self.mode_combo.setCurrentIndex(max(self.mode_combo.findData(self._color_mode), 0))
            self.basis_combo.setEnabled(cmp.n_runs > 1)
        finally:
            self._building = False
        self._relayout()
        self._recolor()
        if self._search_text:
            self.search(self._search_text)
        self._update_breadcrumb()

    def comparison(self) -> Comparison | None:
        return self._cmp

    def set_width_metric(self, name: str | None) -> None:
        """Metric giving widths (its inclusive values); ``None`` derives it from the colour metric."""
        self._width_metric_explicit = name is not None
        if self._cmp is None:
            self._width_metric = name
            return
        self._width_metric = name if name is not None else fl.default_width_metric(
            self._cmp, self._metric)
        self._relayout()

    def width_metric(self) -> str | None:
        return self._width_metric

    def set_width_basis(self, basis: str) -> None:
        """``"current"`` (default), ``"baseline"`` or ``"max"`` (see flame_layout)."""
        if basis not in fl.WIDTH_BASES:
            raise ValueError(f"width basis must be one of {fl.WIDTH_BASES}")
        self._basis = basis
        self._sync_combo(self.basis_combo, basis)
        self._relayout()

    def set_color_metric(self, name: str) -> None:
        self._metric = name
        if not self._width_metric_explicit and self._cmp is not None:
            self._width_metric = fl.default_width_metric(self._cmp, name)
            self._relayout()
        self._sync_combo(self.metric_combo, name)
        self._recolor()

    def set_color_mode(self, mode: str) -> None:
        """One of ``self_pct``, ``incl_pct``, ``self_abs``, ``incl_abs``, ``module``."""
        if mode not in fl.COLOR_MODES:
            raise ValueError(f"colour mode must be one of {fl.COLOR_MODES}")
        self._color_mode = mode
        self._color_mode_explicit = True
        self._sync_combo(self.mode_combo, mode)
        self._recolor()

    def set_palette(self, palette: str) -> None:
        """``"red-green"`` or ``"colorblind"`` (the diff tree's palettes)."""
        self._palette = palette
        self._recolor()

    def set_scale(self, scale: DivergingScale | None) -> None:
        """Use the diff tree's scale (dead zone, clamp, palette) instead of the derived one."""
        self._scale_override = scale
        if scale is not None:
            self._palette = scale.palette
        self._recolor()

    def set_sort(self, sort: str) -> None:
        """Sibling order: ``"heavy"`` (widest first) or ``"name"``."""
        self._sort = sort
        self._relayout()

    def select_row(self, row: int) -> None:
        """Highlight ``row`` (from the trees) and zoom/scroll so it is visible; no signal."""
        self._selected = int(row)
        if self._cmp is None or row < 0 or self._layout is None:
            self.canvas.update()
            return
        lay = self._layout
        target = row
        while target >= 0 and lay.width[target] <= 0:
            target = int(self._cmp.parent[target])
        if target >= 0:
            w_px = lay.width[target] / max(self._window[1] - self._window[0], 1e-300) \
                * max(self.canvas.width(), 1)
            inside = (fl.is_descendant(self._cmp.parent, target, self._zoom)
                      and lay.x0[target] >= self._window[0] - 1e-12
                      and lay.x0[target] + lay.width[target] <= self._window[1] + 1e-12)
            if not inside or w_px < 8:
                par = int(self._cmp.parent[target])
                # the parent's view when the row is readable there, else the row itself
                if par >= 0 and lay.width[target] / lay.width[par] * self.canvas.width() >= 40:
                    self.zoom_to(par)
                else:
                    self.zoom_to(target)
            d = int(lay.depth[target])
            top = self._top_level()
            n_vis = max(self.canvas.height() // ROW_H, 1)
            if d < top or d >= top + n_vis:
                self._set_scroll(d - self._zoom_depth() - n_vis // 3)
        self.canvas.update()

    def selected_row(self) -> int:
        return self._selected

    def zoom_to(self, row: int) -> None:
        """Make ``row`` span the full width (``-1``: everything); the breadcrumb lists its path."""
        row = int(row)
        lay = self._layout
        if lay is not None and row >= 0:
            while row >= 0 and lay.width[row] <= 0:
                row = int(self._cmp.parent[row])
        self._zoom = row
        if lay is not None and row >= 0:
            self._window = (float(lay.x0[row]), float(lay.x0[row] + lay.width[row]))
        else:
            self._window = (0.0, 1.0)
        self._scroll = 0
        self._update_scrollbar()
        self._update_breadcrumb()
        self.zoomChanged.emit(row)
        self.canvas.update()

    def zoom_row(self) -> int:
        return self._zoom

    def breadcrumb_rows(self) -> list[int]:
        """The zoomed row's ancestors from the root down, then the row itself."""
        if self._cmp is None or self._zoom < 0:
            return []
        return [*fl.ancestors(self._cmp.parent, self._zoom), self._zoom]

    def search(self, text: str) -> float:
        """Highlight frames matching ``text``; return their share of the total (0..1).

        Nested matches (recursion) are counted once, at the outermost match.
        """
        text = text or ""
        self._search_text = text
        if self.search_edit.text() != text:
            self.search_edit.blockSignals(True)
            self.search_edit.setText(text)
            self.search_edit.blockSignals(False)
        if not text or self._cmp is None or self._layout is None:
            self._match = None
            self._share = 0.0
            self.share_label.setText("")
            self.canvas.update()
            return 0.0
        self._match = fl.match_rows(self._cmp, text)
        self._share = fl.search_share(self._layout, self._cmp.parent, self._match)
        n = int(self._match.sum())
        self.share_label.setText(f"{n:,} frames, {self._share * 100:.1f} % of total"
                                 if n else "no match")
        self.canvas.update()
        return self._share

    def search_share(self) -> float:
        return self._share

    def render_image(self, size: tuple[int, int] | None = None) -> QImage:
        """The canvas alone, painted offscreen into a QImage (benchmarks, tests)."""
        w, h = size or (self.canvas.width(), self.canvas.height())
        img = QImage(w, h, QImage.Format.Format_RGB32)
        p = QPainter(img)
        try:
            self.canvas.render_frame(p, w, h)
        finally:
            p.end()
        return img

    # ----- descriptions ------------------------------------------------------------------
    def width_metric_label(self) -> str:
        if self._cmp is None or self._width_metric is None:
            return "-"
        m = self._cmp.metric_by_name[self._width_metric]
        basis = {"current": "current run", "baseline": "baseline", "max": "max of both"}
        s = m.title
        if self._cmp.n_runs > 1:
            s += f", {basis[self._basis]}"
        return s

    def color_description(self) -> str:
        """``Δ self ticks, pp of each run's total``: what the colour means."""
        cmp = self._cmp
        if cmp is None or self._metric is None:
            return ""
        if self._color_mode == "module" or cmp.n_runs < 2:
            return "module"
        m = cmp.metric_by_name[self._metric]
        if self._color_mode.startswith("self"):
            partner = fl.self_partner(cmp, self._metric)
            title = cmp.metric_by_name[partner].title if partner else f"self {m.title}"
        else:
            partner = fl.inclusive_partner(cmp, self._metric)
            title = cmp.metric_by_name[partner].title if partner else f"inclusive {m.title}"
        unit = "pp of each run's total" if self._is_pct_mode() else "absolute"
        return f"Δ {title} ({unit})"

    def legend_title(self) -> str:
        cmp = self._cmp
        if cmp is None:
            return ""
        runs = run_labels(cmp)
        if cmp.n_runs > 1:
            head = f"{runs[cmp.current]} vs baseline {runs[cmp.baseline]}"
        else:
            head = runs[0]
        return (f"{head}  ·  width = {self.width_metric_label()}  ·  "
                f"colour = {self.color_description()}")

    def _is_pct_mode(self) -> bool:
        m = self._cmp.metric_by_name[self._metric] if self._cmp and self._metric else None
        return self._color_mode.endswith("pct") or (m is not None and m.unit is Unit.PERCENT)

    def _format_change(self, v: float) -> str:
        if self._is_pct_mode():
            return f"{v:+.1f} pp".replace("-", "−")
        m = self._cmp.metric_by_name[self._metric]
        return format_delta(v, m.unit)

    def tooltip_html(self, row: int) -> str:
        cmp = self._cmp
        if cmp is None or row < 0:
            return ""
        e = html.escape
        lines = [f"<b>{e(str(cmp.name[row]))}</b>"]
        mod, src = str(cmp.module[row] or ""), str(cmp.src[row] or "")
        if mod or src:
            lines.append(e(" · ".join(x for x in (mod, src) if x)))
        st = Status(int(self._status[row])) if cmp.n_runs > 1 else None
        if st in (Status.ADDED, Status.REMOVED):
            lines.append(f"<i>{'new in the current run' if st is Status.ADDED else 'not in the current run (drawn at its baseline width)'}</i>")
        labels = run_labels(cmp)
        shown = []
        for name in (self._width_metric, self._metric,
                     fl.self_partner(cmp, self._metric) if self._metric else None):
            if name and name not in shown and name in cmp.values:
                shown.append(name)
        head = "".join(f"<th align='right'>&nbsp;{e(cmp.metric_by_name[n].title)}</th>"
                       for n in shown)
        rows_html = [f"<tr><th></th>{head}</tr>"]
        for r in range(cmp.n_runs):
            mark = " (base)" if r == cmp.baseline and cmp.n_runs > 1 else ""
            cells = "".join(
                f"<td align='right'>&nbsp;{e(format_value(float(cmp.values[n][row, r]), cmp.metric_by_name[n].unit))}</td>"
                for n in shown)
            bold = ("<b>", "</b>") if r == cmp.current and cmp.n_runs > 1 else ("", "")
            rows_html.append(f"<tr><td>{bold[0]}{e(labels[r] + mark)}{bold[1]}</td>{cells}</tr>")
        if cmp.n_runs > 1:
            cells = "".join(
                f"<td align='right'>&nbsp;{e(format_delta(float(cmp.delta(n)[row]), cmp.metric_by_name[n].unit))}"
                f" ({e(format_rel(float(cmp.rel(n)[row])))})</td>" for n in shown)
            rows_html.append(f"<tr><td>Δ</td>{cells}</tr>")
        lines.append("<table cellspacing='0'>" + "".join(rows_html) + "</table>")
        if self._layout is not None:
            share = self._layout.width[row] * 100
            zoom = ""
            if self._zoom >= 0 and self._layout.width[self._zoom] > 0:
                zoom = f", {self._layout.width[row] / self._layout.width[self._zoom] * 100:.1f} % of zoomed frame"
            lines.append(f"width: {share:.2f} % of total{zoom}")
        if cmp.n_runs > 1 and self._color_mode != "module" and self._metric:
            ch = fl.color_changes(cmp, self._metric, self._color_mode)[row]
            lines.append(f"colour: {e(self._format_change(float(ch)))}")
        return "<br>".join(lines)

    # ----- internals ---------------------------------------------------------------------
    @staticmethod
    def _sync_combo(combo: QComboBox, data) -> None:
        i = combo.findData(data)
        if i >= 0 and combo.currentIndex() != i:
            combo.blockSignals(True)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)

    def _metric_combo_changed(self, i: int) -> None:
        if self._building or i < 0:
            return
        name = self.metric_combo.itemData(i)
        if name:
            self.set_color_metric(name)

    def _relayout(self) -> None:
        cmp = self._cmp
        if cmp is None or self._width_metric is None:
            self._layout = None
            self.canvas.update()
            return
        basis = self._basis if cmp.n_runs > 1 else "current"
        w = fl.effective_widths(cmp, self._width_metric, basis)
        self._layout = fl.compute_layout(cmp.parent, w, cmp.depth, sort=self._sort,
                                         names=cmp.name)
        zoom = self._zoom
        self.zoom_to(zoom if zoom < 0 or self._layout.width[zoom] > 0 else -1)
        if self._match is not None:
            self._share = fl.search_share(self._layout, cmp.parent, self._match)
            self.search(self._search_text)
        self.legend.update()

    def _recolor(self) -> None:
        cmp = self._cmp
        if cmp is None or self._metric is None:
            return
        if self._scale_override is not None:
            sc = self._scale_override
            self._scale = DivergingScale(sc.dead_zone, sc.clamp, self._palette)
        else:
            self._scale = fl.scale_for(cmp, self._metric, self._color_mode, self._palette)
        mode = self._color_mode if cmp.n_runs > 1 else "module"
        rgb = fl.row_colors(cmp, self._metric, mode, self._scale)
        self._colors = _pack(rgb)
        faded = np.asarray(rgb, float) * DIM + np.array(BACKGROUND, float) * (1 - DIM)
        self._colors_dim = _pack(faded.round().astype(np.uint8))
        self._edges = _pack((np.asarray(rgb, float) * 0.72).round().astype(np.uint8))
        # same rule as colors.text_color_for, vectorised
        lum = 0.2126 * rgb[:, 0] + 0.7152 * rgb[:, 1] + 0.0722 * rgb[:, 2]
        self._dark = lum > 140
        self.legend.update()
        self.canvas.update()

    def _colors_now(self) -> np.ndarray:
        if self._match is None:
            return self._colors
        return np.where(self._match, self._colors, self._colors_dim)

    def _edges_now(self) -> np.ndarray:
        if self._match is None:
            return self._edges
        return np.where(self._match, self._edges, self._colors_dim)

    def _dark_text_now(self) -> np.ndarray:
        if self._match is None:
            return self._dark
        return self._dark | ~self._match

    def _zoom_depth(self) -> int:
        if self._zoom < 0 or self._layout is None:
            return 0
        return int(self._layout.depth[self._zoom])

    def _top_level(self) -> int:
        return self._zoom_depth() + self._scroll

    def _max_scroll(self) -> int:
        if self._layout is None:
            return 0
        n_vis = max(self.canvas.height() // ROW_H, 1)
        return max(0, self._layout.n_levels - self._zoom_depth() - n_vis + 1)

    def _set_scroll(self, s: int) -> None:
        s = int(min(max(s, 0), self._max_scroll()))
        if s != self._scroll:
            self._scroll = s
            self.canvas.update()
        if self.vscroll.value() != s:
            self.vscroll.blockSignals(True)
            self.vscroll.setValue(s)
            self.vscroll.blockSignals(False)

    def _update_scrollbar(self) -> None:
        m = self._max_scroll()
        self.vscroll.blockSignals(True)
        self.vscroll.setRange(0, m)
        self.vscroll.setPageStep(max(self.canvas.height() // ROW_H, 1))
        self.vscroll.setValue(min(self._scroll, m))
        self.vscroll.blockSignals(False)
        self.vscroll.setVisible(m > 0)

    def _set_window(self, a: float, b: float) -> None:
        """Move the x window, kept inside the zoomed frame; never narrower than 1e-12."""
        lay = self._layout
        if lay is None:
            return
        lo, hi = (0.0, 1.0)
        if self._zoom >= 0:
            lo, hi = float(lay.x0[self._zoom]), float(lay.x0[self._zoom] + lay.width[self._zoom])
        span = min(max(b - a, 1e-12), hi - lo)
        a = min(max(a, lo), hi - span)
        self._window = (a, a + span)
        self.canvas.update()

    def _click(self, row: int) -> None:
        self._selected = row
        self.rowSelected.emit(row)
        if row == self._zoom:
            self.canvas.update()
        else:
            self.zoom_to(row)

    def _update_breadcrumb(self) -> None:
        cmp = self._cmp
        parts = ["Zoom: <a href='-1'>all</a>" if self._zoom >= 0 else
                 "Zoom: <b>all</b> <span style='color:gray'>(click a frame to zoom in; "
                 "Ctrl+wheel zooms, drag pans)</span>"]
        rows = self.breadcrumb_rows()
        if cmp is not None:
            if len(rows) > 8:
                shown = rows[:2] + [None] + rows[-5:]
            else:
                shown = rows
            for r in shown:
                if r is None:
                    parts.append("…")
                elif r == self._zoom:
                    parts.append(f"<b>{html.escape(str(cmp.name[r]))}</b>")
                else:
                    parts.append(f"<a href='{r}'>{html.escape(str(cmp.name[r]))}</a>")
        self.breadcrumb.setText(" › ".join(parts))


def render_flame_png(cmp: Comparison, path: str | Path, size: tuple[int, int] = (1400, 800),
                     *, metric: str | None = None, basis: str = "current",
                     color_mode: str | None = None, palette: str = "red-green",
                     search: str | None = None, zoom: int | None = None) -> Path:
    """Render a :class:`FlameView` of ``cmp`` offscreen to a PNG (for ``--screenshot``)."""
    app = QApplication.instance() or QApplication([])
    view = FlameView()
    view.resize(*size)
    view.set_palette(palette)
    view.set_width_basis(basis)
    if color_mode:
        view.set_color_mode(color_mode)
    view.set_comparison(cmp, metric)
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.show()
    app.processEvents()
    if zoom is not None:
        view.zoom_to(zoom)
    if search:
        view.search(search)
    app.processEvents()
    out = Path(path)
    view.grab().save(str(out))
    view.close()
    view.deleteLater()
    return out


__all__ = ["FlameCanvas", "FlameLegend", "FlameView", "render_flame_png", "run_labels"]
