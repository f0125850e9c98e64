"""Threaded vs shared-dispatch interpreters, built and recorded here: the summary tells
them apart (indirect jumps per handler; one block that is the target of every handler).

The recordings are moved, with their binaries, to a folder other than where they were
recorded, so only the "binary beside the recording" lookup can find them (the absolute
path stored in perf.data no longer exists), and HOME is a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from interp_programs import HANDLERS, MAIN, SHARED, THREADED
from tool_requirements import require, require_tool

from profdiff.viewer.annotate import BinaryError, compare_function, comparison_json

ITERATIONS = "20000000"


def _record(gcc: str, perf: str, work: Path, name: str, source: str) -> Path:
    (work / f"{name}.c").write_text(source + MAIN)
    subprocess.run([gcc, "-O2", "-g", "-fno-omit-frame-pointer", "-o", str(work / name),
                    str(work / f"{name}.c")], check=True, timeout=120)
    env = dict(os.environ, HOME=str(work))
    data = work / f"{name}.data"
    r = subprocess.run([perf, "record", "-e", "cpu-clock", "-F", "20000", "-g", "-o", str(data),
                        str(work / name), ITERATIONS], capture_output=True, text=True, env=env,
                       timeout=120)
    require(data.exists() and r.returncode == 0,
            f"perf record not permitted here: {r.stderr.strip()[:200]}")
    return data


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[str, Path]:
    perf = require_tool("perf", "apt-get install linux-perf")
    gcc = require_tool("gcc", "apt-get install gcc")
    require_tool("objdump", "apt-get install binutils")
    work = tmp_path_factory.mktemp("record")
    out = {}
    for name, src in (("threaded", THREADED), ("shared", SHARED)):
        data = _record(gcc, perf, work, name, src)
        dest = tmp_path_factory.mktemp(name)  # perf.data + binary, away from the recorded path
        shutil.copy(data, dest / "perf.data")
        shutil.copy(work / name, dest / name)
        out[name] = dest / "perf.data"
    shutil.rmtree(work)
    return out


def test_summary_tells_threaded_from_shared_dispatch(recordings, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    cmp = compare_function(recordings["shared"], recordings["threaded"], "interp")
    shared, threaded = cmp.summaries
    # threaded: one indirect jump per handler (+ the first dispatch); shared: just one
    assert threaded["indirect_jumps"] >= HANDLERS - 1
    assert shared["indirect_jumps"] == 1
    # shared: the dispatch block is the direct jump target of (almost) every handler
    top = shared["most_jumped_to"][0]
    assert top["jump_target_of"] >= HANDLERS - 2
    assert max((b["jump_target_of"] for b in threaded["blocks"]), default=0) <= 2
    # the threaded build spends its dispatch time on its indirect jumps
    assert threaded["indirect_jump_share"] > shared["indirect_jump_share"] + 10
    # samples on indirect jumps are spread over several sites in the threaded build
    ijumps = [i for i in cmp.runs[1].instructions.kind.nonzero()[0]
              if cmp.runs[1].instructions.kind[i] == 3]
    assert sum(1 for i in ijumps if cmp.runs[1].samples[i] > 0) >= 3
    for r in cmp.runs:
        assert r.total > 500 and r.unplaced == 0
        assert r.binary.how == "beside the recording"


def test_json_shape_and_consistency(recordings, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    doc = comparison_json(compare_function(recordings["threaded"], recordings["shared"],
                                           "interp"))
    assert set(doc) >= {"runs", "alignment", "summary"}
    assert len(doc["runs"]) == 2 and len(doc["summary"]) == 2
    for k, run in enumerate(doc["runs"]):
        assert run["symbol"] == "interp"
        ins = run["instructions"]
        assert set(ins[0]) >= {"address", "text", "samples", "share"}
        assert sum(x["samples"] for x in ins) == run["samples"]
        assert abs(sum(x["share"] for x in ins) - 100.0) < 0.01
        assert [p[k] for p in doc["alignment"] if p[k] is not None] == list(range(len(ins)))


def test_missing_or_other_binary(recordings, monkeypatch, tmp_path) -> None:
    """The recorded folder is gone, so only a binary beside the perf.data can match."""
    monkeypatch.setenv("HOME", str(tmp_path))
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(recordings["shared"], lone / "perf.data")
    with pytest.raises(BinaryError, match=r"recorded binary .*/shared was not found"):
        compare_function(lone / "perf.data", recordings["threaded"], "interp")
    shutil.copy(recordings["threaded"].parent / "threaded", lone / "shared")  # another build
    with pytest.raises(BinaryError, match=r"has build-id [0-9a-f]+, but .*different build"):
        compare_function(lone / "perf.data", recordings["threaded"], "interp")
