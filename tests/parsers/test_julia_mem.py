"""Julia --track-allocation .mem reader on the real files in tests/data/julia-mem."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import julia_mem
from profdiff.parsers.detect import detect, load
from profdiff.parsers.errors import ParseError
from profdiff.parsers.model import Kind, Unit

DATA = Path(__file__).parent.parent / "data" / "julia-mem"
FILES = sorted(p.name for p in DATA.glob("*.mem"))


def _independent(path: Path) -> dict[int, int]:
    """line number -> bytes, read with the fixed 9-column layout."""
    out = {}
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        field = line[:9].strip()
        assert line[9:10] in ("", " ")
        if field != "-":
            out[no] = int(field)
    return out


def test_corpus_is_complete():
    assert FILES == ["coveragetools-testparser.jl.9172.mem", "gvfn-LinearRL.jl.mem",
                     "gvfn-test.jl.mem"]


@pytest.mark.parametrize("name", FILES)
def test_every_data_line_is_a_node(name):
    p = load(DATA / name)
    assert p.format == "julia-mem" and p.warnings == ()
    want = _independent(DATA / name)
    got = dict(zip(p.frames.line[p.frame].tolist(), p.values["bytes"].tolist(), strict=True))
    assert got == want
    assert p.totals["bytes"] == sum(want.values())
    assert (p.parent == -1).all()  # one-level tree
    assert p.metrics == (julia_mem.BYTES,)
    assert p.metric("bytes").kind is Kind.SELF and p.metric("bytes").unit is Unit.BYTES
    assert not p.metric("bytes").sampled
    assert p.default_metric == "bytes"


def test_gvfn_test_rows_checked_by_eye():
    p = load(DATA / "gvfn-test.jl.mem")
    assert p.n_nodes == 23 and p.totals["bytes"] == 343594032
    row = {int(ln): i for i, ln in enumerate(p.frames.line.tolist())}
    i = row[69]
    assert p.values["bytes"][i] == 115200288
    assert p.frames.name[i] == "preds_tilde .= clamp!(dot.([ϕ_tp1],weights), 0.0,1.0)"
    assert p.frames.src[i] == "69"  # the line number, as text: the views show it
    assert p.frames.module[i] == "gvfn-test.jl" and p.frames.kind[i] == "line"
    assert p.values["bytes"][row[20]] == 23530432
    assert p.values["bytes"][row[31]] == 0  # ran, allocated nothing: still a node
    assert p.meta["files"] == ["gvfn-test.jl"] and p.meta["pids"] == []
    assert p.extras["by_file"] == [{"file": "gvfn-test.jl", "bytes": 343594032, "lines": 23}]
    # "for i in 2:(numgvfs-1)" is on lines 49 and 74: the second gets an occurrence index
    assert p.frames.match[row[49]] == "for i in 2:(numgvfs-1)"
    assert p.frames.match[row[74]] == "for i in 2:(numgvfs-1)\x1e2"
    assert len(set(p.frames.key.tolist())) == p.n_nodes


def test_pid_suffix_is_removed_from_module():
    p = load(DATA / "coveragetools-testparser.jl.9172.mem")
    assert p.frames.module.tolist() == ["coveragetools-testparser.jl"]
    assert p.frames.name.tolist() == ["f2(x) = 2x"] and p.frames.line.tolist() == [2]
    assert p.meta["pids"] == [9172] and p.totals["bytes"] == 96669


def test_a_single_file_names_its_source_after_itself_a_folder_does_not(tmp_path):
    """The one source of a single .mem file is known only from the file's name (a renamed
    copy gets the copy's name); a folder's sources are paths in the tree."""
    assert load(DATA / "gvfn-test.jl.mem").meta["source_from_file_name"] == "gvfn-test.jl"
    copy = tmp_path / "before.mem"
    shutil.copy(DATA / "gvfn-test.jl.mem", copy)
    p = load(copy)
    assert p.meta["source_from_file_name"] == "before" and set(p.frames.module) == {"before"}
    run = tmp_path / "run"
    _run_folder(run, "4242")
    assert "source_from_file_name" not in load(run).meta


def test_shifted_lines_align_by_source_text(tmp_path):
    src = (DATA / "gvfn-test.jl.mem").read_text(encoding="utf-8")
    v2 = tmp_path / "gvfn-test.jl.mem"
    v2.write_text("        - # a new header comment\n        - \n" + src, encoding="utf-8")
    a, b = load(DATA / "gvfn-test.jl.mem"), load(v2)
    assert (b.frames.line == a.frames.line + 2).all()
    assert a.frames.key.tolist() == b.frames.key.tolist()
    assert (a.values["bytes"] == b.values["bytes"]).all()


def _run_folder(root: Path, pid: str, scale: int = 1) -> None:
    """A run folder laid out like a package: src/ and test/ with pid-suffixed .mem files."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "test").mkdir(exist_ok=True)
    body = (DATA / "gvfn-LinearRL.jl.mem").read_text(encoding="utf-8")
    (root / "src" / f"LinearRL.jl.{pid}.mem").write_text(body, encoding="utf-8")
    lines = (DATA / "gvfn-test.jl.mem").read_text(encoding="utf-8").splitlines(True)
    scaled = [f"{int(ln[:9]) * scale:>9}{ln[9:]}" if ln[:9].strip() != "-" else ln
              for ln in lines]
    (root / "test" / f"runtests.jl.{pid}.mem").write_text("".join(scaled), encoding="utf-8")


def test_folder_is_one_run(tmp_path):
    run = tmp_path / "run"
    _run_folder(run, "4242")
    (run / "src" / "README.md").write_text("not a mem file\n")
    assert julia_mem.sniff(b"", run) == 1.0
    assert detect(run) is julia_mem
    p = load(run)
    assert p.format == "julia-mem" and p.warnings == ()
    assert p.meta["files"] == ["src/LinearRL.jl", "test/runtests.jl"]
    assert p.meta["mem_files"] == ["src/LinearRL.jl.4242.mem", "test/runtests.jl.4242.mem"]
    assert p.meta["pids"] == [4242]
    assert p.n_nodes == 25 and p.totals["bytes"] == 343594032
    assert set(p.frames.module.tolist()) == {"src/LinearRL.jl", "test/runtests.jl"}
    assert [r["file"] for r in p.extras["by_file"]] == ["test/runtests.jl", "src/LinearRL.jl"]


def test_folder_with_several_pids(tmp_path):
    run = tmp_path / "run"
    _run_folder(run, "100", scale=1)
    _run_folder(run, "200", scale=2)
    old = run / "test" / "runtests.jl.100.mem"
    os.utime(old, (1_000_000_000, 1_000_000_000))
    os.utime(run / "src" / "LinearRL.jl.100.mem", (1_000_000_000, 1_000_000_000))
    p = load(run)
    assert p.meta["pids"] == [200] and p.totals["bytes"] == 2 * 343594032
    assert len(p.warnings) == 1 and "pid 200" in p.warnings[0] and "100" in p.warnings[0]
    assert load(run, pid=100).totals["bytes"] == 343594032
    both = load(run, pid="all")
    assert both.totals["bytes"] == 3 * 343594032 and both.n_nodes == 25
    with pytest.raises(ParseError, match="process id"):
        load(run, pid=7)


def test_folder_without_mem_files(tmp_path):
    assert julia_mem.sniff(b"", tmp_path) == 0.0
    with pytest.raises(ParseError, match="folder"):
        load(tmp_path)
    with pytest.raises(ParseError, match=r"\.mem"):
        julia_mem.read(tmp_path)


def test_no_data_lines_is_an_empty_profile_with_a_warning(tmp_path):
    path = tmp_path / "never_ran.jl.77.mem"
    path.write_text("        - function f(x)\n        -     x + 1\n        - end\n")
    p = load(path)
    assert p.n_nodes == 0 and p.totals["bytes"] == 0
    assert len(p.warnings) == 1 and "no line has allocation data" in p.warnings[0]


def test_bad_line_is_located(tmp_path):
    src = (DATA / "gvfn-LinearRL.jl.mem").read_text(encoding="utf-8").splitlines(True)
    src[9] = "this line lost its prefix\n"
    path = tmp_path / "edited.jl.mem"
    path.write_text("".join(src), encoding="utf-8")
    with pytest.raises(ParseError) as e:
        julia_mem.read(path)
    assert "edited.jl.mem:10" in str(e.value) and "9-column" in str(e.value)
    p = julia_mem.read(path, lenient=True)
    assert p.n_nodes == 2 and len(p.warnings) == 1 and ":10:" in p.warnings[0]


def test_empty_and_binary(tmp_path):
    empty = tmp_path / "empty.jl.mem"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match="empty"):
        julia_mem.read(empty)
    garbage = tmp_path / "garbage.jl.mem"
    garbage.write_bytes(bytes(range(1, 256)) * 4)
    with pytest.raises(ParseError, match="garbage.jl.mem:1"):
        julia_mem.read(garbage)
    assert julia_mem.sniff(garbage.read_bytes(), garbage) == 0.0


@pytest.mark.parametrize("name", FILES)
def test_redetect_under_unknown_name(tmp_path, name):
    dst = tmp_path / "x.unknown"
    shutil.copy(DATA / name, dst)
    assert detect(dst) is julia_mem
    p = load(dst)
    assert p.totals["bytes"] == sum(_independent(DATA / name).values())
    assert p.frames.module.tolist() == ["x.unknown"] * p.n_nodes


def test_sniff_scores():
    head = (DATA / "gvfn-test.jl.mem").read_bytes()
    assert julia_mem.sniff(head, Path("a.jl.mem")) > julia_mem.sniff(head, Path("a.txt")) > 0
    assert julia_mem.sniff(b"heap profile: 1: 2 [3: 4]\n", Path("x.mem")) == 0.0
    # a text column report whose first field is not 9 wide is not a .mem file
    assert julia_mem.sniff(b"12 foo\n3 bar\n- baz\n", Path("x.txt")) == 0.0


def test_large_counts_widen_the_field(tmp_path):
    path = tmp_path / "big.jl.1.mem"
    path.write_text("        - f() = 1\n1234567890 x = zeros(10^8)\n        0 y = 1\n")
    p = julia_mem.read(path)
    assert p.values["bytes"].tolist() == [1234567890, 0]
    assert np.array_equal(p.frames.line, [2, 3])
