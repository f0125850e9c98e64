"""The window's tabs per format, the tab current at open, the Summary page's links and
Accept, and the details pane's visibility (real files from tests/data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.viewer.compare import Status
from profdiff.viewer.rules import ModuleRename

DATA = Path(__file__).parent.parent / "data"
HS1, HS2 = DATA / "hs-ad" / "v1" / "ad.prof", DATA / "hs-ad" / "v2" / "ad.prof"
FV = DATA / "format-views"
FRP = DATA / "ghc-prof"
VM = DATA / "perf" / "c-vm"


@pytest.fixture
def win(make_window):
    return make_window(1400, 900, show=True)


def _titles(w) -> list[str]:
    return [w.tabs.tabText(i) for i in range(w.tabs.count())]


def _current(w) -> str:
    return w.tabs.tabText(w.tabs.currentIndex())


CASES = {
    # name: (files, tabs in order, tab current at open)
    "prof pair": ([HS1, HS2], ["Summary", "Side by side", "Diff tree", "By cost centre",
                               "Flame", "Bottom up", "Run totals"], "Summary"),
    "prof single": ([HS1], ["Summary", "Side by side", "Diff tree", "By cost centre",
                            "Flame", "Bottom up", "Run totals"], "Side by side"),
    "rts -s pair": ([FV / "hs-ad-v1.stats.txt", FV / "hs-ad-v2.stats.txt"],
                    ["Summary", "RTS statistics"], "RTS statistics"),
    "rts -t pair": ([FV / "hs-ad-v1.t-machine-readable.txt",
                     FV / "hs-ad-v2.t-machine-readable.txt"],
                    ["Summary", "RTS statistics"], "RTS statistics"),
    "hp pair": ([FV / "hs-ad-v1.hp", FV / "hs-ad-v2.hp"],
                ["Summary", "Side by side", "Diff tree", "By cost centre", "Heap over time",
                 "Run totals"], "Heap over time"),
    "ticky pair": ([FV / "hs-ad-v1.ticky.txt", FV / "hs-ad-v2.ticky.txt"],
                   ["Summary", "Side by side", "Diff tree", "By cost centre",
                    "Ticky closures", "Ticky counters", "Run totals"], "Ticky closures"),
    "perf script pair": ([VM / "v1" / "perf.script.txt.gz", VM / "v2" / "perf.script.txt.gz"],
                         ["Summary", "Side by side", "Diff tree", "By function", "Flame",
                          "Bottom up", "Run totals"], "Summary"),
    "mem pair": ([DATA / "julia-mem" / "gvfn-test.jl.mem", DATA / "julia-mem" / "gvfn-test.jl.mem"],
                 ["Summary", "Side by side", "Diff tree", "By line", "Run totals"], "Summary"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tabs_per_format_and_the_tab_at_open(win, case):
    files, tabs, current = CASES[case]
    win.load_paths([str(p) for p in files])
    assert win.comparison is not None
    assert _titles(win) == tabs
    assert _current(win) == current
    assert win.primary_tab() is win.tabs.currentWidget()
    # nothing selected on a page without rows: no empty details pane
    if current in ("Summary", "RTS statistics", "Heap over time"):
        assert not win.details.isVisible()


def test_flat_formats_have_no_one_row_flame(win):
    """Heap bands and ticky closures have no call tree: every row is a root."""
    win.load_paths([str(FV / "hs-ad-v1.hp"), str(FV / "hs-ad-v2.hp")])
    assert not (win.comparison.parent >= 0).any()
    assert win.tabs.indexOf(win.flame) < 0
    # then a format with a call tree brings the generic tabs back, in their place
    win.load_paths([str(HS1), str(HS2)])
    assert _titles(win)[:5] == ["Summary", "Side by side", "Diff tree", "By cost centre",
                                "Flame"]
    # and a zero-row format removes them (no "nodes 0 / 0" trees)
    win.load_paths([str(FV / "hs-ad-v1.stats.txt"), str(FV / "hs-ad-v2.stats.txt")])
    assert win.comparison.n_rows == 0
    assert _titles(win) == ["Summary", "RTS statistics"]
    assert "run totals only (no call tree)" in win.status_label.text()


def test_summary_tab_lists_top_changes_and_links_to_the_tree(win):
    win.load_paths([str(HS1), str(HS2)])
    view = win.summary_view
    text = view.toPlainText()
    for part in ("Run totals", "Top changes", "AD.Eval.addGrad", "within noise",
                 "within rounding", "AD.Dual.sigmoidD → AD.Dual.logisticD: 1 cost centre"):
        assert part in text
    tree_links = [k for k in view.links_of("tree") if k.target.metric == "alloc_bytes"]
    link = tree_links[0]
    assert link.target.label == "AD.Eval.addGrad"
    view.open_link(f"pd:{view.links.index(link)}")  # as a click on the anchor does
    assert win.tabs.currentWidget() is win.diff
    row = win.diff.current_row()
    assert row == link.target.tree_rows[0]
    assert win.comparison.name[row] == "addGrad" and win.comparison.module[row] == "AD.Eval"
    assert win.details.isVisible() and "addGrad" in win.details.toPlainText()
    # back on the Summary, the details pane hides again
    win.tabs.setCurrentWidget(view)
    assert not win.details.isVisible()


def test_summary_links_to_flame_and_bottom_up(win):
    win.load_paths([str(HS1), str(HS2)])
    view = win.summary_view
    flame = next(k for k in view.links_of("flame") if k.target.label == "AD.Eval.evalDelta")
    view.activate(flame)
    assert win.tabs.currentWidget() is win.flame
    row = win.flame.selected_row()
    assert row == flame.target.tree_rows[0]
    assert win.comparison.name[row] == "evalDelta"
    bu = next(k for k in view.links_of("bottom-up") if k.target.label == "AD.Eval.addGrad")
    view.activate(bu)
    tab = win.tabs.currentWidget()
    assert win.tabs.tabText(win.tabs.currentIndex()) == "Bottom up"
    cur = tab.diff.current_row()
    assert cur >= 0 and tab.cmp.keys[cur] == "AD.Eval\x1faddGrad" and tab.cmp.parent[cur] < 0


def test_accept_on_the_summary_adds_the_rule_and_compares_again(win):
    win.load_paths([str(FRP / "ghc-7.10.3-startstopfrp-example-2016-09-26.prof"),
                    str(FRP / "ghc-7.10.3-startstopfrp-example-2016-09-27.prof")])
    view = win.summary_view
    before = win.flat_comparison
    accept = next(k for k in view.links_of("accept")
                  if k.target.text.startswith("Control.StartStop.ReworkedCore → "
                                              "Control.StartStop.Core: "))
    n = accept.target.count
    view.open_link(f"pd:{view.links.index(accept)}")
    assert win.flat_comparison is not before
    assert any(isinstance(r, ModuleRename) and r.new == "Control.StartStop.ReworkedCore"
               and r.old == "Control.StartStop.Core" for r in win.rules)
    after = win.flat_comparison

    def removed(cmp):
        return int(((cmp.status == Status.REMOVED)
                    & (cmp.module == "Control.StartStop.ReworkedCore")).sum())

    assert removed(before) - removed(after) == n
    # the page was rebuilt: the offer is gone, the Summary is still the current tab
    assert not any(k.target.text.startswith("Control.StartStop.ReworkedCore → Control.Start"
                                            "Stop.Core") for k in view.links_of("accept"))
    assert win.tabs.currentWidget() is view
    assert "rename rules: " in win.status_label.text()


def test_summary_shows_an_incomplete_run(win, tmp_path):
    text = HS2.read_text()
    cut = tmp_path / "cut.prof"
    cut.write_text(text[: len(text) * 2 // 3])
    win.load_paths([str(HS1), str(cut)])
    page = win.summary_view.toPlainText()
    assert "INCOMPLETE" in page and "cut.prof is incomplete" in page


def test_rts_summary_links_to_all_totals(win):
    win.load_paths([str(FV / "hs-ad-v1.stats.txt"), str(FV / "hs-ad-v2.stats.txt")])
    view = win.summary_view
    win.tabs.setCurrentWidget(view)
    (link,) = view.links_of("tab")
    view.activate(link)
    assert _current(win) == "RTS statistics"
    assert "bytes allocated" in view.toPlainText().lower() or "allocated" in view.toPlainText()


def test_details_pane_follows_selection(win):
    win.load_paths([str(HS1)])
    assert _current(win) == "Side by side"
    win.details.clear()
    assert not win.details.isVisible()
    row = int(np.flatnonzero(win.comparison.name == "addGrad")[0]) if \
        (win.comparison.name == "addGrad").any() else 1
    win.reveal_row(row)
    assert win.details.isVisible()


def test_rename_offer_shows_both_rows_in_the_tree(win):
    win.load_paths([str(HS1), str(HS2)])
    view = win.summary_view
    link = next(k for k in view.links_of("rename")
                if k.target.text == "AD.Dual.sigmoidD → AD.Dual.logisticD: 1 cost centre")
    view.activate(link)
    cmp = win.comparison
    assert win.tabs.currentWidget() is win.diff
    cur = win.diff.current_row()
    assert cmp.name[cur] == "sigmoidD" and cmp.status[cur] == Status.REMOVED
    added = np.flatnonzero((cmp.name == "logisticD") & (cmp.status == Status.ADDED))
    m = win.diff.models[0]
    assert m.index_for_row(int(added[0])).isValid()  # its twin is on screen too


def test_heap_pair_summary_links_to_the_band(win):
    win.load_paths([str(FV / "hs-ad-v1.hp"), str(FV / "hs-ad-v2.hp")])
    view = win.summary_view
    heap = win.tabs.currentWidget()
    assert _current(win) == "Heap over time"
    win.tabs.setCurrentWidget(view)  # the Summary is built when first shown
    assert not view.links_of("flame")  # no flame graph for heap bands
    link = view.links_of("heap")[0]
    view.activate(link)
    assert win.tabs.currentWidget() is heap
    assert heap.highlighted is not None and heap.cmp.keys[heap.highlighted] == link.target.key
    # the Summary and the heap tab agree on the band's change; one run per side of a heap
    # profile cannot judge it (census timing moves identical runs' bands by 11-34 %)
    assert link.target.verdict == "not judged" and link.target.delta == pytest.approx(
        heap.cmp.delta(link.target.metric)[heap.highlighted])
    # run totals measured once: the peak's −4.4 % is no colour (as in the Run totals
    # table: neutral within ±5 %), the mean heap's +27.1 % is worse
    import re

    page = view.page_html
    peak = re.search(r"<td>peak heap</td>.*?color:(#[0-9a-f]{6})'><b>−75,336 B", page)
    mean = re.search(r"<td>mean heap</td>.*?color:(#[0-9a-f]{6})'><b>≈\+254,691 B", page)
    assert peak and mean and (peak.group(1), mean.group(1)) == ("#777777", "#b2182b")


def _cli_counts(capsys, *args) -> dict[str, int]:
    import json

    from profdiff.viewer.cli import main

    assert main(["diff", "--json", "--top", "0", *args, str(HS1), str(HS2)]) == 0
    return json.loads(capsys.readouterr().out)["status_counts"]


@pytest.mark.parametrize("big", [False, True], ids=["noise at once", "noise in a worker"])
def test_window_counts_the_changes_the_cli_counts(win, capsys, monkeypatch, big):
    """The status bar, the diff tree's statuses and the Summary say as many rows changed
    as ``profdiff diff`` does: every sampled metric the statuses compare is judged by
    its noise in both.  Before, the window estimated only the shown metrics, so a row
    whose only change was a within-noise time read "changed" (65 of the pair's tree rows
    and 41 of its cost centres, against the CLI's 15 and 15)."""
    import threading

    from profdiff.viewer.qt import window_noise

    release = threading.Event()
    if big:  # the estimate lands after the views are built: held until released
        monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
        run = window_noise._NoiseTask.run
        monkeypatch.setattr(window_noise._NoiseTask, "run",
                            lambda task: (release.wait(30), run(task)))
    tree, flat = _cli_counts(capsys, "--tree"), _cli_counts(capsys)
    win.load_paths([str(HS1), str(HS2)])
    if big:  # no count of changes by precision alone while the estimate is out
        text = win.status_label.text()
        assert "matched (changes: judging against sampling error…)" in text
        assert f"{tree['added']:,} added, {tree['removed']:,} removed" in text
        release.set()
    win.wait_for_noise()
    assert win.comparison.status_counts() == tree
    c = tree
    assert f"{c['same'] + c['changed']:,} matched ({c['changed']:,} changed), " \
        in win.status_label.text()
    win.show_view("summary")
    win.flush_pending()
    assert win.summary_view.summary.status_counts == flat
    assert 0 < flat["changed"] < flat["same"]
    # and the judgement is not vacuous: a cost centre whose time moved 18 % within the
    # sampling error (alloc within rounding) is "same" in both
    cmp = win.flat_comparison
    row = int(np.flatnonzero(cmp.keys == "AD.Dual\x1fdotD")[0])
    assert cmp.changed_at("time_s", row) and cmp.status[row] == Status.SAME


def test_changed_only_hides_changes_within_noise(win, capsys, monkeypatch):
    """"changed only" judges the statuses before it filters, also while a worker's
    estimate is out: the rows the diff tree keeps are the rows ``profdiff diff --tree``
    calls changed, added or removed (by precision alone it kept 50 more)."""
    import json

    from profdiff.viewer.cli import main
    from profdiff.viewer.noise import Noise
    from profdiff.viewer.qt import window_noise

    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    assert main(["diff", "--json", "--top", "0", "--tree", str(HS1), str(HS2)]) == 0
    counts = json.loads(capsys.readouterr().out)["status_counts"]
    win.changed_box.setChecked(True)
    win.load_paths([str(HS1), str(HS2)])
    cmp = win.comparison
    keep = win.keep_mask(cmp)
    assert keep is not None
    assert int(keep.sum()) == counts["changed"] + counts["added"] + counts["removed"]
    unjudged = cmp.status_for(noise=Noise(1, 1, 0.05))  # no estimate: precision alone
    assert int((unjudged != Status.SAME).sum()) == int(keep.sum()) + 50
    win.wait_for_noise()
    assert np.array_equal(win.keep_mask(win.comparison), keep)


def test_three_single_runs_status_bar_counts_by_the_pairs_estimate(win):
    """Three runs of one hs-ad binary: the status bar counts the current run's changes
    judged by its pair's sampling error, as that pair opened alone does (by precision
    alone it counted 37 of 239 rows changed), and the other run's Δ cells fade by its
    own pair's estimate."""
    from profdiff.viewer.noise import Noise

    noise = DATA / "hs-ad" / "noise-v1"
    paths = [str(noise / r / "ad.prof") for r in ("run1", "run2", "run3")]
    win.load_paths(paths)
    win.wait_for_noise()
    three = win.status_label.text().split(" · ")[-1]
    cmp = win.comparison
    assert cmp.noise_of_run(1) is not None and cmp.noise_of_run(2) is cmp.noise
    assert any(c.kind == "delta" and c.run == 1 and c.metric == "time_pct"
               for c in win.diff.models[0].columns)  # run [1]'s own Δ column
    moved = np.flatnonzero(cmp.delta("time_pct", 1) != 0)
    sig = cmp.noise_of_run(1).metrics["time_pct"].significant
    assert moved.size and all(win.diff.models[0].within_noise("time_pct", int(r), 1) == (not sig[r])
                              for r in moved)
    assert any(win.diff.models[0].within_noise("time_pct", int(r), 1) for r in moved)
    assert int((cmp.status_for(noise=Noise(1, 1, 0.05)) == Status.CHANGED).sum()) > 0
    win.show_view("diff")  # the details of the row it opens on: the current run's pair
    assert "Noise — The current run [2] against the baseline." in win.details.toPlainText()
    win.show_view("flame")  # its colours are the current run's Δ: faded by that pair's
    faded = win.flame.within_noise()  # (run3 is the baseline's binary: every frame)
    assert faded is not None and faded.all()
    win.load_paths([paths[0], paths[2]])
    win.wait_for_noise()
    assert three == win.status_label.text().split(" · ")[-1]
    assert "precision alone" not in three and "(0 changed)" in three


def test_csv_from_the_window_has_the_statuses_diff_counts(win, capsys, monkeypatch, tmp_path):
    """Exported the moment the runs are in, while a worker's noise estimate is still out,
    the diff tree's CSV says "changed" for the rows ``profdiff diff --tree`` counts, not
    for every row that moved beyond precision."""
    import csv
    import threading
    from collections import Counter

    from profdiff.viewer.qt import window_noise

    release = threading.Event()
    monkeypatch.setattr(window_noise, "NOISE_SYNC_ROWS", 10)
    run = window_noise._NoiseTask.run
    monkeypatch.setattr(window_noise._NoiseTask, "run",
                        lambda task: (release.wait(30), run(task)))
    tree = _cli_counts(capsys, "--tree")
    win.load_paths([str(HS1), str(HS2)])
    win.show_view("diff")
    out = tmp_path / "tree.csv"
    try:
        assert win.export_csv(str(out))
    finally:
        release.set()
    with open(out, encoding="utf-8", newline="") as f:
        got = Counter(r["status"] for r in csv.DictReader(f))
    assert got["changed"] == tree["changed"] and got["added"] == tree["added"]
    win.wait_for_noise()


def test_three_single_runs_sig_column_and_significant_only_are_the_current_runs(win):
    """Two runs of v1 and one of v2: the 'sig.' column follows the current run's Δ (v2
    against the baseline, named "[#2]") and "significant only" keeps the rows whose
    change of that pair is significant, as with the two runs alone."""
    noise = DATA / "hs-ad" / "noise-v1"
    win.load_paths([str(noise / "run1" / "ad.prof"), str(noise / "run2" / "ad.prof"),
                    str(HS2)])
    win.wait_for_noise()
    win.show_view("diff")
    assert win.act_sig.isEnabled() and win.act_significant.isEnabled()
    win.act_sig.setChecked(True)
    sig = [c for c in win.diff.models[0].columns if c.kind == "sig"]
    assert len(sig) == 1 and sig[0].run == 2 and sig[0].header.endswith("sig. [#2]")
    win.act_significant.setChecked(True)
    cmp = win.comparison
    kept = win.keep_mask(cmp)
    mn = cmp.noise_of_run(2).metrics[win.sig_metric()]
    assert kept is not None and 0 < int(kept.sum()) <= int(mn.significant.sum())
    assert not (kept & ~mn.significant).any()

