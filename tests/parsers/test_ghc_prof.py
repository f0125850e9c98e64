"""GHC ``.prof`` text reader: every real report in tests/data/ghc-prof and hs-ad, plus bad input.

The corpus files are real reports (GHC 6.x .. 9.x, -p/-P/-pa, -N, Windows, CJK, .gz);
header totals are re-read here with an independent pattern, and the per-cost-centre
table derived from the tree is checked against the report's own top table.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff import parsers
from profdiff.parsers import ParseError, ghc_prof
from profdiff.parsers.model import Kind, flat_aggregate

DATA = Path(__file__).parent.parent / "data"
GHC = DATA / "ghc-prof"
HSAD = DATA / "hs-ad"
SNAP = GHC / "snapshots"

CORPUS = sorted(p for p in GHC.iterdir() if p.name.endswith((".prof", ".prof.gz")))
HSAD_TEXT = sorted(HSAD.rglob("*.prof"))
ALL_TEXT = CORPUS + HSAD_TEXT


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", "replace")


def _header_totals(path: Path) -> tuple[float, int, int]:
    t = _text(path)
    m = re.search(r"total time\s*=\s*([\d.]+) secs\s*\((\d+) ticks", t)
    a = re.search(r"total alloc\s*=\s*([\d,]+) bytes", t)
    assert m and a
    return float(m.group(1)), int(m.group(2)), int(a.group(1).replace(",", ""))


def test_corpus_is_complete() -> None:
    assert len(CORPUS) == 72
    assert len(HSAD_TEXT) == 7


@pytest.mark.parametrize("path", ALL_TEXT, ids=lambda p: str(p.relative_to(DATA)))
def test_real_report_matches_header_and_top_table(path: Path) -> None:
    p = ghc_prof.read(path)
    assert p.format == "ghc-prof"
    assert not p.incomplete, p.incomplete_reason
    assert p.warnings == ()
    secs, ticks, alloc = _header_totals(path)
    assert p.totals == {"total_time_s": secs, "total_ticks": ticks, "total_alloc_bytes": alloc}
    assert p.n_nodes > 0 and p.parent[0] == -1
    raw = p.has_metric("ticks")
    if raw:  # -P/-pa: the tree's raw columns add up to the header exactly
        assert int(p.values["ticks"].sum()) == ticks
        assert int(p.values["bytes"].sum()) == alloc
    if raw:  # absolute time from raw ticks adds up to the header's (2-decimal) total
        assert p.values["time_s"].sum() == pytest.approx(secs, abs=0.0051)
    # the per-cost-centre table derived from the tree equals the report's own top table
    top = p.extras["top_table"]
    assert top, "every corpus report has a top table"
    has_src = p.meta["src_column"]
    nodes_per_frame = np.bincount(p.frame, minlength=len(p.frames))
    if has_src:
        # one row per cost centre (name, module, SRC): compare exactly per frame
        agg = flat_aggregate(p, p.frame.astype(np.int64), len(p.frames))
        index = {(p.frames.name[i], p.frames.module[i], p.frames.src[i]): i
                 for i in range(len(p.frames))}
        for row in top:
            i = index.get((row["name"], row["module"], row["src"]))
            if i is None:  # -pa lists cost centres that were never entered
                assert row["time_pct"] == 0 and row["alloc_pct"] == 0, row
                continue
            tol = 0.051 if raw else 0.05 * nodes_per_frame[i] + 0.051
            assert agg["time_pct"][i] == pytest.approx(row["time_pct"], abs=tol), row
            assert agg["alloc_pct"][i] == pytest.approx(row["alloc_pct"], abs=tol), row
    # by the alignment key (module, name), as comparisons use it
    keys, codes = p.frame_key_codes
    agg = flat_aggregate(p, codes, len(keys))
    nodes = np.bincount(codes, minlength=len(keys))
    pos = {k: i for i, k in enumerate(keys.tolist())}
    summed: dict[str, list[float]] = {}
    for row in top:
        s = summed.setdefault(f"{row['module']}\x1f{row['name']}", [0.0, 0.0, 0])
        s[0] += row["time_pct"]
        s[1] += row["alloc_pct"]
        s[2] += 1
    for key, (tp, ap, n_rows) in summed.items():
        if key not in pos:
            assert tp == 0 and ap == 0, key
            continue
        i = pos[key]
        tol = 0.05 * n_rows + 0.051 + (0 if raw else 0.05 * nodes[i])
        # Several cost centres can share (module, name) (instance methods, lambdas,
        # pre-SRC reports); the top table omits those under its 1% threshold, so the
        # tree can only have more.  With a single node there is a single cost centre.
        assert agg["time_pct"][i] >= tp - tol, key
        assert agg["alloc_pct"][i] >= ap - tol, key
        if nodes[i] == 1:
            assert agg["time_pct"][i] == pytest.approx(tp, abs=tol), key
            assert agg["alloc_pct"][i] == pytest.approx(ap, abs=tol), key


@pytest.mark.parametrize("path", ALL_TEXT, ids=lambda p: str(p.relative_to(DATA)))
def test_fast_and_line_by_line_paths_agree(path: Path) -> None:
    a = ghc_prof.read(path)
    b = ghc_prof.read(path, fast=False)
    assert a.n_nodes == b.n_nodes
    assert np.array_equal(a.parent, b.parent)
    assert a.name.tolist() == b.name.tolist()
    assert a.module.tolist() == b.module.tolist()
    assert a.src.tolist() == b.src.tolist()
    for m in a.metrics:
        assert np.allclose(a.values[m.name], b.values[m.name]), m.name


def test_metrics_and_meta_of_hs_ad_v1() -> None:
    p = ghc_prof.read(HSAD / "v1" / "ad.prof")
    assert [m.name for m in p.metrics] == [
        "entries", "time_pct", "alloc_pct", "inherited_time_pct", "inherited_alloc_pct",
        "time_s", "alloc_bytes", "inherited_time_s", "inherited_alloc_bytes"]
    assert p.metric("entries").kind is Kind.NODE
    assert p.metric("time_pct").sampled and p.metric("time_s").sampled
    assert not p.metric("alloc_pct").sampled
    assert p.metric("inherited_alloc_pct").self_of == "alloc_pct"
    assert p.metric("inherited_time_s").kind is Kind.INCLUSIVE
    assert p.default_metric == "inherited_time_pct"
    assert p.meta["program"] == "ad"
    assert p.meta["command_line"] == "ad +RTS -p -s -hT -RTS 20"
    assert p.meta["date"] == "Sun Nov 29 18:35 2026"
    assert p.meta["tick_interval_us"] == 1000
    assert p.meta["processors"] == 1
    assert "GC" in p.meta["percent_basis"]
    assert p.n_nodes == 239
    assert int(p.depth.max()) == 20
    assert len(set(zip(p.frames.module.tolist(), p.frames.name.tolist(), strict=True))) == 123
    root = 0
    assert p.name[root] == "MAIN" and p.values["inherited_alloc_pct"][root] == 100.0
    assert p.values["inherited_alloc_bytes"][root] == pytest.approx(4_291_393_792)


def _row(p, name: str, module: str) -> int:
    hits = np.flatnonzero((p.name == name) & (p.module == module))
    assert len(hits) == 1, (name, module, len(hits))
    return int(hits[0])


def test_hs_ad_regression_addgrad() -> None:
    v1 = ghc_prof.read(HSAD / "v1" / "ad.prof")
    v2 = ghc_prof.read(HSAD / "v2" / "ad.prof")
    a1, a2 = _row(v1, "addGrad", "AD.Eval"), _row(v2, "addGrad", "AD.Eval")
    assert v1.values["alloc_pct"][a1] == 0.0
    assert v2.values["alloc_pct"][a2] == 33.3
    assert v2.values["time_pct"][a2] == 24.7
    assert v1.values["entries"][a1] == v2.values["entries"][a2] == 4_433_920
    assert v1.totals["total_alloc_bytes"] == 4_291_393_792
    assert v2.totals["total_alloc_bytes"] == 6_560_334_592
    assert v1.src[a1] == "AD/Eval.hs:(26,1)-(28,27)" and v2.src[a2] == "AD/Eval.hs:27:1-58"
    # the rename: sigmoidD (v1) / logisticD (v2), same entries
    assert v1.values["entries"][v1.name == "sigmoidD"].sum() == 12_928
    assert v2.values["entries"][v2.name == "logisticD"].sum() == 12_928


def test_raw_columns_of_dash_P_report() -> None:
    p = ghc_prof.read(HSAD / "v1" / "ad.P.prof")
    assert p.has_metric("ticks") and p.has_metric("bytes")
    assert p.meta["raw_columns"]
    # line 199: "paramVar  Model.MLP  Model/MLP.hs:41:1-54  375  4433920  14.1  5.8 ...
    #            374 248299520"
    hits = np.flatnonzero((p.name == "paramVar") & (p.values["entries"] == 4_433_920))
    assert len(hits) == 1
    i = int(hits[0])
    assert p.values["ticks"][i] == 374 and p.values["bytes"][i] == 248_299_520
    # absolute values from raw ticks x interval (1 ms, 1 processor)
    assert p.values["time_s"][i] == pytest.approx(0.374)
    assert p.values["alloc_bytes"][i] == 248_299_520
    assert p.values["time_pct"][i] == pytest.approx(100 * 374 / 2646)
    assert round(p.values["time_pct"][i], 1) == 14.1
    assert p.values["ticks"][p.name == "paramVar"].sum() == 471  # the top table's figure
    assert p.values["inherited_time_s"][0] == pytest.approx(2.646)


def test_ghc6_layout_long_names_and_skipped_level() -> None:
    p = ghc_prof.read(GHC / "ghc-6.x-github-contest-run1.prof")
    assert p.meta["tick_interval_us"] == 20_000 and p.meta["processors"] is None
    assert not p.meta["src_column"]
    # line 21: "  main  Main  193" sits two spaces deep right under MAIN (GHC 6 hides a
    # stack there): its parent is MAIN
    mains = np.flatnonzero((p.name == "main") & (p.module == "Main"))
    assert p.parent[mains[0]] == 0 and p.depth[mains[0]] == 1
    q = ghc_prof.read(GHC / "ghc-6.12-ann-run-0134-2010-07-02.prof")
    i = np.flatnonzero(q.name == "updateLayerWeights")[0]
    assert q.module[i] == "Backpropagation"  # name overflowed its 24-column field


def test_multi_processor_windows_cjk_and_odd_names() -> None:
    n4 = ghc_prof.read(GHC / "ghc-7.8-dilcue-N4-2014-10.prof")
    assert n4.meta["processors"] == 4 and n4.totals["total_ticks"] == 51248
    assert n4.values["inherited_time_s"][0] == pytest.approx(12.81)  # MAIN: 100.0 %
    n32 = ghc_prof.read(GHC / "ghc-9.x-inferno-utf8-names-N32-P-2023-08.prof")
    assert n32.meta["processors"] == 32
    assert n32.values["time_s"].sum() == pytest.approx(10.25)  # header total time
    i = np.flatnonzero((n32.name == "你好世界") & (n32.values["ticks"] > 0))[0]
    assert n32.values["ticks"][i] == 19317 and n32.values["bytes"][i] == 90_486_357_376
    assert "CAF:一些函数1" in n32.name.tolist()
    assert n32.frames.kind[n32.frame[n32.name.tolist().index("CAF:一些函数1")]] == "caf"
    assert "<no location info>" in n32.src.tolist()
    win = ghc_prof.read(GHC / "ghc-8.x-cegarbox-qbf-windows-2021-05.prof")
    assert "minisat-haskell-bindings\\MiniSat.hsc:(66,1)-(69,27)" in win.src.tolist()
    assert win.meta["program"] == "Main.exe"
    cc = ghc_prof.read(GHC / "ghc-testsuite-CallerCc1-2020-08.prof")
    assert "Main.clauses(calling:Data.Foldable.concat)" in cc.name.tolist()
    ops = ghc_prof.read(GHC / "ghc-7.10.3-startstopfrp-example-2016-11-28.prof")
    assert {">>=", "<*>", ">>"} <= set(ops.name.tolist())
    gz = ghc_prof.read(GHC / "ghc-8.x-jaeger-flamegraph-P-2018-11.prof.gz")
    assert gz.totals["total_alloc_bytes"] == 137_119_824 and gz.n_nodes == 448


def test_same_name_and_module_twice_under_one_parent() -> None:
    p = ghc_prof.read(GHC / "ghc-testsuite-scc001-2018-02.prof")
    mains = np.flatnonzero(p.name == "main")
    assert len(mains) == 2
    assert p.parent[mains[1]] == 0  # "main Main scc001.hs:(5,1)-(7,23) 223" under MAIN
    # both are one frame and one alignment key
    assert p.frame[mains[0]] == p.frame[mains[1]]


# --------------------------------------------------------------------------------------
# Tree snapshots (written once, checked by eye against the files)
# --------------------------------------------------------------------------------------
def dump_tree(p) -> str:
    out = []
    raw = p.has_metric("ticks")
    for i in range(p.n_nodes):
        v = p.values
        line = (f"{'  ' * int(p.depth[i])}{p.name[i]} [{p.module[i]}] {p.src[i]} | "
                f"entries={int(v['entries'][i])} time={v['time_pct'][i]:.1f} "
                f"alloc={v['alloc_pct'][i]:.1f} itime={v['inherited_time_pct'][i]:.1f} "
                f"ialloc={v['inherited_alloc_pct'][i]:.1f}")
        if raw:
            line += f" ticks={int(v['ticks'][i])} bytes={int(v['bytes'][i])}"
        out.append(line.rstrip())
    return "\n".join(out) + "\n"


SNAPSHOTS = ["ghc-testsuite-scc001-2018-02.prof", "ghc-7.10-flamingra-fib-P.prof",
             "ghc-testsuite-T2552-2011-10.prof"]


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_tree_snapshot(name: str) -> None:
    got = dump_tree(ghc_prof.read(GHC / name))
    expected = (SNAP / f"{name}.tree.txt").read_text(encoding="utf-8")
    assert got == expected


# --------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------
def test_redetect_under_unknown_name(tmp_path: Path) -> None:
    for src in (HSAD / "v1" / "ad.prof", GHC / "ghc-8.x-jaeger-flamegraph-P-2018-11.prof.gz",
                GHC / "ghc-6.x-github-contest-run1.prof"):
        dst = tmp_path / "x.unknown"
        shutil.copy(src, dst)
        p = parsers.load(dst)
        assert p.format == "ghc-prof"
        assert p.totals == ghc_prof.read(src).totals


def test_sniff_by_content() -> None:
    head = (HSAD / "v1" / "ad.prof").read_bytes()[:4096]
    assert ghc_prof.sniff(head, Path("x.txt")) >= 0.9
    assert ghc_prof.sniff((HSAD / "v1" / "ad.prof.json").read_bytes()[:4096], Path("a.prof")) == 0
    assert ghc_prof.sniff(b"hello world\n", Path("a.prof")) == 0


# --------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    return _text(path).split("\n")


def test_empty_binary_and_other_formats(tmp_path: Path) -> None:
    empty = tmp_path / "empty.prof"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match="empty"):
        ghc_prof.read(empty)
    binary = tmp_path / "bin.prof"
    binary.write_bytes(bytes(range(256)) * 20)
    with pytest.raises(ParseError, match="binary data"):
        ghc_prof.read(binary)
    other = tmp_path / "other.prof"
    shutil.copy(HSAD / "v1" / "ad.prof.json", other)
    with pytest.raises(ParseError, match=r"other\.prof:1: expected a GHC \.prof report"):
        ghc_prof.read(other)


def test_cut_in_the_middle_of_the_tree(tmp_path: Path) -> None:
    src = HSAD / "v1" / "ad.prof"
    data = src.read_bytes()
    lines = data.split(b"\n")
    # cut in the middle of line 120 (1-based)
    cut = len(b"\n".join(lines[:119])) + 1 + 40
    f = tmp_path / "cut.prof"
    f.write_bytes(data[:cut])
    p = ghc_prof.read(f)
    assert p.incomplete
    assert "line 120" in p.incomplete_reason
    full = ghc_prof.read(src)
    first_row_line = next(i for i, ln in enumerate(lines) if ln.startswith(b"MAIN")) + 1
    assert p.n_nodes == 120 - first_row_line
    assert p.totals == full.totals  # still the header's
    assert p.name.tolist() == full.name.tolist()[: p.n_nodes]


def test_cut_at_a_line_end_is_noticed(tmp_path: Path) -> None:
    src = HSAD / "v1" / "ad.prof"
    lines = src.read_bytes().split(b"\n")
    f = tmp_path / "cut.prof"
    f.write_bytes(b"\n".join(lines[:150]) + b"\n")
    p = ghc_prof.read(f)
    assert p.incomplete
    assert "cut after line 150" in p.incomplete_reason


def test_cut_gzip(tmp_path: Path) -> None:
    raw = gzip.compress(_text(HSAD / "v1" / "ad.prof").encode())
    f = tmp_path / "cut.prof.gz"
    f.write_bytes(raw[: len(raw) * 2 // 3])
    p = ghc_prof.read(f)
    assert p.incomplete and 0 < p.n_nodes < 239


def test_cut_before_the_tree(tmp_path: Path) -> None:
    f = tmp_path / "head.prof"
    f.write_text("\n".join(_lines(HSAD / "v1" / "ad.prof")[:20]) + "\n")
    with pytest.raises(ParseError, match=r"head\.prof:20: expected the cost-centre tree header"):
        ghc_prof.read(f)


@pytest.mark.parametrize("bad", [
    "  oops this is not a row",
    "Progress: 50% done",
    " CAF  AD.Dual  <entire-module>  312  0  0.0  zero  0.0  0.0",
])
def test_one_corrupt_line(tmp_path: Path, bad: str) -> None:
    lines = _lines(HSAD / "v1" / "ad.prof")
    at = 60  # 0-based index inside the tree: file line 61
    lines.insert(at, bad)
    f = tmp_path / "corrupt.prof"
    f.write_text("\n".join(lines))
    with pytest.raises(ParseError) as ei:
        ghc_prof.read(f)
    assert ei.value.line == 61
    assert "corrupt.prof:61: expected" in str(ei.value)
    p = ghc_prof.read(f, lenient=True)
    assert p.n_nodes == 239 and not p.incomplete
    assert len(p.warnings) == 1 and p.warnings[0].startswith("line 61: skipped")


def test_line_of_another_process_interleaved(tmp_path: Path) -> None:
    lines = _lines(HSAD / "v1" / "ad.P.prof")
    # a stray write split a row in two: "...  0.0" + newline from elsewhere + rest
    i = next(k for k, ln in enumerate(lines) if "evalDelta" in ln and "AD.Eval" in ln
             and ln.startswith(" "))
    row = lines[i]
    lines[i: i + 1] = [row[:70], "epoch 3 loss 0.0123", row[70:]]
    f = tmp_path / "mixed.prof"
    f.write_text("\n".join(lines))
    with pytest.raises(ParseError) as ei:
        ghc_prof.read(f)
    assert ei.value.line == i + 1
    p = ghc_prof.read(f, lenient=True)
    assert len(p.warnings) == 3 and p.n_nodes == 238


def test_corrupt_header_line(tmp_path: Path) -> None:
    lines = _lines(HSAD / "v1" / "ad.prof")
    lines[5] = "\ttotal alloc = lots of bytes"
    f = tmp_path / "hdr.prof"
    f.write_text("\n".join(lines))
    with pytest.raises(ParseError, match=r"hdr\.prof:6: expected 'total alloc = <n> bytes'"):
        ghc_prof.read(f)
    p = ghc_prof.read(f, lenient=True)
    assert "total_alloc_bytes" not in p.totals and p.warnings


def test_empty_cost_centre_name(tmp_path: Path) -> None:
    lines = _lines(GHC / "ghc-testsuite-scc001-2018-02.prof")
    i = next(k for k, ln in enumerate(lines) if ln.startswith("   h "))
    lines[i] = "    " + lines[i][4:]  # "   h" -> blank name
    f = tmp_path / "blank.prof"
    f.write_text("\n".join(lines))
    p = ghc_prof.read(f)
    assert "" in p.name.tolist()
    assert any("empty cost-centre name" in w for w in p.warnings)
    assert p.n_nodes == ghc_prof.read(GHC / "ghc-testsuite-scc001-2018-02.prof").n_nodes
