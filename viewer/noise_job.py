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


class NoiseJob:
    """:func:`single_run_noise` of ``metrics`` of ``cmp`` in a daemon thread, started at
    once, and beside it, in a second thread, the masks the statuses are judged from
    (:meth:`Comparison.prepare_statuses`: the first paint reads them, estimate or not);
    :meth:`result` waits for both.  A failed estimate gives None (the statuses are then
    judged by precision alone, said so), never an exception in the reader of it.

    Why two threads: the window's first paint waits for the estimate, and with the
    masks in the same thread the estimate was the longest thing it waited for (the
    100 MB hs-ad pair: ~0.3 s beside the ~0.25 s of building the views); the masks are
    a separate pass over the same values."""

    def __init__(self, cmp: Comparison, metrics: Sequence[str], alpha: float) -> None:
        self.cmp = cmp
        self.metrics = list(metrics)  # estimated in this order
        self.alpha = alpha
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
            self._statuses.join()
            self._done.set()

    def _metric_in(self, name: str, estimate: MetricNoise) -> None:
        with self._each_in:
            self._each[name] = estimate
            self._each_in.notify_all()

    def cancel(self) -> None:
        """Stop before the next metric: nobody will show these runs (a newer load, a
        cancelled one); :meth:`result` then gives None."""
        self._stop.set()

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
