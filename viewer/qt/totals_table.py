"""Run-level totals side by side: one row per statistic, one column per run, Δ and ratio.

Profiles carry run-level numbers in ``Profile.totals`` (RTS statistics, ticky counters,
heap totals, total time of a ``.prof``...).  :class:`TotalsModel` lays them out as a
table grouped into sections (Allocation / GC / Time ...) with, for every run other than
the baseline, the difference ``run − baseline`` and the ratio ``run / baseline``.  Δ and
ratio cells use the app's :class:`~viewer.colors.DivergingScale` on the *relative*
change in percent (percentage points for percent statistics), oriented by
:func:`better_of` so that a drop in productivity is red like a rise in allocation.

The model is generic: it takes one ``{key: value}`` mapping per run plus the metric
descriptions, so ticky raw counters (``extras["counters"]``) use it as well as totals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QTreeView, QVBoxLayout, QWidget

from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer.colors import DivergingScale, text_color_for
from profdiff.viewer.compare import Comparison
from profdiff.viewer.run_labels import distinct_labels, labels_of  # noqa: F401 - labels_of for the views
from profdiff.viewer.units import (
    APPROX,
    TIMED_NEUTRAL,
    format_delta,
    format_rel,
    format_total_delta,
    format_value,
    step_of,
    total_rounding,
)

_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
KEY_ROLE = Qt.ItemDataRole.UserRole + 11
"""``data(index, KEY_ROLE)`` -> the totals key of a statistic row (None on group rows)."""
VALUE_ROLE = Qt.ItemDataRole.UserRole + 12
"""The raw float behind a numeric cell (NaN when none)."""

# Statistics where more is better (the readers leave Metric.better at "lower" for these).
_HIGHER = ("productivity", "par_gc_work_balance", "sparks_converted", "known_tail_calls_pct",
           "enters_direct_pct")
# Statistics that are neither good nor bad (facts about the run or the file).
_NEUTRAL = ("_reported", "n_capabilities", "max_residency_samples", "n_samples", "closures",
            "peak_time_s", "duration_s", "task_count", "bound_task_count", "worker_count")


def better_of(key: str, metric: Metric | None) -> str:
    """``"lower"``, ``"higher"`` or ``"none"``: which direction of change is good.

    The metric's own ``better`` wins when a reader set it to something other than the
    default; otherwise well-known keys are recognised by name (productivity, GC work
    balance are higher-is-better; ``*_reported`` copies and sample counts are neutral).
    """
    if metric is not None and metric.better != "lower":
        return metric.better
    if any(h in key for h in _HIGHER):
        return "higher"
    if any(key.endswith(n) or key == n for n in _NEUTRAL):
        return "none"
    return "lower"


def run_labels(paths: Sequence[str]) -> list[str]:
    """Distinct labels for runs read from ``paths`` (:mod:`viewer.run_labels`; a view with
    a comparison uses :func:`labels_of`, which also knows the user's labels)."""
    return distinct_labels(paths)


def ratio_text(r: float, rounding: float = 0.0) -> str:
    """``1.5448`` -> ``×1.545``; ``inf`` (from zero) -> ``new``; NaN -> ``-``.

    ``rounding``: the ± half-width the ratio is known to (:func:`ratio_rounding`); the
    ratio then gets no digit below it, and is marked ``≈`` when that leaves fewer digits
    than usual (``2.2 ms → 2.8 ms`` read to ± 0.05 ms each is ``≈×1.3``, not ``×1.273``)."""
    if r is None or math.isnan(r):
        return "-"
    if math.isinf(r):
        return "from 0"
    if r == 1.0 and not rounding:
        return "="
    dec = 0 if r >= 100 else (1 if r >= 10 else 3)
    step = step_of(rounding)
    known = dec if step <= 0 else max(0, min(dec, -math.floor(math.log10(step) + 1e-12)))
    return f"{APPROX if known < dec else ''}×{r:,.{known}f}"


def ratio_rounding(b: float, v: float, unit: Unit) -> float:
    """± half-width of ``v / b`` from the digits the two totals were read with
    (:func:`viewer.units.total_rounding`; 0 for exact counts): the ratio's relative
    error is at most the sum of theirs."""
    hb, hv = total_rounding(b, unit), total_rounding(v, unit)
    if not (hb or hv) or not b or not v:
        return 0.0
    return abs(v / b) * (hb / abs(b) + hv / abs(v))


TIMED_SCALE_WIDTH = TIMED_NEUTRAL * 100.0
"""How much wider the colour scale is for a timed total measured once: the table's scale
is neutral within ±1 % and full at ±50 %; for these, ±5 % (:data:`TIMED_NEUTRAL`, as
the header and the Summary) and ±250 %."""


@dataclass
class TotalsData:
    """What a :class:`TotalsModel` shows: per-run values and how to describe them."""

    runs: list[str]  # column labels
    values: list[Mapping[str, float]]  # one mapping per run
    metrics: dict[str, Metric]  # key -> description (unit, label)
    baseline: int = 0
    groups: list[tuple[str, list[str]]] = field(default_factory=list)  # (title, keys)
    measured_once: bool = False  # one run per side: timed totals are one measurement each

    @property
    def n_runs(self) -> int:
        return len(self.runs)


def group_keys(keys: Sequence[str], rules: Sequence[tuple[str, Callable[[str], bool]]],
               other: str = "Other") -> list[tuple[str, list[str]]]:
    """Split ``keys`` into sections: the first rule whose predicate accepts a key wins.

    Sections keep the rules' order; keys keep their order within a section; empty
    sections are dropped; keys no rule accepts go to ``other`` (last).
    """
    out: dict[str, list[str]] = {title: [] for title, _ in rules}
    rest: list[str] = []
    for k in keys:
        for title, pred in rules:
            if pred(k):
                out[title].append(k)
                break
        else:
            rest.append(k)
    groups = [(t, ks) for t, ks in out.items() if ks]
    if rest:
        groups.append((other, rest))
    return groups


def totals_data(cmp: Comparison, keys: Sequence[str] | None = None,
                rules: Sequence[tuple[str, Callable[[str], bool]]] = ()) -> TotalsData:
    """A :class:`TotalsData` over a comparison's run totals (all keys when ``keys`` is None)."""
    keys = list(cmp.total_keys if keys is None else keys)
    metrics = {}
    for k in keys:
        m = cmp.total_metric(k)
        metrics[k] = m if m is not None else Metric(k, Unit.COUNT, Kind.NODE, k)
    groups = group_keys(keys, rules) if rules else [("", keys)]
    return TotalsData(runs=labels_of(cmp),
                      values=[dict(p.totals) for p in cmp.runs], metrics=metrics,
                      baseline=cmp.baseline, groups=groups,
                      measured_once=bool(cmp.totals_measured_once))


class TotalsModel(QAbstractItemModel):
    """Groups (top level) -> statistics; or a flat list when there is one untitled group.

    Columns: statistic, one value column per run, then Δ and ratio for every run other
    than the baseline.  ``internalId`` is 0 for group rows and ``group + 1`` for
    statistic rows, so ``parent()`` needs no lookup table.
    """

    def __init__(self, data: TotalsData, scale: DivergingScale | None = None,
                 parent=None) -> None:
        super().__init__(parent)
        self.scale = scale or DivergingScale(dead_zone=1.0, clamp=50.0)
        self._grey = QBrush(QColor(140, 140, 140))
        self._bold = QFont()
        self._bold.setBold(True)
        self._group_bg = QBrush(QColor(236, 240, 246))
        self.set_data(data)

    # ----- configuration ----------------------------------------------------------------
    def set_data(self, data: TotalsData) -> None:
        self.beginResetModel()
        self.d = data
        self.flat = len(data.groups) <= 1 and not (data.groups and data.groups[0][0])
        self.others = [r for r in range(data.n_runs) if r != data.baseline]
        self._cols: list[tuple[str, int]] = [("label", -1)]
        self._cols += [("value", r) for r in range(data.n_runs)]
        for r in self.others:
            self._cols += [("delta", r), ("ratio", r)]
        self._cache: dict[str, np.ndarray] = {}
        self.endResetModel()

    def set_scale(self, scale: DivergingScale) -> None:
        self.scale = scale
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1,
                                                               self.columnCount() - 1))

    # ----- numbers ----------------------------------------------------------------------
    def value(self, key: str, run: int) -> float:
        v = self.d.values[run].get(key)
        return float("nan") if v is None else float(v)

    def delta(self, key: str, run: int) -> float:
        return self.value(key, run) - self.value(key, self.d.baseline)

    def delta_text(self, key: str, run: int, unit: Unit) -> str:
        """The Δ's text, with the digits of the two values it is the difference of."""
        b, v = self.value(key, self.d.baseline), self.value(key, run)
        if math.isnan(b) or math.isnan(v):
            return format_delta(float("nan"), unit)
        return format_total_delta(b, v, unit)

    def ratio(self, key: str, run: int) -> float:
        b, v = self.value(key, self.d.baseline), self.value(key, run)
        if math.isnan(b) or math.isnan(v):
            return float("nan")
        if b == 0:
            return 1.0 if v == 0 else (math.inf if v > 0 else float("nan"))
        return v / b

    def colour_change(self, key: str, run: int) -> float:
        """:meth:`change` on the colour scale: a timed total measured once
        (:attr:`Metric.timed`; the table marks it †) is coloured on a scale
        :data:`TIMED_SCALE_WIDTH` times wider.

        Why: runs of one binary differ by tens of percent in these, so the hs-ad pair's
        PROF CPU, 0.021 -> 0.033 s, was as red as its 54.5 % more allocation (exact);
        now a timed change is neutral within ±5 % and full only at 3.5 times."""
        c = self.change(key, run)
        m = self.d.metrics.get(key)
        if self.d.measured_once and m is not None and m.timed:
            return c / TIMED_SCALE_WIDTH
        return c

    def change(self, key: str, run: int) -> float:
        """Oriented change (positive = worse): % of the baseline, or pp for percents."""
        m = self.d.metrics.get(key)
        direction = better_of(key, m)
        if direction == "none":
            return 0.0
        d = self.delta(key, run)
        if math.isnan(d):
            return 0.0
        if m is None or m.unit is not Unit.PERCENT:
            b = abs(self.value(key, self.d.baseline))
            d = 100.0 * d / b if b > 0 else (100.0 if d > 0 else (-100.0 if d < 0 else 0.0))
        return -d if direction == "higher" else d

    def identical(self, key: str) -> bool:
        vals = [self.value(key, r) for r in range(self.d.n_runs)]
        return all(v == vals[0] for v in vals)

    # ----- structure --------------------------------------------------------------------
    def _group_of(self, index: QModelIndex) -> int:
        """Group of a statistic index (or -1 for a group row)."""
        return int(index.internalId()) - 1

    def key_at(self, index: QModelIndex) -> str | None:
        if not index.isValid():
            return None
        g = self._group_of(index)
        if g < 0:
            return None
        return self.d.groups[g][1][index.row()]

    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        if row < 0 or not 0 <= column < len(self._cols):
            return QModelIndex()
        if self.flat:
            if parent.isValid() or not self.d.groups or row >= len(self.d.groups[0][1]):
                return QModelIndex()
            return self.createIndex(row, column, 1)
        if not parent.isValid():
            if row >= len(self.d.groups):
                return QModelIndex()
            return self.createIndex(row, column, 0)
        if parent.internalId() != 0 or parent.column() != 0:
            return QModelIndex()
        g = parent.row()
        if row >= len(self.d.groups[g][1]):
            return QModelIndex()
        return self.createIndex(row, column, g + 1)

    def parent(self, index: QModelIndex | None = None):  # type: ignore[override]
        if index is None:
            return super().parent()
        if not index.isValid() or self.flat or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(int(index.internalId()) - 1, 0, 0)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        if self.flat:
            if parent.isValid():
                return 0
            return len(self.d.groups[0][1]) if self.d.groups else 0
        if not parent.isValid():
            return len(self.d.groups)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self.d.groups[parent.row()][1])
        return 0

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return len(self._cols)

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # ----- display ----------------------------------------------------------------------
    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._cols):
            return None
        kind, run = self._cols[section]
        base = self.d.runs[self.d.baseline]
        if role == Qt.ItemDataRole.DisplayRole:
            if kind == "label":
                return "statistic"
            if kind == "value":
                tag = " (baseline)" if run == self.d.baseline and self.d.n_runs > 1 else ""
                return self.d.runs[run] + tag
            short = "" if len(self.others) == 1 else f" {self.d.runs[run]}"
            return ("Δ" if kind == "delta" else "ratio") + short
        if role == Qt.ItemDataRole.ToolTipRole:
            if kind == "delta":
                return f"{self.d.runs[run]} − {base}"
            if kind == "ratio":
                return f"{self.d.runs[run]} / {base}"
            return self.headerData(section, orientation)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _LEFT if kind == "label" else _RIGHT
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        kind, run = self._cols[index.column()]
        key = self.key_at(index)
        if key is None:  # group row
            if role == Qt.ItemDataRole.DisplayRole and kind == "label":
                return self.d.groups[index.row()][0]
            if role == Qt.ItemDataRole.FontRole:
                return self._bold
            if role == Qt.ItemDataRole.BackgroundRole:
                return self._group_bg
            return None
        m = self.d.metrics.get(key)
        unit = m.unit if m is not None else Unit.COUNT
        if role == Qt.ItemDataRole.DisplayRole:
            if kind == "label":
                return m.title if m is not None else key
            if kind == "value":
                v = self.value(key, run)
                return "—" if math.isnan(v) else format_value(v, unit)
            if kind == "delta":
                return self.delta_text(key, run, unit)
            return ratio_text(self.ratio(key, run), ratio_rounding(
                self.value(key, self.d.baseline), self.value(key, run), unit))
        if role == KEY_ROLE:
            return key
        if role == VALUE_ROLE:
            if kind == "value":
                return self.value(key, run)
            if kind == "delta":
                return self.delta(key, run)
            if kind == "ratio":
                return self.ratio(key, run)
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _LEFT if kind == "label" else _RIGHT
        if role == Qt.ItemDataRole.BackgroundRole and kind in ("delta", "ratio"):
            c = self.colour_change(key, run)
            if abs(c) <= self.scale.dead_zone:
                return None
            return QBrush(QColor(*self.scale.color(c)))
        if role == Qt.ItemDataRole.ForegroundRole:
            if kind in ("delta", "ratio"):
                c = self.colour_change(key, run)
                if abs(c) > self.scale.dead_zone:
                    return QBrush(QColor(*text_color_for(self.scale.color(c))))
            if self.d.n_runs > 1 and self.identical(key):
                return self._grey
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            desc = m.description if m is not None and m.description else ""
            lines = [f"{m.title if m else key}  [{key}]"] + ([desc] if desc else [])
            for r in range(self.d.n_runs):
                lines.append(f"  {self.d.runs[r]}: {format_value(self.value(key, r), unit)}")
            for r in self.others:
                rel = self.delta(key, r) / abs(self.value(key, self.d.baseline)) \
                    if self.value(key, self.d.baseline) else float("nan")
                lines.append(f"  Δ {self.d.runs[r]}: {self.delta_text(key, r, unit)}"
                             f" ({format_rel(rel)})")
            direction = better_of(key, m)
            if direction != "none":
                lines.append(f"({direction} is better)")
            return "\n".join(lines)
        return None


class TotalsTable(QWidget):
    """A tree view over a :class:`TotalsModel`, groups expanded, columns sized to fit.

    Opened and fitted when shown: the "Run totals" tab is built hidden with every pair
    that has totals, and its first expand and fit took 12-16 ms of the window's opening
    (its first paint waits on the GUI thread)."""

    def __init__(self, data: TotalsData | None = None, parent=None) -> None:
        super().__init__(parent)
        self.view = QTreeView(self)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setRootIsDecorated(True)
        self.view.setSelectionBehavior(QTreeView.SelectionBehavior.SelectRows)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view)
        self.model: TotalsModel | None = None
        self._collapsed: tuple[str, ...] = ()
        self._fit_owed = False
        if data is not None:
            self.set_data(data)

    def set_data(self, data: TotalsData, collapsed: Sequence[str] = ()) -> None:
        """Show ``data``, its groups open but those titled in ``collapsed``."""
        if self.model is None:
            self.model = TotalsModel(data, parent=self)
            self.view.setModel(self.model)
        else:
            self.model.set_data(data)
        self.view.setRootIsDecorated(not self.model.flat)
        self._collapsed = tuple(collapsed)
        self._fit_owed = not self.isVisible()
        if not self._fit_owed:
            self._open_and_fit()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._fit_owed:
            self._fit_owed = False
            self._open_and_fit()

    def _open_and_fit(self) -> None:
        if self.model is None:
            return
        self.view.expandAll()
        for g, (title, _) in enumerate(self.model.d.groups):
            if title in self._collapsed:
                self.view.collapse(self.model.index(g, 0))
        hdr = self.view.header()
        hdr.setStretchLastSection(False)
        self.view.resizeColumnToContents(0)
        self.view.setColumnWidth(0, max(self.view.columnWidth(0), 220))
        for c in range(1, self.model.columnCount()):
            self.view.resizeColumnToContents(c)
            self.view.setColumnWidth(c, max(self.view.columnWidth(c), 90))
        hdr.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    def set_scale(self, scale: DivergingScale) -> None:
        if self.model is not None:
            self.model.set_scale(DivergingScale(1.0, 50.0, scale.palette))

    def row_index(self, key: str) -> QModelIndex:
        """The index of the statistic ``key`` (invalid when not shown)."""
        m = self.model
        if m is None:
            return QModelIndex()
        for g, (_, keys) in enumerate(m.d.groups):
            if key in keys:
                parent = QModelIndex() if m.flat else m.index(g, 0)
                return m.index(keys.index(key), 0, parent)
        return QModelIndex()
