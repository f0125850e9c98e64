"""The Summary page's content (Qt-free): totals, verdicts, rename offers, warnings.

Values are read from real files in tests/data and checked against the files' own text
(GHC's header lines, ``perf report``'s event count and overhead column), and every
verdict against the comparison's own precision and noise judgement.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

from profdiff.viewer.compare import Status
from profdiff.viewer.noise import Noise
from profdiff.viewer.rules import KeyMap, ModuleRename
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.summary import NOISE, REAL, ROUNDING, build_summary, run_labels

DATA = Path(__file__).parent.parent / "data"
HS1, HS2 = DATA / "hs-ad" / "v1" / "ad.prof", DATA / "hs-ad" / "v2" / "ad.prof"
FRP = DATA / "ghc-prof"
FRP1 = FRP / "ghc-7.10.3-startstopfrp-example-2016-09-26.prof"
FRP2 = FRP / "ghc-7.10.3-startstopfrp-example-2016-09-27.prof"
VM = DATA / "perf" / "c-vm"
RTS = DATA / "format-views"


def _session(*paths, **spec) -> Session:
    return Session.open(SessionSpec(files=tuple(str(p) for p in paths), **spec))


def _header_total_alloc(path: Path) -> int:
    m = re.search(r"total alloc =\s*([\d,]+) bytes", path.read_text())
    return int(m.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def hs():
    s = _session(HS1, HS2)
    return s, build_summary(s)


def test_totals_have_a_delta_for_every_run(hs):
    _, sm = hs
    alloc = next(t for t in sm.totals if t.key == "total_alloc_bytes")
    a, b = _header_total_alloc(HS1), _header_total_alloc(HS2)
    assert alloc.values == (a, b)
    assert alloc.deltas == (None, b - a) and alloc.rels[1] == pytest.approx((b - a) / a)
    assert not alloc.sampled
    time = next(t for t in sm.totals if t.key == "total_time_s")
    assert time.values == (2.88, 3.79) and time.sampled  # "total time = 2.88 secs"


def test_three_runs_get_a_delta_each():
    s = _session(HS1, HS2, HS1)
    sm = build_summary(s)
    alloc = next(t for t in sm.totals if t.key == "total_alloc_bytes")
    a, b = _header_total_alloc(HS1), _header_total_alloc(HS2)
    assert alloc.deltas == (None, b - a, 0.0)
    assert [r.role for r in sm.runs] == ["baseline", "run 1", "current"]
    # same file names in different folders: the labels tell them apart
    assert [r.label for r in sm.runs] == ["v1/ad.prof", "v2/ad.prof", "v1/ad.prof"]
    assert run_labels(["a/v1/x.prof", "a/v2/x.prof"]) == ["v1/x.prof", "v2/x.prof"]


def test_top_changes_carry_the_comparisons_own_verdicts(hs):
    s, sm = hs
    flat = s.flat
    assert [mc.metric for mc in sm.changes] == ["time_s", "alloc_bytes"]
    seen = set()
    for mc in sm.changes:
        sig = flat.noise.metrics[mc.metric].significant if mc.metric in flat.noise.metrics \
            else None
        changed = flat.changed_mask(mc.metric)
        for c in mc.changes:
            r = c.flat_row
            assert c.key == flat.keys[r]
            assert c.delta == pytest.approx(flat.delta(mc.metric)[r]) and c.delta != 0
            if not changed[r]:
                assert c.verdict == ROUNDING
                assert abs(c.delta) <= flat.precision_of(mc.metric)[r] * (1 + 1e-9)
            elif sig is not None and flat.metric_by_name[mc.metric].sampled and not sig[r]:
                assert c.verdict == NOISE
            else:
                assert c.verdict == REAL
            seen.add(c.verdict)
        # real changes first, each list by size
        verdicts = [c.verdict for c in mc.changes]
        n_real = verdicts.count(REAL)
        assert verdicts[:n_real] == [REAL] * n_real
        sizes = [abs(c.delta) for c in mc.changes[:n_real]]
        assert sizes == sorted(sizes, reverse=True)
        assert mc.n_real >= n_real
    assert seen == {REAL, NOISE, ROUNDING}  # this pair has all three
    alloc = next(mc for mc in sm.changes if mc.metric == "alloc_bytes")
    top = alloc.changes[0]
    assert top.label == "AD.Eval.addGrad" and top.verdict == REAL and top.worse
    assert top.base == 0 and top.new == pytest.approx(top.delta)
    # the share is against the baseline's total allocation (the header's figure)
    # (the sum over the tree, which the 0.1 %-rounded shares put within 0.5 % of it)
    assert top.share == pytest.approx(top.delta / _header_total_alloc(HS1), rel=5e-3)
    assert alloc.precision == "rounded"  # a -p report: %alloc x total


def test_change_links_to_its_call_sites_in_the_tree(hs):
    s, sm = hs
    tree = s.tree
    for mc in sm.changes:
        for c in mc.changes:
            rows = np.flatnonzero(tree.keys == c.key)
            assert sorted(c.tree_rows) == sorted(rows.tolist())
            d = np.abs(np.nan_to_num(tree.delta(mc.metric)[list(c.tree_rows)]))
            assert list(d) == sorted(d, reverse=True)  # largest change first


def test_renamed_function_is_offered_as_a_rule(hs):
    s, sm = hs
    offers = {o.text: o for o in sm.renames}
    assert "AD.Dual.sigmoidD → AD.Dual.logisticD: 1 cost centre" in offers
    o = offers["AD.Dual.sigmoidD → AD.Dual.logisticD: 1 cost centre"]
    assert isinstance(o.rule, KeyMap) and o.kind == "name"
    before = s.flat.status_counts()
    after = s.with_spec(rules=(o.rule,)).flat
    assert after.status_counts()["removed"] == before["removed"] - 1
    row = int(np.flatnonzero(after.keys == "AD.Dual\x1fsigmoidD")[0])
    assert after.status[row] != Status.REMOVED


def test_moved_module_is_one_rule_with_its_count():
    s = _session(FRP1, FRP2)
    sm = build_summary(s)
    flat = s.flat
    core = next(o for o in sm.renames if o.new == "Control.StartStop.Core")
    assert core.old == "Control.StartStop.ReworkedCore" and core.kind == "module"
    assert isinstance(core.rule, ModuleRename)
    # the count: removed cost centres of the old module whose name the new one added
    st = flat.status
    removed = {str(n) for n, m in zip(flat.name[st == Status.REMOVED],
                                      flat.module[st == Status.REMOVED], strict=True)
               if m == "Control.StartStop.ReworkedCore"}
    added = {str(n) for n, m in zip(flat.name[st == Status.ADDED],
                                    flat.module[st == Status.ADDED], strict=True)
             if m == "Control.StartStop.Core"}
    assert core.count == len(removed & added) > 20
    assert core.text == f"Control.StartStop.ReworkedCore → Control.StartStop.Core: " \
                        f"{core.count} cost centres"
    # accepting it matches exactly those cost centres
    after = s.with_spec(rules=(core.rule,)).flat
    gone = before_after_removed(flat, after, "Control.StartStop.ReworkedCore")
    assert gone == core.count
    assert not any(o.new == "Control.StartStop.Core" for o in build_summary(
        s.with_spec(rules=(core.rule,))).renames)


def before_after_removed(before, after, module: str) -> int:
    def n(cmp):
        st = cmp.status
        return int(((st == Status.REMOVED) & (cmp.module == module)).sum())

    return n(before) - n(after)


def test_perf_pair_totals_and_top_change_match_perf_report():
    s = _session(VM / "v1" / "perf.script.txt.gz", VM / "v2" / "perf.script.txt.gz")
    sm = build_summary(s)
    counts = []
    shares = []
    for v in ("v1", "v2"):
        text = (VM / v / "perf.report.txt").read_text()
        counts.append(int(re.search(r"Event count \(approx\.\): (\d+)", text).group(1)))
        shares.append(float(re.search(r"([\d.]+)%\s+vm\s+vm\s+\[\.\] vm_run", text).group(1)))
    period = next(t for t in sm.totals if t.key == "total_period")
    assert period.values == tuple(counts) and period.sampled
    (mc,) = sm.changes
    assert mc.metric == "self_period" and mc.precision == "sampled"
    top = mc.changes[0]
    assert top.label == "vm.vm_run.constprop.0" and top.verdict == REAL
    # perf report's self overhead column, rounded to 0.01 %
    assert top.base / counts[0] * 100 == pytest.approx(shares[0], abs=0.005)
    assert top.new / counts[1] * 100 == pytest.approx(shares[1], abs=0.005)
    # the rest are a few samples each: within noise, and labelled so
    assert all(c.verdict == NOISE for c in mc.changes[1:])
    with gzip.open(VM / "v1" / "perf.script.txt.gz", "rt") as f:
        assert "cpu-clock:ppp" in f.readline()
    assert not [w for w in sm.warnings if w.kind == "incomparable"]


def test_the_run_level_speed_the_statuses_took_out_is_noted():
    """The funcab pair (one program, 169 and 228 samples: perf attached for longer): the
    Summary says, as ``diff`` does, that rows were judged after a run-level factor of
    x1.350 resting on two rows, so its "within noise" beside +38 % can be understood."""
    perf = DATA / "perf" / "script"
    s = _session(perf / "flamegraph-perf-funcab-cmd-01.txt",
                 perf / "flamegraph-perf-funcab-pid-01.txt")
    sm = build_summary(s)
    (note,) = [w.text for w in sm.warnings if "run-level speed" in w.text]
    assert "35.0 % more time (x1.350, from only 2 rows" in note
    (mc,) = sm.changes
    assert {c.verdict for c in mc.changes} == {NOISE}
    assert sm.status_counts[Status.CHANGED.label] == 0


def test_incomplete_run_is_a_warning(tmp_path):
    text = HS2.read_text()
    cut = tmp_path / "cut.prof"
    cut.write_text(text[: len(text) * 2 // 3])
    s = _session(HS1, cut)
    assert s.runs[1].incomplete
    sm = build_summary(s)
    assert sm.runs[1].incomplete and sm.runs[1].incomplete_reason
    (w,) = [w for w in sm.warnings if w.kind == "incomplete"]
    assert w.run == 1 and "cut.prof is incomplete" in w.text
    assert s.runs[1].incomplete_reason in w.text


def test_rows_absent_from_a_cut_file_are_not_changes(tmp_path, capsys):
    """v2's ad.prof cut after line 88: 77 cost centres are absent only because the rest
    of the file was not read.  They are no culprits (diff ranks them last and says why),
    and the Summary lists none of them as a change (it listed addPending "removed,
    -100 %, real" first)."""
    from profdiff.viewer.cli import main
    from profdiff.viewer.ranking import rank_changes

    cut = tmp_path / "cut.prof"
    cut.write_text("".join(HS2.read_text().splitlines(keepends=True)[:88]))
    s = _session(HS1, cut)
    flat = s.judge_statuses(s.flat)
    unread = flat.unread()
    assert int(unread.sum()) == int((flat.status == Status.REMOVED).sum()) > 50
    r = rank_changes(flat)
    assert not r.score[unread].any()
    assert unread[r.order[-int(unread.sum()):]].all()  # last
    sm = build_summary(s)
    listed = [c for mc in sm.changes for c in mc.changes]
    assert not any(unread[c.flat_row] for c in listed)
    (w,) = [w for w in sm.warnings if w.kind == "incomplete"]
    assert f"{int(unread.sum())} rows absent from the part read are not listed" in w.text
    assert main(["diff", str(HS1), str(cut), "--top", "10"]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[-2]
    assert table.lstrip().startswith("#  cost centre") and len(table.splitlines()) == 11
    assert " removed " not in table
    assert f"{int(unread.sum())} rows are absent from the part of cut.prof that was read" in out


def test_mixed_rts_formats_are_a_warning():
    s = _session(RTS / "hs-ad-v1.stats.txt", RTS / "hs-ad-v2.t-machine-readable.txt")
    sm = build_summary(s)
    texts = [w.text for w in sm.warnings if w.kind == "incomparable"]
    assert any(t.startswith("runs have different formats: ghc-rts-s, ghc-rts-t")
               for t in texts)
    assert sm.changes == () and sm.renames == ()  # no rows: nothing ranked
    assert sm.totals  # but the run totals are there


def test_rts_pair_totals():
    s = _session(RTS / "hs-ad-v1.stats.txt", RTS / "hs-ad-v2.stats.txt")
    sm = build_summary(s)
    m = re.search(r"([\d,]+) bytes allocated in the heap",
                  (RTS / "hs-ad-v1.stats.txt").read_text())
    alloc = next(t for t in sm.totals if t.key == "bytes_allocated")
    assert alloc.values[0] == int(m.group(1).replace(",", ""))
    assert sm.n_totals >= len(sm.totals) and sm.n_rows == 0


def test_three_runs_judge_the_current_run_against_noise():
    """v1 run again (same build, tests/data/hs-ad/noise-v1/run2) as the current run of
    three: its allocation is identical to v1's (the headers agree) and its timing moves
    are sampling noise, so nothing is called real."""
    again = DATA / "hs-ad" / "noise-v1" / "run2" / "ad.prof"
    assert _header_total_alloc(again) == _header_total_alloc(HS1)
    sm = build_summary(_session(HS1, HS2, again))
    by = {mc.metric: mc for mc in sm.changes}
    assert by["alloc_bytes"].n_real == 0 and by["alloc_bytes"].changes == ()
    assert by["time_s"].changes and by["time_s"].n_real == 0
    assert {c.verdict for c in by["time_s"].changes} == {NOISE}


def test_different_rts_options_warn():
    """StartStopFRP Oct 14 ran ``+RTS -p -hc``, Nov 28 ``+RTS -p -hy`` (line 3 of each)."""
    a = FRP / "ghc-7.10.3-startstopfrp-example-2016-10-14.prof"
    b = FRP / "ghc-7.10.3-startstopfrp-example-2016-11-28.prof"
    opts = [a.read_text().splitlines()[2].split("+RTS")[1].split("-RTS")[0].split()
            for a in (a, b)]
    assert sorted(opts[0]) != sorted(opts[1])
    sm = build_summary(_session(a, b))
    (w,) = [w for w in sm.warnings if w.text.startswith("runs used different RTS options")]
    assert w.kind == "incomparable"
    for o in opts:
        assert " ".join(sorted(o)) in w.text


def test_one_run_lists_its_top_costs_as_perf_report_does():
    """One run: no changes, its largest own costs; each share matches ``perf report``'s
    self overhead column (tests/data/perf/c-vm/v1/perf.report.txt, 0.01 % rounding)."""
    sm = build_summary(_session(VM / "v1" / "perf.script.txt.gz"))
    assert sm.changes == () and not sm.compared
    (hot,) = sm.hotspots
    report = {}
    for line in (VM / "v1" / "perf.report.txt").read_text().splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\S+\s+(\S+)\s+\[[.k]\] (\S+)\s*$", line)
        if m:
            report.setdefault(f"{m.group(2)}.{m.group(3)}", float(m.group(1)))
    assert hot.changes[0].label == "vm.vm_run.constprop.0"
    for c in hot.changes:
        assert c.share * 100 == pytest.approx(report[c.label], abs=0.005), c.label
        assert c.tree_rows
    shares = [c.share for c in hot.changes]
    assert shares == sorted(shares, reverse=True)


def test_summary_counts_the_changes_the_cli_table_counts(hs, capsys):
    """The Summary's "N changed" is the CLI's: both judge the sampled metrics the
    statuses compare by their noise (:meth:`Session.judge_statuses`); judged by precision
    alone, the pair's within-noise time changes made 41 "changed" of 126."""
    import json

    from profdiff.viewer.cli import main

    assert main(["diff", "--json", "--top", "0", str(HS1), str(HS2)]) == 0
    doc = json.loads(capsys.readouterr().out)
    _, sm = hs
    assert sm.status_counts == doc["status_counts"]
    unjudged = _session(HS1, HS2).flat  # no noise estimate: precision alone
    assert sm.status_counts["changed"] < unjudged.status_counts()["changed"]
    assert sm.status_counts["added"] == unjudged.status_counts()["added"]


def test_share_of_run_is_a_share_of_the_reports_own_total():
    """hcy2c: GHC's table prints addULLs at 63.2 % of "total time = 187.08 secs"; the
    rows, each rounded to 0.1 %, sum to less than the whole, so a share of their sum
    read 65 %.  The Summary's share is of the total the report declares."""
    ghc = DATA / "ghc-prof"
    a = ghc / "ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof"
    b = ghc / "ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof"
    total = float(re.search(r"total time\s*=\s*([\d.]+) secs", a.read_text()).group(1))
    top = re.search(r"^addULLs\s+\S+\s+([\d.]+)\s", a.read_text(), re.M)
    sm = build_summary(_session(a, b))
    time = next(mc for mc in sm.changes if mc.metric == "time_s")
    c = next(c for c in time.changes if c.label.endswith("addULLs"))
    assert c.status == "removed"
    assert c.share == pytest.approx(-float(top.group(1)) / 100, abs=0.0006)
    assert c.delta / total == pytest.approx(c.share)


def test_a_readers_warnings_are_in_the_summary(tmp_path):
    """A skipped line (a lenient read) qualifies the numbers: the Summary lists it as a
    warning of that run, as diff's header and the reports do."""
    lines = HS1.read_text().splitlines(keepends=True)
    cols = lines[39].split()
    lines[39] = lines[39].replace(f" {cols[3]} ", " 1x2 ", 1)
    bad = tmp_path / "bad.prof"
    bad.write_text("".join(lines))
    sm = build_summary(_session(bad, HS2, lenient=True))
    reader = [w for w in sm.warnings if w.kind == "reader"]
    assert len(reader) == 1 and reader[0].text.startswith("[0] bad.prof: line 40: skipped")
    assert not [w for w in build_summary(_session(HS1, HS2)).warnings if w.kind == "reader"]


def test_the_pairs_note_names_modules_only_where_runs_have_them():
    """Too many unmatched rows to score pairwise: the note says only moved modules are
    looked for, except for runs without modules (folded stacks), where none can move."""
    folded = DATA / "folded"
    s = _session(folded / "inferno-vertx-collapsed-unsorted-1.txt",
                 folded / "inferno-vertx-collapsed-unsorted-2.txt")
    notes = [n.text for n in build_summary(s).warnings if "too many to score" in n.text]
    assert notes == ["47 removed and 42 added rows: too many to score every pair here; "
                     "Tools ▸ Unmatched rows scores every pair"]
    sp = DATA / "speedscope"
    s = _session(sp / "pyspy-0.4.1-self-driving-sim-run-a.speedscope.json.gz",
                 sp / "pyspy-0.4.1-self-driving-sim-run-b.speedscope.json.gz")
    notes = [n.text for n in build_summary(s).warnings if "too many to score" in n.text]
    assert len(notes) == 1 and "so only moved modules are looked for" in notes[0]


def test_three_single_runs_judge_each_run_by_its_own_pair():
    """Three -p runs of one hs-ad binary (−17.8 % and −31.5 % total time: run-to-run
    noise): each run's statuses are judged by the sampling error of its pair with the
    baseline, so each reads as that pair compared alone (by precision alone they read
    "39 changed"); the Summary says what they rest on, and how to give repeated runs."""
    noise = DATA / "hs-ad" / "noise-v1"
    paths = [noise / r / "ad.prof" for r in ("run1", "run2", "run3")]
    s = _session(*paths)
    notes = [n.text for n in build_summary(s).warnings]
    said = [t for t in notes if t.startswith("3 runs, each compared with the baseline")]
    assert len(said) == 1 and "--base A1 A2 --new B1 B2" in said[0]
    assert "sampling error of that pair" in said[0]
    flat = s.flat
    for run in (1, 2):
        pair = _session(paths[0], paths[run]).judge_statuses(_session(paths[0], paths[run]).flat)
        alone = dict(zip(pair.keys.tolist(), pair.status.tolist(), strict=True))
        mine = dict(zip(flat.keys.tolist(), flat.status_of_run(run).tolist(), strict=True))
        assert mine == alone
        assert Status.CHANGED not in mine.values()  # one binary, run three times
        assert sum(x != Status.SAME for x in flat.status_for(run, Noise(1, 1, 0.05))) > 0
    speed = [t for t in notes if t.startswith("run [2] run3/ad.prof: run-level speed")]
    pair_notes = [n.text for n in build_summary(_session(paths[0], paths[2])).warnings]
    alone = [t for t in pair_notes if t.startswith("run-level speed")]
    assert len(speed) == 1 and speed[0] == "run [2] run3/ad.prof: " + alone[0]
    assert "less time" in alone[0]
    two = _session(noise / "run1" / "ad.prof", noise / "run2" / "ad.prof")
    assert not any(n.text.startswith("2 runs, each") for n in build_summary(two).warnings)
