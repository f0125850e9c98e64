"""Small widgets around the trees: legend, summary bar, details pane, message bar, overlay."""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.model import Profile, Unit
from profdiff.viewer.colors import ADDED, REMOVED, DivergingScale
from profdiff.viewer.compare import Comparison, Status, incomparable_warnings
from profdiff.viewer.run_labels import distinct_labels, labels_of
from profdiff.viewer.units import (
    TIMED_MARK,
    TIMED_NOTE,
    digits_rounding,
    format_delta,
    format_precision,
    format_rel,
    format_total_delta,
    format_value,
    human_bytes,
    timed_neutral,
)


def run_role(cmp: Comparison, i: int) -> str:
    if cmp.n_runs == 1:
        return "run"
    if i == cmp.baseline:
        return "baseline"
    if i == cmp.current:
        return "current"
    return f"run {i}"


COST_UNIT_TEXT = "pp of the baseline total, by cost"
"""The colour scale's unit in the legend (the default colouring): the change of a row's
cost over the baseline's total.  Said because a "% of run" Δ column shows the change of
the share, which may have the other sign (main.loop −19.4 pp of a run whose GC grew,
coloured by its +32 pp more time); the legend's tooltip says it in full."""

COST_COLOUR_TIP = (
    "Δ cells are coloured by the change of the row's cost, in percentage points of the "
    "baseline run's total. A Δ in a \"% of run\" column is the change of the row's share "
    "of its own run, which falls when another row grows: such a cell can read −19 pp and "
    "be red, because the row's own cost grew. View ▸ Colour by share of run colours by "
    "the shares instead.")
SHARE_COLOUR_TIP = (
    "Δ cells are coloured by the change of the row's share of its own run (View ▸ Colour "
    "by share of run): when one row grows, the others' shares fall and they turn green "
    "though their cost did not change.")


class LegendWidget(QWidget):
    """Always-visible key of the Δ colours: better ◀ grey dead zone ▶ worse, added, removed."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.scale = DivergingScale()
        self.unit_text = COST_UNIT_TEXT
        self.noise_text = ""  # e.g. "faded: within noise"; empty when no noise is known
        self.setToolTip(COST_COLOUR_TIP)
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_scale(self, scale: DivergingScale) -> None:
        self.scale = scale
        self.update()

    def set_colour_basis(self, by_share: bool) -> None:
        """What the colours measure: the change of cost (the default) or, with View ▸
        Colour by share of run, the change of each run's share; said in the text and the
        tooltip."""
        self.unit_text = "pp of run" if by_share else COST_UNIT_TEXT
        self.setToolTip(SHARE_COLOUR_TIP if by_share else COST_COLOUR_TIP)
        self.update()

    def sizeHint(self):  # noqa: N802 - Qt API
        s = super().sizeHint()
        s.setHeight(24)
        s.setWidth(640)
        return s

    def paintEvent(self, _ev) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        fm = p.fontMetrics()
        h = self.height()
        x = 4
        y0, bh = 4, h - 8

        def text(s: str, color=QColor(60, 60, 60)) -> None:
            nonlocal x
            p.setPen(color)
            w = fm.horizontalAdvance(s)
            p.drawText(QRectF(x, 0, w + 2, h), Qt.AlignmentFlag.AlignVCenter, s)
            x += w + 6

        text("Δ colour:")
        text("better", QColor(*self.scale.color(-self.scale.clamp)))
        n = 15
        vals = np.linspace(-self.scale.clamp, self.scale.clamp, n)
        cols = self.scale.colors(vals)
        cw = 14
        for c in cols:
            p.fillRect(QRectF(x, y0, cw, bh), QColor(int(c[0]), int(c[1]), int(c[2])))
            x += cw
        p.setPen(QPen(QColor(160, 160, 160)))
        p.drawRect(QRectF(x - n * cw, y0, n * cw, bh))
        x += 6
        text("worse", QColor(*self.scale.color(self.scale.clamp)))
        text(f"(grey: |Δ| ≤ {self.scale.dead_zone:g}, full colour at {self.scale.clamp:g} "
             f"{self.unit_text})", QColor(110, 110, 110))
        for rgb, label in ((ADDED, "added"), (REMOVED, "removed")):
            p.fillRect(QRectF(x, y0, 14, bh), QColor(*rgb))
            p.setPen(QColor(160, 160, 160))
            p.drawRect(QRectF(x, y0, 14, bh))
            x += 18
            text(label)
        if self.noise_text:
            c = self.scale.color(self.scale.clamp)
            fc = [int(round(v + (255 - v) * 0.75)) for v in c]
            p.fillRect(QRectF(x, y0, 14, bh), QColor(*fc))
            p.setPen(QColor(160, 160, 160))
            p.drawRect(QRectF(x, y0, 14, bh))
            x += 18
            text(self.noise_text, QColor(110, 110, 110))
        p.end()


class SummaryBar(QLabel):
    """One line per run (program, command line, date, totals) plus the deltas of the totals."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setObjectName("summaryBar")
        self.setContentsMargins(6, 4, 6, 4)

    def set_comparison(self, cmp: Comparison | None) -> None:
        if cmp is None or not cmp.runs:
            self.setText("")
            return
        self.setText(summary_html(cmp))
        self.setToolTip(TIMED_TIP if timed_totals_marked(cmp) else "")


TIMED_TIP = f"{TIMED_NOTE}; open repeated runs of each build to judge them"


def timed_totals_marked(cmp: Comparison) -> bool:
    """Whether the header marks totals measured once
    (:attr:`Comparison.totals_measured_once`, some shown total timed)."""
    if not cmp.totals_measured_once:
        return False
    return any((m := cmp.total_metric(k)) is not None and m.timed for k in _total_keys(cmp))


# Run totals a reader of the summary bar looks for first, in this order (any format).
_HEADLINE = ("total_time_s", "total_ticks", "total_alloc_bytes", "total_samples",
             "total_period", "bytes_allocated", "max_residency_bytes", "total_elapsed_s",
             "productivity_pct", "peak_bytes", "alloc_total", "bytes")


def _total_keys(cmp: Comparison, limit: int = 4) -> list[str]:
    keys = cmp.distinct_total_keys
    headline = [k for k in _HEADLINE if k in keys]
    preferred = [k for k in keys if k not in headline and not k.endswith("_reported")
                 and any(s in k for s in ("time", "alloc", "tick", "sample"))]
    rest = [k for k in keys if k not in headline and k not in preferred]
    return (headline + preferred + rest)[:limit]


GAP_PX = 14
"""Space before each column of the runs' header after the first two: with Qt's 2 px cell
padding, two right-aligned totals side by side read as one number ("7,718,382
12,517,993,311,808 B")."""
_GAP = f" style='padding-left:{GAP_PX}px'"


def summary_html(cmp: Comparison) -> str:
    rows = []
    keys = _total_keys(cmp)
    texts = _text_columns(cmp)
    head = "<tr><th></th><th align=left>file</th>" + "".join(
        f"<th align=left{_GAP}>{title}</th>" for title, _ in texts)
    mark = timed_totals_marked(cmp)
    for k in keys:
        m = cmp.total_metric(k)
        title = html.escape(m.title if m and m.label else k)
        if mark and m is not None and m.timed:
            title += f" {TIMED_MARK}"
        head += f"<th align=right{_GAP}>{title}</th>"
    head += "</tr>"
    rows.append(head)
    labels = labels_of(cmp)
    for i, p in enumerate(cmp.runs):
        inc = " <b style='color:#b35806'>INCOMPLETE</b>" if p.incomplete else ""
        name = html.escape(labels[i])
        if cmp.groups is not None and i < len(cmp.groups):
            name = f"mean of {len(cmp.groups[i])}: " + html.escape(group_label(cmp.groups[i]))
        tr = f"<tr><td><b>{run_role(cmp, i)}</b></td><td>{name}{inc}</td>" + "".join(
            f"<td{_GAP}>{html.escape(text(p))}</td>" for _, text in texts)
        for k in keys:
            m = cmp.total_metric(k)
            v = cmp.total_values(k)[i]
            tr += f"<td align=right{_GAP}>{format_total(v, m.unit if m else Unit.COUNT)}</td>"
        rows.append(tr + "</tr>")
    if cmp.n_runs > 1:
        tr = "<tr><td><b>Δ</b></td><td></td>" + "<td></td>" * len(texts)
        for k in keys:
            m = cmp.total_metric(k)
            vals = cmp.total_values(k)
            b, n = vals[cmp.baseline], vals[cmp.current]
            if b is None or n is None:
                tr += "<td></td>"
                continue
            d = n - b
            better = m.better if m is not None else "lower"
            worse = (d > 0) if better == "lower" else (d < 0)
            r = d / abs(b) if b else (float("inf") if d else 0.0)
            once = mark and m is not None and m.timed and timed_neutral(r)
            color = "#555" if better == "none" or not d or once else \
                ("#b2182b" if worse else "#1a7a30")
            rel = format_rel(r)
            unit = m.unit if m else Unit.COUNT
            tr += (f"<td align=right style='color:{color}; padding-left:{GAP_PX}px'>"
                   f"<b>{html.escape(f'{format_total_delta(b, n, unit)} ({rel})')}</b></td>")
        rows.append(tr + "</tr>")
    out = "<table cellspacing=0 cellpadding=2>" + "".join(rows) + "</table>"
    for w in incomparable_warnings(cmp.runs):
        out += f"<div style='color:#b35806'>⚠ {html.escape(w)}</div>"
    return out


def _text_columns(cmp: Comparison) -> list[tuple[str, Callable[[Profile], str]]]:
    """(title, text of a run) of the header's program and date columns, each only when a
    run has it: a pprof or folded pair has neither, and two empty columns pushed its
    totals away from the file names."""
    def program(p: Profile) -> str:
        return str(p.meta.get("command_line") or p.meta.get("program") or "")

    def date(p: Profile) -> str:
        return str(p.meta.get("date") or "")

    cols = [("program / command line", program), ("date", date)]
    return [(title, text) for title, text in cols if any(text(p) for p in cmp.runs)]


def group_label(runs, limit: int = 4) -> str:
    """Short names of a group's files: ``run1/ad.prof, run2/ad.prof`` when names repeat."""
    names = distinct_labels([str(p.path) for p in runs])
    more = f" +{len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def format_total(v: float | None, unit: Unit | str) -> str:
    """A run total as HTML: exact value, plus the human size of big byte counts
    (the header and the Summary show totals alike)."""
    if v is None:
        return "-"
    s = format_value(v, unit)
    if Unit(unit) is Unit.BYTES and abs(v) >= 1e6:
        s += f" ({human_bytes(v)})"
    return html.escape(s)


class DetailsPane(QTextBrowser):
    """Everything about one row: full name, module, src, call path, all metrics of all runs.

    ``has_content`` says whether a row is described; ``contentChanged(bool)`` fires when
    that changes, so the window can hide the pane while it would be an empty fifth of
    the screen."""

    contentChanged = Signal(bool)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setPlaceholderText("Select a row to see its details.")
        self.has_content = False

    def show_row(self, cmp: Comparison | None, row: int) -> None:
        if cmp is None or row < 0 or row >= cmp.n_rows:
            self.clear()
            return
        self.setHtml(details_html(cmp, row))
        self._set_has_content(True)

    def clear(self) -> None:
        super().clear()
        self._set_has_content(False)

    def _set_has_content(self, on: bool) -> None:
        if on != self.has_content:
            self.has_content = on
            self.contentChanged.emit(on)


def details_html(cmp: Comparison, row: int) -> str:
    e = html.escape
    st = Status(cmp.status_at(row)).label if cmp.n_runs > 1 else ""
    out = [f"<h3 style='margin:2px'>{e(str(cmp.label_at('name', row)))}</h3>",
           f"<div><b>module</b> {e(str(cmp.label_at('module', row)))} &nbsp; <b>src</b> "
           f"{e(str(cmp.label_at('src', row)))}" + (f" &nbsp; <b>status</b> {st}" if st else "") + "</div>"]
    if cmp.mode == "tree":
        path = " ▸ ".join(e(s) for s in cmp.path_labels(row))
        out.append(f"<div style='color:#555'><b>call path</b> {path}</div>")
    head = "<tr><th align=left>metric</th>" + "".join(
        f"<th align=right>{run_role(cmp, i)}</th>" for i in range(cmp.n_runs))
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    for r in others:
        tag = "" if len(others) == 1 else f" [{r}]"
        head += f"<th align=right>Δ{tag}</th><th align=right>Δ%{tag}</th>"
    rows = [head + "<th align=left>&nbsp; precision</th></tr>"]
    for m in cmp.metrics:
        v = cmp.row_values(m.name, row)
        tr = f"<tr><td>{e(m.title)}</td>"
        within = cmp.n_runs > 1 and m.name in cmp.rounding and not cmp.changed_at(
            m.name, row) and v[cmp.current] != v[cmp.baseline]
        for i in range(cmp.n_runs):
            cell = format_value(float(v[i]), m.unit,
                                rounding=digits_rounding(cmp.runs, m.name, i)) \
                if cmp.node[row, i] >= 0 else "·"
            tr += f"<td align=right>{e(cell)}</td>"
        for r in others:
            d = float(v[r] - v[cmp.baseline])
            b = float(v[cmp.baseline])
            rel = d / abs(b) if b else (float("inf") if d > 0 else (float("-inf") if d < 0
                                                                   else 0.0))
            worse = (d > 0) if m.better == "lower" else ((d < 0) if m.better == "higher"
                                                         else None)
            color = "#555" if worse is None or not d else ("#b2182b" if worse else "#1a7a30")
            if within:  # no change the rounded values can support: no colour, no Δ%
                tr += "<td align=right style='color:#888'>≈0</td><td align=right>≈</td>"
                continue
            dh = digits_rounding(cmp.runs, m.name, r, cmp.baseline)
            tr += (f"<td align=right style='color:{color}'>"
                   f"{e(format_delta(d, m.unit, rounding=dh))}</td>"
                   f"<td align=right style='color:{color}'>{e(format_rel(rel))}</td>")
        rows.append(tr + f"<td style='color:#555'>&nbsp; {e(_precision_text(cmp, m, row))}</td></tr>")
    out.append("<table cellspacing=0 cellpadding=2>" + "".join(rows) + "</table>")
    mb = cmp.matched_by
    if cmp.n_runs > 1 and mb is not None and mb[row] > 0:
        how = "a rename rule" if int(mb[row]) == 1 else "an accepted suggestion"
        out.append(f"<div style='color:#555'>↔ matched across runs by {how}</div>")
    if cmp.noise is not None and cmp.n_runs >= 2:  # 3+ single runs: the current run's pair
        out.append(noise_html(cmp, row))
    return "".join(out)


def _precision_text(cmp: Comparison, m, row: int) -> str:
    """How exact this row's values of ``m`` are: exact, sampled, or ± the rounding of the
    printed percentage it was derived from."""
    kinds = {p.precision(m.name) for p in cmp.runs if p.has_metric(m.name)}
    if "rounded" in kinds and m.name in cmp.rounding:
        h = cmp.rounding[m.name][row]
        half = max(float(x) for x in h) if len(h) else 0.0
        return f"{format_precision(half, m.unit)} (from a rounded percentage)"
    return next((k for k in ("sampled", "timed") if k in kinds), "exact")


def noise_html(cmp: Comparison, row: int) -> str:
    """Spread (mean ± std, min–max per group) and p-value of each metric with noise."""
    from .models import format_pvalue

    e = html.escape
    nz = cmp.noise
    groups = nz.n_base > 1 or nz.n_new > 1
    if groups:
        note = (f"Repeated runs: baseline = mean of {nz.n_base}, current = mean of {nz.n_new} "
                f"(spread = std and min–max over the runs of each group)")
    else:
        judged = [mn.judged for mn in nz.metrics.values()]
        note = ("One run per side: only sampling error is known." if any(judged)
                else "One run per side.")
        if cmp.n_runs > 2:
            note = f"The current run [{cmp.current}] against the baseline. " + note
        if not all(judged):
            note += (" Metrics that follow the run's timing (heap censuses, measured "
                     "durations) are not judged: give repeated runs.")
    rows = ["<tr><th align=left>metric</th>"
            + ("<th align=right>baseline spread</th><th align=right>current spread</th>"
               if groups else "<th align=right>smallest detectable change</th>")
            + "<th align=right>p</th><th align=left>verdict</th></tr>"]
    for m in cmp.metrics:
        mn = nz.metrics.get(m.name)
        if mn is None:
            continue
        u = m.unit

        def spread(mean, std, lo, hi, u=u) -> str:
            return (f"{format_value(float(mean[row]), u)} ± {format_value(float(std[row]), u)} "
                    f"({format_value(float(lo[row]), u)}–{format_value(float(hi[row]), u)})")

        v = cmp.row_values(m.name, row)
        changed = v[cmp.current] != v[cmp.baseline]
        det = mn.exact or not mn.judged  # no p-value to show
        if not changed:
            verdict = "no change"
        elif not mn.judged:
            verdict = ("<span style='color:#888'>moved, not judged (follows the run's "
                       "timing)</span>" if mn.significant[row] else "within rounding")
        elif mn.significant[row]:
            verdict = "<b>real</b>" + (" (exact counter)" if det else "")
        else:
            verdict = "<span style='color:#888'>within noise</span>"
        tr = f"<tr><td>{e(m.title)}</td>"
        if groups:
            tr += (f"<td align=right>{e(spread(mn.base_mean, mn.base_std, mn.base_min, mn.base_max))}"
                   f"</td><td align=right>"
                   f"{e(spread(mn.new_mean, mn.new_std, mn.new_min, mn.new_max))}</td>")
        else:
            mdr = mn.min_detectable_at(row)
            txt = "unknown" if not mn.judged else "exact" if det else (
                f"±{100 * mdr:.0f}%" if mdr is not None and np.isfinite(mdr) else "—")
            tr += f"<td align=right>{e(txt)}</td>"
        p = "—" if det else e(format_pvalue(mn.pvalue_at(row)))
        tr += f"<td align=right>{p}</td><td>{verdict}</td></tr>"
        rows.append(tr)
    return (f"<div style='margin-top:6px'><b>Noise</b> — {e(note)}</div>"
            "<table cellspacing=0 cellpadding=2>" + "".join(rows) + "</table>")


class MessageBar(QFrame):
    """Non-modal error/info strip above the views; one line per message, closable."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label, 1)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.clear)
        lay.addWidget(close)
        self.messages: list[str] = []
        self.hide()

    def show_message(self, text: str, kind: str = "error") -> None:
        self.messages.append(text)
        bg = {"error": "#fde0dc", "warning": "#fff4ce", "info": "#e3f0fb"}.get(kind, "#eee")
        self.setStyleSheet(f"#messageBar {{ background: {bg}; border: 1px solid #ccc; }}")
        self.label.setText("\n".join(self.messages[-5:]))
        self.show()

    def clear(self) -> None:
        self.messages.clear()
        self.label.clear()
        self.hide()

    @property
    def text(self) -> str:
        return self.label.text()


class DropOverlay(QWidget):
    """Translucent highlight with a hint, shown over a widget while files are dragged onto it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.text = "Drop files"
        self.hide()

    def show_over(self, target: QWidget, text: str) -> None:
        self.text = text
        top_left = target.mapTo(self.parentWidget(), target.rect().topLeft())
        self.setGeometry(top_left.x(), top_left.y(), target.width(), target.height())
        self.raise_()
        self.show()
        self.update()

    def paintEvent(self, _ev) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(33, 102, 172, 50))
        pen = QPen(QColor(33, 102, 172), 3, Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawRect(self.rect().adjusted(2, 2, -3, -3))
        f = QFont(self.font())
        f.setPointSize(f.pointSize() + 6)
        f.setBold(True)
        p.setFont(f)
        p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.text)
        p.end()


class EmptyState(QWidget):
    """What an empty window shows: a drop target and the sample-comparison button; while
    the window's first files are read, what it reads instead (:meth:`set_loading`)."""

    IDLE_HINT = (
        "Drop one profile here to view it, or two to compare them<br>"
        "(the older file becomes the baseline).<br><br>"
        "GHC <tt>.prof</tt> / <tt>-pj</tt> JSON / ticky / <tt>.hp</tt> / RTS stats, "
        "Linux perf, pprof, Julia <tt>.mem</tt>")
    _HINT_STYLE = "#dropHint {{ border: {border}; padding: 24px; color: #345; font-size: 13pt; }}"
    _DROP_BORDER = "2px dashed #8aa; border-radius: 12px"

    openSample = Signal()
    openFiles = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        title = QLabel("<h2>profdiff</h2>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(title)
        hint = QLabel(self.IDLE_HINT)
        self.hint = hint
        self.loading: str | None = None  # what set_loading says is being read
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setObjectName("dropHint")
        hint.setMinimumHeight(160)
        hint.setStyleSheet(self._HINT_STYLE.format(border=self._DROP_BORDER))
        lay.addWidget(hint, 0, Qt.AlignmentFlag.AlignCenter)
        row = QHBoxLayout()
        row.addStretch(1)
        b1 = QToolButton()
        b1.setText("Open files…")
        b1.clicked.connect(self.openFiles)
        b2 = QToolButton()
        b2.setText("Open sample comparison")
        b2.setObjectName("openSampleButton")
        b2.clicked.connect(self.openSample)
        self.buttons = (b1, b2)
        for b in self.buttons:
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.setMinimumHeight(32)
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addStretch(2)

    def set_loading(self, what: str | None) -> None:
        """Say what is being read (``what``, e.g. "Loading a.prof, b.prof"), or (None)
        invite a drop again.  Why: while the files named on the command line were read,
        the empty window asked for a file to be dropped or opened, as if it had none."""
        if what == self.loading:
            return  # a load that ends behind the runs' page restyles nothing
        self.loading = what
        self.hint.setText(self.IDLE_HINT if what is None else f"{html.escape(what)}…")
        # no drop target's dashed frame around what is being read
        self.hint.setStyleSheet(self._HINT_STYLE.format(
            border=self._DROP_BORDER if what is None else "2px solid transparent"))
        for b in self.buttons:
            b.setVisible(what is None)


def flash_later(widget: QWidget, ms: int = 0) -> None:
    QTimer.singleShot(ms, widget.update)
