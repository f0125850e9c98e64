"""The profdiff main window: tabs of views around one comparison, loading, settings."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QRunnable, QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from parsers.model import Kind, Profile, Unit
from viewer.colors import DivergingScale
from viewer.compare import Comparison, Status, align, comparable_metrics
from viewer.noise import group_comparison, single_run_noise
from viewer.rules import RULES_FILE, RuleError, find_rules_file, load_rules_file, save_rules_file
from viewer.suggest import accept as accept_suggestions

from ..export.csv_export import export_csv
from ..export.speedscope import export_speedscope
from .flame_view import FlameView
from .layout import map_rows, precompute
from .loader import LoadResult, LoadTask, Slot, load_and_align
from .models import change_scale_factor, default_metric, inclusive_of, metric_pairs
from .rules_editor import RulesEditor, describe_rules, split_presets
from .suggestions_panel import SuggestionsPanel
from .views import DiffTreeView, FlatView, SideBySideView, local_files
from .widgets import DetailsPane, DropOverlay, EmptyState, MessageBar, SummaryBar

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
RESOURCES = REPO_ROOT / "resources"
SAMPLE_PAIR = ("hs-ad-v1.prof", "hs-ad-v2.prof")
MAX_RECENT = 10
NOISE_SYNC_ROWS = 200_000
"""Comparisons up to this many rows get their noise estimate at once; bigger ones in a
worker thread, so opening a 10^6-node pair is not slowed by it."""


def samples_dir() -> Path:
    return REPO_ROOT / "samples"


def icon(name: str) -> QIcon:
    p = RESOURCES / f"{name}.svg"
    return QIcon(str(p)) if p.exists() else QIcon()


class MainWindow(QMainWindow):
    """Tabs "Side by side", "Diff tree", "By cost centre" (and "Flame") over one comparison.

    Public API for other components:

    * ``set_runs(profiles, keep_state=True)`` - show already-loaded profiles (first =
      baseline), keeping expansion, selection, scroll and filter where rows still exist.
    * ``set_runs_async(profiles, keep_state=True, paths=None, on_done=None)`` - the same
      with the alignment in the thread pool (watched folders); a newer request drops an
      older result.
    * ``load_paths(paths)`` - read files in a worker, then ``set_runs``.
    * ``add_tab(widget, title)`` - add a view; if it has ``set_comparison(cmp)`` it gets
      every new tree-mode comparison; ``rowSelected(int)``/``select_row(int)`` are wired.
    * ``comparison`` / ``flat_comparison`` - the current Comparisons (or None).
    * signal ``comparisonChanged(object)`` after each swap of runs.
    * ``rules`` - rename rules every alignment uses (from ``.profdiff.toml`` beside the runs,
      the rules editor, accepted suggestions); ``set_rules(rules)`` re-aligns in place.
    * ``open_groups(base_paths, new_paths)`` - compare two groups of repeated runs.
    """

    comparisonChanged = Signal(object)

    def __init__(self, settings: QSettings | None = None, synchronous: bool = False) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("profdiff", "profdiff")
        self.synchronous = synchronous
        self.setWindowTitle("profdiff")
        self.setWindowIcon(icon("profdiff"))
        self.setAcceptDrops(True)
        self.runs: list[Profile] = []
        self.paths: list[str | None] = []
        self.comparison: Comparison | None = None
        self.flat_comparison: Comparison | None = None
        self.metrics: list[str] = []
        self.percent_mode = True
        self.threshold = 0.0
        self.changed_only = False
        self.scale = DivergingScale(
            palette=str(self.settings.value("palette", "red-green")),
            dead_zone=0.1, clamp=5.0)
        self._task: LoadTask | None = None
        self._align_task: LoadTask | None = None  # set_runs_async in flight
        self._selecting = False
        self._extra_tabs: list[QWidget] = []
        self._format_tabs: list[QWidget] = []
        self._pending: dict[int, list] = {}
        # matching across refactors
        self.rules: list = []
        self.rules_source: Path | None = None  # the .profdiff.toml the rules came from
        self._rules_dirty = False  # edited in the app since read/saved
        self.rules_editor: RulesEditor | None = None
        # noise
        self.groups: tuple[list[Profile], list[Profile]] | None = None
        self.group_paths: tuple[list[str], list[str]] | None = None
        self.significant_only = False
        self.show_sig = False
        self.fade_noise = True
        self._noise_tasks: list = []
        self._columns_restored: set[str] = set()  # formats whose saved widths were applied
        self.baseline_index = 0  # run the others are compared with (View > Baseline)
        self._build_ui()
        self._build_actions()
        self._restore_settings()
        self._update_enabled()

    # ----------------------------------------------------------------------------------
    # UI
    # ----------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(4, 2, 4, 2)
        outer.setSpacing(3)
        self.message_bar = MessageBar()
        outer.addWidget(self.message_bar)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.empty = EmptyState()
        self.empty.openSample.connect(self.open_sample)
        self.empty.openFiles.connect(self.open_files_dialog)
        self.stack.addWidget(self.empty)

        content = QWidget()
        cl = QVBoxLayout(content)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(3)
        self.summary = SummaryBar()
        cl.addWidget(self.summary)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("mainSplitter")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("viewTabs")
        self.tabs.setDocumentMode(True)
        self.side = SideBySideView()
        self.diff = DiffTreeView()
        self.diff.icons = {int(Status.ADDED): icon("added"), int(Status.REMOVED): icon("removed")}
        self.flat = FlatView()
        self.tabs.addTab(self.side, "Side by side")
        self.tabs.addTab(self.diff, "Diff tree")
        self.tabs.addTab(self.flat, "By cost centre")
        self.flame = FlameView()
        self.tabs.addTab(self.flame, "Flame")
        self.splitter.addWidget(self.tabs)
        self.details = DetailsPane()
        self.details.setObjectName("details")
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([640, 180])
        cl.addWidget(self.splitter, 1)
        self.stack.addWidget(content)
        self.content = content

        prog = QWidget()
        pl = QHBoxLayout(prog)
        pl.setContentsMargins(0, 0, 0, 0)
        self.progress_label = QLabel("Loading…")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelLoading")
        self.cancel_button.clicked.connect(self.user_cancel)
        pl.addWidget(self.progress_label)
        pl.addWidget(self.progress, 1)
        pl.addWidget(self.cancel_button)
        self.progress_row = prog
        prog.hide()
        outer.addWidget(prog)
        self.setCentralWidget(central)
        self.overlay = DropOverlay(central)

        self.status_label = QLabel()
        self.statusBar().addWidget(self.status_label, 1)
        self.incomplete_label = QLabel("<b style='color:#b35806'>INCOMPLETE</b>")
        self.incomplete_label.hide()
        self.statusBar().addPermanentWidget(self.incomplete_label)

        # wiring
        self.tabs.currentChanged.connect(self._tab_changed)
        self.side.rowSelected.connect(lambda r: self._row_selected(r, self.side))
        self.diff.rowSelected.connect(lambda r: self._row_selected(r, self.diff))
        self.side.filesDropped.connect(self._pane_drop)
        self.flat.flatRowSelected.connect(self._flat_selected)
        self.flat.revealRequested.connect(self.reveal_key)
        self.flat.callSiteActivated.connect(self.reveal_row)
        if self.flame is not None and hasattr(self.flame, "rowSelected"):
            self.flame.rowSelected.connect(lambda r: self._row_selected(r, self.flame))
        # issue 20 hook (Disassembly tab): "Compare instructions…" / double-click, perf rows
        from .disassembly_view import add_compare_instructions
        for pane in (*self.side.panes, self.diff.tree, self.flat.table):
            add_compare_instructions(self, pane)

        self.suggestions = SuggestionsPanel()
        self.suggestions_dock = QDockWidget("Unmatched: suggested matches", self)
        self.suggestions_dock.setObjectName("suggestionsDock")
        self.suggestions_dock.setWidget(self.suggestions)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.suggestions_dock)
        self.suggestions_dock.hide()
        self.suggestions_dock.visibilityChanged.connect(self.suggestions.set_active)
        self.suggestions_dock.visibilityChanged.connect(self._size_suggestions_dock)
        self._dock_sized = False
        self.suggestions.acceptRequested.connect(self.accept_suggestions)
        self.suggestions.revealRequested.connect(self.reveal_pair)

    def _build_actions(self) -> None:
        mb = self.menuBar()
        fm = mb.addMenu("&File")

        def act(menu, text, slot, shortcut=None, tip="", name=None) -> QAction:
            a = QAction(text, self)
            if shortcut:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            if name:
                a.setObjectName(name)
            menu.addAction(a)
            return a

        self.act_open = act(fm, "&Open…", self.open_files_dialog, QKeySequence.StandardKey.Open,
                            "Open one profile, or several to compare (first = baseline)")
        act(fm, "Open &baseline…", lambda: self._open_slot_dialog("baseline"))
        act(fm, "Open &current…", lambda: self._open_slot_dialog("current"))
        self.act_add = act(fm, "&Add run…", lambda: self._open_slot_dialog("add"))
        self.act_groups = act(fm, "Open re&peated runs…", self.open_groups_dialog,
                              tip="Pick several baseline runs, then several current runs: "
                              "compare their means and tell real changes from noise",
                              name="openGroups")
        self.recent_menu = fm.addMenu("&Recent files")
        fm.addSeparator()
        self.act_sample = act(fm, "Open &sample comparison", self.open_sample,
                              name="openSample")
        fm.addSeparator()
        self.act_swap = act(fm, "S&wap baseline/current", self.swap_runs)
        self.act_reload = act(fm, "&Reload", self.reload, "F5")
        fm.addSeparator()
        self.act_speedscope = act(fm, "Export to &speedscope…", self.export_speedscope, "Ctrl+E")
        self.act_csv = act(fm, "Export table to CS&V…", self.export_csv)
        fm.addSeparator()
        act(fm, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        vm = mb.addMenu("&View")
        for d in (1, 2, 3, 5):
            act(vm, f"Expand to depth {d}", lambda _=False, d=d: self.expand_to_depth(d))
        self.act_hot = act(vm, "Expand &hottest path", lambda: self.expand_hottest("value"), "Ctrl+H")
        act(vm, "Expand path of largest &Δ", lambda: self.expand_hottest("delta"),
            "Ctrl+Shift+H")
        act(vm, "Co&llapse all", self.collapse_all)
        vm.addSeparator()
        self.metrics_menu = vm.addMenu("&Metrics")
        self.baseline_menu = vm.addMenu("&Baseline")
        self.baseline_menu.setObjectName("baselineMenu")
        self.baseline_menu.setToolTip("The run every other run is compared with")
        self.baseline_menu.setEnabled(False)
        self.act_percent = QAction("Show percent of own run (else absolute units)", self,
                                   checkable=True)
        self.act_percent.setChecked(True)
        self.act_percent.toggled.connect(self.set_percent_mode)
        vm.addAction(self.act_percent)
        self.act_palette = QAction("Colour-blind safe palette", self, checkable=True)
        self.act_palette.setChecked(self.scale.palette == "colorblind")
        self.act_palette.toggled.connect(self.set_colorblind)
        vm.addAction(self.act_palette)
        vm.addSeparator()
        self.act_sig = QAction("Significance column (real / noise)", self, checkable=True)
        self.act_sig.setToolTip("A 'sig.' column after the main metric: p-value of its change")
        self.act_sig.toggled.connect(self.set_show_sig)
        vm.addAction(self.act_sig)
        self.act_fade = QAction("Fade changes within noise", self, checkable=True)
        self.act_fade.setChecked(True)
        self.act_fade.toggled.connect(self.set_fade_noise)
        vm.addAction(self.act_fade)
        vm.addSeparator()
        act(vm, "Next view", self.next_tab, "Ctrl+Tab")
        act(vm, "Previous view", lambda: self.next_tab(-1), "Ctrl+Shift+Tab")
        self.act_filter = act(vm, "&Filter…", self.focus_filter, QKeySequence.StandardKey.Find)

        tm = mb.addMenu("&Tools")
        self.act_rules = act(tm, "&Rename rules…", self.open_rules_editor,
                             tip="Rules that match renamed functions and moved modules",
                             name="renameRules")
        sug = self.suggestions_dock.toggleViewAction()
        sug.setText("&Unmatched rows: suggested matches")
        sug.setObjectName("showSuggestions")
        tm.addAction(sug)
        self.act_suggestions = sug

        tb = QToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(tb)
        self.act_open.setIcon(icon("open"))
        tb.addAction(self.act_open)
        self.act_reload.setIcon(icon("reload"))
        tb.addAction(self.act_reload)
        self.act_swap.setIcon(icon("swap"))
        tb.addAction(self.act_swap)
        self.act_hot.setIcon(icon("hot"))
        tb.addAction(self.act_hot)
        tb.addSeparator()
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("filterEdit")
        self.filter_edit.setPlaceholderText("Filter by name or module (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setMinimumWidth(240)
        self.filter_edit.setMaximumWidth(360)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(200)
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.filter_edit.returnPressed.connect(self.apply_filter)
        tb.addWidget(self.filter_edit)
        self.regex_box = QCheckBox("regex")
        self.regex_box.toggled.connect(lambda _b: self.apply_filter())
        tb.addWidget(self.regex_box)
        tb.addSeparator()
        self.changed_box = QCheckBox("changed only")
        self.changed_box.toggled.connect(self._set_changed_only)
        tb.addWidget(self.changed_box)
        self.significant_box = QCheckBox("significant only")
        self.significant_box.setObjectName("significantBox")
        self.significant_box.setToolTip(
            "Only rows whose change of the main metric is real, not run-to-run or sampling "
            "noise (Benjamini–Hochberg, false discovery rate 5%)")
        self.significant_box.toggled.connect(self._set_significant_only)
        tb.addWidget(self.significant_box)
        tb.addWidget(QLabel(" hide |Δ| <"))
        self.threshold_spin = QDoubleSpinBox()
        self.threshold_spin.setRange(0, 100)
        self.threshold_spin.setDecimals(2)
        self.threshold_spin.setSingleStep(0.1)
        self.threshold_spin.setSuffix(" pp")
        self.threshold_spin.setToolTip("Hide rows whose change of every shown metric is below "
                                       "this many percentage points of the run")
        self.threshold_spin.valueChanged.connect(self._set_threshold)
        tb.addWidget(self.threshold_spin)
        tb.addSeparator()
        self.percent_box = QCheckBox("% of run")
        self.percent_box.setChecked(True)
        self.percent_box.setToolTip("Percent of own run vs absolute units (seconds, bytes…)")
        self.percent_box.toggled.connect(self.act_percent.setChecked)
        self.act_percent.toggled.connect(self.percent_box.setChecked)
        tb.addWidget(self.percent_box)
        self.palette_box = QCheckBox("colour-blind palette")
        self.palette_box.setChecked(self.scale.palette == "colorblind")
        self.palette_box.toggled.connect(self.act_palette.setChecked)
        self.act_palette.toggled.connect(self.palette_box.setChecked)
        tb.addWidget(self.palette_box)
        self._refresh_recent_menu()
        from .runs_panel import install_watch_action

        install_watch_action(self)  # File ▸ Watch folder…

    def _update_enabled(self) -> None:
        has = bool(self.runs)
        # a watched folder's runs tab is content too, before its first run lands
        self.stack.setCurrentWidget(self.content if has or self._extra_tabs else self.empty)
        for a in (self.act_swap, self.act_reload, self.act_speedscope, self.act_csv,
                  self.act_add, self.act_hot):
            a.setEnabled(has)
        self.act_swap.setEnabled(len(self.runs) >= 2)
        two = self.comparison is not None and self.comparison.n_runs == 2
        self.significant_box.setEnabled(two)
        self.act_sig.setEnabled(two)

    # ----------------------------------------------------------------------------------
    # settings
    # ----------------------------------------------------------------------------------
    def _restore_settings(self) -> None:
        s = self.settings
        g = s.value("geometry")
        if g is not None:
            self.restoreGeometry(g)
        else:  # first start: a comfortable size for side-by-side trees
            screen = self.screen().availableGeometry() if self.screen() else None
            w, h = (1500, 950) if screen is None else (
                min(1500, int(screen.width() * 0.9)), min(950, int(screen.height() * 0.9)))
            self.resize(w, h)
        sp = s.value("splitter")
        if sp is not None:
            self.splitter.restoreState(sp)
        sp = s.value("sideSplitter")
        if sp is not None:
            self.side.splitter.restoreState(sp)
        pm = s.value("percentMode")
        if pm is not None:
            self.act_percent.setChecked(str(pm).lower() in ("true", "1"))

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("splitter", self.splitter.saveState())
        s.setValue("sideSplitter", self.side.splitter.saveState())
        s.setValue("percentMode", self.percent_mode)
        s.setValue("palette", self.scale.palette)
        if self.metrics:
            s.setValue(f"metrics/{self._format_key()}", self.metrics)
        for name, view in self._column_views():
            if view.model() is not None:
                s.setValue(f"header/{name}/{self._format_key()}", view.header().saveState())
                sig, widths = _column_widths(view)
                s.setValue(f"columns/{name}/{self._format_key()}/sig", sig)
                s.setValue(f"columns/{name}/{self._format_key()}/widths", widths)
        s.sync()

    def _column_views(self) -> list[tuple[str, QAbstractItemView]]:
        return [("side", self.side.panes[0]), ("side1", self.side.panes[1]),
                ("diff", self.diff.tree), ("flat", self.flat.table)]

    def _capture_columns(self) -> dict[str, tuple[str, list[int]]]:
        return {name: _column_widths(v) for name, v in self._column_views()
                if v.model() is not None}

    def _restore_columns(self, before: dict[str, tuple[str, list[int]]]) -> None:
        """Column widths: kept across a swap of runs when the columns are the same, else
        (first comparison of a format in this window) restored from the settings."""
        fmt = self._format_key()
        first = fmt not in self._columns_restored
        self._columns_restored.add(fmt)
        for name, view in self._column_views():
            if view.model() is None:
                continue
            sig, _w = _column_widths(view)
            old = before.get(name)
            if first:
                saved_sig = self.settings.value(f"columns/{name}/{fmt}/sig")
                saved = self.settings.value(f"columns/{name}/{fmt}/widths")
                if saved_sig is not None and saved:
                    old = (str(saved_sig), [int(x) for x in
                                            ([saved] if isinstance(saved, str) else saved)])
            if old is None or old[0] != sig or len(old[1]) != view.header().count():
                continue
            h = view.header()
            for i, w in enumerate(old[1]):
                if w > 0 and h.sectionSize(i) != w:
                    h.resizeSection(i, w)

    def _format_key(self) -> str:
        return self.runs[0].format if self.runs else "none"

    def closeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.cancel_loading()
        self._drop_align()
        self.save_settings()
        super().closeEvent(ev)

    def _remember(self, paths: Sequence[str]) -> None:
        rec = [str(x) for x in (self.settings.value("recentFiles") or []) if x]
        if isinstance(self.settings.value("recentFiles"), str):
            rec = [self.settings.value("recentFiles")]
        for p in paths:
            p = str(Path(p).resolve())
            if p in rec:
                rec.remove(p)
            rec.insert(0, p)
        self.settings.setValue("recentFiles", rec[:MAX_RECENT])
        if paths:
            self.settings.setValue("lastFolder", str(Path(paths[-1]).resolve().parent))
        self._refresh_recent_menu()

    def recent_files(self) -> list[str]:
        v = self.settings.value("recentFiles") or []
        return [v] if isinstance(v, str) else [str(x) for x in v]

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        rec = self.recent_files()
        for p in rec:
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.open_as_current(p))
        self.recent_menu.setEnabled(bool(rec))

    # ----------------------------------------------------------------------------------
    # opening files
    # ----------------------------------------------------------------------------------
    def _last_folder(self) -> str:
        return str(self.settings.value("lastFolder") or os.getcwd())

    def open_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open profiles (first = baseline)",
                                                self._last_folder())
        if files:
            self.load_paths(files)

    def _open_slot_dialog(self, which: str) -> None:
        f, _ = QFileDialog.getOpenFileName(self, f"Open {which} profile", self._last_folder())
        if not f:
            return
        {"baseline": self.open_as_baseline, "current": self.open_as_current,
         "add": self.add_run}[which](f)

    def _slots(self) -> list[Slot]:
        return [Slot(None, p) for p in self.runs]

    def load_paths(self, paths: Sequence[str]) -> None:
        """Replace all runs by ``paths`` (first = baseline)."""
        self.baseline_index = 0
        self._start([Slot(str(p), None) for p in paths], [str(p) for p in paths])

    def open_as_baseline(self, path: str) -> None:
        slots = self._slots()
        paths = list(self.paths)
        if slots:
            slots[0] = Slot(path, self.runs[0])
            paths[0] = path
        else:
            slots, paths = [Slot(path)], [path]
        self._start(slots, paths)

    def open_as_current(self, path: str) -> None:
        """Replace the current run (the last one), keeping the baseline."""
        slots = self._slots()
        paths = list(self.paths)
        if len(slots) >= 2:
            slots[-1] = Slot(path, self.runs[-1])
            paths[-1] = path
        else:
            slots.append(Slot(path))
            paths.append(path)
        self._start(slots, paths)

    def add_run(self, path: str) -> None:
        self._start(self._slots() + [Slot(path)], list(self.paths) + [path])

    def reload(self) -> None:
        if self.group_paths is not None:
            self.open_groups(*self.group_paths)
            return
        slots = [Slot(p, r) if p else Slot(None, r)
                 for p, r in zip(self.paths, self.runs, strict=False)]
        if slots:
            self._start(slots, list(self.paths))

    def open_sample(self) -> None:
        d = samples_dir()
        files = [d / n for n in SAMPLE_PAIR]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            self.message_bar.show_message(
                "Sample comparison not found: " + ", ".join(missing)
                + " (the samples/ folder ships with the source tree).", "warning")
            return
        self.load_paths([str(f) for f in files])

    def swap_runs(self) -> None:
        if len(self.runs) < 2:
            return
        if self.groups is not None and self.group_paths is not None:
            self.groups = (self.groups[1], self.groups[0])
            self.group_paths = (self.group_paths[1], self.group_paths[0])
            self._realign()
            return
        runs = list(self.runs)
        paths = list(self.paths)
        runs[0], runs[-1] = runs[-1], runs[0]
        paths[0], paths[-1] = paths[-1], paths[0]
        self.set_runs(runs, keep_state=True, paths=paths)

    def open_groups_dialog(self) -> None:
        base, _ = QFileDialog.getOpenFileNames(
            self, "Repeated runs 1/2: pick the BASELINE runs (same build, several runs)",
            self._last_folder())
        if not base:
            return
        new, _ = QFileDialog.getOpenFileNames(
            self, "Repeated runs 2/2: pick the CURRENT runs", str(Path(base[0]).parent))
        if new:
            self.open_groups(base, new)

    def open_groups(self, base_paths: Sequence[str], new_paths: Sequence[str]) -> None:
        """Compare the mean of the runs ``base_paths`` with the mean of ``new_paths``; the
        spread within each group tells real changes from noise."""
        base_paths, new_paths = [str(p) for p in base_paths], [str(p) for p in new_paths]
        if not base_paths or not new_paths:
            self.message_bar.show_message("Repeated runs need at least one run on each side.")
            return
        slots = [Slot(p) for p in [*base_paths, *new_paths]]
        self._start(slots, [base_paths[0], new_paths[0]], n_base=len(base_paths))

    def _start(self, slots: list[Slot], paths: list[str | None],
               n_base: int | None = None) -> None:
        self.cancel_loading()
        self._drop_align()  # files opened now win over a watched run still aligning
        new_paths = [s.path for s in slots if s.path]
        self._pick_up_rules([*new_paths, *[p for p in paths if p]])
        if self.synchronous:
            try:
                res = load_and_align(slots, rules=self.rules, n_base=n_base,
                                     baseline=self.baseline_index)
            except Exception as e:  # noqa: BLE001
                self.message_bar.show_message(f"Loading failed: {e}")
                return
            self._loaded(res, paths, slots)
            return
        task = LoadTask(slots, rules=self.rules, n_base=n_base, baseline=self.baseline_index)
        self._task = task
        self.progress.setValue(0)
        self.progress_label.setText("Loading " + ", ".join(Path(p).name for p in new_paths))
        self.progress_row.show()
        task.signals.progress.connect(lambda f: self.progress.setValue(int(f * 1000)))
        task.signals.finished.connect(lambda res, t=task: self._task_done(t, res, paths, slots))
        task.signals.cancelled.connect(lambda t=task: self._task_cancelled(t))
        task.signals.failed.connect(lambda msg, t=task: self._task_failed(t, msg))
        QThreadPool.globalInstance().start(task)

    def cancel_loading(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
            self.progress_row.hide()

    def user_cancel(self) -> None:
        """The Cancel button: stop the load and say so; the runs shown stay as they were."""
        if self._task is None:
            return
        names = self.progress_label.text().removeprefix("Loading ")
        self.cancel_loading()
        kept = " - the runs shown are unchanged" if self.runs else ""
        self.message_bar.show_message(f"Loading cancelled: {names}{kept}", "info")

    @property
    def loading(self) -> bool:
        return self._task is not None

    def _task_done(self, task: LoadTask, res: LoadResult, paths, slots) -> None:
        if task is not self._task:
            return
        self._task = None
        self.progress_row.hide()
        self._loaded(res, paths, slots)

    def _task_cancelled(self, task: LoadTask) -> None:
        if task is self._task:
            self._task = None
        self.progress_row.hide()
        self.statusBar().showMessage("Loading cancelled", 4000)

    def _task_failed(self, task: LoadTask, msg: str) -> None:
        if task is self._task:
            self._task = None
        self.progress_row.hide()
        self.message_bar.show_message(f"Loading failed: {msg}")

    def _loaded(self, res: LoadResult, paths: list[str | None], slots: list[Slot]) -> None:
        for _path, msg in res.errors:
            self.message_bar.show_message(msg)
        # paths of the runs actually shown (a failed slot keeps its previous run, or is dropped)
        old = {id(r): p for r, p in zip(self.runs, self.paths, strict=False)}
        shown: list[str | None] = []
        for s in slots:
            if s.path and s.path in res.loaded:
                shown.append(s.path)
            elif s.previous is not None:
                shown.append(old.get(id(s.previous), s.previous.path))
        if res.loaded:
            self._remember(res.loaded)
        if not res.runs:
            return
        if res.tree is None:
            return
        if res.groups is not None and res.group_paths is not None:
            self.groups = res.groups
            self.group_paths = res.group_paths
            if not self.show_sig:
                self.act_sig.setChecked(True)
            rep = [res.group_paths[0][0], res.group_paths[1][0]]
            self._apply(list(res.tree.runs), res.tree, res.flat, rep, keep_state=False)
            return
        self.groups = None
        self.group_paths = None
        self._apply(res.runs, res.tree, res.flat, shown, keep_state=True)

    # ----------------------------------------------------------------------------------
    # replacing runs
    # ----------------------------------------------------------------------------------
    def set_runs(self, profiles: Sequence[Profile], keep_state: bool = True,
                 paths: Sequence[str | None] | None = None) -> None:
        """Show ``profiles`` (first = baseline) and keep what the user was looking at."""
        profiles = list(profiles)
        if not profiles:
            return
        if paths is None:
            paths = [p.path for p in profiles]
        self._drop_align()  # this request is newer than one still aligning
        self._pick_up_rules([p for p in paths if p])
        self.groups = None
        self.group_paths = None
        self.baseline_index = 0
        self._set_runs(profiles, keep_state, list(paths))

    def set_runs_async(self, profiles: Sequence[Profile], keep_state: bool = True,
                       paths: Sequence[str | None] | None = None,
                       on_done: Callable[[Comparison, Comparison | None], None] | None = None,
                       ) -> None:
        """:meth:`set_runs` with the alignment (tree + flat + layout precompute) in the
        thread pool, so a big run landing in a watched folder does not freeze the window;
        the views swap on the GUI thread when it is done, then ``on_done(tree, flat)`` is
        called.  A newer request (another call, :meth:`set_runs`, opening files) drops the
        result of an older one, whose ``on_done`` is then never called.  In
        ``synchronous`` mode (tests, screenshots) this is :meth:`set_runs`."""
        profiles = list(profiles)
        if not profiles:
            return
        paths = [p.path for p in profiles] if paths is None else list(paths)
        if self.synchronous:
            self.set_runs(profiles, keep_state, paths)
            if on_done is not None:
                on_done(self.comparison, self.flat_comparison)
            return
        self._drop_align()
        self._pick_up_rules([p for p in paths if p])  # the alignment uses the rules
        task = LoadTask([Slot(None, p) for p in profiles], rules=self.rules)
        self._align_task = task
        task.signals.finished.connect(
            lambda res, t=task: self._align_done(t, res, paths, keep_state, on_done))
        task.signals.failed.connect(lambda msg, t=task: self._align_failed(t, msg))
        self.statusBar().showMessage("Comparing " + ", ".join(
            Path(p).name for p in paths if p) + "…", 10000)
        QThreadPool.globalInstance().start(task)

    @property
    def aligning(self) -> bool:
        """A :meth:`set_runs_async` result is still to come."""
        return self._align_task is not None

    def _drop_align(self) -> None:
        if self._align_task is not None:
            self._align_task.cancel()  # it still finishes its alignment, but says nothing
            self._align_task = None

    def _align_done(self, task: LoadTask, res: LoadResult, paths: list[str | None],
                    keep_state: bool, on_done) -> None:
        if task is not self._align_task:
            return  # dropped: a newer request came meanwhile
        self._align_task = None
        for _path, msg in res.errors:
            self.message_bar.show_message(msg)
        if res.tree is None:
            return
        if task.rules != self.rules:  # rules changed while aligning: align again with them
            self.set_runs_async(res.runs, keep_state, paths, on_done)
            return
        self.groups = None
        self.group_paths = None
        self.baseline_index = 0
        self._apply(res.runs, res.tree, res.flat, paths, keep_state)
        if on_done is not None:
            on_done(res.tree, res.flat)

    def _align_failed(self, task: LoadTask, msg: str) -> None:
        if task is self._align_task:
            self._align_task = None
            self.message_bar.show_message(f"Comparing the runs failed: {msg}")

    def _set_runs(self, profiles: list[Profile], keep_state: bool,
                  paths: list[str | None]) -> None:
        b = min(self.baseline_index, len(profiles) - 1)
        tree = align(profiles, mode="tree", rules=self.rules, baseline=b)
        flat = align(profiles, mode="flat", rules=self.rules, baseline=b)
        precompute(tree)
        precompute(flat)
        self._apply(profiles, tree, flat, paths, keep_state)

    # ----------------------------------------------------------------------------------
    # rename rules and match suggestions
    # ----------------------------------------------------------------------------------
    def _pick_up_rules(self, paths: Sequence[str]) -> None:
        """Read ``.profdiff.toml`` beside the runs (baseline's folder first) unless the rules
        were edited in the app since; leaving the rules file's folders drops its rules."""
        try:
            found = find_rules_file([p for p in paths if p])
        except OSError:
            found = None
        if found is not None:
            if found == self.rules_source and self._rules_dirty:
                return
            try:
                self.rules = load_rules_file(found)
            except RuleError as e:
                self.message_bar.show_message(str(e), "warning")
                return
            self.rules_source = found
            self._rules_dirty = False
        elif self.rules_source is not None and not self._rules_dirty:
            self.rules, self.rules_source = [], None
        self._sync_rules_editor()

    def rules_save_path(self) -> Path | None:
        """Where Save writes the rules: ``.profdiff.toml`` in the baseline run's folder."""
        base = self.group_paths[0][0] if self.group_paths else (
            self.paths[0] if self.paths else None)
        return Path(base).resolve().parent / RULES_FILE if base else None

    def set_rules(self, rules: Sequence) -> None:
        """Align with ``rules`` from now on and re-align the shown runs in place."""
        self.rules = list(rules)
        self._rules_dirty = True
        self._realign()

    def save_rules(self, rules: Sequence | None = None, path: str | Path | None = None
                   ) -> Path | None:
        """Write the rules (default: the current ones) to ``.profdiff.toml``."""
        if rules is not None:
            self.rules = list(rules)
        target = Path(path) if path else self.rules_save_path()
        if target is None:
            self.message_bar.show_message("Open a run first: rules are saved next to it.")
            return None
        rest, presets = split_presets(self.rules)
        try:
            save_rules_file(target, rest, presets)
        except OSError as e:
            self.message_bar.show_message(f"Cannot write {target}: {e.strerror or e}")
            return None
        self.rules_source = target
        self._rules_dirty = False
        self._sync_rules_editor()
        self.statusBar().showMessage(f"Saved rename rules to {target}", 5000)
        return target

    def open_rules_editor(self) -> RulesEditor:
        if self.rules_editor is None:
            self.rules_editor = RulesEditor(self)
            self.rules_editor.applied.connect(self.set_rules)
            self.rules_editor.saveRequested.connect(lambda r: self.save_rules(r))
        self._sync_rules_editor(force=True)
        self.rules_editor.show()
        self.rules_editor.raise_()
        return self.rules_editor

    def _sync_rules_editor(self, force: bool = False) -> None:
        ed = self.rules_editor
        if ed is not None and (force or ed.isVisible()):
            ed.set_rules(self.rules, self.rules_source, self.rules_save_path())

    def accept_suggestions(self, suggestions: Sequence) -> None:
        """Turn accepted suggestions into a rule (mapping new names onto old) and re-align."""
        suggestions = list(suggestions)
        if not suggestions:
            return
        self.rules.append(accept_suggestions(suggestions))
        self._rules_dirty = True
        self._realign()
        self._sync_rules_editor()
        self.statusBar().showMessage(
            "Matched " + "; ".join(s.describe().split(" (")[0] for s in suggestions), 6000)

    def _realign(self) -> None:
        """Align the shown runs again (new rules), keeping expansion and selection."""
        if not self.runs:
            return
        if self.groups is not None:
            b, n = self.groups
            tree = group_comparison(b, n, mode="tree", rules=self.rules)
            flat = group_comparison(b, n, mode="flat", rules=self.rules)
            precompute(tree)
            precompute(flat)
            self._apply(list(tree.runs), tree, flat, list(self.paths), keep_state=True)
        else:
            self._set_runs(list(self.runs), True, list(self.paths))

    def _size_suggestions_dock(self, visible: bool) -> None:
        if visible and not self._dock_sized:
            self._dock_sized = True
            self.resizeDocks([self.suggestions_dock], [max(150, self.height() // 5)],
                             Qt.Orientation.Vertical)

    def reveal_pair(self, removed: int, added: int) -> None:
        """Show a suggested pair in the diff tree: both rows visible, the removed selected."""
        cmp = self.comparison
        if cmp is None:
            return
        rows = [r for r in (removed, added) if 0 <= r < cmp.n_rows]
        for v in self.tree_views():
            v.expand_rows([int(cmp.parent[r]) for r in rows if cmp.parent[r] >= 0])
        if rows:
            self.reveal_row(rows[0], expand=False)
            m = self.diff.models[0] if self.diff.models else None
            idx = m.index_for_row(rows[0]) if m is not None else None
            if idx is not None and idx.isValid():
                self.diff.tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _capture_state(self) -> dict | None:
        if self.comparison is None:
            return None
        st = {"tab": self.tabs.currentIndex(),
              "tab_title": self.tabs.tabText(self.tabs.currentIndex())}
        for name, v in (("side", self.side), ("diff", self.diff)):
            st[name] = (v.expanded_rows(), v.current_row(), v.scroll_value())
        fc = self.flat.table.currentIndex()
        st["flat_row"] = int(fc.internalId()) if fc.isValid() else -1
        st["flat_sort"] = (self.flat.table.header().sortIndicatorSection(),
                           self.flat.table.header().sortIndicatorOrder())
        return st

    def _apply(self, runs: list[Profile], tree: Comparison, flat: Comparison | None,
               paths: list[str | None], keep_state: bool) -> None:
        old_tree, old_flat = self.comparison, self.flat_comparison
        state = self._capture_state() if keep_state else None
        widths = self._capture_columns()
        self.runs = runs
        self.paths = paths
        self.comparison = tree
        self.flat_comparison = flat if flat is not None else align(runs, mode="flat",
                                                                    rules=self.rules)
        self._choose_metrics()
        self._rebuild_metrics_menu()
        self._rebuild_baseline_menu()
        self._push_comparison()
        self._restore_columns(widths)
        primary = self._refresh_format_tabs()
        self.apply_filter()
        if primary is not None and (state is None or old_tree is None):
            self.tabs.setCurrentWidget(primary)
        if state is not None and old_tree is not None:
            self._restore_state(state, old_tree, old_flat)
        else:
            self.expand_to_depth(2)
            if len(runs) > 1 and primary is None and tree.n_rows:
                # First look at a comparison: the merged diff tree, opened along the path
                # to the biggest change, so the regression is on screen before any click.
                self.tabs.setCurrentWidget(self.diff)
                self.expand_hottest("delta", views=[self.diff])
        self._update_enabled()
        self._schedule_noise()
        self.suggestions.set_comparison(tree)
        self._update_status()
        self.comparisonChanged.emit(tree)
        _settle_gc()

    def _restore_state(self, st: dict, old_tree: Comparison, old_flat: Comparison | None) -> None:
        for name, v in (("side", self.side), ("diff", self.diff)):
            exp, cur, scroll = st[name]
            new = map_rows(old_tree, self.comparison, exp)
            v.expand_rows(new[new >= 0])
            if cur >= 0:
                c = int(map_rows(old_tree, self.comparison, np.array([cur]))[0])
                if c >= 0:
                    v.select_row(c)
            v.set_scroll_value(scroll)
        if old_flat is not None and st["flat_row"] >= 0:
            c = int(map_rows(old_flat, self.flat_comparison, np.array([st["flat_row"]]))[0])
            if c >= 0:
                self.flat.select_row(c)
        sec, order = st["flat_sort"]
        if sec >= 0 and sec < self.flat.model.columnCount():
            self.flat.table.sortByColumn(sec, order)
        titles = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        if st.get("tab_title") in titles:
            self.tabs.setCurrentIndex(titles.index(st["tab_title"]))

    def _refresh_format_tabs(self) -> QWidget | None:
        """Tabs specific to the runs' format (heap charts, RTS statistics, ticky counters,
        run totals), rebuilt for each comparison.  Returns the view that should be shown
        first when the tree views have nothing to show (RTS statistics: no tree)."""
        from .format_views import extra_views, primary_view, totals_view

        for w in self._format_tabs:
            idx = self.tabs.indexOf(w)
            if idx >= 0:
                self.tabs.removeTab(idx)
            w.deleteLater()
        self._format_tabs = []
        cmp = self.comparison
        views: list[tuple[str, QWidget]] = []
        try:
            primary = primary_view(cmp)
            if primary is not None:
                views.append(primary)
            views += extra_views(cmp)
            if primary is None:
                tv = totals_view(cmp)
                if tv is not None:
                    views.append(tv)
        except Exception as e:  # noqa: BLE001 - an optional view must not stop the window
            self.message_bar.show_message(f"format view: {type(e).__name__}: {e}", "warning")
            return None
        for title, w in views:
            if hasattr(w, "set_scale"):
                w.set_scale(self.scale)
            self.tabs.addTab(w, title)
            self._format_tabs.append(w)
        self._primary_tab = primary[1] if primary is not None else None
        return self._primary_tab

    def primary_tab(self) -> QWidget | None:
        """The format view that replaces the trees (RTS statistics), if any."""
        return getattr(self, "_primary_tab", None)

    def _push_comparison(self) -> None:
        cmp = self.comparison
        sig = self.sig_metric() if self.show_sig else None
        self.diff.sig_metric = sig
        self.flat.sig_metric = sig if sig in (self.flat_comparison.values
                                              if self.flat_comparison else ()) else None
        self.summary.set_comparison(cmp)
        self.side.set_comparison(cmp, self._pane_metrics(), self.scale)
        self.diff.set_comparison(cmp, self.metrics, self.scale)
        self.diff.legend.unit_text = "pp of run"
        self.flat.set_comparison(self.flat_comparison, cmp, self.metrics, self._main_self_metric(),
                                 self.scale)
        key = self.hot_key("value")
        if key is not None:
            self.side.sort_by_key(key)
            self.diff.sort_by_key(key)
        self._pending.clear()
        if self.flame is not None:
            metric = self._main_self_metric() or ""

            def flame_set(cmp=cmp, metric=metric) -> None:
                try:
                    self.flame.set_comparison(cmp, metric)
                except Exception as e:  # noqa: BLE001 - a broken optional view must not stop us
                    self.message_bar.show_message(f"Flame view: {type(e).__name__}: {e}",
                                                  "warning")

            self._defer(self.flame, flame_set)
        for w in self._extra_tabs:
            if hasattr(w, "set_comparison"):
                try:
                    w.set_comparison(cmp)
                except Exception as e:  # noqa: BLE001
                    self.message_bar.show_message(f"{type(w).__name__}: {e}", "warning")
        self.details.clear()

    # ----------------------------------------------------------------------------------
    # metrics
    # ----------------------------------------------------------------------------------
    def _available_metrics(self) -> list[str]:
        cmp = self.comparison
        if cmp is None:
            return []
        if cmp.n_runs == 1:
            return [m.name for m in cmp.metrics]
        return [m.name for m in comparable_metrics(cmp)] or [m.name for m in cmp.metrics]

    def _choose_metrics(self) -> None:
        cmp = self.comparison
        avail = self._available_metrics()
        saved = self.settings.value(f"metrics/{self._format_key()}")
        if isinstance(saved, str):
            saved = [saved]
        chosen = [m for m in (saved or []) if m in avail]
        if not chosen or not self.metrics or not set(self.metrics) <= set(avail):
            if not chosen:
                base = cmp.runs[cmp.baseline]
                cand = list(base.display_metrics) or [m.name for m in base.metrics]
                cand = [m for m in cand if m in avail and cmp.metric_by_name[m].kind is not Kind.NODE]
                chosen = self._convert_units(cand)[:4] or avail[:4]
            self.metrics = chosen
        self.metrics = self._convert_units(self.metrics)

    def _convert_units(self, metrics: list[str]) -> list[str]:
        """Swap each metric for its percent/absolute partner according to the toggle."""
        cmp = self.comparison
        if cmp is None:
            return metrics
        pairs = metric_pairs(cmp.metrics)
        out = []
        for m in metrics:
            unit = cmp.metric_by_name[m].unit
            want_pct = self.percent_mode
            if (unit is Unit.PERCENT) != want_pct and m in pairs and pairs[m] in cmp.values:
                m = pairs[m]
            if m not in out:
                out.append(m)
        return out

    def _pane_metrics(self) -> list[str]:
        """Side-by-side columns: the run's shown metrics (entries included) in the unit mode."""
        cmp = self.comparison
        base = cmp.runs[cmp.baseline]
        shown = [m for m in base.shown_metrics if m in cmp.values]
        out = self._convert_units(shown)
        for m in self.metrics:
            if m not in out:
                out.append(m)
        return out

    def _main_self_metric(self) -> str | None:
        cmp = self.comparison
        if cmp is None:
            return None
        m = default_metric(cmp)
        if m is None:
            return None
        met = cmp.metric_by_name[m]
        if met.kind is Kind.INCLUSIVE and met.self_of in cmp.values:
            m = met.self_of  # flat ranking and Δ paths use the node's own cost
        conv = self._convert_units([m])
        return conv[0] if conv else m

    def set_baseline(self, i: int) -> None:
        """Compare every run with run ``i`` (View > Baseline, 3+ runs): re-aligns the shown
        runs with ``align(..., baseline=i)`` and the current rename rules, keeping
        expansion, selection, filter and tab.  The left side-by-side pane follows the
        new baseline; a right pane that showed it goes back to the current run."""
        if self.groups is not None or not 0 <= i < len(self.runs) or self.comparison is None:
            return
        if i == self.comparison.baseline:
            return
        self.baseline_index = i
        new_base = self.runs[i].path
        self.side._pane_choice[0] = None
        if self.side._pane_choice[1] == new_base:
            self.side._pane_choice[1] = None
        self._set_runs(list(self.runs), True, list(self.paths))

    def _rebuild_baseline_menu(self) -> None:
        self.baseline_menu.clear()
        cmp = self.comparison
        ok = cmp is not None and cmp.n_runs >= 2 and cmp.groups is None
        self.baseline_menu.setEnabled(ok)
        if not ok:
            return
        from PySide6.QtGui import QActionGroup

        group = QActionGroup(self.baseline_menu)
        group.setExclusive(True)
        for i, p in enumerate(cmp.runs):
            a = self.baseline_menu.addAction(f"[{i}] {Path(p.path).name}")
            a.setCheckable(True)
            a.setChecked(i == cmp.baseline)
            a.setObjectName(f"baselineRun{i}")
            group.addAction(a)
            a.triggered.connect(lambda _=False, i=i: self.set_baseline(i))

    def _rebuild_metrics_menu(self) -> None:
        self.metrics_menu.clear()
        cmp = self.comparison
        if cmp is None:
            return
        for name in self._available_metrics():
            met = cmp.metric_by_name[name]
            a = self.metrics_menu.addAction(f"{met.title}  ({name})")
            a.setCheckable(True)
            a.setChecked(name in self.metrics)
            a.toggled.connect(lambda on, n=name: self.toggle_metric(n, on))

    def toggle_metric(self, name: str, on: bool) -> None:
        if on and name not in self.metrics:
            self.metrics.append(name)
        elif not on and name in self.metrics:
            if len(self.metrics) == 1:
                return
            self.metrics.remove(name)
        self._metrics_changed()

    def set_metrics(self, metrics: list[str]) -> None:
        self.metrics = [m for m in metrics if self.comparison and m in self.comparison.values]
        self._rebuild_metrics_menu()
        self._metrics_changed()

    def _metrics_changed(self) -> None:
        if self.comparison is None:
            return
        self.side.set_metrics(self._pane_metrics())
        self.diff.set_metrics(self.metrics)
        self.flat.metric = self._main_self_metric()
        self.flat.set_metrics(self.metrics)
        self._update_sig_columns()
        self.settings.setValue(f"metrics/{self._format_key()}", self.metrics)
        self._schedule_noise()
        self.apply_filter()

    def set_percent_mode(self, on: bool) -> None:
        self.percent_mode = on
        if self.comparison is None:
            return
        self.metrics = self._convert_units(self.metrics)
        self._rebuild_metrics_menu()
        self._metrics_changed()

    def set_colorblind(self, on: bool) -> None:
        self.scale = DivergingScale(dead_zone=self.scale.dead_zone, clamp=self.scale.clamp,
                                    palette="colorblind" if on else "red-green")
        self.settings.setValue("palette", self.scale.palette)
        for v in (self.side, self.diff, self.flat):
            v.set_scale(self.scale)
        if self.flame is not None and hasattr(self.flame, "set_palette"):
            try:
                self.flame.set_palette(self.scale.palette)
            except Exception:  # noqa: BLE001
                pass

    # ----------------------------------------------------------------------------------
    # noise: is a change real?
    # ----------------------------------------------------------------------------------
    def sig_metric(self) -> str | None:
        """The metric whose significance the 'sig.' column and 'significant only' use: the
        format's main metric (e.g. inherited %time) in the current unit mode."""
        cmp = self.comparison
        if cmp is None:
            return None
        m = default_metric(cmp)
        if m is None:
            return None
        conv = self._convert_units([m])
        return conv[0] if conv else m

    def _noise_todo(self, cmp: Comparison, metrics: Sequence[str] | None = None) -> list[str]:
        if metrics is None:  # fading needs the sampled metrics; deterministic ones are exact
            metrics = [*(m for m in self.metrics if m in cmp.values
                         and cmp.metric_by_name[m].sampled), self.sig_metric()]
        want = list(metrics)
        have = cmp.noise.metrics if cmp.noise is not None else {}
        return [m for m in dict.fromkeys(want) if m and m in cmp.values and m not in have]

    def _schedule_noise(self) -> None:
        """Estimate the noise of the shown metrics of two-run comparisons: at once for
        small ones, in a worker thread for big ones (groups already carry theirs)."""
        for cmp in (self.comparison, self.flat_comparison):
            if cmp is None or cmp.n_runs != 2 or cmp.groups is not None:
                continue
            todo = self._noise_todo(cmp)
            if not todo:
                continue
            if cmp.n_rows <= NOISE_SYNC_ROWS:
                self._ensure_noise(cmp, todo)
                continue
            if any(t.cmp is cmp and set(todo) <= set(t.metrics) for t in self._noise_tasks):
                continue
            task = _NoiseTask(cmp, todo)
            self._noise_tasks.append(task)
            task.signals.done.connect(lambda nz, t=task: self._noise_done(t, nz))
            QThreadPool.globalInstance().start(task)
        self._update_legend()

    def _noise_done(self, task: _NoiseTask, nz) -> None:
        if task in self._noise_tasks:
            self._noise_tasks.remove(task)
        if nz is not None and task.cmp in (self.comparison, self.flat_comparison):
            self._attach_noise(task.cmp, nz)

    def wait_for_noise(self, timeout_ms: int = 30000) -> None:
        """Block until background noise estimates are in (tests, screenshots)."""
        QThreadPool.globalInstance().waitForDone(timeout_ms)
        from PySide6.QtCore import QCoreApplication

        QCoreApplication.processEvents()
        self.ensure_noise()

    def ensure_noise(self) -> None:
        """Compute every missing noise estimate now."""
        for cmp in (self.comparison, self.flat_comparison):
            if cmp is not None and cmp.n_runs == 2:
                self._ensure_noise(cmp, self._noise_todo(cmp))

    def _ensure_noise(self, cmp: Comparison, metrics: Sequence[str]) -> None:
        todo = self._noise_todo(cmp, metrics)
        if todo and cmp.n_runs == 2:
            self._attach_noise(cmp, single_run_noise(cmp, metrics=todo))

    def _attach_noise(self, cmp: Comparison, nz) -> None:
        if cmp.noise is None:
            cmp.noise = nz
        else:
            for k, v in nz.metrics.items():
                cmp.noise.metrics.setdefault(k, v)
        if cmp is self.comparison:
            self.diff.noise_changed()
            cur = self.diff.current_row()
            if cur >= 0:
                self.details.show_row(cmp, cur)
        if cmp is self.flat_comparison:
            self.flat.noise_changed()
        self._update_legend()

    def _update_legend(self) -> None:
        cmp = self.comparison
        txt = ""
        if cmp is not None and cmp.noise is not None and self.fade_noise:
            sampled = [m for m in cmp.noise.metrics.values()
                       if not m.method.startswith("deterministic")]
            if sampled:
                txt = ("faded: within run-to-run noise" if cmp.groups is not None
                       else "faded: within sampling error")
        self.diff.legend.noise_text = txt
        self.diff.legend.update()

    def set_show_sig(self, on: bool) -> None:
        self.show_sig = on
        if on:
            self._schedule_noise()
        self._update_sig_columns()

    def _update_sig_columns(self) -> None:
        if self.comparison is None:
            return
        sig = self.sig_metric() if self.show_sig and self.comparison.n_runs == 2 else None
        self.diff.set_sig_metric(sig)
        fc = self.flat_comparison
        self.flat.set_sig_metric(sig if fc is not None and sig in fc.values else None)

    def set_fade_noise(self, on: bool) -> None:
        self.fade_noise = on
        self.diff.set_fade_noise(on)
        self.flat.set_fade_noise(on)
        self._update_legend()

    # ----------------------------------------------------------------------------------
    # filter
    # ----------------------------------------------------------------------------------
    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def _set_changed_only(self, on: bool) -> None:
        self.changed_only = on
        self.apply_filter()

    def _set_threshold(self, v: float) -> None:
        self.threshold = float(v)
        self.apply_filter()

    def _set_significant_only(self, on: bool) -> None:
        self.significant_only = on
        self.apply_filter()

    def _keep_mask(self, cmp: Comparison, metrics: Sequence[str] | None = None,
                   sig_metric: str | None = None,
                   factor: Callable[[Comparison, str], float] = change_scale_factor,
                   ) -> np.ndarray | None:
        """Rows kept by "changed only", "significant only" and the |Δ| threshold (None:
        all).  ``metrics`` (default: the shown ones), ``sig_metric`` (default:
        :meth:`sig_metric`) and ``factor`` (Δ -> pp of run) let a view over another
        comparison (the bottom-up tab) apply the same rules to its own rows."""
        sig_only = self.significant_only and cmp.n_runs == 2
        if cmp.n_runs < 2 or (not self.changed_only and self.threshold <= 0 and not sig_only):
            return None
        keep = np.ones(cmp.n_rows, dtype=bool)
        if self.changed_only:
            keep &= cmp.status != Status.SAME
        if sig_only:
            m = self.sig_metric() if sig_metric is None else sig_metric
            if m is not None and m in cmp.values:
                self._ensure_noise(cmp, [m])
                if cmp.noise is not None and m in cmp.noise.metrics:
                    keep &= cmp.noise.metrics[m].significant
        if self.threshold > 0:
            big = np.zeros(cmp.n_rows, dtype=bool)
            for m in (self.metrics if metrics is None else metrics):
                if m in cmp.values:
                    d = np.abs(cmp.delta(m)) * factor(cmp, m)
                    big |= np.nan_to_num(d) >= self.threshold
            big |= (cmp.status == Status.ADDED) | (cmp.status == Status.REMOVED)
            keep &= big
        return keep

    def apply_filter(self) -> None:
        if self.comparison is None:
            return
        text = self.filter_edit.text().strip()
        regex = self.regex_box.isChecked()
        try:
            if regex and text:
                import re

                re.compile(text)
        except Exception as e:  # noqa: BLE001
            self.filter_edit.setStyleSheet("QLineEdit { background: #fde0dc; }")
            self.filter_edit.setToolTip(f"bad regular expression: {e}")
            return
        self.filter_edit.setStyleSheet("")
        self.filter_edit.setToolTip("")
        keep_tree = self._keep_mask(self.comparison)
        self.side.apply_filter(text, regex, keep_tree)
        self.diff.apply_filter(text, regex, keep_tree)
        self.flat.apply_filter(text, regex, self._keep_mask(self.flat_comparison))
        if self.flame is not None and hasattr(self.flame, "set_filter"):
            try:
                self.flame.set_filter(text)
            except Exception:  # noqa: BLE001
                pass
        for w in self._format_tabs:  # views over their own rows (bottom-up) follow too
            if hasattr(w, "follow_window"):
                try:
                    w.follow_window(self)
                except Exception as e:  # noqa: BLE001 - an optional view must not break us
                    self.message_bar.show_message(f"{type(w).__name__}: {e}", "warning")
        self._update_status()

    # ----------------------------------------------------------------------------------
    # navigation
    # ----------------------------------------------------------------------------------
    def tree_views(self) -> list:
        return [self.side, self.diff]

    def _defer(self, view, fn) -> None:
        """Run ``fn`` now if ``view`` is the visible tab, else when it is first shown
        (expanding or laying out hidden tabs would cost the user time for nothing)."""
        if self.tabs.currentWidget() is view:
            fn()
        else:
            self._pending.setdefault(id(view), []).append(fn)

    def _tab_changed(self, _i: int) -> None:
        w = self.tabs.currentWidget()
        for fn in self._pending.pop(id(w), []):
            fn()

    def flush_pending(self) -> None:
        """Apply every deferred operation to every tab now (tests, screenshots)."""
        pending, self._pending = self._pending, {}
        for fns in pending.values():
            for fn in fns:
                fn()

    def expand_to_depth(self, depth: int) -> None:
        for v in self.tree_views():
            self._defer(v, lambda v=v: v.expand_to_depth(depth))

    def collapse_all(self) -> None:
        for v in self.tree_views():
            self._pending.pop(id(v), None)
            v.collapse_all()

    def expand_hottest(self, by: str = "value", views=None) -> int:
        """Expand along the largest inherited cost (``by="value"``), or down to the row with
        the largest self change of the main metric (``by="delta"``), in ``views`` (default:
        every tree view)."""
        cmp = self.comparison
        if cmp is None:
            return -1
        if by == "delta" and cmp.n_runs > 1:
            m = self._main_self_metric()
            if m is None:
                return -1
            key = np.abs(cmp.delta(m)) * change_scale_factor(cmp, m)
            to_max = True
        else:
            key = self.hot_key("value")
            to_max = False
        if key is None:
            return -1
        last = -1
        for v in (self.tree_views() if views is None else views):
            last = v.expand_hottest(key, to_max=to_max)
        if last >= 0:
            self._row_selected(last, None)
        return last

    def hot_key(self, by: str = "value") -> np.ndarray | None:
        """Per-row inherited cost (larger of baseline and current) or its Δ (``by="delta"``)."""
        cmp = self.comparison
        if cmp is None:
            return None
        m = inclusive_of(cmp, self._main_self_metric())
        if m is None:
            return None
        if by == "delta" and cmp.n_runs > 1:
            return cmp.delta(m)
        return np.fmax(cmp.value(m, cmp.current), cmp.value(m, cmp.baseline))

    def _row_selected(self, row: int, source) -> None:
        if self._selecting:
            return
        self._selecting = True
        try:
            self.details.show_row(self.comparison, row)
            for v in [self.side, self.diff, self.flame, *self._extra_tabs]:
                if v is None or v is source or not hasattr(v, "select_row"):
                    continue
                try:
                    v.select_row(row)
                except Exception:  # noqa: BLE001 - optional views
                    pass
        finally:
            self._selecting = False

    def _flat_selected(self, row: int) -> None:
        self.details.show_row(self.flat_comparison, row)

    def reveal_key(self, key: str) -> None:
        """Show every tree row with match ``key`` (expanded) and select the first."""
        cmp = self.comparison
        if cmp is None:
            return
        rows = np.flatnonzero(cmp.keys == key)
        if rows.size == 0:
            return
        for v in self.tree_views():
            v.expand_rows([int(cmp.parent[r]) for r in rows if cmp.parent[r] >= 0])
        self.reveal_row(int(rows[0]), expand=False)

    def reveal_row(self, row: int, expand: bool = True) -> None:
        self.tabs.setCurrentWidget(self.diff if self.comparison.n_runs > 1 else self.side)
        self._row_selected(row, None)
        self.diff.select_row(row)

    def next_tab(self, step: int = 1) -> None:
        n = self.tabs.count()
        if n:
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % n)

    def show_view(self, name: str) -> None:
        w = {"side": self.side, "diff": self.diff, "flat": self.flat,
             "flame": self.flame}.get(name)
        if w is None:  # format tabs by the first word of their title: heap, rts, ticky, ...
            for i in range(self.tabs.count()):
                words = self.tabs.tabText(i).lower().split()
                if name.lower() in words or name.lower().split("-") == words:  # bottom-up
                    w = self.tabs.widget(i)
                    break
        if w is not None:
            self.tabs.setCurrentWidget(w)

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a view tab; it receives comparisons and selections if it has the hooks."""
        self._extra_tabs.append(widget)
        idx = self.tabs.addTab(widget, title)
        if hasattr(widget, "rowSelected"):
            widget.rowSelected.connect(lambda r, w=widget: self._row_selected(r, w))
        if self.comparison is not None and hasattr(widget, "set_comparison"):
            widget.set_comparison(self.comparison)
        return idx

    # ----------------------------------------------------------------------------------
    # status and exports
    # ----------------------------------------------------------------------------------
    def _update_status(self) -> None:
        cmp = self.comparison
        if cmp is None:
            self.status_label.setText("No profile loaded")
            self.incomplete_label.hide()
            return
        fmts = sorted({p.format for p in cmp.runs})
        nodes = " / ".join(f"{p.n_nodes:,}" for p in cmp.runs)
        txt = f"{', '.join(fmts)} · nodes {nodes} · {cmp.n_rows:,} aligned rows"
        if cmp.n_runs > 1:
            c = cmp.status_counts()
            matched = c["same"] + c["changed"]
            txt += (f" · {matched:,} matched ({c['changed']:,} changed), "
                    f"{c['added']:,} added, {c['removed']:,} removed")
        if cmp.groups is not None:
            txt += f" · groups: {len(cmp.groups[0])} vs {len(cmp.groups[1])} runs"
        if self.rules:
            n = int((cmp.matched_by > 0).sum()) if cmp.matched_by is not None else 0
            txt += f" · rename rules: {len(self.rules)} ({n:,} rows matched by them)"
            self.status_label.setToolTip(describe_rules(self.rules))
        else:
            self.status_label.setToolTip("")
        lay = self.diff.layout_
        if lay is not None and lay.visible is not None:
            txt += f" · filter: {int(lay.visible.sum()):,} rows shown"
            if lay.matched is not None:
                txt += f", {int(lay.matched.sum()):,} match"
        self.status_label.setText(txt)
        inc = [i for i, p in enumerate(cmp.runs) if p.incomplete]
        if inc:
            reasons = "; ".join(f"{Path(cmp.runs[i].path).name}: {cmp.runs[i].incomplete_reason}"
                                for i in inc)
            self.incomplete_label.setToolTip(reasons)
            self.incomplete_label.show()
        else:
            self.incomplete_label.hide()
        names = " vs ".join(Path(p.path).name for p in cmp.runs)
        if cmp.groups is not None:
            names = f"{len(cmp.groups[0])} runs vs {len(cmp.groups[1])} runs"
        self.setWindowTitle(f"{names} — profdiff")

    def _save_dialog(self, title: str, suffix: str, filt: str) -> str | None:
        base = Path(self.paths[-1] or "profile").stem if self.paths else "profile"
        f, _ = QFileDialog.getSaveFileName(self, title,
                                           str(Path(self._last_folder()) / f"{base}{suffix}"),
                                           filt)
        return f or None

    def export_speedscope(self, path: str | None = None) -> bool:
        if self.comparison is None:
            return False
        path = path or self._save_dialog("Export to speedscope", ".speedscope.json",
                                         "speedscope JSON (*.json)")
        if not path:
            return False
        try:
            export_speedscope(self.comparison, path, metric=None)
        except Exception as e:  # noqa: BLE001
            self.message_bar.show_message(f"Export to {path} failed: {e}")
            return False
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def export_csv(self, path: str | None = None) -> bool:
        if self.comparison is None:
            return False
        path = path or self._save_dialog("Export table to CSV", ".csv", "CSV (*.csv)")
        if not path:
            return False
        flat = self.tabs.currentWidget() is self.flat
        cmp = self.flat_comparison if flat else self.comparison
        lay = self.flat.layout_ if flat else self.diff.layout_
        rows = None
        if flat and lay is not None:
            rows = lay.children(-1)
        elif lay is not None and lay.visible is not None:
            rows = np.flatnonzero(lay.visible)
        try:
            export_csv(cmp, path, rows=rows, metrics=self.metrics)
        except Exception as e:  # noqa: BLE001
            self.message_bar.show_message(f"Export to {path} failed: {e}")
            return False
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    # ----------------------------------------------------------------------------------
    # drag and drop onto the window
    # ----------------------------------------------------------------------------------
    def dragEnterEvent(self, ev) -> None:  # noqa: N802 - Qt API
        files = local_files(ev.mimeData())
        if not files:
            ev.ignore()
            return
        ev.acceptProposedAction()
        if len(files) >= 2:
            text = "Drop to compare (older file = baseline)"
        elif self.runs:
            text = "Drop to replace the current run"
        else:
            text = "Drop to open"
        self.overlay.show_over(self.centralWidget(), text)

    def dragMoveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if local_files(ev.mimeData()):
            ev.acceptProposedAction()

    def dragLeaveEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.overlay.hide()

    def dropEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.overlay.hide()
        files = local_files(ev.mimeData())
        if not files:
            ev.ignore()
            return
        ev.acceptProposedAction()
        self.drop_files(files)

    def drop_files(self, files: Sequence[str]) -> None:
        """Two or more files: compare, oldest first; one file: replace the current run."""
        if len(files) >= 2:
            self.load_paths(sorted(files, key=_mtime))
        elif self.runs:
            self.open_as_current(files[0])
        else:
            self.load_paths(files)

    def _pane_drop(self, slot: int, files: list) -> None:
        if len(files) >= 2:
            self.drop_files(files)
        elif slot == 0:
            self.open_as_baseline(files[0])
        else:
            self.open_as_current(files[0])


class _NoiseSignals(QObject):
    done = Signal(object)  # Noise or None


class _NoiseTask(QRunnable):
    """Sampling-error estimate of a big comparison in the thread pool."""

    def __init__(self, cmp: Comparison, metrics: list[str]) -> None:
        super().__init__()
        self.cmp = cmp
        self.metrics = list(metrics)
        self.signals = _NoiseSignals()
        self.setAutoDelete(False)

    def run(self) -> None:
        try:
            nz = single_run_noise(self.cmp, metrics=self.metrics)
        except Exception:  # noqa: BLE001 - the estimate is optional; views work without it
            nz = None
        try:
            self.signals.done.emit(nz)
        except RuntimeError:  # the window (and its receiver) closed while we computed
            pass


def _column_widths(view) -> tuple[str, list[int]]:
    """(signature of the columns = their headers, section widths) of a tree view."""
    m = view.model()
    h = view.header()
    heads = [str(m.headerData(i, Qt.Orientation.Horizontal) or "") for i in range(h.count())]
    return "|".join(heads).replace("\n", " "), [h.sectionSize(i) for i in range(h.count())]


def _settle_gc() -> None:
    """Collect the previous comparison's garbage, then freeze what is alive.

    The app holds ~10^5 GC-tracked objects (Qt bindings, numpy, pandas); a full cyclic
    collection over them costs ~50 ms and is triggered by allocation counts, i.e. at a
    random click (a first expand or sort measured 200+ ms instead of ~80).  Frozen objects
    are skipped by collections; unfreezing first lets this call collect the cycles of the
    comparison just replaced, so nothing leaks across loads.
    """
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _mtime(p: str) -> float:
    try:
        return os.stat(p).st_mtime
    except OSError:
        return 0.0
