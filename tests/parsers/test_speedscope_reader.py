"""speedscope JSON reader: the corpus files, their totals and trees recomputed here from
the JSON, and bad input."""

from __future__ import annotations

import gzip
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from profdiff import parsers
from profdiff.parsers import speedscope
from profdiff.parsers.errors import ParseError

DATA = Path(__file__).resolve().parent.parent / "data" / "speedscope"
CORPUS = sorted(p.name for p in DATA.iterdir() if ".json" in p.name)
SCALE = {"seconds": 1.0, "milliseconds": 1e-3, "microseconds": 1e-6, "nanoseconds": 1e-9,
         "none": 1.0, "bytes": 1.0}
DOTNET = "dotnet-trace-robotcleaner-evented.speedscope.json.gz"


def _doc(name: str) -> dict:
    raw = (DATA / name).read_bytes()
    return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)


def _fold(doc: dict, i: int) -> dict[tuple, float]:
    """Independent fold of profile ``i``: root-first tuple of frame names -> self weight."""
    prof, frames = doc["profiles"][i], doc["shared"]["frames"]
    out: dict[tuple, float] = defaultdict(float)
    if prof["type"] == "sampled":
        for st, w in zip(prof["samples"], prof["weights"], strict=True):
            if st:
                out[tuple(frames[k]["name"] for k in st)] += w
        return out
    stack: list[str] = []
    last = None
    for ev in prof["events"]:
        if stack and last is not None:
            out[tuple(stack)] += ev["at"] - last
        last = ev["at"]
        if ev["type"] == "O":
            stack.append(frames[ev["frame"]]["name"])
        elif frames[ev["frame"]]["name"] in stack:
            while stack.pop() != frames[ev["frame"]]["name"]:
                pass  # dotnet-trace leaves frames open: closing an outer one closes them
    return out


def _our_fold(prof, metric: str) -> dict[tuple, float]:
    out: dict[tuple, float] = defaultdict(float)
    names = prof.name
    for n in range(prof.n_nodes):
        v = float(prof.values[metric][n])
        if v:
            path = []
            m = n
            while m >= 0:
                path.append(names[m])
                m = int(prof.parent[m])
            out[tuple(reversed(path))] += v
    return out


def _speedscope_total(prof: dict) -> float:
    """The total speedscope's importer gives a profile: max(end - start, weights)."""
    start, end = float(prof["startValue"]), float(prof["endValue"])
    if prof["type"] == "sampled":
        return max(end - start, math.fsum(prof["weights"]))
    return max(end - start, max(e["at"] for e in prof["events"]) - start)


@pytest.mark.parametrize("name", CORPUS)
def test_totals_and_tree_match_the_json(name: str) -> None:
    doc = _doc(name)
    lenient = name == DOTNET
    prof = parsers.load(DATA / name, lenient=lenient)
    assert prof.format == "speedscope" and not prof.incomplete
    base = prof.default_metric
    assert base in ("self_time_s", "self_weight", "self_bytes")
    units = {p["unit"] for p in doc["profiles"]}
    assert prof.meta["unit"] in units
    scale = SCALE[prof.meta["unit"]]
    want: dict[tuple, float] = defaultdict(float)
    for i in range(len(doc["profiles"])):
        for k, v in _fold(doc, i).items():
            want[k] += v * scale
    got = _our_fold(prof, base)
    assert got.keys() == {k for k, v in want.items() if v}
    for k, v in got.items():
        assert v == pytest.approx(want[k], rel=1e-9, abs=1e-12), k
    for info, p in zip(prof.meta["profiles"], doc["profiles"], strict=True):
        assert info["speedscope_total"] == pytest.approx(_speedscope_total(p), rel=1e-12)
    roots = prof.roots
    total_col = prof.values[base.replace("self_", "total_")]
    assert float(total_col[roots].sum()) == pytest.approx(sum(want.values()), rel=1e-9)
    # run total: every weight (empty-stack samples too) / the time a frame was open
    expect = math.fsum(
        math.fsum(p["weights"]) * SCALE[p["unit"]] if p["type"] == "sampled"
        else math.fsum(_fold(doc, i).values()) * SCALE[p["unit"]]
        for i, p in enumerate(doc["profiles"]))
    assert prof.totals[base] == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize(("name", "samples"), [
    # sample counts stated in the corpus SOURCES.md (main thread)
    ("pyspy-0.4.1-self-driving-sim-run-a.speedscope.json.gz", 5060),
    ("pyspy-0.4.1-self-driving-sim-run-b.speedscope.json.gz", 4806),
    ("pyspy-0.4.1-self-driving-sim-short.speedscope.json", 260),
    ("pyspy-0.4.1-voronoi-sampled.speedscope.json.gz", 2098),
])
def test_main_thread_sample_counts(name: str, samples: int) -> None:
    prof = parsers.load(DATA / name, profile=0)
    assert prof.totals["self_samples"] == samples
    assert prof.meta["chosen"] == [0]
    idle = sum(1 for st in _doc(name)["profiles"][0]["samples"] if not st)
    assert int(prof.values["total_samples"][prof.roots].sum()) == samples - idle
    # py-spy: one sample per interval (10 ms or 1 ms), so seconds = samples x interval
    interval = prof.meta["profiles"][0]["speedscope_total"] / samples
    assert prof.totals["self_time_s"] == pytest.approx(samples * interval)


def test_units_are_converted_and_named() -> None:
    prof = parsers.load(DATA / DOTNET, lenient=True)
    assert prof.meta["unit"] == "milliseconds"
    assert prof.metric("self_time_s").unit == "seconds"
    assert prof.totals["self_time_s"] == pytest.approx(33455.554286 / 1000, rel=1e-6)
    assert not prof.metric("self_time_s").sampled
    simple = parsers.load(DATA / "speedscope-0.0.1-simple-evented.speedscope.json")
    assert simple.meta["unit"] == "none" and simple.totals == {"self_weight": 14.0}


def test_dotnet_mismatched_close_is_located_or_recovered() -> None:
    """dotnet-trace leaves a frame open (speedscope itself refuses the file)."""
    with pytest.raises(ParseError) as e:
        parsers.load(DATA / DOTNET)
    assert "$.profiles[0].events[6601]" in str(e.value)
    prof = parsers.load(DATA / DOTNET, lenient=True)
    assert any("events[6601]" in w for w in prof.warnings)


def test_choose_a_profile_by_index_or_name() -> None:
    path = DATA / "speedscope-0.6.0-two-sampled.speedscope.json"
    both = parsers.load(path)
    one = parsers.load(path, profile="two")
    first = parsers.load(path, profile=0)
    assert both.totals["self_time_s"] == 28 and one.totals["self_time_s"] == 14
    assert first.meta["chosen"] == [0] and one.meta["chosen"] == [1]
    assert [p.totals["self_samples"] for p in speedscope.read_each(path)] == [5, 5]
    with pytest.raises(ParseError, match="option profile"):
        parsers.load(path, profile="three")


def test_run_pair_diff_aligns_threads(tmp_path: Path) -> None:
    a = parsers.load(DATA / "pyspy-0.4.1-self-driving-sim-run-a.speedscope.json.gz")
    b = parsers.load(DATA / "pyspy-0.4.1-self-driving-sim-run-b.speedscope.json.gz")
    from profdiff.viewer.compare import align

    cmp = align([a, b], mode="flat")
    assert cmp.n_rows < a.n_nodes + b.n_nodes  # most functions match across the runs
    assert np.count_nonzero(cmp.present.all(axis=1)) > 100


# ----- bad input --------------------------------------------------------------------------
def _write(tmp_path: Path, doc, name: str = "x.speedscope.json") -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


GOOD = {"$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
        "profiles": [{"type": "sampled", "name": "p", "unit": "none", "startValue": 0,
                      "endValue": 3, "samples": [[0, 1], [0]], "weights": [2, 1]}]}


def test_cut_json_gives_a_located_error(tmp_path: Path) -> None:
    text = json.dumps(GOOD, indent=1)
    p = _write(tmp_path, text[: len(text) // 2])
    with pytest.raises(ParseError) as e:
        parsers.load(p)
    assert e.value.line is not None and "cut" in e.value.expected


@pytest.mark.parametrize(("change", "where"), [
    (lambda d: d["profiles"][0]["samples"].__setitem__(0, [0, 7]), "samples[0]"),
    (lambda d: d["profiles"][0]["weights"].__setitem__(1, -1), "weights[1]"),
    (lambda d: d["profiles"][0].__setitem__("type", "flamegraph"), "type"),
    (lambda d: d["profiles"][0].__setitem__("unit", "parsecs"), "unit"),
    (lambda d: d.__setitem__("shared", {}), "$.shared"),
    (lambda d: d["profiles"][0]["weights"].pop(), "weights"),
    (lambda d: d["profiles"].clear(), "$.profiles"),
])
def test_bad_values_name_their_json_path(tmp_path: Path, change, where: str) -> None:
    doc = json.loads(json.dumps(GOOD))
    change(doc)
    with pytest.raises(ParseError) as e:
        parsers.load(_write(tmp_path, doc))
    assert where in str(e.value)


def test_lenient_skips_bad_samples(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["profiles"][0]["samples"].append([5])
    doc["profiles"][0]["weights"].append(1)
    prof = parsers.load(_write(tmp_path, doc), lenient=True)
    assert prof.totals == {"self_weight": 3.0, "self_samples": 2}
    assert len(prof.warnings) == 1


def test_sniff() -> None:
    head = (DATA / "speedscope-0.6.0-two-sampled.speedscope.json").read_bytes()
    assert speedscope.sniff(head, Path("x.json")) == 1.0
    assert speedscope.sniff(b'{"a": 1}', Path("x.json")) == 0.0
    assert speedscope.sniff(b"[1]", Path("x.speedscope.json")) == 0.0
    assert speedscope.sniff(b"\xef\xbb\xbf" + head, Path("x.json")) == 1.0


PYSPY = [n for n in CORPUS if n.startswith("pyspy")]


def _function_paths(doc: dict) -> set[tuple]:
    """Every root-first path of (name, file) of every sample's stack, prefixes included:
    the call tree of a file read per function, computed from its JSON alone."""
    frames = doc["shared"]["frames"]
    out: set[tuple] = set()
    for prof in doc["profiles"]:
        for st in prof["samples"]:
            path: tuple = ()
            for k in st:
                path += ((frames[k]["name"], frames[k].get("file") or ""),)
                out.add(path)
    return out


@pytest.mark.parametrize("name", PYSPY)
def test_pyspy_frames_are_functions_not_sampled_lines(name: str) -> None:
    """py-spy's ``line`` is the line running when sampled (a caller's frame: its call
    site), so one function came as a frame per line and as several sibling rows; its
    frames are read per (name, file), and the tree is the JSON's function paths."""
    doc = _doc(name)
    assert doc["exporter"].startswith("py-spy")
    lines = defaultdict(set)
    for fr in doc["shared"]["frames"]:
        lines[(fr["name"], fr.get("file"))].add(fr.get("line"))
    assert any(len(v) > 1 for v in lines.values())  # the same function at several lines
    prof = parsers.load(DATA / name)
    keys = list(zip(prof.frames.name.tolist(), prof.frames.module.tolist(), strict=True))
    assert len(keys) == len(set(keys)) == len(lines)
    assert set(prof.frames.src.tolist()) == {f for _, f in lines}  # the file, no line
    assert "per function" in prof.meta["frames"]
    paths = _function_paths(doc)
    assert prof.n_nodes == len(paths)


def test_other_exporters_keep_their_lines() -> None:
    name = "pyinstrument-molehill-evented.speedscope.json.gz"
    if name not in CORPUS:
        name = next(n for n in CORPUS if n.startswith("pyinstrument"))
    doc = _doc(name)
    prof = parsers.load(DATA / name)
    want = {f"{f['file']}:{f['line']}" for f in doc["shared"]["frames"] if f.get("line")}
    assert want and want <= set(prof.frames.src.tolist())
    assert prof.meta["frames"] == "per file line"


def test_two_pyspy_runs_share_their_common_function_paths() -> None:
    """run-a against run-b in tree mode: the rows are the union of the two files'
    function paths and the matched rows their intersection (before: 70 of 31,606 rows
    matched, siblings of one function paired by their order)."""
    from profdiff.viewer.compare import align

    names = ("pyspy-0.4.1-self-driving-sim-run-a.speedscope.json.gz",
             "pyspy-0.4.1-self-driving-sim-run-b.speedscope.json.gz")
    pa, pb = (_function_paths(_doc(n)) for n in names)
    cmp = align([parsers.load(DATA / n) for n in names], mode="tree")
    assert cmp.n_rows == len(pa | pb)
    assert int(np.count_nonzero(cmp.present.all(axis=1))) == len(pa & pb) > 5000
