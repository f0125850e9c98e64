"""Noise-aware comparison in the app: groups of repeated runs, significance, faded cells."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

import profdiff.viewer.qt.window_noise as window_noise
from profdiff.viewer.qt.models import FADED_TEXT, fade_rgb
from profdiff.viewer.ranking import main_metrics

DATA = Path(__file__).parent.parent / "data"
HS = DATA / "hs-ad"
V1, V2 = HS / "v1" / "ad.prof", HS / "v2" / "ad.prof"
RUN1, RUN2, RUN3 = (HS / "noise-v1" / f"run{i}" / "ad.prof" for i in (1, 2, 3))
TICKY1 = DATA / "ghc-ticky" / "hs-ad-v1.ticky.txt"
TICKY2 = DATA / "ghc-ticky" / "hs-ad-v2.ticky.txt"


@pytest.fixture
def win(make_window):
    return make_window(1400, 900)


def _col(model, kind, metric):
    return next(i for i, c in enumerate(model.columns) if c.kind == kind and c.metric == metric)


def _visible_names(view_layout, cmp):
    vis = view_layout.visible
    rows = np.arange(cmp.n_rows) if vis is None else np.flatnonzero(vis)
    return set(cmp.name[rows].tolist())


def test_same_build_groups_show_no_significant_change(win):
    win.open_groups([str(V1), str(RUN1)], [str(RUN2), str(RUN3)])
    win.flush_pending()  # every tab as when shown (the flat table is filled then)
    cmp = win.comparison
    assert cmp.groups is not None and cmp.n_runs == 2
    assert "groups: 2 vs 2 runs" in win.status_label.text()
    assert "mean of 2" in win.summary.text()
    assert win.act_sig.isChecked()  # the sig. column comes on with groups
    assert win.sig_metric() == "inherited_time_pct"
    assert any(c.kind == "sig" for c in win.diff.models[0].columns)
    assert any(c.kind == "sig" for c in win.flat.model.columns)
    # the timings do move between these runs ...
    assert (cmp.delta("time_pct") != 0).sum() > 10
    win.significant_box.setChecked(True)
    # ... but none of it is significant: nothing left in the tree or the table
    assert win.diff.layout_.visible is not None and not win.diff.layout_.visible.any()
    assert win.flat.model.rowCount() == 0
    assert win.diff.models[0].rowCount() == 0
    win.significant_box.setChecked(False)
    assert win.diff.models[0].rowCount() > 0


def test_regression_stands_out_of_the_noise(win):
    win.open_groups([str(V1), str(RUN1), str(RUN2)], [str(V2)])
    win.flush_pending()
    assert "groups: 3 vs 1 runs" in win.status_label.text()
    win.significant_box.setChecked(True)
    cmp, flat = win.comparison, win.flat_comparison
    assert "addGrad" in _visible_names(win.diff.layout_, cmp)
    assert "addGrad" in _visible_names(win.flat.layout_, flat)
    sig = cmp.noise.metrics["inherited_time_pct"].significant
    vis = win.diff.layout_.visible
    assert vis.sum() < cmp.n_rows
    # exactly the significant rows and their ancestors are shown
    want = sig.copy()
    for r in np.flatnonzero(sig):
        p = int(cmp.parent[r])
        while p >= 0:
            want[p] = True
            p = int(cmp.parent[p])
    assert (vis == want).all()
    # the sig. column of addGrad says "real"; its spread and p-value are in the details
    m = win.diff.models[0]
    add_grad = int(np.flatnonzero((cmp.name == "addGrad") & sig)[0])
    win.reveal_row(add_grad)
    text = m.data(m.index_for_row(add_grad, _col(m, "sig", "inherited_time_pct")))
    assert text.startswith("real p")
    details = win.details.toPlainText()
    assert "mean of 3" in details and "±" in details and "real" in details


def test_faded_cells_within_noise(win):
    win.load_paths([str(V1), str(V2)])
    cmp = win.comparison
    nz = cmp.noise.metrics["inherited_time_pct"]  # computed on open (small comparison)
    assert nz.method.startswith("z test") and nz.min_detectable_rel is not None
    d = cmp.delta("inherited_time_pct")
    within = np.flatnonzero((d != 0) & ~nz.significant)
    real = np.flatnonzero((d != 0) & nz.significant)
    assert within.size and real.size
    m = win.diff.models[0]
    col = _col(m, "delta", "inherited_time_pct")
    win.diff.expand_to_depth(30)
    a, b = int(within[0]), int(real[0])
    ia, ib = m.index_for_row(a, col), m.index_for_row(b, col)
    assert ia.isValid() and ib.isValid()
    fg_a = m.data(ia, Qt.ItemDataRole.ForegroundRole).color()
    fg_b = m.data(ib, Qt.ItemDataRole.ForegroundRole).color()
    assert (fg_a.red(), fg_a.green(), fg_a.blue()) == FADED_TEXT
    assert (fg_b.red(), fg_b.green(), fg_b.blue()) != FADED_TEXT
    bg_a = m.data(ia, Qt.ItemDataRole.BackgroundRole).color()
    bg_b = m.data(ib, Qt.ItemDataRole.BackgroundRole).color()
    full_a, full_b = m._cell_rgb("inherited_time_pct", None, a), m._cell_rgb(
        "inherited_time_pct", None, b)
    assert (bg_a.red(), bg_a.green(), bg_a.blue()) == fade_rgb(full_a)
    assert (bg_b.red(), bg_b.green(), bg_b.blue()) == full_b
    assert bg_a.lightness() > QColor_lightness(full_a)
    # deterministic metrics are never faded: any change of allocation is real
    ca = _col(m, "delta", "inherited_alloc_pct")
    alloc_changed = int(np.flatnonzero(cmp.delta("inherited_alloc_pct") != 0)[0])
    fg = m.data(m.index_for_row(alloc_changed, ca), Qt.ItemDataRole.ForegroundRole)
    assert fg is None or (fg.color().red(), fg.color().green(), fg.color().blue()) != FADED_TEXT
    assert win.diff.legend.noise_text == "faded: within sampling error"
    # the toggle turns fading off
    win.act_fade.setChecked(False)
    bg = m.data(ia, Qt.ItemDataRole.BackgroundRole).color()
    assert (bg.red(), bg.green(), bg.blue()) == full_a
    assert win.diff.legend.noise_text == ""
    # one run per side: the details say only the sampling error is known
    win.reveal_row(a)
    assert "only sampling error is known" in win.details.toPlainText()


def QColor_lightness(rgb):  # noqa: N802 - mirrors QColor.lightness
    from PySide6.QtGui import QColor

    return QColor(*rgb).lightness()


def test_sig_column_model_tester_and_sorting(win, model_tester):
    win.load_paths([str(V1), str(V2)])
    win.flush_pending()
    win.act_sig.setChecked(True)
    m = win.diff.models[0]
    model_tester(m)
    col = _col(m, "sig", "inherited_time_pct")
    assert m.headerData(col, Qt.Orientation.Horizontal) == "inh. %time\nsig."
    m.sort(col, Qt.SortOrder.DescendingOrder)
    fm = win.flat.model
    model_tester(fm)
    fcol = _col(fm, "sig", "inherited_time_pct")
    fm.sort(fcol, Qt.SortOrder.AscendingOrder)  # smallest p first
    first = int(fm.index(0, 0).internalId())
    assert win.flat_comparison.noise.metrics["inherited_time_pct"].significant[first]
    assert fm.data(fm.index(0, fcol)).startswith("real p")
    win.significant_box.setChecked(True)
    win.act_sig.setChecked(False)
    assert not any(c.kind == "sig" for c in m.columns)
    assert not any(c.kind == "sig" for c in win.flat.model.columns)


def test_deterministic_ticky_counters_are_exact(win):
    win.load_paths([str(TICKY1), str(TICKY2)])
    win.act_sig.setChecked(True)
    cmp = win.comparison
    m = win.diff.models[0]
    metric = win.sig_metric()
    assert cmp.noise.metrics[metric].method.startswith("deterministic")
    col = _col(m, "sig", metric)
    changed = np.flatnonzero(cmp.delta(metric) != 0)
    win.diff.expand_to_depth(20)
    texts = {m.data(m.index_for_row(int(r), col)) for r in changed}
    assert texts == {"real (exact)"}
    assert win.diff.legend.noise_text == ""  # nothing can be faded


def test_big_comparisons_get_their_noise_in_the_background(win, monkeypatch):
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    win.load_paths([str(V1), str(V2)])
    cmp = win.comparison
    win.wait_for_noise()
    assert "inherited_time_pct" in cmp.noise.metrics
    sampled = {m for m in win.metrics if cmp.metric_by_name[m].sampled}
    assert sampled and sampled <= set(cmp.noise.metrics)


def test_a_big_comparisons_noise_starts_before_its_views_are_built(win, monkeypatch):
    """The worker estimate runs beside the building of the views (it is in flight when
    the diff tree gets the comparison), and the cells come out the same once it is in:
    every Δ cell of a sampled metric is faded exactly where its row is within noise."""
    from profdiff.viewer.qt.views import DiffTreeView

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    seen = []
    original = DiffTreeView.set_comparison

    def spy(view, cmp, *a, **kw):
        seen.append([set(t.metrics) for t in win._noise_tasks if t.cmp is cmp])
        return original(view, cmp, *a, **kw)

    monkeypatch.setattr(DiffTreeView, "set_comparison", spy)
    win.load_paths([str(V1), str(V2)])
    win.wait_for_noise()
    cmp = win.comparison
    sampled = {m for m in win.metrics if cmp.metric_by_name[m].sampled}
    assert seen and seen[-1] and sampled <= set().union(*seen[-1])
    m = win.diff.models[0]
    metric = "time_pct" if "time_pct" in win.metrics else sorted(sampled)[0]
    col = _col(m, "delta", metric)
    within = ~cmp.noise.significant(metric)
    rows = [r for r in range(cmp.n_rows) if cmp.changed_at(metric, r)]
    assert rows
    for r in rows:
        fg = m.data(m.index_for_row(r, col), Qt.ItemDataRole.ForegroundRole)
        rgb = None if fg is None else (fg.color().red(), fg.color().green(), fg.color().blue())
        assert (rgb == FADED_TEXT) == bool(within[r]), r
    assert win.diff.legend.noise_text == "faded: within sampling error"


def test_the_loader_starts_the_estimate_the_window_takes_over(win, monkeypatch):
    """A big comparison's estimate starts in the loader the moment the tree is aligned,
    of exactly the metrics the window then wants (the culprit ranking's first, then its
    columns, the 'sig.' metric, the metrics statuses are judged by), and the window waits
    for it instead of estimating them again: one estimate, the same statuses and faded
    cells as an estimate made by the window."""
    from profdiff.viewer import noise_job
    from profdiff.viewer.noise import single_run_noise as estimate

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    calls = []

    def counted(where):
        def run(cmp, alpha, metrics, **kw):
            calls.append((where, cmp.mode, list(metrics)))
            return estimate(cmp, alpha, metrics, **kw)
        return run

    monkeypatch.setattr(noise_job, "single_run_noise", counted("loader"))
    monkeypatch.setattr(window_noise, "single_run_noise", counted("window"))
    win.load_paths([str(V1), str(V2)])
    win.wait_for_noise()
    cmp = win.comparison
    wanted = list(dict.fromkeys([*main_metrics(cmp), *win.view_state.noise_metrics(cmp)]))
    # (the flat comparison, aligned ahead for the Summary, gets its own estimate)
    assert [c for c in calls if c[1] == "tree"] == [("loader", "tree", wanted)]
    assert {"time_pct", "inherited_time_pct", "time_s", "inherited_time_s"} <= set(wanted)
    assert win._noise_todo(cmp) == []  # nothing left to estimate
    alone = cmp.status_for(noise=estimate(cmp, 0.05, wanted))
    assert np.array_equal(cmp.status, alone)
    assert (cmp.status == 1).any()  # some rows did change (addGrad)


def test_opening_other_runs_stops_the_estimate_of_the_runs_replaced(win, monkeypatch):
    """The loader's estimate of runs the window no longer shows stops before its next
    metric (it would only slow the estimate of the runs shown), and gives nothing."""
    import threading

    from profdiff.viewer import noise, noise_job

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    go = threading.Event()
    original = noise.metric_noise

    def held(*a, **k):  # the loader's job waits (the Summary's own estimates do not)
        if threading.current_thread().name == "profdiff-noise":
            go.wait(30)
        return original(*a, **k)

    monkeypatch.setattr(noise, "metric_noise", held)
    jobs = []
    init = noise_job.NoiseJob.__init__
    monkeypatch.setattr(noise_job.NoiseJob, "__init__",
                        lambda job, *a, **k: (jobs.append(job), init(job, *a, **k))[1])
    win.load_paths([str(V1), str(V2)])
    first = win.comparison
    win.load_paths([str(V2), str(V1)])
    assert len(jobs) == 2 and jobs[0].cmp is first and jobs[1].cmp is win.comparison
    go.set()
    assert jobs[0].result(timeout=60) is None
    win.wait_for_noise()
    assert jobs[1].result(timeout=60) is not None
    assert set(jobs[1].metrics) <= set(win.comparison.noise.metrics)
    assert first.noise is None  # nothing attached to the runs replaced


def test_the_loader_estimates_the_saved_columns(win, monkeypatch):
    """The columns saved for the format (allocation here, not %time) are the ones the
    loader's estimate covers: what the window will show, read from the settings before
    the loading thread starts."""
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    win.settings.setValue("metrics/ghc-prof", ["alloc_pct", "entries"])
    wanted = win.noise_wanted()
    win.load_paths([str(V1), str(V2)])
    win.wait_for_noise()
    cmp = win.comparison
    assert win.metrics[:2] == ["alloc_pct", "entries"]
    assert wanted(cmp) == list(dict.fromkeys([*main_metrics(cmp),
                                              *win.view_state.noise_metrics(cmp)]))
    assert "time_pct" not in wanted(cmp)  # not shown, and not what statuses are judged by
    assert {"inherited_time_pct", "time_s"} <= set(wanted(cmp))  # the 'sig.' one, statuses
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10**9)  # small: estimated at once
    assert wanted(cmp) == []


def test_app_command_line_groups(tmp_path, capsys):
    from profdiff.viewer.qt.app import main

    out = tmp_path / "g.png"
    assert main(["--base", str(V1), str(RUN1), str(RUN2), "--new", str(V2), "--screenshot",
                 str(out), "--significant-only", "--size", "1000x700"]) == 0
    assert out.stat().st_size > 10_000
    with pytest.raises(SystemExit):
        main(["--base", str(V1), "--screenshot", str(out)])


HP1, HP2 = DATA / "ghc-hp-noise" / "run1.hp", DATA / "ghc-hp-noise" / "run2.hp"


def test_heap_pair_of_one_binary_reads_moved_not_changed(win):
    """Two heap profiles of one binary, one run per side: the status bar, the details
    pane and the Summary say the bands moved and are not judged; nothing reads
    "changed", "real" or "within noise"."""
    from profdiff.viewer.compare import Status
    from profdiff.viewer.qt.widgets import details_html

    win.load_paths([str(HP1), str(HP2)])
    win.flush_pending()
    cmp = win.comparison
    c = cmp.status_counts()
    assert c["changed"] == 0 and c["moved"] > 0
    assert f"(0 changed, {c['moved']:,} moved, not judged)" in win.status_label.text()
    # the header's totals were measured once: marked, and its tooltip says what that means
    assert "peak heap †" in win.summary.text() and "heap samples †" in win.summary.text()
    assert win.summary.toolTip().startswith("† measured once")
    peak = cmp.delta("peak_bytes") != 0
    row = int(np.flatnonzero((cmp.status == Status.MOVED) & peak)[0])
    html = details_html(cmp, row)
    assert "moved, not judged" in html and "real" not in html and "within noise" not in html
    assert "sampling error" not in html  # a heap profile has none to speak of
    win.tabs.setCurrentWidget(win.summary_view)
    text = win.summary_view.toPlainText()
    assert "moved (not judged)" in text and "moved, not judged)" in text
    assert "real change" not in text
    # the run totals measured once say so, as sampled ones do
    totals = {t.key: t for t in win.summary_view.summary.totals}
    assert totals["mean_bytes"].timed and totals["duration_s"].timed
    assert "timed: one run is noisy" in text
    # "significant only": nothing is known significant, so nothing is left
    win.significant_box.setChecked(True)
    win.flush_pending()
    assert win.diff.layout_.visible is not None and not win.diff.layout_.visible.any()
    win.significant_box.setChecked(False)
    assert win.diff.models[0].rowCount() > 0


def test_the_live_window_lets_its_paced_estimate_go_on_once_it_has_shown_the_runs(
        qtbot, tmp_path, monkeypatch):
    """The live window's loader paces its estimate (the culprit ranking's metrics, then a
    wait): the window lets it go on once it has shown the runs, so the rest lands and the
    statuses are judged by it, without the job's time limit (made 10 minutes here).  The
    diff tree it paints meanwhile judges its rows alone: no status of every row is
    judged on the GUI thread before the job reads the masks (after that paint)."""
    import threading

    from PySide6.QtCore import QSettings

    from profdiff.viewer import noise_job
    from profdiff.viewer.compare import Comparison
    from profdiff.viewer.noise import single_run_noise as estimate
    from profdiff.viewer.qt.main_window import MainWindow

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    monkeypatch.setattr(noise_job, "HOLD_LIMIT_S", 600.0)
    jobs = []
    init = noise_job.NoiseJob.__init__
    monkeypatch.setattr(noise_job.NoiseJob, "__init__",
                        lambda job, *a, **k: (jobs.append(job), init(job, *a, **k))[1])
    events = []
    status_for, prepare = Comparison.status_for, Comparison.prepare_statuses
    monkeypatch.setattr(Comparison, "status_for", lambda c, *a, **k: (
        events.append(("whole", threading.current_thread() is threading.main_thread())),
        status_for(c, *a, **k))[1])
    monkeypatch.setattr(Comparison, "prepare_statuses",
                        lambda c: (events.append(("masks", False)), prepare(c))[1])
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=False)
    qtbot.addWidget(w)
    w.show()
    w.comparisonChanged.connect(lambda _c: w.show_view("diff"))  # as --view diff does
    w.load_paths([str(V1), str(V2)])
    qtbot.waitUntil(lambda: w.comparison is not None, timeout=30_000)
    cmp = w.comparison
    qtbot.waitUntil(lambda: ("masks", False) in events, timeout=30_000)
    assert w.diff.current_row() >= 0  # opened along the culprit, painted
    assert ("whole", True) not in events[:events.index(("masks", False))]
    assert len(jobs) == 1 and jobs[0].cmp is cmp
    wanted = list(dict.fromkeys([*main_metrics(cmp), *w.view_state.noise_metrics(cmp)]))
    assert set(wanted) - set(main_metrics(cmp))  # a rest to hold back
    qtbot.waitUntil(lambda: cmp.noise is not None and set(wanted) <= set(cmp.noise.metrics),
                    timeout=30_000)
    assert np.array_equal(cmp.status, cmp.status_for(noise=estimate(cmp, 0.05, wanted)))
