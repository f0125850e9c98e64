"""Opening files and groups, loading in the thread pool, replacing runs (watch).

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import (
    QFileDialog,
)

from profdiff.parsers.model import Profile
from profdiff.viewer.compare import Comparison
from profdiff.viewer.run_labels import distinct_labels
from profdiff.viewer.session import Session

from .format_views import opening_view_of
from .icons import sample_pair
from .layout import precompute
from .loader import LoadResult, LoadTask, Slot, load_and_align


class LoadingMixin:
    """Opening files and groups, loading in the thread pool, replacing runs (watch)."""

    def open_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open profiles (first = baseline)",
                                                self._last_folder())
        if files:
            self.load_paths(files)

    def open_slot_dialog(self, which: str) -> None:
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

    def open_reading_options(self) -> None:
        """File ▸ Reading options…: the dialog, offering what the open runs have."""
        from profdiff.viewer.reading_choices import reading_choices

        from .reading_dialog import ReadingOptionsDialog

        dlg = ReadingOptionsDialog(self, reading_choices(self.runs),
                                   dict(self.spec.reader_options), self.spec.lenient,
                                   self.set_reading_options)
        self.reading_dialog = dlg
        dlg.open()

    def set_reading_options(self, options: dict, lenient: bool) -> None:
        """Read files with ``options`` (reader keywords, None = unset) and ``lenient``
        from now on, and read the open runs (and a watched folder) again with them; the
        runs shown stay if a file cannot be read so."""
        from profdiff.viewer.reading_choices import clean_reader_options

        spec = self.spec.replace(reader_options=clean_reader_options(options),
                                 lenient=lenient)
        if spec == self.spec:
            return
        self.spec = spec
        paths, n_base = self.last_opening
        if self.load_errors and paths and all(paths):  # try again what failed to read
            if n_base is not None:
                self.open_groups(paths[:n_base], paths[n_base:])
            else:
                self._start([Slot(p) for p in paths], list(paths))
        elif self.watch_panel is not None:
            from .runs_panel import open_watch

            panel = self.watch_panel
            open_watch(self, panel.folder, glob=panel.glob, recursive=panel.recursive,
                       settle=panel.settle)
        elif self.runs:
            self.reload()

    def open_sample(self) -> None:
        files, missing = sample_pair()
        if missing:
            self.message_bar.show_message(
                "Sample comparison not found: " + ", ".join(missing)
                + " (it ships as package data of profdiff.samples; reinstall profdiff).",
                "warning")
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
        self.last_opening = (tuple(s.path for s in slots), n_base)
        self.load_errors = []
        self._pick_up_rules([*new_paths, *[p for p in paths if p]])
        spec = self.load_spec()
        judge = self.noise_wanted()
        head, self.head_start = self.head_start, None  # serves the first load only
        if self.synchronous:
            try:
                res = load_and_align(slots, spec, n_base=n_base, judge=judge,
                                     ahead=self._aligned_ahead(), head=head)
            except Exception as e:  # noqa: BLE001
                self.load_errors = [f"Loading failed: {e}"]
                self.message_bar.show_message(self.load_errors[0])
                return
            self._loaded(res, paths, slots)
            return
        task = LoadTask(slots, spec, n_base=n_base, flat=self._flat_shown_next(), judge=judge,
                        ahead=self._aligned_ahead(), head=head)
        self._task = task
        self.progress_pacer.restart()
        self._show_loading("Loading " + ", ".join(
            self._labels_for(new_paths, [p for p in paths if p])))
        task.signals.progress.connect(lambda f, t=task: self._progress(t, f))
        task.signals.finished.connect(lambda res, t=task: self._task_done(t, res, paths, slots))
        task.signals.cancelled.connect(lambda t=task: self._task_cancelled(t))
        task.signals.failed.connect(lambda msg, t=task: self._task_failed(t, msg))
        QThreadPool.globalInstance().start(task)

    def _progress(self, task: LoadTask, fraction: float) -> None:
        """The loading bar, paced (:mod:`.progress_pacer`); a replaced load's last
        signals, still queued, move it no more."""
        if task is self._task:
            self.progress_pacer.feed(fraction)

    def _flat_shown_next(self) -> bool:
        """The runs being opened replace ones shown on a tab that reads the flat comparison
        (By cost centre, the Summary): align it in the worker too, not on the GUI thread.
        A first opening leaves it to the tab shown first (``--view diff`` never needs it)."""
        return self.comparison is not None and \
            self.tabs.currentWidget() in (self.flat, self.summary_view)

    def _aligned_ahead(self) -> Callable[[list[Profile]], list[str]] | None:
        """For a first opening, what the loader aligns beside the tree: the flat
        comparison when the tab shown first reads it (the Summary, where a pair opens
        unless its format has a view of its own or ``--view`` names another tab; By cost
        centre).  Decided from the runs' formats, in the loader's thread: no widget is
        read there."""
        if self.comparison is not None:
            return None  # replacing runs: _flat_shown_next aligns it after the tree
        first = self.first_view

        def modes(runs: list[Profile]) -> list[str]:
            if len(runs) < 2 or first not in (None, "summary", "flat"):
                return []
            if first is None and opening_view_of({p.format for p in runs}) is not None:
                return []
            return ["flat"]

        return modes

    def _labels_for(self, some: Sequence[str], among: Sequence[str]) -> list[str]:
        """The labels of files ``some`` as they will read among all files ``among``
        (``v2/x.prof``, not ``x.prof``: the loading bar names runs as the views do)."""
        every = list(dict.fromkeys([*among, *some]))
        labels = dict(zip(every, distinct_labels(every, dict(self.spec.labels)), strict=True))
        return [labels[p] for p in some]

    def _show_loading(self, label: str | None) -> None:
        """The loading bar saying ``label`` (None: hidden), and the empty page in step:
        an empty window reading its first files says what it reads (:meth:`EmptyState.
        set_loading`), not "drop a profile here"."""
        if label is None:
            self.progress_row.hide()
        else:
            self.progress_label.setText(label)
            self.progress_row.show()
        self.empty.set_loading(label)

    def cancel_loading(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
            self._show_loading(None)

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
            if res.noise_job is not None:  # a newer load replaced these runs
                res.noise_job.cancel()
            return
        self._task = None
        self._show_loading(None)
        self._loaded(res, paths, slots)

    def _task_cancelled(self, task: LoadTask) -> None:
        if task is self._task:
            self._task = None
        self._show_loading(None)
        self.statusBar().showMessage("Loading cancelled", 4000)

    def _task_failed(self, task: LoadTask, msg: str) -> None:
        if task is self._task:
            self._task = None
        self._show_loading(None)
        self.load_errors = [f"Loading failed: {msg}"]
        self.message_bar.show_message(self.load_errors[0])

    def _loaded(self, res: LoadResult, paths: list[str | None], slots: list[Slot]) -> None:
        self.load_errors = [msg for _path, msg in res.errors]
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
            self._apply(res.session, rep, keep_state=False, noise_job=res.noise_job)
            return
        self.groups = None
        self.group_paths = None
        self._apply(res.session, shown, keep_state=True, noise_job=res.noise_job)

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
        task = LoadTask([Slot(None, p) for p in profiles], self.load_spec().replace(baseline=0),
                        flat=True)  # on_done gets the flat comparison: aligned here too
        self._align_task = task
        task.signals.finished.connect(
            lambda res, t=task: self._align_done(t, res, paths, keep_state, on_done))
        task.signals.failed.connect(lambda msg, t=task: self._align_failed(t, msg))
        shown = [p for p in paths if p]
        self.statusBar().showMessage("Comparing " + ", ".join(
            self._labels_for(shown, shown)) + "…", 10000)
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
        if list(task.spec.rules) != self.rules:  # rules changed while aligning: again
            self.set_runs_async(res.runs, keep_state, paths, on_done)
            return
        self.groups = None
        self.group_paths = None
        self.baseline_index = 0
        self._apply(res.session, paths, keep_state)
        if on_done is not None:
            on_done(res.tree, res.flat)

    def _align_failed(self, task: LoadTask, msg: str) -> None:
        if task is self._align_task:
            self._align_task = None
            self.message_bar.show_message(f"Comparing the runs failed: {msg}")

    def _set_runs(self, profiles: list[Profile], keep_state: bool,
                  paths: list[str | None]) -> None:
        b = min(self.baseline_index, len(profiles) - 1)
        session = Session(self.load_spec().replace(baseline=b), profiles)
        precompute(session.tree)
        self._apply(session, paths, keep_state)
