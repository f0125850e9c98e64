"""Timed metrics (heap residency, measured durations) with one run per side are "moved",
not "changed": two runs of one binary differ in every heap band, and one run cannot say
by how much.  Repeated runs judge them by their spread.

The expected counts are read from the ``.hp`` text here, not from the reader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import Status, align
from profdiff.viewer.noise import group_comparison, single_run_noise
from profdiff.viewer.report import comparison_json

DATA = Path(__file__).resolve().parent.parent / "data"
NOISE_RUNS = [DATA / "ghc-hp-noise" / f"run{i}.hp" for i in (1, 2, 3)]
V1, V2 = DATA / "ghc-hp" / "hs-ad-v1.hp", DATA / "ghc-hp" / "hs-ad-v2.hp"
EVENTED = DATA / "speedscope" / "pyinstrument-molehill-evented.speedscope.json"


def _band_peaks(path: Path) -> dict[str, int]:
    """Each band's largest value over the complete samples of a ``.hp`` file."""
    peaks: dict[str, int] = {}
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("BEGIN_SAMPLE"):
            inside = True
        elif line.startswith("END_SAMPLE"):
            inside = False
        elif inside and "\t" in line:
            band, value = line.rsplit("\t", 1)
            peaks[band] = max(peaks.get(band, 0), int(value))
    return peaks


def _judged(a: Path, b: Path):
    cmp = align([load(a), load(b)], mode="flat")
    cmp.add_noise(single_run_noise(cmp))
    return cmp


@pytest.mark.parametrize("pair", [(NOISE_RUNS[0], NOISE_RUNS[1]), (V1, V2)],
                         ids=["one-binary", "v1-v2"])
def test_one_run_per_side_heap_rows_are_moved_not_changed(pair):
    a, b = (_band_peaks(p) for p in pair)
    cmp = _judged(*pair)
    counts = cmp.status_counts()
    assert counts["changed"] == 0
    assert counts["added"] == len(b.keys() - a.keys())
    assert counts["removed"] == len(a.keys() - b.keys())
    shared = a.keys() & b.keys()
    assert counts["same"] + counts["moved"] == len(shared)
    # every band whose peak differs in the files is moved (not "same")
    peak_moved = {k for k in shared if a[k] != b[k]}
    assert peak_moved
    moved_keys = {str(cmp.name[r]) for r in np.flatnonzero(cmp.status == Status.MOVED)}
    assert peak_moved <= moved_keys
    assert cmp.unjudged_metrics() == [m.name for m in cmp.metrics]


def test_heap_noise_is_not_judged_and_json_says_null():
    cmp = _judged(NOISE_RUNS[0], NOISE_RUNS[1])
    for m in cmp.metrics:
        mn = cmp.noise.metrics[m.name]
        assert not mn.judged and not mn.exact and np.isnan(mn.pvalue).all()
        assert not cmp.is_judged(m.name)
    doc = comparison_json(cmp, None)
    assert doc["status_counts"] == cmp.status_counts() and doc["status_counts"]["moved"] > 0
    row = next(r for r in doc["rows"] if r["status"] == "moved")
    assert all(v["p"] is None and v["significant"] is None for v in row["noise"].values())
    assert doc["runs"][0]["precision"]["peak_bytes"]["kind"] == "timed"


@pytest.mark.parametrize("new,same,changed", [(V1, 42, 5), (V2, 1, 45)], ids=["v1", "v2"])
def test_repeated_runs_judge_heap_rows_by_their_spread(new, same, changed):
    cmp = group_comparison([load(p) for p in NOISE_RUNS], [load(new)], mode="flat")
    counts = cmp.status_counts()
    assert counts["moved"] == 0 and cmp.unjudged_metrics() == []
    assert (counts["same"], counts["changed"]) == (same, changed)
    assert all(cmp.is_judged(m.name) for m in cmp.metrics)


def test_evented_speedscope_durations_are_timed(tmp_path):
    """The same pyinstrument recording with every event 7 % later: a run measured slower.
    Its durations moved; one run per side cannot call that a change."""
    doc = json.loads(EVENTED.read_text())
    for prof in doc["profiles"]:
        for ev in prof["events"]:
            ev["at"] *= 1.07
        prof["endValue"] *= 1.07
    slow = tmp_path / "slow.speedscope.json"
    slow.write_text(json.dumps(doc))
    base = load(EVENTED)
    assert all(m.timed and not m.sampled for m in base.metrics)
    cmp = _judged(EVENTED, slow)
    counts = cmp.status_counts()
    assert counts["changed"] == 0 and counts["moved"] > 0
    # every row with time in the recording moved by the 7 %
    moved = cmp.status == Status.MOVED
    assert (moved == (cmp.value("total_time_s", cmp.baseline) > 0)).all()


def test_cli_table_counts_and_legend_say_moved(capsys):
    from profdiff.viewer.cli import main

    assert main(["diff", str(NOISE_RUNS[0]), str(NOISE_RUNS[1])]) == 0
    out = capsys.readouterr().out
    a, b = (_band_peaks(p) for p in NOISE_RUNS[:2])
    assert f"0 same, 0 changed, 0 added, 0 removed, {len(a.keys() & b.keys())} moved" in out
    assert "moved = peak, mean, byte·s moved beyond precision" in out
    assert "within sampling error" not in out  # no sampled metric in a heap profile
    assert main(["diff", str(NOISE_RUNS[0]), str(NOISE_RUNS[0])]) == 0
    same = capsys.readouterr().out
    assert " moved" not in same.split("\nlegend")[0].splitlines()[-1]  # 0 moved: not said


def test_csv_and_report_verdicts_say_moved_and_not_judged(tmp_path):
    import csv

    from profdiff.viewer.export.csv_export import export_csv
    from profdiff.viewer.export.report_data import NOT_JUDGED, verdicts

    cmp = _judged(V1, V2)
    out = tmp_path / "t.csv"
    export_csv(cmp, out)
    with out.open(newline="") as f:
        statuses = [r["status"] for r in csv.DictReader(f)]
    assert statuses.count("moved") == cmp.status_counts()["moved"] > 0
    assert "changed" not in statuses
    v = verdicts(cmp, [m.name for m in cmp.metrics])
    assert set(v[cmp.status == Status.MOVED]) == {NOT_JUDGED}
    assert set(v[cmp.status == Status.ADDED]) == {"added"}


def test_summary_verdicts_are_not_judged_one_run_per_side():
    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.summary import NOT_JUDGED, REAL, build_summary

    sm = build_summary(Session.open(SessionSpec(files=(str(V1), str(V2)))))
    assert sm.status_counts["changed"] == 0 and sm.status_counts["moved"] > 0
    for mc in sm.changes:
        assert mc.n_real == 0 and mc.n_unjudged > 0
        assert {c.verdict for c in mc.changes} <= {NOT_JUDGED}
    grouped = build_summary(Session.open(SessionSpec(
        base=tuple(map(str, NOISE_RUNS)), new=(str(V2),))))
    assert any(c.verdict == REAL for mc in grouped.changes for c in mc.changes)


def test_rts_times_and_what_is_computed_from_them_are_timed():
    """``+RTS -s`` times are measured once; its byte and GC counts are not."""
    from profdiff.parsers.model import Unit

    rts = load(DATA / "ghc-rts" / "hs-ad-v1.stats.txt")
    timed = {k for k, m in rts.total_metrics.items() if m.timed}
    assert {"mut_cpu_s", "total_elapsed_s", "gc_time_pct", "productivity_pct",
            "alloc_rate_bytes_per_s"} <= timed
    assert not timed & {"bytes_allocated", "num_gcs", "max_residency_bytes", "gen0_collections"}
    derived = {k for k in timed if rts.total_metrics[k].unit is not Unit.SECONDS}
    assert all(k.startswith(("gc_", "productivity", "alloc_rate")) for k in derived)


def test_cli_totals_mark_what_was_measured_once_and_a_totals_only_pair_has_no_table(capsys):
    """``+RTS -s`` of v1 and v2: the times (and %GC, productivity, the allocation rate)
    carry the mark, bytes and counts do not; no empty row table ("0 of 0 rows")."""
    from profdiff.viewer.cli import main

    rts = DATA / "ghc-rts"
    assert main(["diff", str(rts / "hs-ad-v1.stats.txt"), str(rts / "hs-ad-v2.stats.txt")]) == 0
    out = capsys.readouterr().out
    lines = {ln.split("  ")[0]: ln for ln in out.splitlines()}
    assert "MUT CPU †" in lines and "productivity (CPU) †" in lines
    assert "allocated" in lines and "GCs" in lines  # counted: no mark
    assert "† measured once" in out
    assert "run totals only (no call tree)" in out
    assert "0 of 0 rows" not in out and "cost centre" not in out
    runs = sorted((rts).glob("hs-ad-noise-v1-run*.stats.txt"))
    assert main(["diff", "--base", *map(str, runs), "--new", str(rts / "hs-ad-v2.stats.txt")]) == 0
    assert "†" not in capsys.readouterr().out  # group means: not one timing


def test_a_significance_gate_on_a_timed_metric_is_refused_not_passed(capsys):
    """``sig.`` cannot be judged on heap residency with one run per side: exit 2 with the
    reason (never a silent pass); the plain gate still fires on the measured change."""
    from profdiff.viewer.cli import main

    assert main(["diff", str(V1), str(V2), "--fail-if", "sig.peak_bytes>10%"]) == 2
    err = capsys.readouterr().err
    assert "peak_bytes follows the run's timing" in err and "Traceback" not in err
    assert main(["diff", str(V1), str(V2), "--fail-if", "peak_bytes>10%"]) == 1
    out = capsys.readouterr().out
    assert "GHC.Types.D#" in out  # 96,736 -> 317,472 B peak
    runs = [str(p) for p in NOISE_RUNS]
    assert main(["diff", "--base", *runs, "--new", str(V2), "--fail-if",
                 "sig.peak_bytes>10%"]) == 1  # repeated runs judge it
