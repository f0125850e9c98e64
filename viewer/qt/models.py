"""The one Qt item model over a :class:`~viewer.compare.Comparison`.

``ComparisonTreeModel`` is a thin adapter: an index's ``internalId`` is the integer
union-row id, ``rowCount``/``index``/``parent`` read a shared :class:`RowLayout` (numpy
CSR children, sorted and filtered lazily), and ``data`` formats one array element with
:mod:`viewer.units`.  No Python object exists per row, so a 10^6-row comparison costs
only the arrays it already has plus a few cached per-column arrays.

The same class serves every tabular view: a pane of the side-by-side view
(``pane_run=i``: values of run ``i``, rows absent from it drawn as greyed placeholders),
the merged diff tree (``pane_run=None``: base/new/Δ/Δ% columns, Δ cells coloured by the
shared :class:`~viewer.colors.DivergingScale`), and the flat "by cost centre" table
(a flat-mode comparison: every row is a root).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QIcon

from profdiff.parsers.model import Unit
from profdiff.viewer.colors import (
    ADDED,
    PALETTES,
    PLACEHOLDER,
    REMOVED,
    DivergingScale,
    text_color_for,
)
from profdiff.viewer.compare import MATCHED_BY, Comparison, Status
from profdiff.viewer.factorize import factorize
from profdiff.viewer.run_labels import labels_of
from profdiff.viewer.units import (
    Scale,
    column_scale,
    digits_rounding,
    format_delta,
    format_rel,
    format_value,
    with_unit,
)
from profdiff.viewer.view_state import (  # noqa: F401 - re-exported for the views
    change_scale_factor,
    colour_change,
    colour_source,
    default_metric,
    inclusive_of,
    metric_pairs,
)

from .layout import RowLayout

_CANDIDATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per comparison: rows measured for a numeric column's width, by (kind, metric, run)."""
_MODELS: weakref.WeakSet = weakref.WeakSet()
"""Every live model: :func:`set_colour_by_share` drops their cached cells."""
ROW_ID_ROLE = Qt.ItemDataRole.UserRole + 1
"""``data(index, ROW_ID_ROLE)`` -> the union-row id (also ``index.internalId()``)."""
SORT_VALUE_ROLE = Qt.ItemDataRole.UserRole + 2
"""The raw float behind a numeric cell (NaN when none)."""

PLACEHOLDER_TEXT = "—"
MATCH_MARK = "↔ "
"""Prefix of the name of a row whose runs were matched by a rename rule or a suggestion."""
FADED_TEXT = (150, 150, 150)
"""Text colour of a Δ cell whose change is within the noise."""
_ROOT = QModelIndex()
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
# roles as plain ints: ``role == Qt.ItemDataRole.X`` looks the member up through the enum
# class on every comparison, and ``data`` runs ~7 times per painted cell
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_DECORATION = int(Qt.ItemDataRole.DecorationRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_ROW_ID = int(ROW_ID_ROLE)
_SORT_VALUE = int(SORT_VALUE_ROLE)
_CELL_SLOT = {_DISPLAY: 0, _ALIGN: 1, _BACKGROUND: 2, _FOREGROUND: 3, _FONT: 4,
              _DECORATION: 5}
"""Roles a painted cell asks for, by their place in a cached cell tuple (:meth:`_cell`)."""
_MAX_CELLS = 200_000
"""Cached cells kept before the cache starts over (a few hundred per painted screen)."""
_BLOCK = 4096
"""Rows per block of a lazily computed colour column (:meth:`_cell_rgb`)."""
_FEW_ROWS = 64
"""Rows of a block not computed yet that are coloured alone, not by computing the block:
the first paint of a big tree shows ~35 rows spread over a handful of blocks, and
computing those blocks for every Δ column (80 of them on the 100 MB hs-ad pair) was
most of that paint's ~35 ms."""
_FILL_BEFORE = 8
_FILL_AFTER = 56
"""A painted cell that misses the cache fills every column of its siblings from
``_FILL_BEFORE`` rows above to ``_FILL_AFTER`` below (:meth:`_fill_around`): about the
rows one screen shows, computed column by column (:meth:`fill_cells`)."""


@dataclass(frozen=True)
class Column:
    """One column: ``kind`` in name, module, src, status, value, delta, rel, sig.

    ``sig``: significance of the change of ``metric`` ("real"/"noise" and the p-value),
    from ``Comparison.noise``.

    ``run``: for ``value`` the run shown (None -> the model's pane run, else the current
    run); for ``delta``/``rel`` the run compared with the baseline (None -> current).
    """

    kind: str
    metric: str | None = None
    run: int | None = None
    header: str = ""
    tooltip: str = ""

    @property
    def numeric(self) -> bool:
        return self.kind in ("value", "delta", "rel")


LABEL_KINDS = ("name", "module", "src")
"""Columns of text read from the comparison's label columns."""


def name_header(cmp: Comparison) -> str:
    fmt = cmp.runs[cmp.baseline].format if cmp.runs else ""
    return "cost centre" if fmt.startswith("ghc") else "name"


def label_columns(cmp: Comparison, src: bool = True) -> list[Column]:
    """Name, module (unless no run has one: folded stacks) and (``src``, or rows that are
    source lines: their ``file:line``, :attr:`Comparison.line_level`) the source location."""
    cols = [Column("name", header=name_header(cmp))]
    # stops at the first named module (whole-array truthiness cost ~11 ms per 10^6
    # frames, on every pane's columns); only module-less runs are read to the end
    if not cmp.runs or any(any(m for m in p.frames.module) for p in cmp.runs):
        cols.append(Column("module", header="module"))
    lines = cmp.line_level
    if (src or lines) and any(str(s) for s in cmp.label_at("src", slice(0, min(cmp.n_rows,
                                                                                1000)))):
        cols.append(Column("src", header="line" if lines else "src"))
    return cols


def pane_columns(cmp: Comparison, metrics: list[str], run: int) -> list[Column]:
    """Columns of one side-by-side pane: labels then the metrics of ``run``."""
    cols = label_columns(cmp)
    for m in metrics:
        met = cmp.metric_by_name[m]
        cols.append(Column("value", m, run, unit_title(cmp, m), met.description or met.title))
    return cols


def sig_column(cmp: Comparison, metric: str) -> Column:
    """The p-value column of ``metric``'s change, the current run's against the baseline
    (3+ single runs: that pair's, named in its header)."""
    met = cmp.metric_by_name[metric]
    which = f" [#{cmp.current}]" if cmp.n_runs > 2 else ""
    run = f"run [{cmp.current}] against the baseline: " if cmp.n_runs > 2 else ""
    return Column("sig", metric, cmp.current, f"{short_title(met.title)}\nsig.{which}",
                  f"{met.title}, {run}is the change real or within the run-to-run/sampling "
                  "noise? (p-value; 'real' = significant at the false discovery rate)")


def diff_columns(cmp: Comparison, metrics: list[str], src: bool = False,
                 status: bool = False, sig: str | None = None) -> list[Column]:
    """Merged diff columns: per metric base/new/Δ/Δ% (2 runs) or one per run + Δs (3+).

    ``sig``: a metric whose significance column follows its Δ% (3+ runs: the current
    run's Δ).
    """
    cols = _diff_columns(cmp, metrics, src, status)
    if sig is not None and cmp.n_runs >= 2 and sig in cmp.values:
        at = max((i for i, c in enumerate(cols) if c.metric == sig), default=len(cols) - 1)
        cols.insert(at + 1, sig_column(cmp, sig))
    return cols


def _diff_columns(cmp: Comparison, metrics: list[str], src: bool, status: bool) -> list[Column]:
    cols = label_columns(cmp, src=src)
    if status:
        cols.append(Column("status", header="status"))
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    for m in metrics:
        met = cmp.metric_by_name[m]
        t = met.title
        h, bare = unit_title(cmp, m), short_title(t)
        if cmp.n_runs <= 1:
            cols.append(Column("value", m, cmp.baseline, with_unit(t, met.unit,
                                                                   metric_scale(cmp, m)),
                               met.description))
        elif cmp.n_runs == 2:
            cols.append(Column("value", m, cmp.baseline, f"{h}\nbase", f"{t} in the baseline"))
            cols.append(Column("value", m, cmp.current, f"{h}\nnew", f"{t} in the current run"))
            cols.append(Column("delta", m, cmp.current, f"{h}\nΔ", f"{t}: current − baseline"))
            cols.append(Column("rel", m, cmp.current, f"{bare}\nΔ%",
                               f"{t}: change relative to the baseline"))
        else:  # the header names the run by index, the tooltip by its label
            labels = labels_of(cmp)
            for r in range(cmp.n_runs):
                tag = "base" if r == cmp.baseline else f"#{r}"
                cols.append(Column("value", m, r, f"{h}\n[{tag}]",
                                   f"{t} in run [{r}] {labels[r]}"))
            for r in others:
                cols.append(Column("delta", m, r, f"{h}\nΔ [#{r}]",
                                   f"{t}: run [{r}] {labels[r]} − baseline "
                                   f"{labels[cmp.baseline]}"))
    return cols


def metric_scale(cmp: Comparison, metric: str) -> Scale | None:
    """The time scale of ``metric``'s columns (all runs share it, so base and new read
    digit by digit): perf periods in ns become ms or s; None for non-time metrics."""
    met = cmp.metric_by_name[metric]
    if metric not in cmp.values or met.unit not in (Unit.SECONDS, Unit.NANOSECONDS):
        return None  # only time columns have a scale: other values are not read (built)
    # the runs' own values: the largest decides, and absent rows (zeros) never do
    return column_scale(np.concatenate([cmp.present_values(metric, r)
                                        for r in range(cmp.n_runs)]), met.unit)


def unit_title(cmp: Comparison, metric: str) -> str:
    """Header title with the unit the cells leave out: ``time (s)``, ``alloc (B)``."""
    met = cmp.metric_by_name[metric]
    return with_unit(short_title(met.title), met.unit, metric_scale(cmp, metric))


def short_title(title: str) -> str:
    """Header-sized metric title: ``inherited %time`` -> ``inh. %time``."""
    return title.replace("inherited ", "inh. ").replace("individual ", "")


class ComparisonTreeModel(QAbstractItemModel):
    """Lazy tree/table model over a Comparison; see the module docstring.

    Args:
        cmp: the comparison (tree or flat mode).
        columns: column specs.
        pane_run: the run this model shows as a pane (placeholders where absent), or None.
        layout: a shared :class:`RowLayout` (created when None).
        scale: the diverging colour scale for Δ cells.
    """

    sortApplied = Signal(int, Qt.SortOrder)
    appearanceChanged = Signal()

    def __init__(self, cmp: Comparison, columns: list[Column], pane_run: int | None = None,
                 layout: RowLayout | None = None, scale: DivergingScale | None = None,
                 parent=None) -> None:
        super().__init__(parent)
        self.cmp = cmp
        self.columns = list(columns)
        self.pane_run = pane_run
        self.layout = layout or RowLayout(cmp)
        self.layout.add_listener(self)
        # hot-path shortcuts: Qt calls index/rowCount/hasChildren/flags for every shown row
        # on each relayout (~10^4 rows after "expand to depth 5"), so they read these
        self._flat = self.layout.flat
        self._plists = self.layout.plists
        self._parents = cmp.parent
        self._kids: bytes | None = None  # layout.has_kids(), dropped on layout changes
        self._ncols = len(self.columns)
        # painted cells: (display, alignment, background, foreground, font, decoration)
        # per ``row * ncols + col``, filled on a cell's first role and dropped whenever
        # what they show may change (:meth:`_reset_cells`)
        self._cells: dict[int, tuple] = {}
        self._index0: dict[int, QModelIndex] = {}  # tree-column index per row id
        self._parent_of: dict[int, QModelIndex] = {}  # parent index per row id
        self._cell_noise = cmp.noise
        self._label = [c.kind in ("name", "module") for c in self.columns]
        self.scale = scale or DivergingScale()
        self._color_deltas = True
        self._fade_noise = True  # draw Δ cells whose change is within the noise faded
        self._icons: dict[int, QIcon] = {}
        self._pp_factor: dict[tuple[str, bool], float] = {}
        self._brushes: dict[tuple[int, int, int], QBrush] = {}
        self._arrays: dict[int, np.ndarray] = {}
        self._candidates: dict[int, np.ndarray] = {}  # rows measured for a column's width
        self._colors: dict[tuple, np.ndarray] = {}
        self._colour_blocks: dict[tuple, dict[int, np.ndarray]] = {}  # :meth:`_changes_at`
        self._factors: dict[str, float] = {}
        self._scales: dict[str, Scale | None] = {}
        self._persist_ids: list[tuple[int, int]] = []
        self._bold = QFont()
        self._bold.setBold(True)
        self._italic = QFont()
        self._italic.setItalic(True)
        self._grey = QBrush(QColor(150, 150, 150))
        self._faded_fg = QBrush(QColor(*FADED_TEXT))
        self._placeholder = QBrush(QColor(*PLACEHOLDER))
        self._added = QBrush(QColor(*ADDED))
        self._removed = QBrush(QColor(*REMOVED))
        _MODELS.add(self)

    # settings that change what cells show: each drops the cached cells
    @property
    def fade_noise(self) -> bool:
        return self._fade_noise

    @fade_noise.setter
    def fade_noise(self, on: bool) -> None:
        self._fade_noise = on
        self._reset_cells()

    @property
    def color_deltas(self) -> bool:
        return self._color_deltas

    @color_deltas.setter
    def color_deltas(self, on: bool) -> None:
        self._color_deltas = on
        self._reset_cells()

    @property
    def icons(self) -> dict[int, QIcon]:
        """Status icons of the name cells (a dict the views share; replace, don't edit)."""
        return self._icons

    @icons.setter
    def icons(self, icons: dict[int, QIcon]) -> None:
        self._icons = icons
        self._reset_cells()

    def colour_basis_changed(self) -> None:
        """The colour basis (share of run or of the baseline) changed: drop the colours."""
        self._colors.clear()
        self._colour_blocks.clear()
        self._reset_cells()

    def _check_cells(self) -> None:
        """Drop the cached cells when the significance changed (it fades Δ cells)."""
        if self._cell_noise is not self.cmp.noise:
            self._reset_cells()

    def _reset_cells(self) -> None:
        """Forget the cached cells (columns, colours, noise or fading changed; a filter
        does not: its bold matches are applied as cells are read, :meth:`_match_bold`)."""
        self._cells = {}
        self._cell_noise = self.cmp.noise
        self._label = [c.kind in ("name", "module") for c in self.columns]

    # ----- configuration ----------------------------------------------------------------
    def set_columns(self, columns: list[Column]) -> None:
        self.beginResetModel()
        self._forget_indexes()
        self.columns = list(columns)
        self._ncols = len(self.columns)
        self._arrays.clear()
        self._candidates.clear()
        self._reset_cells()
        self.endResetModel()

    def noise_changed(self) -> None:
        """``cmp.noise`` gained metrics: drop cached significance and status columns (the
        statuses are judged again: :meth:`Comparison.add_noise`; a kept status column
        showed rows "changed" by precision alone that the estimate had found within the
        noise), and the views repaint."""
        for i, c in enumerate(self.columns):
            if c.kind in ("sig", "status"):
                self._arrays.pop(i, None)
                self._candidates.pop(i, None)
        self._reset_cells()
        self.appearanceChanged.emit()

    def set_fade_noise(self, on: bool) -> None:
        self.fade_noise = on  # drops the cached cells
        self.appearanceChanged.emit()

    def noise(self, metric: str | None, run: int | None = None):
        """The :class:`~viewer.noise.MetricNoise` of ``metric``, of ``run`` (default: the
        current run) against the baseline (None when not computed)."""
        cmp = self.cmp
        if metric is None or cmp.n_runs < 2:
            return None
        nz = cmp.noise_of_run(cmp.current if run is None else run)
        return None if nz is None else nz.metrics.get(metric)

    def within_noise(self, metric: str | None, r: int, run: int | None = None) -> bool:
        """Whether row ``r``'s change of ``metric`` (of ``run``, default the current one)
        is not significant (sampled metrics: deterministic ones are exact, any change of
        them is real)."""
        mn = self.noise(metric, run)
        if mn is None or mn.exact or not mn.judged:
            return False
        return not bool(mn.significant[r])

    def _faded(self, c: Column, r: int) -> bool:
        return self.fade_noise and c.kind in ("delta", "rel") and \
            self.within_noise(c.metric, r, c.run)

    def set_scale(self, scale: DivergingScale) -> None:
        """Change the Δ colour scale; views repaint their viewport (no row changes)."""
        self.scale = scale
        self._colors.clear()
        self._colour_blocks.clear()
        self._reset_cells()
        self.appearanceChanged.emit()

    @property
    def present(self) -> np.ndarray | None:
        return None if self.pane_run is None else self.cmp.present[:, self.pane_run]

    # ----- per-column arrays (lazy, cached) ---------------------------------------------
    def column_array(self, col: int) -> np.ndarray:
        """The numbers (or strings) behind column ``col`` for every row (kept)."""
        a = self._arrays.get(col)
        if a is None:
            a = self._arrays[col] = self._whole_column(col)
        return a

    def _column_once(self, col: int) -> np.ndarray:
        """:meth:`column_array` if kept, else computed and not kept: the width of a
        column reads its whole array once, and every kept 10^6-row array is memory
        the first paint pays for (a paint reads its rows with :meth:`column_at`)."""
        a = self._arrays.get(col)
        return a if a is not None else self._whole_column(col)

    def column_at(self, col: int, rows) -> np.ndarray:
        """``column_array(col)[rows]`` for row ids ``rows``, without computing the
        whole column when it is a value, Δ or Δ% column not computed yet."""
        a = self._arrays.get(col)
        c = self.columns[col]
        if a is None and c.kind in LABEL_KINDS:  # not gathered whole (Comparison.defer)
            return self.cmp.label_at(c.kind, np.asarray(rows, dtype=np.intp))
        if a is not None or c.kind not in ("value", "delta", "rel"):
            return self.column_array(col)[rows]
        rows = np.asarray(rows, dtype=np.intp)
        assert c.metric is not None
        if c.kind == "value":
            return self.cmp.values_at(c.metric, self._value_run(c), rows)
        if c.kind == "delta":
            return self.cmp.delta_at(c.metric, c.run, rows)
        return self.cmp.rel_at(c.metric, c.run, rows)

    def columns_at(self, cols: Sequence[int], rows) -> list[np.ndarray]:
        """:meth:`column_at` of each of ``cols``, the value, Δ and Δ% columns of one metric
        sharing one read of each run's values at ``rows`` (sizing the columns over a
        first look's shown rows: 32k rows on the 100 MB hs-ad pair, where each column
        read both runs' values again)."""
        rows = np.asarray(rows, dtype=np.intp)
        cmp = self.cmp
        memo: dict[tuple[str, int], tuple] = {}
        out = []
        for col in cols:
            c = self.columns[col]
            if col in self._arrays or c.kind not in ("value", "delta", "rel") \
                    or c.metric is None:
                out.append(self.column_at(col, rows))
                continue
            shown = self._value_run(c) if c.kind == "value" else None
            if c.kind == "value":  # the baseline's values come with any run's change
                run = cmp.current if shown == cmp.baseline else shown
            else:
                run = cmp.current if c.run is None else c.run
            key = (c.metric, run)
            got = memo.get(key)
            if got is None:  # (new, base, delta, rel)
                got = memo[key] = cmp.change_at(c.metric, run, rows)
            if c.kind == "value":
                out.append(got[1] if shown == cmp.baseline else got[0])
            else:
                out.append(got[2] if c.kind == "delta" else got[3])
        return out

    def _value_run(self, c: Column) -> int:
        """The run a value column shows: its own, else the pane's, else the current."""
        if c.run is not None:
            return c.run
        return self.pane_run if self.pane_run is not None else self.cmp.current

    def _whole_column(self, col: int) -> np.ndarray:
        c = self.columns[col]
        cmp = self.cmp
        if c.kind == "name":
            a = cmp.name
        elif c.kind == "module":
            a = cmp.module
        elif c.kind == "src":
            a = cmp.src
        elif c.kind == "status":
            a = cmp.status if c.run is None else cmp.status_for(c.run)
        elif c.kind == "value":
            a = cmp.value(c.metric, self._value_run(c))
        elif c.kind == "delta":
            a = cmp.delta(c.metric, c.run)
        elif c.kind == "rel":
            a = cmp.rel(c.metric, c.run)
        elif c.kind == "sig":
            mn = self.noise(c.metric)
            a = mn.pvalue if mn is not None else np.full(cmp.n_rows, np.nan)
        else:
            raise ValueError(f"unknown column kind {c.kind!r}")
        return a

    def cell_texts(self, col: int, rows) -> list[str]:
        """The text ``data(DisplayRole)`` shows in column ``col`` for each of ``rows``
        (what column widths are measured on)."""
        c = self.columns[col]
        pres = self.present
        out = []
        self._check_cells()
        cells, nc = self._cells, self._ncols
        rows = np.asarray(rows, dtype=np.int64)
        if self._vector_cells and rows.size > 8:  # one numpy read per column, not per cell
            out = self._texts_of(c, col, rows)
            if pres is not None:
                for i in np.flatnonzero(~pres[rows]).tolist():
                    out[i] = PLACEHOLDER_TEXT if col == 0 else ""
            return out
        for r in rows.tolist():
            cell = cells.get(r * nc + col)
            if cell is not None:  # painted already: its text is known
                out.append(cell[0])
            elif pres is not None and not pres[r]:
                out.append(PLACEHOLDER_TEXT if col == 0 else "")
            else:
                out.append(self._text(c, col, r))
        return out

    def width_candidates(self, col: int, compute: bool = True) -> np.ndarray:
        """Rows whose value in numeric column ``col`` may print widest (the largest and
        smallest magnitudes of the whole column; cached until the columns change).
        ``compute`` false: only what is known already (none when the column was not
        read yet), for a first paint that sizes to the rows it shows and reads the whole
        columns after (:mod:`.whole_widths`)."""
        rows = self._candidates.get(col)
        if rows is None:
            c = self.columns[col]
            if not (c.numeric or c.kind == "sig"):
                rows = np.zeros(0, dtype=np.int64)
            else:  # shared by every model over this comparison (side panes, diff tree)
                per_cmp = _CANDIDATES.setdefault(self.cmp, {})
                run = c.run if c.run is not None else (
                    self.pane_run if self.pane_run is not None else self.cmp.current)
                key = (c.kind, c.metric, run, self.cmp.noise is not None)
                rows = per_cmp.get(key)
                if rows is None:
                    if not compute:
                        return np.zeros(0, dtype=np.int64)
                    rows = per_cmp[key] = self._whole_candidates(col, run)
            self._candidates[col] = rows
        return rows

    def _whole_candidates(self, col: int, run: int) -> np.ndarray:
        """:meth:`width_candidates` computed: a big value column's extremes are those
        of the run's own values (its absent rows print nothing), found without reading
        the column row by row."""
        from .column_sizing import EXTREMES_ONLY, column_extremes, value_candidates

        c = self.columns[col]
        cmp = self.cmp
        big = c.metric is not None and col not in self._arrays and cmp.n_rows > EXTREMES_ONLY
        if big and c.kind == "value":
            return cmp.rows_of_present(run, column_extremes(cmp.present_values(c.metric, run)))
        if big and c.kind in ("delta", "rel") and cmp.n_runs > 1:
            return cmp.change_extremes(c.metric, run)[c.kind == "rel"]
        return value_candidates(self._column_once(col))

    def has_icons(self) -> bool:
        """Whether name cells may carry a status icon (the merged diff of 2+ runs)."""
        return bool(self.icons) and self.pane_run is None and self.cmp.n_runs > 1

    status_by_culprit = False  # the status column sorts culprit first (the flat table)
    unsorted_key: Callable[[], np.ndarray] | None = None  # the order with no column sorted

    def sort_key(self, col: int) -> np.ndarray:
        """Float key for sorting by column ``col`` (strings by their sorted codes; the
        status column culprit first when :attr:`status_by_culprit`)."""
        c = self.columns[col]
        if c.kind == "status" and c.run is None and self.status_by_culprit:
            from profdiff.viewer.ranking import culprit_key

            return culprit_key(self.cmp, by_status=True)
        a = self.column_array(col)
        if c.kind in ("name", "module", "src"):
            lowered = np.array([str(x).lower() for x in np.asarray(a, dtype=object).tolist()],
                               dtype=object)
            codes, _ = factorize(lowered, sort=True)
            return codes.astype(np.float64)
        key = np.asarray(a, dtype=np.float64)
        if c.kind in ("delta", "rel") and self.cmp.metric_by_name[c.metric].better == "higher":
            key = -key  # descending = the largest regression first, whichever way is worse
        return key

    colour_by_share = False  # class-wide: one switch for every view (set_colour_by_share)

    def change_pp(self, metric: str, run: int | None = None) -> np.ndarray:
        """Oriented change (positive = worse) in percentage points of the baseline's total;
        cached per (metric, run): :func:`viewer.view_state.colour_change`."""
        key = ("pp", metric, -1 if run is None else run, self.colour_by_share)
        d = self._colors.get(key)
        if d is None:
            if metric in self._factors:  # a view with its own run scale (ticky groups)
                d = np.nan_to_num(self.cmp.delta(metric, run)) * self._factors[metric]
            else:
                d = colour_change(self.cmp, metric, run, by_share=self.colour_by_share)
            self._colors[key] = d
        return d

    def _delta_colors(self, metric: str, run: int | None) -> np.ndarray:
        """Colours of a whole Δ column (uint8[n, 3]); cached. Cells use :meth:`_cell_rgb`."""
        key = (metric, -1 if run is None else run)
        c = self._colors.get(key)
        if c is None:
            c = self.scale.colors(self.change_pp(metric, run))
            self._colors[key] = c
        return c

    def _cell_rgb(self, metric: str, run: int | None, r: int) -> tuple[int, int, int]:
        """Colour of one Δ cell, computed for that row only (painting never touches n rows)."""
        d = self._change_at(metric, run, r)
        return scalar_color(self.scale, d if d == d else 0.0)

    def _change_at(self, metric: str, run: int | None, r: int) -> float:
        """``change_pp(metric, run)[r]``, computed for the block of rows around ``r`` only:
        the first paint of a tab would otherwise compute whole 10^6-row columns (nan_to_num,
        changed_mask: ~40 ms each) to colour the few hundred cells it shows."""
        return float(self._changes_at(metric, run, np.array([r]))[0])

    def _changes_at(self, metric: str, run: int | None, rows: np.ndarray) -> np.ndarray:
        """``change_pp(metric, run)[rows]``: from the whole column when computed, else from
        the blocks of :data:`_BLOCK` rows holding ``rows`` (computed now when missing).

        Each block is an array of its own: one row-long array, first touched at a few
        blocks spread over the tree, cost ~1 ms per metric (numpy asks the kernel for
        huge pages, and each first touch clears a 2 MB page)."""
        key = ("pp", metric, -1 if run is None else run, self.colour_by_share)
        whole = self._colors.get(key)
        if whole is not None:
            return whole[rows]
        blocks = self._colour_blocks.setdefault(key, {})
        which = rows // _BLOCK
        out = np.empty(len(rows))
        alone = np.zeros(len(rows), dtype=bool)
        for b in np.unique(which).tolist():
            here = which == b
            got = blocks.get(b)
            if got is None and np.count_nonzero(here) > _FEW_ROWS:
                sl = slice(b * _BLOCK, min(self.cmp.n_rows, (b + 1) * _BLOCK))
                got = blocks[b] = self._change_block(metric, run, sl)
            if got is None:
                alone |= here
            else:
                out[here] = got[rows[here] - b * _BLOCK]
        if alone.any():  # a few rows of blocks not computed: those rows, in one pass
            out[alone] = self._change_block(metric, run, rows[alone])
        return out

    def _change_block(self, metric: str, run: int | None, rows: slice | np.ndarray
                      ) -> np.ndarray:
        """:meth:`change_pp` over ``rows``, a block or row ids (the same arithmetic,
        element by element)."""
        if metric in self._factors:
            return np.nan_to_num(self.cmp.delta(metric, run, rows)) * self._factors[metric]
        share = self.colour_by_share
        f = self._pp_factor.get((metric, share))
        if f is None:
            src = colour_source(self.cmp, metric, share)
            f = self._pp_factor[(metric, share)] = change_scale_factor(self.cmp, src)
        return colour_change(self.cmp, metric, run, by_share=share, rows=rows, factor=f)

    # ----- structure --------------------------------------------------------------------
    def _pid(self, parent: QModelIndex) -> int:
        return int(parent.internalId()) if parent.isValid() else -1

    def index(self, row: int, column: int, parent: QModelIndex = _ROOT) -> QModelIndex:
        # ``column()`` is -1 on an invalid index: one call tells root, child or neither
        # (QTreeView's layout calls this once per shown row, so every call counts)
        pc = parent.column()
        if pc < 0:
            p = -1
        elif self._flat or pc:
            return QModelIndex()
        else:
            p = parent.internalId()
        lst = self._plists.get(p)
        if lst is None:
            lst = self.layout.child_list(p)
        if 0 <= row < len(lst) and 0 <= column < self._ncols:
            if column:
                return self.createIndex(row, column, lst[row])
            # the tree column's indexes are asked for again on every relayout and paint
            # (drawBranches walks siblings): kept until the rows move (_forget_indexes)
            r = lst[row]
            idx = self._index0.get(r)
            if idx is None:
                if len(self._index0) >= _MAX_CELLS:
                    self._index0 = {}
                idx = self._index0[r] = self.createIndex(row, 0, r)
            return idx
        return _ROOT

    def sibling(self, row: int, column: int, idx: QModelIndex) -> QModelIndex:
        """The cell of ``idx``'s row in ``column`` without Qt's default ``parent`` +
        ``index`` round trip: painting asks for each cell of a row this way (two calls
        into Python per cell otherwise), and every column's index carries the row id."""
        if row == idx.row() and idx.isValid():
            if column == idx.column():
                return idx
            if 0 <= column < self._ncols:
                if column == 0:
                    got = self._index0.get(idx.internalId())
                    if got is not None:
                        return got
                return self.createIndex(row, column, idx.internalId())
            return _ROOT
        return super().sibling(row, column, idx)

    def parent(self, index: QModelIndex | None = None):  # type: ignore[override]
        if index is None:  # QObject.parent()
            return super().parent()
        r = index.internalId()
        got = self._parent_of.get(r)
        if got is not None and index.column() >= 0:
            return got
        if not index.isValid():
            return _ROOT
        p = int(self._parents[r])
        if p < 0:
            got = _ROOT
        else:  # painting asks for every shown row's ancestors (the branch lines)
            got = self.createIndex(self.layout.position(p), 0, p)
        if len(self._parent_of) >= _MAX_CELLS:
            self._parent_of = {}
        self._parent_of[r] = got
        return got

    def show_more_of(self, parents) -> None:
        """Show more children of each of ``parents`` that has more (the view painted
        their last shown child)."""
        for p in dict.fromkeys(parents):
            if self.layout.has_more(p):
                self.layout.show_more(p)

    def _rows_about_to_show(self, p: int, first: int, end: int) -> None:
        """The layout shows children ``first..end-1`` of row ``p`` (called by it)."""
        parent = _ROOT if p < 0 else self.createIndex(self.layout.position(p), 0, p)
        self.beginInsertRows(parent, first, end - 1)

    def _rows_shown(self) -> None:
        self.endInsertRows()

    def _forget_indexes(self) -> None:
        """Rows moved (sort, filter, new columns): the cached indexes are stale."""
        self._index0 = {}
        self._parent_of = {}

    def rowCount(self, parent: QModelIndex = _ROOT) -> int:
        pc = parent.column()
        if pc < 0:
            p = -1
        elif self._flat or pc:
            return 0
        else:
            p = parent.internalId()
        lst = self._plists.get(p)
        if lst is not None:
            return len(lst)
        return self.layout.child_count(p)

    def columnCount(self, parent: QModelIndex = _ROOT) -> int:
        return self._ncols

    def hasChildren(self, parent: QModelIndex = _ROOT) -> bool:
        pc = parent.column()
        if pc < 0:
            return self.layout.child_count(-1) > 0
        if self._flat or pc:
            return False
        hk = self._kids
        if hk is None:
            hk = self._kids = self.layout.has_kids()
        return hk[parent.internalId()] == 1

    def index_for_row(self, row: int, column: int = 0) -> QModelIndex:
        """The index showing union row ``row`` (invalid when filtered out)."""
        row = int(row)  # a numpy integer would be taken for a pointer by createIndex
        self.layout.show_path(row)
        pos = self.layout.position(row)
        if pos < 0:
            return QModelIndex()
        return self.createIndex(pos, column, row)

    def indexes_for_rows(self, rows, column: int = 0) -> list[QModelIndex]:
        """:meth:`index_for_row` for many rows, positions computed in one numpy pass."""
        rows = np.asarray(rows, dtype=np.int64)
        self.layout.show_rows(rows)  # expanded rows: their ancestors are among them
        pos = self.layout.positions(rows)
        ci = self.createIndex
        out = [ci(p, column, r) if p >= 0 else QModelIndex()
               for p, r in zip(pos.tolist(), rows.tolist(), strict=True)]
        if column == 0:  # expanding them relayouts
            self._keep_indexes(zip(rows.tolist(), out, strict=True))
        return out

    def _keep_indexes(self, made) -> None:
        """Keep the tree column's indexes ``made`` ((row id, index) pairs) for
        :meth:`index`: the relayout that follows asks for each again (within the cache's
        bound; invalid ones, rows not shown, are left out)."""
        if len(self._index0) < _MAX_CELLS:
            self._index0.update((r, i) for r, i in made if i.isValid())

    def row_id(self, index: QModelIndex) -> int:
        return int(index.internalId()) if index.isValid() else -1

    # ----- data -------------------------------------------------------------------------
    # no ``flags`` override: QAbstractItemModel's own (enabled + selectable on a valid
    # index) is what this model wants, and QTreeView's layout asks for it twice per shown
    # row - from C++ that costs nothing, through Python ~25 % of a relayout

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        c = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return c.header
        if role == Qt.ItemDataRole.ToolTipRole:
            return c.tooltip or c.header
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if c.numeric else _LEFT
        if role == Qt.ItemDataRole.InitialSortOrderRole:
            return initial_sort_order(c)
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        # the hot path of painting: one dict lookup per role once a cell was seen
        col = index.column()
        if col < 0:
            return None
        r = index.internalId()
        slot = _CELL_SLOT.get(role)
        if slot is not None:
            if self._cell_noise is not self.cmp.noise:
                self._reset_cells()  # significance computed: faded cells changed
            cell = self._cells.get(r * self._ncols + col)
            if cell is None:
                cell = self._miss(index, r, col)
            if slot == 4 and self._label[col] and cell[4] is None and self._match_bold(r):
                return self._bold
            return cell[slot]
        if role == _ROW_ID:
            return r
        c = self.columns[col]
        if role == _TOOLTIP:
            pres = self.present
            return self._tooltip(c, r, pres is not None and not pres[r])
        if role == _SORT_VALUE and c.numeric:
            return float(self.column_array(col)[r])
        return None

    def painted_cell(self, index: QModelIndex) -> tuple | None:
        """What ``data`` answers for a painted cell's roles, as one tuple (display,
        alignment, background, foreground, font, decoration); None for an invalid index.
        Read by :class:`~.cell_delegate.CellDelegate` in one call instead of seven."""
        col = index.column()
        if col < 0:
            return None
        r = index.internalId()
        self._check_cells()
        cell = self._cells.get(r * self._ncols + col)
        if cell is None:
            cell = self._miss(index, r, col)
        if self._label[col] and cell[4] is None and self._match_bold(r):
            return (*cell[:4], self._bold, cell[5])
        return cell

    def painted_row(self, index: QModelIndex) -> list[tuple]:
        """:meth:`painted_cell` of every column of ``index``'s row (by column), for a view
        drawing a row in one call (:mod:`.row_painter`)."""
        r = index.internalId()
        self._check_cells()
        cells, nc = self._cells, self._ncols
        base = r * nc
        out = [cells.get(base + c) for c in range(nc)]
        if None in out:
            for c in range(nc):
                if out[c] is None:
                    out[c] = self._miss(index, r, c)
        if self.layout.matched is not None and self._match_bold(r):
            bold = self._bold
            out = [(*x[:4], bold, x[5]) if lab and x[4] is None else x
                   for x, lab in zip(out, self._label, strict=True)]
        return out

    def _match_bold(self, r: int) -> bool:
        """Whether row ``r``'s name and module are bold: the filter matched it."""
        m = self.layout.matched
        return m is not None and bool(m[r])

    def _cell(self, r: int, col: int) -> tuple:
        """Every painted role of one cell, in :data:`_CELL_SLOT` order (then cached)."""
        c = self.columns[col]
        pres = self.present
        align = _RIGHT if c.numeric else _LEFT
        deco = None
        if col == 0 and self.pane_run is None and self.cmp.n_runs > 1:
            deco = self._icons.get(self.cmp.status_at(r))
        if pres is not None and not pres[r]:
            cell = (PLACEHOLDER_TEXT if col == 0 else "", align, self._placeholder,
                    self._grey, self._italic, deco)
        else:
            cell = (self._text(c, col, r), align, self._background(c, col, r),
                    self._foreground(c, r), self._font(c, r), deco)
        if len(self._cells) >= _MAX_CELLS:
            self._cells = {}
        self._cells[r * self._ncols + col] = cell
        return cell

    # ----- cells of many rows at once (what a paint asks for, one cache miss) -----------
    def _miss(self, index: QModelIndex, r: int, col: int) -> tuple:
        """Cell ``(r, col)`` is not cached: fill the rows around it (:meth:`_fill_around`)
        when this model computes cells the base way, else just this cell."""
        if not self._vector_cells:
            return self._cell(r, col)
        self._fill_around(index.row(), r)
        cell = self._cells.get(r * self._ncols + col)
        return cell if cell is not None else self._cell(r, col)

    @cached_property
    def _vector_cells(self) -> bool:
        """Whether :meth:`fill_cells` gives what :meth:`_cell` would: a subclass that
        computes cells its own way (overrides one of the parts) keeps the per-cell path."""
        base, mine = ComparisonTreeModel, type(self)
        return all(getattr(mine, f) is getattr(base, f) for f in (
            "_cell", "_text", "_background", "_foreground", "_font", "_rounding", "_faded",
            "_cell_rgb", "_sig_real", "_sig_text", "present", "within_noise", "noise"))

    def _fill_around(self, pos: int, r: int) -> None:
        """Fill the cells of the siblings shown near row ``r`` (at ``pos`` in its parent's
        list): a paint after a sort, filter, expand or scroll misses for a screenful of
        rows, and one vectorised pass per column costs less than a few cells one by one."""
        p = -1 if self._flat else int(self._parents[r])
        lst = self._plists.get(p)
        if lst is None:
            lst = self.layout.child_list(p)
        if 0 <= pos < len(lst) and lst[pos] == r:
            near = lst[max(0, pos - _FILL_BEFORE): pos + _FILL_AFTER]
            cells, nc = self._cells, self._ncols
            rows = [x for x in near if x * nc not in cells or x == r]
        else:
            rows = [r]
        self.fill_cells(np.asarray(rows, dtype=np.int64))

    def prefill(self, rows: list[int]) -> None:
        """Fill the cells of those of ``rows`` (row ids) not cached yet, in one pass: a
        view calls it with the rows it is about to paint."""
        if not self._vector_cells:
            return
        self._check_cells()
        cells, nc = self._cells, self._ncols
        todo = [r for r in rows if r * nc not in cells]
        if todo:
            self.fill_cells(np.asarray(todo, dtype=np.int64))

    def fill_cells(self, rows: np.ndarray) -> None:
        """Cache every column's cell of ``rows``: the same tuples :meth:`_cell` makes,
        with the numpy reads done once per column instead of once per cell."""
        self._check_cells()
        rows = np.asarray(rows, dtype=np.int64)
        if len(self._cells) + rows.size * self._ncols > _MAX_CELLS:
            self._cells = {}
        pres = self.present
        if pres is not None:
            gone = rows[~pres[rows]]
            rows = rows[pres[rows]]
        merged = self.pane_run is None and self.cmp.n_runs > 1
        status = self.cmp.status_rows(rows).tolist() if merged else None
        rl = rows.tolist()
        cells, nc = self._cells, self._ncols
        for col, c in enumerate(self.columns):
            align = _RIGHT if c.numeric else _LEFT
            texts = self._texts_of(c, col, rows)
            bgs = self._backgrounds_of(c, col, rows, status)
            fgs = self._foregrounds_of(c, rows, status)
            fonts = self._fonts_of(c, rows)
            if col == 0 and merged:
                icons = self._icons
                decos = [icons.get(s) for s in status]  # type: ignore[union-attr]
            else:
                decos = [None] * len(rl)
            for r, t, bg, fg, f, d in zip(rl, texts, bgs, fgs, fonts, decos, strict=True):
                cells[r * nc + col] = (t, align, bg, fg, f, d)
        if pres is not None:
            for col, c in enumerate(self.columns):
                align = _RIGHT if c.numeric else _LEFT
                cell = (PLACEHOLDER_TEXT if col == 0 else "", align, self._placeholder,
                        self._grey, self._italic, None)
                for r in gone.tolist():
                    cells[r * nc + col] = cell

    def _texts_of(self, c: Column, col: int, rows: np.ndarray) -> list[str]:
        """:meth:`_text` of column ``col`` for each of ``rows``."""
        kind = c.kind
        if kind in LABEL_KINDS:
            out = [str(x) for x in self.column_at(col, rows).tolist()]
            mb = self.cmp.matched_by
            if kind == "name" and self.pane_run is None and self.cmp.n_runs > 1 and \
                    mb is not None:
                marked = (mb[rows] > 0).tolist()
                out = [MATCH_MARK + t if m else t for t, m in zip(out, marked, strict=True)]
            return out
        if kind not in ("value", "delta", "rel"):  # sig, status: few columns, rarely shown
            return [self._text(c, col, r) for r in rows.tolist()]
        vals = np.asarray(self.column_at(col, rows), dtype=np.float64).tolist()
        if kind == "rel":
            blank = self.cmp.n_runs > 1
            return ["" if v == 0 and blank else format_rel(v) for v in vals]
        assert c.metric is not None
        unit = self.cmp.metric_by_name[c.metric].unit
        sc = self._scale(c.metric)
        if kind == "delta":
            blank = self.cmp.n_runs > 1
            run = self.cmp.current if c.run is None else c.run
            rd = self._rounding(c.metric, -1, run, delta=True)
            return ["" if v == 0 and blank else
                    format_delta(v, unit, suffix=False, scale=sc, rounding=rd) for v in vals]
        run = c.run if c.run is not None else (
            self.pane_run if self.pane_run is not None else self.cmp.current)
        rd = self._rounding(c.metric, -1, run)
        out = [format_value(v, unit, suffix=False, rounding=rd, scale=sc) for v in vals]
        if self.pane_run is None:
            for i in np.flatnonzero(~self.cmp.present[rows, run]).tolist():
                out[i] = "·"
        return out

    def _rgbs_of(self, c: Column, rows: np.ndarray) -> list[tuple[int, int, int]]:
        """:meth:`_cell_rgb` of a Δ column for each of ``rows``."""
        assert c.metric is not None
        ch = self._changes_at(c.metric, c.run, rows).tolist()
        scale = self.scale
        return [scalar_color(scale, d if d == d else 0.0) for d in ch]

    def _faded_of(self, c: Column, rows: np.ndarray) -> list[bool]:
        """:meth:`_faded` for each of ``rows``."""
        mn = self.noise(c.metric, c.run) if self.fade_noise and c.kind in ("delta", "rel") \
            else None
        if mn is None or mn.exact or not mn.judged:
            return [False] * rows.size
        return np.logical_not(mn.significant[rows]).tolist()

    def _sig_real_of(self, c: Column, rows: np.ndarray) -> list[bool]:
        """:meth:`_sig_real` for each of ``rows``."""
        mn = self.noise(c.metric)
        if mn is None or not mn.judged:
            return [False] * rows.size
        return np.asarray(mn.significant[rows]).astype(bool).tolist()

    def _backgrounds_of(self, c: Column, col: int, rows: np.ndarray,
                        status: list[int] | None) -> list:
        """:meth:`_background` of column ``col`` for each of ``rows``."""
        if c.kind in ("delta", "rel") and self.color_deltas:
            d = self.column_at(col, rows)
            none = ((d == 0) | np.isnan(d)).tolist()
            faded = self._faded_of(c, rows)
            brush = self._brush
            return [None if no else brush(fade_rgb(rgb) if fd else rgb)
                    for no, rgb, fd in zip(none, self._rgbs_of(c, rows), faded, strict=True)]
        if c.kind == "name" and status is not None:
            pick = {int(Status.ADDED): self._added, int(Status.REMOVED): self._removed}
            return [pick.get(s) for s in status]
        return [None] * rows.size

    def _foregrounds_of(self, c: Column, rows: np.ndarray, status: list[int] | None) -> list:
        """:meth:`_foreground` of column ``c`` for each of ``rows``."""
        faded = self._faded_of(c, rows)
        ffg = self._faded_fg
        if c.kind in ("delta", "rel") and self._color_deltas:
            brush = self._brush
            return [ffg if fd else brush(text_color_for(rgb))
                    for fd, rgb in zip(faded, self._rgbs_of(c, rows), strict=True)]
        if c.kind == "sig":
            rest = [None if real else ffg for real in self._sig_real_of(c, rows)]
        elif status is not None:
            removed, grey = int(Status.REMOVED), self._grey
            rest = [grey if s == removed else None for s in status]
        else:
            rest = [None] * rows.size
        return [ffg if fd else x for fd, x in zip(faded, rest, strict=True)]

    def _fonts_of(self, c: Column, rows: np.ndarray) -> list:
        """:meth:`_font` of column ``c`` for each of ``rows``."""
        if c.kind != "sig":
            return [None] * rows.size
        bold = self._bold
        return [bold if real else None for real in self._sig_real_of(c, rows)]

    def _brush(self, rgb: tuple[int, int, int]) -> QBrush:
        """One QBrush per colour (painting asks for a brush per Δ cell twice)."""
        b = self._brushes.get(rgb)
        if b is None:
            if len(self._brushes) > 4096:
                self._brushes.clear()
            b = self._brushes[rgb] = QBrush(QColor(*rgb))
        return b

    def _foreground(self, c: Column, r: int):
        if self._faded(c, r):
            return self._faded_fg
        if c.kind in ("delta", "rel") and self._color_deltas:
            return self._brush(text_color_for(self._cell_rgb(c.metric, c.run, r)))
        if c.kind == "sig":
            return None if self._sig_real(c.metric, r) else self._faded_fg
        if self.pane_run is None and self.cmp.n_runs > 1 and \
                self.cmp.status_at(r) == Status.REMOVED:
            return self._grey
        return None

    def _font(self, c: Column, r: int):
        """The font of a present cell, less the filter's bold (:meth:`_match_bold`)."""
        if c.kind == "sig" and self._sig_real(c.metric, r):
            return self._bold
        return None

    def matched_by(self, r: int) -> str:
        """``"path"``, ``"rule"`` or ``"suggestion"``: how row ``r``'s runs were matched."""
        mb = self.cmp.matched_by
        return MATCHED_BY[int(mb[r])] if mb is not None and len(mb) > r else "path"

    def _marked(self, r: int) -> bool:
        mb = self.cmp.matched_by
        return self.pane_run is None and self.cmp.n_runs > 1 and mb is not None and mb[r] > 0

    def _sig_real(self, metric: str | None, r: int) -> bool:
        mn = self.noise(metric)
        return mn is not None and mn.judged and bool(mn.significant[r])

    def _sig_text(self, metric: str, r: int) -> str:
        mn = self.noise(metric)
        if mn is None:
            return ""
        v = self.cmp.row_values(metric, r)
        if v[self.cmp.current] == v[self.cmp.baseline]:
            return ""
        sig = bool(mn.significant[r])
        if not mn.judged:
            return "not judged" if sig else ""
        if mn.exact:
            return "real (exact)" if sig else ""
        return f"{'real' if sig else 'noise'} {format_pvalue(mn.pvalue_at(r))}"

    def _text(self, c: Column, col: int, r: int) -> str:
        if c.kind in LABEL_KINDS:
            a = self._arrays.get(col)
            text = str(self.cmp.label_at(c.kind, r) if a is None else a[r])
            return MATCH_MARK + text if c.kind == "name" and self._marked(r) else text
        if c.kind == "sig":
            return self._sig_text(c.metric, r)
        if c.kind == "status":
            return Status(int(self.column_array(col)[r])).label
        v = float(self.column_at(col, [r])[0])
        unit = self.cmp.metric_by_name[c.metric].unit
        if c.kind == "value":
            run = c.run if c.run is not None else (
                self.pane_run if self.pane_run is not None else self.cmp.current)
            if self.pane_run is None and not self.cmp.present[r, run]:
                return "·"
            return format_value(v, unit, suffix=False, rounding=self._rounding(c.metric, r, run),
                                scale=self._scale(c.metric))
        if v == 0 and self.cmp.n_runs > 1:
            return ""  # unchanged: leave the Δ cells empty so changes stand out
        if c.kind == "delta":
            run = self.cmp.current if c.run is None else c.run
            return format_delta(v, unit, suffix=False, scale=self._scale(c.metric),
                                rounding=self._rounding(c.metric, r, run, delta=True))
        return format_rel(v)

    def _scale(self, metric: str) -> Scale | None:
        """The metric's column time scale (cached: computed once per comparison)."""
        if metric not in self._scales:
            self._scales[metric] = metric_scale(self.cmp, metric)
        return self._scales[metric]

    def _rounding(self, metric: str, r: int, run: int, delta: bool = False) -> float:
        """± half-width deciding the digits of ``run``'s values (Δs: both runs')."""
        return digits_rounding(self.cmp.runs, metric, run,
                               self.cmp.baseline if delta else None)

    def _background(self, c: Column, col: int, r: int):
        if c.kind in ("delta", "rel") and self.color_deltas:
            d = self.column_at(col, [r])[0]  # rel is 0 exactly when the delta is
            if d == 0 or np.isnan(d):
                return None
            rgb = self._cell_rgb(c.metric, c.run, r)
            if self._faded(c, r):
                rgb = fade_rgb(rgb)
            return self._brush(rgb)
        if c.kind == "name" and self.pane_run is None and self.cmp.n_runs > 1:
            st = self.cmp.status_at(r)
            if st == Status.ADDED:
                return self._added
            if st == Status.REMOVED:
                return self._removed
        return None

    def _colour_note(self, c: Column, r: int) -> list[str]:
        """What a Δ cell of a share is coloured by, when that is its absolute cost
        (:func:`viewer.view_state.colour_change`) and not the number in the cell.

        Why said: a root's total % reads 100 -> 100 (+<0.1 pp) in a run that got 52 %
        slower, and its cell is full red: the colour is right (the whole run's cost grew)
        but without this line it looks like a wrong colour."""
        if c.metric in self._factors:
            return []
        src = colour_source(self.cmp, c.metric, self.colour_by_share)
        if src == c.metric:
            return []
        met = self.cmp.metric_by_name[src]
        if met.better == "none":
            return []  # not coloured at all
        vals = self.cmp.row_values(src, r)
        run = self.cmp.current if c.run is None else c.run
        d = float(vals[run] - vals[self.cmp.baseline])
        pp = self._change_at(c.metric, c.run, r)
        if met.better == "higher":
            pp = -pp
        return [f"colour: {met.title} {format_delta(d, met.unit)}, "
                f"{pp:+.1f} pp of the baseline run's total",
                "  (shares move when another row grows: absolute costs colour the cells)"]

    def _tooltip(self, c: Column, r: int, absent: bool) -> str | None:
        if absent:
            return f"not present in run {self.pane_run} ({self._run_name(self.pane_run)})"
        if c.kind == "name":
            path = " ▸ ".join(self.cmp.path_labels(r)) if self.cmp.mode == "tree" else \
                f"{self.cmp.module[r]}.{self.cmp.name[r]}"
            st = Status(int(self.cmp.status[r])).label if self.cmp.n_runs > 1 else ""
            tip = f"{path}\n{self.cmp.label_at('src', r)}" + (f"\n[{st}]" if st else "")
            if self._marked(r):
                tip += "\n" + self._match_note(r)
            return tip
        if c.kind == "status" and c.run is None:
            return self._status_tip(r)
        if c.kind == "sig":
            mn = self.noise(c.metric)
            if mn is None:
                return "significance not computed yet"
            if not mn.judged:
                return mn.method
            return (f"p = {mn.pvalue_at(r):.3g} "
                    f"({'significant' if mn.significant[r] else 'within the noise'})\n"
                    f"{mn.method}")
        if c.numeric:
            met = self.cmp.metric_by_name[c.metric]
            vals = self.cmp.row_values(c.metric, r)
            lines = [met.title]
            for i, v in enumerate(vals):
                lines.append(f"  {self._run_name(i)}: "
                             f"{format_value(float(v), met.unit, rounding=self._rounding(c.metric, r, i))}")
            run = self.cmp.current if c.run is None else c.run
            mn = self.noise(c.metric, run) if c.kind in ("delta", "rel") else None
            if mn is not None and not mn.judged:
                if vals[run] != vals[self.cmp.baseline]:
                    lines.append("  not judged: one run per side cannot tell this metric's "
                                 "moves from run-to-run noise")
            elif mn is not None and vals[run] != vals[self.cmp.baseline]:
                real = bool(mn.significant[r])
                lines.append(f"  {'significant' if real else 'within the noise'} "
                             f"({format_pvalue(mn.pvalue_at(r))})")
            if c.kind in ("delta", "rel"):
                lines += self._colour_note(c, r)
            return "\n".join(lines)
        return None

    def _status_tip(self, r: int) -> str | None:
        """What a "changed" or "moved" status rests on: each metric that moved, base ->
        new (a row may change only in a metric that is not a column)."""
        cmp = self.cmp
        st = Status(int(cmp.status[r]))
        if st not in (Status.CHANGED, Status.MOVED):
            return None
        lines = [f"{st.label}: judged on"]
        for name in cmp.changed_by(r):
            met = cmp.metric_by_name[name]
            vals = cmp.row_values(name, r)
            b, n = float(vals[cmp.baseline]), float(vals[cmp.current])
            rel = format_rel((n - b) / abs(b) if b else math.inf)
            rb = self._rounding(name, r, cmp.baseline)
            rn = self._rounding(name, r, cmp.current)
            lines.append(f"  {met.title}: {format_value(b, met.unit, rounding=rb)} → "
                         f"{format_value(n, met.unit, rounding=rn)} ({rel})")
        return "\n".join(lines) if len(lines) > 1 else None

    def _match_note(self, r: int) -> str:
        """"matched by rename rule / accepted suggestion", with the other runs' names."""
        how = "rename rule" if self.matched_by(r) == "rule" else "accepted suggestion"
        names = []
        for i, p in enumerate(self.cmp.runs):
            n = int(self.cmp.node[r, i]) if self.cmp.node.shape[1] > i else -1
            if n < 0:
                continue
            f = int(p.frame[n])
            label = f"{p.frames.module[f]}.{p.frames.name[f]}"
            if label not in names:
                names.append(label)
        return f"matched by {how}: " + " ↔ ".join(names)

    def _run_name(self, i: int | None) -> str:
        if i is None:
            return ""
        return labels_of(self.cmp)[i]

    # ----- sorting ----------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.columns):
            self.layout.set_sort(self.unsorted_key() if self.unsorted_key is not None
                                 else None)
            return
        desc = order == Qt.SortOrder.DescendingOrder
        self.layout.set_sort(self.sort_key(column), desc)
        self.sortApplied.emit(column, order)

    # ----- layout change plumbing (called by RowLayout) ---------------------------------
    def _layout_about_to_change(self) -> None:
        self.layoutAboutToBeChanged.emit()
        self._forget_indexes()
        self._persist = self.persistentIndexList()
        self._persist_ids = [(i.internalId(), i.column()) if i.isValid() else (-1, 0)
                             for i in self._persist]

    def _layout_changed(self) -> None:
        self._kids = None  # a filter changes which rows have visible children
        self._forget_indexes()
        if self._persist:
            # a tree view keeps one persistent index per expanded row: map them all with
            # one batched sort of their parents' child lists
            ids = np.fromiter((r for r, _ in self._persist_ids), dtype=np.int64,
                              count=len(self._persist_ids))
            ok = (ids >= 0) & (ids < self.layout.n)
            # the view's relayout then reads the child lists of these (expanded) rows
            self.layout.prefetch(ids[ok])
            self.layout.show_rows(ids[ok], quiet=True)  # this relayout shows them
            pos = np.full(ids.size, -1, dtype=np.int64)
            pos[ok] = self.layout.positions(ids[ok])
            ci = self.createIndex
            new = [ci(p, c, r) if p >= 0 else QModelIndex()
                   for p, (r, c) in zip(pos.tolist(), self._persist_ids, strict=True)]
            self.changePersistentIndexList(self._persist, new)
            self._keep_indexes((r, i) for i, (r, c) in zip(new, self._persist_ids,
                                                            strict=True) if c == 0)
        self._persist = []
        self._persist_ids = []
        self.layoutChanged.emit()

    # convenience for views/tests
    def persistent(self, row: int) -> QPersistentModelIndex:
        return QPersistentModelIndex(self.index_for_row(row))

    @cached_property
    def main_metric(self) -> str | None:
        return default_metric(self.cmp)


def scalar_color(scale: DivergingScale, change: float) -> tuple[int, int, int]:
    """``scale.color(change)`` in plain Python floats: the same arithmetic as
    :meth:`DivergingScale.colors` without building numpy arrays for one cell (painting
    asks for a few hundred cells per frame)."""
    strong_w, pale_w, neutral, pale_b, strong_b = PALETTES[scale.palette]
    mag = abs(change)
    if mag <= scale.dead_zone:
        return neutral
    span = max(scale.clamp - scale.dead_zone, 1e-12)
    t = min(max((mag - scale.dead_zone) / span, 0.0), 1.0)
    hi, lo = (strong_w, pale_w) if change > 0 else (strong_b, pale_b)
    return (round(lo[0] + (hi[0] - lo[0]) * t), round(lo[1] + (hi[1] - lo[1]) * t),
            round(lo[2] + (hi[2] - lo[2]) * t))


def initial_sort_order(c: Column) -> int:
    """The order of a first click on ``c``'s header (``Qt.InitialSortOrderRole``): numbers
    descending, so the largest value or regression comes first (a second click flips);
    names and p-values ascending."""
    desc = c.numeric
    order = Qt.SortOrder.DescendingOrder if desc else Qt.SortOrder.AscendingOrder
    return int(order.value)


def format_pvalue(p: float) -> str:
    if p != p:
        return "p=?"
    if p < 0.001:
        return "p<0.001"
    return f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def fade_rgb(rgb, amount: float = 0.75) -> tuple[int, int, int]:
    """``rgb`` mixed ``amount`` of the way to white: a change within the noise."""
    return tuple(int(round(c + (255 - c) * amount)) for c in rgb)  # type: ignore[return-value]


def set_colour_by_share(on: bool) -> None:
    """Colour every comparison model's Δ cells by share of each run (``on``) or, the
    default, by the change against the baseline's total.  One switch for every view: the
    window then re-applies its scale so cached colours are dropped and views repaint."""
    ComparisonTreeModel.colour_by_share = bool(on)
    for m in list(_MODELS):
        m.colour_basis_changed()
