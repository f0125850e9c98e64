"""The main window's menus, toolbar and their actions.

Built by functions over the window's public interface: each action calls a public
method of :class:`~viewer.qt.main_window.MainWindow` (``open_files_dialog``,
``expand_hottest``, ``set_percent_mode``, ``set_threshold``, ...) and is kept as a public
``act_*`` attribute, the toolbar's controls as ``filter_edit``, ``regex_box``,
``changed_box``, ``significant_box``, ``threshold_spin``, ``percent_box``, ``palette_box``.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QLabel, QLineEdit, QToolBar

from .icons import icon


def build_actions(win) -> None:
    """Menus File, View, Tools and the main toolbar of ``win``."""
    mb = win.menuBar()
    build_file_menu(win, mb.addMenu("&File"))
    build_view_menu(win, mb.addMenu("&View"))
    build_tools_menu(win, mb.addMenu("&Tools"))
    from .help_menu import build_help_menu

    build_help_menu(win, mb.addMenu("&Help"))
    build_toolbar(win)
    win.refresh_recent_menu()
    from .runs_panel import install_watch_action

    install_watch_action(win)  # File ▸ Watch folder…


def act(win, menu, text, slot, shortcut=None, tip="", name=None) -> QAction:
    """A menu action of ``win`` calling ``slot``."""
    a = QAction(text, win)
    if shortcut:
        a.setShortcut(QKeySequence(shortcut))
    if tip:
        a.setStatusTip(tip)
    a.triggered.connect(slot)
    if name:
        a.setObjectName(name)
    menu.addAction(a)
    return a


def build_file_menu(win, fm) -> None:
    """Open, recent files, sample, swap, reload, exports, quit."""
    win.act_open = act(win, fm, "&Open…", win.open_files_dialog, QKeySequence.StandardKey.Open,
                        "Open one profile, or several to compare (first = baseline)")
    act(win, fm, "Open &baseline…", lambda: win.open_slot_dialog("baseline"))
    act(win, fm, "Open &current…", lambda: win.open_slot_dialog("current"))
    win.act_add = act(win, fm, "&Add run…", lambda: win.open_slot_dialog("add"))
    win.act_groups = act(win, fm, "Open re&peated runs…", win.open_groups_dialog,
                          tip="Pick several baseline runs, then several current runs: "
                          "compare their means and tell real changes from noise",
                          name="openGroups")
    win.recent_menu = fm.addMenu("&Recent files")
    fm.addSeparator()
    win.act_sample = act(win, fm, "Open &sample comparison", win.open_sample,
                          name="openSample")
    fm.addSeparator()
    win.act_swap = act(win, fm, "S&wap baseline/current", win.swap_runs)
    win.act_reload = act(win, fm, "&Reload", win.reload, "F5")
    win.act_reading = act(win, fm, "Reading &options…", win.open_reading_options,
                          tip="perf event, pprof sample type, Julia allocation sample rate, "
                          "frame identity, corrupt lines: read the runs again with them",
                          name="readingOptions")
    fm.addSeparator()
    win.act_speedscope = act(win, fm, "Export to &speedscope…", win.export_speedscope, "Ctrl+E")
    win.act_csv = act(win, fm, "Export table to CS&V…", win.export_csv)
    fm.addSeparator()
    act(win, fm, "&Quit", win.close, QKeySequence.StandardKey.Quit)


def build_view_menu(win, vm) -> None:
    """Expansion, metrics, baseline, unit and palette toggles, noise, tabs, filter."""
    for d in (1, 2, 3, 5):
        act(win, vm, f"Expand to depth {d}", lambda _=False, d=d: win.expand_to_depth(d))
    win.act_hot = act(win, vm, "Expand &hottest path", lambda: win.expand_hottest("value"), "Ctrl+H")
    act(win, vm, "Expand path of largest &Δ", lambda: win.expand_hottest("delta"),
        "Ctrl+Shift+H")
    act(win, vm, "Co&llapse all", win.collapse_all)
    vm.addSeparator()
    win.metrics_menu = vm.addMenu("&Metrics")
    win.baseline_menu = vm.addMenu("&Baseline")
    win.baseline_menu.setObjectName("baselineMenu")
    win.baseline_menu.setToolTip("The run every other run is compared with")
    win.baseline_menu.setEnabled(False)
    win.act_percent = QAction("Show percent of own run (else absolute units)", win,
                               checkable=True)
    win.act_percent.setChecked(True)
    win.act_percent.toggled.connect(win.set_percent_mode)
    vm.addAction(win.act_percent)
    win.act_palette = QAction("Colour-blind safe palette", win, checkable=True)
    win.act_palette.setChecked(win.scale.palette == "colorblind")
    win.act_palette.toggled.connect(win.set_colorblind)
    vm.addAction(win.act_palette)
    win.act_changed = QAction("Changed rows only", win, checkable=True)
    win.act_changed.setObjectName("changedOnly")
    vm.addAction(win.act_changed)
    win.act_significant = QAction("Significant changes only", win, checkable=True)
    win.act_significant.setObjectName("significantOnly")
    vm.addAction(win.act_significant)
    vm.addSeparator()
    win.act_sig = QAction("Significance column (real / noise)", win, checkable=True)
    win.act_sig.setToolTip("A 'sig.' column after the main metric: p-value of its change")
    win.act_sig.toggled.connect(win.set_show_sig)
    vm.addAction(win.act_sig)
    win.act_fade = QAction("Fade changes within noise", win, checkable=True)
    win.act_fade.setChecked(True)
    win.act_fade.toggled.connect(win.set_fade_noise)
    vm.addAction(win.act_fade)
    win.act_share = QAction("Colour by share of run", win, checkable=True)
    win.act_share.setToolTip("Colour a Δ by each run's share of its own total (another "
                             "function's growth then makes unchanged code look better). "
                             "Off: by the change against the baseline's total")
    win.act_share.toggled.connect(win.set_colour_by_share)
    vm.addAction(win.act_share)
    vm.addSeparator()
    act(win, vm, "Next view", win.next_tab, "Ctrl+Tab")
    act(win, vm, "Previous view", lambda: win.next_tab(-1), "Ctrl+Shift+Tab")
    win.act_filter = act(win, vm, "&Filter…", win.focus_filter, QKeySequence.StandardKey.Find)


def build_tools_menu(win, tm) -> None:
    """Rename rules and the suggested matches panel."""
    win.act_rules = act(win, tm, "&Rename rules…", win.open_rules_editor,
                         tip="Rules that match renamed functions and moved modules",
                         name="renameRules")
    sug = win.suggestions_dock.toggleViewAction()
    sug.setText("&Unmatched rows: suggested matches")
    sug.setObjectName("showSuggestions")
    tm.addAction(sug)
    win.act_suggestions = sug


def build_toolbar(win) -> None:
    """Open, reload, swap, hottest path; filter; row rules; unit and palette."""
    tb = QToolBar("Main")
    tb.setObjectName("mainToolbar")
    tb.setMovable(False)
    tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    win.addToolBar(tb)
    win.act_open.setIcon(icon("open"))
    tb.addAction(win.act_open)
    win.act_reload.setIcon(icon("reload"))
    tb.addAction(win.act_reload)
    win.act_swap.setIcon(icon("swap"))
    tb.addAction(win.act_swap)
    win.act_hot.setIcon(icon("hot"))
    tb.addAction(win.act_hot)
    for a in (win.act_open, win.act_reload, win.act_swap, win.act_hot):
        a.setToolTip(_tip(a))
    tb.addSeparator()
    filter_controls(win, tb)
    row_controls(win, tb)
    win.toolbar_fitter = ToolbarFitter(tb)


def _tip(a: QAction) -> str:
    """``Reload (F5)``: the tooltip of an icon-only toolbar button."""
    text = a.text().replace("&", "")
    keys = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    return f"{text} ({keys})" if keys else text


class ToolbarFitter(QObject):
    """Keeps every control of the toolbar on screen: when the buttons' texts would push
    the switches into the ``»`` overflow menu (about 1000 px wide), the buttons show
    icons only (their tooltips name them); wide windows get the texts back."""

    def __init__(self, tb: QToolBar) -> None:
        super().__init__(tb)
        self.tb = tb
        self.text_width = 0  # width the toolbar needs with button texts
        tb.installEventFilter(self)

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt API
        if obj is self.tb and ev.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def fit(self) -> None:
        tb = self.tb
        with_text = Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        if tb.toolButtonStyle() == with_text:
            self.text_width = tb.sizeHint().width()
            if self.text_width > tb.width():
                tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        elif self.text_width and tb.width() >= self.text_width:
            tb.setToolButtonStyle(with_text)


def filter_controls(win, tb) -> None:
    """The filter line edit (applied 200 ms after the last key) and its regex box."""
    win.filter_edit = QLineEdit()
    win.filter_edit.setObjectName("filterEdit")
    win.filter_edit.setPlaceholderText("Filter by name or module (Ctrl+F)")
    win.filter_edit.setClearButtonEnabled(True)
    win.filter_edit.setMinimumWidth(190)
    win.filter_edit.setMaximumWidth(360)
    win.filter_timer = QTimer(win)
    win.filter_timer.setSingleShot(True)
    win.filter_timer.setInterval(200)
    win.filter_timer.timeout.connect(win.apply_filter)
    win.filter_edit.textChanged.connect(lambda _t: win.filter_timer.start())
    win.filter_edit.returnPressed.connect(win.apply_filter)
    tb.addWidget(win.filter_edit)
    win.regex_box = QCheckBox("regex")
    win.regex_box.toggled.connect(lambda _b: win.apply_filter())
    tb.addWidget(win.regex_box)
    tb.addSeparator()


def threshold_units(spin, percent: bool) -> None:
    """The |Δ| threshold's suffix and tooltip follow the unit mode.  Its meaning is the
    same in both (one number for columns of different units: the change as a share of
    the baseline run's total); only the name changes: percentage points of the run when
    the columns are percents, "% of total" when they are seconds and bytes."""
    if percent:
        spin.setSuffix(" pp")
        spin.setToolTip("Hide rows whose change of every shown metric is below this many "
                        "percentage points of the run")
    else:
        spin.setSuffix(" % of total")
        spin.setToolTip("Hide rows whose change of every shown metric (seconds, bytes…) is "
                        "below this percentage of the baseline run's total")


def row_controls(win, tb) -> None:
    """"changed only", "significant only", the |Δ| threshold, "% of run", palette."""
    win.changed_box = QCheckBox("changed only")
    win.changed_box.setObjectName("changedBox")
    win.changed_box.setToolTip("Only rows whose shown metrics changed")
    win.changed_box.toggled.connect(win.set_changed_only)
    tb.addWidget(win.changed_box)
    win.significant_box = QCheckBox("significant only")
    win.significant_box.setObjectName("significantBox")
    win.significant_box.setToolTip(
        "Only rows whose change of the main metric is real, not run-to-run or sampling "
        "noise (Benjamini–Hochberg, false discovery rate 5%)")
    win.significant_box.toggled.connect(win.set_significant_only)
    tb.addWidget(win.significant_box)
    for box, a in ((win.changed_box, win.act_changed), (win.significant_box,
                                                          win.act_significant)):
        box.toggled.connect(a.setChecked)  # the View menu entry mirrors the switch
        a.toggled.connect(box.setChecked)
        a.setToolTip(box.toolTip())
    tb.addWidget(QLabel(" hide |Δ| <"))
    win.threshold_spin = QDoubleSpinBox()
    win.threshold_spin.setRange(0, 100)
    win.threshold_spin.setDecimals(2)
    win.threshold_spin.setSingleStep(0.1)
    threshold_units(win.threshold_spin, True)
    win.threshold_spin.valueChanged.connect(win.set_threshold)
    tb.addWidget(win.threshold_spin)
    tb.addSeparator()
    win.percent_box = QCheckBox("% of run")
    win.percent_box.setObjectName("percentBox")
    win.percent_box.setChecked(True)
    win.percent_box.setToolTip("Percent of own run vs absolute units (seconds, bytes…)")
    win.percent_box.toggled.connect(win.act_percent.setChecked)
    win.act_percent.toggled.connect(win.percent_box.setChecked)
    tb.addWidget(win.percent_box)
    win.act_percent.toggled.connect(lambda on: threshold_units(win.threshold_spin, on))
    threshold_units(win.threshold_spin, win.act_percent.isChecked())
    win.palette_box = QCheckBox("colour-blind")
    win.palette_box.setObjectName("paletteBox")
    win.palette_box.setToolTip("Colour-blind safe palette (blue-orange instead of "
                               "green-red); also View ▸ Colour-blind safe palette")
    win.palette_box.setChecked(win.scale.palette == "colorblind")
    win.palette_box.toggled.connect(win.act_palette.setChecked)
    win.act_palette.toggled.connect(win.palette_box.setChecked)
    tb.addWidget(win.palette_box)
