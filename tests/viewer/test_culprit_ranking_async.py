"""The culprit ranking behind the tree views' opening path, computed before the click.

A window that opens on the Summary owes its hidden tree tabs the path to the top culprit.
``rank_culprits_now`` ranks it ahead; for a big comparison the noise worker ranks it off
the GUI thread and delivers the result by signal, so the first click on the Diff tree tab
only opens the path.  Stale results (a reload came first) are dropped; a worker that fails
leaves the ranking to the click.  Real GHC profiles (hs-ad v1/v2: addGrad regressed).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from synth_profiles import VIEWER_DATA

import profdiff.viewer.qt.layout as layout_mod
import profdiff.viewer.qt.window_noise as window_noise
import profdiff.viewer.ranking as ranking_mod
from profdiff.parsers import load
from profdiff.viewer.compare import Comparison

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"


class RankSpy:
    """Wraps :func:`viewer.ranking.rank_changes` wherever the window calls it, recording
    the thread and the comparison of each call; ``gate``: a comparison -> Event to wait
    for before ranking it (a ranking kept in flight)."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[tuple[object, bool]] = []  # (comparison, on the GUI thread)
        self.gates: dict[int, threading.Event] = {}
        self.fail = False
        real = ranking_mod.rank_changes

        def spy(cmp, *a, **kw):
            self.calls.append((cmp, threading.current_thread() is threading.main_thread()))
            gate = self.gates.get(id(cmp))
            if gate is not None:
                assert gate.wait(20)
            if self.fail and threading.current_thread() is not threading.main_thread():
                raise ValueError("worker ranking failed")
            return real(cmp, *a, **kw)

        monkeypatch.setattr(ranking_mod, "rank_changes", spy)
        monkeypatch.setattr(window_noise, "rank_changes", spy)

    def on_gui(self) -> int:
        return sum(1 for _, gui in self.calls if gui)

    def in_worker(self, cmp) -> bool:
        """``cmp`` is being (or was) ranked off the GUI thread."""
        return any(c is cmp and not gui for c, gui in self.calls)


@pytest.fixture
def spy(monkeypatch):
    return RankSpy(monkeypatch)


@pytest.fixture
def live(make_window):
    """A window that ranks ahead as the live one does (the test windows load
    synchronously, which alone would leave the ranking to the click)."""
    def make():
        w = make_window()
        w.rank_ahead = True
        return w
    return make


def _culprit_name(w) -> str:
    return str(w.comparison.name[w.diff.current_row()])


def test_rank_culprits_now_leaves_the_click_only_the_path(make_window, spy):
    w = make_window()
    w.load_paths([str(V1), str(V2)])
    assert w.tabs.currentWidget() is w.summary_view
    assert w.culprits_owed(w.comparison)
    ranked_before = len(spy.calls)
    assert w.rank_culprits_now() is True
    assert len(spy.calls) == ranked_before + 1 and not w.culprits_owed(w.comparison)
    assert w.rank_culprits_now() is False  # ranked once
    w.show_view("diff")
    assert len(spy.calls) == ranked_before + 1  # the click ranked nothing
    assert _culprit_name(w) == "addGrad"
    anc = w.diff.layout_.ancestors(w.diff.current_row())[:-1]
    assert set(anc) <= set(w.diff.expanded_rows().tolist())


def test_rank_culprits_now_owes_nothing_once_the_tree_is_shown(make_window, spy):
    w = make_window()
    w.load_paths([str(V1), str(V2)])
    w.show_view("diff")
    w.show_view("side")
    assert not w.culprits_owed(w.comparison)
    n = len(spy.calls)
    assert w.rank_culprits_now() is False and len(spy.calls) == n


def test_big_comparison_is_ranked_in_the_worker(live, spy, monkeypatch, qtbot):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    sweeps: list[bool] = []  # the path's subtree-max sweeps: on the GUI thread?
    real_sweep = layout_mod.subtree_max

    def sweep(*a, **kw):
        sweeps.append(threading.current_thread() is threading.main_thread())
        return real_sweep(*a, **kw)

    monkeypatch.setattr(layout_mod, "subtree_max", sweep)
    w = live()
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000) as blocker:
        w.load_paths([str(V1), str(V2)])
    cmp, applied = blocker.args
    assert cmp is w.comparison and applied is True
    assert spy.calls and spy.on_gui() == 0  # ranked off the GUI thread
    assert sweeps == [False]  # and the path's sweep done there, once
    assert {"time_s", "alloc_bytes"} <= set(cmp.noise.metrics)  # what it judged by
    statuses_on_gui = []
    real_status_for = Comparison.status_for

    def status_for(self, *a, **kw):
        statuses_on_gui.append(threading.current_thread() is threading.main_thread())
        return real_status_for(self, *a, **kw)

    monkeypatch.setattr(Comparison, "status_for", status_for)
    w.show_view("diff")
    assert spy.on_gui() == 0  # the click only opened the path
    assert sweeps == [False]  # walking the worker's sweep
    assert not any(statuses_on_gui)  # and painted the statuses the worker computed
    assert np.array_equal(cmp.status, real_status_for(cmp, cmp.current))
    assert _culprit_name(w) == "addGrad"
    # the same ranking the GUI thread would compute now (noise attached)
    worker_rows = w.diff.current_row()
    again = ranking_mod.rank_changes(cmp)
    assert worker_rows == int(np.argmax(np.maximum(again.score, 0.0)))


def test_reload_while_ranking_drops_the_stale_result(live, spy, monkeypatch, qtbot):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    w = live()
    arrived: list[tuple[object, bool]] = []
    w.culpritsRanked.connect(lambda c, ok: arrived.append((c, ok)))
    real_init = window_noise._NoiseTask.__init__
    tasks = []

    def gated(self, cmp, *a, **kw):  # every new ranking waits for its own gate
        real_init(self, cmp, *a, **kw)
        spy.gates[id(cmp)] = threading.Event()
        tasks.append(cmp)

    monkeypatch.setattr(window_noise._NoiseTask, "__init__", gated)
    w.load_paths([str(V1), str(V2)])
    old = w.comparison
    qtbot.waitUntil(lambda: spy.in_worker(old), timeout=20000)  # the ranking in flight
    # the same files opened afresh: the same rows (a stale key would fit them), a new
    # comparison that owes its own opening path
    w.set_runs([load(str(V1)), load(str(V2))], keep_state=False)
    new = w.comparison
    assert new is not old and old in tasks
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000,
                          check_params_cb=lambda c, ok: c is old):
        spy.gates[id(old)].set()
    assert arrived == [(old, False)]  # stale: never applied to the new comparison
    assert w.culprits_owed(new)
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000,
                          check_params_cb=lambda c, ok: c is new):
        spy.gates[id(new)].set()
    assert arrived[-1] == (new, True)
    w.show_view("diff")
    assert spy.on_gui() == 0 and _culprit_name(w) == "addGrad"


def _gate_every_ranking(monkeypatch, spy) -> threading.Event:
    """One gate that holds every ranking task started from now on in its worker."""
    gate = threading.Event()
    real_init = window_noise._NoiseTask.__init__

    def gated(self, cmp, *a, **kw):
        real_init(self, cmp, *a, **kw)
        spy.gates.setdefault(id(cmp), gate)

    monkeypatch.setattr(window_noise._NoiseTask, "__init__", gated)
    return gate


def test_reload_keeping_the_view_drops_the_ranking_in_flight(live, spy, monkeypatch,
                                                            qtbot):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    w = live()
    gate = _gate_every_ranking(monkeypatch, spy)
    w.load_paths([str(V1), str(V2)])
    old = w.comparison
    qtbot.waitUntil(lambda: spy.in_worker(old), timeout=20000)  # the ranking in flight
    w.load_paths([str(V1), str(V2)])  # a reload keeps the view as it was: nothing owed
    assert w.comparison is not old and not w.culprits_owed(w.comparison)
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000) as blocker:
        gate.set()
    assert blocker.args == [old, False]
    w.wait_for_noise()
    w.show_view("diff")  # as the reloaded view was: nothing selected yet, no error
    assert w.diff.current_row() < 0


def test_failed_worker_ranking_leaves_it_to_the_click(live, spy, monkeypatch, qtbot):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    spy.fail = True
    w = live()
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000) as blocker:
        w.load_paths([str(V1), str(V2)])
    assert blocker.args == [w.comparison, False]
    assert w.culprits_owed(w.comparison)
    w.show_view("diff")  # ranked on the click instead, as before
    assert spy.on_gui() == 1 and _culprit_name(w) == "addGrad"


def test_synchronous_window_ranks_on_the_click(make_window, spy, monkeypatch):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    w = make_window()  # as --screenshot: nobody clicks, so nothing is ranked ahead
    w.load_paths([str(V1), str(V2)])
    w.wait_for_noise()
    assert not spy.calls and w.culprits_owed(w.comparison)
    w.show_view("diff")
    assert spy.on_gui() == 1 and _culprit_name(w) == "addGrad"


def test_a_run_that_fails_to_load_while_ranking(live, spy, monkeypatch, qtbot,
                                                tmp_path):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    cut = tmp_path / "cut.prof"
    cut.write_bytes(V2.read_bytes()[:300])  # the header only: no cost-centre tree
    w = live()
    gate = _gate_every_ranking(monkeypatch, spy)
    w.load_paths([str(V1), str(V2)])
    good = w.comparison
    qtbot.waitUntil(lambda: spy.in_worker(good), timeout=20000)  # the ranking in flight
    w.load_paths([str(V1), str(cut)])  # fails while the good pair is being ranked
    assert "cut.prof" in w.message_bar.text
    with qtbot.waitSignal(w.culpritsRanked, timeout=20000) as blocker:
        gate.set()
    w.wait_for_noise()
    assert blocker.args[0] is good
    # applied only if the window still shows the good pair (a failed load keeps it)
    assert blocker.args[1] is (w.comparison is good)
    w.show_view("diff")
    if w.comparison is good:
        assert _culprit_name(w) == "addGrad"
    assert not any(c.n_runs > 1 and c is not good for c, _ in spy.calls)


def test_the_tree_opens_along_the_culprit_by_the_loaders_estimate(make_window, monkeypatch):
    """A big comparison's tree, shown first, ranks its culprits by the loader's estimate
    of the main metrics the ranking reads (which the loader makes first: the time, not
    the counted allocation), waited for instead of estimated a second time on the GUI
    thread beside it; the path is the one an estimate of its own gives.  The other main
    metrics are the loader's too, estimated after that."""
    import profdiff.viewer.noise as noise_mod

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    estimated: list[tuple[str, bool]] = []  # the tree's (metric, on the GUI thread)
    real = noise_mod.metric_noise

    def spy(cmp, metric, *a, **kw):
        if cmp.mode == "tree":  # (the Summary judges the flat comparison on its own)
            estimated.append((metric, threading.current_thread() is threading.main_thread()))
        return real(cmp, metric, *a, **kw)

    monkeypatch.setattr(noise_mod, "metric_noise", spy)
    w = make_window()
    w.first_view = "diff"
    w.load_paths([str(V1), str(V2)])
    w.show_view("diff")
    main = ranking_mod.main_metrics(w.comparison)
    read = ranking_mod.noise_read_by_ranking(w.comparison)
    assert read == ("time_s",) and main == ("time_s", "alloc_bytes")
    assert [m for m, gui in estimated if m in main][:1] == ["time_s"]  # first
    assert ("time_s", False) in estimated  # by the loader's job
    assert _culprit_name(w) == "addGrad"
    w.wait_for_noise()
    assert all((m, False) in estimated for m in main)  # the allocation's too, later
    assert not [m for m, gui in estimated if gui and m in main]
    alone = w.session.culprits(w.comparison)  # its own estimate (now attached): same path
    assert w.diff.current_row() == int(np.argmax(alone.path_key))
