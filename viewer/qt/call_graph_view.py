"""The "Callers / callees" tab for runs that record call edges (callgrind).

callgrind files hold caller -> callee edges, not stacks, so instead of a call tree this
tab shows, for the function picked on the left (the functions of the comparison, largest
change first, filterable), its callers and its callees in the baseline and the current
run: calls count and inclusive cost of each edge, with Δ.  The data comes from
:func:`viewer.call_edges.edge_rows`; the widget only lays it out.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.call_edges import edge_rows, has_call_edges
from profdiff.viewer.compare import Comparison
from profdiff.viewer.units import format_delta, format_value

from .column_sizing import ElideLeftDelegate

MAX_FUNCTIONS = 2000  # rows in the function list (largest |Δ| first; the filter finds others)


def wants_call_graph(cmp: Comparison) -> bool:
    return bool(cmp.runs) and all(has_call_edges(p) for p in cmp.runs)


def _item(text: str, value: float | None = None) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if value is not None:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


MIN_NAME_CHARS = 24
"""The name column is never narrower than this many average characters: a narrow tab
scrolls sideways instead (at 900 px the callers' names had shrunk to "alle")."""


class _NamesTable(QTableWidget):
    """A table whose first column (names) takes the room its numbers leave, but at least
    :data:`MIN_NAME_CHARS` characters."""

    def __init__(self, rows: int, cols: int) -> None:
        super().__init__(rows, cols)
        self.horizontalHeader().sectionResized.connect(
            lambda col, _old, _new: col and self.fit_names())

    def fit_names(self) -> None:
        h = self.horizontalHeader()
        numbers = sum(h.sectionSize(c) for c in range(1, h.count()))
        least = MIN_NAME_CHARS * self.fontMetrics().averageCharWidth()
        width = max(least, self.viewport().width() - numbers)
        if h.count() and h.sectionSize(0) != width:
            h.resizeSection(0, width)

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self.fit_names()


class CallGraphView(QWidget):
    """Function list | callers table over callees table, for the comparison's two runs."""

    def __init__(self, cmp: Comparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        self.base = cmp.runs[cmp.baseline]
        self.new = cmp.runs[cmp.current] if cmp.n_runs > 1 else self.base
        self.cost_metric = self.base.default_metric or self.base.metrics[0].name
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.filter = QLineEdit(placeholderText="filter functions…")
        self.filter.setObjectName("callGraphFilter")
        lay.addWidget(self.filter)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.functions = self._table(["function", "Δ self", "Δ incl."], "callGraphFunctions")
        right = QSplitter(Qt.Orientation.Vertical)
        self.callers = self._table(self._edge_headers("caller"), "callGraphCallers")
        self.callees = self._table(self._edge_headers("callee"), "callGraphCallees")
        self.title = QLabel("")
        for w in (self.title, self.callers, self.callees):
            right.addWidget(w)
        split.addWidget(self.functions)
        split.addWidget(right)
        lay.addWidget(split, 1)
        self._keys: list[str] = []
        self.filter.textChanged.connect(self._fill_functions)
        self.functions.currentCellChanged.connect(lambda row, *_: self.show_row(row))
        self._fill_functions("")

    def _table(self, headers: list[str], name: str) -> QTableWidget:
        """A table whose first column (function names) takes the room the numbers leave
        (:class:`_NamesTable`), one line a row, names shortened from the left as the other
        views do (their own name stays).  Why: Qt's default widths cut every name to
        ``rsmat.std::rt:…`` in 100 px beside an empty half of the tab, and wrapped some
        over two lines."""
        t = _NamesTable(0, len(headers))
        t.setObjectName(name)
        t.setHorizontalHeaderLabels(headers)
        t.verticalHeader().hide()
        t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        t.setWordWrap(False)
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
        t.setItemDelegateForColumn(0, ElideLeftDelegate(t))
        h = t.horizontalHeader()
        h.setStretchLastSection(False)
        for c in range(1, len(headers)):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        return t

    def _edge_headers(self, what: str) -> list[str]:
        return [what, "calls base", "calls new", "cost base", "cost new", "Δ cost"]

    def _fill_functions(self, text: str) -> None:
        cmp, m = self.cmp, self.cost_metric
        inc = m.replace("self_", "total_", 1)
        d_self = cmp.values[m][:, cmp.current] - cmp.values[m][:, cmp.baseline]
        d_inc = (cmp.values[inc][:, cmp.current] - cmp.values[inc][:, cmp.baseline]
                 if inc in cmp.values else np.zeros(cmp.n_rows))
        labels = [f"{mod}.{n}" if mod else n for mod, n in
                  zip(cmp.module.tolist(), cmp.name.tolist(), strict=True)]
        rows = [i for i, lab in enumerate(labels) if text.lower() in lab.lower()]
        rows.sort(key=lambda i: -abs(np.nan_to_num(d_inc[i])))
        rows = rows[:MAX_FUNCTIONS]
        self._keys = [f"{cmp.module[i]}\x1f{cmp.name[i]}" for i in rows]
        unit = self.base.metric(m).unit
        self.functions.setRowCount(len(rows))
        for r, i in enumerate(rows):
            self.functions.setItem(r, 0, _item(labels[i]))
            for c, v in ((1, d_self[i]), (2, d_inc[i])):
                v = float(np.nan_to_num(v))
                self.functions.setItem(r, c, _item(format_delta(v, unit), v))
        if rows:
            self.functions.setCurrentCell(0, 0)

    def show_row(self, row: int) -> None:
        if not 0 <= row < len(self._keys):
            return
        key = self._keys[row]
        self.title.setText(key.replace("\x1f", ".").lstrip("."))
        unit = self.base.metric(self.cost_metric).unit
        for table, side in ((self.callers, "callers"), (self.callees, "callees")):
            data = edge_rows(self.base, self.new, key, side, self.cost_metric)
            table.setRowCount(len(data))
            for r, e in enumerate(data):
                table.setItem(r, 0, _item(e.label))
                cells = [(str(c) if c is not None else "·", c) for c in e.calls]
                cells += [(format_value(v, unit) if v is not None else "·", v) for v in e.cost]
                cells.append((format_delta(e.delta, unit), e.delta))
                for c, (text, v) in enumerate(cells, 1):
                    table.setItem(r, c, _item(text, v if v is not None else 0))

    def set_scale(self, _scale) -> None:
        """Palette changes do not affect this tab (no colours)."""
