"""speedscope export: structure and weights on built trees (exact by construction),
round trips on real sample pairs, the CLI, and the real speedscope app (speedscope-check).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tool_requirements import require

from profdiff.parsers import load
from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer import __version__
from profdiff.viewer.cli import main
from profdiff.viewer.compare import align
from profdiff.viewer.export.speedscope import (
    SCHEMA_URL,
    ExportError,
    build_speedscope,
    export_speedscope,
    self_weights,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "export"
REPO = Path(__file__).resolve().parents[2]

GHC_V1, GHC_V2 = DATA / "hs-ad-v1.prof", DATA / "hs-ad-v2.prof"
PERF_V1, PERF_V2 = DATA / "c-vm-v1.perf.script.txt.gz", DATA / "c-vm-v2.perf.script.txt.gz"
PPROF_1 = DATA / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz"
PPROF_2 = DATA / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz"
TICKY_V1, TICKY_V2 = DATA / "hs-ad-v1.ticky.txt", DATA / "hs-ad-v2.ticky.txt"
MEM = DATA / "gvfn-test.jl.mem"
GHC_JSON = DATA / "hs-ad-v1.prof.json"

# GHC-like metrics: percent default, absolute self time, inclusive twin, node counts.
GHC_METRICS = [
    Metric("entries", Unit.COUNT, Kind.NODE),
    Metric("time_pct", Unit.PERCENT, Kind.SELF),
    Metric("time_s", Unit.SECONDS, Kind.SELF),
    Metric("alloc_bytes", Unit.BYTES, Kind.SELF),
    Metric("inherited_time_s", Unit.SECONDS, Kind.INCLUSIVE, self_of="time_s"),
    Metric("inherited_alloc_bytes", Unit.BYTES, Kind.INCLUSIVE),  # no self_of: derived
]


def ghc_like(nodes, path="run.prof"):
    """nodes: (parent index, module, name, src, line, time_s, alloc_bytes), parent-first."""
    b = TreeBuilder(["entries", "time_pct", "time_s", "alloc_bytes"])
    total = sum(n[5] for n in nodes)
    for par, mod, name, src, line, t, a in nodes:
        f = b.frame(name, mod, src=src, line=line, kind="cc")
        b.add_child(par, f, entries=1, time_pct=100 * t / (total or 1), time_s=t, alloc_bytes=a)
    return b.build(path=path, format="ghc-prof", metrics=GHC_METRICS,
                   inclusive={"inherited_time_s": "time_s", "inherited_alloc_bytes": "alloc_bytes"},
                   default_metric="time_pct")


BASE = ghc_like([
    (-1, "Main", "main", "src/Main.hs:(10,1)-(12,20)", 10, 0.0, 100),
    (0, "Main", "go", "src/Main.hs:20:3-30", 20, 1.5, 1000),
    (0, "Lib", "go", "src/Lib.hs:5:1-9", 5, 0.5, 0),
    (1, "Lib", "helper", "src/Lib.hs:9:1-20", 9, 0.25, 50),
], path="v1/ad.prof")
NEW = ghc_like([
    (-1, "Main", "main", "src/Main.hs:(10,1)-(12,20)", 10, 0.0, 100),
    (0, "Main", "go", "src/Main.hs:20:3-30", 20, 1.0, 3000),
    (0, "Lib", "go", "src/Lib.hs:5:1-9", 5, 0.75, 0),
    (0, "Lib", "fresh", "src/Lib.hs:40:1-9", 40, 0.125, 8),
], path="v2/ad.prof")


def stacks_of(doc, prof):
    """{(frame names root first): weight} of one profile."""
    names = [f["name"] for f in doc["shared"]["frames"]]
    out = {}
    for s, w in zip(prof["samples"], prof["weights"], strict=True):
        key = tuple(names[i] for i in s)
        assert key not in out
        out[key] = w
    return out


# ------------------------------------------------------------------------------------------
# built trees: exact expectations
# ------------------------------------------------------------------------------------------
def test_document_structure_and_weights(tmp_path):
    cmp = align([BASE, NEW])
    out = tmp_path / "x.speedscope.json"
    s = export_speedscope(cmp, out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["$schema"] == SCHEMA_URL
    assert doc["exporter"] == f"profdiff@{__version__}"
    assert doc["name"] == "profdiff: v1/ad.prof vs v2/ad.prof [time_s]"
    kinds = [p["kind"] for p in s["profiles"]]
    assert kinds == ["base", "run", "grew", "shrank"]
    names = [p["name"] for p in doc["profiles"]]
    assert names[0] == "base: v1/ad.prof [time_s]"
    assert names[1] == "new: v2/ad.prof [time_s]"
    assert names[2].startswith("grew (new − base where positive): v2/ad.prof vs v1/ad.prof")
    assert names[3].startswith("shrank (base − new where positive): v2/ad.prof vs v1/ad.prof")
    assert doc["activeProfileIndex"] == 2  # the grew profile of the compared run
    assert all(p["type"] == "sampled" and p["unit"] == "seconds" for p in doc["profiles"])
    # time_pct is the default metric; the export uses its absolute twin time_s
    assert s["metric"] == "time_s" and s["weight_metric"] == "time_s"

    base, new, grew, shrank = (stacks_of(doc, p) for p in doc["profiles"])
    # GHC cost centres are qualified by module; main has 0 s self time and is dropped
    assert base == {("Main.main", "Main.go"): 1.5, ("Main.main", "Lib.go"): 0.5,
                    ("Main.main", "Main.go", "Lib.helper"): 0.25}
    assert new == {("Main.main", "Main.go"): 1.0, ("Main.main", "Lib.go"): 0.75,
                   ("Main.main", "Lib.fresh"): 0.125}
    assert grew == {("Main.main", "Lib.go"): 0.25, ("Main.main", "Lib.fresh"): 0.125}
    assert shrank == {("Main.main", "Main.go"): 0.5, ("Main.main", "Main.go", "Lib.helper"): 0.25}
    for p in doc["profiles"]:
        assert p["endValue"] == pytest.approx(sum(p["weights"]))
        assert p["startValue"] == 0
    # zero weights dropped and counted: main (0 s) in both runs
    assert [p["dropped_zero"] for p in s["profiles"]] == [1, 1, 3, 3]
    assert s["unit"] == "seconds"


def test_frames_carry_file_and_line():
    doc, _ = build_speedscope(align([BASE, NEW]))
    frames = {f["name"]: f for f in doc["shared"]["frames"]}
    assert frames["Main.go"] == {"name": "Main.go", "file": "src/Main.hs", "line": 20}
    assert frames["Main.main"] == {"name": "Main.main", "file": "src/Main.hs", "line": 10}
    assert frames["Lib.fresh"]["file"] == "src/Lib.hs"
    assert len(frames) == len(doc["shared"]["frames"])  # Main.go and Lib.go stay distinct


def test_bytes_metric_and_inclusive_metrics():
    cmp = align([BASE, NEW])
    doc, s = build_speedscope(cmp, "alloc_bytes")
    assert s["unit"] == "bytes" and doc["profiles"][0]["unit"] == "bytes"
    assert stacks_of(doc, doc["profiles"][0])[("Main.main",)] == 100
    # an inclusive metric with self_of uses the self metric
    doc2, s2 = build_speedscope(cmp, "inherited_time_s")
    assert s2["weight_metric"] == "time_s" and "self metric time_s" in s2["self_from"]
    assert doc2["profiles"] == build_speedscope(cmp, "time_s")[0]["profiles"]
    # an inclusive metric without one: self = inclusive - children, equal to the true self
    doc3, s3 = build_speedscope(cmp, "inherited_alloc_bytes")
    assert "derived" in s3["self_from"]
    assert [p["weights"] for p in doc3["profiles"]] == [p["weights"] for p in doc["profiles"]]


def test_percent_metric_has_unit_none_and_negative_self_clipped():
    cmp = align([BASE, NEW])
    doc, _ = build_speedscope(cmp, "time_pct")
    assert {p["unit"] for p in doc["profiles"]} == {"none"}
    assert sum(doc["profiles"][0]["weights"]) == pytest.approx(100)
    w, m, _ = self_weights(cmp, "inherited_alloc_bytes")
    assert (w >= 0).all() and m.name == "inherited_alloc_bytes"


def test_identical_runs_leave_out_empty_difference_profiles():
    doc, s = build_speedscope(align([BASE, BASE]))
    assert [p["kind"] for p in s["profiles"]] == ["base", "run"]
    assert len(s["omitted"]) == 2 and "no positive weight" in s["omitted"][0]
    assert doc["activeProfileIndex"] == 0


def test_single_run_and_three_runs():
    doc, s = build_speedscope(align([NEW]))
    assert [p["name"] for p in doc["profiles"]] == ["ad.prof [time_s]"]
    assert doc["activeProfileIndex"] == 0
    doc3, s3 = build_speedscope(align([BASE, NEW, NEW]))
    # labels are made distinct; each non-baseline run gets its own grew/shrank pair
    assert [p["kind"] for p in s3["profiles"]] == ["base", "run", "run", "grew", "shrank",
                                                   "grew", "shrank"]
    assert s3["profiles"][1]["name"].startswith("run 1: ")
    assert s3["active_profile"].startswith("grew")
    assert doc3["profiles"][doc3["activeProfileIndex"]]["name"] == s3["profiles"][5]["name"]


def test_flat_comparison_exports_module_then_name():
    doc, s = build_speedscope(align([BASE, NEW], mode="flat"))
    assert s["mode"] == "flat"
    base = stacks_of(doc, doc["profiles"][0])
    assert base == {("Main", "go"): 1.5, ("Lib", "go"): 0.5, ("Lib", "helper"): 0.25}


def test_errors():
    cmp = align([BASE, NEW])
    with pytest.raises(ExportError, match="unknown metric 'nope'"):
        build_speedscope(cmp, "nope")
    other = TreeBuilder(["x"])
    other.add_stack([other.frame("a", "M")], x=1)
    p = other.build(path="o", format="test", metrics=[Metric("x", Unit.COUNT, Kind.SELF)])
    with pytest.raises(ExportError, match="missing in o"):
        build_speedscope(align([BASE, p]), "time_s")
    zero = ghc_like([(-1, "Main", "main", "", 0, 0.0, 0)])
    with pytest.raises(ExportError, match="nothing to export"):
        build_speedscope(align([zero]), "time_s")
    with pytest.raises(ExportError, match="cannot write"):
        export_speedscope(cmp, Path("/nonexistent-dir/x.json"))


# ------------------------------------------------------------------------------------------
# real pairs: round trips against the source runs
# ------------------------------------------------------------------------------------------
def _self_name(p, metric):
    m = p.metric(metric)
    return m.self_of if m.kind is Kind.INCLUSIVE and m.self_of else metric


def check_round_trip(runs, doc, s, mode="tree"):
    """Each run profile sums to the run's total self cost; grew/shrank to the +/- deltas."""
    wname = s["weight_metric"]
    by_kind = {}
    for info, prof in zip(s["profiles"], doc["profiles"], strict=True):
        by_kind.setdefault(info["kind"], []).append((info, prof))
        assert prof["weights"] and min(prof["weights"]) > 0
        assert prof["endValue"] == pytest.approx(sum(prof["weights"]), rel=1e-9)
    totals = [float(np.sum(p.values[wname])) for p in runs]
    for info, prof in by_kind.get("base", []) + by_kind.get("run", []):
        src = runs[info["run"]]
        assert sum(prof["weights"]) == pytest.approx(totals[info["run"]], rel=1e-9)
        if mode == "tree":  # one stack per source node with a nonzero self cost
            assert len(prof["samples"]) == int(np.count_nonzero(src.values[wname]))
    b = 0
    for r in range(1, len(runs)):
        grew = [p for i, p in by_kind.get("grew", []) if i["run"] == r]
        shrank = [p for i, p in by_kind.get("shrank", []) if i["run"] == r]
        g = sum(grew[0]["weights"]) if grew else 0.0
        sh = sum(shrank[0]["weights"]) if shrank else 0.0
        assert g - sh == pytest.approx(totals[r] - totals[b], rel=1e-9, abs=1e-9)


def test_perf_pair_round_trip(tmp_path):
    runs = [load(PERF_V1), load(PERF_V2)]
    cmp = align(runs)
    doc, s = build_speedscope(cmp)
    assert s["weight_metric"] == "self_period" and s["unit"] == "nanoseconds"
    check_round_trip(runs, doc, s)
    # the hot stack as perf recorded it: libc -> main -> run_benchmark -> vm_run
    base = stacks_of(doc, doc["profiles"][0])
    hot = ("__libc_start_call_main", "main", "run_benchmark.constprop.0.isra.0",
           "vm_run.constprop.0")
    p = runs[0]
    node = [i for i in range(p.n_nodes) if p.path_labels(i)[-1] == "vm.vm_run.constprop.0"
            and len(p.path_labels(i)) == 4]
    assert base[hot] == p.values["self_period"][node[0]] == 2984984982
    frames = {f["name"]: f for f in doc["shared"]["frames"]}
    assert frames["vm_run.constprop.0"]["file"] == "vm"  # the dso
    assert frames["__libc_start_call_main"]["file"] == "libc.so.6"
    # samples as a metric: unit none, sums to the sample counts perf reported
    doc2, s2 = build_speedscope(cmp, "total_samples")
    assert s2["weight_metric"] == "self_samples" and s2["unit"] == "none"
    assert sum(doc2["profiles"][0]["weights"]) == 3130
    assert sum(doc2["profiles"][1]["weights"]) == 4768


def test_pprof_pair_round_trip():
    runs = [load(PPROF_1), load(PPROF_2)]
    doc, s = build_speedscope(align(runs))
    assert s["weight_metric"] == "self_samples"
    check_round_trip(runs, doc, s)
    assert sum(doc["profiles"][0]["weights"]) == 18894
    assert sum(doc["profiles"][1]["weights"]) == 7006
    # pprof frames carry the source file and line of the function
    f = next(f for f in doc["shared"]["frames"] if f.get("file", "").endswith("cladify_tree.jl"))
    assert f["file"].startswith("/Users/") and f["line"] > 0


def test_ticky_pair_flat_format_module_closure_stacks():
    runs = [load(TICKY_V1), load(TICKY_V2)]
    cmp = align(runs)
    doc, s = build_speedscope(cmp)
    assert s["weight_metric"] == "alloc" and s["unit"] == "bytes"
    check_round_trip(runs, doc, s, mode="flat")
    assert sum(doc["profiles"][0]["weights"]) == 1513877088  # ticky table's total alloc
    base = stacks_of(doc, doc["profiles"][0])
    assert all(len(k) == 2 for k in base)  # module frame -> closure frame
    assert ("Main", "$wevaluate{v r9tV} (Main) (fun)") in base
    assert s["stacks"].startswith("module > name")
    # each module's closures are adjacent, so the module is one bar in the time-order view
    mods = [smp[0] for smp in doc["profiles"][0]["samples"]]
    runs_of = [m for i, m in enumerate(mods) if i == 0 or mods[i - 1] != m]
    assert len(runs_of) == len(set(mods)) > 1


def test_julia_mem_single_run():
    run = load(MEM)
    doc, s = build_speedscope(align([run]))
    assert s["unit"] == "bytes" and len(doc["profiles"]) == 1
    check_round_trip([run], doc, s, mode="flat")
    assert sum(doc["profiles"][0]["weights"]) == 343594032
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert "gvfn-test.jl" in names  # the file frame above its lines
    line_frames = [f for f in doc["shared"]["frames"] if f.get("line")]
    assert line_frames and all(f["file"] == "gvfn-test.jl" for f in line_frames)


def _ghc_runs():
    return [load(GHC_V1), load(GHC_V2)]


def test_ghc_prof_pair_round_trip():
    runs = _ghc_runs()
    cmp = align(runs)
    doc, s = build_speedscope(cmp)
    assert s["weight_metric"] == "time_s" and s["unit"] == "seconds"
    check_round_trip(runs, doc, s)
    # frames: module-qualified cost centres with the file and first line of their SRC
    frames = {(f["name"], f.get("line")): f for f in doc["shared"]["frames"]}
    assert frames[("AD.Dual.+", 73)]["file"] == "AD/Dual.hs"
    assert frames[("Main.evaluate", 33)]["file"] == "Main.hs"  # Main.hs:(33,1)-(34,89)
    assert frames[("MAIN", None)] == {"name": "MAIN", "file": "MAIN"}  # <built-in>
    assert doc["profiles"][0]["samples"][0][0] == doc["shared"]["frames"].index(
        frames[("MAIN", None)])
    doc2, s2 = build_speedscope(cmp, "alloc_bytes")
    assert s2["unit"] == "bytes"
    check_round_trip(runs, doc2, s2)
    for r, p in enumerate(runs):
        if "total_alloc_bytes" in p.totals:  # header total vs. the sum of the tree
            assert sum(doc2["profiles"][r]["weights"]) == pytest.approx(
                p.totals["total_alloc_bytes"], rel=0.01)


@pytest.mark.parametrize("path", [GHC_V1, GHC_JSON, PERF_V1, PPROF_2, TICKY_V2, MEM],
                         ids=lambda p: p.name)
def test_every_format_exports_a_single_run(path):
    run = load(path)
    doc, s = build_speedscope(align([run]))
    assert len(doc["profiles"]) == 1 and doc["activeProfileIndex"] == 0
    flat = bool((run.parent < 0).all())
    check_round_trip([run], doc, s, mode="flat" if flat else "tree")
    lengths = {len(x) for x in doc["profiles"][0]["samples"]}
    if flat:  # module frame -> closure/line frame
        assert lengths == {2}
    else:  # whole call paths, as deep as the tree
        assert max(lengths) <= int(run.depth.max()) + 1 and max(lengths) > 1


# ------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------
def test_cli_export_pair(tmp_path, capsys):
    out = tmp_path / "perf.speedscope.json"
    rc = main(["export", str(PERF_V1), str(PERF_V2), "-o", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert f"wrote {out}" in text and "unit nanoseconds" in text
    assert text.count("profile: ") == 4
    assert "zero-weight node(s) dropped" in text
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert len(doc["profiles"]) == 4


def test_cli_single_run_and_metric(tmp_path, capsys):
    out = tmp_path / "one.json"
    assert main(["export", str(PERF_V1), "-o", str(out), "--metric", "self_samples"]) == 0
    text = capsys.readouterr().out
    assert "weights = self_samples" in text and "unit none" in text
    assert text.count("profile: ") == 1


@pytest.mark.parametrize("argv, msg", [
    (["export", "A"], "nothing to write"),
    (["export", "{perf}", "-o", "{tmp}/x.json", "--metric", "nope"], "unknown metric 'nope'"),
    (["export", "{tmp}/missing.prof", "-o", "{tmp}/x.json"], "missing.prof"),
    (["export", "{perf}", "{perf}", "--baseline", "5", "-o", "{tmp}/x.json"], "--baseline 5"),
])
def test_cli_errors_exit_2_without_traceback(tmp_path, capsys, argv, msg):
    argv = [a.format(perf=PERF_V1, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.startswith("profdiff: error:")


# ------------------------------------------------------------------------------------------
# the real speedscope app
# ------------------------------------------------------------------------------------------
def _checker() -> Path:
    env = os.environ.get("PROFDIFF_SPEEDSCOPE_CHECK")
    path = Path(env) if env else REPO.parent / "shared" / "tools" / "speedscope-check" / "check"
    if not path.is_file() and os.environ.get("PROFDIFF_REQUIRE_SPEEDSCOPE") == "1":
        pytest.fail(f"speedscope-check not found at {path} (PROFDIFF_REQUIRE_SPEEDSCOPE=1)")
    require(path.is_file(), f"speedscope-check not found at {path}")
    return path


def run_checker(path: Path) -> dict:
    checker = _checker()
    proc = subprocess.run([str(checker), str(path), "--compact"], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode == 2 and os.environ.get("PROFDIFF_REQUIRE_SPEEDSCOPE") != "1":
        require(False, f"speedscope-check cannot run here: {proc.stderr.strip()[:300]}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"speedscope-check gave no report (rc {proc.returncode}): {proc.stderr}")
    assert proc.returncode == 0, json.dumps(report, indent=1)
    assert report["schema_ok"] and report["loaded"], report
    assert report["imported_as"] == "speedscope json file"
    return report


@pytest.mark.speedscope
@pytest.mark.parametrize("case", ["ghc-pair", "perf-pair", "pprof-pair", "ticky-single"])
def test_real_speedscope_loads_export(tmp_path, case):
    files = {
        "ghc-pair": [GHC_V1, GHC_V2],
        "perf-pair": [PERF_V1, PERF_V2],
        "pprof-pair": [PPROF_1, PPROF_2],
        "ticky-single": [TICKY_V1],
    }[case]
    runs = _ghc_runs() if case == "ghc-pair" else [load(f) for f in files]
    out = tmp_path / f"{case}.speedscope.json"
    s = export_speedscope(align(runs), out)
    report = run_checker(out)
    assert report["profile_names"] == [p["name"] for p in s["profiles"]]
    assert report["active_profile"] == s["active_profile"]


def test_cli_missing_weight_metric_names_common_metrics_and_option(tmp_path, capsys):
    """GHC 7.x ticky counts alloc_words, GHC 9.2 alloc: the baseline's weight metric is not
    in the other run.  The error names the metrics both runs have and --metric; the
    suggested metric then works, and its sums are the files' own FUNCTION ENTRIES lines."""
    import re

    ticky = Path(__file__).resolve().parents[1] / "data" / "ghc-ticky"
    old = ticky / "ghc-7.x-haskell-opengl-Performance-ticky.txt"
    new = ticky / "ghc-9.2-naivesolver-main.ticky"
    out = tmp_path / "t.json"
    assert main(["export", "-o", str(out), str(old), str(new)]) == 2
    err = capsys.readouterr().err
    common = sorted({m.name for m in load(old).metrics} & {m.name for m in load(new).metrics})
    assert common == ["entries"] and not out.exists()
    assert err == ("profdiff: error: metric 'alloc_words' is missing in "
                   "ghc-9.2-naivesolver-main.ticky; metrics every run has: entries; choose one "
                   "with --metric NAME (e.g. --metric entries)\n")
    assert main(["export", "-o", str(out), "--metric", "entries", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    sums = [int(s.replace(",", "")) for s in
            re.findall(r"profile: (?:base|new): [^\n]* \[entries\]: \d+ stacks, sum ([\d,]+)",
                       text)]
    files = [int(re.search(r"FUNCTION ENTRIES: (\d+)", f.read_text(encoding="utf-8"))[1])
             for f in (old, new)]
    assert sums == files == [41260591, 225708152]
