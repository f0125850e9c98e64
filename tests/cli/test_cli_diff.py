"""`profdiff diff/show` end to end on real files: numbers, JSON contract, gates, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profdiff.viewer.cli import main

DATA = Path(__file__).parents[1] / "data"
PERF1 = DATA / "perf/c-vm/v1/perf.script.txt.gz"
PERF2 = DATA / "perf/c-vm/v2/perf.script.txt.gz"
TICKY1 = DATA / "ghc-ticky/hs-ad-v1.ticky.txt"
TICKY2 = DATA / "ghc-ticky/hs-ad-v2.ticky.txt"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_perf_pair_json_matches_perf_report(capsys):
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--json", "--sort", "self_samples", "--top", "3")
    assert code == 0
    doc = json.loads(out)
    assert [r["format"] for r in doc["runs"]] == ["perf-script", "perf-script"]
    assert doc["totals"]["total_samples"]["values"] == [3130, 4768]
    top = doc["rows"][0]
    assert top["name"] == "vm_run.constprop.0"
    assert top["status"] == "changed"
    assert top["values"][0]["self_samples"] == 2982
    assert top["values"][1]["self_samples"] == 4613
    assert top["delta"]["self_samples"] == 4613 - 2982
    # perf report --stdio: vm_run.constprop.0 95.27 % (v1) and 96.75 % (v2)
    assert round(top["values"][0]["self_pct"], 2) == 95.27
    assert round(top["values"][1]["self_pct"], 2) == 96.75
    assert "noise" in top and "p" in top["noise"]["self_samples"]


def test_ticky_pair_text_table(capsys):
    code, out, _ = run(capsys, "diff", TICKY1, TICKY2, "--sort", "alloc", "--top", "3")
    assert code == 0
    lines = out.splitlines()
    first = next(line for line in lines if line.lstrip().startswith("1 "))
    assert "$wevalDelta" in first and "246,906,880 B" in first and "495,206,400 B" in first
    assert "legend:" in out


def test_fail_if_gates(capsys):
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--fail-if", "self_samples>+50%")
    assert code == 1
    assert "vm_run.constprop.0" in out.split("fail-if:")[1]
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--fail-if", "total.total_samples>+60%")
    assert code == 0 and "no threshold crossed" in out
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--fail-if", "total.total_samples>+50%")
    assert code == 1
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--json", "--fail-if", "self_samples>1k")
    doc = json.loads(out)
    assert code == 1 and doc["fail_if"]["failed"]
    assert [(v["name"], v["module"]) for v in doc["fail_if"]["violations"]] == [
        ("vm_run.constprop.0", "vm")]


@pytest.mark.parametrize("expr", ["alloc_bytes>>1", "nonsense", "unknown_metric>1"])
def test_bad_gate_is_usage_error(capsys, expr):
    code, _, err = run(capsys, "diff", PERF1, PERF2, "--fail-if", expr)
    assert code == 2
    assert "--fail-if" in err and "Traceback" not in err


def test_errors_name_the_file_and_never_trace(capsys, tmp_path):
    empty = tmp_path / "empty.prof"
    empty.write_text("")
    code, _, err = run(capsys, "diff", PERF1, empty)
    assert code == 2 and "empty.prof" in err and "empty" in err and "Traceback" not in err
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 50)
    code, _, err = run(capsys, "show", garbage)
    assert code == 2 and "garbage.bin" in err and "supported format" in err and "perf-script" in err
    code, _, err = run(capsys, "diff", PERF1)
    assert code == 2 and "at least two files" in err
    code, _, err = run(capsys, "diff", PERF1, PERF2, "--sort", "nope")
    assert code == 2 and "unknown metric" in err


def test_show_json(capsys):
    code, out, _ = run(capsys, "show", TICKY1, "--json", "--top", "5")
    assert code == 0
    doc = json.loads(out)
    assert doc["run"]["format"] == "ghc-ticky"
    assert len(doc["rows"]) == 5
    assert doc["run"]["counters"]  # ticky's global counters travel with the run


def test_show_top_0_is_every_row_as_in_diff(capsys):
    """``show --top 0`` printed no row ("0 of 239 nodes shown") where ``diff --top 0``
    means all rows; now both mean all, and both --help texts say so."""
    prof = DATA / "hs-ad" / "v1" / "ad.prof"
    # the .prof call tree, counted from the text: name module src no. entries ... lines
    lines = [ln.split() for ln in prof.read_text(encoding="utf-8").splitlines()]
    n_tree = sum(1 for f in lines if len(f) >= 9 and f[3].isdigit() and f[4].isdigit())
    assert n_tree == 239
    code, out, _ = run(capsys, "show", prof, "--top", "0")
    assert code == 0 and out.rstrip().endswith(f"{n_tree} of {n_tree} nodes shown")
    code, out, _ = run(capsys, "show", prof, "--top", "0", "--json")
    assert code == 0 and len(json.loads(out)["rows"]) == n_tree
    for command in ("show", "diff"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "rows to print (0 = all;" in " ".join(capsys.readouterr().out.split())


def test_three_runs_have_per_run_deltas(capsys):
    code, out, _ = run(capsys, "diff", TICKY1, TICKY2, TICKY1, "--json", "--top", "0")
    assert code == 0
    doc = json.loads(out)
    assert len(doc["runs"]) == 3
    row = next(r for r in doc["rows"] if r["name"].startswith("$wevalDelta"))
    assert row["deltas"][0] is None and len(row["deltas"]) == 3
    # the third run is the baseline file again: no change against the baseline
    assert row["delta"]["alloc"] == 0
    assert row["deltas"][1]["alloc"] == 495_206_400 - 246_906_880


HS = DATA / "hs-ad"


@pytest.mark.parametrize("name", ["ad.prof", "ad.P.prof", "ad.prof.json"])
def test_hs_ad_injected_regression_is_first_row(capsys, name):
    """v2's lazy IntMap accumulator makes addGrad allocate (0.0 -> 33.3 % alloc)."""
    code, out, _ = run(capsys, "diff", HS / "v1" / name, HS / "v2" / name, "--flat",
                       "--sort", "alloc_bytes", "--json", "--top", "3")
    assert code == 0
    doc = json.loads(out)
    first = doc["rows"][0]
    assert (first["name"], first["module"]) == ("addGrad", "AD.Eval")
    assert first["delta"]["alloc_bytes"] > 2e9
    if name != "ad.prof.json":  # the text reports' header totals
        assert doc["totals"]["total_alloc_bytes"]["values"] == [4_291_393_792, 6_560_334_592]
    # and in the terminal table too
    code, out, _ = run(capsys, "diff", HS / "v1" / name, HS / "v2" / name, "--flat",
                       "--sort", "alloc_bytes", "--top", "1")
    assert next(li for li in out.splitlines() if li.lstrip().startswith("1 ")).split()[1] == "addGrad"


def test_tree_json_paths_and_auto_match(capsys):
    code, out, _ = run(capsys, "diff", HS / "v1/ad.prof", HS / "v2/ad.prof", "--tree", "--json",
                       "--top", "0", "--auto-match")
    doc = json.loads(out)
    assert doc["status_counts"]["added"] == doc["status_counts"]["removed"] == 0
    by_path = {"/".join(r["path"]): r for r in doc["rows"]}
    grad = next(r for p, r in by_path.items() if p.endswith("AD.Eval.evalDelta/AD.Eval.addGrad"))
    assert grad["path"][0] == "MAIN.MAIN"
    assert grad["values"][0]["entries"] == grad["values"][1]["entries"] == 4_433_920
    renamed = [r for r in doc["rows"] if r["matched_by"] == "suggestion"]
    assert {r["name"] for r in renamed} == {"sigmoidD", "sigmoidD.s"}
    assert any("auto-matched" in n for n in doc["notes"])


def test_perf_reader_options_reach_the_reader(capsys):
    code, out, _ = run(capsys, "diff", PERF1, PERF2, "--json", "--tree", "--top", "0",
                       "--group-by", "symbol", "--split-by", "comm")
    assert code == 0
    doc = json.loads(out)
    assert {r["module"] for r in doc["rows"]} == {""}  # frames keyed by symbol alone
    roots = {r["name"] for r in doc["rows"] if len(r["path"]) == 1}
    assert roots == {"vm"}  # one subtree per command
    assert all(r["meta"]["group_by"] == "symbol" for r in doc["runs"])


def test_three_runs_each_row_has_its_own_status_and_totals_delta(capsys):
    """v1, v2 and a third run of v1: logisticD (v2's name for sigmoidD) exists only in the
    middle run, so it is "added" there and "absent" (never "same") in the third."""
    import json as _json
    from pathlib import Path as _P

    from profdiff.viewer.cli import main as _main
    hs = _P(__file__).parents[1] / "data" / "hs-ad"
    code = _main(["diff", str(hs / "v1" / "ad.prof"), str(hs / "v2" / "ad.prof"),
                  str(hs / "noise-v1" / "run1" / "ad.prof"), "--json", "--top", "0"])
    doc = _json.loads(capsys.readouterr().out)
    assert code == 0 and doc["current"] == 2
    rows = {r["name"]: r for r in doc["rows"]}
    assert rows["logisticD"]["statuses"] == [None, "added", "absent"]
    assert rows["logisticD"]["status"] == "absent"
    assert rows["sigmoidD"]["statuses"] == [None, "removed", "same"]
    grad = rows["addGrad"]["statuses"]
    assert grad[1] == "changed"
    alloc = doc["totals"]["total_alloc_bytes"]
    assert alloc["deltas"] == [None, 6_560_334_592 - 4_291_393_792, 0]


def test_three_single_runs_judge_each_run_as_its_pair_alone(capsys):
    """Two -p runs of v1 and one of v2: each run's status is judged by the sampling error
    of its own pair with the baseline, so ``diff A B C --json`` gives each run the
    statuses ``diff A B`` and ``diff A C`` give (by precision alone the second run of v1
    read 39 of 124 cost centres "changed", where ``diff A B`` reads none)."""
    hs = DATA / "hs-ad"
    a, b, c = (str(hs / "noise-v1" / "run1" / "ad.prof"), str(hs / "noise-v1" / "run2" / "ad.prof"),
               str(hs / "v2" / "ad.prof"))

    def statuses(*files: str) -> dict[str, list]:
        code, out, _ = run(capsys, "diff", *files, "--json", "--top", "0")
        assert code == 0
        return {(r["module"], r["name"]): r.get("statuses") or [None, r["status"]]
                for r in json.loads(out)["rows"]}

    three = statuses(a, b, c)
    for run_, pair in ((1, statuses(a, b)), (2, statuses(a, c))):
        mine = {k: v[run_] for k, v in three.items() if v[run_] != "absent"}
        assert mine == {k: v[1] for k, v in pair.items()}
    assert {v[1] for v in three.values() if v[1] != "absent"} == {"same"}  # one binary twice
    assert three[("AD.Eval", "addGrad")][2] == "changed"  # v2 lost a specialisation


def test_auto_match_is_visible_and_works_with_groups(capsys):
    """``diff --auto-match A B`` must not read A as the threshold; the accepted pairs are
    printed; with --base/--new groups the renamed sigmoidD -> logisticD is matched and the
    row shows both names."""
    import json as _json
    from pathlib import Path as _P

    from profdiff.viewer.cli import main as _main
    hs = _P(__file__).parents[1] / "data" / "hs-ad"
    v1, v2 = str(hs / "v1" / "ad.prof"), str(hs / "v2" / "ad.prof")
    assert _main(["diff", "--auto-match", v1, v2, "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert "auto-matched" in out and "sigmoidD" in out and "logisticD" in out
    assert "sigmoidD → logisticD" in out
    code = _main(["diff", "--base", v1, str(hs / "noise-v1" / "run1" / "ad.prof"),
                  "--new", v2, "--auto-match", "--json", "--top", "0"])
    doc = _json.loads(capsys.readouterr().out)
    assert code == 0
    assert any(n.startswith("auto-matched") for n in doc["notes"])
    row = next(r for r in doc["rows"] if r["name"] in ("sigmoidD", "logisticD"))
    assert row["matched_by"] == "suggestion" and row["status"] in ("same", "changed")
    assert [x["name"] for x in row["names"]] == ["sigmoidD", "logisticD"]


FUNCAB = (DATA / "perf/script/flamegraph-perf-funcab-cmd-01.txt",
          DATA / "perf/script/flamegraph-perf-funcab-pid-01.txt")
C_VM = (DATA / "export/c-vm-v1.perf.script.txt.gz", DATA / "export/c-vm-v2.perf.script.txt.gz")


def test_a_status_judged_on_a_metric_not_shown_is_said(capsys):
    """The c-vm pair (the interpreter loop 55 % slower): main reads 0 s -> 0 s and
    100 % -> 100 % in the default columns, yet is "changed" by its total samples, which
    the legend then names with its column name; shown (--metrics), the change is in the
    table and the legend says no more."""
    code, out, _ = run(capsys, "diff", *C_VM)
    assert code == 0
    main_row = next(line for line in out.splitlines() if line.split()[1:2] == ["main"])
    assert "changed" in main_row and main_row.count("100.0 %") == 2
    legend = out.split("legend:")[1]
    assert "status = changed when self samples or total samples" in legend
    assert "not shown: self samples [self_samples], total samples [total_samples]" in legend
    code, out, _ = run(capsys, "diff", *C_VM, "--metrics",
                       "self_samples,total_samples,total_period")
    main_row = next(line for line in out.splitlines() if line.split()[1:2] == ["main"])
    assert main_row.split()[-11:-7] == ["3,129", "4,768", "+1,639", "+52.4%"]
    assert "status = " not in out.split("legend:")[1]


def test_two_recordings_of_one_program_differing_in_length_read_same(capsys):
    """The funcab pair: one program recorded for 169 and 228 samples (perf attached with
    -p for longer), its two functions splitting them 48/52 and 49/51.  Only two rows have
    10+ samples in both runs; their mean ratio is the run's speed factor (x1.350), so
    no row reads changed only because the recording was longer, and the note says how
    few rows the factor rests on."""
    code, out, _ = run(capsys, "diff", *FUNCAB)
    assert code == 0
    assert "4 same, 0 changed" in out
    note = next(line for line in out.splitlines() if "run-level speed" in line)
    assert "x1.350, from only 2 rows with 10+ samples in both runs" in note
    code, out, _ = run(capsys, "diff", *C_VM)
    vm_run = next(line for line in out.splitlines() if "vm_run" in line)
    assert vm_run.split()[3] == "changed"  # one dominant row does not set the factor
    note = next(line for line in out.splitlines() if "run-level speed" in line)
    assert "x1.049, from only 3 rows" in note
    # the median row's change is not the run's: the rows' total is said beside it, as
    # the totals table has it (period 3.133 s -> 4.773 s)
    assert "; the rows' total: 52.3 % more)" in note
    assert "period sum of cpu-clock:ppp" in out and "+52.3%" in out


@pytest.mark.parametrize("argv", [
    ["show", "--format", "perf-data", "{prof}"],
    ["annotate", "{prof}", "{prof}", "--symbol", "main"],
], ids=["show", "annotate"])
def test_not_perf_data_error_quotes_the_bytes_as_text(capsys, argv):
    """A GHC .prof read as perf.data: the message quoted a Python bytes literal inside a
    string literal (found "b'\\\\tSun Nov'"); now the text, control characters escaped."""
    prof = DATA / "hs-ad" / "v1" / "ad.prof"
    head = prof.read_bytes()[:8]
    assert head == b"\tSun Nov"  # the file's first 8 bytes: a tab, then the date line
    code, _, err = run(capsys, *[a.format(prof=prof) for a in argv])
    assert code == 2 and "b'" not in err and "Traceback" not in err
    assert err.rstrip().endswith("expected a perf.data file starting with 'PERFILE2', "
                                 "found '\\tSun Nov'")


def test_parse_error_found_bytes_decoded_with_replacement():
    """Any reader may pass the raw bytes it found: invalid UTF-8 becomes U+FFFD, control
    characters are escaped, and nothing of Python's bytes syntax reaches the user."""
    from profdiff.parsers.errors import ParseError

    e = ParseError("x.data", "a header", offset=0, found=b"PER\x00\x01\xffok")
    assert e.found == "PER\x00\x01\ufffdok"
    assert str(e) == "x.data (byte 0): expected a header, found 'PER\\x00\\x01\ufffdok'"


def _damaged(tmp_path: Path) -> Path:
    """hs-ad v1's .prof with one tree row's ``no.`` column made unreadable (line 40)."""
    lines = (DATA / "hs-ad/v1/ad.prof").read_text().splitlines(keepends=True)
    assert lines[39].split()[:1] == ["gradNorm"]
    cols = lines[39].split()
    lines[39] = lines[39].replace(f" {cols[3]} ", " 1x2 ", 1)
    bad = tmp_path / "bad.prof"
    bad.write_text("".join(lines))
    return bad


def test_a_file_lenient_would_read_says_so(capsys, tmp_path):
    """The error names the file and line as ever, and (a lenient read of it succeeding)
    says --lenient reads it, with how many warnings; show and diff alike."""
    bad = _damaged(tmp_path)
    code, _, err = run(capsys, "show", bad)
    assert code == 2
    assert f"{bad}:40: expected an integer in column no." in err
    assert err.rstrip().endswith("; --lenient reads it, with 1 warning")
    code, _, err = run(capsys, "diff", bad, DATA / "hs-ad/v2/ad.prof")
    assert code == 2 and err.rstrip().endswith("; --lenient reads it, with 1 warning")
    code, out, err = run(capsys, "show", bad, "--lenient")
    assert code == 0 and "warning: line 40: skipped" in out + err


def test_diff_prints_each_runs_reader_warnings_above_the_table(capsys, tmp_path):
    """A skipped line qualifies every number below it: diff names it, by run, as show
    does (it printed none)."""
    bad = _damaged(tmp_path)
    code, out, _ = run(capsys, "diff", bad, DATA / "hs-ad/v2/ad.prof", "--lenient")
    assert code == 0
    table = out.index("\ntotal ")  # the totals, then the rows
    (line,) = [ln for ln in out[:table].splitlines() if ln.startswith("warning: [0]")]
    assert "line 40: skipped" in line and line.startswith(f"warning: [0] {Path(bad).name}: ")
    assert "warning: [1]" not in out


def test_no_lenient_hint_where_it_would_not_help(capsys, tmp_path):
    """Not for a file no reader knows, nor one whose header is cut (a lenient read fails
    the same way), nor when --lenient was given."""
    junk = tmp_path / "junk.prof"
    junk.write_text("garbage\n")
    cut = tmp_path / "cut.prof"
    cut.write_text("".join((DATA / "hs-ad/v1/ad.prof").read_text().splitlines(True)[:3]))
    for argv in (["show", junk], ["show", cut], ["diff", cut, DATA / "hs-ad/v2/ad.prof"],
                 ["show", cut, "--lenient"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.startswith("profdiff: error: "), argv
        assert "--lenient reads it" not in err, argv


def test_a_prof_and_a_pj_json_are_refused_with_their_own_reason(capsys):
    """A .prof and a -pj JSON hold the same metrics, so "their metrics do not mean the
    same thing" would be wrong: the refusal says what does differ (the cost centres the
    text hides read as added: 145 rows of hs-ad v1 .prof against v2 -pj, 2 against the
    v2 .prof), and --allow-mixed-formats compares them, addGrad first."""
    prof, pj = DATA / "hs-ad/v1/ad.prof", DATA / "hs-ad/v2/ad.prof.json"
    code, _, err = run(capsys, "diff", prof, pj)
    assert code == 2
    assert "one profiler's output" in err and "do not mean the same thing" not in err
    code, out, _ = run(capsys, "diff", prof, pj, "--allow-mixed-formats", "--json", "--top", "0")
    doc = json.loads(out)
    assert code == 0 and doc["rows"][0]["name"] == "addGrad"
    added = [r for r in doc["rows"] if r["status"] == "added"]
    assert len(added) == 145 and {"GC", "SYSTEM"} <= {r["name"] for r in added}
    code, _, err = run(capsys, "diff", prof, DATA / "perf/script/flamegraph-perf-funcab-cmd-01.txt")
    assert code == 2 and "do not mean the same thing" in err


def test_a_status_names_the_metrics_it_rests_on(capsys):
    """hs-ad: MAIN reads 100 % -> 100 % of inherited time, yet is "changed": its
    inherited time went 2.88 s -> 3.79 s (GHC's header) and its inherited alloc with it.
    --json says so per row; the window's status cell says it in its tooltip."""
    hs = DATA / "hs-ad"
    code, out, _ = run(capsys, "diff", str(hs / "v1/ad.prof"), str(hs / "v2/ad.prof"),
                       "--json", "--top", "0")
    rows = {(r["module"], r["name"]): r for r in json.loads(out)["rows"]}
    main_row = rows[("MAIN", "MAIN")]
    assert main_row["status"] == "changed"
    assert main_row["changed_by"] == ["inherited_time_s", "inherited_alloc_bytes"]
    assert "changed_by" not in rows[("AD.Dual", "dotD")]  # same
    add_grad = rows[("AD.Eval", "addGrad")]
    assert {"time_s", "alloc_bytes"} <= set(add_grad["changed_by"])


def test_no_module_column_where_no_row_has_one(capsys):
    """Folded stacks name frames only: ``diff`` and ``show`` leave out the empty module
    column (it took a column of blanks beside the names); GHC's rows keep it."""
    a = DATA / "folded" / "inferno-vertx-collapsed-unsorted-1.txt"
    b = DATA / "folded" / "inferno-vertx-collapsed-unsorted-2.txt"
    code, out, _ = run(capsys, "diff", str(a), str(b), "--top", "3")
    head = next(line for line in out.splitlines() if line.startswith("#"))
    assert code == 0 and head.split()[:4] == ["#", "name", "status", "self"]
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert first.split()[:3] == ["1", "hypercall_page_[k]", "same"]
    code, out, _ = run(capsys, "show", str(a))
    assert code == 0 and not any(line.split()[:2] == ["name", "module"]
                                 for line in out.splitlines())
    code, out, _ = run(capsys, "diff", str(DATA / "hs-ad" / "v1" / "ad.prof"),
                       str(DATA / "hs-ad" / "v2" / "ad.prof"), "--top", "3")
    head = next(line for line in out.splitlines() if line.startswith("#"))
    assert head.split()[:3] == ["#", "cost", "centre"] and "module" in head


def test_renamed_mem_copies_compare_as_one_file_and_show_the_stray_allocation(capsys, tmp_path):
    """A Julia user keeps two runs of gvfn's test.jl as before.mem and after.mem, the second
    with one stray 32-byte allocation: they compare line by line as one file, that line
    first and the only change (as copies named test.jl.mem did; named apart, every line
    read removed in one and added in the other), and a note says why."""
    src = DATA / "julia-mem" / "gvfn-test.jl.mem"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("        0         r[numgvfs] = cy"))
    after = [*lines[:at], f"{32:>9}{lines[at][9:]}", *lines[at + 1:]]
    (tmp_path / "before.mem").write_text("".join(lines), encoding="utf-8")
    (tmp_path / "after.mem").write_text("".join(after), encoding="utf-8")
    code, out, _ = run(capsys, "diff", str(tmp_path / "before.mem"), str(tmp_path / "after.mem"),
                       "--json", "--top", "0")
    doc = json.loads(out)
    assert code == 0
    statuses = [r["status"] for r in doc["rows"]]
    assert statuses.count("changed") == 1 and set(statuses) == {"changed", "same"}
    first = doc["rows"][0]
    assert first["status"] == "changed" and first["name"].startswith("r[numgvfs] = cycleobs")
    assert first["delta"]["bytes"] == 32
    assert any(n.startswith("one source file per run, known only by the .mem files' names "
                            "(before, after)") for n in doc["notes"])
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v1" / "test.jl.mem").write_text("".join(lines), encoding="utf-8")
    (tmp_path / "v2" / "test.jl.mem").write_text("".join(after), encoding="utf-8")
    _, same, _ = run(capsys, "diff", str(tmp_path / "v1" / "test.jl.mem"),
                     str(tmp_path / "v2" / "test.jl.mem"), "--json", "--top", "0")
    named = json.loads(same)
    assert [(r["name"], r["status"], r["delta"]) for r in named["rows"]] == \
        [(r["name"], r["status"], r["delta"]) for r in doc["rows"]]
    assert not any(n.startswith("one source file per run") for n in named["notes"])
