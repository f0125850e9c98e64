"""A sampling-error estimate computed in a background thread from the moment a big
comparison is aligned (Qt-free).

Why: a window judges a 1-vs-1 comparison's row statuses and fades its cells by the
estimate (:func:`viewer.noise.single_run_noise`), and on a 10^6-row tree that estimate
was the last thing the first paint waited for.  Started by the loader right after the
alignment, it runs beside the layout caches and the building of the views instead of
after them; the window takes it over (:meth:`viewer.qt.window_noise.NoiseMixin.adopt_noise_job`)
rather than estimating the same metrics again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .compare import Comparison
from .noise import MetricNoise, Noise, single_run_noise

HOLD_LIMIT_S = 2.0
"""The longest a job with ``first`` metrics waits for :meth:`NoiseJob.go_on` before the
rest: a window that never paints (closed, replaced) must not keep its estimate back."""


class NoiseJob:
    """:func:`single_run_noise` of ``metrics`` of ``cmp`` in a daemon thread, started at
    once, and beside it, in a second thread, the masks the statuses are judged from
    (:meth:`Comparison.prepare_statuses`: the first paint reads them, estimate or not);
    :meth:`result` waits for both.  A failed estimate gives None (the statuses are then
    judged by precision alone, said so), never an exception in the reader of it.

    Why two threads: the window's first paint waits for the estimate, and with the
    masks in the same thread the estimate was the longest thing it waited for (the
    100 MB hs-ad pair: ~0.3 s beside the ~0.25 s of building the views); the masks are
    a separate pass over the same values.

    ``first``: the metrics the window's first paint needs (the culprit ranking's,
    :meth:`noise_of`).  Once they are in, the job waits for :meth:`go_on` (the window
    calls it when it has painted; at most :data:`HOLD_LIMIT_S`) before the others, and
    the masks wait for it too: that paint judges its rows alone
    (:meth:`Comparison.status_rows`).  Why: the other metrics (the shown columns'
    fading, the statuses' sampled metrics: ~0.2 s of numpy on the 100 MB hs-ad pair)
    and the masks (65 ms) took the GIL from the GUI thread while it built the views
    and opened the path to the culprit, and the window painted its cells unfaded
    either way (the estimate lands whole, after that paint).  Paced, the window's time
    from the comparison's arrival to its first paint was 226 ms against 296 ms
    (medians of 12 alternating runs)."""

    def __init__(self, cmp: Comparison, metrics: Sequence[str], alpha: float,
                 first: Sequence[str] = ()) -> None:
        self.cmp = cmp
        self.metrics = list(metrics)  # estimated in this order
        self.alpha = alpha
        # with ``first``, the job waits once those are in (:meth:`go_on`)
        self._first = [m for m in first if m in self.metrics]
        self._go_on = threading.Event()
        if set(self.metrics) <= set(self._first):  # nothing to hold back
            self._go_on.set()
        self._noise: Noise | None = None
        self._done = threading.Event()
        self._each: dict[str, MetricNoise] = {}  # the metrics in so far
        self._each_in = threading.Condition()
        self._over = False  # the estimate ended: what is not in never comes
        self._stop = threading.Event()
        self._statuses = threading.Thread(target=self._prepare, name="profdiff-statuses",
                                          daemon=True)
        self._thread = threading.Thread(target=self._run, name="profdiff-noise", daemon=True)
        self._statuses.start()
        self._thread.start()

    def _prepare(self) -> None:
        if self._first:  # the first paint judges its rows alone (Comparison.status_rows)
            self._go_on.wait(HOLD_LIMIT_S)
        try:
            if not self._stop.is_set():
                self.cmp.prepare_statuses()
        except Exception:  # noqa: BLE001 - the statuses are read again when painted
            pass

    def _run(self) -> None:
        try:
            self._noise = single_run_noise(self.cmp, self.alpha, self.metrics,
                                           stop=self._stop.is_set, done=self._metric_in)
        except Exception:  # noqa: BLE001 - the estimate is optional (EstimateStopped too)
            self._noise = None
        finally:
            with self._each_in:
                self._over = True
                self._each_in.notify_all()
            self._go_on.set()  # failed or stopped before its first metrics: masks now
            self._statuses.join()
            self._done.set()

    def _metric_in(self, name: str, estimate: MetricNoise) -> None:
        with self._each_in:
            self._each[name] = estimate
            self._each_in.notify_all()
            paused = all(m in self._each for m in self._first)
        if paused and not self._go_on.is_set():
            self._go_on.wait(HOLD_LIMIT_S)
            self._go_on.set()  # once: after the limit, the rest without a pause

    def go_on(self) -> None:
        """Estimate the metrics after ``first`` now (the window has painted its first
        rows; see the class docstring)."""
        self._go_on.set()

    def cancel(self) -> None:
        """Stop before the next metric: nobody will show these runs (a newer load, a
        cancelled one); :meth:`result` then gives None."""
        self._stop.set()
        self._go_on.set()

    def done(self) -> bool:
        return self._done.is_set()

    def noise_of(self, metrics: Sequence[str], timeout: float | None = None) -> Noise | None:
        """An estimate of just ``metrics`` (each one this job estimates), as soon as they
        are in, while the job goes on with the others; None when one of them will not
        come (the job failed or stopped) or ``timeout`` seconds passed first.

        Why: the window's culprit ranking reads the estimate of its main metrics, which
        this job makes first; waiting for those alone, instead of estimating them again
        beside the job, took a second estimate of the same ``time_s`` off the GUI
        thread's first paint (the 100 MB hs-ad pair: 0.18 s there, while the job made
        the same one on the other core)."""
        wanted = list(dict.fromkeys(metrics))
        if not set(wanted) <= set(self.metrics):
            return None
        with self._each_in:
            ready = self._each_in.wait_for(
                lambda: self._over or all(m in self._each for m in wanted), timeout)
            if not ready or not all(m in self._each for m in wanted):
                return None
            got = {m: self._each[m] for m in wanted}
        noise = Noise(1, 1, self.alpha)
        noise.metrics = {m.name: got[m.name] for m in self.cmp.metrics if m.name in got}
        return noise

    def result(self, timeout: float | None = None) -> Noise | None:
        """The estimate (None if it failed, or is not in after ``timeout`` seconds)."""
        self._done.wait(timeout)
        return self._noise
