"""Noise estimates of the shown comparison: computed at once or in a worker, shown as fading and the 'sig.' column.

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from profdiff.viewer.compare import Comparison
from profdiff.viewer.defaults import DEFAULT_ALPHA
from profdiff.viewer.noise import ensure_noise, ensure_run_noise, single_run_noise
from profdiff.viewer.noise_job import NoiseJob
from profdiff.viewer.ranking import Ranking, main_metrics, noise_read_by_ranking, rank_changes

from .layout import path_key_max

NOISE_SYNC_ROWS = 200_000
"""Comparisons up to this many rows get their noise estimate at once; bigger ones in a
worker thread, so opening a 10^6-node pair is not slowed by it."""


JOB_WAIT_S = 120.0
"""How long the GUI thread waits for the loader's estimate of the metrics it needs before
estimating them itself (a job that hangs must not freeze the window)."""


class NoiseMixin:
    """Noise estimates of the shown comparison: computed at once or in a worker, shown as fading and the 'sig.' column."""

    def sig_metric(self) -> str | None:
        """The metric whose significance the 'sig.' column and 'significant only' use: the
        format's main metric (e.g. inherited %time) in the current unit mode."""
        return self.view_state.sig_metric(self.comparison)

    def _noise_todo(self, cmp: Comparison, metrics: Sequence[str] | None = None) -> list[str]:
        if metrics is None:  # fading needs the sampled metrics; deterministic ones are
            # exact; the statuses (icons, counts) are judged by theirs, as in the CLI
            metrics = self.view_state.noise_metrics(cmp)
        want = list(metrics)
        have = cmp.noise.metrics if cmp.noise is not None else {}
        return [m for m in dict.fromkeys(want) if m and m in cmp.values and m not in have]

    def _schedule_noise(self) -> None:
        """Estimate the noise of the shown metrics of two-run comparisons: at once for
        small ones, in a worker thread for big ones (groups already carry theirs); then
        rank the culprits of a big one off the GUI thread (:meth:`_schedule_ranking`)."""
        for cmp in (self.comparison, self.flat_if_aligned()):
            if cmp is None or cmp.n_runs < 2 or cmp.groups is not None:
                continue
            if cmp.n_runs > 2 and cmp.n_rows * (cmp.n_runs - 2) <= NOISE_SYNC_ROWS:
                self._estimate_other_runs(cmp)
            todo = self._noise_todo(cmp)
            if not todo:
                continue
            if cmp.n_rows <= NOISE_SYNC_ROWS:
                self._ensure_noise(cmp, todo)
                continue
            self._start_noise_task(cmp, todo)
        self._update_legend()
        self._schedule_ranking(self.comparison)

    def start_noise_early(self) -> None:
        """Start the worker estimates of big comparisons as soon as the shown metrics are
        chosen, before the views are built: they then run beside the building and the
        first layout (the first paint waited ~0.1 s for them after that).
        :meth:`_schedule_noise` later finds them in flight and does the rest."""
        for cmp in (self.comparison, self.flat_if_aligned()):
            if cmp is None or cmp.n_runs < 2 or cmp.groups is not None \
                    or cmp.n_rows <= NOISE_SYNC_ROWS:
                continue
            todo = self._noise_todo(cmp)
            if todo:
                self._start_noise_task(cmp, todo)

    def noise_wanted(self) -> Callable[[Comparison], list[str]]:
        """What the loader starts estimating the moment it has aligned a tree
        (:class:`viewer.noise_job.NoiseJob`): the main metrics the culprit ranking
        judges by, first (:meth:`ranking_from_job` waits for them alone), then the
        metrics this window's views will want of it (:meth:`_noise_todo`), chosen in the
        loading thread from a copy of the view state and of the saved column choices.
        None of a comparison the window estimates at once or that carries its own (small
        ones, groups).

        Why: on the 100 MB hs-ad pair the first paint waited ~0.1 s for this estimate
        when it started with the views' building instead of before the layout caches."""
        state = copy.copy(self.view_state)
        saved = self.saved_metrics_by_format()

        def wanted(cmp: Comparison) -> list[str]:
            if cmp.n_runs < 2 or cmp.groups is not None or cmp.n_rows <= NOISE_SYNC_ROWS:
                return []
            view = copy.copy(state)  # choose_metrics sets the columns it picks
            view.choose_metrics(cmp, saved.get(cmp.runs[0].format) if cmp.runs else None)
            # the culprit ranking's first (ranking_from_job), then what the views read
            return list(dict.fromkeys([*noise_read_by_ranking(cmp), *main_metrics(cmp),
                                       *view.noise_metrics(cmp)]))

        return wanted

    def ranking_from_job(self, cmp: Comparison) -> Ranking | None:
        """The culprit ranking of ``cmp`` judged by the loader's estimate of its main
        metrics (:meth:`viewer.noise_job.NoiseJob.noise_of`), waited for instead of
        estimated a second time on this thread beside that job; None when no such
        estimate is in flight or it failed (:meth:`Session.culprits` then estimates).
        Only the estimates the ranking reads are waited for
        (:func:`~viewer.ranking.noise_read_by_ranking`): with none of them missing, it
        ranks at once."""
        have = cmp.noise_of_run(cmp.current)
        missing = [m for m in main_metrics(cmp) if have is None or m not in have.metrics]
        if not missing:
            return None
        read = set(noise_read_by_ranking(cmp))
        need = [m for m in missing if m in read]
        for task in self._noise_tasks:
            if task.cmp is cmp and task.job is not None:
                if not need:
                    return rank_changes(cmp)  # no missing estimate is read
                nz = task.job.noise_of(need, timeout=JOB_WAIT_S)
                if nz is not None:
                    return rank_changes(cmp, noise=cmp.noise_with(nz))
        return None

    def adopt_noise_job(self, job: NoiseJob) -> None:
        """Take over the estimate the loader started of the comparison just shown: a
        worker waits for it and attaches it as its own estimate would be
        (:meth:`_noise_done`), and :meth:`_noise_todo`'s other metrics, if any, go to
        another (:meth:`_start_noise_task` leaves out those in flight)."""
        if job.cmp is self.comparison and job.metrics:
            self._start_task(_NoiseTask(job.cmp, job.metrics, alpha=job.alpha, job=job))
        else:
            job.cancel()

    def stop_stale_jobs(self) -> None:
        """The loader's estimates of runs no longer shown stop before their next metric
        (a reload, other files), so they do not slow the estimate of the runs shown."""
        for task in self._noise_tasks:
            if task.job is not None and task.cmp is not self.comparison:
                task.job.cancel()

    def noise_pending(self, cmp: Comparison) -> bool:
        """Whether a worker is estimating ``cmp``'s noise (or ranking it) right now."""
        return any(t.cmp is cmp for t in self._noise_tasks)

    def _start_noise_task(self, cmp: Comparison, todo: list[str]) -> None:
        """Estimate ``todo`` (less what is in flight) in one worker: one estimate tests
        the metrics that hold the same samples once (a ``-P`` report's %time, ticks and
        seconds; its inherited %time and seconds).  Two workers (shown and judged
        metrics, or self and inclusive ones) slowed the window's own building on two
        cores as much as they gained."""
        flying = {m for t in self._noise_tasks if t.cmp is cmp for m in t.metrics}
        todo = [m for m in todo if m not in flying]
        if todo:
            self._start_task(_NoiseTask(cmp, todo, alpha=self._alpha()))

    def _schedule_ranking(self, cmp: Comparison | None) -> None:
        """Rank the culprits a hidden tree view owes a big comparison in a worker, judged
        by the noise Session.culprits would estimate first (its main metrics; estimated in
        the same task when missing), once no noise estimate of it is in flight (the
        ranking reads it); the GUI then only opens the path (:meth:`rank_culprits_now`).
        Only with ``rank_ahead`` (the live window; not ``--screenshot``, where nobody
        clicks)."""
        if not self.rank_ahead or cmp is None or cmp.n_rows <= NOISE_SYNC_ROWS \
                or not self.culprits_owed(cmp):
            return
        if any(t.cmp is cmp and (t.rank or t.metrics) for t in self._noise_tasks):
            return  # ranked after that estimate is attached (_noise_done)
        single = cmp.n_runs >= 2 and cmp.groups is None
        todo = self._noise_todo(cmp, main_metrics(cmp)) if single else []
        self._start_task(_NoiseTask(cmp, todo, rank=True, alpha=self._alpha()))

    def _start_task(self, task: _NoiseTask) -> None:
        self._noise_tasks.append(task)
        task.signals.done.connect(lambda nz, t=task: self._noise_done(t, nz))
        task.signals.ranked.connect(lambda rk, t=task: self._ranked(t, rk))
        QThreadPool.globalInstance().start(task)

    def _alpha(self) -> float:
        session = getattr(self, "session", None)
        return session.spec.alpha if session is not None else DEFAULT_ALPHA

    def _noise_done(self, task: _NoiseTask, nz) -> None:
        if task in self._noise_tasks and not task.rank:
            self._noise_tasks.remove(task)
        if nz is not None and task.cmp in (self.comparison, self.flat_if_aligned()):
            self._attach_noise(task.cmp, nz)
        elif task.cmp is self.comparison:  # no estimate: the count by precision, said so
            self._update_status()
        if not task.rank:
            self._schedule_ranking(task.cmp)

    def _ranked(self, task: _NoiseTask, result) -> None:
        """A worker's culprit ranking: the opening path's key, unless a reload (or the
        user's first click) came first; with the rows' statuses under the same noise
        (what the tree paints first; kept only if that noise is still the comparison's)."""
        if task in self._noise_tasks:
            self._noise_tasks.remove(task)
        ranking, status, noise = result if result is not None else (None, None, None)
        applied = ranking is not None and self.rank_culprits_now(task.cmp, ranking)
        if applied and status is not None:
            task.cmp.keep_status(status, noise)
        self.culpritsRanked.emit(task.cmp, applied)

    def wait_for_noise(self, timeout_ms: int = 30000) -> None:
        """Block until background noise estimates, and the culprit ranking that starts
        when one is in, have arrived (tests, screenshots)."""
        from PySide6.QtCore import QCoreApplication

        self._go_on_with_jobs()  # all of them now, painted or not
        for _ in range(3):  # noise, then the ranking it starts
            QThreadPool.globalInstance().waitForDone(timeout_ms)
            QCoreApplication.processEvents()
            if not self._noise_tasks:
                break
        self.ensure_noise()

    def _go_on_with_jobs(self) -> None:
        """Let every loader's estimate in flight go on past its first metrics
        (:meth:`viewer.noise_job.NoiseJob.go_on`)."""
        for task in self._noise_tasks:
            if task.job is not None:
                task.job.go_on()

    def ensure_noise(self) -> None:
        """Compute every missing noise estimate now (of the comparisons aligned so far)."""
        for cmp in (self.comparison, self.flat_if_aligned()):
            if cmp is not None and cmp.n_runs >= 2:
                self._ensure_noise(cmp, self._noise_todo(cmp))

    def _ensure_noise(self, cmp: Comparison, metrics: Sequence[str]) -> None:
        todo = self._noise_todo(cmp, metrics)
        for task in list(self._noise_tasks):  # the loader's estimate: waited for, not redone
            if task.cmp is cmp and task.job is not None and set(todo) & set(task.metrics):
                task.job.go_on()  # waited for here: not held back for a paint
                nz = task.job.result()
                if nz is not None:
                    cmp.add_noise(nz)
                todo = self._noise_todo(cmp, metrics)
        if todo and cmp.n_runs >= 2:
            ensure_noise(cmp, todo)
            self._noise_shown(cmp)

    def _estimate_other_runs(self, cmp: Comparison) -> None:
        """3+ single runs (small enough to do at once: their rows times the other runs
        within :data:`NOISE_SYNC_ROWS`): each run other than the current one gets its own
        estimate against the baseline of the shown sampled metrics, which its Δ columns
        fade by (:meth:`Comparison.noise_of_run`); the current run's is
        :meth:`_noise_todo`'s.  Bigger ones' other runs stay unfaded."""
        metrics = self.view_state.noise_metrics(cmp)
        before = {r: set(nz.metrics) for r, nz in cmp.run_noise.items()}
        for run in range(cmp.n_runs):
            if run not in (cmp.baseline, cmp.current):
                ensure_run_noise(cmp, run, metrics, self._alpha())
        if {r: set(nz.metrics) for r, nz in cmp.run_noise.items()} != before:
            self._noise_shown(cmp)

    def _attach_noise(self, cmp: Comparison, nz) -> None:
        cmp.add_noise(nz)
        self._noise_shown(cmp)

    def _noise_shown(self, cmp: Comparison) -> None:
        """Views over ``cmp`` repaint with its (new) noise estimate, and the status bar
        counts the rows it now judges changed (a worker's estimate lands after it)."""
        if cmp is self.comparison:
            self._update_status()
            self.diff.noise_changed()
            cur = self.diff.current_row()
            if cur >= 0:
                self.details.show_row(cmp, cur)
        if cmp is self.flat_if_aligned():
            self.flat.noise_changed()
        if cmp is self.comparison and self.flame is not None and hasattr(self.flame, "recolor"):
            self.flame.recolor()  # frames within the noise fade, as table cells do
        self._update_legend()

    def _update_legend(self) -> None:
        cmp = self.comparison
        txt = ""
        if cmp is not None and cmp.noise is not None and self.fade_noise:
            sampled = [m for m in cmp.noise.metrics.values() if not m.exact and m.judged]
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
        sig = self.sig_metric() if self.show_sig and self.comparison.n_runs >= 2 else None
        self.diff.set_sig_metric(sig)
        fc = self.flat.cmp if self.flat_shown() else None
        if fc is not None:
            self.flat.set_sig_metric(sig if sig in fc.values else None)

    def set_fade_noise(self, on: bool) -> None:
        self.fade_noise = on
        self.diff.set_fade_noise(on)
        self.flat.set_fade_noise(on)
        if self.flame is not None and hasattr(self.flame, "set_fade_noise"):
            self.flame.set_fade_noise(on)
        self._update_legend()


class _NoiseSignals(QObject):
    done = Signal(object)  # Noise or None
    ranked = Signal(object)  # (Ranking, status or None, Noise or None), or None (failed)


class _NoiseTask(QRunnable):
    """Sampling-error estimate of a big comparison in the thread pool, then (``rank``) its
    culprit ranking judged by that estimate (:func:`viewer.ranking.rank_changes`)."""

    def __init__(self, cmp: Comparison, metrics: list[str], rank: bool = False,
                 alpha: float = DEFAULT_ALPHA, job: NoiseJob | None = None) -> None:
        super().__init__()
        self.cmp = cmp
        self.job = job  # the loader's estimate of ``metrics``: waited for, not computed
        self.metrics = list(metrics)
        self.rank = rank
        self.alpha = alpha
        self.signals = _NoiseSignals()
        self.setAutoDelete(False)

    def run(self) -> None:
        nz = None
        if self.metrics:
            try:
                nz = self.job.result() if self.job is not None else \
                    single_run_noise(self.cmp, self.alpha, self.metrics)
            except Exception:  # noqa: BLE001 - the estimate is optional; views work without it
                nz = None
            if not self._emit(self.signals.done, nz):
                return
        if self.rank:
            ranking = None
            if nz is not None or not self.metrics:  # no estimate: the click ranks as before
                try:
                    noise = self.cmp.noise if nz is None else self.cmp.noise_with(nz)
                    ranked = rank_changes(self.cmp, noise=noise)  # the path's key
                    if ranked.path_key is not None:  # the path's walk, ahead
                        path_key_max(self.cmp, ranked.path_key)
                    ranking = (ranked,
                               self.cmp.status_for(noise=noise) if noise is not None else None,
                               noise)
                except Exception:  # noqa: BLE001 - the first click ranks instead
                    ranking = None
            self._emit(self.signals.ranked, ranking)

    @staticmethod
    def _emit(signal, value) -> bool:
        try:
            signal.emit(value)
        except RuntimeError:  # the window (and its receiver) closed while we computed
            return False
        return True
