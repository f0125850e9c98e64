"""GHC ticky-ticky reader: real files of GHC 7.x, 9.0 (hs-ad) and 9.2, synthesised 9.4+.

Expected numbers were read by eye from the files in ``tests/data/ghc-ticky``.  The two
``synth-ghc-9.4-*`` files are SYNTHESISED from the format in GHC's source (see that
folder's README.md): no real GHC >= 9.4 ticky report was available.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff import parsers
from profdiff.parsers import ParseError, ghc_ticky
from profdiff.parsers.detect import detect
from profdiff.parsers.ghc_ticky import parse_arg_info, parse_stg_name

ALL_FILES = [
    "ghc-7.x-haskell-opengl-Modern-Main.ticky",
    "ghc-7.x-haskell-opengl-Modern-Performance-main.ticky",
    "ghc-7.x-haskell-opengl-Performance-ticky.txt",
    "ghc-7.x-haskell-opengl-src-Main.ticky",
    "ghc-9.2-naivesolver-main.ticky",
    "hs-ad-v1.ticky.txt",
    "hs-ad-v2.ticky.txt",
    "synth-ghc-9.4-json.ticky",
    "synth-ghc-9.4-kinds.ticky",
]


@pytest.fixture
def tdir(data_dir: Path) -> Path:
    return data_dir / "ghc-ticky"


def _row(p, raw_name: str) -> int:
    hits = np.flatnonzero(p.frames.name[p.frame] == raw_name)
    assert len(hits) == 1, raw_name
    return int(hits[0])


def _by_key(p) -> dict[str, int]:
    keys = p.frames.key[p.frame]
    return {k: i for i, k in enumerate(keys.tolist())}


# --------------------------------------------------------------------------------------
# every file of the corpus
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_FILES)
def test_every_file_detects_and_loads(tdir: Path, name: str) -> None:
    path = tdir / name
    assert detect(path) is ghc_ticky
    p = parsers.load(path)
    assert p.format == "ghc-ticky"
    assert not p.incomplete, p.incomplete_reason
    assert p.warnings == ()
    assert p.n_nodes > 0
    assert np.all(p.parent == -1)  # flat: every closure is a root
    assert p.extras["counters"]["GC_FAILED_PROMOTION_ctr"] == 0
    assert len(p.extras["closures"]["arity"]) == p.n_nodes
    assert all(k.startswith("closure") for k in p.frames.kind)
    assert p.meta["ghc_layout"] in ("<=9.2", "9.4+")
    for key in p.totals:
        assert key in p.total_metrics
    json.dumps([p.meta, p.totals, p.extras])  # the CLI prints these


def test_redetect_under_unknown_name(tdir: Path, tmp_path: Path) -> None:
    dst = tmp_path / "x.unknown"
    shutil.copy(tdir / "hs-ad-v1.ticky.txt", dst)
    p = parsers.load(dst)
    assert p.format == "ghc-ticky"
    assert p.n_nodes == 39


def test_gzipped_file(tdir: Path, tmp_path: Path) -> None:
    dst = tmp_path / "run.dat.gz"
    dst.write_bytes(gzip.compress((tdir / "hs-ad-v2.ticky.txt").read_bytes()))
    assert parsers.load(dst).n_nodes == 40


# --------------------------------------------------------------------------------------
# hs-ad (GHC 9.0.2): v1 vs v2
# --------------------------------------------------------------------------------------
def test_hs_ad_v1_header_and_counters(tdir: Path) -> None:
    p = parsers.load(tdir / "hs-ad-v1.ticky.txt")
    assert p.meta["program"] == "ad-ticky"
    assert p.meta["command_line"] == "'./ad-ticky' '20' +RTS '-rad.ticky.txt'"
    assert p.meta["ghc_layout"] == "<=9.2"
    assert p.n_nodes == 39
    t = p.totals
    assert t["enters"] == 65973574
    assert t["enters_thunks"] == 13379491
    assert t["enters_data_values"] == 10553
    assert t["function_entries"] == 52583530
    assert t["tail_calls"] == 28504641
    assert t["known_tail_calls"] == 28078017
    assert t["known_tail_calls_pct"] == 99
    assert t["returns"] == 37848089
    assert t["returns_new"] == 19244616
    assert t["ret_new_pct"] == pytest.approx(50.8)
    assert t["update_frames"] == 13369120
    assert t["catch_frames"] == 0
    assert t["updates"] == 0
    assert t["alloc_total"] == 1513877128
    assert t["unknown_calls"] == 426624
    assert p.total_metrics["alloc_total"].unit == parsers.Unit.BYTES
    assert p.total_metrics["ret_new_pct"].unit == parsers.Unit.PERCENT
    # the table's Alloc column sums to (almost) ALLOC_HEAP_tot
    assert t["table_alloc"] == 1513877088
    c = p.extras["counters"]
    assert c["ALLOC_HEAP_ctr"] == 47258867
    assert c["ENT_LNE_ctr"] == 67550656
    assert c["ENT_PERM_IND_ctr"] == 0  # printed as "E!NT_PERM_IND_ctr requires +RTS -Z"
    assert p.extras["counter_notes"]["ENT_PERM_IND_ctr"] == "requires +RTS -Z"
    h = p.extras["histograms"]
    assert h["RET_NEW"]["total"] == 19244616
    assert h["RET_NEW"]["percent"] == [0.0, 1.0, 98.3, 0.0, 0.7, 0.0, 0.0, 0.0, 0.0]
    assert h["RET_NEW"]["counts"][2] == 18910682
    assert h["RET_UNBOXED_TUP"]["percent"][1] == pytest.approx(39.7)
    assert p.extras["slow_applications"]["FUN"] == {"too_few": 0, "correct": 0, "too_many": 0}
    assert p.extras["ambiguous_keys"] == []


def test_hs_ad_metrics_and_rows(tdir: Path) -> None:
    p = parsers.load(tdir / "hs-ad-v1.ticky.txt")
    assert [m.name for m in p.metrics] == ["entries", "alloc", "allocd"]
    assert p.metric("alloc").unit == parsers.Unit.BYTES
    assert p.metric("allocd").unit == parsers.Unit.BYTES
    assert p.metric("entries").unit == parsers.Unit.COUNT
    assert all(m.kind == parsers.Kind.SELF and not m.sampled for m in p.metrics)
    assert p.default_metric == "alloc"
    i = _row(p, "$wevalDelta{v r4Bn} (AD.Eval) (fun)")
    assert p.values["entries"][i] == 21381120
    assert p.values["alloc"][i] == 246906880
    assert p.values["allocd"][i] == 0
    assert p.frames.module[p.frame[i]] == "AD.Eval"
    assert p.frames.match[p.frame[i]] == "$wevalDelta (fun)"
    assert p.frames.kind[p.frame[i]] == "closure:fun"
    assert p.extras["closures"]["arity"][i] == 4
    assert p.extras["closures"]["args"][i] == "SdMM"
    j = _row(p, "AD.Dual.$wmulD{v r2Xp} (fun)")
    assert (p.values["entries"][j], p.values["alloc"][j]) == (5184128, 481572864)
    assert p.extras["closures"]["args"][j] == "dMdM"
    k = _row(p, "Main.main1{v r9tJ} (fun)")
    assert p.extras["closures"]["arity"][k] == 0 and p.extras["closures"]["args"][k] == ""
    # nested local: go1 in go9 in Model.MLP.$wbuild
    g = _row(p, "go1{v s6jU} (Model.MLP) (fun) in s6jP")
    assert p.frames.match[p.frame[g]] == "go1 (fun) in go9 in $wbuild"
    # a parent printed after its child is still resolved
    s = _row(p, "go9{v s4DC} (AD.Eval) (fun) in r4Bj")
    assert p.frames.match[p.frame[s]] == "go9 (fun) in $wbackprop"


def test_hs_ad_v1_v2_align(tdir: Path) -> None:
    v1 = parsers.load(tdir / "hs-ad-v1.ticky.txt")
    v2 = parsers.load(tdir / "hs-ad-v2.ticky.txt")
    k1, k2 = _by_key(v1), _by_key(v2)
    # $wevalDelta is local in v1 and exported in v2, with other uniques: same key
    key = "AD.Eval\x1f$wevalDelta (fun)"
    assert v2.frames.name[v2.frame[k2[key]]] == "AD.Eval.$wevalDelta{v r47g} (fun)"
    assert v1.values["alloc"][k1[key]] == 246906880
    assert v2.values["alloc"][k2[key]] == 495206400
    assert v1.values["entries"][k1[key]] == v2.values["entries"][k2[key]] == 21381120
    mul = "AD.Dual\x1f$wmulD (fun)"
    assert v1.values["alloc"][k1[mul]] == v2.values["alloc"][k2[mul]] == 481572864
    sat = "Optim.SGD\x1fsat (fun) in $wsgdStep"  # sat_s79n{v} ... in r76X vs sat_s6yU{v} ... in r6wu
    assert v1.values["alloc"][k1[sat]] == v2.values["alloc"][k2[sat]] == 2216960
    go9 = "AD.Eval\x1fgo9 (fun) in $wbackprop"
    assert (v1.values["alloc"][k1[go9]], v2.values["alloc"][k2[go9]]) == (11084800, 14410240)
    # the rename and the re-numbered / new bindings
    assert set(k1) - set(k2) == {
        "AD.Dual\x1fsigmoidD (fun)", "AD.Eval\x1flvl1 (fun)", "AD.Eval\x1fdrainPending (fun)"}
    assert set(k2) - set(k1) == {
        "AD.Dual\x1flogisticD (fun)", "AD.Eval\x1flvl (fun)", "AD.Eval\x1fbackprop2 (fun)",
        "AD.Eval\x1fbackprop4 (fun)"}
    assert v2.values["entries"][k2["AD.Dual\x1flogisticD (fun)"]] == 12928
    # run-level numbers side by side
    assert (v1.totals["enters"], v2.totals["enters"]) == (65973574, 74979656)
    assert (v1.totals["alloc_total"], v2.totals["alloc_total"]) == (1513877128, 1765471384)
    assert v2.n_nodes == 40


# --------------------------------------------------------------------------------------
# GHC 9.2 (naivesolver) and GHC 7.x
# --------------------------------------------------------------------------------------
def test_ghc92_naivesolver(tdir: Path) -> None:
    p = parsers.load(tdir / "ghc-9.2-naivesolver-main.ticky")
    assert p.meta["program"] == "NaiveSolver-exe.EXE"
    assert p.meta["command_line"].startswith("'C:\\Users\\Lana\\Projects\\NaiveSolver")
    assert p.meta["ghc_layout"] == "<=9.2"
    assert p.n_nodes == 865
    t = p.totals
    assert t["enters"] == 251123262
    assert (t["tail_calls"], t["known_tail_calls"], t["known_tail_calls_pct"]) == (
        223524175, 158090166, 71)
    assert (t["returns_new"], t["ret_new_pct"]) == (51251601, pytest.approx(92.0))
    assert t["alloc_total"] == 5158829848
    assert t["very_slow_calls"] == 3213
    assert p.extras["histograms"]["RET_OLD"]["total"] == 3745459
    assert p.extras["histograms"]["RET_OLD"]["percent"][6] == pytest.approx(99.6)
    assert p.extras["counter_notes"]["UPD_OLD_PERM_IND_ctr"] == "requires +RTS -Z"
    # first row: a system name whose unique is in the name, parent found by its suffix unique
    assert p.frames.name[p.frame[0]] == "sat_s1Hld{v} (SmartShrinkTest) (fun) in g1Imc"
    assert p.frames.match[p.frame[0]] == "sat (fun) in $lgo12"
    assert (p.values["entries"][0], p.values["alloc"][0]) == (11, 352)
    i = _row(p, "SmartShrink.traceForest{v rCZE} (fun)")
    assert (p.values["entries"][i], p.values["alloc"][i]) == (135, 10720)
    assert p.extras["closures"]["args"][i] == ">S"
    amb = {(a["module"], a["match"]): a["count"] for a in p.extras["ambiguous_keys"]}
    assert amb[("SmartShrinkTest", "sat (fun) in $lgo12")] >= 2
    # equal-key rows stay separate nodes, in file order
    same = np.flatnonzero(p.frames.key[p.frame] == "SmartShrinkTest\x1fsat (fun) in $lgo12")
    assert len(same) == amb[("SmartShrinkTest", "sat (fun) in $lgo12")]
    assert same[0] == 0


def test_ghc7_alloc_allocd_layout(tdir: Path) -> None:
    p = parsers.load(tdir / "ghc-7.x-haskell-opengl-Modern-Main.ticky")
    assert "program" not in p.meta  # GHC 7 wrote no command line
    assert p.n_nodes == 246
    assert p.totals["enters"] == 51011712
    assert p.totals["known_tail_calls_pct"] == 57
    i = _row(p, "main:Engine.Object.Intersect.$w$sgetObjectIntersecter{v rWhY}")
    assert p.values["entries"][i] == 360888
    assert p.extras["closures"]["arity"][i] == 10
    assert p.extras["closures"]["args"][i] == ">>>>>>>>.L"
    assert p.frames.module[p.frame[i]] == "Engine.Object.Intersect"
    assert p.frames.kind[p.frame[i]] == "closure"  # no kind printed by GHC 7
    j = _row(p, "sat_s1s0g{v} (main:Engine.Core.Types) in r1hE7")
    assert p.frames.match[p.frame[j]] == "sat in $fHasAABBGameObject"
    assert p.frames.module[p.frame[j]] == "Engine.Core.Types"


def test_ghc7_allocs_words_layout(tdir: Path) -> None:
    p = parsers.load(tdir / "ghc-7.x-haskell-opengl-Performance-ticky.txt")
    assert p.meta["table_format"] == "allocs-words"
    assert [m.name for m in p.metrics] == ["entries", "alloc_words"]
    assert p.metric("alloc_words").unit == parsers.Unit.COUNT
    assert p.n_nodes == 194
    assert p.totals["alloc_total_words"] == 369813535
    assert "alloc_total" not in p.totals
    # 15 kind letters run into the name: split by arity
    i = _row(p, "main:Engine.Graphics.Framebuffer.renderAllPasses_$sa{v rFf9}")
    assert p.values["entries"][i] == 1057
    assert p.extras["closures"]["arity"][i] == 15
    assert p.extras["closures"]["stack"][i] == 9
    assert p.extras["closures"]["args"][i] == "AMLMLSSTSSLTSSL"
    j = _row(p, "$wa1{v rGk6} (main:Engine.Graphics.Framebuffer)")
    assert (p.values["entries"][j], p.values["alloc_words"][j]) == (2114, 21140)
    assert p.extras["closures"]["args"][j] == "iSSSA"


# --------------------------------------------------------------------------------------
# GHC 9.4+ layout (synthesised files)
# --------------------------------------------------------------------------------------
def test_synth_94_json(tdir: Path) -> None:
    p = parsers.load(tdir / "synth-ghc-9.4-json.ticky")
    assert p.meta["ghc_layout"] == "9.4+"
    assert p.n_nodes == 8
    assert p.totals["total_tag_predictions_made"] == 120
    assert p.totals["alloc_total"] == 276224
    cl = p.extras["closures"]
    assert cl["sub_type"] == ["fun", "fun", "thk", "con", "lne", "fun", "fun", "fun"]
    assert cl["info_type"][0] == "entCntr"
    assert cl["fv_count"][:4] == [0, 2, 12, 1]
    assert cl["fv_kinds"][1] == "MI"
    assert cl["info_truncated"][0]  # %-60.60s cut every object
    i = _row(p, "sat_s3Ef{v} (Synth.Eval) (thk) in s2Cd")
    assert (p.values["entries"][i], p.values["allocd"][i]) == (5400, 86400)
    assert p.frames.match[p.frame[i]] == "sat (thk) in go in $weval"
    assert p.frames.kind[p.frame[i]] == "closure:thk"
    c = _row(p, "sat_s4Gh{v} (Synth.Eval) (con: Synth.Types.Leaf) in r1Ab")
    assert p.frames.kind[p.frame[c]] == "closure:con"


def test_synth_94_kinds_same_keys_as_json(tdir: Path) -> None:
    a = parsers.load(tdir / "synth-ghc-9.4-json.ticky")
    b = parsers.load(tdir / "synth-ghc-9.4-kinds.ticky")
    assert b.meta["ghc_layout"] == "9.4+"
    assert b.extras["closures"]["args"] == ["LI", "M", "", "", "i", "SMI", "", ""]
    assert a.frames.key.tolist() == b.frames.key.tolist()
    assert np.array_equal(a.values["alloc"], b.values["alloc"])


def test_full_json_wider_than_column(tmp_path: Path, tdir: Path) -> None:
    text = (tdir / "synth-ghc-9.4-kinds.ticky").read_text()
    row = "       1200       96000           0   2 LI" + " " * 59 + "Synth.Eval.$weval{v r1Ab} (fun)"
    assert row in text
    js = '{"type":"entCntr","subTy":"fun","fvs_c":1,"fvs":"I","args":"LI"}'
    f = tmp_path / "full.ticky"
    f.write_text(text.replace(row, "       1200       96000           0   2 " + js
                              + " Synth.Eval.$weval{v r1Ab} (fun)"))
    p = parsers.load(f)
    i = _row(p, "Synth.Eval.$weval{v r1Ab} (fun)")
    cl = p.extras["closures"]
    assert (cl["args"][i], cl["fv_count"][i], cl["info_truncated"][i]) == ("LI", 1, False)


# --------------------------------------------------------------------------------------
# name normalisation units
# --------------------------------------------------------------------------------------
def test_parse_stg_name_forms() -> None:
    n = parse_stg_name("$weval0{v skDS} (BenchMnistTools) (fun) in rigR")
    assert (n.occ, n.module, n.kind, n.unique, n.parent) == (
        "$weval0", "BenchMnistTools", "fun", "skDS", "rigR")
    n = parse_stg_name("AD.Dual.$wmulD{v r2Xp} (fun)")
    assert (n.occ, n.module, n.kind, n.parent) == ("$wmulD", "AD.Dual", "fun", "")
    n = parse_stg_name("lvl1{v r4Bm} (AD.Eval) (fun,se)")
    assert (n.kind, n.flags) == ("fun", "fun,se")
    n = parse_stg_name("sat_s79n{v} (Optim.SGD) (fun) in r76X")
    assert (n.occ, n.unique, n.parent) == ("sat", "s79n", "r76X")
    n = parse_stg_name("main:Engine.Graphics.Window.$wa1{v rh}")
    assert (n.occ, n.module, n.kind) == ("$wa1", "Engine.Graphics.Window", "")
    n = parse_stg_name("SmartShrink.$fAlternativeRoseCell_$c<|>{v rD1n} (fun)")
    assert (n.occ, n.module) == ("$fAlternativeRoseCell_$c<|>", "SmartShrink")
    n = parse_stg_name(":Main.main{v 01D} (fun)")
    assert (n.occ, n.module) == ("main", ":Main")
    n = parse_stg_name("x (M) at M.hs:3:1 in y")  # GHC 9.4 tag-skip counter: kept whole-ish
    assert n.occ == "x"


def test_parse_arg_info_cut_and_whole() -> None:
    whole = parse_arg_info('{"type":"entCntr","subTy":"thk","fvs_c":2,"fvs":"LM","args":""}')
    assert whole == {"type": "entCntr", "sub_type": "thk", "fv_count": 2, "fv_kinds": "LM",
                     "args": "", "truncated": False}
    cut = parse_arg_info('{"type":"entCntr","subTy":"fun","fvs_c":12,"fvs":"LLMMIIdd>>')
    assert cut["truncated"] and cut["sub_type"] == "fun" and cut["fv_count"] == 12
    assert cut["fv_kinds"] == "LLMMIIdd>>"


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------
def _lines(tdir: Path, name: str = "hs-ad-v1.ticky.txt") -> list[str]:
    return (tdir / name).read_text().splitlines(keepends=True)


def test_truncated_inside_table(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("-----")) + 1
    # ten whole rows, then half of the eleventh (no newline)
    cut = "".join(lines[: start + 10]) + lines[start + 10][:50]
    f = tmp_path / "cut.ticky"
    f.write_text(cut)
    p = parsers.load(f)
    assert p.incomplete
    assert "inside the per-closure table" in p.incomplete_reason
    assert p.n_nodes == 10
    assert p.totals["enters"] == 65973574  # the summary was read
    assert p.extras["counters"] == {}


def test_truncated_inside_counters(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    end = next(i for i, ln in enumerate(lines) if "KNOWN_CALL_ctr" in ln and "UN" not in ln)
    f = tmp_path / "cut2.ticky"
    f.write_text("".join(lines[: end + 1]))
    p = parsers.load(f)
    assert p.incomplete and "KNOWN_CALL_ctr" in p.incomplete_reason
    assert p.n_nodes == 39
    assert p.extras["counters"]["KNOWN_CALL_ctr"] == 28078017
    assert "RET_NEW_ctr" not in p.extras["counters"]


def test_truncated_in_summary(tdir: Path, tmp_path: Path) -> None:
    f = tmp_path / "cut3.ticky"
    f.write_text("".join(_lines(tdir)[:14]))
    p = parsers.load(f)
    assert p.incomplete and "summary" in p.incomplete_reason
    assert p.n_nodes == 0
    assert p.totals["function_entries"] == 52583530


def test_counters_only(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    head = next(i for i, ln in enumerate(lines) if ln.startswith("The following table"))
    stars = [i for i, ln in enumerate(lines) if ln.startswith("*****")]
    f = tmp_path / "counters.ticky"
    f.write_text("".join(lines[:head] + lines[stars[-1]:]))
    p = parsers.load(f)
    assert p.n_nodes == 0
    assert not p.incomplete
    assert any("no per-closure table" in w for w in p.warnings)
    assert p.extras["counters"]["ALLOC_HEAP_tot"] == 1513877128
    assert p.totals["alloc_total"] == 1513877128
    assert p.totals["enters"] == 65973574


def test_empty_table(tdir: Path, tmp_path: Path) -> None:
    """No -ticky module entered: the RTS still prints the header, with no rows."""
    lines = _lines(tdir)
    dash = next(i for i, ln in enumerate(lines) if ln.startswith("-----"))
    stars = [i for i, ln in enumerate(lines) if ln.startswith("*****")]
    f = tmp_path / "norows.ticky"
    f.write_text("".join(lines[: dash + 1] + ["\n"] + lines[stars[-1]:]))
    p = parsers.load(f)
    assert p.n_nodes == 0 and not p.incomplete
    assert any("table is empty" in w for w in p.warnings)


def test_corrupt_row_strict_and_lenient(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("-----")) + 1
    lines[start + 3] = "   garbage in the table\n"
    f = tmp_path / "bad.ticky"
    f.write_text("".join(lines))
    with pytest.raises(ParseError) as e:
        parsers.load(f)
    assert e.value.line == start + 4
    assert "bad.ticky" in str(e.value) and "table row" in str(e.value)
    p = parsers.load(f, lenient=True)
    assert p.n_nodes == 38
    assert any(f"line {start + 4}" in w for w in p.warnings)


def test_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "empty.ticky"
    f.write_text("")
    with pytest.raises(ParseError, match="empty"):
        parsers.load(f)
    with pytest.raises(ParseError, match="empty"):
        ghc_ticky.read(f)


def test_binary_garbage(tmp_path: Path) -> None:
    f = tmp_path / "junk.ticky"
    f.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ParseError):
        parsers.load(f)
    with pytest.raises(ParseError, match="binary"):
        ghc_ticky.read(f)


def test_wrong_format(tmp_path: Path) -> None:
    f = tmp_path / "other.txt"
    f.write_text("\tTime and Allocation Profiling Report  (Final)\n\n\t   ad +RTS -p -RTS\n")
    assert ghc_ticky.sniff(f.read_bytes(), f) == 0.0
    with pytest.raises(ParseError) as e:
        ghc_ticky.read(f)
    assert e.value.line == 1 and "ticky" in str(e.value)
    with pytest.raises(ParseError):
        parsers.load(f, format="ghc-ticky")


def test_progress_is_called(tdir: Path) -> None:
    seen: list[float] = []
    parsers.load(tdir / "ghc-9.2-naivesolver-main.ticky", progress=seen.append)
    assert seen and seen[-1] == 1.0


def test_cut_mid_summary_line_is_not_trusted(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    f = tmp_path / "cut4.ticky"
    f.write_text("".join(lines[:4]) + "ENTERS: 6597")  # "ENTERS: 65973574 ..." cut
    p = parsers.load(f)
    assert p.incomplete
    assert "enters" not in p.totals
    assert any("line 5" in w for w in p.warnings)


def test_table_without_counters(tdir: Path, tmp_path: Path) -> None:
    lines = _lines(tdir)
    stars = [i for i, ln in enumerate(lines) if ln.startswith("*****")]
    f = tmp_path / "nocounters.ticky"
    f.write_text("".join(lines[: stars[-1]]))  # up to the blank line after the table
    p = parsers.load(f)
    assert p.incomplete and "without the raw counters" in p.incomplete_reason
    assert p.n_nodes == 39


def test_complete_file_without_final_newline(tdir: Path, tmp_path: Path) -> None:
    f = tmp_path / "nonl.ticky"
    f.write_text((tdir / "hs-ad-v1.ticky.txt").read_text().rstrip("\n"))
    p = parsers.load(f)
    assert not p.incomplete and p.warnings == ()
    assert p.extras["counters"]["GC_FAILED_PROMOTION_ctr"] == 0
