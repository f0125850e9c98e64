"""The profdiff main window: tabs of views around one comparison, loading, settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from profdiff.parsers.model import Profile
from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison, Status
from profdiff.viewer.head_start import HeadStart
from profdiff.viewer.memory_settings import give_back_freed
from profdiff.viewer.noise_job import NoiseJob
from profdiff.viewer.run_labels import labels_of
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.view_state import ViewState, available_metrics, change_scale_factor

from .actions import build_actions
from .flame_view import FlameView
from .flat_view import FlatView
from .icons import icon
from .layout import map_rows
from .loader import LoadTask, Slot, flat_of
from .progress_pacer import ProgressPacer
from .row_menu import bind_format_view, install_row_menus
from .rules_editor import RulesEditor, describe_rules
from .suggestions_panel import SuggestionsPanel
from .views import FIRST_LOOK_ROWS, DiffTreeView, SideBySideView
from .widgets import DetailsPane, DropOverlay, EmptyState, MessageBar, SummaryBar
from .window_io import ExportDropMixin
from .window_loading import LoadingMixin
from .window_navigation import NavigationMixin
from .window_noise import NoiseMixin
from .window_rules import RulesMixin
from .window_settings import SettingsMixin
from .window_tabs import TabsMixin


class MainWindow(LoadingMixin, RulesMixin, NoiseMixin, NavigationMixin, ExportDropMixin,
                 SettingsMixin, TabsMixin, QMainWindow):
    """Tabs "Summary", "Side by side", "Diff tree", "By cost centre", "Flame" and the
    format's own views over one comparison (only the ones with data: :mod:`.window_tabs`).

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
    viewStateChanged = Signal(object)  # ViewState: filter, thresholds, metrics, unit changed
    # a worker's culprit ranking of a comparison arrived; applied: it gave the opening path
    # (False: stale after a reload, or the tree tab was opened first)
    culpritsRanked = Signal(object, bool)

    def __init__(self, settings: QSettings | None = None, synchronous: bool = False) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("profdiff", "profdiff")
        self.synchronous = synchronous
        # rank a big comparison's culprits in a worker before the tree tab's first click
        # (the live window; a synchronous one, e.g. --screenshot, ranks on the click)
        self.rank_ahead = not synchronous
        self.setWindowTitle("profdiff")
        self.setWindowIcon(icon("profdiff"))
        self.setAcceptDrops(True)
        self.runs: list[Profile] = []
        self.paths: list[str | None] = []
        self.comparison: Comparison | None = None
        self.session: Session | None = None  # what is compared (rules, groups, runs)
        self.spec = SessionSpec()  # reading options for files opened in the window
        self.reading_dialog: QWidget | None = None  # File ▸ Reading options…, when open
        self.view_state = ViewState()  # what is shown (metrics, unit, filters)
        self.scale = DivergingScale(
            palette=str(self.settings.value("palette", "red-green")),
            dead_zone=0.1, clamp=5.0)
        self._task: LoadTask | None = None
        # the command line's files read in a child since start-up (viewer.head_start):
        # given to the first load, which adopts it if it asks for the same files
        self.head_start: HeadStart | None = None
        self._align_task: LoadTask | None = None  # set_runs_async in flight
        self._selecting = False
        self._extra_tabs: list[QWidget] = []
        self.watch_panel: QWidget | None = None  # the "Runs" tab of a watched folder
        self._format_tabs: list[QWidget] = []
        self._pending: dict[int, list] = {}
        self._culprit_owed: tuple | None = None  # (comparison (weakly), memo): opening paths
        self.load_errors: list[str] = []  # what the last opening of files could not read
        # the last opening's files (None: a run without a file) and its n_base (groups)
        self.last_opening: tuple[tuple[str | None, ...], int | None] = ((), None)
        # the tab the command line asks to show first (--view; None: where the runs'
        # format opens): the loader aligns ahead what that tab reads
        self.first_view: str | None = None
        # matching across refactors
        self.rules: list = []
        self.rules_source: Path | None = None  # the .profdiff.toml the rules came from
        self._rules_dirty = False  # edited in the app since read/saved
        self.rules_editor: RulesEditor | None = None
        # noise
        self.groups: tuple[list[Profile], list[Profile]] | None = None
        self.group_paths: tuple[list[str], list[str]] | None = None
        self._noise_tasks: list = []
        self._columns_restored: set[tuple[str, str]] = set()  # (format, view) widths applied
        self.baseline_index = 0  # run the others are compared with (View > Baseline)
        self._build_ui()
        self._build_actions()
        self._restore_settings()
        self._update_enabled()


    # ----- the view state, as attributes (older callers and tests read these) ---------
    def _view_attr(name: str, doc: str):  # noqa: N805 - property factory
        def get(self):
            return getattr(self.view_state, name)

        def set_(self, value) -> None:
            setattr(self.view_state, name, value)

        return property(get, set_, doc=doc)

    metrics = _view_attr("metrics", "Metric columns of the diff views (ViewState.metrics).")
    percent_mode = _view_attr("percent", "Percent of run (else absolute units).")
    threshold = _view_attr("threshold", "Hide rows whose |Δ| is below this many pp.")
    changed_only = _view_attr("changed_only", "Hide rows that did not change.")
    significant_only = _view_attr("significant_only", "Only significant changes.")
    show_sig = _view_attr("show_sig", "Show the 'sig.' column.")
    fade_noise = _view_attr("fade_noise", "Fade changes within noise.")
    del _view_attr

    @property
    def flat_comparison(self) -> Comparison | None:
        """The flat (per cost centre) comparison of the shown runs, aligned on first use
        (:func:`.loader.flat_of`): a window that opens on a tree never waits for it."""
        if self.session is None or self.comparison is None:
            return None
        return flat_of(self.session)

    def flat_if_aligned(self) -> Comparison | None:
        """The flat comparison if it is aligned already, else None (computes nothing):
        for updates that concern only views already showing it (noise, filters)."""
        return self.session.built("flat") if self.session is not None else None

    def load_spec(self) -> SessionSpec:
        """The spec files are opened with now: the window's reading options, rename rules
        and baseline."""
        return self.spec.replace(rules=tuple(self.rules), baseline=self.baseline_index)

    def open_spec(self, spec: SessionSpec, view: ViewState | None = None) -> None:
        """Open what ``spec`` says (the command line: files or groups, reading options,
        rules, baseline) and show it as ``view`` says (metrics, unit, filters)."""
        self.spec = spec.replace(files=(), base=(), new=())
        if spec.explicit_rules or spec.rules:
            self.rules = list(spec.rules)
            self.rules_source = Path(spec.rules_source) if spec.rules_source else None
            self._rules_dirty = spec.explicit_rules  # keep command-line rules over a file
        if view is not None:
            self._apply_view(view)
        if spec.grouped:
            self.open_groups(spec.base, spec.new)
        elif spec.files:
            self.baseline_index = spec.baseline
            self._start([Slot(str(p), None) for p in spec.files], list(spec.files))
        if view is not None and view.metrics:
            self._when_compared(lambda: self.set_metrics(list(view.metrics)))

    def _when_compared(self, fn) -> None:
        """Run ``fn`` now if a comparison is shown, else once the next one is."""
        if self.comparison is not None:
            fn()
            return

        def once(_cmp) -> None:
            self.comparisonChanged.disconnect(once)
            fn()

        self.comparisonChanged.connect(once)

    def _apply_view(self, view: ViewState) -> None:
        """Set the toolbar and menus from ``view`` (their signals update view_state)."""
        if not view.percent:  # --absolute; else the saved unit mode stays
            self.act_percent.setChecked(False)
        self.changed_box.setChecked(view.changed_only)
        self.significant_box.setChecked(view.significant_only)
        self.threshold_spin.setValue(view.threshold)
        self.regex_box.setChecked(view.regex)
        if view.filter_text:
            self.filter_edit.setText(view.filter_text)

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
        self._build_summary_tab()
        self.tabs.addTab(self.side, "Side by side")
        self.tabs.addTab(self.diff, "Diff tree")
        self.tabs.addTab(self.flat, "By cost centre")
        self.flame = FlameView()
        self.tabs.addTab(self.flame, "Flame")
        self.splitter.addWidget(self.tabs)
        self.details = DetailsPane()
        self.details.setObjectName("details")
        self.splitter.addWidget(self.details)
        self.details.hide()  # shown with a selected row (window_tabs)
        self.details.contentChanged.connect(self._update_details_visibility)
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
        self.progress_pacer = ProgressPacer(self.progress)
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
        self.tabs.currentChanged.connect(self._update_details_visibility)
        self.side.rowSelected.connect(lambda r: self._row_selected(r, self.side))
        self.diff.rowSelected.connect(lambda r: self._row_selected(r, self.diff))
        self.side.filesDropped.connect(self._pane_drop)
        self.side.renameRequested.connect(self.rename_run_dialog)
        self.flat.flatRowSelected.connect(self._flat_selected)
        self.flat.revealRequested.connect(self.reveal_key)
        self.flat.callSiteActivated.connect(self.reveal_row)
        if self.flame is not None and hasattr(self.flame, "rowSelected"):
            self.flame.rowSelected.connect(lambda r: self._row_selected(r, self.flame))
        # issue 20 hook (Disassembly tab): "Compare instructions…" / double-click, perf rows
        from .instructions_hook import add_compare_instructions
        for pane in (*self.side.panes, self.diff.tree, self.flat.table):
            add_compare_instructions(self, pane)
        install_row_menus(self)  # issue 19: copy, filter, show in, focus on every row

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
        build_actions(self)

    def _update_enabled(self) -> None:
        has = bool(self.runs)
        # a watched folder's runs tab is content too, before its first run lands
        self.stack.setCurrentWidget(self.content if has or self._extra_tabs else self.empty)
        for a in (self.act_swap, self.act_reload, self.act_speedscope, self.act_csv,
                  self.act_add, self.act_hot):
            a.setEnabled(has)
        self.act_swap.setEnabled(len(self.runs) >= 2)
        two = self.comparison is not None and self.comparison.n_runs >= 2  # current's noise
        self.significant_box.setEnabled(two)
        self.act_significant.setEnabled(two)
        self.act_sig.setEnabled(two)

    # ----------------------------------------------------------------------------------
    # settings
    # ----------------------------------------------------------------------------------
    def closeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        self.cancel_loading()
        self._drop_align()
        self.save_settings()
        super().closeEvent(ev)

    # ----------------------------------------------------------------------------------
    # opening files
    # ----------------------------------------------------------------------------------
    # ----------------------------------------------------------------------------------
    # replacing runs
    # ----------------------------------------------------------------------------------
    # ----------------------------------------------------------------------------------
    # rename rules and match suggestions
    # ----------------------------------------------------------------------------------
    def _capture_state(self) -> dict | None:
        if self.comparison is None:
            return None
        st = {"tab": self.tabs.currentIndex(),
              "tab_title": self.tabs.tabText(self.tabs.currentIndex())}
        for name, v in (("side", self.side), ("diff", self.diff)):
            st[name] = (v.expanded_rows(), v.current_row(), v.scroll_value())
        fc, flat = self.flat.table.currentIndex(), self.flat.cmp
        # by key: the flat view may show an older comparison than the last one aligned
        st["flat_key"] = str(flat.keys[int(fc.internalId())]) if fc.isValid() and \
            flat is not None else None
        st["flat_sort"] = (self.flat.table.header().sortIndicatorSection(),
                           self.flat.table.header().sortIndicatorOrder()) \
            if self.flat.model is not None else None
        return st

    def _apply(self, session: Session, paths: list[str | None], keep_state: bool,
               noise_job: NoiseJob | None = None) -> None:
        """Show ``session`` (its tree and flat comparisons) in every view (``noise_job``:
        the tree's estimate the loader started, taken over: :meth:`adopt_noise_job`)."""
        old_tree = self.comparison
        state = self._capture_state() if keep_state else None
        widths = self._capture_columns()
        tree = session.tree
        self.session = session
        self.runs = list(tree.runs) if session.groups is not None else list(session.runs)
        self.paths = paths
        self.comparison = tree
        self._flat_widths = widths  # for the flat table, given its comparison when shown
        self._choose_metrics()
        self.stop_stale_jobs()
        if noise_job is not None:
            self.adopt_noise_job(noise_job)
        self.start_noise_early()
        self._rebuild_metrics_menu()
        self._rebuild_baseline_menu()
        self._push_comparison()
        self._restore_columns(widths)
        opening = self._refresh_format_tabs()
        self.apply_filter()
        if state is not None and old_tree is not None:
            self._restore_state(state, old_tree)
            if self.tabs.tabText(self.tabs.currentIndex()) != st_title(state) and opening:
                self.tabs.setCurrentWidget(opening)  # that tab has no data for these runs
        else:
            if opening is not None:  # the format's most useful view (window_tabs)
                self.tabs.setCurrentWidget(opening)
            self.expand_to_depth(2, max_rows=FIRST_LOOK_ROWS)
            if len(self.runs) > 1 and tree.n_rows:
                # The diff tree opens along the path to the biggest change, so the
                # regression is on screen at the first click on it (or on a Summary link).
                self.open_along_culprit()  # every tree view: Side by side too
            elif tree.n_rows and tree.mode == "tree":
                self.open_heaviest_path()  # one run: where its cost goes
        self._update_details_visibility()
        self._update_enabled()
        self._schedule_noise()
        self.suggestions.set_comparison(tree)
        self._update_status()
        self.comparisonChanged.emit(tree)
        # after the listeners (--view may switch tabs): built when the Summary is shown
        if self.tabs.currentWidget() is not self.summary_view:
            self.summary_view.set_summary(None)
        self._defer(self.summary_view, self._refresh_summary)
        _settle_gc()
        # idle by then: what the runs replaced, the loading and the views' building
        # freed goes back to the kernel (memory_settings.give_back_freed)
        QTimer.singleShot(GIVE_BACK_AFTER_MS, give_back_freed)
        if noise_job is not None:  # the rest of its estimate, once these rows are painted
            QTimer.singleShot(0, noise_job.go_on)

    def _restore_state(self, st: dict, old_tree: Comparison) -> None:
        for name, v in (("side", self.side), ("diff", self.diff)):
            exp, cur, scroll = st[name]
            new = map_rows(old_tree, self.comparison, exp)
            v.expand_rows(new[new >= 0])
            if cur >= 0:
                c = int(map_rows(old_tree, self.comparison, np.array([cur]))[0])
                if c >= 0:
                    v.select_row(c)
            v.set_scroll_value(scroll)
        self._defer(self.flat, lambda: self._restore_flat(st))
        titles = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        if st.get("tab_title") in titles:
            self.tabs.setCurrentIndex(titles.index(st["tab_title"]))

    def _restore_flat(self, st: dict) -> None:
        """The flat table's selection and sort as they were (once it shows the new runs)."""
        flat = self.flat.cmp
        if flat is None or self.flat.model is None:
            return
        if st.get("flat_key") is not None:
            hit = np.flatnonzero(flat.keys == st["flat_key"])
            if hit.size:
                self.flat.select_row(int(hit[0]))
        if st.get("flat_sort") is not None:
            sec, order = st["flat_sort"]
            if 0 <= sec < self.flat.model.columnCount():
                self.flat.table.sortByColumn(sec, order)

    def _bind_view(self, w: QWidget) -> None:
        """The public interface a format view gets: the window's ViewState (followed on
        every ``viewStateChanged``), the status icons, and the details pane for its rows."""
        if hasattr(w, "follow"):
            w.follow(self.view_state)
            self.viewStateChanged.connect(w.follow)
        if hasattr(w, "detailsRequested"):
            w.detailsRequested.connect(self.details.show_row)
        if hasattr(w, "icons"):
            w.icons = self.diff.icons
        bind_format_view(self, w)

    def _push_comparison(self) -> None:
        cmp = self.comparison
        sig = self.sig_metric() if self.show_sig else None
        self.diff.sig_metric = sig
        self.summary.set_comparison(cmp)
        self.side.set_comparison(cmp, self._pane_metrics(), self.scale)
        self.diff.set_comparison(cmp, self.metrics, self.scale)
        self.diff.legend.set_colour_basis(self.view_state.colour_by_share)
        key = self.hot_key("value")
        if key is not None:
            self.side.sort_by_key(key)
            self.diff.sort_by_key(key)
        self._pending.clear()
        if self.tabs.currentWidget() is not self.flat:
            self.flat.clear()
        self._defer(self.flat, self._push_flat)
        if self.flame is not None:
            metric = self._main_self_metric() or ""

            def flame_set(cmp=cmp, metric=metric) -> None:
                try:
                    self.flame.set_comparison(cmp, metric)
                except Exception as e:  # noqa: BLE001 - a broken optional view must not stop us
                    self.message_bar.show_message(f"Flame view: {type(e).__name__}: {e}",
                                                  "warning")

            if self.tabs.currentWidget() is not self.flame:
                # a hidden flame graph gets these runs when shown; meanwhile it must not
                # keep the runs replaced alive (a reload of a 10^6-row pair: every array)
                self.flame.set_comparison(None)
            self._defer(self.flame, flame_set)
        for w in self._extra_tabs:
            if hasattr(w, "set_comparison"):
                try:
                    w.set_comparison(cmp)
                except Exception as e:  # noqa: BLE001
                    self.message_bar.show_message(f"{type(w).__name__}: {e}", "warning")
        self.details.clear()

    def flat_shown(self) -> bool:
        """The By cost centre table shows the current runs (it gets them when first shown)."""
        return self.flat.cmp is not None and self.flat.cmp is self.flat_if_aligned()

    def _push_flat(self) -> None:
        """Give the By cost centre table the flat comparison, aligned now if not yet."""
        try:
            flat = self.flat_comparison
        except Exception as e:  # noqa: BLE001 - the other views stay usable
            self.message_bar.show_message(f"{self.flat_tab_title()}: {type(e).__name__}: {e}",
                                          "warning")
            return
        if flat is None:
            return
        sig = self.sig_metric() if self.show_sig else None
        self.flat.sig_metric = sig if sig in flat.values else None
        self.flat.set_comparison(flat, self.comparison, self.metrics, self._main_self_metric(),
                                 self.scale)
        self._restore_columns(getattr(self, "_flat_widths", {}), only="flat")
        self._update_sig_columns()
        self._filter_flat()
        self._schedule_noise()

    def _filter_flat(self) -> None:
        """The window's filter on the flat table (when it shows the current runs)."""
        if self.flat_shown() and self.view_state.filter_error() is None:
            self.flat.apply_filter(self.view_state.filter_text, self.view_state.regex,
                                   self.keep_mask(self.flat.cmp))

    # ----------------------------------------------------------------------------------
    # metrics
    # ----------------------------------------------------------------------------------
    def _available_metrics(self) -> list[str]:
        return available_metrics(self.comparison) if self.comparison is not None else []

    def _choose_metrics(self) -> None:
        self.view_state.choose_metrics(self.comparison, self.saved_metrics(self._format_key()))

    def _convert_units(self, metrics: list[str]) -> list[str]:
        """Swap each metric for its percent/absolute partner according to the toggle."""
        return self.view_state.convert_units(self.comparison, metrics)

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
        return self.view_state.main_self_metric(self.comparison)

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
        self.side.forget_pane_choice(new_base)
        self._set_runs(list(self.runs), True, list(self.paths))

    def set_run_label(self, run: int, label: str) -> None:
        """Name run ``run`` ``label`` in every view, table and export ("" : back to its
        path suffix).  The label belongs to the file, so it stays when the baseline
        changes or runs are added; it changes no number, so nothing is aligned again."""
        if self.session is None or not 0 <= run < len(self.runs):
            return
        from profdiff.viewer.run_labels import path_key

        path = str(self.runs[run].path)
        labels = {path_key(p): (p, t) for p, t in self.spec.labels}
        labels.pop(path_key(path), None)
        if label.strip():
            labels[path_key(path)] = (path, label.strip())
        self.spec = self.spec.replace(labels=tuple(labels.values()))
        self.session.relabel(self.spec.labels)
        self._apply(self.session, list(self.paths), keep_state=True)

    def rename_run_dialog(self, run: int) -> None:
        """Ask for run ``run``'s label (double-click on a pane title)."""
        if self.comparison is None or not 0 <= run < self.comparison.n_runs:
            return
        from PySide6.QtWidgets import QInputDialog

        p = self.comparison.runs[run]
        text, ok = QInputDialog.getText(
            self, "Name this run", f"Label for run [{run}] ({p.path}); empty: the path "
            "suffix", text=labels_of(self.comparison)[run])
        if ok:
            self.set_run_label(run, text)

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
        for i, label in enumerate(labels_of(cmp)):
            a = self.baseline_menu.addAction(f"[{i}] {label}")
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
        self._update_percent_toggle(cmp)
        for name in self._available_metrics():
            met = cmp.metric_by_name[name]
            a = self.metrics_menu.addAction(f"{met.title}  ({name})")
            a.setCheckable(True)
            a.setChecked(name in self.metrics)
            a.toggled.connect(lambda on, n=name: self.toggle_metric(n, on))

    def _update_percent_toggle(self, cmp) -> None:
        """"% of run" is offered only when some metric has a percent-of-run partner.

        Why: a callgrind, pprof, speedscope, ticky, heap or ``.mem`` comparison has none,
        and the toggle, checked by default, changed nothing there: a switch that does
        nothing reads as "these are percentages"."""
        from profdiff.viewer.view_state import metric_pairs

        pairs = metric_pairs(cmp.metrics)
        has = any(m in cmp.values and pairs[m] in cmp.values for m in pairs)
        fmt = cmp.runs[cmp.baseline].format if cmp.runs else ""
        tip = ("Percent of own run vs absolute units (seconds, bytes…)" if has else
               f"These runs ({fmt}) have no percent-of-run form of their metrics: every "
               "column is in its own unit (the Summary's 'of run' column gives each "
               "change as a share of the baseline's total)")
        for w in (self.percent_box, self.act_percent):
            w.setEnabled(has)
            w.setToolTip(tip)

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
        if self.flat_shown():
            self.flat.main_metric = self._main_self_metric()
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

    def set_colour_by_share(self, on: bool) -> None:
        """View ▸ Colour by share of run: one switch for every view, flame and bottom-up
        included.  Off (the default), a Δ is coloured by the change against the baseline's
        total, so rows whose own cost did not change stay neutral."""
        from .models import set_colour_by_share
        from .views import DiffTreeView

        self.view_state.colour_by_share = bool(on)
        set_colour_by_share(on)
        self.diff.legend.set_colour_basis(on)
        views = {id(v): v for v in (self.side, self.diff, self.flat)}
        for v in self.findChildren(DiffTreeView):
            views.setdefault(id(v), v)
        for v in views.values():
            v.set_scale(self.scale)
        if self.flame is not None and hasattr(self.flame, "recolor"):
            self.flame.recolor()

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
    # ----------------------------------------------------------------------------------
    # filter
    # ----------------------------------------------------------------------------------
    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def set_changed_only(self, on: bool) -> None:
        self.changed_only = on
        self.apply_filter()

    def set_threshold(self, v: float) -> None:
        self.threshold = float(v)
        self.apply_filter()

    def set_significant_only(self, on: bool) -> None:
        self.significant_only = on
        self.apply_filter()

    def keep_mask(self, cmp: Comparison, metrics: Sequence[str] | None = None,
                  sig_metric: str | None = None,
                  factor: Callable[[Comparison, str], float] = change_scale_factor,
                  ) -> np.ndarray | None:
        """Rows kept by "changed only", "significant only" and the |Δ| threshold (None:
        all): :meth:`viewer.view_state.ViewState.keep_mask`, with noise estimated (and
        shown) by the window."""
        return self.view_state.keep_mask(cmp, metrics, sig_metric, factor,
                                         noise=self._ensure_noise)

    def apply_filter(self) -> None:
        if self.comparison is None:
            return
        text = self.filter_edit.text().strip()
        regex = self.regex_box.isChecked()
        self.view_state.filter_text, self.view_state.regex = text, regex
        err = self.view_state.filter_error()
        if err is not None:
            self.filter_edit.setStyleSheet("QLineEdit { background: #fde0dc; }")
            self.filter_edit.setToolTip(err)
            return
        self.filter_edit.setStyleSheet("")
        self.filter_edit.setToolTip("")
        keep_tree = self.keep_mask(self.comparison)
        self.diff.apply_filter(text, regex, keep_tree)  # its rows count in the status line
        # the side-by-side panes filter when shown (the last filter only)
        self._defer_latest(self.side, "filter",
                           lambda: self.side.apply_filter(text, regex, keep_tree))
        self._filter_flat()
        if self.flame is not None and hasattr(self.flame, "set_filter"):
            try:
                self.flame.set_filter(text)
            except Exception:  # noqa: BLE001
                pass
        self._update_status()
        self.viewStateChanged.emit(self.view_state)

    # ----------------------------------------------------------------------------------
    # navigation
    # ----------------------------------------------------------------------------------
    # ----------------------------------------------------------------------------------
    # status and exports
    # ----------------------------------------------------------------------------------
    def _status_counts_text(self, cmp: Comparison) -> str:
        """``N matched (M changed), A added, R removed``; while the noise estimate the
        statuses are judged by is still being computed, the matched rows without a
        count of changes (the count by precision alone would say ~6x too many rows of a
        big tree changed, for the half second until the estimate lands)."""
        final = cmp.statuses_final()
        if not final and self.noise_pending(cmp):
            p = cmp.presence_counts()
            return (f"{p['matched']:,} matched (changes: judging against sampling "
                    f"error…), {p['added']:,} added, {p['removed']:,} removed")
        c = cmp.status_counts()  # the current run's (3+ runs: judged by its pair's estimate)
        how = "" if final else "; by precision alone: no noise estimate"
        moved = f", {c['moved']:,} moved, not judged" if c["moved"] else ""
        return (f"{c['same'] + c['changed'] + c['moved']:,} matched ({c['changed']:,} "
                f"changed{moved}{how}), {c['added']:,} added, {c['removed']:,} removed")

    def _update_status(self) -> None:
        cmp = self.comparison
        if cmp is None:
            self.status_label.setText("No profile loaded")
            self.incomplete_label.hide()
            return
        fmts = sorted({p.format for p in cmp.runs})
        nodes = " / ".join(f"{p.n_nodes:,}" for p in cmp.runs)
        # the call tree's rows (call paths): the By cost centre table and the Summary
        # count cost centres, which are fewer, so the tree is named
        rows = "call-tree rows" if cmp.mode == "tree" and cmp.n_runs > 1 else "aligned rows"
        txt = f"{', '.join(fmts)} · nodes {nodes} · {cmp.n_rows:,} {rows}"
        if not cmp.n_rows:  # run statistics: no tree to count
            txt = f"{', '.join(fmts)} · run totals only (no call tree)"
        elif cmp.n_runs > 1:
            txt += " · " + self._status_counts_text(cmp)
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
            txt += f" · filter: {int(lay.visible.sum()):,} tree rows shown"
            if lay.matched is not None:
                txt += f", {int(lay.matched.sum()):,} match"
        self.status_label.setText(txt)
        inc = [i for i, p in enumerate(cmp.runs) if p.incomplete]
        if inc:
            labels = labels_of(cmp)
            reasons = "; ".join(f"{labels[i]}: {cmp.runs[i].incomplete_reason}" for i in inc)
            self.incomplete_label.setToolTip(reasons)
            self.incomplete_label.show()
        else:
            self.incomplete_label.hide()
        names = " vs ".join(labels_of(cmp))
        if cmp.groups is not None:
            names = f"{len(cmp.groups[0])} runs vs {len(cmp.groups[1])} runs"
        self.setWindowTitle(f"{names} — profdiff")

    # ----------------------------------------------------------------------------------
    # drag and drop onto the window
    # ----------------------------------------------------------------------------------




def st_title(state: dict) -> str:
    """The tab title a captured state was on."""
    return str(state.get("tab_title", ""))


def _settle_gc() -> None:
    """Collect the previous comparison's garbage, then freeze what is alive.

    The app holds ~10^5 GC-tracked objects (Qt bindings, numpy, pandas); a full cyclic
    collection over them costs ~50 ms and is triggered by allocation counts, i.e. at a
    random click (a first expand or sort measured 200+ ms instead of ~80).  Frozen objects
    are skipped by collections; unfreezing first lets this call collect the cycles of the
    comparison just replaced, so nothing leaks across loads.  The first load has no
    comparison to collect: it only freezes (what garbage start-up left is collected
    with the next load's), which spares the first paint that 50 ms; start-up itself may
    have frozen already (:func:`viewer.qt.app.start_up`), so "first" is kept here.
    """
    import gc

    global _settled
    if _settled:
        gc.unfreeze()
        gc.collect()
    _settled = True
    gc.freeze()


_settled = False
"""Whether a comparison's objects were frozen yet in this process (:func:`_settle_gc`)."""

GIVE_BACK_AFTER_MS = 3000
"""How long after a comparison is shown the window hands the heap's free memory back to
the kernel: after its first paint and the work the event loop does next (column widths,
the noise estimate landing), so that the first paint does not pay for it and its arrays
are not faulted in again at once."""

