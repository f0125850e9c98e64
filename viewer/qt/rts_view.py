"""GHC RTS statistics (``+RTS -s`` / ``-t --machine-readable``) of 2..N runs side by side.

RTS statistics have no call tree (the readers produce zero-node profiles whose
``totals`` hold everything), so this view *is* the comparison for those formats: a
headline sentence with the changes a user looks for first (allocation, GC time,
productivity), a bar per run splitting CPU time into MUT / GC / other, the reader's
warnings (notably GHC 9.0's misprinted ``%GC``, recomputed by the reader), and every
statistic grouped in a :class:`~viewer.qt.totals_table.TotalsTable`.

When a run came from a ``+RTS -S`` log (``extras["gc_log"]``: one row per collection),
a :class:`GcLogPlot` draws the per-GC columns over time - live bytes by default, the
curve that shows a leak or a residency change long before the summary's maximum does -
one curve per run, major collections dotted.
"""

from __future__ import annotations

import html
import math
import os
import re
from dataclasses import replace

import numpy as np

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")  # before pyqtgraph picks a binding
import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QRectF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QFont, QPainter, QPen  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.colors import DivergingScale  # noqa: E402
from profdiff.viewer.compare import Comparison, incomparable_warnings  # noqa: E402
from profdiff.viewer.run_labels import labels_of  # noqa: E402
from profdiff.viewer.units import TIMED_MARK, TIMED_NOTE, format_rel, format_value  # noqa: E402

from .totals_table import TotalsTable, better_of, totals_data  # noqa: E402

_GEN = re.compile(r"^gen\d+_")


def _is_productivity(k: str) -> bool:
    return k.startswith(("productivity", "gc_time_pct", "gc_elapsed_pct"))


def _is_alloc(k: str) -> bool:
    return (k.endswith("_bytes") or k.startswith("bytes_")
            or k in ("alloc_rate_bytes_per_s", "peak_megabytes_allocated"))


def _is_gc(k: str) -> bool:
    return (k in ("num_gcs", "major_gcs", "max_residency_samples", "gc_alloc_block_sync",
                  "whitehole_spin") or bool(_GEN.match(k)) or k.startswith("par_gc_work"))


def _is_time(k: str) -> bool:
    return k.endswith(("_cpu_s", "_elapsed_s"))


def _is_parallel(k: str) -> bool:
    return k.startswith(("task", "bound_task", "worker", "peak_worker", "spark", "n_capab"))


RTS_GROUPS = [
    ("Allocation", _is_alloc),
    ("GC", _is_gc),
    ("Time", _is_time),
    ("Productivity", _is_productivity),
    ("Parallelism", _is_parallel),
]
"""Sections of the RTS table, in order; a key goes to the first section accepting it."""

# Keys shown first in their section (the ones people read first), the rest follow in
# the reader's order.
PREFERRED = [
    "bytes_allocated", "alloc_rate_bytes_per_s", "bytes_copied", "max_residency_bytes",
    "average_bytes_used", "total_memory_in_use_bytes", "num_gcs", "major_gcs",
    "total_cpu_s", "total_elapsed_s", "mut_cpu_s", "mut_elapsed_s", "gc_cpu_s", "gc_elapsed_s",
    "productivity_pct", "productivity_elapsed_pct", "gc_time_pct", "gc_elapsed_pct",
]


def rts_keys(cmp: Comparison, hide_zero: bool = True) -> list[str]:
    """Keys to show, in display order: preferred ones first; all-zero rows and exact
    duplicates (``productivity_cpu_pct`` = ``productivity_pct``) dropped."""
    keys = cmp.total_keys
    vals = {k: cmp.total_values(k) for k in keys}
    out = [k for k in PREFERRED if k in vals] + [k for k in keys if k not in PREFERRED]
    if hide_zero:
        out = [k for k in out if k.endswith("_reported")
               or any(v not in (None, 0.0) for v in vals[k])]
    if "productivity_pct" in vals and "productivity_cpu_pct" in vals and \
            vals["productivity_pct"] == vals["productivity_cpu_pct"]:
        out.remove("productivity_cpu_pct")
    return out


_WARN_STYLE = ("QLabel { background: #fff4ce; border: 1px solid #e0c060; border-radius: 3px;"
               " padding: 4px 6px; }")


def headline_html(cmp: Comparison) -> str:
    """One sentence per non-baseline run: the few changes people look at first."""
    labels = labels_of(cmp)
    b = cmp.runs[cmp.baseline].totals
    if cmp.n_runs == 1:
        t = b
        parts = [f"<b>{html.escape(labels[0])}</b>"]
        for k, name in (("bytes_allocated", "allocated"), ("total_cpu_s", "total CPU"),
                        ("productivity_pct", "productivity")):
            if k in t:
                parts.append(f"{name} {format_value(t[k], cmp.total_metric(k).unit)}")
        return ", ".join(parts)
    lines = []
    for r in range(cmp.n_runs):
        if r == cmp.baseline:
            continue
        t = cmp.runs[r].totals
        parts = []
        for k, name in (("bytes_allocated", "allocated"), ("bytes_copied", "copied by GC"),
                        ("max_residency_bytes", "max residency"), ("gc_cpu_s", "GC CPU"),
                        ("mut_cpu_s", "MUT CPU"), ("total_cpu_s", "total CPU")):
            if k in t and k in b and b[k]:
                rel = (t[k] - b[k]) / abs(b[k])
                parts.append(_coloured(f"{name} {format_rel(rel)}", rel * 100,
                                       better_of(k, cmp.total_metric(k))))
        for k, name in (("productivity_pct", "productivity"), ("gc_time_pct", "%GC")):
            if k in t and k in b:
                unit = cmp.total_metric(k).unit
                parts.append(_coloured(
                    f"{name} {format_value(b[k], unit)} → {format_value(t[k], unit)}",
                    t[k] - b[k], better_of(k, cmp.total_metric(k))))
        lines.append(f"<b>{html.escape(labels[r])}</b> vs <b>{html.escape(labels[cmp.baseline])}"
                     f"</b>: " + ", ".join(parts))
    return "<br>".join(lines)


def _coloured(text: str, change: float, direction: str) -> str:
    if direction == "none" or abs(change) < 1.0:
        return html.escape(text)
    worse = change > 0 if direction == "lower" else change < 0
    col = "#b4231e" if worse else "#1e8232"
    return f"<span style='color:{col}'>{html.escape(text)}</span>"


def gc_recomputed_note(cmp: Comparison) -> str:
    """One line for the %GC repair of GHC 9.0 (instead of one long warning per run)."""
    labels = labels_of(cmp)
    runs = [i for i, p in enumerate(cmp.runs) if p.meta.get("gc_pct_recomputed")]
    if not runs:
        return ""
    parts = []
    for i in runs:
        t = cmp.runs[i].totals
        rep, new = t.get("gc_time_pct_reported"), t.get("gc_time_pct")
        if rep is not None and new is not None:
            parts.append(f"{labels[i]} {rep:.1f}% → {new:.1f}%")
    return ("⚠ %GC recomputed: GHC printed a %GC that does not match its own GC and Total "
            "times (GHC 9.0's integer-division bug prints 0.0%); the %GC rows are "
            "recomputed from the times, the printed values are kept as \"%GC as printed\". "
            + "; ".join(parts))


TIMED_NOTE_HTML = (f"<br><span style='color:#777'>{html.escape(TIMED_NOTE)}; open repeated "
                   "runs of each build to judge them.</span>")


def mark_timed(metrics: dict, cmp: Comparison) -> bool:
    """Put :data:`~viewer.units.TIMED_MARK` after the label of each statistic measured
    once (:attr:`Metric.timed`), as ``diff``'s totals do, when the runs' totals are
    (:attr:`Comparison.totals_measured_once`).  Returns whether any was marked."""
    if not cmp.totals_measured_once:
        return False
    marked = False
    for k, m in list(metrics.items()):
        if m is not None and m.timed:
            metrics[k] = replace(m, label=f"{m.title} {TIMED_MARK}")
            marked = True
    return marked


def warnings_text(cmp: Comparison) -> str:
    """The runs' warnings (deduplicated, each naming its runs) and comparability notes."""
    labels = labels_of(cmp)
    seen: dict[str, list[str]] = {}
    note = gc_recomputed_note(cmp)
    if note:
        seen["gc"] = [note]
    for lab, p in zip(labels, cmp.runs, strict=True):
        for w in p.warnings:
            if note and w.startswith("GHC printed a %GC"):
                continue
            # the same warning differs only in numbers between runs: group by its words
            seen.setdefault(re.sub(r"[\d.]+", "#", w), []).append(f"{lab}: {w}")
        if p.incomplete:
            seen.setdefault("incomplete" + lab, []).append(
                f"{lab}: incomplete ({p.incomplete_reason or 'file cut short'})")
    out = []
    for items in seen.values():
        out.extend(items)
    out.extend(incomparable_warnings(cmp.runs))
    return "\n".join(out)


class TimeBars(QWidget):
    """One horizontal bar per run: CPU time split into MUT, GC and the rest, same scale."""

    COLORS = {"MUT": QColor(70, 130, 180), "GC": QColor(230, 140, 50),
              "other": QColor(190, 190, 190)}

    def __init__(self, cmp: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.labels = labels_of(cmp)
        self.rows: list[tuple[float, float, float, float]] = []  # mut, gc, other, total
        for p in cmp.runs:
            t = p.totals
            mut, gc = t.get("mut_cpu_s", math.nan), t.get("gc_cpu_s", math.nan)
            total = t.get("total_cpu_s", math.nan)
            other = max(total - mut - gc, 0.0) if not math.isnan(total) else 0.0
            self.rows.append((mut, gc, other, total))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(22 * len(self.rows) + 26)

    @property
    def has_data(self) -> bool:
        return any(not math.isnan(r[3]) for r in self.rows)

    def paintEvent(self, _ev) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        fm = p.fontMetrics()
        label_w = min(max(fm.horizontalAdvance(s) for s in self.labels) + 12, 260)
        w = self.width() - label_w - 70
        vmax = max((r[3] for r in self.rows if not math.isnan(r[3])), default=1.0) or 1.0
        for i, (lab, (mut, gc, other, total)) in enumerate(zip(self.labels, self.rows,
                                                               strict=True)):
            y = 4 + 22 * i
            p.setPen(QPen(Qt.GlobalColor.black))
            p.drawText(QRectF(0, y, label_w - 6, 18),
                       int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                       fm.elidedText(lab, Qt.TextElideMode.ElideMiddle, label_w - 6))
            if math.isnan(total):
                continue
            x = float(label_w)
            for name, v in (("MUT", mut), ("GC", gc), ("other", other)):
                if math.isnan(v) or v <= 0:
                    continue
                bw = w * v / vmax
                p.fillRect(QRectF(x, y, bw, 18), self.COLORS[name])
                txt = f"{name} {v:.2f} s" if name != "GC" else \
                    f"GC {v:.2f} s ({100 * v / total:.0f}%)" if total else f"GC {v:.2f} s"
                if fm.horizontalAdvance(txt) + 6 < bw:
                    p.setPen(QPen(Qt.GlobalColor.white if name != "other" else Qt.GlobalColor.black))
                    p.drawText(QRectF(x + 3, y, bw - 6, 18),
                               int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), txt)
                x += bw
            p.setPen(QPen(Qt.GlobalColor.black))
            p.drawText(QRectF(x + 4, y, 120, 18),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                       f"{total:.2f} s")
        y = 4 + 22 * len(self.rows)
        x = float(label_w)
        small = QFont(p.font())
        small.setPointSizeF(max(small.pointSizeF() - 1, 7))
        p.setFont(small)
        for name, c in self.COLORS.items():
            p.fillRect(QRectF(x, y + 5, 10, 10), c)
            p.setPen(QPen(Qt.GlobalColor.black))
            txt = {"MUT": "MUT (program)", "GC": "GC", "other": "init/exit/profiling"}[name]
            p.drawText(QRectF(x + 14, y, 200, 20),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), txt)
            x += 14 + p.fontMetrics().horizontalAdvance(txt) + 16
        p.drawText(QRectF(x + 10, y, 300, 20),
                   int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   "CPU time per run, same scale")
        p.end()


GC_LOG_Y = {
    "live bytes": ("live_bytes", "B"),
    "copied per GC": ("copied_bytes", "B"),
    "allocated (cumulative)": ("alloc_bytes", "B"),
    "GC pause (elapsed)": ("gc_elapsed_s", "s"),
}
"""Choices of the GC-log plot's y axis: label -> (gc_log column, unit)."""
GC_LOG_X = {
    "GC number": None,
    "elapsed time": "total_elapsed_s",
    "CPU time": "total_cpu_s",
}
"""Choices of its x axis: label -> gc_log column (None: the collection's index)."""
RUN_COLORS = [(60, 60, 60), (214, 39, 40), (31, 119, 180), (44, 160, 44), (148, 103, 189),
              (255, 127, 14)]


def gc_log_runs(cmp: Comparison) -> list[int]:
    """Runs that carry a ``+RTS -S`` per-collection log."""
    return [i for i, p in enumerate(cmp.runs)
            if (p.extras.get("gc_log") or {}).get("gen") is not None
            and len(p.extras["gc_log"]["gen"])]


def gc_log_series(log: dict, y: str, x: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of one run's -S log for the axis labels of :data:`GC_LOG_X`/:data:`GC_LOG_Y`."""
    col, _unit = GC_LOG_Y[y]
    yv = np.asarray(log[col], dtype=np.float64)
    if col == "alloc_bytes":
        yv = np.cumsum(yv)
    xcol = GC_LOG_X[x]
    xv = np.arange(1, len(yv) + 1, dtype=np.float64) if xcol is None else \
        np.asarray(log[xcol], dtype=np.float64)
    return xv, yv


class GcLogPlot(QWidget):
    """Per-GC values of every run with a ``-S`` log: one curve per run, same axes."""

    def __init__(self, cmp: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        self.runs = gc_log_runs(cmp)
        self.labels = labels_of(cmp)
        self.y_combo = QComboBox()
        self.y_combo.addItems(list(GC_LOG_Y))
        self.x_combo = QComboBox()
        self.x_combo.addItems(list(GC_LOG_X))
        self.x_combo.setToolTip("x axis: collection number, or the RTS's running elapsed/CPU "
                                "time at the collection (-S prints it to 10 ms)")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel("<b>+RTS -S log</b>: plot"))
        bar.addWidget(self.y_combo)
        bar.addWidget(QLabel("over"))
        bar.addWidget(self.x_combo)
        note = QLabel("dots: major (oldest generation) collections")
        note.setStyleSheet("color: #555")
        bar.addSpacing(10)
        bar.addWidget(note, 1)
        self.graphics = pg.PlotWidget(background="w")
        self.graphics.setMinimumHeight(160)
        self.plot: pg.PlotItem = self.graphics.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.curves: dict[int, pg.PlotDataItem] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.graphics, 1)
        self.y_combo.currentIndexChanged.connect(lambda _i: self.redraw())
        self.x_combo.currentIndexChanged.connect(lambda _i: self.redraw())
        self.redraw()

    def redraw(self) -> None:
        y, x = self.y_combo.currentText(), self.x_combo.currentText()
        self.plot.clear()
        if self.plot.legend is None:
            self.plot.addLegend(offset=(10, 5), brush=pg.mkBrush(255, 255, 255, 210),
                                labelTextColor=(30, 30, 30))
        else:
            self.plot.legend.clear()
        self.curves = {}
        unit = GC_LOG_Y[y][1]
        self.plot.setLabel("left", y, units=unit)
        self.plot.setLabel("bottom", x, units=None if GC_LOG_X[x] is None else "s")
        for run in self.runs:
            log = self.cmp.runs[run].extras["gc_log"]
            xv, yv = gc_log_series(log, y, x)
            rgb = RUN_COLORS[run % len(RUN_COLORS)]
            tag = " (baseline)" if run == self.cmp.baseline and len(self.runs) > 1 else ""
            self.curves[run] = self.plot.plot(xv, yv, pen=pg.mkPen(rgb, width=1.5),
                                              name=f"{self.labels[run]}{tag}")
            gen = np.asarray(log["gen"])
            major = gen == gen.max() if len(gen) and gen.max() > 0 else np.zeros(len(gen), bool)
            if major.any():
                self.plot.plot(xv[major], yv[major], pen=None, symbol="o", symbolSize=4,
                               symbolPen=None, symbolBrush=pg.mkBrush(*rgb, 200))


class RtsView(QWidget):
    """Headline, CPU-time bars, warnings and the grouped statistics table."""

    def __init__(self, cmp: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.headline = QLabel(headline_html(cmp))
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        lay.addWidget(self.headline)
        self.bars = TimeBars(cmp)
        if self.bars.has_data:
            lay.addWidget(self.bars)
        else:
            self.bars.hide()
        self.warnings = QLabel(warnings_text(cmp))
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet(_WARN_STYLE)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings.setVisible(bool(self.warnings.text()))
        lay.addWidget(self.warnings)
        self.gc_plot: GcLogPlot | None = GcLogPlot(cmp) if gc_log_runs(cmp) else None
        data = totals_data(cmp, rts_keys(cmp), rules=RTS_GROUPS)
        if cmp.runs and any(p.meta.get("gc_pct_recomputed") for p in cmp.runs):
            for k in ("gc_time_pct", "gc_elapsed_pct"):
                m = data.metrics.get(k)
                if m is not None:
                    data.metrics[k] = replace(m, label=m.title + "  ⚠ recomputed",
                                              description=m.description + ". " +
                                              gc_recomputed_note(cmp))
        if mark_timed(data.metrics, cmp):
            self.headline.setText(self.headline.text() + TIMED_NOTE_HTML)
        self.table = TotalsTable(data)
        if self.gc_plot is None:
            lay.addWidget(self.table, 1)
        else:
            split = QSplitter(Qt.Orientation.Vertical)
            split.addWidget(self.gc_plot)
            split.addWidget(self.table)
            split.setStretchFactor(0, 2)
            split.setStretchFactor(1, 3)
            split.setSizes([260, 400])
            lay.addWidget(split, 1)

    def set_scale(self, scale: DivergingScale) -> None:
        self.table.set_scale(scale)
