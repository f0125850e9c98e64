"""GHC ``+RTS -pj`` JSON reader: the real files (speedscope fixture, hs-ad runs), broken
escaping as GHC 9.0 writes it, cut files and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff import parsers
from profdiff.parsers import ParseError, ghc_json, ghc_prof

DATA = Path(__file__).parent.parent / "data"
JSON_FILES = sorted((DATA / "ghc-prof-json").glob("*")) + sorted((DATA / "hs-ad").rglob("*.json"))
HSAD = DATA / "hs-ad"


def test_corpus() -> None:
    assert len(JSON_FILES) == 6


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_real_json_profiles(path: Path) -> None:
    doc = json.loads(path.read_text())
    p = ghc_json.read(path)
    assert p.format == "ghc-prof-json"
    assert not p.incomplete and p.warnings == ()
    rts_ticks, rts_alloc = _rts_costs(doc)
    assert p.totals["total_ticks"] == doc["total_ticks"] - rts_ticks
    assert p.totals["total_alloc_bytes"] == doc["total_alloc"] - rts_alloc
    assert p.totals["header_total_alloc_bytes"] == doc["total_alloc"]
    assert p.totals["rts_alloc_bytes"] == rts_alloc and p.totals["rts_ticks"] == rts_ticks
    assert p.totals["total_time_s"] == pytest.approx(
        doc["total_time"] * (doc["total_ticks"] - rts_ticks) / doc["total_ticks"], abs=0.006)
    assert p.meta["program"] == doc["program"]
    assert p.meta["date"] == doc["end_time"]
    assert p.meta["tick_interval_us"] == doc["tick_interval"]
    assert "GC" in p.meta["percent_basis"] and "recomputed" in p.meta["percent_basis"]
    # ticks/alloc are exclusive in the file; their sums are the JSON totals
    assert int(p.values["ticks"].sum()) == doc["total_ticks"]
    assert int(p.values["bytes"].sum()) == doc["total_alloc"]
    assert p.values["inherited_time_pct"][0] == pytest.approx(100.0)
    assert p.values["inherited_alloc_pct"][0] == pytest.approx(100.0)
    assert p.values["inherited_alloc_bytes"][0] == doc["total_alloc"]
    assert {m.name for m in p.metrics} == {
        "entries", "time_pct", "alloc_pct", "inherited_time_pct", "inherited_alloc_pct",
        "ticks", "bytes", "time_s", "alloc_bytes", "inherited_time_s", "inherited_alloc_bytes"}
    names = set(p.name.tolist())
    assert {"MAIN", "GC", "SYSTEM"} <= names  # the system cost centres the text report hides
    # node count = objects in the nested tree
    def count(n: dict) -> int:
        return 1 + sum(count(c) for c in n["children"])
    assert p.n_nodes == count(doc["profile"])


def _rts_costs(doc: dict) -> tuple[int, int]:
    """Ticks and bytes of the RTS's own cost centres, summed straight from the JSON."""
    rts_ids = {c["id"] for c in doc["cost_centres"]
               if c["label"] in {"GC", "SYSTEM", "IDLE", "OVERHEAD_of", "DONT_CARE", "PINNED"}}
    ticks = alloc = 0
    stack = [doc["profile"]]
    while stack:
        n = stack.pop()
        if n["id"] in rts_ids:
            ticks += n["ticks"]
            alloc += n["alloc"]
        stack.extend(n["children"])
    return ticks, alloc


@pytest.mark.parametrize("v", ["v1", "v2"])
def test_program_totals_equal_the_text_report(v: str) -> None:
    """Allocation is deterministic: the -pj run's program total (profiler overhead and
    SYSTEM taken out) equals the header of the text report of another run of the same
    binary, byte for byte, although the JSON header's own total differs (v2: +325 MB)."""
    pj = ghc_json.read(HSAD / v / "ad.prof.json")
    text = ghc_prof.read(HSAD / v / "ad.prof")
    assert pj.totals["total_alloc_bytes"] == text.totals["total_alloc_bytes"]
    assert pj.totals["header_total_alloc_bytes"] > pj.totals["total_alloc_bytes"]


def test_hs_ad_json_facts() -> None:
    v1 = ghc_json.read(HSAD / "v1" / "ad.prof.json")
    assert v1.n_nodes == 385  # README: 385 JSON nodes against 239 text rows
    assert v1.meta["command_line"] == "./ad 20 +RTS -pj -RTS"
    assert v1.meta["processors"] is None  # "initial_capabilities": 0
    ticks = [ghc_json.read(HSAD / "noise-v1" / f"run{i}" / "ad.prof.json").totals["total_ticks"]
             for i in (1, 2, 3)]
    # header ticks 4121, 6279, 4803, 4251 minus the GC/SYSTEM/OVERHEAD_of ticks of each run
    assert [v1.totals["total_ticks"], *ticks] == [2534, 3671, 2830, 2581]
    assert v1.totals["total_ticks"] + v1.totals["rts_ticks"] == 4121
    # GC: 1516 ticks directly under MAIN
    gc = np.flatnonzero(v1.name == "GC")
    assert len(gc) == 1 and v1.parent[gc[0]] == 0 and v1.values["ticks"][gc[0]] == 1516
    assert v1.values["time_pct"][gc[0]] == pytest.approx(100 * 1516 / 4121)
    assert v1.values["time_s"][gc[0]] == pytest.approx(1.516)
    # entries are deterministic: the JSON run and the text run agree on addGrad
    text = ghc_prof.read(HSAD / "v1" / "ad.prof")
    assert v1.values["entries"][v1.name == "addGrad"].sum() == 4_433_920
    assert text.values["entries"][text.name == "addGrad"].sum() == 4_433_920
    caf = v1.frames.kind[v1.frame[np.flatnonzero(v1.name == "CAF")[0]]]
    assert caf == "caf"


def test_detected_by_content_with_prof_extension(tmp_path: Path) -> None:
    src = DATA / "ghc-prof-json" / "speedscope-binary-trees.pj.prof.json"
    for name in ("simple.prof", "x.unknown"):
        dst = tmp_path / name
        shutil.copy(src, dst)
        p = parsers.load(dst)
        assert p.format == "ghc-prof-json"
        assert p.totals["total_ticks"] + p.totals["rts_ticks"] == 798
    head = src.read_bytes()[:4096]
    assert ghc_json.sniff(head, Path("a.prof")) >= 0.9
    assert ghc_json.sniff((HSAD / "v1" / "ad.prof").read_bytes()[:4096], Path("a.json")) == 0


def _with_bad_label(tmp_path: Path) -> tuple[Path, str]:
    """The JSON GHC 9.0 writes for a cost centre named ``say "hi"`` + a raw tab/control
    character: quotes and control characters are not escaped."""
    text = (HSAD / "v1" / "ad.prof.json").read_text()
    bad = 'say "hi"\t\x01now'
    text = text.replace('"label": "addGrad"', f'"label": "{bad}"', 1)
    f = tmp_path / "bad.prof"
    f.write_text(text)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    return f, bad


def test_unescaped_quotes_and_control_characters(tmp_path: Path) -> None:
    f, bad = _with_bad_label(tmp_path)
    good = ghc_json.read(HSAD / "v1" / "ad.prof.json")
    p = ghc_json.read(f)
    assert len(p.warnings) == 1 and "tolerant" in p.warnings[0]
    assert not p.incomplete
    assert bad in p.name.tolist()
    assert "addGrad" not in p.name.tolist()
    assert p.n_nodes == good.n_nodes
    assert np.array_equal(p.parent, good.parent)
    assert p.totals == good.totals
    for m in ("entries", "ticks", "bytes", "inherited_time_pct"):
        assert np.array_equal(p.values[m], good.values[m])
    assert p.meta["command_line"] == good.meta["command_line"]
    assert parsers.load(f).format == "ghc-prof-json"


def test_cut_json_loads_what_was_read(tmp_path: Path) -> None:
    text = (HSAD / "v1" / "ad.prof.json").read_text()
    cut = text[: int(len(text) * 0.8)]
    f = tmp_path / "cut.json"
    f.write_text(cut)
    p = ghc_json.read(f)
    assert p.incomplete and "ends inside the profile tree" in p.incomplete_reason
    assert f"line {cut.count(chr(10)) + 1}" in p.incomplete_reason
    good = ghc_json.read(HSAD / "v1" / "ad.prof.json")
    assert 0 < p.n_nodes < good.n_nodes
    assert p.totals == good.totals
    assert np.array_equal(p.parent, good.parent[: p.n_nodes])


def test_json_cut_inside_the_cost_centre_table_says_so(tmp_path: Path) -> None:
    """A -pj file cut before its profile tree (a run still writing it) is named as cut,
    at the line where it ends, not as a JSON object of another kind."""
    text = (HSAD / "v1" / "ad.prof.json").read_text()
    cut = text[: text.index('"profile"') // 2]
    f = tmp_path / "cut.prof.json"
    f.write_text(cut)
    with pytest.raises(ParseError) as e:
        ghc_json.read(f)
    table = text[: text.index('"cost_centres"')].count("\n") + 1
    assert e.value.line == cut.rstrip().count("\n") + 1
    assert e.value.found == (f"the end of the file inside cost_centres (from line {table}): "
                             "cut short or still being written")
    other = tmp_path / "other.json"
    other.write_text('{"traceEvents": [1, 2')
    with pytest.raises(ParseError, match="neither key"):
        ghc_json.read(other)


def test_bad_input(tmp_path: Path) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("")
    with pytest.raises(ParseError, match="empty"):
        ghc_json.read(empty)
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(ParseError, match="binary"):
        ghc_json.read(binary)
    text = tmp_path / "t.json"
    shutil.copy(HSAD / "v1" / "ad.prof", text)
    with pytest.raises(ParseError, match=r"t\.json:1: expected a GHC -pj JSON profile"):
        ghc_json.read(text)
    other = tmp_path / "o.json"
    other.write_text('{"traceEvents": []}')
    with pytest.raises(ParseError, match="'cost_centres' and 'profile'"):
        ghc_json.read(other)
    cut_head = tmp_path / "h.json"
    cut_head.write_text((HSAD / "v1" / "ad.prof.json").read_text()[:300])
    with pytest.raises(ParseError, match=r"h\.json:\d+: expected a GHC -pj JSON profile"):
        ghc_json.read(cut_head)


def test_unknown_cost_centre_id(tmp_path: Path) -> None:
    doc = json.loads((HSAD / "v1" / "ad.prof.json").read_text())
    doc["profile"]["children"][0]["id"] = 999_999
    f = tmp_path / "u.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(ParseError, match="cost centre id 999999"):
        ghc_json.read(f)
    p = ghc_json.read(f, lenient=True)
    assert "<unknown cost centre 999999>" in p.name.tolist()
    assert any("999999" in w for w in p.warnings)
