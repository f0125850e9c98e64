"""The loader's background noise estimate (viewer.noise_job) and the loader starting it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profdiff.parsers import load
from profdiff.viewer import noise_job
from profdiff.viewer.compare import align
from profdiff.viewer.noise import single_run_noise
from profdiff.viewer.noise_job import NoiseJob

HS = Path(__file__).parents[1] / "data/hs-ad"
METRICS = ["time_pct", "inherited_time_pct", "ticks", "time_s", "inherited_time_s"]


def _tree():
    return align([load(HS / v / "ad.P.prof") for v in ("v1", "v2")], mode="tree")


def test_the_job_gives_the_estimate_of_its_metrics():
    cmp = _tree()
    job = NoiseJob(cmp, METRICS, 0.05)
    got = job.result(timeout=60)
    assert job.done() and got is not None and list(got.metrics) == [
        m.name for m in cmp.metrics if m.name in METRICS]
    alone = single_run_noise(cmp, 0.05, METRICS)
    for m in METRICS:
        assert np.array_equal(got.metrics[m].pvalue, alone.metrics[m].pvalue), m
        assert np.array_equal(got.metrics[m].significant, alone.metrics[m].significant), m
    assert got.metrics["ticks"].significant.any()


def test_a_failed_job_gives_no_estimate(monkeypatch):
    def broken(*_a, **_k):
        raise MemoryError("no room")

    monkeypatch.setattr(noise_job, "single_run_noise", broken)
    job = NoiseJob(_tree(), METRICS, 0.05)
    assert job.result(timeout=60) is None and job.done()


def test_the_loader_starts_the_job_when_asked():
    from profdiff.viewer.qt.loader import load_and_align
    from profdiff.viewer.session import SessionSpec, Slot

    paths = [str(HS / v / "ad.P.prof") for v in ("v1", "v2")]
    spec = SessionSpec(files=tuple(paths))
    asked = []

    def judge(cmp):
        asked.append(cmp)
        return ["ticks"]

    res = load_and_align([Slot(p) for p in paths], spec, judge=judge)
    assert asked == [res.tree] and res.noise_job is not None
    assert res.noise_job.cmp is res.tree and res.noise_job.metrics == ["ticks"]
    assert list(res.noise_job.result(timeout=60).metrics) == ["ticks"]
    assert load_and_align([Slot(p) for p in paths], spec, judge=lambda c: []).noise_job is None
    assert load_and_align([Slot(p) for p in paths], spec).noise_job is None


def _spy_statuses(monkeypatch) -> list[str]:
    """The threads that read the statuses' masks (:meth:`Comparison.prepare_statuses`)."""
    import threading

    from profdiff.viewer.compare import Comparison

    readers: list[str] = []
    original = Comparison.prepare_statuses

    def spy(cmp):
        readers.append(threading.current_thread().name)
        return original(cmp)

    monkeypatch.setattr(Comparison, "prepare_statuses", spy)
    return readers


def test_the_job_prepares_the_statuses_the_loader_leaves_to_it(monkeypatch):
    """With a job, the loader leaves the statuses' masks to it (read once, in the job's
    thread, beside the layout caches); the statuses are those judged without it."""
    from profdiff.viewer.qt.loader import load_and_align
    from profdiff.viewer.session import SessionSpec, Slot

    paths = [str(HS / v / "ad.P.prof") for v in ("v1", "v2")]
    spec = SessionSpec(files=tuple(paths))
    readers = _spy_statuses(monkeypatch)
    res = load_and_align([Slot(p) for p in paths], spec, judge=lambda c: ["ticks"])
    nz = res.noise_job.result(timeout=60)
    assert readers == ["profdiff-statuses"]
    res.tree.add_noise(nz)
    plain = load_and_align([Slot(p) for p in paths], spec).tree
    plain.add_noise(single_run_noise(plain, 0.05, ["ticks"]))
    assert np.array_equal(res.tree.status, plain.status)


def test_a_cancelled_job_stops_before_its_next_metric(monkeypatch):
    """A job whose runs nobody will show (a newer load) stops before its next metric and
    gives no estimate; the estimate itself stops the same way (EstimateStopped)."""
    import threading

    import pytest

    from profdiff.viewer import noise
    from profdiff.viewer.noise import EstimateStopped

    cmp = _tree()
    asked = []
    with pytest.raises(EstimateStopped):
        noise.single_run_noise(cmp, 0.05, METRICS, stop=lambda: asked.append(1) or
                               len(asked) > 2)
    assert len(asked) == 3  # two metrics estimated, stopped before the third
    started, go_on, estimated = threading.Event(), threading.Event(), []
    original = noise.metric_noise

    def held(*a, **k):  # the first metric waits until the job is cancelled
        started.set()
        go_on.wait(30)
        estimated.append(a[1])
        return original(*a, **k)

    monkeypatch.setattr(noise, "metric_noise", held)
    job = NoiseJob(cmp, METRICS, 0.05)
    assert started.wait(30)
    job.cancel()
    go_on.set()
    assert job.result(timeout=60) is None and estimated == ["time_pct"]


def test_the_estimate_follows_the_order_asked_and_lists_the_comparisons():
    """Metrics are estimated in the order asked, each reported as it is in; the estimate
    lists them in the comparison's order, and is the one made in any other order (the
    same rows significant; p-values within rounding, as metrics that hold the same
    samples share the counts of whichever is estimated first: ``ticks``, ``time_s``)."""
    cmp = _tree()
    asked = ["inherited_time_s", "time_s", "ticks"]
    seen: list[str] = []
    got = single_run_noise(cmp, 0.05, asked, done=lambda name, est: seen.append(name))
    assert seen == asked
    assert list(got.metrics) == [m.name for m in cmp.metrics if m.name in asked]
    other = single_run_noise(cmp, 0.05, asked[::-1])
    for m in asked:
        assert np.allclose(got.metrics[m].pvalue, other.metrics[m].pvalue, rtol=1e-12,
                           atol=1e-14, equal_nan=True), m
        assert np.array_equal(got.metrics[m].significant, other.metrics[m].significant), m
        assert got.metrics[m].significant.any() or m == "inherited_time_s", m


def test_noise_of_gives_the_first_metrics_while_the_job_goes_on(monkeypatch):
    """A reader of the job's first metrics (the window's culprit ranking) gets them as soon
    as they are in, the same estimates the whole job gives, while the job still works on
    its last metric; a metric the job does not estimate gives None at once."""
    import threading

    from profdiff.viewer import noise

    cmp = _tree()
    held, go_on = threading.Event(), threading.Event()
    original = noise.metric_noise

    def last_waits(*a, **k):
        if a[1] == "inherited_time_s":
            held.set()
            assert go_on.wait(30)
        return original(*a, **k)

    monkeypatch.setattr(noise, "metric_noise", last_waits)
    job = NoiseJob(cmp, ["ticks", "time_s", "inherited_time_s"], 0.05)
    first = job.noise_of(["time_s", "ticks"], timeout=30)
    assert first is not None and list(first.metrics) == [
        m.name for m in cmp.metrics if m.name in ("time_s", "ticks")]
    assert held.wait(30) and not job.done()  # the last metric is still being estimated
    assert job.noise_of(["alloc_bytes"], timeout=30) is None  # not one of its metrics
    go_on.set()
    whole = job.result(timeout=60)
    assert whole is not None
    for m in ("time_s", "ticks"):
        assert first.metrics[m] is whole.metrics[m]


def test_noise_of_a_metric_a_cancelled_job_never_reaches_is_none(monkeypatch):
    """Cancelled after its first metric, the job never estimates the others: a reader
    waiting for one of them gets None when the job ends, not a wait until its timeout."""
    import threading
    import time

    from profdiff.viewer import noise

    cmp = _tree()
    started, go_on = threading.Event(), threading.Event()
    original = noise.metric_noise

    def first_waits(*a, **k):
        started.set()
        assert go_on.wait(30)
        return original(*a, **k)

    monkeypatch.setattr(noise, "metric_noise", first_waits)
    job = NoiseJob(cmp, ["time_s", "ticks"], 0.05)
    assert started.wait(30)
    job.cancel()
    go_on.set()
    t = time.monotonic()
    assert job.noise_of(["ticks"], timeout=30) is None
    assert time.monotonic() - t < 10
    assert job.noise_of(["time_s"], timeout=30) is not None  # it was in before the stop


PACED = ["time_s", "ticks", "inherited_time_s"]


def test_a_paced_job_waits_after_its_first_metrics_until_go_on(monkeypatch):
    """With ``first``, the job estimates those metrics, then estimates nothing more and
    reads no status masks until :meth:`NoiseJob.go_on` (the window's first paint); then
    the rest, and the whole estimate is the one made at once."""
    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 600.0)  # only go_on lets it on here
    readers = _spy_statuses(monkeypatch)
    cmp = _tree()
    job = NoiseJob(cmp, PACED, 0.05, first=["time_s"])
    first = job.noise_of(["time_s"], timeout=60)
    assert first is not None and list(first.metrics) == ["time_s"]
    assert job.result(timeout=0.5) is None and not job.done()
    assert job.noise_of(["ticks"], timeout=0.2) is None  # held back
    assert readers == []
    job.go_on()
    got = job.result(timeout=60)
    assert got is not None and set(got.metrics) == set(PACED)
    assert readers == ["profdiff-statuses"]
    alone = single_run_noise(cmp, 0.05, PACED)
    for m in PACED:
        assert np.array_equal(got.metrics[m].significant, alone.metrics[m].significant), m


def test_a_paced_job_goes_on_by_itself_after_the_limit(monkeypatch):
    """A window that never paints (closed, replaced) does not keep the estimate back."""
    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 0.05)
    job = NoiseJob(_tree(), PACED, 0.05, first=["time_s"])
    got = job.result(timeout=60)
    assert got is not None and set(got.metrics) == set(PACED)


def test_a_cancelled_paced_job_ends_without_waiting_for_go_on(monkeypatch):
    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 600.0)
    job = NoiseJob(_tree(), PACED, 0.05, first=["time_s"])
    assert job.noise_of(["time_s"], timeout=60) is not None
    job.cancel()
    assert job.result(timeout=60) is None and job.done()


def test_a_job_whose_first_metrics_are_all_it_has_does_not_wait(monkeypatch):
    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 600.0)
    readers = _spy_statuses(monkeypatch)
    job = NoiseJob(_tree(), ["time_s"], 0.05, first=["time_s", "alloc_bytes"])
    assert job.result(timeout=60) is not None and readers == ["profdiff-statuses"]


def test_only_the_live_loader_paces_its_job():
    """The live window's loader (:class:`LoadTask`) paces the job on the culprit
    ranking's metrics; a synchronous load (``--screenshot``, tests) does not."""
    from profdiff.viewer.qt.loader import load_and_align
    from profdiff.viewer.ranking import main_metrics
    from profdiff.viewer.session import SessionSpec, Slot

    paths = [str(HS / v / "ad.P.prof") for v in ("v1", "v2")]
    spec = SessionSpec(files=tuple(paths))
    plain = load_and_align([Slot(p) for p in paths], spec, judge=lambda c: PACED)
    assert plain.noise_job.result(timeout=60) is not None  # nothing held it
    paced = load_and_align([Slot(p) for p in paths], spec, judge=lambda c: PACED, paced=True)
    assert main_metrics(paced.tree) == ("time_s", "alloc_bytes")  # time_s alone in PACED
    assert paced.noise_job.noise_of(["time_s"], timeout=60) is not None
    assert paced.noise_job.result(timeout=0.3) is None
    paced.noise_job.go_on()
    assert paced.noise_job.result(timeout=60) is not None


def test_a_paced_job_that_fails_reads_its_masks_without_waiting(monkeypatch):
    """An estimate that fails before its first metrics leaves nothing to pace: the job
    ends at once (its masks read), not at the time limit (made 10 minutes here)."""
    def broken(*_a, **_k):
        raise MemoryError("no room")

    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 600.0)
    monkeypatch.setattr(noise_job, "single_run_noise", broken)
    readers = _spy_statuses(monkeypatch)
    job = NoiseJob(_tree(), PACED, 0.05, first=["time_s"])
    assert job.result(timeout=60) is None and job.done() and readers == ["profdiff-statuses"]
