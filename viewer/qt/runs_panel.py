"""Watch mode in the desktop app: the runs table, what to compare, plots over runs.

:func:`open_watch` adds a :class:`RunsPanel` tab to a ``MainWindow`` and starts watching:
every run that lands (see :mod:`viewer.watch`) becomes a row (time, file, format, status,
key totals; an RTS ``-s`` log merges into its profile's row).  The runs to compare come
from the mode - newest vs previous, newest vs a pinned baseline, or runs picked in the
table - and go to ``MainWindow.set_runs_async(profiles, keep_state=True)`` (aligned in a
worker thread, so a big run landing does not freeze the window), so the views update
in place keeping expansion, selection, scroll and filter.  A line above the table names
the biggest changes (:func:`viewer.runs.top_changes`), also shown in the status bar.

The plots (pyqtgraph) show a chosen total over the runs and a chosen cost centre's metric
over the runs.  Updates are coalesced by a short timer, so the start-up scan of a folder
with thousands of runs does not re-align the views for every file.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QCompleter,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.model import Kind, Profile, Unit
from profdiff.viewer.runs import MODES, Run, RunsTable, top_changes
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.units import format_value, unit_label
from profdiff.viewer.watch import DEFAULT_SETTLE, Landed

from .watch_bridge import WatchBridge

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")


class _LazyPyqtgraph:
    """pyqtgraph, imported on first use.  The window imports this module at start-up
    (for its "Watch folder" action), and importing pyqtgraph costs ~0.5 s - it loads
    every Qt binding module - which every window paid before its first paint."""

    def __getattr__(self, name: str):
        import pyqtgraph

        return getattr(pyqtgraph, name)


# plots are optional: the runs table works without pyqtgraph
pg = _LazyPyqtgraph() if importlib.util.find_spec("pyqtgraph") is not None else None

MODE_TITLES = {"previous": "Newest vs previous", "pinned": "Newest vs pinned baseline",
               "picked": "Runs picked in the table"}
FIXED_COLUMNS = ("time", "file", "format", "status")
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1


def is_watch_folder(path: str | os.PathLike) -> bool:
    """True for a folder the app should watch: a directory no reader takes as one run
    (a Julia ``.mem`` run folder is opened as a profile instead)."""
    p = Path(path)
    if not p.is_dir():
        return False
    from profdiff.parsers.detect import detect
    from profdiff.parsers.errors import ProfdiffError

    try:
        detect(p)
    except ProfdiffError:
        return True
    return False


# ------------------------------------------------------------------------------------------
# model
# ------------------------------------------------------------------------------------------
class RunsModel(QAbstractTableModel):
    """Rows of a :class:`RunsTable`: fixed columns, then the totals present in any run."""

    def __init__(self, table: RunsTable, parent=None) -> None:
        super().__init__(parent)
        self.table = table
        self.keys: list[str] = table.total_keys()
        self._n = len(table)

    def refresh(self, changed: Run | None = None) -> None:
        """Re-read the table: new rows are inserted, new total columns reset the model."""
        keys = self.table.total_keys()
        n_old = self._n
        n_new = len(self.table)
        if keys != self.keys or n_new < n_old:
            self.beginResetModel()
            self.keys = keys
            self._n = n_new
            self.endResetModel()
            return
        if n_new > n_old:
            self.beginInsertRows(QModelIndex(), n_old, n_new - 1)
            self._n = n_new
            self.endInsertRows()
        if changed is not None and changed in self.table.runs:
            r = self.table.index(changed)
            self.dataChanged.emit(self.index(r, 0), self.index(r, self.columnCount() - 1))
        elif n_new:
            self.dataChanged.emit(self.index(0, 0), self.index(n_new - 1, self.columnCount() - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(FIXED_COLUMNS) + len(self.keys)

    def run_at(self, row: int) -> Run | None:
        return self.table.runs[row] if 0 <= row < min(self._n, len(self.table)) else None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section < len(FIXED_COLUMNS):
                return FIXED_COLUMNS[section]
            key = self.keys[section - len(FIXED_COLUMNS)]
            m = self.table.total_metric(key)
            return m.label if m and m.label else key
        if role == Qt.ItemDataRole.ToolTipRole and section >= len(FIXED_COLUMNS):
            key = self.keys[section - len(FIXED_COLUMNS)]
            m = self.table.total_metric(key)
            return f"{key}: {m.description}" if m and m.description else key
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        run = self.run_at(index.row()) if index.isValid() else None
        if run is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(run, col)
        if role == RUN_ID_ROLE:
            return run.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join([*run.files, run.status])
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= len(FIXED_COLUMNS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if run.landed.error:
                return QBrush(QColor("#b2182b"))
            if run.incomplete:
                return QBrush(QColor("#b35806"))
        if role == Qt.ItemDataRole.FontRole and run is self.table.pinned:
            f = QFont()
            f.setBold(True)
            return f
        return None

    def _text(self, run: Run, col: int) -> str:
        if col == 0:
            return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.time))
        if col == 1:
            label = self.table.label(run)
            extra = [Path(a.path).name for a in run.attached.values()]
            pin = "📌 " if run is self.table.pinned else ""
            return pin + label + (f" + {', '.join(extra)}" if extra else "")
        if col == 2:
            return " + ".join([run.format, *run.attached])
        if col == 3:
            return run.status
        key = self.keys[col - len(FIXED_COLUMNS)]
        v = run.totals.get(key)
        if v is None:
            return ""
        m = self.table.total_metric(key)
        return format_value(v, m.unit if m else Unit.COUNT)


# ------------------------------------------------------------------------------------------
# panel
# ------------------------------------------------------------------------------------------
class RunsPanel(QWidget):
    """Runs list + mode + plots for one watched folder.

    Works on its own (tests, other hosts): without a main window it aligns the compared
    runs itself (:attr:`comparison`) and only shows the notification line.
    """

    comparedChanged = Signal(object)  # list[Run] now shown
    notified = Signal(str)

    def __init__(self, folder: str, *, glob: str | None = None, settle: float = DEFAULT_SETTLE,
                 recursive: bool = True, main_window=None, parent=None,
                 refresh_ms: int = 150, keep_profiles: int = 64) -> None:
        super().__init__(parent)
        self.folder = str(Path(folder).resolve())
        self.main_window = main_window
        self.table = RunsTable(self.folder, keep_profiles=keep_profiles)
        self.mode = "previous"
        self.picked: list[Run] = []
        self.shown: list[Run] = []
        self._shown_key: tuple = ()
        self.comparison = None  # flat Comparison of the shown runs (standalone use)
        self.last_changes: list[str] = []
        self.scan_done = False
        # how it watches, for a restart with other reading options (File ▸ Reading options)
        self.glob, self.settle, self.recursive = glob, settle, recursive
        spec = getattr(main_window, "spec", None)  # the window's reading options
        reading = {"lenient": spec.lenient, "load_options": dict(spec.reader_options)} \
            if spec is not None else {}
        self.bridge = WatchBridge(self.folder, glob=glob, settle=settle, recursive=recursive,
                                  parent=self, **reading)
        self.bridge.landed.connect(self.on_landed)
        self.bridge.removed.connect(self.on_removed)
        self.bridge.scanDone.connect(self._on_scan_done)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self.refresh)
        self._build(glob)
        flat_view = getattr(main_window, "flat", None)
        if flat_view is not None and hasattr(flat_view, "flatRowSelected"):
            flat_view.flatRowSelected.connect(self._follow_flat)

    # ----- UI ------------------------------------------------------------------------------
    def _build(self, glob: str | None) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self._glob = glob
        self.title = QLabel(self._title_text())
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top.addWidget(self.title, 1)
        self.mode_box = QComboBox()
        for m in MODES:
            self.mode_box.addItem(MODE_TITLES[m], m)
        self.mode_box.currentIndexChanged.connect(
            lambda _i: self.set_mode(self.mode_box.currentData()))
        top.addWidget(self.mode_box)
        self.pin_button = QPushButton("Pin as baseline")
        self.pin_button.setToolTip("Compare the newest run with the selected run")
        self.pin_button.clicked.connect(self.pin_selected)
        top.addWidget(self.pin_button)
        self.compare_button = QPushButton("Compare selected")
        self.compare_button.setToolTip("Compare the runs selected in the table "
                                       "(the first selected is the baseline)")
        self.compare_button.clicked.connect(self.compare_selected)
        top.addWidget(self.compare_button)
        lay.addLayout(top)

        self.note = QLabel()
        self.note.setObjectName("watchNotification")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("#watchNotification { background: #e3f0fb; padding: 3px; }")
        self.note.hide()
        lay.addWidget(self.note)

        split = QSplitter(Qt.Orientation.Vertical)
        self.model = RunsModel(self.table, self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)  # "4,291,393,792 B" on one line, never the unit below
        self.model.rowsInserted.connect(lambda *_a: self.fit_columns())
        self.model.modelReset.connect(self.fit_columns)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.horizontalHeader().setStretchLastSection(False)
        self.view.doubleClicked.connect(lambda _i: self.compare_selected())
        split.addWidget(self.view)

        plots = QWidget()
        pl = QHBoxLayout(plots)
        pl.setContentsMargins(0, 0, 0, 0)
        left, right = QVBoxLayout(), QVBoxLayout()
        row = QHBoxLayout()
        row.addWidget(QLabel("Total:"))
        self.total_box = QComboBox()
        self.total_box.currentIndexChanged.connect(lambda _i: self.update_plots())
        row.addWidget(self.total_box, 1)
        left.addLayout(row)
        row = QHBoxLayout()
        self.frame_label = QLabel("Cost centre:")
        row.addWidget(self.frame_label)
        self.frame_edit = QLineEdit()
        self.frame_edit.setPlaceholderText("name of a row of the tree")
        self.frame_edit.editingFinished.connect(self.update_plots)
        self.frame_edit.textEdited.connect(self._typed_name)
        self._frame_module: str | None = None  # module of the followed row (None: any)
        self._frame_chosen = False  # a row was selected or a name typed: no more defaults
        row.addWidget(self.frame_edit, 1)
        self.follow_box = QCheckBox("follow selection")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Plot the row selected in the tree views (the top change "
                                   "until one is selected); typing a name stops following")
        row.addWidget(self.follow_box)
        self.frame_metric_box = QComboBox()
        self.frame_metric_box.currentIndexChanged.connect(lambda _i: self.update_plots())
        row.addWidget(self.frame_metric_box)
        right.addLayout(row)
        self.total_plot = self.frame_plot = None
        if pg is not None:
            self.total_plot = pg.PlotWidget(background="w")
            self.frame_plot = pg.PlotWidget(background="w")
            for p in (self.total_plot, self.frame_plot):
                p.showGrid(x=True, y=True, alpha=0.3)
                p.setLabel("bottom", "run")
            left.addWidget(self.total_plot, 1)
            right.addWidget(self.frame_plot, 1)
        else:
            left.addWidget(QLabel("(install pyqtgraph for plots)"), 1)
        pl.addLayout(left, 1)
        pl.addLayout(right, 1)
        split.addWidget(plots)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay.addWidget(split, 1)

    # ----- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self.bridge.start()

    def shutdown(self) -> None:
        """Stop watching (idempotent); called when the window closes or the app quits."""
        self._timer.stop()
        self.bridge.stop()

    @property
    def watching(self) -> bool:
        return self.bridge.running

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt API
        if obj is self.main_window and ev.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def closeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.shutdown()
        super().closeEvent(ev)

    # ----- watcher events ------------------------------------------------------------------
    def on_landed(self, landed: Landed) -> None:
        run, _action = self.table.add(landed)
        self.model.refresh(run)
        self.update_count()
        self.fit_columns()
        self._schedule()

    def fit_columns(self) -> None:
        """Widen the runs table's columns to their contents and headers (never narrower:
        a width the user dragged wider stays).  The table holds one row per run, so
        Qt's own per-row measure is cheap here."""
        h = self.view.horizontalHeader()
        for c in range(self.model.columnCount()):
            want = max(self.view.sizeHintForColumn(c), h.sectionSizeHint(c))
            if want > h.sectionSize(c):
                h.resizeSection(c, want)

    def on_removed(self, path: str) -> None:
        gone = self.table.remove_path(path)
        self.picked = [r for r in self.picked if r not in gone]
        self.model.refresh()
        self.update_count()
        self._schedule()

    def _on_scan_done(self, n: int) -> None:
        self.scan_done = True
        self.update_count()
        self._schedule()

    # ----- the run count: panel title and tab ------------------------------------------------
    def _title_text(self) -> str:
        n = len(self.table)
        count = f"{n} run{'s' if n != 1 else ''}"
        state = count if self.scan_done else f"scanning… ({count} so far)"
        return (f"Watching <b>{self.folder}</b>" + (f" ({self._glob})" if self._glob else "")
                + f" — {state}")

    def tab_title(self) -> str:
        """``Runs (3)``: the tab names what it holds and how many (the folder is in the
        panel's first line and the tab's tooltip)."""
        return f"Runs ({len(self.table)})"

    def update_count(self) -> None:
        """Every landed or removed run updates the count in the title and the tab."""
        self.title.setText(self._title_text())
        tabs = getattr(self.main_window, "tabs", None)
        if tabs is not None:
            i = tabs.indexOf(self)
            if i >= 0:
                tabs.setTabText(i, self.tab_title())
                tabs.setTabToolTip(i, f"runs in the watched folder {self.folder}")

    def _schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    # ----- modes ---------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        i = self.mode_box.findData(mode)
        if i != self.mode_box.currentIndex():
            self.mode_box.setCurrentIndex(i)
        self.refresh()

    def selected_runs(self) -> list[Run]:
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [r for r in (self.model.run_at(i) for i in rows) if r is not None]

    def pin(self, run: Run | None) -> None:
        self.table.pin(run)
        self.model.refresh()
        self.set_mode("pinned" if run is not None else "previous")

    def pin_selected(self) -> None:
        sel = self.selected_runs()
        if sel:
            self.pin(sel[0])

    def pick(self, runs: Sequence[Run]) -> None:
        self.picked = list(runs)
        self.set_mode("picked")

    def compare_selected(self) -> None:
        sel = self.selected_runs()
        if sel:
            self.pick(sel)

    # ----- pushing runs to the views -------------------------------------------------------
    def refresh(self) -> None:
        """Show the runs of the current mode (when they changed) and update the plots."""
        self._timer.stop()
        runs = self.table.compared(self.mode, self.picked)
        profiles: list[Profile] = []
        used: list[Run] = []
        for r in runs:
            p = self.table.profile_of(r)
            if p is not None:
                profiles.append(p)
                used.append(r)
        key = tuple((r.id, r.landed.seq, *(a.seq for a in r.attached.values())) for r in used)
        if profiles and key != self._shown_key:
            self._shown_key = key
            self.shown = used
            self._show(profiles, used)
            self.comparedChanged.emit(list(used))
        self._update_choices()
        self.update_plots()

    def _show(self, profiles: list[Profile], runs: list[Run]) -> None:
        mw = self.main_window
        if mw is not None and hasattr(mw, "set_runs_async"):
            # aligned in a worker (a big run must not freeze the window); the note and
            # the top changes follow when the views have swapped
            mw.set_runs_async(profiles, keep_state=True,
                              on_done=lambda _t, flat: self._shown(profiles, runs, flat))
            return
        flat = None
        if mw is not None:
            mw.set_runs(profiles, keep_state=True)
            flat = getattr(mw, "flat_comparison", None)
        self._shown(profiles, runs, flat)

    def _shown(self, profiles: list[Profile], runs: list[Run], flat) -> None:
        """The runs are on screen: remember their flat comparison, name the top changes."""
        try:
            self.isVisible()
        except RuntimeError:  # the panel was closed while the runs were aligning
            return
        if flat is None or len(flat.runs) != len(profiles):
            # the window's rename rules and reading options (a bare session without one)
            mw = self.main_window
            spec = mw.load_spec() if mw is not None and hasattr(mw, "load_spec") else None
            flat = Session(spec.replace(baseline=0) if spec else SessionSpec(), profiles).flat
        self.comparison = flat
        if len(profiles) < 2:
            self.last_changes = []
            self._default_frame(flat)
            return
        self.last_changes = top_changes(flat, 3)  # judges the noise the ranking then uses
        self._default_frame(flat)
        labels = [self.table.label(r) for r in runs]
        text = (f"{labels[-1]} vs {labels[0]}: "
                + ("; ".join(self.last_changes) if self.last_changes else "no change"))
        if any(r.incomplete for r in runs):
            text += "  (incomplete run)"
        self.notify(text)

    def notify(self, text: str) -> None:
        """Non-intrusive: a line above the table and a timed status-bar message."""
        self.note.setText(text)
        self.note.show()
        mw = self.main_window
        if mw is not None and hasattr(mw, "statusBar"):
            mw.statusBar().showMessage(text, 15000)
        self.notified.emit(text)

    # ----- the cost centre plotted: the selected row, else the top change -------------------
    def select_row(self, row: int) -> None:
        """The main window's tree selection (union-row id of its comparison): follow it."""
        self._follow(getattr(self.main_window, "comparison", None), row)

    def _follow_flat(self, row: int) -> None:
        self._follow(getattr(self.main_window, "flat_comparison", None), row)

    def _follow(self, cmp, row: int) -> None:
        if not self.follow_box.isChecked() or cmp is None or not 0 <= row < cmp.n_rows:
            return
        self._frame_chosen = True
        self.set_frame(str(cmp.name[row]), str(cmp.module[row]))

    def set_frame(self, name: str, module: str | None = None) -> None:
        """Plot ``name`` (in ``module`` when given) over the runs."""
        if name == self.frame_edit.text() and module == self._frame_module:
            return
        self.frame_edit.setText(name)
        self._frame_module = module
        self.update_plots()

    def _typed_name(self, _text: str) -> None:
        """A name typed by hand: plot it in any module, and stop following the selection."""
        self._frame_module = None
        self._frame_chosen = True
        self.follow_box.setChecked(False)

    def _default_frame(self, flat) -> None:
        """Until a row is selected, plot the top change (or the hottest row of a single
        run); the placeholder names a row of the loaded program, not a fixed example."""
        top = top_row(flat) if flat is not None else None
        if top is None:
            return
        name, module, metric = top
        self.frame_edit.setPlaceholderText(f"name, e.g. {name}")
        fmt = flat.runs[flat.baseline].format if flat.runs else ""
        self.frame_label.setText("Cost centre:" if fmt.startswith("ghc") else "Function:")
        if self.follow_box.isChecked() and not self._frame_chosen:
            i = self.frame_metric_box.findData(metric)
            if i >= 0:  # the metric the change is in
                self.frame_metric_box.blockSignals(True)
                self.frame_metric_box.setCurrentIndex(i)
                self.frame_metric_box.blockSignals(False)
            self.set_frame(name, module)

    # ----- plots ---------------------------------------------------------------------------
    def _update_choices(self) -> None:
        keys = self.table.total_keys()
        have = [self.total_box.itemData(i) for i in range(self.total_box.count())]
        if keys != have:
            cur = self.total_box.currentData()
            self.total_box.blockSignals(True)
            self.total_box.clear()
            for k in keys:
                m = self.table.total_metric(k)
                self.total_box.addItem(m.label if m and m.label else k, k)
            i = self.total_box.findData(cur) if cur else -1
            if i < 0 and keys:
                i = 0
            self.total_box.setCurrentIndex(i)
            self.total_box.blockSignals(False)
        newest = self.shown[-1] if self.shown else None
        p = newest.profile if newest is not None else None
        if p is not None and p.metrics:
            names = [m.name for m in p.metrics]
            have = [self.frame_metric_box.itemData(i)
                    for i in range(self.frame_metric_box.count())]
            if names != have:
                cur = self.frame_metric_box.currentData()
                self.frame_metric_box.blockSignals(True)
                self.frame_metric_box.clear()
                for m in p.metrics:
                    self.frame_metric_box.addItem(m.title, m.name)
                default = cur if cur in names else (p.default_metric or names[0])
                self.frame_metric_box.setCurrentIndex(max(0, names.index(default)
                                                          if default in names else 0))
                self.frame_metric_box.blockSignals(False)
                comp = QCompleter(sorted(set(p.frames.name.tolist())), self.frame_edit)
                comp.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
                self.frame_edit.setCompleter(comp)

    def total_series(self):
        key = self.total_box.currentData()
        return self.table.series(key) if key else None

    def frame_series(self):
        name = self.frame_edit.text().strip()
        metric = self.frame_metric_box.currentData()
        if not name or not metric:
            return None
        return self.table.frame_series(name, metric, module=self._frame_module)

    def update_plots(self) -> None:
        """Both plots: one point per run at an integer x, the x axis labelled by the runs'
        files, the y axis by the metric and its unit, a tooltip per point."""
        if self.total_plot is None:
            return
        key = self.total_box.currentData()
        tm = self.table.total_metric(key) if key else None
        metric = self.frame_metric_box.currentData()
        newest = self.shown[-1].profile if self.shown else None
        fm = newest.metric_by_name.get(metric) if newest is not None and metric else None
        name = self.frame_edit.text().strip()
        self._plot(self.total_plot, self.total_series(), self.total_box.currentText(),
                   tm.unit if tm else Unit.COUNT)
        self._plot(self.frame_plot, self.frame_series(),
                   f"{name} · {self.frame_metric_box.currentText()}" if name else "",
                   fm.unit if fm else Unit.COUNT)

    def point_labels(self, runs: Sequence[Run]) -> list[str]:
        """The runs' files; versions of one file (a program rewriting ``ad.prof`` on
        every run) also get their time, so the points say which run they are."""
        labels = [self.table.label(r) for r in runs]
        dup = {x for x in labels if labels.count(x) > 1}
        return [f"{x} {time.strftime('%H:%M:%S', time.localtime(r.time))}" if x in dup else x
                for x, r in zip(labels, runs, strict=True)]

    def _plot(self, plot, series, title: str, unit: Unit) -> None:
        plot.clear()
        plot.setTitle(title)
        label = title.split(" · ")[-1]
        axis_label, scale = plot_axis_unit(unit)
        plot.getAxis("left").enableAutoSIPrefix(bool(axis_label) and unit is not Unit.PERCENT)
        plot.setLabel("left", label, units=axis_label or None)
        if series is None or len(series[0]) == 0:
            plot.getAxis("bottom").setTicks(None)
            return
        xs, ys = series
        ys = ys * scale
        names = self.point_labels([self.table.runs[int(i)] for i in xs])
        plot.getAxis("bottom").setTicks([run_ticks(xs, names)])
        plot.plot(xs, ys, pen=pg.mkPen("#2166ac", width=2))
        tips = [f"{n}\n{format_value(float(y) / scale, unit)}" for n, y in zip(names, ys,
                                                                            strict=True)]
        dots = pg.ScatterPlotItem(x=xs, y=ys, data=tips, size=8, brush="#2166ac",
                                  hoverable=True, hoverSize=11,
                                  tip=lambda x, y, data: data)
        plot.addItem(dots)
        plot.setXRange(float(xs.min()) - 0.5, float(xs.max()) + 0.5, padding=0)


def run_ticks(xs, names: Sequence[str], most: int = 12) -> list[tuple[float, str]]:
    """Integer ticks at the runs, labelled by their file; with many runs every k-th
    (the first and the newest always), so labels never overlap into a smear."""
    n = len(xs)
    step = max(1, -(-n // most))
    keep = set(range(0, n, step)) | {n - 1}
    return [(float(xs[i]), names[i]) for i in sorted(keep)]


def plot_axis_unit(unit: Unit) -> tuple[str, float]:
    """(unit pyqtgraph prints on the y axis, factor to apply to the values): bytes and
    seconds get SI prefixes (GB, ms), nanosecond periods are plotted in seconds."""
    if unit is Unit.NANOSECONDS:
        return "s", 1e-9
    if unit is Unit.PERCENT:
        return "% of run", 1.0
    return unit_label(unit), 1.0


def top_row(cmp) -> tuple[str, str, str] | None:
    """(name, module, metric) of the largest own change of a comparison, as the
    notification's first culprit (its hottest row for a single run): where a look at one
    cost centre over the runs should start."""
    import numpy as np

    from profdiff.viewer.ranking import rank_changes

    if cmp is None or cmp.n_rows == 0:
        return None
    if cmp.n_runs > 1:
        ranking = rank_changes(cmp)
        if np.any(ranking.score != 0):
            r = int(np.argmax(np.abs(ranking.score)))
            return str(cmp.name[r]), str(cmp.module[r]), ranking.metric_of(r)
    # one run, or nothing changed: its largest own cost
    own = [m.name for m in cmp.metrics if m.kind is Kind.SELF and m.name in cmp.values]
    m = own[0] if own else cmp.metrics[0].name
    if m not in cmp.values:
        return None
    r = int(np.nanargmax(np.nan_to_num(cmp.values[m][:, cmp.current], nan=-np.inf)))
    return str(cmp.name[r]), str(cmp.module[r]), m


# ------------------------------------------------------------------------------------------
# integration with the main window
# ------------------------------------------------------------------------------------------
def open_watch(main_window, folder: str, glob: str | None = None, **options) -> RunsPanel:
    """Watch ``folder`` in ``main_window``: adds a "Runs" tab and starts the watcher.

    The watcher stops when the window closes or the application quits.  ``options``:
    ``settle`` (debounce seconds), ``recursive``, ``refresh_ms``, ``keep_profiles``.
    """
    old = getattr(main_window, "watch_panel", None)
    if old is not None:
        close_watch(main_window)
    panel = RunsPanel(folder, glob=glob, main_window=main_window, **options)
    idx = main_window.add_tab(panel, panel.tab_title())
    tabs = getattr(main_window, "tabs", None)
    if tabs is not None:
        tabs.setCurrentIndex(idx)
    # the views are hidden behind the empty state until a run exists; the runs tab is
    # useful before that (it shows the scan), so show the content now
    stack, content = getattr(main_window, "stack", None), getattr(main_window, "content", None)
    if stack is not None and content is not None:
        stack.setCurrentWidget(content)
    main_window.installEventFilter(panel)
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(panel.shutdown)
    main_window.watch_panel = panel
    panel.update_count()  # the tab exists now: name it with the count
    panel.start()
    return panel


def close_watch(main_window) -> None:
    """Stop watching and remove the runs tab (File ▸ Watch folder… on another folder)."""
    panel = getattr(main_window, "watch_panel", None)
    if panel is None:
        return
    panel.shutdown()
    main_window.remove_tab(panel)
    main_window.removeEventFilter(panel)
    main_window.watch_panel = None
    panel.deleteLater()


def watch_folder_dialog(main_window) -> RunsPanel | None:
    """File ▸ Watch folder…: choose a folder and watch it."""
    start = ""
    if hasattr(main_window, "last_folder"):
        try:
            start = main_window.last_folder()
        except Exception:  # noqa: BLE001
            start = ""
    folder = QFileDialog.getExistingDirectory(main_window, "Watch folder", start)
    if not folder:
        return None
    return open_watch(main_window, folder)


def install_watch_action(main_window):
    """Add File ▸ Watch folder… to ``main_window`` (before "Open sample" when present)."""
    from PySide6.QtGui import QAction

    if getattr(main_window, "act_watch", None) is not None:
        return main_window.act_watch
    act = QAction("&Watch folder…", main_window)
    act.setObjectName("watchFolder")
    act.setStatusTip("Follow a folder: every new profile is compared with the previous run")
    act.triggered.connect(lambda: watch_folder_dialog(main_window))
    file_menu = None
    for a in main_window.menuBar().actions():
        if a.menu() is not None and a.text().replace("&", "").lower() == "file":
            file_menu = a.menu()
            break
    if file_menu is None:
        file_menu = main_window.menuBar().addMenu("&File")
    before = getattr(main_window, "act_sample", None)
    if before is not None and before in file_menu.actions():
        file_menu.insertAction(before, act)
    else:
        file_menu.addAction(act)
    main_window.act_watch = act
    return act
