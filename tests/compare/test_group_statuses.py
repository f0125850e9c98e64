"""Statuses of a comparison of repeated runs: the run-to-run spread judges every metric
the statuses compare, counted or sampled (:meth:`Comparison._status_judge`).

Real GHC heap profiles of hs-ad: three runs of one binary (noise only) against a fourth
run of it, and against v2 (a lost specialisation: more heap).  A heap profile's peak,
mean and byte·s are not sampled counts, yet they move from run to run with the GC and
the number of heap samples; before, every row of three runs against a fourth of the same
binary read "changed"."""

from __future__ import annotations

import json
from pathlib import Path

from profdiff.viewer.cli import main

HP = Path(__file__).parents[1] / "data" / "ghc-hp"
NOISE = [HP.parent / "ghc-hp-noise" / f"run{i}.hp" for i in (1, 2, 3)]
V1, V2 = HP / "hs-ad-v1.hp", HP.parent / "format-views" / "hs-ad-v2.hp"


def _statuses(capsys, new: Path) -> tuple[dict, list[dict]]:
    code = main(["diff", "--base", *map(str, NOISE), "--new", str(new), "--json", "--top", "0"])
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out)
    return doc, doc["rows"]


def test_repeated_runs_of_one_binary_read_same_and_a_regression_changed(capsys):
    doc, rows = _statuses(capsys, V1)
    both = [r for r in rows if r["status"] in ("same", "changed")]
    same = sum(r["status"] == "same" for r in both)
    assert len(both) >= 40 and same >= 0.8 * len(both)
    _, rows2 = _statuses(capsys, V2)
    both2 = [r for r in rows2 if r["status"] in ("same", "changed")]
    assert sum(r["status"] == "changed" for r in both2) >= 0.8 * len(both2)
    blackhole = next(r for r in rows2 if r["name"] == "BLACKHOLE")
    assert blackhole["status"] == "changed"  # 304 B -> 196,448 B peak


def test_a_row_within_every_metrics_spread_is_same(capsys):
    """Each "same" row of the noise-vs-v1 comparison is within the spread of every
    metric its status compares (significant false), and each "changed" row is beyond
    it in at least one."""
    doc, rows = _statuses(capsys, V1)
    judged = ["peak_bytes", "mean_bytes", "integral_byte_s"]
    for r in rows:
        if r["status"] not in ("same", "changed"):
            continue
        sig = [bool(r["noise"][m]["significant"]) for m in judged if m in r["noise"]]
        assert len(sig) == len(judged), r["name"]
        assert any(sig) == (r["status"] == "changed"), r["name"]
