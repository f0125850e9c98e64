"""The callgrind reader's fast paths (vectorised spec pass, pandas cost matrix) are taken
on real files, and every input that leaves them gives what the slow paths give.

Why: the fast paths return ``None`` on anything unusual and the reader falls back, so a
regression there would be silent (same numbers, 5x slower) unless a test says which path
ran; and the inputs that force a fallback must still come out exact."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from profdiff import parsers
from profdiff.parsers import callgrind, callgrind_costs

DATA = Path(__file__).resolve().parent.parent / "data" / "callgrind"
CORPUS = sorted(p.name for p in DATA.iterdir() if p.name != "SOURCES.md")


def _text(name: str) -> bytes:
    raw = (DATA / name).read_bytes()
    return gzip.decompress(raw) if name.endswith(".gz") else raw


def _values(prof) -> dict:
    g = prof.extras["call_graph"]
    return {"names": prof.frames.name.tolist(), "src": prof.frames.src.tolist(),
            **{m.name: prof.values[m.name].tolist() for m in prof.metrics},
            "edges": (g.caller.tolist(), g.callee.tolist(), g.calls.tolist()),
            "totals": dict(prof.totals), "incomplete": prof.incomplete_reason}


@pytest.fixture
def slow_paths_forbidden(monkeypatch):
    """Reading fails if the sequential spec pass or the numpy cost tokenizer runs."""
    def refuse(*_a, **_k):
        raise AssertionError("fell back to a slow path")
    monkeypatch.setattr(callgrind._Reader, "scan", refuse)
    monkeypatch.setattr(callgrind, "tokenize_costs", refuse)


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_takes_the_fast_paths(name: str, slow_paths_forbidden) -> None:
    prof = callgrind.read(DATA / name)
    assert prof.n_nodes > 0 and not prof.incomplete


def test_benchmark_file_takes_the_fast_paths(tmp_path: Path, slow_paths_forbidden,
                                              bench_callgrind) -> None:
    f = tmp_path / "callgrind.out.gen"
    bench_callgrind.generate(f, 1, n_functions=3000)
    assert callgrind.read(f).n_nodes > 1000


def _both(tmp_path: Path, text: bytes, name: str = "callgrind.out.t") -> tuple[dict, dict]:
    """(fast reader's values, sequential spec pass + numpy tokenizer values)."""
    f = tmp_path / name
    f.write_bytes(text)
    fast = _values(callgrind.read(f))
    mp = pytest.MonkeyPatch()
    mp.setattr(callgrind, "cost_matrix", lambda *a, **k: None)
    try:
        slow = _values(callgrind.read(f, sequential=True))
    finally:
        mp.undo()
    return fast, slow


@pytest.mark.parametrize("name", ["malloc-KGuzikowski-mdriver-xterm.callgrind.out",
                                  "google-pprof-cpu.callgrind"])
def test_crlf_and_blank_variants_read_the_same(name: str, tmp_path: Path) -> None:
    """CRLF line ends, tabs and double blanks between costs (the general separator path)
    give the same profile as the file valgrind wrote."""
    text = _text(name)
    plain = _values(callgrind.read(DATA / name))
    crlf = text.replace(b"\n", b"\r\n")
    lines = text.split(b"\n")
    spaced = b"\n".join(ln.replace(b" ", b"\t  ", 1) if ln[:1].isdigit() else ln
                        for ln in lines)
    for variant in (crlf, spaced):
        fast, slow = _both(tmp_path, variant)
        assert fast == slow == plain


def test_parts_with_different_events(tmp_path: Path) -> None:
    """Two parts, the second with one more event: per-part columns map to global events."""
    text = (b"# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npart: 1\n"
            b"positions: line\nevents: Ir\nfl=(1) a.c\nfn=(1) main\n1 10\n+1 5\n"
            b"cfn=(2) f\ncalls=2 7\n7 100\nfn=(2)\n7 60\ntotals: 75\n"
            b"part: 2\npositions: line\nevents: Dr Ir\nfl=(1) a.c\nfn=(2) f\n7 3 40\n"
            b"fn=(1)\n2 1 1\ntotals: 4 41\n")
    fast, slow = _both(tmp_path, text)
    assert fast == slow
    assert fast["names"] == ["main", "f"]
    assert fast["self_Ir"] == [16, 100] and fast["self_Dr"] == [1, 3]
    assert fast["totals"] == {"self_Ir": 116, "self_Dr": 4}
    assert fast["total_Ir"] == [116, 100] and fast["calls"] == [0, 2]


def test_column_sums_beyond_float64_stay_exact(tmp_path: Path) -> None:
    """Each cost fits float64 exactly but their sum does not: integer sums are used."""
    big = 2**51 + 1
    body = b"".join(b"%d %d\n" % (i + 1, big) for i in range(5))
    text = b"events: Ir\nfl=a.c\nfn=main\n" + body
    fast, slow = _both(tmp_path, text)
    assert fast == slow and fast["self_Ir"] == [5 * big]
    assert float(5 * big) != 5 * big  # the float64 sum would be off


def test_sparse_ids_and_late_definitions(tmp_path: Path) -> None:
    """Ids far beyond the number of names (the dense id table is not built) and an id
    used by ``cfn=`` before ``fn=`` refers to it (name compression across both)."""
    text = (b"events: Ir\nfl=(1) a.c\nfn=(90000000) main\n1 3\ncfn=(7) callee\n"
            b"calls=1 5\n5 9\nfn=(7)\n5 9\nfn=(90000000)\n2 1\n")
    fast, slow = _both(tmp_path, text)
    assert fast == slow
    assert fast["names"] == ["main", "callee"] and fast["self_Ir"] == [4, 9]
    assert fast["total_Ir"] == [13, 9] and fast["calls"] == [0, 1]


@pytest.mark.parametrize(("body", "line"), [
    (b"fn=(3)\n1 2\nfn=(3) late\n", 3),  # a reference before its definition
    (b"fn=(3) a\n1 2\nfn=(3) b\n2 2\n", None),  # an id redefined
])
def test_unusual_compression_falls_back_to_the_sequential_reader(
        tmp_path: Path, monkeypatch, body: bytes, line: int | None) -> None:
    f = tmp_path / "callgrind.out.u"
    f.write_bytes(b"events: Ir\nfl=a.c\n" + body)
    sequential = callgrind._Reader.scan
    ran = []

    def spy(self, *a):
        ran.append(True)
        return sequential(self, *a)
    monkeypatch.setattr(callgrind._Reader, "scan", spy)
    if line is None:
        assert _values(callgrind.read(f))["names"] == ["a", "b"]  # two functions
    else:
        with pytest.raises(parsers.errors.ParseError) as e:
            callgrind.read(f)
        assert e.value.line == line
    assert ran


def test_single_space_check() -> None:
    """The fast separator only for single spaces; the field count sees surplus numbers."""
    assert callgrind_costs._fields(b"1 2 3\n+1 4\n", 2) == (" ", 5)
    assert callgrind_costs._fields(b"1  2\n", 1)[0] == r"\s+"
    assert callgrind_costs._fields(b"1\t2\n", 1) == (r"\s+", 2)
    assert callgrind_costs._fields(b"1 2 \n", 1) == (r"\s+", 2)
    assert callgrind_costs._fields(b"1 2\r\n", 1) == (r"\s+", 2)


def test_roomy_heap_is_scoped(monkeypatch) -> None:
    """The malloc tuning is on only during reads (nested ones share it) and changes no
    number: a corpus file reads the same with it forced on for small files."""
    from profdiff.parsers import callgrind_heap

    name = "malloc-KGuzikowski-mdriver-xterm.callgrind.out"
    plain = _values(callgrind.read(DATA / name))
    monkeypatch.setattr(callgrind_heap, "_MIN_SIZE", 0)
    with callgrind_heap.roomy_heap(1):
        assert _values(callgrind.read(DATA / name)) == plain
        assert callgrind_heap._active in (0, 1)  # 0 where glibc is absent
    assert callgrind_heap._active == 0
