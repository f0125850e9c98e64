"""GHC heap profiles (``.hp``) over time: stacked areas per run and a per-band table.

What a user asks of two heap profiles is "which band grew, and when?".  So:

* one stacked-area chart per run (the top *N* bands over time, the rest summed as
  "other"), side by side with **linked y ranges** (and by default linked time axes) so
  heights compare directly; or an *overlay totals* mode with the total heap of every
  run (plus the highlighted band of every run, dashed) in one plot;
* a table of every band with peak, time-weighted mean and integral (byte·s) per run and
  their deltas (the app's :class:`~viewer.qt.models.ComparisonTreeModel` over a flat
  comparison, sortable, Δ cells coloured like everywhere else);
* clicking a band - in the table or in any chart - highlights it in all charts;
* the file's ``MARK`` times, if any, as thin dashed vertical lines in every chart.

Band colours come from one palette indexed by the band's rank (largest integral over
all runs first), so a band has the same colour in every chart whatever its rank in a
single run; the table's swatches are the legend.

The series come straight from the reader: ``extras["series"]["bands"][:, j]`` is node
``j``; the comparison's ``node[row, run]`` maps an aligned band to its column.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")  # before pyqtgraph picks a binding
import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QIdentityProxyModel, QModelIndex, Qt, Signal  # noqa: E402
from PySide6.QtGui import QColor, QPixmap  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.colors import DivergingScale  # noqa: E402
from profdiff.viewer.compare import Comparison  # noqa: E402
from profdiff.viewer.session import Session  # noqa: E402
from profdiff.viewer.units import format_value, human_bytes  # noqa: E402

from .models import ROW_ID_ROLE, Column, ComparisonTreeModel, diff_columns  # noqa: E402
from .totals_table import labels_of  # noqa: E402

HEAP_METRICS = ("peak_bytes", "mean_bytes", "integral_byte_s")
OTHER = -1
"""Row id standing for "all bands outside the top N" in a stack."""

# Qualitative palette (Tableau 20 reordered: strong colours first, pale ones after).
PALETTE: list[tuple[int, int, int]] = [
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (188, 189, 34), (23, 190, 207), (127, 127, 127),
    (174, 199, 232), (255, 187, 120), (152, 223, 138), (255, 152, 150), (197, 176, 213),
    (196, 156, 148), (247, 182, 210), (219, 219, 141), (158, 218, 229), (99, 99, 99),
]
OTHER_COLOR = (205, 205, 205)
RUN_COLORS = [(60, 60, 60), (214, 39, 40), (31, 119, 180), (44, 160, 44), (148, 103, 189),
              (255, 127, 14)]


def band_rank(cmp: Comparison) -> np.ndarray:
    """Rows ordered by their largest integral over all runs (ties: row order)."""
    v = np.nan_to_num(cmp.values["integral_byte_s"], nan=0.0).max(axis=1) if cmp.n_rows else \
        np.zeros(0)
    return np.argsort(-v, kind="stable")


def band_colors(cmp: Comparison) -> dict[int, tuple[int, int, int]]:
    """Row -> colour, by rank: the same band has the same colour in every run's chart."""
    return {int(r): PALETTE[i % len(PALETTE)] for i, r in enumerate(band_rank(cmp))}


@dataclass
class BandStack:
    """The stacked series of one run: ``values[:, j]`` is band ``rows[j]`` (OTHER last)."""

    times: np.ndarray  # float64[n_samples]
    rows: list[int]
    values: np.ndarray  # float64[n_samples, len(rows)]

    @property
    def cumulative(self) -> np.ndarray:
        """float64[n_samples, k + 1]: band j spans ``cum[:, j] .. cum[:, j + 1]``."""
        c = np.zeros((len(self.times), len(self.rows) + 1))
        np.cumsum(self.values, axis=1, out=c[:, 1:])
        return c

    @property
    def total(self) -> np.ndarray:
        return self.values.sum(axis=1)


def run_series(cmp: Comparison, run: int) -> tuple[np.ndarray, np.ndarray]:
    """(times, bands[n_samples, n_nodes]) of one run, empty arrays when it has none."""
    s = cmp.runs[run].extras.get("series") or {}
    t = np.asarray(s.get("times", np.zeros(0)), dtype=np.float64)
    b = np.asarray(s.get("bands", np.zeros((len(t), 0))), dtype=np.float64)
    return t, b.reshape(len(t), -1)


def run_marks(cmp: Comparison, run: int) -> np.ndarray:
    """The ``MARK`` times of one run (seconds; empty when the file has none).

    ``MARK t`` lines flag moments of the run (hp2ps draws them as ticks on the time
    axis); they are what a user lines the heap curve up with, so every chart draws them
    as thin vertical lines.
    """
    s = cmp.runs[run].extras.get("series") or {}
    m = np.asarray(s.get("marks", ()) or (), dtype=np.float64).reshape(-1)
    return m[np.isfinite(m)]


MARK_COLOR = (90, 90, 90)


def band_series(cmp: Comparison, run: int, row: int) -> np.ndarray:
    """The series of aligned band ``row`` in ``run`` (zeros when the run lacks it)."""
    t, b = run_series(cmp, run)
    node = int(cmp.node[row, run])
    return b[:, node].copy() if node >= 0 and node < b.shape[1] else np.zeros(len(t))


def stack_for_run(cmp: Comparison, run: int, shown: list[int]) -> BandStack:
    """Bands ``shown`` (bottom first) of ``run``, plus "other" = every remaining band."""
    t, b = run_series(cmp, run)
    cols = [band_series(cmp, run, r) for r in shown]
    total = b.sum(axis=1)
    vals = np.column_stack(cols) if cols else np.zeros((len(t), 0))
    other = total - vals.sum(axis=1)
    other[np.abs(other) < 1e-6 * np.maximum(total, 1.0)] = 0.0
    rows = list(shown)
    if b.shape[1] > len(shown):
        rows.append(OTHER)
        vals = np.column_stack([vals, other])
    return BandStack(t, rows, vals)


def _swatch(rgb: tuple[int, int, int], size: int = 12) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(QColor(*rgb))
    return pm


class HeapChart:
    """One run's stacked-area plot: boundary curves, fills between them, a total line."""

    def __init__(self, plot: pg.PlotItem, run: int, title: str) -> None:
        self.plot = plot
        self.run = run
        self.title = title
        self.stack: BandStack | None = None
        self.fills: dict[int, pg.FillBetweenItem] = {}
        self.colors: dict[int, tuple[int, int, int]] = {}
        self.highlighted: int | None = None
        self.marks: list[pg.InfiniteLine] = []

    def set_stack(self, stack: BandStack, colors: dict[int, tuple[int, int, int]],
                  marks: np.ndarray | None = None) -> None:
        self.plot.clear()
        self.stack = stack
        self.fills = {}
        self.marks = []
        self.colors = {r: (colors.get(r, OTHER_COLOR) if r != OTHER else OTHER_COLOR)
                       for r in stack.rows}
        cum = stack.cumulative
        curves = [pg.PlotCurveItem(stack.times, cum[:, j], pen=pg.mkPen(None))
                  for j in range(cum.shape[1])]
        for j, r in enumerate(stack.rows):
            fill = pg.FillBetweenItem(curves[j], curves[j + 1])
            fill.setZValue(-10)
            self.plot.addItem(fill)
            self.fills[r] = fill
        self.plot.addItem(pg.PlotCurveItem(stack.times, cum[:, -1],
                                           pen=pg.mkPen((40, 40, 40), width=1)))
        for t in (marks if marks is not None else ()):
            self.marks.append(add_mark(self.plot, float(t), MARK_COLOR))
        self.apply_highlight(self.highlighted)

    def apply_highlight(self, row: int | None) -> None:
        self.highlighted = row
        for r, fill in self.fills.items():
            rgb = self.colors[r]
            if row is None:
                fill.setBrush(pg.mkBrush(*rgb, 225))
                fill.setPen(pg.mkPen(None))
            elif r == row:
                fill.setBrush(pg.mkBrush(*rgb, 255))
                fill.setPen(pg.mkPen((0, 0, 0), width=2))
                fill.setZValue(-5)
            else:
                fill.setBrush(pg.mkBrush(*rgb, 55))
                fill.setPen(pg.mkPen(None))
                fill.setZValue(-10)

    def alpha(self, row: int) -> int:
        """The fill opacity of band ``row`` (tests and the legend read it)."""
        return self.fills[row].brush().color().alpha() if row in self.fills else -1

    def band_at(self, t: float, y: float) -> int | None:
        """The band under data point (t, y): interpolated stack at time t."""
        s = self.stack
        if s is None or len(s.times) == 0 or not s.times[0] <= t <= s.times[-1]:
            return None
        cum = s.cumulative
        at = np.array([np.interp(t, s.times, cum[:, j]) for j in range(cum.shape[1])])
        if y < 0 or y > at[-1]:
            return None
        j = int(np.searchsorted(at[1:], y, side="left"))
        return s.rows[min(j, len(s.rows) - 1)]


def add_mark(plot: pg.PlotItem, t: float, rgb: tuple[int, int, int]) -> pg.InfiniteLine:
    """A thin dashed vertical line at time ``t`` (above the fills, ignored by autorange)."""
    line = pg.InfiniteLine(pos=t, angle=90, movable=False,
                           pen=pg.mkPen(rgb, width=1, style=Qt.PenStyle.DashLine))
    line.setZValue(5)
    line.setToolTip(f"MARK at {t:.3f} s")
    plot.addItem(line, ignoreBounds=True)
    return line


class SwatchProxy(QIdentityProxyModel):
    """Adds a colour swatch (the band's chart colour) to the first column's cells."""

    def __init__(self, source: ComparisonTreeModel, parent=None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.colors: dict[int, tuple[int, int, int]] = {}
        self.shown: set[int] = set()
        self._cache: dict[tuple[int, int, int], QPixmap] = {}

    def set_colors(self, colors: dict[int, tuple[int, int, int]], shown: set[int]) -> None:
        self.colors, self.shown = colors, set(shown)
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0, 0), self.index(n - 1, 0))

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DecorationRole and index.isValid() and index.column() == 0:
            row = int(self.sourceModel().row_id(self.mapToSource(index)))
            rgb = self.colors.get(row, OTHER_COLOR) if row in self.shown else OTHER_COLOR
            pm = self._cache.get(rgb)
            if pm is None:
                pm = self._cache[rgb] = _swatch(rgb)
            return pm
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid() and index.column() == 0:
            tip = super().data(index, role)
            row = int(self.sourceModel().row_id(self.mapToSource(index)))
            if row not in self.shown:
                tip = (tip or "") + "\n(part of \"other\" in the charts; click to show it)"
            return tip
        return super().data(index, role)


def heap_columns(cmp: Comparison) -> list[Column]:
    """Band name (module only when some band has one), then peak/mean/byte·s per run + Δ."""
    cols = diff_columns(cmp, [m for m in HEAP_METRICS if m in cmp.values])
    has_module = any(str(m) for m in cmp.module)
    out = []
    for c in cols:
        if c.kind == "name":
            c = replace(c, header="band")
        if c.kind == "module" and not has_module:
            continue
        out.append(c)
    return out


class HeapView(QWidget):
    """Stacked heap charts of 1..N runs with a linked band table; see the module docstring."""

    bandHighlighted = Signal(int)  # union row, -1 for none

    def __init__(self, source: Session | Comparison, top_n: int = 10, parent=None) -> None:
        super().__init__(parent)
        # the table needs one row per band: the session's flat comparison (its rules)
        self.cmp = Session.of(source).flat
        self.labels = labels_of(self.cmp)
        self.colors = band_colors(self.cmp)
        self.rank = band_rank(self.cmp)
        self.highlighted: int | None = None
        self.charts: list[HeapChart] = []
        self._overlay_plot: pg.PlotItem | None = None

        # controls
        self.top_spin = QSpinBox()
        self.top_spin.setRange(1, 40)
        self.top_spin.setValue(top_n)
        self.top_spin.setPrefix("top ")
        self.top_spin.setSuffix(" bands")
        self.top_spin.setToolTip("bands drawn separately; the rest are summed as \"other\"")
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["stacked bands per run", "overlay totals"])
        self.link_x = QCheckBox("same time axis")
        self.link_x.setChecked(True)
        self.hover = QLabel("click a band (chart or table) to highlight it in every chart")
        self.hover.setStyleSheet("color: #555")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("show"))
        bar.addWidget(self.mode_combo)
        bar.addWidget(self.top_spin)
        bar.addWidget(self.link_x)
        bar.addSpacing(12)
        bar.addWidget(self.hover, 1)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setMinimumHeight(260)
        self.graphics.scene().sigMouseClicked.connect(self._chart_clicked)
        self.graphics.scene().sigMouseMoved.connect(self._chart_moved)

        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setStyleSheet("font-size: 8pt; background: white; padding: 2px 6px;")

        self.model = ComparisonTreeModel(self.cmp, heap_columns(self.cmp), parent=self)
        self.proxy = SwatchProxy(self.model, self)
        self.table = QTreeView()
        self.table.setModel(self.proxy)
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTreeView.SelectionBehavior.SelectRows)
        self.table.selectionModel().currentRowChanged.connect(self._table_current)
        self._sort_default()

        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addLayout(bar)
        tl.addWidget(self.graphics, 1)
        tl.addWidget(self.legend)
        split.addWidget(top)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)

        self.top_spin.valueChanged.connect(lambda _v: self.rebuild())
        self.mode_combo.currentIndexChanged.connect(lambda _i: self.rebuild())
        self.link_x.toggled.connect(lambda _v: self.rebuild())
        self.rebuild()
        self._fit_columns()

    # ----- data -------------------------------------------------------------------------
    @property
    def overlay(self) -> bool:
        return self.mode_combo.currentIndex() == 1

    def shown_rows(self) -> list[int]:
        """Bands drawn separately: the top N by integral, plus the highlighted band."""
        rows = [int(r) for r in self.rank[: self.top_spin.value()]]
        if self.highlighted is not None and self.highlighted >= 0 and \
                self.highlighted not in rows:
            rows.append(self.highlighted)
        return rows

    def stack(self, run: int) -> BandStack:
        return stack_for_run(self.cmp, run, self.shown_rows())

    # ----- building ---------------------------------------------------------------------
    def rebuild(self) -> None:
        self.graphics.clear()
        self.charts = []
        self._overlay_plot = None
        shown = self.shown_rows()
        self.proxy.set_colors(self.colors, set(shown))
        if self.overlay:
            self._build_overlay()
            return
        first: pg.PlotItem | None = None
        for run in range(self.cmp.n_runs):
            p = self.cmp.runs[run]
            t = p.totals
            title = (f"<b>{self.labels[run]}</b>"
                     + (" (baseline)" if run == self.cmp.baseline and self.cmp.n_runs > 1
                        else "")
                     + f"<br>peak {human_bytes(t.get('peak_bytes', 0))} at "
                       f"{t.get('peak_time_s', 0):.2f} s, mean "
                       f"{human_bytes(t.get('mean_bytes', 0))}")
            plot = self.graphics.addPlot(row=0, col=run, title=title)
            plot.setLabel("left", "heap", units="B")
            plot.setLabel("bottom", "time", units="s")
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMouseEnabled(x=True, y=False)
            chart = HeapChart(plot, run, self.labels[run])
            chart.highlighted = self.highlighted
            chart.set_stack(self.stack(run), self.colors, run_marks(self.cmp, run))
            self.charts.append(chart)
            if first is None:
                first = plot
            else:
                plot.setYLink(first)
                if self.link_x.isChecked():
                    plot.setXLink(first)
        if self.charts:
            ymax = max((float(c.stack.total.max(initial=0)) for c in self.charts), default=1.0)
            self.charts[0].plot.setYRange(0, ymax * 1.05 or 1.0, padding=0)
            if self.link_x.isChecked():
                tmax = max((float(c.stack.times.max(initial=0)) for c in self.charts),
                           default=1.0)
                self.charts[0].plot.setXRange(0, tmax or 1.0, padding=0.01)
        self._legend_row(shown)

    def _legend_row(self, shown: list[int]) -> None:
        """A compact legend under the charts: top bands' colours and names."""
        items = [(self.colors[r], str(self.cmp.name[r])) for r in shown]
        if any(OTHER in c.stack.rows for c in self.charts if c.stack is not None):
            items.append((OTHER_COLOR, "other"))
        parts = ["<b>bands</b> (bottom to top):"]
        for rgb, name in items:
            short = name if len(name) <= 38 else name[:18] + "…" + name[-18:]
            bold = ("font-weight:bold;" if self.highlighted is not None and
                    name == str(self.cmp.name[self.highlighted]) else "")
            parts.append(f"<span style='white-space:nowrap'><span style='color:rgb{rgb};"
                         f" font-size: 11pt'>■</span><span style='{bold}'>{_esc(short)}"
                         f"</span></span>")
        self.legend.setText(" &nbsp; ".join(parts))
        self.legend.setVisible(True)

    def _build_overlay(self) -> None:
        self.legend.setVisible(False)
        plot = self.graphics.addPlot(row=0, col=0, title="<b>total heap of each run</b>"
                                     + ("" if self.highlighted is None else
                                        f" — dashed: {_esc(str(self.cmp.name[self.highlighted]))}"))
        plot.setLabel("left", "heap", units="B")
        plot.setLabel("bottom", "time", units="s")
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.addLegend(offset=(10, 10))
        for run in range(self.cmp.n_runs):
            t, b = run_series(self.cmp, run)
            rgb = RUN_COLORS[run % len(RUN_COLORS)]
            plot.plot(t, b.sum(axis=1), pen=pg.mkPen(rgb, width=2), name=self.labels[run])
            for m in run_marks(self.cmp, run):
                add_mark(plot, float(m), rgb)
            if self.highlighted is not None:
                plot.plot(t, band_series(self.cmp, run, self.highlighted),
                          pen=pg.mkPen(rgb, width=2, style=Qt.PenStyle.DashLine),
                          name=f"{self.labels[run]}: highlighted band")
        self._overlay_plot = plot

    # ----- highlighting -----------------------------------------------------------------
    def set_highlight(self, row: int | None) -> None:
        """Highlight band ``row`` in every chart and select it in the table (None clears)."""
        if row is not None and row < 0:
            row = None
        if row == self.highlighted:
            return
        need_rebuild = self.overlay or (row is not None and row not in self.shown_rows()) or (
            self.highlighted is not None and self.highlighted not in
            [int(r) for r in self.rank[: self.top_spin.value()]])
        self.highlighted = row
        if need_rebuild:
            self.rebuild()
        else:
            for c in self.charts:
                c.apply_highlight(row)
            self._legend_row(self.shown_rows())
        if row is not None:
            idx = self.proxy.mapFromSource(self.model.index_for_row(row))
            if idx.isValid() and self.table.currentIndex().row() != idx.row():
                self.table.setCurrentIndex(idx)
                self.table.scrollTo(idx)
        self.bandHighlighted.emit(-1 if row is None else row)

    def _table_current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if cur.isValid():
            self.set_highlight(int(self.proxy.data(cur, ROW_ID_ROLE)))

    def chart_at(self, scene_pos) -> tuple[HeapChart | None, float, float]:
        for c in self.charts:
            if c.plot.sceneBoundingRect().contains(scene_pos):
                p = c.plot.vb.mapSceneToView(scene_pos)
                return c, p.x(), p.y()
        return None, 0.0, 0.0

    def _chart_clicked(self, ev) -> None:
        chart, t, y = self.chart_at(ev.scenePos())
        if chart is None:
            return
        band = chart.band_at(t, y)
        if band == OTHER:
            self.hover.setText("\"other\": raise \"top N\" or pick a band in the table")
            return
        self.set_highlight(band)

    def _chart_moved(self, pos) -> None:
        chart, t, y = self.chart_at(pos)
        if chart is None or chart.stack is None:
            return
        band = chart.band_at(t, y)
        if band is None:
            return
        j = chart.stack.rows.index(band)
        v = float(np.interp(t, chart.stack.times, chart.stack.values[:, j]))
        name = "other" if band == OTHER else str(self.cmp.name[band])
        self.hover.setText(f"{chart.title} @ {t:.2f} s: {name} = {format_value(v, 'bytes')}")

    # ----- table ------------------------------------------------------------------------
    def _sort_default(self) -> None:
        """Biggest growth of byte·s first (what "which band grew" means over a run)."""
        cols = self.model.columns
        pick = next((i for i, c in enumerate(cols)
                     if c.kind == "delta" and c.metric == "integral_byte_s"), None)
        if pick is None:
            pick = next((i for i, c in enumerate(cols) if c.metric == "integral_byte_s"), 0)
        self.table.sortByColumn(pick, Qt.SortOrder.DescendingOrder)

    def _fit_columns(self) -> None:
        for c in range(self.proxy.columnCount()):
            self.table.resizeColumnToContents(c)
        self.table.setColumnWidth(0, min(max(self.table.columnWidth(0), 200), 380))

    def set_scale(self, scale: DivergingScale) -> None:
        self.model.set_scale(scale)
        self.table.viewport().update()


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
