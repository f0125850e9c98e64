"""``--fail-if`` on rounded ``-p`` reports against the truth of the ``-P`` reports.

hs-ad writes both of the same binaries: ``ad.prof`` (``-p``: rounded percentages only)
and ``ad.P.prof`` (``-P``: exact bytes per cost centre).  Allocation is deterministic, so
a gate on allocation must not fire on ``-p`` rows where the exact bytes say it should not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profdiff.viewer.cli import main

HS = Path(__file__).parents[1] / "data" / "hs-ad"
SAMPLES = Path(__file__).parents[2] / "samples"


def _violations(capsys, a: Path, b: Path, gate: str) -> tuple[int, set[str]]:
    code = main(["diff", str(a), str(b), "--json", "--fail-if", gate, "--top", "0"])
    doc = json.loads(capsys.readouterr().out)
    return code, {f"{v['module']}.{v['name']}" for v in doc["fail_if"]["violations"]}


@pytest.mark.parametrize("gate", ["alloc_bytes>+5%", "alloc_bytes>+10%", "alloc_bytes>1M",
                                  "alloc_bytes<-5%"])
def test_rounded_gate_never_fires_where_exact_bytes_say_no(capsys, gate: str) -> None:
    _, truth = _violations(capsys, HS / "v1" / "ad.P.prof", HS / "v2" / "ad.P.prof", gate)
    _, rounded = _violations(capsys, HS / "v1" / "ad.prof", HS / "v2" / "ad.prof", gate)
    assert rounded <= truth, sorted(rounded - truth)  # no false violations


def test_the_real_regression_still_fails_the_gate(capsys) -> None:
    code, rounded = _violations(capsys, HS / "v1" / "ad.prof", HS / "v2" / "ad.prof",
                                "alloc_bytes>+10%")
    assert code == 1 and "AD.Eval.addGrad" in rounded


def test_readme_example_does_not_fire_on_rounding(capsys) -> None:
    """README: forward.go and tanhD print %alloc 0.1 in both runs; their derived bytes grow
    only because the run's total grew (+53 %), which the rounding cannot tell apart."""
    _, hits = _violations(capsys, SAMPLES / "hs-ad-v1.prof", SAMPLES / "hs-ad-v2.prof",
                          "alloc_bytes>+10%")
    assert hits and not {h for h in hits if h.endswith((".forward.go", ".tanhD"))}


def test_gate_on_a_metric_one_run_lacks_is_an_error(capsys) -> None:
    """-P has exact ``bytes``; a plain -p report has not: the gate cannot be judged, so it
    must not pass (exit 2 with the reason), rather than silently finding nothing."""
    code = main(["diff", str(HS / "v1" / "ad.P.prof"), str(HS / "v2" / "ad.prof"),
                 "--fail-if", "bytes>+5%"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be judged" in err and "ad.prof" in err


def test_diff_of_two_formats_is_an_error_naming_both(capsys) -> None:
    """A -p text report against a -pj JSON of the same program: their percentages have
    different bases, so comparing them is refused unless asked for; the JSON says so."""
    a, b = HS / "v1" / "ad.prof", HS / "v2" / "ad.prof.json"
    code = main(["diff", str(a), str(b), "--json", "--fail-if", "alloc_bytes>+5%"])
    cap = capsys.readouterr()
    assert code == 2 and "ghc-prof" in cap.err and "ghc-prof-json" in cap.err
    assert json.loads(cap.out)["errors"][0]["formats"] == ["ghc-prof", "ghc-prof-json"]
    code = main(["diff", str(a), str(b), "--json", "--allow-mixed-formats"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and any("different formats" in w for w in doc["warnings"])


@pytest.mark.parametrize("name", ["ad.prof", "ad.P.prof", "ad.prof.json"])
def test_culprit_is_the_first_row_of_every_ghc_output(capsys, name: str) -> None:
    """addGrad (0 -> 2.2 GB, 0 -> 0.9 s) leads the default table in -p, -P and -pj: ranked
    by own change against the baseline's total, not by its callers' inherited %time, nor
    by the RTS's GC cost centre (-pj) that grows with the allocation."""
    code = main(["diff", str(HS / "v1" / name), str(HS / "v2" / name), "--json", "--top", "5"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["rows"][0]["name"] == "addGrad"
    assert doc["sort"]["by"] == "rank" and doc["rows"][0]["score"] > 0.4
    assert {"time_s", "alloc_bytes"} <= set(doc["metrics"])  # the columns that changed


def test_pj_total_gate_sees_the_program_not_the_profiler(capsys) -> None:
    """-pj v1 -> v2: the header's total alloc grows by 60.4 %, of which 325 MB is the RTS's
    SYSTEM cost centre; the program's own total grows by exactly what the text reports of
    the same binaries print (+2,268,940,800 B, +52.9 %)."""
    code = main(["diff", str(HS / "v1" / "ad.prof.json"), str(HS / "v2" / "ad.prof.json"),
                 "--json", "--fail-if", "total.total_alloc_bytes>+55%"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and not doc["fail_if"]["failed"]
    assert doc["totals"]["total_alloc_bytes"]["delta"] == 6_560_334_592 - 4_291_393_792
    head = doc["totals"]["header_total_alloc_bytes"]["values"]
    assert (head[1] - head[0]) / head[0] > 0.6
