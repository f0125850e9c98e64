"""`profdiff diff` with a bad or cut input (issue 18): every error printed, the JSON
still reports what loaded, ``--fail-if`` never judges an incomplete run, and the tree
JSON stays linear in its rows (paths by reference)."""

from __future__ import annotations

import json
from pathlib import Path

from viewer.cli import main
from viewer.report import PATH_LIMIT

DATA = Path(__file__).parents[1] / "data"
V1 = DATA / "hs-ad" / "v1" / "ad.prof"
V2 = DATA / "hs-ad" / "v2" / "ad.prof"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _cut_tree(src: Path, dst: Path, frac: float = 0.6) -> Path:
    data = src.read_bytes()
    at = data.index(b"\n", int(len(data) * frac)) + 1  # a line end: the hard case
    dst.write_bytes(data[:at])
    return dst


def test_diff_good_bad_prints_the_error_and_json_keeps_the_good_run(tmp_path, capsys):
    bad = tmp_path / "bad.prof"
    bad.write_text("garbage\n")
    code, out, err = run(capsys, "diff", V1, bad)
    assert code == 2 and f"profdiff: error: {bad}: expected a profile" in err
    code, out, err = run(capsys, "diff", V1, bad, "--json")
    assert code == 2
    doc = json.loads(out)
    assert [r["path"] for r in doc["runs"]] == [str(V1)]
    assert doc["runs"][0]["totals"]["total_alloc_bytes"] == 4291393792
    assert [e["path"] for e in doc["errors"]] == [str(bad)]
    assert str(bad) in doc["errors"][0]["error"]


def test_two_bad_inputs_are_both_reported(tmp_path, capsys):
    a, b = tmp_path / "a.prof", tmp_path / "b.prof"
    a.write_text("x\n")
    b.write_bytes(b"")
    code, _out, err = run(capsys, "diff", a, b)
    assert code == 2 and str(a) in err and str(b) in err


def test_fail_if_refuses_a_truncated_current_run(tmp_path, capsys):
    cut = _cut_tree(V2, tmp_path / "ad.prof")
    code, out, err = run(capsys, "diff", V1, cut, "--fail-if", "alloc_bytes>+1000%")
    assert code == 2
    assert f"{cut} is incomplete" in err and "--allow-incomplete" in err
    code, out, err = run(capsys, "diff", V1, cut, "--fail-if", "alloc_bytes>+1000%", "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["fail_if"]["failed"] is None and "incomplete" in doc["fail_if"]["not_judged"]
    assert [e["path"] for e in doc["errors"]] == [str(cut)]


def test_truncated_baseline_does_not_fail_with_bogus_new_rows(tmp_path, capsys):
    cut = _cut_tree(V1, tmp_path / "ad.prof", 0.4)
    code, _out, err = run(capsys, "diff", cut, V2, "--fail-if", "alloc_bytes>+10%")
    assert code == 2 and "incomplete" in err
    # explicitly allowed: the gate judges what was read (and here fails on the cut rows)
    code, out, _err = run(capsys, "diff", cut, V2, "--fail-if", "alloc_bytes>+10%",
                          "--allow-incomplete")
    assert code == 1


def test_complete_runs_gate_as_before(capsys):
    code, _out, _err = run(capsys, "diff", V1, V2, "--fail-if", "alloc_bytes>+10%")
    assert code == 1


def test_tree_json_rows_rebuild_their_paths_by_reference(capsys):
    code, out, _err = run(capsys, "diff", V1, V2, "--tree", "--json", "--top", "40")
    assert code == 0
    doc = json.loads(out)
    by_id = {r["id"]: r for r in doc["rows"]}
    by_id.update({a["id"]: a for a in doc["ancestors"]})
    assert not set(a["id"] for a in doc["ancestors"]) & {r["id"] for r in doc["rows"]}

    def label(x):
        return f"{x['module']}.{x['name']}" if x["module"] else x["name"]

    for r in doc["rows"]:
        chain, x = [], r
        while x is not None:
            chain.append(label(x))
            x = by_id[x["parent"]] if x["parent"] is not None else None
        assert chain[::-1] == r["path"]  # shallow tree: path in full
        assert r["depth"] == len(chain) - 1


def test_deep_tree_json_paths_are_bounded(tmp_path, capsys):
    deep = ";".join(f"f{i}" for i in range(300))
    a, b = tmp_path / "a.folded", tmp_path / "b.folded"
    a.write_text(f"{deep} 5\nmain;x 1\n")
    b.write_text(f"{deep} 7\nmain;x 1\n")
    code, out, _err = run(capsys, "diff", a, b, "--tree", "--json", "--top", "0")
    assert code == 0
    doc = json.loads(out)
    rows = {r["name"]: r for r in doc["rows"]}
    leaf = rows["f299"]
    assert leaf["depth"] == 299 and len(leaf["path"]) == PATH_LIMIT + 1
    assert leaf["path"][0] == "…" and leaf["path"][-1] == "f299"
    assert rows["f3"]["path"] == ["f0", "f1", "f2", "f3"]
    # output linear in rows: no row carries more than PATH_LIMIT + 1 labels
    assert max(len(r["path"]) for r in doc["rows"]) == PATH_LIMIT + 1
