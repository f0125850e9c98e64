"""The "Disassembly" tab: one function's instructions in two runs, aligned side by side.

Opened for a perf row with :func:`open_disassembly` (the main window's "Compare
instructions…").  The work (two ``perf script`` runs, objdump, alignment) happens in the
global ``QThreadPool``; the tab shows "Reading…" until :class:`FunctionComparison`
arrives, or the error message (missing binary/objdump, build-id mismatch) in its place.

The table is a lazy :class:`InstructionPairsModel` over :class:`AlignedRows` arrays:
removed instructions are grey, inserted ones yellow, the share columns are shaded by heat
and the Δ column by the shared diverging scale.  The "jumps to" columns give the row of a
direct jump's target; double-clicking such a row scrolls to the target.  Below, the
summary panel compares both runs (code size, jumps/calls, indirect-jump share, most
jumped-to blocks, hottest instructions, the block whose samples grew most).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRunnable,
    Qt,
    QThreadPool,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QStyledItemDelegate,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.errors import ProfdiffError
from profdiff.viewer.annotate import FunctionComparison, compare_function
from profdiff.viewer.annotate.instructions import KIND_NAMES
from profdiff.viewer.annotate.rows import AlignedRows, aligned_rows, side_lanes
from profdiff.viewer.colors import ADDED, REMOVED, DivergingScale

COLUMNS = ("", "A address", "A %", "", "A instruction", "A jumps",
           "B address", "B %", "", "B instruction", "B jumps", "Δ pp", "source")
(MARK, A_ADDR, A_PCT, A_ARROWS, A_TEXT, A_JUMP, B_ADDR, B_PCT, B_ARROWS, B_TEXT, B_JUMP, DELTA,
 SOURCE) = range(13)
ARROW_COLUMNS = (A_ARROWS, B_ARROWS)
LANE_PX = 6
TARGET_ROW_ROLE = Qt.ItemDataRole.UserRole + 1
"""``data(index, TARGET_ROW_ROLE)``: the row a direct jump in this row goes to, or -1."""
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_HEAT = (255, 190, 120)


class InstructionPairsModel(QAbstractTableModel):
    """Rows = alignment pairs of :class:`FunctionComparison`; cells read numpy arrays."""

    def __init__(self, cmp: FunctionComparison, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        self.rows: AlignedRows = aligned_rows(cmp)
        self.lanes = (side_lanes(self.rows, 0), side_lanes(self.rows, 1))
        self.scale = DivergingScale(dead_zone=0.05, clamp=5.0)
        peak = max(float(np.nanmax(self.rows.share_a, initial=0.0)),
                   float(np.nanmax(self.rows.share_b, initial=0.0)))
        self._peak = peak or 1.0
        self._mono = QFont("monospace")
        self._mono.setStyleHint(QFont.StyleHint.TypeWriter)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section] if 0 <= section < len(COLUMNS) else None
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return str(section)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(r, c)
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._background(r, c)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if c in (A_ADDR, A_PCT, B_ADDR, B_PCT, DELTA) else _LEFT
        if role == Qt.ItemDataRole.FontRole and c in (A_ADDR, A_TEXT, B_ADDR, B_TEXT):
            return self._mono
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(r, c)
        if role == TARGET_ROW_ROLE:
            return int(self.target_row(r))
        return None

    def target_row(self, r: int) -> int:
        """The row of the direct jump target in row ``r`` (B's if both jump), else -1."""
        t = int(self.rows.target_row_b[r])
        return t if t >= 0 else int(self.rows.target_row_a[r])

    def _side(self, c: int) -> tuple[int, np.ndarray]:
        if c in (A_ADDR, A_PCT, A_ARROWS, A_TEXT, A_JUMP):
            return 0, self.rows.ia
        return 1, self.rows.jb

    def _text(self, r: int, c: int) -> str | None:
        rows = self.rows
        if c == MARK:
            return "−" if rows.jb[r] < 0 else "+" if rows.ia[r] < 0 else \
                "≈" if rows.reshaped[r] else ""
        if c == DELTA:
            return f"{rows.delta[r]:+.2f}"
        if c in ARROW_COLUMNS:
            return ""  # drawn by JumpArrowDelegate
        if c == SOURCE:
            k, i = (1, rows.jb[r]) if rows.jb[r] >= 0 else (0, rows.ia[r])
            return Path(str(self.cmp.runs[k].instructions.source[i])).name
        k, idx = self._side(c)
        i = int(idx[r])
        if i < 0:
            return ""
        ins = self.cmp.runs[k].instructions
        if c in (A_ADDR, B_ADDR):
            return f"{int(ins.address[i]):x}"
        if c in (A_PCT, B_PCT):
            return f"{self.cmp.runs[k].share()[i]:.2f}" if self.cmp.runs[k].samples[i] else ""
        if c in (A_TEXT, B_TEXT):
            return str(ins.text[i])
        t = (rows.target_row_a if k == 0 else rows.target_row_b)[r]
        n_in = int((rows.incoming_a if k == 0 else rows.incoming_b)[r])
        parts = ([f"→ row {int(t)}"] if t >= 0 else []) + ([f"← {n_in}"] if n_in else [])
        return "  ".join(parts)

    def _background(self, r: int, c: int) -> QBrush | None:
        rows = self.rows
        if c == DELTA:
            if rows.delta[r] == 0:
                return None
            return QBrush(QColor(*self.scale.color(float(rows.delta[r]))))
        if c in (A_PCT, B_PCT):
            v = (rows.share_a if c == A_PCT else rows.share_b)[r]
            if np.isnan(v) or v <= 0:
                return None
            t = min(1.0, v / self._peak)
            return QBrush(QColor(*(int(255 + (h - 255) * t) for h in _HEAT)))
        if rows.jb[r] < 0:
            return QBrush(QColor(*REMOVED))
        if rows.ia[r] < 0:
            return QBrush(QColor(*ADDED))
        return None

    def _tooltip(self, r: int, c: int) -> str | None:
        if c in ARROW_COLUMNS:
            return "direct jumps of this run: blue goes back (a loop), grey goes forward"
        if c in (A_JUMP, B_JUMP):
            return ("→ row N: this direct jump goes to row N (double-click to go there); "
                    "← K: K direct jumps in the function go to this instruction")
        if c == MARK:
            return ("removed in B" if self.rows.jb[r] < 0 else
                    "inserted in B" if self.rows.ia[r] < 0 else
                    "≈ the same instruction with other registers (paired by shape between "
                    "two exact matches)" if self.rows.reshaped[r] else
                    "same normalised instruction")
        k, idx = self._side(c) if c != SOURCE else ((1, self.rows.jb) if self.rows.jb[r] >= 0
                                                    else (0, self.rows.ia))
        i = int(idx[r])
        if i < 0:
            return None
        run = self.cmp.runs[k]
        ins = run.instructions
        parts = [f"{'AB'[k]}: {ins.text[i]}", f"kind: {KIND_NAMES[int(ins.kind[i])]}",
                 f"samples: {int(run.samples[i])} of {run.total}",
                 f"normalised: {ins.norm[i]}"]
        if ins.source[i]:
            parts.append(f"source: {ins.source[i]}")
        return "\n".join(parts)


class JumpArrowDelegate(QStyledItemDelegate):
    """Paints the jump arrows of one side in its gutter column from the model's lanes."""

    def paint(self, painter: QPainter, option, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        model = index.model()
        if not isinstance(model, InstructionPairsModel):
            return
        lanes = model.lanes[0 if index.column() == A_ARROWS else 1]
        rect = option.rect
        mid = rect.center().y()
        painter.save()
        for lane, up, down, end, back in lanes.at(index.row()):
            x = rect.right() - 3 - lane * LANE_PX
            painter.setPen(QPen(QColor(40, 90, 200) if back else QColor(120, 120, 120), 1))
            if up:
                painter.drawLine(x, rect.top(), x, mid)
            if down:
                painter.drawLine(x, mid, x, rect.bottom())
            if end:
                painter.drawLine(x, mid, rect.right(), mid)
            if end == 2:  # arrow head pointing at the target instruction
                r = rect.right()
                painter.drawLine(r - 3, mid - 3, r, mid)
                painter.drawLine(r - 3, mid + 3, r, mid)
        painter.restore()


class _Signals(QObject):
    done = Signal(object)
    failed = Signal(str)


class AnnotateTask(QRunnable):
    """Runs :func:`compare_function` off the GUI thread."""

    def __init__(self, symbol: str, path_a: str, path_b: str, rules: Sequence = ()) -> None:
        super().__init__()
        self.args = (path_a, path_b, symbol)
        self.rules = list(rules)
        self.signals = _Signals()

    def run(self) -> None:
        try:
            cmp = compare_function(*self.args, rules=self.rules)
        except ProfdiffError as e:
            self.signals.failed.emit(str(e))
        except Exception as e:  # noqa: BLE001 - the GUI must show it, not die
            self.signals.failed.emit(f"unexpected error: {type(e).__name__}: {e}")
        else:
            self.signals.done.emit(cmp)


class DisassemblyView(QWidget):
    """Aligned table above a summary panel; fed by :meth:`set_result` or :meth:`start`."""

    def __init__(self, symbol: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.symbol = symbol
        self.key: tuple[str, str, str] = (symbol, "", "")  # (symbol, run A, run B) shown
        self.model: InstructionPairsModel | None = None
        self._task: AnnotateTask | None = None
        self.status = QLabel(f"Reading the recordings for {symbol}…")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableView()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setDefaultSectionSize(18)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(self._follow_jump)
        self._arrows = JumpArrowDelegate(self.table)
        for c in ARROW_COLUMNS:
            self.table.setItemDelegateForColumn(c, self._arrows)
        self.summary = QTextBrowser()
        self.summary.setOpenLinks(False)
        self.summary.anchorClicked.connect(lambda url: self.scroll_to_row(int(url.fragment() or -1)))
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.summary)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)

    def start(self, path_a: str, path_b: str, rules: Sequence = ()) -> None:
        """Compute in the thread pool; the result (or error) replaces the status line."""
        self._task = AnnotateTask(self.symbol, path_a, path_b, rules)
        self._task.setAutoDelete(False)
        self._task.signals.done.connect(self.set_result)
        self._task.signals.failed.connect(self.set_error)
        QThreadPool.globalInstance().start(self._task)

    def set_error(self, message: str) -> None:
        self.status.setText(f"Cannot compare the instructions of {self.symbol}: {message}")
        self.status.setStyleSheet("color: #a00000")

    def set_result(self, cmp: FunctionComparison) -> None:
        self.model = InstructionPairsModel(cmp, self)
        self.table.setModel(self.model)
        header = self.table.horizontalHeader()
        for c, w in ((MARK, 18), (A_ADDR, 70), (A_PCT, 52), (A_TEXT, 260), (A_JUMP, 110),
                     (B_ADDR, 70), (B_PCT, 52), (A_ARROWS, 8 * LANE_PX + 8),
                     (B_ARROWS, 8 * LANE_PX + 8), (B_TEXT, 260), (B_JUMP, 110), (DELTA, 56)):
            # never narrower than the column's title ("A address" was cut to "addres")
            self.table.setColumnWidth(c, max(w, header.sectionSizeFromContents(c).width()))
        a, b = cmp.runs
        warn = [f"{'AB'[k]}: {w}" for k, r in enumerate(cmp.runs) for w in r.warnings]
        self.status.setText(
            f"{a.symbol} in A ({a.path}) vs {b.symbol} in B ({b.path}): {len(a.instructions):,}"
            f" and {len(b.instructions):,} instructions, {a.total:,} and {b.total:,} samples"
            + ("\n" + "\n".join(warn) if warn else ""))
        self.summary.setHtml(summary_html(cmp))
        hot = int(np.argmax(np.nan_to_num(self.model.rows.share_b))) if len(self.model.rows) else 0
        self.scroll_to_row(hot)

    def scroll_to_row(self, row: int) -> None:
        if self.model is None or not 0 <= row < self.model.rowCount():
            return
        idx = self.model.index(row, A_TEXT)
        self.table.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.table.selectRow(row)

    def _follow_jump(self, index: QModelIndex) -> None:
        if self.model is not None:
            self.scroll_to_row(self.model.target_row(index.row()))


def summary_html(cmp: FunctionComparison) -> str:
    """The summary panel: facts of both runs, hottest instructions and blocks, with links
    (``#row``) that scroll the table to the instruction."""
    rows = aligned_rows(cmp)
    a, b = cmp.summaries
    facts = (("code size (bytes)", "code_bytes"), ("instructions", "instructions"),
             ("basic blocks", "basic_blocks"), ("direct jumps", "direct_jumps"),
             ("conditional jumps", "conditional_jumps"), ("indirect jumps", "indirect_jumps"),
             ("direct calls", "direct_calls"), ("indirect calls", "indirect_calls"),
             ("samples (function, self)", "samples"),
             ("samples on indirect jumps %", "indirect_jump_share"))
    out = ["<table cellspacing=0 cellpadding=0><tr><td valign=top>",
           "<table cellspacing=0 cellpadding=2><tr><th></th><th>A</th><th>B</th></tr>"]
    out += [f"<tr><td>{label}</td><td align=right>{_f(a[k])}</td>"
            f"<td align=right>{_f(b[k])}</td></tr>" for label, k in facts]
    out.append("</table></td><td width=24></td><td valign=top>")
    inc = b["largest_increase_block"]
    if inc:
        row = int(rows.row_of_b[inc["index"]])
        out.append(f"<p><b>Largest sample increase:</b> <a href='#{row}'>block at "
                   f"{inc['address']}</a> ({inc['instructions']} instructions): "
                   f"{inc['base_samples']} → {inc['samples']} samples "
                   f"({inc['base_share']:.2f} % → {inc['share']:.2f} %) "
                   f"{html.escape(Path(inc['source']).name) if inc['source'] else ''}</p>")
    for k, s in enumerate((a, b)):
        row_of = rows.row_of_a if k == 0 else rows.row_of_b
        side = "AB"[k]
        hot = ", ".join(f"<a href='#{int(row_of[h['index']])}'>{html.escape(h['text'])}</a> "
                        f"{h['share']:.1f} %" for h in s["hottest"][:5])
        jumped = ", ".join(f"<a href='#{int(row_of[m['index']])}'>{m['address']}</a>: target "
                           f"of {m['jump_target_of']} sites ({m['share']:.1f} %)"
                           for m in s["most_jumped_to"][:3])
        out.append(f"<p><b>{side} hottest:</b> {hot or '(no samples)'}<br>"
                   f"<b>{side} most jumped-to blocks:</b> {jumped or '(none)'}</p>")
    out.append("</td></tr></table>")
    return "".join(out)


def _f(v: object) -> str:
    return f"{v:.2f}" if isinstance(v, float) else html.escape(str(v))


def open_disassembly(window: QWidget, symbol: str, path_a: str, path_b: str,
                     rules: Sequence = ()) -> DisassemblyView:
    """Add a Disassembly tab comparing ``symbol`` between two perf.data and start it.

    ``window``: the main window (its ``add_tab(widget, title)`` is used when present) or
    any ``QTabWidget``.
    """
    tabs = getattr(window, "tabs", window)
    for k in range(tabs.count()):  # the same comparison is already open: show it
        w = tabs.widget(k)
        if isinstance(w, DisassemblyView) and w.key == (symbol, str(path_a), str(path_b)):
            tabs.setCurrentWidget(w)
            return w
    view = DisassemblyView(symbol)
    view.key = (symbol, str(path_a), str(path_b))
    title = f"Disassembly: {symbol}"
    if hasattr(window, "add_tab"):
        window.add_tab(view, title)
        tabs = getattr(window, "tabs", None)
        if tabs is not None:
            tabs.setCurrentWidget(view)
    else:
        window.addTab(view, title)  # type: ignore[attr-defined]
        window.setCurrentWidget(view)  # type: ignore[attr-defined]
    view.start(path_a, path_b, rules)
    return view
