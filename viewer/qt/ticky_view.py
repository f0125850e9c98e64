"""GHC ticky-ticky reports side by side: the closures table and the counters panel.

*Closures*: one row per closure (a ticky table row) aligned across runs by the reader's
unique-free ``match`` identity, with Entries / Alloc / Alloc'd of every run and their
deltas, sorted by Δ alloc.  A *note* column says what a number alone cannot:

* ``=`` (and grey text): the closure has exactly the same counters in every run - the
  bulk of a ticky diff, which the eye should skip;
* ``only in <run>``: the closure exists in some runs only (inlined away, new code);
* ``ambiguous i/n``: several table rows share one key (``sat`` closures of one
  function); they are paired by order, which may pair the wrong ones - tick
  *sum duplicates* to compare their sums instead (a flat-mode alignment, which sums
  rows per key).

*Group by module* shows the same closures as a tree under their modules (built by
:func:`viewer.ticky_groups.group_by_module`, aligned in tree mode): a module row carries
the sums of its closures per run and their deltas, so "which module got more expensive"
is one glance; it combines with *sum duplicates* (duplicates summed within the module).

Alloc'd is only counted with ``-ticky-allocd``; when it is zero everywhere its columns
are hidden and the summary line says so.

*Counters*: the run-level summary (enters, calls, returns, updates, allocation) and the
raw RTS counters in a :class:`~viewer.qt.totals_table.TotalsTable`, plus the return
histograms (``RET_NEW`` ...) as small tables of counts and shares per arity.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison
from profdiff.viewer.factorize import factorize
from profdiff.viewer.session import Session
from profdiff.viewer.units import format_delta, format_value

from .models import Column, ComparisonTreeModel, diff_columns
from .totals_table import TotalsData, TotalsTable, group_keys, labels_of

TICKY_METRICS = ("entries", "alloc", "allocd", "alloc_words")
RAW_PREFIX = "raw:"
NOTE_ROLE = Qt.ItemDataRole.UserRole + 21
"""``data(index, NOTE_ROLE)`` -> "identical" / "partial" / "ambiguous" flags of a row."""


# ------------------------------------------------------------------------------------------
# closures
# ------------------------------------------------------------------------------------------
def ambiguous_keys(cmp: Comparison) -> dict[str, list[int]]:
    """Key -> rows-per-run count for keys some run has on several table rows."""
    out: dict[str, list[int]] = {}
    for r, p in enumerate(cmp.runs):
        for d in p.extras.get("ambiguous_keys", ()) or ():
            k = f"{d.get('module', '')}\x1f{d.get('match', '')}"
            out.setdefault(k, [0] * cmp.n_runs)[r] = int(d.get("count", 2))
    return out


def identical_rows(cmp: Comparison, metrics: list[str] | None = None) -> np.ndarray:
    """bool[n]: present in every run with exactly equal values of every metric."""
    same = cmp.present.all(axis=1)
    for m in metrics or list(cmp.values):
        v = cmp.values[m]
        same &= np.all((v == v[:, :1]) | (np.isnan(v) & np.isnan(v[:, :1])), axis=1)
    return same


class TickyClosureModel(ComparisonTreeModel):
    """:class:`ComparisonTreeModel` plus a ``note`` column and grey identical rows."""

    def __init__(self, cmp: Comparison, columns: list[Column], parent=None,
                 summed: bool | None = None) -> None:
        super().__init__(cmp, columns, parent=parent)
        labels = labels_of(cmp)
        metrics = [m for m in TICKY_METRICS if m in cmp.values]
        # grouped by module (a two-level tree): module rows are the roots with children
        self.grouped = bool(cmp.mode == "tree" and cmp.n_rows and np.any(cmp.parent >= 0))
        self.summed = cmp.mode == "flat" if summed is None else summed
        self.identical = identical_rows(cmp, metrics) if cmp.n_runs > 1 else \
            np.zeros(cmp.n_rows, dtype=bool)
        if self.grouped:
            # a module is "=" only when every closure in it is (equal sums can hide moves)
            differs = cmp.parent[(cmp.parent >= 0) & ~self.identical]
            self.identical[differs] = False
            self._seed_factors(metrics)
        pres = cmp.present
        self.partial = pres.any(axis=1) & ~pres.all(axis=1)
        amb = ambiguous_keys(cmp)
        self.ambiguous = np.array([k in amb for k in cmp.keys], dtype=bool) \
            if cmp.n_rows else np.zeros(0, dtype=bool)
        notes = np.full(cmp.n_rows, "", dtype=object)
        tips = np.full(cmp.n_rows, "", dtype=object)
        if cmp.n_runs > 1:
            notes[self.identical] = "="
            tips[self.identical] = "identical in every run"
        # short run tags as the value columns' headers use them (base/new, #i)
        tags = [("base" if i == cmp.baseline else "new") if cmp.n_runs == 2 else
                ("base" if i == cmp.baseline else f"#{i}") for i in range(cmp.n_runs)]
        for r in np.flatnonzero(self.partial):
            where = [i for i in range(cmp.n_runs) if pres[r, i]]
            notes[r] = "only in " + ", ".join(tags[i] for i in where)
            tips[r] = "present only in " + ", ".join(labels[i] for i in where)
        if self.ambiguous.any():
            import pandas as pd

            keys = pd.Series(cmp.keys)
            ordinal = keys.groupby(keys).cumcount().to_numpy() + 1
            for r in np.flatnonzero(self.ambiguous):
                counts = amb[cmp.keys[r]]
                per_run = ", ".join(f"{labels[i]}: {c or 1}" for i, c in enumerate(counts))
                if self.summed:
                    tag = f"sum of {max(counts)}"
                    tip = f"several table rows share this key ({per_run} rows); summed"
                else:
                    tag = f"ambiguous {ordinal[r]}/{max(counts)}"
                    tip = (f"several table rows share this key ({per_run} rows); they are "
                           "paired by order - tick \"sum duplicates\" to compare their sums")
                notes[r] = f"{notes[r]}; {tag}" if notes[r] else tag
                tips[r] = f"{tips[r]}\n{tip}" if tips[r] else tip
        self.notes, self.note_tips = notes, tips
        self._amb_brush = QBrush(QColor(255, 228, 196))

    def _seed_factors(self, metrics: list[str]) -> None:
        """Colour Δ cells on the flat table's scale: percentage points of the run's total
        over its closures.  The grouped tree marks the counters inclusive (module rows are
        sums), which would otherwise scale by the largest module instead of the run."""
        leaves = self.cmp.parent >= 0
        for m in metrics:
            met = self.cmp.metric_by_name[m]
            f = 1.0
            for r in (self.cmp.baseline, self.cmp.current):
                den = float(np.nansum(np.abs(self.cmp.values[m][leaves, r])))
                if den > 0:
                    f = 100.0 / den
                    break
            self._factors[m] = -f if met.better == "higher" else \
                (0.0 if met.better == "none" else f)

    def column_array(self, col: int) -> np.ndarray:
        if self.columns[col].kind == "note":
            return self.notes
        return super().column_array(col)

    def sort_key(self, col: int) -> np.ndarray:
        if self.columns[col].kind == "note":
            codes, _ = factorize(np.asarray(self.notes, dtype=object), sort=True)
            return codes.astype(np.float64)
        return super().sort_key(col)

    def _text(self, c: Column, col: int, r: int) -> str:
        if c.kind == "note":
            return str(self.notes[r])
        return super()._text(c, col, r)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r = int(index.internalId())
        c = self.columns[index.column()]
        if role == NOTE_ROLE:
            return {"identical": bool(self.identical[r]), "partial": bool(self.partial[r]),
                    "ambiguous": bool(self.ambiguous[r])}
        if c.kind == "note":
            if role == Qt.ItemDataRole.ToolTipRole:
                return str(self.note_tips[r]) or None
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(Qt.AlignmentFlag.AlignCenter) if self.notes[r] == "=" else \
                    int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            if role == Qt.ItemDataRole.BackgroundRole and self.ambiguous[r]:
                return self._amb_brush
            if role == Qt.ItemDataRole.ForegroundRole:
                return self._grey if self.identical[r] else None
            if role == Qt.ItemDataRole.DisplayRole:
                return str(self.notes[r])
            if role in (Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.FontRole):
                return None
        if role == Qt.ItemDataRole.ForegroundRole and self.identical[r]:
            return self._grey
        if role == Qt.ItemDataRole.FontRole and self.grouped and self._parents[r] < 0 \
                and c.kind == "name":
            return self._bold  # module rows
        return super().data(index, role)


def closure_columns(cmp: Comparison) -> tuple[list[Column], list[str]]:
    """(columns, hidden metrics): name, module, note, then per metric base/new/Δ...

    Metrics zero (or missing) in every run are left out - Alloc'd without
    ``-ticky-allocd`` is all zeros and would double the table's width for nothing.
    """
    metrics, hidden = [], []
    for m in TICKY_METRICS:
        if m not in cmp.values:
            continue
        v = np.nan_to_num(cmp.values[m], nan=0.0)
        (metrics if np.any(v != 0) else hidden).append(m)
    cols = []
    for c in diff_columns(cmp, metrics):
        if c.kind == "name":
            cols.append(replace(c, header="closure"))
        elif c.kind == "module":
            cols.append(c)
            if cmp.n_runs > 1:
                cols.append(Column("note", header="note",
                                   tooltip="= identical in every run; only in ...; ambiguous"))
        else:
            cols.append(c)
    return cols, hidden


class TickyClosuresView(QWidget):
    """The closures table with filter, *hide identical* and *sum duplicates* controls."""

    def __init__(self, source: Session | Comparison, parent=None) -> None:
        super().__init__(parent)
        self.session = Session.of(source)  # every alignment below uses its rules
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter closures / modules")
        self.filter.setClearButtonEnabled(True)
        self.hide_identical = QCheckBox("hide identical")
        self.hide_identical.setToolTip("hide closures whose counters are equal in every run")
        self.sum_dups = QCheckBox("sum duplicates")
        self.sum_dups.setToolTip("compare the sums of table rows that share one key "
                                 "(e.g. several 'sat' closures of one function) instead of "
                                 "pairing them by order")
        self.group_modules = QCheckBox("group by module")
        self.group_modules.setToolTip("show the closures as a tree under their modules; "
                                      "module rows carry the sums of their closures")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.filter, 2)
        bar.addWidget(self.hide_identical)
        bar.addWidget(self.sum_dups)
        bar.addWidget(self.group_modules)
        self.view = QTreeView()
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QTreeView.SelectionBehavior.SelectRows)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(self.summary)
        lay.addWidget(self.view, 1)
        self.model: TickyClosureModel | None = None
        self.filter.textChanged.connect(lambda _t: self._apply_filter())
        self.hide_identical.toggled.connect(lambda _v: self._apply_filter())
        self.sum_dups.toggled.connect(lambda _v: self.rebuild())
        self.group_modules.toggled.connect(lambda _v: self.rebuild())
        self.rebuild()

    @property
    def grouped(self) -> bool:
        return self.group_modules.isChecked()

    def rebuild(self) -> None:
        summed = self.sum_dups.isChecked()
        if self.grouped:
            cmp = self.session.ticky_groups(summed)
        else:
            cmp = self.session.comparison("flat" if summed else "tree")
        self.cmp = cmp
        cols, hidden = closure_columns(cmp)
        old = self.model
        self.model = TickyClosureModel(cmp, cols, parent=self, summed=summed)
        self.view.setRootIsDecorated(self.model.grouped)
        self.view.setModel(self.model)
        if old is not None:
            old.deleteLater()
        self._sort_default()
        self._apply_filter()
        if self.model.grouped:  # show the shape: open the first (largest change) module
            top = self.first_rows(1)
            if top:
                self.view.expand(self.model.index_for_row(top[0]))
        self._fit()
        self.summary.setText(self._summary_text(hidden))

    def _summary_text(self, hidden: list[str]) -> str:
        m, cmp = self.model, self.cmp
        labels = labels_of(cmp)
        leaf = cmp.parent >= 0 if m.grouped else np.ones(cmp.n_rows, dtype=bool)
        n = ", ".join(f"{int(cmp.present[leaf, i].sum())} in {labels[i]}"
                      for i in range(cmp.n_runs))
        parts = [f"closures: {n}"]
        if m.grouped:
            parts.append(f"{int((~leaf).sum())} modules")
        if cmp.n_runs > 1:
            parts.append(f"<span style='color:#888'>{int((m.identical & leaf).sum())} "
                         "identical (=)</span>")
            parts.append(f"{int((m.partial & leaf).sum())} only in some runs")
        namb = len(ambiguous_keys(cmp))
        if namb:
            parts.append(f"<span style='background:#ffe4c4'>{namb} ambiguous keys</span>"
                         + (" (summed)" if m.summed else " (paired by order)"))
        text = " · ".join(parts)
        if hidden:
            names = ", ".join(cmp.metric_by_name[h].title for h in hidden)
            text += (f"<br><span style='color:#888'>{names} hidden: zero in every run "
                     "(build with -ticky-allocd to count it)</span>")
        return text

    def _sort_default(self) -> None:
        cols = self.model.columns
        pick = next((i for i, c in enumerate(cols) if c.kind == "delta" and
                     c.metric in ("alloc", "alloc_words")), None)
        if pick is None:
            pick = next((i for i, c in enumerate(cols) if c.kind == "value"), 0)
        self.view.sortByColumn(pick, Qt.SortOrder.DescendingOrder)

    def _apply_filter(self) -> None:
        keep = ~self.model.identical if self.hide_identical.isChecked() else None
        self.model.layout.set_filter(self.filter.text(), False, keep)

    def _fit(self) -> None:
        for c in range(self.model.columnCount()):
            self.view.resizeColumnToContents(c)
        low = 300 if self.model.grouped else 220  # closures are indented under modules
        self.view.setColumnWidth(0, min(max(self.view.columnWidth(0), low), 420))

    def first_rows(self, n: int = 5) -> list[int]:
        """Union-row ids of the first ``n`` visible rows in display order (grouped: the
        top-level module rows)."""
        return [int(x) for x in self.model.layout.children(-1)[:n]]

    def row_of(self, name: str, parent: int = -1) -> int:
        """Union row of the row named ``name`` under ``parent`` (-1: top level), or -1."""
        for r in self.model.layout.children(parent):
            if str(self.cmp.name[int(r)]) == name:
                return int(r)
        return -1

    def set_scale(self, scale: DivergingScale) -> None:
        self.model.set_scale(scale)
        self.view.viewport().update()


# ------------------------------------------------------------------------------------------
# counters
# ------------------------------------------------------------------------------------------
def _in(*names: str):
    return lambda k: k in names


TICKY_GROUPS = [
    ("Allocation", lambda k: k in ("alloc_total", "heap_allocations", "heap_checks",
                                   "stack_checks") or k.endswith(("_allocated", "_alloc_bytes"))),
    ("Enters", lambda k: k.startswith("enters") or k in ("function_entries", "lne_entries")),
    ("Calls", lambda k: k.startswith(("tail_calls", "known_tail", "slow_apps")) or
     k in ("known_calls", "unknown_calls", "slow_calls", "very_slow_calls")),
    ("Returns", lambda k: k.startswith(("returns", "ret_"))),
    ("Updates", lambda k: k.startswith("update") or k == "catch_frames"),
    ("Closure table", lambda k: k == "closures" or k.startswith("table_")),
]


TICKY_PREFERRED = ["alloc_total", "con_alloc_bytes", "thunk_alloc_bytes", "fun_alloc_bytes",
                   "heap_allocations", "cons_allocated", "thunks_allocated", "funs_allocated",
                   "paps_allocated"]


def counters_data(cmp: Comparison, hide_zero: bool = True) -> TotalsData:
    """Totals (summary and main counters) grouped, then the raw counters.

    ``hide_zero`` leaves out counters that are zero in every run (most of a ticky
    report: update/catch-frame counters of a program without them).
    """
    keys = list(cmp.total_keys)
    keys = [k for k in TICKY_PREFERRED if k in keys] + \
        [k for k in keys if k not in TICKY_PREFERRED]
    metrics: dict[str, Metric] = {}
    for k in keys:
        m = cmp.total_metric(k)
        metrics[k] = m if m is not None else Metric(k, Unit.COUNT, Kind.NODE, k)
    values = [dict(p.totals) for p in cmp.runs]
    raw: dict[str, None] = {}
    for r, p in enumerate(cmp.runs):
        notes = p.extras.get("counter_notes", {}) or {}
        for name, v in (p.extras.get("counters", {}) or {}).items():
            k = RAW_PREFIX + name
            values[r][k] = float(v)
            raw.setdefault(k, None)
            if k not in metrics:
                metrics[k] = Metric(k, Unit.COUNT, Kind.NODE, name,
                                    "raw RTS counter " + name +
                                    (f" ({notes[name]})" if name in notes else ""))
    if hide_zero:
        keys = [k for k in keys if any(v.get(k) for v in values)]
    raw_keys = [k for k in raw if not hide_zero or any(v.get(k) for v in values)]
    groups = group_keys(keys, TICKY_GROUPS)
    if raw_keys:
        groups.append(("Raw counters", raw_keys))
    return TotalsData(runs=labels_of(cmp), values=values,
                      metrics=metrics, baseline=cmp.baseline, groups=groups)


def histogram_table(cmp: Comparison, name: str) -> QTableWidget:
    """Rows: arity 0..8 (+ total); columns: count and % per run, then Δpp vs baseline."""
    labels = labels_of(cmp)
    hists = [(p.extras.get("histograms", {}) or {}).get(name) for p in cmp.runs]
    n_all = max((len(h.get("counts", [])) for h in hists if h), default=0)
    # arities no run ever returned with are left out: the table stays a few rows high
    bins = [i for i in range(n_all)
            if any(h and i < len(h.get("counts", [])) and h["counts"][i] for h in hists)]
    n_bins = len(bins)
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    headers = []
    for lab in labels:
        headers += [f"{lab}", "%"]
    headers += [f"Δ% {labels[r]}" if len(others) > 1 else "Δ pp" for r in others]
    t = QTableWidget(n_bins + 1, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.setVerticalHeaderLabels([f"arity {i}" for i in bins] + ["total"])
    t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

    def put(row: int, col: int, text: str, grey: bool = False) -> None:
        it = QTableWidgetItem(text)
        it.setTextAlignment(right)
        if grey:
            it.setForeground(QBrush(QColor(150, 150, 150)))
        t.setItem(row, col, it)

    pct = np.full((cmp.n_runs, n_bins), np.nan)
    for r, h in enumerate(hists):
        if not h:
            continue
        counts = list(h.get("counts", []))
        total = float(h.get("total", sum(counts)) or 0)
        for i, b in enumerate(bins):
            c = counts[b] if b < len(counts) else 0
            pct[r, i] = 100.0 * c / total if total else 0.0
            put(i, 2 * r, format_value(c, Unit.COUNT), grey=c == 0)
            put(i, 2 * r + 1, f"{pct[r, i]:.1f}", grey=c == 0)
        put(n_bins, 2 * r, format_value(total, Unit.COUNT))
    for j, r in enumerate(others):
        for i in range(n_bins):
            d = pct[r, i] - pct[cmp.baseline, i]
            put(i, 2 * cmp.n_runs + j, format_delta(round(d, 1), Unit.PERCENT, suffix=False),
                grey=abs(d) < 0.05)
    t.resizeColumnsToContents()
    t.resizeRowsToContents()
    t.setFixedHeight(t.verticalHeader().length() + t.horizontalHeader().height() + 6)
    return t


class TickyCountersView(QWidget):
    """Run-level counters (grouped totals table) and the return histograms."""

    def __init__(self, cmp: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        self.table = TotalsTable()
        self.show_zero = QCheckBox("show counters that are zero in every run")
        self.show_zero.toggled.connect(lambda _v: self._fill())
        self._fill()
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        self.histograms: dict[str, QTableWidget] = {}
        names: dict[str, None] = {}
        for p in cmp.runs:
            for k in (p.extras.get("histograms", {}) or {}):
                names.setdefault(k, None)
        for name in names:
            box = QGroupBox(f"{name} histogram (returns by arity)")
            bl = QVBoxLayout(box)
            tab = histogram_table(cmp, name)
            bl.addWidget(tab)
            self.histograms[name] = tab
            sl.addWidget(box)
        sl.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(side)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.show_zero)
        ll.addWidget(self.table, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(scroll)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([820, 480])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        if not names:
            scroll.hide()

    def _fill(self) -> None:
        data = counters_data(self.cmp, hide_zero=not self.show_zero.isChecked())
        self.table.set_data(data, collapsed=[g for g, _ in data.groups if g.startswith("Raw")])

    def set_scale(self, scale: DivergingScale) -> None:
        self.table.set_scale(scale)
