"""CSV export of the comparison table: columns, row order, values; real pair via the CLI."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import Kind, Metric, Unit
from profdiff.viewer.cli import main
from profdiff.viewer.compare import align
from profdiff.viewer.export.csv_export import export_csv
from profdiff.viewer.export.speedscope import ExportError

DATA = Path(__file__).resolve().parents[1] / "data" / "export"
PERF_V1, PERF_V2 = DATA / "c-vm-v1.perf.script.txt.gz", DATA / "c-vm-v2.perf.script.txt.gz"
TICKY_V1 = DATA / "hs-ad-v1.ticky.txt"

METRICS = [
    Metric("own", Unit.COUNT, Kind.SELF),
    Metric("total", Unit.COUNT, Kind.INCLUSIVE, self_of="own"),
]


def build(stacks, path):
    b = TreeBuilder(["own"])
    for frames, v in stacks:
        b.add_stack([b.frame(n, "M", src=f"m.c:{len(n)}") for n in frames], own=v)
    return b.build(path=path, format="test", metrics=METRICS, inclusive={"total": "own"})


BASE = build([(["main", "f"], 10), (["main", "g"], 5), (["main", "f", "h"], 1)], "a/run.txt")
NEW = build([(["main", "g"], 7), (["main", "f"], 10), (["main", "k"], 3)], "b/run.txt")


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def test_tree_csv_columns_and_values(tmp_path):
    cmp = align([BASE, NEW])
    out = tmp_path / "t.csv"
    s = export_csv(cmp, out)
    lines = read(out)
    assert lines[0] == [
        "name", "module", "src", "path", "status",
        "own[a/run.txt]", "own[b/run.txt]", "own delta[b/run.txt]", "own rel[b/run.txt]",
        "total[a/run.txt]", "total[b/run.txt]", "total delta[b/run.txt]", "total rel[b/run.txt]",
    ]
    assert s["rows"] == cmp.n_rows == len(lines) - 1 and s["columns"] == 13
    rows = {ln[3]: ln for ln in lines[1:]}
    assert rows["M.main > M.g"][4:] == ["changed", "5", "7", "2", "0.4", "5", "7", "2", "0.4"]
    # absent is not zero: no value in the run without the row, no rel from a zero base
    assert rows["M.main > M.f > M.h"][4:9] == ["removed", "1", "", "-1", "-1"]
    assert rows["M.main > M.k"][4:9] == ["added", "", "3", "3", ""]
    assert rows["M.main"][:3] == ["main", "M", "m.c:4"]
    assert rows["M.main"][9:] == ["16", "20", "4", "0.25"]


def test_rows_in_given_order_and_metric_subset(tmp_path):
    cmp = align([BASE, NEW], mode="flat")
    order = cmp.order_by("own", "delta", descending=True)
    out = tmp_path / "f.csv"
    export_csv(cmp, out, rows=order[:3], metrics=["own"])
    lines = read(out)
    assert lines[0] == ["name", "module", "src", "status", "own[a/run.txt]", "own[b/run.txt]",
                        "own delta[b/run.txt]", "own rel[b/run.txt]"]
    assert [ln[0] for ln in lines[1:]] == ["k", "g", "main"]  # +3, +2, 0 (stable: main first)
    assert len(lines) == 4


def test_missing_metric_is_an_empty_cell_and_errors(tmp_path):
    b = TreeBuilder(["other"])
    b.add_stack([b.frame("main", "M", src="m.c:4")], other=2)
    p = b.build(path="c/run.txt", format="test", metrics=[Metric("other", Unit.COUNT, Kind.SELF)])
    cmp = align([BASE, p])
    out = tmp_path / "m.csv"
    export_csv(cmp, out, metrics=["own", "other"])
    lines = read(out)
    main_row = next(ln for ln in lines[1:] if ln[3] == "M.main")
    assert main_row[5:7] == ["0", ""]  # own: base has main (self 0), the other run lacks own
    assert main_row[9:11] == ["", "2"]  # other: the base lacks it
    with pytest.raises(ExportError, match="unknown metric"):
        export_csv(cmp, out, metrics=["nope"])
    with pytest.raises(ExportError, match="row ids"):
        export_csv(cmp, out, rows=[cmp.n_rows])


def test_real_perf_pair_via_cli(tmp_path, capsys):
    out = tmp_path / "perf.csv"
    rc = main(["export", str(PERF_V1), str(PERF_V2), "--csv", str(out), "--metrics",
               "self_samples,self_period", "--sort", "self_samples:delta"])
    text = capsys.readouterr().out
    assert rc == 0 and f"wrote {out}: CSV" in text and "flat mode" in text
    lines = read(out)
    hdr = lines[0]
    assert hdr[:4] == ["name", "module", "src", "status"] and len(hdr) == 12
    # sorted by the change in samples: the VM's dispatch loop grew most (2982 -> 4613)
    first = dict(zip(hdr, lines[1], strict=True))
    assert first["name"] == "vm_run.constprop.0" and first["module"] == "vm"
    assert first["self_samples[c-vm-v1.perf.script.txt.gz]"] == "2982"
    assert first["self_samples[c-vm-v2.perf.script.txt.gz]"] == "4613"
    assert first["self_samples delta[c-vm-v2.perf.script.txt.gz]"] == "1631"
    deltas = [int(ln[hdr.index("self_samples delta[c-vm-v2.perf.script.txt.gz]")])
              for ln in lines[1:]]
    assert deltas == sorted(deltas, reverse=True)
    # the columns sum to the runs' sample counts (an empty cell: the run lacks the row)
    col = hdr.index("self_samples[c-vm-v1.perf.script.txt.gz]")
    assert sum(int(ln[col] or 0) for ln in lines[1:]) == 3130
    assert sum(int(ln[col + 1] or 0) for ln in lines[1:]) == 4768


def test_cli_tree_csv_and_speedscope_together(tmp_path, capsys):
    out_csv, out_json = tmp_path / "t.csv", tmp_path / "t.json"
    rc = main(["export", str(PERF_V1), str(PERF_V2), "--tree", "--csv", str(out_csv),
               "-o", str(out_json)])
    text = capsys.readouterr().out
    assert rc == 0 and "tree mode" in text and out_json.exists()
    lines = read(out_csv)
    assert "path" in lines[0]
    paths = [ln[3] for ln in lines[1:]]
    assert ("libc.so.6.__libc_start_call_main > vm.main > vm.run_benchmark.constprop.0.isra.0 > "
            "vm.vm_run.constprop.0") in paths


def test_single_run_csv_ranked_by_cost(tmp_path, capsys):
    out = tmp_path / "ticky.csv"
    assert main(["export", str(TICKY_V1), "--csv", str(out)]) == 0
    lines = read(out)
    hdr = lines[0]
    assert "alloc delta" not in " ".join(hdr)  # one run: no deltas
    col = hdr.index("alloc[hs-ad-v1.ticky.txt]")
    allocs = np.array([int(ln[col]) for ln in lines[1:]])
    assert (np.diff(allocs) <= 0).all() and allocs.sum() == load(TICKY_V1).totals["table_alloc"]


@pytest.mark.parametrize("mode", [[], ["--tree"]], ids=["flat", "tree"])
def test_csv_statuses_are_the_cli_tables(tmp_path, capsys, mode):
    """The CSV's status column says "changed" for the rows ``profdiff diff`` says
    changed: both judge the sampled metrics by their noise (before, the CSV counted the
    hs-ad pair's within-noise time changes: 41 "changed" cost centres against 15)."""
    import json

    hs = Path(__file__).resolve().parents[1] / "data" / "hs-ad"
    pair = [str(hs / "v1" / "ad.prof"), str(hs / "v2" / "ad.prof")]
    assert main(["diff", "--json", "--top", "0", *mode, *pair]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = tmp_path / "t.csv"
    assert main(["export", *pair, *mode, "--csv", str(out)]) == 0
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(doc["rows"])
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in doc["status_counts"]}
    assert counts == doc["status_counts"] and 0 < counts["changed"] < counts["same"]


def _prof_entries(path: Path, name: str) -> int:
    """Sum of a cost centre's ``entries`` column read straight from the .prof text (the
    call-tree lines: name, module, src, no., entries, ...): the parser's independent check."""
    total = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        f = line.split()
        if len(f) >= 9 and f[0] == name and f[3].isdigit():
            total += int(f[4])
    return total


def test_real_pair_absent_row_and_zero_base_are_empty_cells(tmp_path, capsys):
    """hs-ad v1 -> v2: logisticD exists only in v2, addGrad's time goes 0.0 -> 24.7 %.
    Before, the CSV gave logisticD a baseline of 0 and both rels ``inf``; now those cells
    are empty, as ``diff --json`` says null, and every present 0 stays 0."""
    import json

    hs = Path(__file__).resolve().parents[1] / "data" / "hs-ad"
    v1, v2 = hs / "v1" / "ad.prof", hs / "v2" / "ad.prof"
    out = tmp_path / "hs.csv"
    assert main(["export", str(v1), str(v2), "--csv", str(out)]) == 0
    capsys.readouterr()
    with open(out, encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    rows = {(r["name"], r["module"], r["src"]): r for r in table}
    assert _prof_entries(v1, "logisticD") == 0  # the file: v1 never calls it
    added = rows[("logisticD", "AD.Dual", "AD/Dual.hs:(56,1)-(57,71)")]
    assert added["status"] == "added" and added["entries[v1/ad.prof]"] == ""
    assert added["entries[v2/ad.prof]"] == str(_prof_entries(v2, "logisticD")) == "12928"
    assert added["entries delta[v2/ad.prof]"] == "12928" and added["entries rel[v2/ad.prof]"] == ""
    grew = rows[("addGrad", "AD.Eval", "AD/Eval.hs:(26,1)-(28,27)")]
    assert grew["time_pct[v1/ad.prof]"] == "0" and grew["time_pct[v2/ad.prof]"] == "24.7"
    assert grew["time_pct rel[v2/ad.prof]"] == "" and grew["entries rel[v2/ad.prof]"] == "0"
    assert "inf" not in out.read_text(encoding="utf-8")
    # a value cell is empty exactly where diff --json gives the run null (no row)
    assert main(["diff", "--json", "--top", "0", "--all-metrics", str(v1), str(v2)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == len(table)
    for r in doc["rows"]:
        line = rows[(r["name"], r["module"], r["src"])]
        for run, label in enumerate(["v1/ad.prof", "v2/ad.prof"]):
            assert (line[f"entries[{label}]"] == "") == (r["values"][run] is None)
        for m in ("entries", "time_pct", "alloc_pct", "time_s", "alloc_bytes"):
            # a Δ% is empty exactly where JSON's is null: a zero base, or a change
            # within the rounding of the printed percentages (within_precision)
            cell = line[f"{m} rel[v2/ad.prof]"]
            assert (cell == "") == (r["rel"][m] is None), (r["name"], m)
            if cell:
                assert float(cell) == pytest.approx(r["rel"][m], rel=1e-12)
    within = [r for r in doc["rows"] if "time_pct" in r.get("within_precision", ())]
    assert within  # rows whose %time moved less than the printed 0.1 % supports


def test_cli_partial_export_writes_what_it_can_and_exits_2(tmp_path, capsys):
    """-o and --csv: the GHC RTS summaries have no per-node metric to weight a flame graph
    by, so no speedscope file; the CSV is still written (the same bytes as --csv alone),
    stderr names the file not written and why, and the exit code is 2."""
    rts = Path(__file__).resolve().parents[1] / "data" / "ghc-rts"
    pair = [str(rts / "hs-ad-v1.stats.txt"), str(rts / "hs-ad-v2.stats.txt")]
    alone = tmp_path / "alone.csv"
    assert main(["export", *pair, "--csv", str(alone)]) == 0
    capsys.readouterr()
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(["export", "-o", str(out_json), "--csv", str(out_csv), *pair]) == 2
    err = capsys.readouterr().err
    assert not out_json.exists() and out_csv.read_bytes() == alone.read_bytes()
    assert err.splitlines() == [
        f"profdiff: error: speedscope file {out_json} not written: the runs have no metric "
        f"to weight a flame graph by; written: {out_csv}"]


def test_cli_partial_export_csv_fails_speedscope_written(tmp_path, capsys):
    """The other way round: an unknown --metrics column stops the CSV, not the flame graph."""
    out_json, out_csv = tmp_path / "p.json", tmp_path / "p.csv"
    rc = main(["export", str(PERF_V1), str(PERF_V2), "-o", str(out_json), "--csv", str(out_csv),
               "--metrics", "nope"])
    cap = capsys.readouterr()
    assert rc == 2 and out_json.exists() and not out_csv.exists()
    assert f"wrote {out_json}" in cap.out and "Traceback" not in cap.err
    assert f"profdiff: error: CSV {out_csv} not written: unknown metric(s) nope" in cap.err
    assert cap.err.rstrip().endswith(f"written: {out_json}")
