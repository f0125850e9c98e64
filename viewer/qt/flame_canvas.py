"""The painted parts of the flame view: the canvas (rectangles, text, mouse and wheel) and
the colour legend.  They draw what their :class:`~viewer.qt.flame_view.FlameView` says
through its public interface (``flame_layout``, ``window_range``, ``colors_now()``,
``set_window()``, ``click()`` ...): state and layout stay in the view.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QKeySequence,
    QPainter,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from profdiff.viewer.colors import ADDED, REMOVED
from profdiff.viewer.compare import Status

if TYPE_CHECKING:
    from .flame_view import FlameView

ROW_H = 18  # pixels per depth level (1 of them is the gap between levels)
MIN_PX = 1.0  # narrower rectangles are not drawn individually
TEXT_PX = 30  # narrower rectangles get no text
BACKGROUND = (255, 255, 255)
MERGED = (188, 188, 196)  # strip standing for sub-pixel children ("zoom in for more")
HATCH = (140, 140, 140)
OUTLINE = (95, 95, 95)
DIM = 0.22  # search: non-matching frames keep this much of their colour


ELLIPSIS = "…"


@lru_cache(maxsize=1 << 16)
def qualified_parts(name: str) -> tuple[str, ...]:
    """``name`` split at its top-level ``::`` (not inside ``<>``, ``()`` or ``[]``):
    ``a::b<c::d>::f(x::y)`` -> ``["a", "b<c::d>", "f(x::y)"]``."""
    parts, depth, start, i = [], 0, 0, 0
    n = len(name)
    while i < n:
        ch = name[i]
        if ch in "<([":
            depth += 1
        elif ch in ">)]" and depth > 0:
            depth -= 1
        elif ch == ":" and depth == 0 and name.startswith("::", i) and i > start:
            parts.append(name[start:i])
            i += 2
            start = i
            continue
        i += 1
    parts.append(name[start:])
    return tuple(p for p in parts if p)  # cached per name: frames repaint on every pan


@lru_cache(maxsize=1 << 16)
def _without_args(part: str) -> str:
    """``f(int, char)`` -> ``f``: the function name of a demangled component."""
    depth = 0
    for i, ch in enumerate(part):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            return part[:i]
    return part


def frame_label(name: str, fm: QFontMetrics, width: int) -> str:
    """The text of a frame ``width`` pixels wide: the whole name if it fits, else elided
    on the left, namespace first, as speedscope does (``…::eval_expr``): the function
    name is what tells frames apart.  Then its argument list is shortened (``f(…)``, then
    ``f``); a function name that is still too long is cut on the right, without the
    ``…::`` so the room goes to the name (``eval_e…``).  The tooltip always shows the
    whole name.  A plain name (no namespace, no arguments) costs one ``elidedText`` as
    before: labels are laid out on every repaint."""
    if width <= 0:
        return ""
    parts = qualified_parts(name) or (name,)
    last = parts[-1]
    bare = _without_args(last)
    if len(parts) == 1 and bare == last:
        return fm.elidedText(name, Qt.TextElideMode.ElideRight, width)
    if fm.horizontalAdvance(name) <= width:
        return name
    for k in range(1, len(parts)):
        cand = ELLIPSIS + "::" + "::".join(parts[k:])
        if fm.horizontalAdvance(cand) <= width:
            return cand
    prefix = ELLIPSIS + "::" if len(parts) > 1 else ""
    for cand in ((prefix + bare + "(" + ELLIPSIS + ")") if bare != last else None,
                 prefix + bare):
        if cand and fm.horizontalAdvance(cand) <= width:
            return cand
    return fm.elidedText(bare, Qt.TextElideMode.ElideRight, width)  # all room to the name


def pack_rgb(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb, dtype=np.uint32).reshape(-1, 3)
    return (0xFF000000 | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]).astype(np.uint32)


def pack_rgb1(rgb: tuple[int, int, int]) -> np.uint32:
    return pack_rgb(np.array([rgb]))[0]


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
        self.last_labels: dict[int, str] = {}  # row -> the text drawn on its frame
        self.last_merged_px = 0
        self._key_actions()

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
        lay = v.flame_layout
        img = np.empty((max(h, 1), max(w, 1)), dtype=np.uint32)
        img[:] = pack_rgb1(BACKGROUND)
        rect_rows, rect_l, rect_r, rect_d = [], [], [], []
        self.last_merged_px = 0
        if lay is None or lay.total <= 0 or w <= 0 or h <= 0:
            self.last_rects = {}
            painter.fillRect(0, 0, w, h, QColor(*BACKGROUND))
            if v.comparison() is not None:
                painter.drawText(QRect(0, 0, w, h), Qt.AlignmentFlag.AlignCenter,
                                 "nothing to draw: the width metric is zero everywhere")
            return
        vx0, vx1 = v.window_range
        k = w / max(vx1 - vx0, 1e-300)
        d_top = v.top_level()
        n_vis = h // ROW_H + 1
        d_end = min(lay.n_levels, d_top + n_vis)
        colors = v.colors_now()
        edges = v.edges_now()
        status = v.statuses
        bg = pack_rgb1(BACKGROUND)
        merged_c = pack_rgb1(MERGED)
        xx = np.arange(w)
        band_h = ROW_H - 1
        yy = np.arange(band_h)[:, None]
        parent = v.comparison().parent
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
                    _hatch_removed(band, left[rem], inner[rem], xx, yy, y0)
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
        self.last_labels = {}
        wide = np.flatnonzero(right - left >= TEXT_PX)
        if wide.size == 0:
            return
        v = self._view
        painter.setFont(self._font)
        fm = QFontMetrics(self._font)
        names = v.comparison().name
        dark = v.dark_text_now()
        pen_dark, pen_light = QColor(0, 0, 0), QColor(255, 255, 255)
        for i in wide:
            r = int(rows[i])
            x, x2 = int(left[i]), int(right[i])
            text = frame_label(str(names[r]), fm, x2 - x - 6)
            if not text or text == ELLIPSIS:
                continue
            self.last_labels[r] = text
            painter.setPen(pen_dark if dark[r] else pen_light)
            y = (int(depth[i]) - d_top) * ROW_H
            painter.drawText(QRect(x + 3, y, x2 - x - 6, ROW_H - 1),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)

    def _draw_selection(self, painter, rows, left, right, depth, d_top) -> None:
        sel = self._view.selected_row()
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
        lay = v.flame_layout
        if lay is None or self.width() <= 0:
            return -1
        d = v.top_level() + pos.y() // ROW_H
        if pos.y() % ROW_H == ROW_H - 1:
            return -1
        vx0, vx1 = v.window_range
        x = vx0 + (pos.x() + 0.5) / self.width() * (vx1 - vx0)
        r = lay.row_at(d, x)
        if r >= 0 and lay.width[r] * self.width() / (vx1 - vx0) < MIN_PX:
            return -1
        return r

    # ----- mouse and keys ----------------------------------------------------------------
    def mousePressEvent(self, e) -> None:  # noqa: N802
        if e.button() == Qt.MouseButton.LeftButton:
            self._press = e.position().toPoint()
            self._press_window = (*self._view.window_range, self._view.scroll_offset)
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
                self._view.set_window(wx0 + shift, wx1 + shift)
                self._view.set_scroll(sc - round(dy / ROW_H))
            return
        r = self.row_at(pos)
        if r != self._view.hover_row:
            self._view.hover_row = r
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
            self._view.click(r)

    def leaveEvent(self, e) -> None:  # noqa: N802
        self._view.hover_row = -1

    def wheelEvent(self, e) -> None:  # noqa: N802
        ang = e.angleDelta()
        v = self._view
        if e.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = ang.y() / 120.0
            vx0, vx1 = v.window_range
            fx = e.position().x() / max(self.width(), 1)
            cx = vx0 + fx * (vx1 - vx0)
            span = (vx1 - vx0) / (1.25 ** steps)
            v.set_window(cx - fx * span, cx - fx * span + span)
        elif ang.x():
            vx0, vx1 = v.window_range
            shift = -ang.x() / 120.0 * 0.1 * (vx1 - vx0)
            v.set_window(vx0 + shift, vx1 + shift)
        else:
            v.set_scroll(v.scroll_offset - round(ang.y() / 120.0 * 3))
        e.accept()

    def _key_actions(self) -> None:
        """Esc/Backspace and Home as actions (so Help ▸ Keyboard shortcuts lists them)."""
        for text, keys, slot in (("Zoom out one level", ("Esc", "Backspace"), self.zoom_out),
                                 ("Zoom out to everything", ("Home",),
                                  lambda: self._view.zoom_to(-1))):
            a = QAction(text, self)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            a.setProperty("where", "flame graph")
            a.triggered.connect(slot)
            self.addAction(a)

    def keyPressEvent(self, e) -> None:  # noqa: N802
        """The same keys when they arrive as key presses (no active window: the actions'
        shortcuts then do not fire)."""
        if e.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Backspace):
            self.zoom_out()
        elif e.key() == Qt.Key.Key_Home:
            self._view.zoom_to(-1)
        else:
            super().keyPressEvent(e)

    def zoom_out(self) -> None:
        """One level up from the zoomed frame."""
        v = self._view
        z = v.zoom_row()
        cmp = v.comparison()
        v.zoom_to(int(cmp.parent[z]) if z >= 0 and cmp is not None else -1)

    def resizeEvent(self, e) -> None:  # noqa: N802
        self._view.update_scrollbar()
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
            if v.comparison() is None:
                return
            fm = p.fontMetrics()
            text_c = self.palette().windowText().color()
            p.setPen(text_c)
            p.drawText(6, 2 + fm.ascent(), v.legend_title())
            if v.color_mode == "module" or v.comparison().n_runs < 2:
                return
            scale = v.color_scale
            y = 4 + fm.height()
            x = 6
            lo = f"{v.format_change(-scale.clamp)} better"
            hi = f"worse {v.format_change(scale.clamp)}"
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


def _hatch_removed(band: np.ndarray, rl: np.ndarray, ri: np.ndarray, xx: np.ndarray,
                   yy: np.ndarray, y0: int) -> None:
    """Hatch and outline the rectangles [rl, ri) of removed frames in one level's band
    (drawn at their baseline width: gone in the current run)."""
    rmask = np.zeros(band.shape[1], dtype=bool)
    rln = ri - rl
    rs = np.cumsum(rln) - rln
    rmask[np.arange(int(rln.sum())) + np.repeat(rl - rs, rln)] = True
    pat = ((xx[None, :] + yy + y0) % 6 == 0) & rmask[None, :]
    out_c = pack_rgb1(OUTLINE)
    band[pat] = pack_rgb1(HATCH)
    band[0, rmask] = out_c
    band[-1, rmask] = out_c
    band[:, rl] = out_c
    band[:, np.maximum(ri - 1, rl)] = out_c
