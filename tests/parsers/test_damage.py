"""Damaged input (issue 18): huge and impossible numbers are located errors (skipped and
reported under lenient), every reader says the same thing about a cut gzip stream, and
each reader knows what a complete file of its format looks like."""

from __future__ import annotations

import builtins
import gzip
import re
from pathlib import Path

import pytest

from parsers import load
from parsers.detect import detect
from parsers.errors import ParseError

DATA = Path(__file__).resolve().parents[1] / "data"
AD_P = DATA / "hs-ad" / "v1" / "ad.prof"
FIB_P = DATA / "ghc-prof" / "ghc-8.0-flamingra-fib-P.prof"
TICKY = DATA / "ghc-ticky" / "hs-ad-v1.ticky.txt"
HP = DATA / "ghc-hp" / "ghc-7.8-dilcue-2014-10.hp"
MEM = DATA / "julia-mem" / "gvfn-test.jl.mem"
PRINT = DATA / "julia-profile-print" / "julia-1.10-grass-eclipse-Profile.print.txt"
FOLDED = DATA / "folded" / "flamegraph-perf-java-stacks-01-collapsed-all.txt"
PJ = DATA / "hs-ad" / "v1" / "ad.prof.json"
RTS = DATA / "ghc-rts" / "hs-ad-v1.stats.txt"
HUGE = "9223372036854775808"  # 2^63


def _edit_line(src: Path, dst: Path, pick, edit) -> int:
    """Apply ``edit`` to the first line ``pick`` accepts; returns its 1-based number."""
    lines = src.read_bytes().split(b"\n")
    i = next(k for k, ln in enumerate(lines) if pick(ln))
    lines[i] = edit(lines[i])
    dst.write_bytes(b"\n".join(lines))
    return i + 1


def _last_int(ln: bytes) -> bytes:
    return re.sub(rb"\d+(?=\D*$)", HUGE.encode(), ln, count=1)


CASES = {
    # reader: (file, which line, how to damage it, field named in the message)
    "ghc-prof": (AD_P, lambda ln: b"Main.hs" in ln and ln.startswith(b"  "),
                 lambda ln: re.sub(rb"(\s)\d+(\s+\d+\s+\d+\.\d)", rb"\g<1>" + HUGE.encode()
                                   + rb"\2", ln, count=1), "no."),
    "ghc-ticky": (TICKY, lambda ln: b"(fun)" in ln,
                  lambda ln: re.sub(rb"\d+", HUGE.encode(), ln, count=1), "Entries"),
    "folded": (FOLDED, lambda ln: b";" in ln, _last_int, "count"),
    "julia-mem": (MEM, lambda ln: re.match(rb"^ *\d+ ", ln) is not None,
                  lambda ln: re.sub(rb"\d+", HUGE.encode(), ln, count=1), "count"),
    "julia-profile-print": (PRINT, lambda ln: b"memmove" in ln,
                            lambda ln: ln.replace(b"50", HUGE.encode(), 2), "Count"),
    "ghc-hp": (HP, lambda ln: b"\t" in ln, _last_int, "bytes"),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_number_of_2_63_is_a_located_error_and_lenient_skips_it(tmp_path, fmt):
    src, pick, edit, field = CASES[fmt]
    dst = tmp_path / src.name
    no = _edit_line(src, dst, pick, edit)
    with pytest.raises(ParseError) as exc:
        load(dst, format=fmt)
    msg = str(exc.value)
    assert f"{dst}:{no}:" in msg, msg
    assert HUGE in msg and field in msg, msg
    p = load(dst, format=fmt, lenient=True)
    assert any(f":{no}:" in w or f"line {no}:" in w for w in p.warnings), p.warnings


def test_pj_counts_out_of_range_name_field_value_and_line(tmp_path):
    text = PJ.read_text()
    at = text.index('"alloc": ', text.index('"profile"'))
    end = text.index(",", at)
    dst = tmp_path / "ad.prof.json"
    dst.write_text(text[:at] + f'"alloc": {HUGE}' + text[end:])
    with pytest.raises(ParseError) as exc:
        load(dst)
    line = text.count("\n", 0, at) + 1
    assert f"{dst}:{line}:" in str(exc.value) and "'alloc'" in str(exc.value)
    assert HUGE in str(exc.value)
    p = load(dst, lenient=True)
    assert any(HUGE in w for w in p.warnings)


@pytest.mark.parametrize("src", [AD_P, TICKY, HP, RTS, PRINT, FOLDED, MEM, PJ],
                         ids=lambda p: p.name)
def test_a_cut_gzip_stream_reads_what_it_can_and_says_where(tmp_path, src):
    whole = load(src)
    packed = gzip.compress(src.read_bytes(), mtime=0)
    dst = tmp_path / (src.name + ".gz")
    dst.write_bytes(packed[: int(len(packed) * 0.8)])
    p = load(dst, format=whole.format)
    assert p.incomplete
    assert ("the gzip stream is truncated: it ends after "
            f"{int(len(packed) * 0.8)} compressed bytes") in p.incomplete_reason


def test_prof_P_cut_at_a_line_end_is_incomplete_by_the_exact_header_totals(tmp_path):
    data = FIB_P.read_bytes()
    whole = load(FIB_P)
    assert not whole.incomplete
    lines = data.split(b"\n")
    tree = max(i for i, ln in enumerate(lines) if b"COST CENTRE" in ln)
    found = 0
    for keep in range(tree + 3, len(lines) - 1):
        cut = tmp_path / f"cut{keep}.prof"
        cut.write_bytes(b"\n".join(lines[:keep]) + b"\n")
        p = load(cut)
        lost = sum(int(ln.split()[-1]) + int(ln.split()[-2]) for ln in lines[keep:]
                   if ln.strip())
        if lost:  # some ticks or bytes are missing: the totals must not add up
            assert p.incomplete, keep
            assert "of the header's" in p.incomplete_reason or "inherited" in \
                p.incomplete_reason
            found += 1
    assert found > 10


def test_prof_cut_after_a_rows_leading_spaces_is_incomplete(tmp_path):
    data = AD_P.read_bytes()
    at = data.index(b"\n  ", len(data) // 2) + 3  # just the indent of a row
    cut = tmp_path / "ad.prof"
    cut.write_bytes(data[:at])
    assert load(cut).incomplete


def test_prof_p_missing_costly_rows_are_noticed_within_the_rounding(tmp_path):
    data = AD_P.read_bytes()
    lines = data.split(b"\n")
    tree = max(i for i, ln in enumerate(lines) if b"COST CENTRE" in ln)
    silent = []
    for keep in range(tree + 3, len(lines) - 1):
        lost_pct = max((float(ln.split()[-2]) for ln in lines[keep:] if ln.strip()),
                       default=0.0)  # the largest inherited %alloc of a dropped row
        if lost_pct < 2.0:
            continue  # rounding of the siblings can hide it
        cut = tmp_path / "ad.prof"
        cut.write_bytes(b"\n".join(lines[:keep]) + b"\n")
        if not load(cut).incomplete:
            silent.append(keep)
    assert not silent


def test_hp_cut_inside_end_sample_drops_that_sample(tmp_path):
    text = HP.read_bytes()
    at = text.index(b"END_SAMPLE 0.34") + len(b"END_SAMPLE 0.3")
    cut = tmp_path / HP.name
    cut.write_bytes(text[:at])
    p = load(cut)
    assert p.incomplete and "BEGIN_SAMPLE 0.34" in p.incomplete_reason
    assert p.totals["n_samples"] == 1
    assert load(HP).meta["completeness"].startswith("cannot tell")


def test_mem_number_cut_in_half_is_not_read_as_a_smaller_number(tmp_path):
    data = MEM.read_bytes()
    at = data.index(b"23530432") + 4
    cut = tmp_path / MEM.name
    cut.write_bytes(data[:at])
    p = load(cut)
    assert p.incomplete and "no final newline" in p.incomplete_reason
    assert 2353 not in p.values["bytes"].tolist()


def test_mem_crlf_reads_like_lf(tmp_path):
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    lf = tmp_path / "lf" / MEM.name
    crlf = tmp_path / "crlf" / MEM.name
    lf.write_bytes(MEM.read_bytes())
    crlf.write_bytes(MEM.read_bytes().replace(b"\n", b"\r\n"))
    a, b = load(lf), load(crlf)
    assert a.frames.match.tolist() == b.frames.match.tolist()
    assert a.frames.src.tolist() == b.frames.src.tolist()
    assert a.values["bytes"].tolist() == b.values["bytes"].tolist()


def test_folded_with_a_first_line_longer_than_64_kib_is_detected(tmp_path):
    deep = ";".join(f"frame_{i}" for i in range(12000))
    assert len(deep) > 64 * 1024
    f = tmp_path / "deep.txt"
    f.write_text(f"{deep} 5\nmain;work 3\n")
    assert detect(f).FORMAT == "folded"
    p = load(f)
    assert p.totals["total_samples"] == 8 and p.n_nodes == 12000 + 2


def test_ticky_latin1_names_are_read_as_latin1(tmp_path):
    data = TICKY.read_bytes()
    at = data.index(b"$wevaluate")
    dst = tmp_path / TICKY.name
    dst.write_bytes(data[:at] + "$wgröße".encode("latin-1") + data[at + len(b"$wevaluate"):])
    names = load(dst).frames.name.tolist()
    assert any(n.startswith("$wgröße") for n in names), [n for n in names if "gr" in n]


def test_pj_nested_100000_deep_loads_without_an_escaping_warning(tmp_path):
    n = 100_000
    head = ('{"program": "deep", "arguments": [], "rts_arguments": ["-pj"], "end_time": "x",'
            f' "initial_capabilities": 0, "total_time": 1.0, "total_ticks": {n},'
            f' "tick_interval": 1000, "total_alloc": {8 * n}, "cost_centres": ['
            '{"id": 1, "label": "MAIN", "module": "MAIN", "src_loc": "<built-in>", '
            '"is_caf": false}, {"id": 2, "label": "go", "module": "Main", "src_loc": '
            '"Main.hs:1:1", "is_caf": false}], "profile": ')
    node = '{"id": 2, "entries": 1, "alloc": 8, "ticks": 1, "children": ['
    body = ('{"id": 1, "entries": 0, "alloc": 0, "ticks": 0, "children": [' + node * n
            + "]}" * n + "]}")
    f = tmp_path / "deep.prof.json"
    f.write_text(head + body + "}\n")
    p = load(f)
    assert p.n_nodes == n + 1 and not p.incomplete
    assert not any("escape" in w for w in p.warnings), p.warnings
    assert int(p.values["ticks"].sum()) == n


def test_unreadable_file_says_permission_denied(tmp_path, monkeypatch):
    f = tmp_path / "ad.prof"
    f.write_bytes(AD_P.read_bytes())
    real_open = builtins.open

    def deny(file, *a, **kw):
        if str(file) == str(f):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **kw)

    monkeypatch.setattr(builtins, "open", deny)
    with pytest.raises(ParseError) as exc:
        load(f)
    assert str(exc.value) == f"{f}: permission denied (the file cannot be read)"
    with pytest.raises(ParseError) as exc:
        load(f, format="ghc-prof")
    assert "permission denied" in str(exc.value)
