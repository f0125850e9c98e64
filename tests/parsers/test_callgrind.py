"""callgrind / cachegrind reader: the corpus files checked against callgrind_annotate."""

from __future__ import annotations

import gzip
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from callgrind_annotate import annotate, function_name
from tool_requirements import require_tool

from profdiff import parsers
from profdiff.parsers import callgrind
from profdiff.parsers.call_graph import CallGraph
from profdiff.parsers.errors import ParseError

DATA = Path(__file__).resolve().parent.parent / "data" / "callgrind"
CORPUS = sorted(p.name for p in DATA.iterdir() if p.name != "SOURCES.md")


def _plain_copy(name: str, tmp_path: Path) -> Path:
    """The corpus file uncompressed in tmp_path (callgrind_annotate reads plain text)."""
    src = DATA / name
    dst = tmp_path / name.removesuffix(".gz")
    if name.endswith(".gz"):
        dst.write_bytes(gzip.decompress(src.read_bytes()))
    else:
        shutil.copy(src, dst)
    return dst


def _by_name(prof, metric: str) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for name, v in zip(prof.frames.name.tolist(), prof.values[metric].tolist(), strict=True):
        out[name] += int(v)
    return dict(out)


@pytest.mark.parametrize("name", CORPUS)
def test_detected_and_exact(name: str) -> None:
    prof = parsers.load(DATA / name)
    assert prof.format == "callgrind"
    assert not prof.incomplete, prof.incomplete_reason
    assert prof.meta["precision"] == "exact"
    for m in prof.metrics:
        assert not m.sampled
        assert prof.values[m.name].dtype == np.int64
    graph = prof.extras["call_graph"]
    assert isinstance(graph, CallGraph) and len(graph) == prof.meta["n_call_edges"]
    assert (prof.parent == -1).all()  # flat: no call tree is invented from edges


def _zero_count_call_costs(prof, metric: str) -> dict[str, int]:
    """Per caller name, the cost of its ``calls=0`` edges (pprof writes them):
    callgrind_annotate only treats a cost line as a call's when the count is > 0, so it
    books these inclusive costs as the caller's self cost."""
    g = prof.extras["call_graph"]
    out: dict[str, int] = defaultdict(int)
    names = prof.frames.name
    for e in np.flatnonzero(g.calls == 0).tolist():
        out[names[g.caller[e]]] += int(g.cost[metric][e])
    return dict(out)


@pytest.mark.parametrize("name", CORPUS)
def test_totals_and_self_costs_equal_callgrind_annotate(name: str, tmp_path: Path) -> None:
    tool = require_tool("callgrind_annotate", "apt-get install valgrind")
    path = _plain_copy(name, tmp_path)
    prof = parsers.load(path)
    events = prof.meta["events"]
    totals, rows = annotate(tool, path, events)
    bases = [callgrind._metric_base(e) for e in events]
    objects = set(prof.extras["object_paths"].tolist())
    has_summary = any(pt["summary"] or pt["totals"] for pt in prof.meta["parts"])
    for j, b in enumerate(bases):
        theirs: dict[str, int] = defaultdict(int)
        for row, costs in rows:
            theirs[function_name(row, objects)] += costs[j]
        ours = _by_name(prof, f"self_{b}")
        for k, v in _zero_count_call_costs(prof, f"self_{b}").items():
            ours[k] += v
        assert {k: v for k, v in ours.items() if v} == {k: v for k, v in theirs.items() if v}
        assert sum(ours.values()) == sum(costs[j] for _, costs in rows)
        if has_summary:  # else callgrind_annotate adds up its (calls=0-skewed) rows
            assert prof.totals[f"self_{b}"] == totals[j]
        else:
            assert prof.totals[f"self_{b}"] == int(prof.values[f"self_{b}"].sum())
            assert totals[j] == sum(ours.values())


@pytest.mark.parametrize("name", CORPUS)
def test_inclusive_equals_callgrind_annotate_where_not_recursive(name: str, tmp_path: Path
                                                                 ) -> None:
    """callgrind_annotate --inclusive=yes adds self-calls' costs again; elsewhere it must
    agree with ours, for functions that have one row there (no inlined-file split)."""
    tool = require_tool("callgrind_annotate", "apt-get install valgrind")
    path = _plain_copy(name, tmp_path)
    prof = parsers.load(path)
    events = prof.meta["events"]
    _, rows = annotate(tool, path, events, inclusive=True)
    g = prof.extras["call_graph"]
    if (g.calls == 0).any():
        # pprof writes calls=0, which callgrind_annotate books as self cost, so its
        # inclusive figures are not comparable: check ours are bounded instead
        for e in events:
            b = callgrind._metric_base(e)
            incl, own = prof.values[f"total_{b}"], prof.values[f"self_{b}"]
            assert (incl >= own).all() and incl.max() <= prof.totals[f"self_{b}"]
            assert incl.max() == prof.totals[f"self_{b}"]  # the entry function holds all
        return
    recursive = set(g.caller[g.caller == g.callee].tolist())
    objects = set(prof.extras["object_paths"].tolist())
    rows_per_name: dict[str, list] = defaultdict(list)
    for row, costs in rows:
        rows_per_name[function_name(row, objects)].append(costs)
    names = prof.frames.name.tolist()
    count = defaultdict(int)
    for n in names:
        count[n] += 1
    checked = 0
    for i, n in enumerate(names):
        if i in recursive or count[n] != 1 or len(rows_per_name.get(n, [])) != 1:
            continue
        for j, e in enumerate(events):
            b = callgrind._metric_base(e)
            # ours never goes below self (callgrind_annotate's can, by a few units)
            theirs = max(rows_per_name[n][0][j], int(prof.values[f"self_{b}"][i]))
            assert prof.values[f"total_{b}"][i] == theirs, n
        checked += 1
    assert checked >= min(3, prof.n_nodes - len(recursive))


# ----- bad input -----------------------------------------------------------------------
def _corpus_text(name: str = "malloc-KGuzikowski-mdriver-xterm.callgrind.out") -> str:
    return (DATA / name).read_text()


def test_cut_mid_line_is_incomplete(tmp_path: Path) -> None:
    text = _corpus_text()
    cut = tmp_path / "callgrind.out.cut"
    cut.write_text(text[: text.index("\n", len(text) // 2) - 1])  # inside a line
    prof = parsers.load(cut)
    assert prof.incomplete and "newline" in prof.incomplete_reason
    whole = parsers.load(DATA / "malloc-KGuzikowski-mdriver-xterm.callgrind.out")
    assert prof.values["self_Ir"].sum() < whole.values["self_Ir"].sum()


def test_cut_at_line_end_without_totals_is_incomplete(tmp_path: Path) -> None:
    text = _corpus_text()
    cut = tmp_path / "callgrind.out.cut"
    cut.write_text(text[: text.index("\n", len(text) // 2) + 1])
    prof = parsers.load(cut)
    assert prof.incomplete and "totals" in prof.incomplete_reason


def test_cut_after_calls_line_is_incomplete(tmp_path: Path) -> None:
    text = _corpus_text()
    i = text.index("calls=")
    cut = tmp_path / "callgrind.out.cut"
    cut.write_text(text[: text.index("\n", i) + 1])
    prof = parsers.load(cut)
    assert prof.incomplete and "calls=" in prof.incomplete_reason


@pytest.mark.parametrize(("body", "bad_line", "expected"), [
    ("fn=(7)\n1 2\n", 3, "fn id defined earlier"),
    ("fn=main\n1 abc\n", 4, "decimal event costs"),
    ("fn=main\n1 9223372036854775808\n", 4, "decimal event costs"),  # beyond int64
    ("fn=main\n1 99999999999999999999999\n", 4, "decimal event costs"),
    ("fn=main\n1 2 3\n", 4, "at most 1 cost"),
    ("fn=main\n1 2\n2 3 4\n", 5, "at most 1 cost"),  # not the first cost line
    ("fn=main\ncfn=f\ncalls=2 3\nfn=g\n", 6, "a cost line after 'calls='"),
    ("fn=main\ncalls=x 3\n1 2\n", 4, "'calls=<count>"),
    ("fn=main\n1 2\nwhat is this\n", 5, "a callgrind line"),
])
def test_bad_lines_give_located_errors(tmp_path: Path, body: str, bad_line: int,
                                       expected: str) -> None:
    f = tmp_path / "callgrind.out.bad"
    f.write_text("events: Ir\nfl=a.c\n" + body)
    with pytest.raises(ParseError) as e:
        parsers.load(f, format="callgrind")
    assert e.value.path == str(f) and e.value.line == bad_line
    assert expected in e.value.expected


def test_lenient_skips_foreign_lines(tmp_path: Path) -> None:
    f = tmp_path / "callgrind.out.bad"
    f.write_text("events: Ir\nfl=a.c\nfn=main\n1 2\nwhat is this\n2 3\n")
    prof = parsers.load(f, lenient=True, format="callgrind")
    assert prof.values["self_Ir"].tolist() == [5] and len(prof.warnings) == 1


def test_name_compression_and_subpositions(tmp_path: Path) -> None:
    """The format reference's example, compressed, with instr+line subpositions."""
    f = tmp_path / "callgrind.out.x"
    f.write_text(
        "# callgrind format\nversion: 1\npositions: instr line\nevents: Instructions Flops\n"
        "fl=(1) file1.c\nfn=(1) main\n0x10 16 20\ncfn=(2) func1\ncalls=1 0x50 50\n"
        "+3 * 400 7\ncfi=(2) file2.c\ncfn=(3) func2\ncalls=3 0x20 20\n-1 +1 400\n"
        "fn=(2)\n0x50 51 100 1\ncfi=(2)\ncfn=(3)\ncalls=2 0x20 20\n* * 300\n"
        "fl=(2)\nfn=(3)\n0x20 20 700\n")
    assert callgrind.sniff(f.read_bytes(), f) == 1.0
    prof = parsers.load(f)
    got = {n: (int(s), int(t), int(c)) for n, s, t, c in zip(
        prof.frames.name, prof.values["self_Instructions"], prof.values["total_Instructions"],
        prof.values["calls"], strict=True)}
    assert got == {"main": (20, 820, 0), "func1": (100, 400, 1), "func2": (700, 700, 5)}
    assert prof.values["self_Flops"].tolist() == [0, 1, 0]
    assert prof.values["total_Flops"].tolist() == [7, 7, 0]
    assert prof.totals == {"self_Instructions": 820, "self_Flops": 1}
    assert prof.frames.src.tolist() == ["file1.c", "file1.c", "file2.c"]


# ----- the vectorised spec pass equals the sequential one -----------------------------------
def _same_profile(a, b) -> None:
    for col in ("name", "module", "src"):
        assert getattr(a.frames, col).tolist() == getattr(b.frames, col).tolist()
    for m in a.metrics:
        assert np.array_equal(a.values[m.name], b.values[m.name]), m.name
    ga, gb = a.extras["call_graph"], b.extras["call_graph"]
    for col in ("caller", "callee", "calls"):
        assert np.array_equal(getattr(ga, col), getattr(gb, col)), col
    assert dict(a.totals) == dict(b.totals) and a.meta == b.meta
    assert (a.incomplete, a.incomplete_reason, a.warnings) == (
        b.incomplete, b.incomplete_reason, b.warnings)


@pytest.mark.parametrize("name", CORPUS)
def test_vectorised_pass_equals_sequential(name: str) -> None:
    _same_profile(callgrind.read(DATA / name), callgrind.read(DATA / name, sequential=True))


def test_vectorised_pass_on_generated_file(tmp_path: Path, bench_callgrind) -> None:
    """The benchmark's generator: non-ASCII names, fi/fe, cob/cfi, subpositions."""
    f = tmp_path / "callgrind.out.gen"
    bench_callgrind.generate(f, 1, n_functions=3000)
    a, b = callgrind.read(f), callgrind.read(f, sequential=True)
    _same_profile(a, b)
    assert any(not n.isascii() for n in a.frames.name.tolist())
    assert a.n_nodes > 1000 and len(a.extras["call_graph"]) > 1000
    # cut files too
    text = f.read_bytes()
    cut = tmp_path / "callgrind.out.cut"
    cut.write_bytes(text[: text.index(b"\ncalls=", len(text) // 2) + 20])
    _same_profile(callgrind.read(cut), callgrind.read(cut, sequential=True))
    assert callgrind.read(cut).incomplete


@pytest.mark.parametrize("name", [n for n in CORPUS if n.endswith(".gz")] + [
    "google-pprof-cpu.callgrind"])
def test_numpy_tokenizer_equals_pandas_path(name: str, monkeypatch) -> None:
    """The numpy cost tokenizer (used for mixed parts and to locate bad numbers) agrees
    with the pandas C-tokenizer path."""
    fast = callgrind.read(DATA / name)
    monkeypatch.setattr(callgrind, "cost_matrix", lambda *a, **k: None)
    _same_profile(fast, callgrind.read(DATA / name))


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("fl=a.c\nfn=main\n1 2\n", None, "an 'events:' header line"),
    ("events: Ir\nfl=a.c\n1 2\n", 3, "an 'fn=' line before the first cost line"),
    ("1 2\nevents: Ir\n", 1, "an 'events:' header line before the first cost line"),
])
def test_missing_header_or_function(tmp_path: Path, text: str, line, expected: str) -> None:
    f = tmp_path / "callgrind.out.bad"
    f.write_text(text)
    with pytest.raises(ParseError) as e:
        parsers.load(f, format="callgrind")
    assert e.value.line == line and expected in e.value.expected


def test_empty_and_binary_files(tmp_path: Path) -> None:
    empty = tmp_path / "callgrind.out.1"
    empty.write_bytes(b"")
    with pytest.raises(ParseError):
        parsers.load(empty)
    binary = tmp_path / "callgrind.out.2"
    binary.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(ParseError):
        parsers.load(binary)
    with pytest.raises(ParseError):
        parsers.load(binary, format="callgrind")
