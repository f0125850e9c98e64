"""Run labels (issue 19 item 1): the shortest path suffix that tells runs apart, the
user's ``--label``, in every CLI table and JSON document; and the rule for a first
argument that is both a subcommand name and a path in the working directory (item 12).

The CLI tests copy three real GHC reports of one program into ``v1/ v2/ v3/`` under the
same file name ``x.prof`` (the situation the issue describes)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from profdiff.viewer.cli import main
from profdiff.viewer.run_labels import (
    LabelError,
    distinct_labels,
    natural_key,
    order_dropped,
    parse_label_options,
    shortest_suffixes,
)

DATA = Path(__file__).parents[1] / "data" / "hs-ad"
SOURCES = {"v1": DATA / "v1/ad.prof", "v2": DATA / "v2/ad.prof",
           "v3": DATA / "noise-v1/run2/ad.prof"}
# from the files' own headers ("total alloc = 4,291,393,792 bytes", "(2877 ticks ...)")
ALLOC = {"v1": 4_291_393_792, "v2": 6_560_334_592, "v3": 4_291_393_792}
TICKS = {"v1": 2877, "v2": 3791, "v3": 3054}


@pytest.fixture
def three(tmp_path, monkeypatch):
    """v1/x.prof, v2/x.prof, v3/x.prof in a fresh working directory (relative paths)."""
    for v, src in SOURCES.items():
        (tmp_path / v).mkdir()
        shutil.copy(src, tmp_path / v / "x.prof")
    monkeypatch.chdir(tmp_path)
    return ["v1/x.prof", "v2/x.prof", "v3/x.prof"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------
# the function
# ------------------------------------------------------------------------------------------
def test_same_file_name_in_different_folders_gets_the_folder():
    assert distinct_labels(["/r/v1/x.prof", "/r/v2/x.prof", "/r/v3/x.prof"]) == \
        ["v1/x.prof", "v2/x.prof", "v3/x.prof"]


def test_different_names_stay_file_names():
    assert distinct_labels(["/r/a/base.prof", "/q/b/new.prof"]) == ["base.prof", "new.prof"]


def test_only_as_many_folders_as_needed():
    assert distinct_labels(["/p/v1/run/x.prof", "/p/v2/run/x.prof", "/p/v2/run/y.prof"]) == \
        ["v1/run/x.prof", "v2/run/x.prof", "y.prof"]


def test_folders_of_different_depth_still_differ():
    # /r/a/x.prof is a suffix of nothing else only once "r" is included
    assert distinct_labels(["/r/a/x.prof", "/r/b/a/x.prof"]) == ["r/a/x.prof", "b/a/x.prof"]


def test_the_same_file_twice_is_numbered(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # two spellings of one file, then another file of the same name
    labels = distinct_labels(["x.prof", "./x.prof", "sub/x.prof"])
    base = tmp_path.name
    assert labels == [f"{base}/x.prof", f"{base}/x.prof#2", "sub/x.prof"]
    assert distinct_labels(["/r/x.prof", "/r/x.prof", "/r/x.prof"]) == \
        ["x.prof", "x.prof#2", "x.prof#3"]


def test_user_labels_replace_the_suffix_and_never_collide():
    paths = ["/r/v1/x.prof", "/r/v2/x.prof"]
    assert distinct_labels(paths, {"/r/v1/x.prof": "old"}) == ["old", "v2/x.prof"]
    assert distinct_labels(paths, {"/r/v1/./x.prof": "v2/x.prof"}) == \
        ["v2/x.prof", "v2/x.prof#2"]
    assert distinct_labels(paths, {"/r/v1/x.prof": "  "}) == ["v1/x.prof", "v2/x.prof"]


def test_natural_order_reads_numbers_as_numbers():
    assert sorted(["run10", "run9", "Run2"], key=natural_key) == ["Run2", "run9", "run10"]
    assert order_dropped(["/r/v10/x.prof", "/r/v2/x.prof", "/r/v1/x.prof"]) == \
        ["/r/v1/x.prof", "/r/v2/x.prof", "/r/v10/x.prof"]
    assert shortest_suffixes(["/r/v10/x.prof", "/r/v2/x.prof"]) == ["v10/x.prof", "v2/x.prof"]


def test_label_options_in_order_and_by_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = ["v1/x.prof", "v2/x.prof", "v3/x.prof"]
    assert parse_label_options(["a", "b"], paths) == (("v1/x.prof", "a"), ("v2/x.prof", "b"))
    assert parse_label_options(["new=./v3/x.prof", "old"], paths) == \
        (("v3/x.prof", "new"), ("v1/x.prof", "old"))
    with pytest.raises(LabelError, match="v9/x.prof is not one of the runs"):
        parse_label_options(["a=v9/x.prof"], paths)
    with pytest.raises(LabelError, match="more labels than runs"):
        parse_label_options(["a", "b", "c", "d"], paths)
    with pytest.raises(LabelError, match="empty"):
        parse_label_options(["=v1/x.prof"], paths)


# ------------------------------------------------------------------------------------------
# the CLI on real files
# ------------------------------------------------------------------------------------------
def test_diff_table_names_every_run_by_its_folder(capsys, three):
    code, out, _ = run(capsys, "diff", *three, "--top", "3", "--metrics", "time_s")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("baseline [0] v1/x.prof")
    assert lines[1].startswith("run      [1] v2/x.prof")
    assert lines[2].startswith("current  [2] v3/x.prof")
    totals = next(ln for ln in lines if ln.startswith("total "))
    assert "[base] v1/x.prof" in totals and "[run1] v2/x.prof" in totals \
        and "[new] v3/x.prof" in totals
    head = next(ln for ln in lines if ln.startswith("#"))
    assert "time v1/x.prof" in head and "v2/x.prof" in head and "v3/x.prof" in head
    alloc = next(ln for ln in lines if ln.startswith("total alloc"))
    assert "4,291,393,792" in alloc and "6,560,334,592" in alloc


def test_diff_json_has_a_label_per_run_beside_its_path(capsys, three):
    code, out, _ = run(capsys, "diff", *three, "--json", "--top", "1")
    assert code == 0
    doc = json.loads(out)
    assert [r["path"] for r in doc["runs"]] == three
    assert [r["label"] for r in doc["runs"]] == three  # v1/x.prof ... (already the suffix)
    assert doc["totals"]["total_alloc_bytes"]["values"] == [ALLOC[v] for v in SOURCES]
    assert doc["totals"]["total_ticks"]["values"] == [TICKS[v] for v in SOURCES]


def test_label_option_names_runs_in_order_or_by_path(capsys, three):
    code, out, _ = run(capsys, "diff", *three, "--json", "--top", "1",
                       "--label", "before", "--label", "after=v3/x.prof")
    assert code == 0
    assert [r["label"] for r in json.loads(out)["runs"]] == ["before", "v2/x.prof", "after"]
    code, out, _ = run(capsys, "diff", *three, "--top", "1", "--label", "before")
    assert out.splitlines()[0].split()[:4] == ["baseline", "[0]", "before", "v1/x.prof"]


def test_a_label_for_no_run_is_a_usage_error(capsys, three):
    code, _, err = run(capsys, "diff", *three, "--label", "x=v9/x.prof")
    assert code == 2
    assert "--label x=v9/x.prof: v9/x.prof is not one of the runs" in err
    assert "Traceback" not in err


def test_show_and_export_and_report_use_the_labels(capsys, three, tmp_path):
    code, out, _ = run(capsys, "show", three[1], "--json", "--top", "1", "--label", "v2 build")
    assert code == 0 and json.loads(out)["run"]["label"] == "v2 build"
    code, out, _ = run(capsys, "show", three[1], "--top", "1", "--label", "v2 build")
    assert out.startswith("v2 build: v2/x.prof")
    code, _, _ = run(capsys, "export", *three, "--csv", tmp_path / "t.csv", "--metrics", "time_s")
    assert code == 0
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as f:
        header = next(csv.reader(line for line in f if not line.startswith("#")))
    assert {"time_s[v1/x.prof]", "time_s[v2/x.prof]", "time_s[v3/x.prof]"} <= set(header)
    code, _, _ = run(capsys, "report", three[0], three[1], "-o", tmp_path / "r.md",
                     "--markdown", "--label", "old", "--label", "new")
    assert code == 0
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.startswith("## profdiff: `old (v1/x.prof)` → `new (v2/x.prof)`")
    code, _, _ = run(capsys, "report", three[0], three[1], "-o", tmp_path / "r.html")
    assert code == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<title>profdiff: v1/x.prof vs v2/x.prof" in html


# ------------------------------------------------------------------------------------------
# a folder named like a subcommand
# ------------------------------------------------------------------------------------------
def test_a_subcommand_name_stays_the_subcommand_with_a_hint(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "watch").mkdir()
    with pytest.raises(SystemExit) as e:  # watch needs DIR: argparse's usage error
        main(["watch"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "'watch' is the watch subcommand; to open the folder ./watch type: " \
           "profdiff ./watch" in err


def test_no_hint_when_the_folder_is_what_the_subcommand_gets(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "show").mkdir()
    shutil.copy(SOURCES["v1"], tmp_path / "show" / "x.prof")
    code, out, err = run(capsys, "show", "show/x.prof", "--top", "1")
    assert code == 0 and out.startswith("show/x.prof  (ghc-prof)")
    assert "note" not in err
    code, out, err = run(capsys, "show", SOURCES["v2"], "--top", "1")
    assert code == 0 and "'show' is the show subcommand" in err


def test_a_path_with_a_slash_is_always_a_path(tmp_path, monkeypatch):
    import profdiff.viewer.cli as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "watch").mkdir()
    seen = []
    monkeypatch.setattr(cli, "_run_gui", lambda request: seen.append(request) or 0)
    assert cli.main(["./watch"]) == 0 and cli.main(["watch/"]) == 0
    assert seen == [["./watch"], ["watch/"]]  # the app (which watches a folder), not watch
