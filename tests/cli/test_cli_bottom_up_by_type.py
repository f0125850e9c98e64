"""`--bottom-up` (perf c-vm pair) and `--by-type` (Julia allocation profiles) end to end.

Numbers: vm_run.constprop.0's self samples 2,982 (v1) / 4,613 (v2) are perf report's
(see test_cli_diff.py); allocated-type totals are re-counted here from the raw protobuf
``type`` labels, independently of the reader.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest

from profdiff.parsers import load
from profdiff.parsers.proto import profile_pb2
from profdiff.viewer.by_type import by_type_comparison, by_type_rows
from profdiff.viewer.cli import main
from tests.parsers.test_pprof import _synthetic, _write

DATA = Path(__file__).parents[1] / "data"
PERF1 = DATA / "perf/c-vm/v1/perf.script.txt.gz"
PERF2 = DATA / "perf/c-vm/v2/perf.script.txt.gz"
PPROF = DATA / "pprof"
JULOX = PPROF / "julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz"
HSP = PPROF / "julia-1.9-pprofjl-heapsnapshotparser-alloc-profile.pb.gz"
TTD = PPROF / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz"
RTS = DATA / "ghc-rts/hs-ad-v1.stats.txt"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------
# --bottom-up
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bottom_up_doc():
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["diff", str(PERF1), str(PERF2), "--bottom-up", "--json", "--top", "0",
                     "--all-metrics"])
    assert code == 0
    return json.loads(buf.getvalue())


def test_bottom_up_is_a_tree_of_leaf_functions(bottom_up_doc):
    doc = bottom_up_doc
    assert doc["mode"] == "tree"
    assert [r["meta"]["view"] for r in doc["runs"]] == ["bottom-up", "bottom-up"]
    # every metric is a (former) self metric, now summed along inverted paths
    assert set(doc["metrics"]) == {"self_samples", "self_pct", "self_period"}
    roots = {r["name"]: r for r in doc["rows"] if len(r["path"]) == 1}
    # roots are exactly the functions with self samples in either run (the leaves)
    flats = [load(p) for p in (PERF1, PERF2)]
    leaves = set()
    for p in flats:
        selfs = p.values["self_samples"]
        leaves |= {str(p.name[i]) for i in range(p.n_nodes) if selfs[i] > 0}
    assert set(roots) == leaves
    assert "main" not in roots and "__libc_start_call_main" not in roots
    vm = roots["vm_run.constprop.0"]
    assert vm["values"][0]["self_samples"] == 2982  # perf report, v1
    assert vm["values"][1]["self_samples"] == 4613  # perf report, v2
    assert vm["status"] == "changed" and vm["delta"]["self_samples"] == 4613 - 2982
    # its callers below it: vm_run <- run_benchmark <- main <- __libc_start_call_main
    # (plus a few samples reached through the timer interrupt, which are separate roots)
    under = [r for r in doc["rows"] if r["path"][:1] == vm["path"] and len(r["path"]) > 1]
    callers = {r["name"]: r for r in under if len(r["path"]) == 2}
    assert set(callers) == {"run_benchmark.constprop.0.isra.0"}
    rb = callers["run_benchmark.constprop.0.isra.0"]
    assert [rb["values"][i]["self_samples"] for i in (0, 1)] == [2982, 4613]
    assert [r["name"] for r in under] == ["run_benchmark.constprop.0.isra.0", "main",
                                          "__libc_start_call_main"]
    assert under[-1]["path"] == ["vm.vm_run.constprop.0", "vm.run_benchmark.constprop.0.isra.0",
                                 "vm.main", "libc.so.6.__libc_start_call_main"]


def test_bottom_up_roots_sum_to_the_run_total(bottom_up_doc):
    doc = bottom_up_doc
    roots = [r for r in doc["rows"] if len(r["path"]) == 1]
    for run in (0, 1):
        got = sum((r["values"][run] or {}).get("self_samples", 0) or 0 for r in roots)
        assert got == doc["runs"][run]["totals"]["total_samples"]  # 3,130 / 4,768
    assert [doc["runs"][i]["totals"]["total_samples"] for i in (0, 1)] == [3130, 4768]


def test_bottom_up_text_says_caller_of(capsys):
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--bottom-up", "--sort", "self_samples",
                       "--top", "2")
    assert code == 0
    assert "caller of" in out and "tree mode" in out
    first = next(line for line in out.splitlines() if line.lstrip().startswith("1 "))
    assert "vm_run.constprop.0" in first and "2,982" in first and "4,613" in first


def test_show_bottom_up(capsys):
    code, out, _ = run(capsys, "show", PERF1, "--bottom-up", "--top", "4",
                       "--metrics", "self_samples")
    assert code == 0
    tree = [line for line in out.splitlines() if "2,982" in line]
    assert tree[0].startswith("vm_run.constprop.0")
    assert tree[1].startswith("  run_benchmark.constprop.0.isra.0")
    assert tree[2].startswith("    main")


def test_bottom_up_rejects_flat_and_run_statistics(capsys):
    code, _, err = run(capsys, "diff", PERF1, PERF2, "--bottom-up", "--flat")
    assert code == 2 and "drop --flat" in err
    code, _, err = run(capsys, "diff", RTS, RTS, "--bottom-up")
    assert code == 2 and "hs-ad-v1.stats.txt" in err and "no self cost" in err


def test_export_csv_bottom_up_is_tree_mode(capsys, tmp_path):
    out = tmp_path / "bu.csv"
    code, text, _ = run(capsys, "export", PERF1, PERF2, "--bottom-up", "--csv", out)
    assert code == 0 and "tree mode" in text
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    top = rows[0]
    assert top["name"] == "vm_run.constprop.0" and top["path"] == "vm.vm_run.constprop.0"
    assert top["self_samples[v1/perf.script.txt.gz]"] == "2982"


# ------------------------------------------------------------------------------------------
# --by-type
# ------------------------------------------------------------------------------------------
def _raw_by_type(path: Path) -> dict[str, tuple[int, int]]:
    """type label -> (count, bytes), summed straight from the protobuf samples."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    prof = profile_pb2.Profile()
    prof.ParseFromString(data)
    st = list(prof.string_table)
    units = [st[t.unit] for t in prof.sample_type]
    ci, bi = units.index("count"), units.index("bytes")
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for smp in prof.sample:
        for lab in smp.label:
            if st[lab.key] == "type" and lab.str:
                a = acc[st[lab.str]]
                a[0] += smp.value[ci]
                a[1] += smp.value[bi]
    return {k: (c, b) for k, (c, b) in acc.items()}


@pytest.mark.parametrize("path", [JULOX, HSP, TTD], ids=lambda p: p.name[:12])
def test_reader_by_type_matches_the_raw_labels(path):
    raw = _raw_by_type(path)
    p = load(path)
    got = {r["type"]: (r["count"], r["bytes"]) for r in p.extras["by_type"]}
    assert got == raw


def test_by_type_diff_json_on_real_julia_profiles(capsys):
    code, out, _ = run(capsys, "diff", JULOX, HSP, "--by-type", "--json", "--top", "0")
    assert code == 0
    doc = json.loads(out)
    assert doc["mode"] == "flat"
    assert set(doc["metrics"]) == {"alloc_count", "alloc_bytes"}
    runs = [load(JULOX), load(HSP)]
    for i, p in enumerate(runs):
        bt = p.extras["by_type"]
        assert doc["runs"][i]["totals"] == {"alloc_count": sum(r["count"] for r in bt),
                                            "alloc_bytes": sum(r["bytes"] for r in bt)}
    assert doc["totals"]["alloc_bytes"]["values"] == [3192, 5008]
    assert doc["totals"]["alloc_count"]["values"] == [5, 362]
    rows = {r["name"]: r for r in doc["rows"]}
    assert len(rows) == 14
    unk = rows["Profile.Allocs.UnknownType"]
    assert unk["status"] == "changed"
    assert unk["values"] == [{"alloc_count": 3, "alloc_bytes": 64},
                             {"alloc_count": 162, "alloc_bytes": 2640}]
    assert unk["delta"] == {"alloc_count": 159, "alloc_bytes": 2576}
    gone = rows["Vector{Tuple{JuLox.Token, JuLox.Position}}"]
    assert gone["status"] == "removed" and gone["values"][0]["alloc_bytes"] == 48
    new = rows["Vector{Int32}"]
    assert new["status"] == "added" and new["values"][1] == {"alloc_count": 1,
                                                             "alloc_bytes": 288}
    # the largest byte changes first, either way: BufferType 3,080 B -> 64 B, then
    # UnknownType 64 B -> 2,640 B
    assert [r["name"] for r in doc["rows"][:2]] == ["Profile.Allocs.BufferType",
                                                    "Profile.Allocs.UnknownType"]
    assert doc["status_counts"] == {"same": 0, "changed": 2, "added": 11, "removed": 1,
                                   "moved": 0}


def test_by_type_text_table_and_gate(capsys):
    code, out, _ = run(capsys, "diff", HSP, TTD, "--by-type", "--top", "3",
                       "--fail-if", "alloc_bytes>+90000")
    assert code == 1  # only Memory{UInt64} (96,064 B, added) grew by more than 90,000 B
    head = next(line for line in out.splitlines() if line.startswith("#"))
    assert head.split()[:3] == ["#", "type", "status"]  # types have no module: no column
    first = next(line for line in out.splitlines() if line.lstrip().startswith("1 "))
    assert "Memory{UInt64}" in first and "96,064 B" in first and "added" in first
    assert "fail-if: 1 threshold(s) crossed" in out


def test_by_type_errors(capsys):
    code, _, err = run(capsys, "diff", PERF1, PERF2, "--by-type")
    assert code == 2 and "perf.script.txt.gz" in err and "allocated-type table" in err
    code, _, err = run(capsys, "diff", JULOX, HSP, "--by-type", "--tree")
    assert code == 2 and "drop --tree" in err
    code, _, err = run(capsys, "diff", JULOX, HSP, "--by-type", "--bottom-up")
    assert code == 2


def _stray_pair(tmp_path: Path) -> tuple[Path, Path]:
    """The synthetic PProf.jl-layout profile, and the same plus one 32-byte allocation of a
    type the baseline never allocates (the user story: hunting one stray allocation)."""
    before = _synthetic()
    after = _synthetic()
    st = after.string_table

    def s(x: str) -> int:
        if x not in st:
            st.append(x)
        return list(st).index(x)

    after.function.add(id=8, name=s("Alloc: Base.RefValue{Int64}"),
                       system_name=s("Alloc: Base.RefValue{Int64}"), filename=s("nothing"))
    loc = after.location.add(id=7)
    loc.line.add(function_id=8, line=0)
    smp = after.sample.add(location_id=[7, 4, 2, 1], value=[1, 32])
    smp.label.add(key=s("bytes"), num=32, num_unit=s("bytes"))
    smp.label.add(key=s("type"), str=s("Base.RefValue{Int64}"))
    return _write(tmp_path, before, "before.pb.gz"), _write(tmp_path, after, "after.pb.gz")


def test_stray_32_byte_allocation_shows_as_added(tmp_path, capsys):
    a, b = _stray_pair(tmp_path)
    code, out, _ = run(capsys, "diff", a, b, "--by-type", "--json", "--changed-only")
    assert code == 0
    doc = json.loads(out)
    assert [r["name"] for r in doc["rows"]] == ["Base.RefValue{Int64}"]
    row = doc["rows"][0]
    assert row["status"] == "added"
    assert row["values"][0] is None
    assert row["values"][1] == {"alloc_count": 1, "alloc_bytes": 32}
    assert row["delta"]["alloc_bytes"] == 32
    assert doc["totals"]["alloc_bytes"]["values"] == [200, 232]
    # the Qt-free helper says the same
    rows = by_type_rows(by_type_comparison([load(a), load(b)]))
    assert rows[0] == {"type": "Base.RefValue{Int64}", "status": "added", "count": [0, 1],
                       "bytes": [0, 32], "delta_count": 1, "delta_bytes": 32}
    assert {r["type"]: r["status"] for r in rows[1:]} == {"Vector{Int64}": "same",
                                                         "String": "same"}


def test_bottom_up_zero_self_cost_in_baseline_is_changed_not_added(capsys):
    """addGrad runs in hs-ad v1 (4,433,920 entries) but prints 0.0 %time and 0.0 %alloc;
    in v2 it holds a quarter of the run.  Bottom-up must agree with the diff tree: the
    function was there, so its row is "changed" from 0, not "added"."""
    hs = DATA / "hs-ad"
    code, out, _ = run(capsys, "diff", str(hs / "v1" / "ad.prof"), str(hs / "v2" / "ad.prof"),
                       "--bottom-up", "--json", "--top", "0", "--all-metrics")
    assert code == 0
    doc = json.loads(out)
    roots = {r["name"]: r for r in doc["rows"] if len(r["path"]) == 1}
    grad = roots["addGrad"]
    assert grad["status"] == "changed"
    assert grad["values"][0]["time_pct"] == 0 and grad["values"][1]["time_pct"] > 20
    tree = json.loads(run(capsys, "diff", str(hs / "v1" / "ad.prof"), str(hs / "v2" / "ad.prof"),
                          "--tree", "--json", "--top", "0")[1])
    assert {r["status"] for r in tree["rows"] if r["name"] == "addGrad"} == {"changed"}
