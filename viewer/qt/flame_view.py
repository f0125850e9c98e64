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
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollBar,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.model import Unit
from profdiff.viewer import flame_layout as fl
from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison, Status
from profdiff.viewer.noise import ensure_noise
from profdiff.viewer.run_labels import labels_of
from profdiff.viewer.units import digits_rounding, format_delta, format_rel, format_value

from .flame_canvas import (  # noqa: F401 - constants re-exported for tests
    BACKGROUND,
    DIM,
    HATCH,
    MERGED,
    MIN_PX,
    OUTLINE,
    ROW_H,
    TEXT_PX,
    FlameCanvas,
    FlameLegend,
    pack_rgb,
    pack_rgb1,
)
from .models import ComparisonTreeModel

NOISE_SYNC_ROWS = 200_000  # estimate the noise here up to this many rows (as the window)


def run_labels(cmp: Comparison) -> list[str]:
    """How the runs are named (:func:`viewer.run_labels.labels_of`), as everywhere else."""
    return labels_of(cmp)


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
        self._fade_noise = True
        self._faded_rows: np.ndarray | None = None  # rows drawn faded (within noise)
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
        """``Δ self ticks, pp of the baseline's total``: what the colour means (the View ▸
        Colour by share of run switch changes the basis)."""
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
        share = ComparisonTreeModel.colour_by_share
        unit = ("pp of each run's total" if share else "pp of the baseline's total") \
            if self._is_pct_mode() else "absolute"
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
        faded = ""
        if self._faded_rows is not None:
            faded = ("  ·  faded: within run-to-run noise" if cmp.groups is not None
                     else "  ·  faded: within sampling error")
        return (f"{head}  ·  width = {self.width_metric_label()}  ·  "
                f"colour = {self.color_description()}{faded}")

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
        mod, src = str(cmp.module[row] or ""), str(cmp.label_at("src", row) or "")
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
                f"<td align='right'>&nbsp;{e(format_value(float(cmp.values[n][row, r]), cmp.metric_by_name[n].unit, rounding=digits_rounding(cmp.runs, n, r)))}</td>"
                for n in shown)
            bold = ("<b>", "</b>") if r == cmp.current and cmp.n_runs > 1 else ("", "")
            rows_html.append(f"<tr><td>{bold[0]}{e(labels[r] + mark)}{bold[1]}</td>{cells}</tr>")
        if cmp.n_runs > 1:
            cells = "".join(
                f"<td align='right'>&nbsp;{e(format_delta(float(cmp.delta(n)[row]), cmp.metric_by_name[n].unit, rounding=digits_rounding(cmp.runs, n, cmp.current, cmp.baseline)))}"
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
            ch = fl.color_changes(cmp, self._metric, self._color_mode,
                                  by_share=ComparisonTreeModel.colour_by_share)[row]
            lines.append(f"colour: {e(self._format_change(float(ch)))}")
            if self._faded_rows is not None and self._faded_rows[row] and ch:
                lines.append("<i>faded: the change is within the noise</i>")
        return "<br>".join(lines)

    # ----- what the canvas and the legend read (separate widgets: public) --------------
    @property
    def flame_layout(self) -> fl.FlameLayout | None:
        return self._layout

    @property
    def window_range(self) -> tuple[float, float]:
        """The horizontal window shown, as fractions of the (zoomed) total width."""
        return self._window

    @property
    def scroll_offset(self) -> int:
        return self._scroll

    @property
    def statuses(self) -> np.ndarray:
        return self._status

    @property
    def color_mode(self) -> str:
        return self._color_mode

    @property
    def color_scale(self) -> DivergingScale:
        return self._scale

    @property
    def hover_row(self) -> int:
        return self._hover

    @hover_row.setter
    def hover_row(self, row: int) -> None:
        self._hover = row

    def top_level(self) -> int:
        return self._top_level()

    def colors_now(self) -> np.ndarray:
        return self._colors_now()

    def edges_now(self) -> np.ndarray:
        return self._edges_now()

    def dark_text_now(self) -> np.ndarray:
        return self._dark_text_now()

    def set_window(self, a: float, b: float) -> None:
        self._set_window(a, b)

    def set_scroll(self, s: int) -> None:
        self._set_scroll(s)

    def click(self, row: int) -> None:
        self._click(row)

    def update_scrollbar(self) -> None:
        self._update_scrollbar()

    def format_change(self, v: float) -> str:
        return self._format_change(v)

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

    def recolor(self) -> None:
        """Recompute the frame colours (after the window's colour switch changed)."""
        self._recolor()
        self.canvas.update()

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
        rgb = fl.row_colors(cmp, self._metric, mode, self._scale,
                            by_share=ComparisonTreeModel.colour_by_share)
        noisy = self.within_noise() if mode != "module" else None
        self._faded_rows = noisy if noisy is not None and noisy.any() else None
        if self._faded_rows is not None:
            rgb = np.array(rgb, copy=True)
            rgb[noisy] = fade_rgbs(rgb[noisy])
        self._colors = pack_rgb(rgb)
        faded = np.asarray(rgb, float) * DIM + np.array(BACKGROUND, float) * (1 - DIM)
        self._colors_dim = pack_rgb(faded.round().astype(np.uint8))
        self._edges = pack_rgb((np.asarray(rgb, float) * 0.72).round().astype(np.uint8))
        # same rule as colors.text_color_for, vectorised
        lum = 0.2126 * rgb[:, 0] + 0.7152 * rgb[:, 1] + 0.0722 * rgb[:, 2]
        self._dark = lum > 140
        self.legend.update()
        self.canvas.update()

    def set_fade_noise(self, on: bool) -> None:
        """Fade frames whose colour change is within the noise, as the tables fade
        their Δ cells (View ▸ Fade changes within noise)."""
        self._fade_noise = bool(on)
        self.recolor()

    def noise_metric(self) -> str | None:
        """The metric whose change colours the frames (the self or inclusive partner of
        the colour metric, as the colour mode says): its noise decides the fading."""
        cmp, m = self._cmp, self._metric
        if cmp is None or m is None or self._color_mode == "module":
            return None
        part = (fl.self_partner(cmp, m) if self._color_mode.startswith("self")
                else fl.inclusive_partner(cmp, m))
        return part if part in cmp.values else m

    def within_noise(self) -> np.ndarray | None:
        """Rows whose colour change is not significant (the current run against the
        baseline, a sampled metric; None when fading is off or no estimate applies).  A small comparison gets the
        estimate here; a big one's comes from the window's worker (then
        :meth:`recolor`)."""
        cmp, m = self._cmp, self.noise_metric()
        if not self._fade_noise or cmp is None or m is None or cmp.n_runs < 2:
            return None
        if not cmp.metric_by_name[m].sampled:
            return None  # exact counts: every change is real
        have = cmp.noise.metrics if cmp.noise is not None else {}
        if m not in have and cmp.groups is None and cmp.n_rows <= NOISE_SYNC_ROWS:
            try:
                ensure_noise(cmp, [m])
            except Exception:  # noqa: BLE001 - fading is optional
                return None
        mn = cmp.noise.metrics.get(m) if cmp.noise is not None else None
        if mn is None or mn.exact or not mn.judged:
            return None
        keep = (self._status != Status.ADDED) & (self._status != Status.REMOVED)
        return ~np.asarray(mn.significant, dtype=bool) & keep

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


def fade_rgbs(rgb: np.ndarray, amount: float = 0.75) -> np.ndarray:
    """:func:`~viewer.qt.models.fade_rgb` over an array of colours (uint8[n, 3])."""
    a = np.asarray(rgb, dtype=np.float64)
    return np.round(a + (255.0 - a) * amount).astype(np.uint8)


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
