"""Collapsed/folded stacks reader on the real files in tests/data/folded."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import folded
from profdiff.parsers.detect import detect, load, read_bytes
from profdiff.parsers.errors import ParseError
from profdiff.parsers.model import Kind
from profdiff.viewer.cli import main
from profdiff.viewer.compare import align

DATA = Path(__file__).parent.parent / "data"
FOLDED = DATA / "folded"
FILES = sorted(p.name for p in FOLDED.iterdir() if p.name != "SOURCES.md")
OTHERS = sorted(p for p in DATA.rglob("*") if p.is_file() and FOLDED not in p.parents
                and p.suffix != ".md")


def _stack_lines(path: Path) -> list[tuple[str, float]]:
    """(stack, weight) per line, read without the reader (austin: first of time,idle,mem)."""
    out = []
    for line in read_bytes(path).decode("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        stack, count = line.rsplit(" ", 1)
        out.append((stack, float(count.split(",")[0])))
    return out


def _node(p, path: list[str]) -> int:
    """Node id of a root-first path of frame names."""
    parent = -1
    for name in path:
        kids = p.children(parent)
        hit = [k for k in kids if p.name[k] == name]
        assert len(hit) == 1, (name, [p.name[k] for k in kids])
        parent = int(hit[0])
    return parent


def test_corpus_is_complete():
    assert len(FILES) == 13
    assert "inferno-example-perf-stacks-collapsed.txt.gz" in FILES


@pytest.mark.parametrize("name", FILES)
def test_every_file_total_is_the_sum_of_counts(name):
    path = FOLDED / name
    p = load(path)
    assert p.format == "folded" and not p.incomplete and p.warnings == ()
    rows = _stack_lines(path)
    want = sum(c for _, c in rows)
    assert p.totals["total_samples"] == want
    assert p.values["self_samples"].sum() == want
    assert p.values["total_samples"][p.roots].sum() == want
    assert p.meta["stacks"] == len(rows)
    # every leaf's self value is the sum of its lines (duplicate stacks are summed)
    n_distinct = len({s for s, _ in rows})
    assert (p.values["self_samples"] > 0).sum() <= n_distinct
    assert p.values["self_pct"].sum() == pytest.approx(100.0)
    t = p.metric("total_samples")
    assert t.kind is Kind.INCLUSIVE and t.self_of == "self_samples" and t.sampled
    assert p.default_metric == "self_samples"


def test_firefox_rows_checked_by_eye():
    p = load(FOLDED / "firefox-profiler-flamegraph.txt")
    # line 1: "emulator;[unknown];_dl_name_match_p 4263"
    i = _node(p, ["emulator", "[unknown]", "_dl_name_match_p"])
    assert p.values["self_samples"][i] == 4263 and p.values["total_samples"][i] == 4263
    # lines 2-3 are below _dl_sysdep_start: 3215 + 568 + ...
    j = _node(p, ["emulator", "[unknown]", "_dl_sysdep_start", "_dl_init_paths"])
    assert p.values["self_samples"][j] == 3215
    assert p.module[j] == "" and p.src[j] == ""


def test_perf_kind_suffixes():
    p = load(FOLDED / "flamegraph-perf-iperf-stacks-pidtid-01-collapsed-all.txt")
    # line 2: "iperf;[unknown];[iperf];__vdso_gettimeofday_[k] 1"
    i = _node(p, ["iperf", "[unknown]", "[iperf]", "__vdso_gettimeofday_[k]"])
    assert p.values["self_samples"][i] == 1
    assert p.frames.kind[p.frame[i]] == "kernel"
    q = load(FOLDED / "flamegraph-perf-numa-stacks-01-collapsed-all.txt")
    k = _node(q, ["java", "[perf-10939.map]_[j]"])  # "java;[perf-10939.map]_[j] 23"
    assert q.values["self_samples"][k] == 23 and q.frames.kind[q.frame[k]] == "jit"


def test_async_profiler_frames_with_spaces():
    p = load(FOLDED / "async-profiler-collapsed-part.txt")
    names = set(p.frames.name.tolist())
    assert "oopDesc* PSPromotionManager::copy_to_survivor_space<false>(oopDesc*)" in names
    assert "InstanceKlass::oop_push_contents(PSPromotionManager*, oopDesc*)" in names


def test_ghcprof_folded():
    path = FOLDED / "inferno-collapse-ghcprof-ticks-bytes.folded.txt"
    p = load(path)
    rows = _stack_lines(path)
    assert p.totals["total_samples"] == sum(c for _, c in rows) == 59542424
    root = _node(p, ["MAIN.MAIN"])  # first line "MAIN.MAIN 728"; every stack starts there
    assert len(p.roots) == 1
    assert p.values["self_samples"][root] == 728
    assert p.values["total_samples"][root] == 59542424
    i = _node(p, ["MAIN.MAIN", "Main.CAF:ds_r5B6", "Main.optionsParser",
                  "Options.Applicative.Types.manyM"])
    assert p.values["self_samples"][i] == 176


def test_austin_dialect():
    p = load(FOLDED / "austin-3.3.0-python-wall.folded.txt")
    assert p.meta["austin"] == "3.3.0" and p.meta["mode"] == "wall"
    assert p.meta["interval"] == 100 and p.meta["duration"] == 23873
    assert p.meta["weight"] == "microseconds"
    assert p.totals["total_samples"] == 105 + 186
    top = _node(p, ["P6360", "T6360", "_install_external_importers"])
    assert p.frames.kind[p.frame[p.parent[top]]] == "thread"
    assert p.module[top] == "<frozen importlib._bootstrap>"
    assert p.src[top] == "<frozen importlib._bootstrap>:1187"
    assert p.frames.line[p.frame[top]] == 1187
    leaf = [i for i in range(p.n_nodes) if p.src[i] == "<frozen importlib._bootstrap_external>:828"]
    assert len(leaf) == 1 and p.name[leaf[0]] == "<module>"
    assert p.values["self_samples"][leaf[0]] == 186
    # pid/tid frames align across runs whatever the ids
    keys = set(p.frames.key.tolist())
    assert "\x1fP" in keys and "\x1fT" in keys


def test_austin_full_mode_and_pyspy_frames(tmp_path):
    """Dialects without a corpus file: austin full-mode 'time,idle,mem' and py-spy raw."""
    f = tmp_path / "full.txt"
    f.write_text("# austin: 3.4.0\n# mode: full\n\n"
                 "P1;T2;a.py:main:3;a.py:f:9 120,0,-64\nP1;T2;a.py:main:3 30,1,0\n")
    p = load(f)
    assert p.totals["total_samples"] == 150
    assert p.values["self_samples"][_node(p, ["P1", "T2", "main", "f"])] == 120
    assert p.values["total_samples"][_node(p, ["P1", "T2", "main"])] == 150
    g = tmp_path / "pyspy.txt"
    g.write_text("<module> (run.py:10);work (lib/w.py:22) 7\n<module> (run.py:10);idle (lib/w.py:40) 3\n")
    q = load(g)
    assert q.format == "folded"
    i = _node(q, ["<module>", "work"])
    assert q.module[i] == "lib/w.py" and q.frames.line[q.frame[i]] == 22
    assert q.values["total_samples"][_node(q, ["<module>"])] == 10


def test_float_weights(tmp_path):
    f = tmp_path / "w.txt"
    f.write_text("main;f 1.5\nmain;g 2.25\nmain 0.25\n")
    p = load(f)
    assert p.totals["total_samples"] == 4.0
    assert p.values["total_samples"][_node(p, ["main"])] == 4.0


@pytest.mark.parametrize("name", ["inferno-vertx-collapsed-unsorted-1.txt",
                                  "inferno-example-perf-stacks-collapsed.txt.gz"])
def test_redetect_under_unknown_name(tmp_path, name):
    dst = tmp_path / "x.unknown"
    shutil.copy(FOLDED / name, dst)
    assert detect(dst) is folded
    assert load(dst).totals["total_samples"] == sum(c for _, c in _stack_lines(FOLDED / name))


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(DATA)))
def test_never_claims_other_formats(path):
    try:
        mod = detect(path)
    except ParseError:
        return  # not a profile at all (or a folder's part): not ours either
    assert mod.FORMAT != "folded"


def test_empty_file(tmp_path):
    f = tmp_path / "e.folded"
    f.write_text("")
    with pytest.raises(ParseError, match="empty"):
        folded.read(f)


def test_only_comments(tmp_path):
    f = tmp_path / "c.folded"
    f.write_text("# austin: 3.3.0\n# mode: wall\n")
    with pytest.raises(ParseError, match="only comments"):
        folded.read(f)


def test_garbage(tmp_path):
    f = tmp_path / "junk.bin"
    f.write_bytes(bytes(range(256)) * 50)
    with pytest.raises(ParseError):
        load(f)
    with pytest.raises(ParseError, match="binary"):
        folded.read(f)


def test_wrong_format_line_named(tmp_path):
    src = (FOLDED / "flamegraph-perf-java-stacks-01-collapsed-all.txt").read_text()
    lines = src.splitlines()
    lines[4] = "ab;[unknown];oops no count"
    f = tmp_path / "bad.txt"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as e:
        load(f)
    assert f"{f}:5:" in str(e.value) and "collapsed stack line" in str(e.value)
    p = load(f, lenient=True)
    assert len(p.warnings) == 1 and ":5:" in p.warnings[0]
    assert p.meta["stacks"] == 32


def test_truncated(tmp_path):
    data = gzip.decompress((FOLDED / "inferno-example-perf-stacks-collapsed.txt.gz").read_bytes())
    cut = data[: len(data) // 2]
    cut = cut[: cut.rfind(b"\n") + 10]  # inside a stack: the last line has no count
    f = tmp_path / "cut.txt"
    f.write_bytes(cut)
    p = load(f)
    assert p.incomplete and "dropped" in p.incomplete_reason
    full_lines = cut[: cut.rfind(b"\n")].decode().splitlines()
    assert p.totals["total_samples"] == sum(int(ln.rsplit(" ", 1)[1]) for ln in full_lines)
    # cut right after a count: kept, but flagged
    g = tmp_path / "cut2.txt"
    g.write_bytes(data[: data.find(b"\n", 1000)])
    q = load(g)
    assert q.incomplete and "may be cut short" in q.incomplete_reason
    assert q.meta["stacks"] == data[: data.find(b"\n", 1000)].count(b"\n") + 1


def test_cut_after_the_first_line_is_still_folded_and_says_so(tmp_path):
    """A small file cut inside its second stack (a run still writing it) was judged by
    its cut line, so no reader claimed it: "not a supported format".  The cut line is
    left out of the judgement; the reader then flags the file as cut."""
    data = (FOLDED / "flamegraph-perf-iperf-stacks-pidtid-01-collapsed-all.txt").read_bytes()
    first = data.index(b"\n") + 1
    f = tmp_path / "cut.txt"
    f.write_bytes(data[: first + 30])
    assert detect(f) is folded
    p = load(f)
    assert p.incomplete and "ends inside line 2" in p.incomplete_reason
    name, count = data[: first - 1].decode().rsplit(" ", 1)
    assert p.totals["total_samples"] == int(count) and p.meta["stacks"] == 1
    g = tmp_path / "not-folded.txt"  # one good line, then another format: not claimed
    g.write_bytes(data[:first] + b"total time  =  0.01 secs\nCOST CENTRE MODULE\n")
    with pytest.raises(ParseError):
        detect(g)


def test_vertx_pair_diff(capsys):
    a = FOLDED / "inferno-vertx-collapsed-unsorted-1.txt"
    b = FOLDED / "inferno-vertx-collapsed-unsorted-2.txt"
    c = align([load(a), load(b)], mode="flat")
    row = {(c.module[i], c.name[i]): i for i in range(c.n_rows)}
    i = row[("", "SpinPause")]
    # grep -c: SpinPause only in the second half (7 samples)
    want = sum(v for s, v in _stack_lines(b) if s.endswith(";SpinPause"))
    assert want == 7 and c.value("self_samples", 1)[i] == 7
    assert not c.present[i, 0]
    code = main(["diff", str(a), str(b), "--top", "5"])
    out = capsys.readouterr().out
    assert code == 0 and "SpinPause" in out and "(folded)" in out
    assert np.isclose(c.value("self_samples", 0).sum(), 147)
