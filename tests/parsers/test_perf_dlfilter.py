"""perf.data through perf's tables (``perf script --dlfilter``): the same profile as the
text, on real recordings and on recordings made here, and the text wherever the tables
could differ or fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_requirements import require, require_tool

from profdiff.parsers import perf_data, perf_inlines
from profdiff.parsers import perf_dlfilter as agg
from profdiff.parsers.errors import ParseError
from profdiff.parsers.perf_script import read_parts

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"
CVM = [DATA / "c-vm" / "v1" / "perf.data", DATA / "c-vm" / "v2" / "perf.data"]
pytestmark = pytest.mark.perf
TABLES = "perf script tables (--dlfilter)"

SPIN = r"""
#include <stdlib.h>
__attribute__((noinline)) long leaf_work(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
__attribute__((noinline)) long middle(long n) { return leaf_work(n) + 1; }
int main(int argc, char **argv) { long t = 0; int k = argc > 1 ? atoi(argv[1]) : 40; for (int i = 0; i < k; i++) t += middle(2000000); return (int)(t & 1); }
"""


@pytest.fixture
def perf() -> str:
    return require_tool("perf", "apt-get install linux-perf")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """One compiled filter and probe answer for the whole session, never the user's."""
    monkeypatch.setenv("PROFDIFF_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.delenv("PROFDIFF_PERF_TEXT", raising=False)


def _text(path: Path, monkeypatch: pytest.MonkeyPatch, **kw):
    with monkeypatch.context() as m:
        m.setenv("PROFDIFF_PERF_TEXT", "1")
        return perf_data.read(path, **kw)


def _same(a, b) -> None:
    """Equal profiles, array for array (only the note of which reader ran differs)."""
    for name in ("parent", "frame"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.frames.name.tolist() == b.frames.name.tolist()
    assert a.frames.module.tolist() == b.frames.module.tolist()
    assert a.frames.kind.tolist() == b.frames.kind.tolist()
    assert a.values.keys() == b.values.keys()
    for m in a.values:
        assert np.array_equal(a.values[m], b.values[m]), m
    drop = ("perf_reader",)
    assert {k: v for k, v in a.meta.items() if k not in drop} == \
        {k: v for k, v in b.meta.items() if k not in drop}
    assert a.warnings == b.warnings and a.totals == b.totals
    assert a.incomplete == b.incomplete


def _inlines(perf: str, tmp_path: Path) -> bool:
    work = tmp_path / "probe"
    work.mkdir(exist_ok=True)
    return perf_inlines.expands_inlines(perf, lambda rec, home: perf_data.recording_env(
        perf, rec, home, []), work)


@pytest.mark.parametrize("kw", [{}, {"split_by": "pid"},
                                {"split_by": "comm", "group_by": "symbol"}])
@pytest.mark.parametrize("path", CVM, ids=["v1", "v2"])
def test_tables_equal_text_on_real_recordings(perf: str, path: Path, kw: dict,
                                              monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """The c-vm pair (a binary with DWARF, kernel and libc frames): with a perf that
    never prints inlined frames the tables give the text's profile exactly; with one
    that does, the text is read."""
    fast = perf_data.read(path, **kw)
    text = _text(path, monkeypatch, **kw)
    assert text.meta["perf_reader"].startswith("perf script text (PROFDIFF_PERF_TEXT")
    if _inlines(perf, tmp_path):
        assert "inlined frames" in fast.meta["perf_reader"]
    else:
        assert fast.meta["perf_reader"] == TABLES
    _same(fast, text)
    assert fast.totals["total_samples"] == {"v1": 3130, "v2": 4768}[path.parent.name]


@pytest.mark.parametrize("split_by", [None, "pid", "comm"])
def test_processes_sharing_stacks_give_the_texts_node_order(perf: str, split_by,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    """Two runs of one program from a shell (tests/data/perf/fork-exec): the tables
    number each distinct stack once, the text numbers long stacks anew per sample; the
    tree still lists each parent's children in the order of their first sample, so both
    give the same arrays (before, siblings under the second process came out swapped)."""
    path = DATA / "fork-exec" / "perf.data"
    fast = perf_data.read(path, split_by=split_by)
    if not _inlines(perf, tmp_path):
        assert fast.meta["perf_reader"] == TABLES
    _same(fast, _text(path, monkeypatch, split_by=split_by))
    if split_by == "pid":
        roots = [fast.frames.name[f] for f in fast.frame[fast.parent < 0]]
        assert sum(r.startswith("spin [") for r in roots) == 2


@pytest.mark.parametrize("split_by", [None, "pid"])
def test_sliced_tables_equal_one_run(perf: str, split_by, monkeypatch: pytest.MonkeyPatch,
                                     tmp_path: Path) -> None:
    """Three filters over disjoint time slices (each cuts its own slice: perf calls the
    filter before it applies --time) give one run's profile, not three times it."""
    require(not _inlines(perf, tmp_path), "this perf prints inlined frames: c-vm is read as text")
    path = CVM[1]
    whole = perf_data.read(path, split_by=split_by)
    monkeypatch.setattr(perf_data, "SLICE_MIN_BYTES", 0)
    monkeypatch.setattr(perf_data, "slice_count", lambda cores=None: 3)
    seen = []
    real = agg.start_parts
    monkeypatch.setattr(agg, "start_parts", lambda *a: seen.append(a[6]) or real(*a))
    sliced = perf_data.read(path, split_by=split_by)
    assert len(seen[0]) == 3 and sliced.meta["perf_reader"] == TABLES
    assert sliced.totals["total_samples"] == 4768
    _same(sliced, whole)


def test_time_bounds() -> None:
    assert agg.time_bounds(",1824.219104668") == (0, 1_824_219_104_668)
    assert agg.time_bounds("1824.219104669,1825.8") == (1_824_219_104_669, 1_825_800_000_000)
    assert agg.time_bounds("7.5,") == (7_500_000_000, (1 << 64) - 1)


def test_sample_layout_of_real_recordings() -> None:
    assert agg.sample_layout(CVM[0]) == agg.Layout(callchain=True, period=True, time=True)
    # DWARF-unwound (perf builds the user stacks itself): the text
    assert agg.sample_layout(DATA / "perf-data" / "hotspot-true.v2.perf.data") is None


def test_dwarf_unwound_recording_is_read_as_text(perf: str, monkeypatch) -> None:
    path = DATA / "perf-data" / "hotspot-true.v2.perf.data"
    prof = perf_data.read(path)
    assert prof.meta["perf_reader"].startswith("perf script text (samples perf unwinds")
    _same(prof, _text(path, monkeypatch))


def test_without_a_compiler_the_text_is_read(perf: str, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("PROFDIFF_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(agg, "_compiler", lambda: None)
    prof = perf_data.read(CVM[0])
    assert prof.meta["perf_reader"] == "perf script text (no C compiler for the perf filter)"
    _same(prof, _text(CVM[0], monkeypatch))


def test_a_filter_perf_cannot_load_gives_the_text(perf: str, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"not a shared object")
    monkeypatch.setattr(agg, "compiled_filter", lambda work: bad)
    prof = perf_data.read(CVM[1])
    assert prof.meta["perf_reader"] == "perf script text (the perf filter did not finish cleanly)"
    _same(prof, _text(CVM[1], monkeypatch))


def test_filter_source_builds_without_warnings(tmp_path: Path) -> None:
    cc = require_tool("gcc", "apt-get install gcc")
    done = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o",
                           str(tmp_path / "f.so"), str(agg.SOURCE)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def _fake_perf(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return str(p)


def test_inline_probe_reads_what_perf_prints(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer comes from perf's own output on the bundled recording, is cached per
    perf binary, and any doubt (perf failing, the function unresolved) answers yes."""
    monkeypatch.setenv("PROFDIFF_CACHE_DIR", str(tmp_path / "cache"))

    def env(rec: Path, home: Path) -> dict[str, str]:
        return {"PATH": os.defpath, "HOME": str(home)}

    def ask(perf: str, n: int) -> bool:
        work = tmp_path / f"w{n}"
        work.mkdir()
        return perf_inlines.expands_inlines(perf, env, work)

    plain = _fake_perf(tmp_path, "perf-plain", 'echo "  11d0 work (/x/inline_probe)"')
    inl = _fake_perf(tmp_path, "perf-inl",
                     'echo "  11d0 step (inlined)"; echo "  11d0 work (/x/inline_probe)"')
    failing = _fake_perf(tmp_path, "perf-fails", "exit 3")
    blind = _fake_perf(tmp_path, "perf-blind", 'echo "  11d0 [unknown] ([unknown])"')
    assert ask(plain, 1) is False
    assert ask(inl, 2) is True
    assert ask(failing, 3) is True
    assert ask(blind, 4) is True
    assert ask(plain, 5) is False  # cached: not asked again
    Path(plain).write_text("#!/bin/sh\nexit 1\n")  # another perf binary is asked again
    os.utime(plain, ns=(1, 1))
    assert ask(plain, 6) is True


def test_inline_probe_recording_is_bundled() -> None:
    """The probe's recording and its binary (built with -g, hot function inlined)."""
    probe = perf_inlines.PROBE
    assert (probe / "probe.perf.data").read_bytes()[:8] == b"PERFILE2"
    facts = perf_inlines.elf_facts(probe / "inline_probe")
    assert facts is not None and facts[0] and facts[1]


def test_debug_info_reason(tmp_path: Path) -> None:
    cc = require_tool("gcc", "apt-get install gcc")
    src = tmp_path / "spin.c"
    src.write_text(SPIN)
    with_g, plain = tmp_path / "with-g", tmp_path / "plain"
    subprocess.run([cc, "-O1", "-g", "-o", str(with_g), str(src)], check=True)
    subprocess.run([cc, "-O1", "-Wl,--build-id", "-o", str(plain), str(src)], check=True)
    cache = tmp_path / "cache"
    assert "with-g has debug information" in perf_inlines.debug_info_reason([str(with_g)], cache)
    facts = perf_inlines.elf_facts(plain)
    assert facts is not None and not facts[0] and len(facts[1]) == 40
    # a separate debug file in perf's build-id cache counts, by the binary's build-id
    bid = facts[1]
    assert perf_inlines.debug_info_reason([str(plain), "[vdso]", "//anon"], cache) == ""
    entry = cache / ".build-id" / bid[:2] / bid[2:]
    entry.mkdir(parents=True)
    (entry / "debug").write_bytes(b"")
    assert "separate debug file for plain" in perf_inlines.debug_info_reason([str(plain)], cache)
    not_elf = tmp_path / "script.sh"
    not_elf.write_text("#!/bin/sh\n")
    assert "has debug information" in perf_inlines.debug_info_reason([str(not_elf)], cache)


def _record(perf: str, tmp_path: Path, name: str, args: list[str], cmd: list[str]) -> Path:
    data = tmp_path / f"{name}.perf.data"
    env = dict(os.environ, HOME=str(tmp_path))
    r = subprocess.run([perf, "record", "-N", "-o", str(data), *args, "--", *cmd],
                       capture_output=True, text=True, env=env, timeout=120)
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    level = paranoid.read_text().strip() if paranoid.exists() else "?"
    require(data.exists() and r.returncode == 0,
            f"perf record not permitted here (perf_event_paranoid={level}): "
            f"{r.stderr.strip()[:200]}")
    return data


@pytest.fixture(scope="module")
def spin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program without debug information (stripped), so its recordings take the
    tables on any perf."""
    cc = require_tool("gcc", "apt-get install gcc")
    build = tmp_path_factory.mktemp("spin")
    (build / "spin.c").write_text(SPIN)
    exe = build / "spin"
    subprocess.run([cc, "-O1", "-fno-omit-frame-pointer", "-o", str(exe), str(build / "spin.c")],
                   check=True)
    subprocess.run([require_tool("strip"), "--strip-debug", str(exe)], check=True)
    return exe


@pytest.mark.parametrize(("name", "args", "kw"), [
    ("fork-exec", ["-e", "cpu-clock", "-g", "-F", "999"], {"split_by": "pid"}),
    ("no-callchain", ["-e", "cpu-clock", "-F", "999"], {}),
    ("fixed-period", ["-e", "cpu-clock", "-g", "-c", "200000"], {"split_by": "comm"}),
    ("two-events", ["-e", "cpu-clock,task-clock", "-g", "-F", "499"], {"event": "task-clock"}),
])
def test_tables_equal_text_on_recordings_made_here(perf: str, spin: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, name: str,
                                                   args: list[str], kw: dict) -> None:
    """Recordings of the shapes that change what perf prints: several processes and an
    exec (comm and pid change), no call chains (the ip on the header line), a fixed
    period (the samples carry none), two events."""
    sh = shutil.which("sh") or "/bin/sh"
    cmd = [sh, "-c", f"{spin} 15; {spin} 15"] if name == "fork-exec" else [str(spin), "25"]
    data = _record(perf, tmp_path, name, args, cmd)
    fast = perf_data.read(data, **kw)
    if _inlines(perf, tmp_path):  # libc or the kernel may have debug information
        assert fast.meta["perf_reader"] == TABLES or "inlined" in fast.meta["perf_reader"]
    else:
        assert fast.meta["perf_reader"] == TABLES
    _same(fast, _text(data, monkeypatch, **kw))
    if name == "fork-exec":
        assert int((fast.parent < 0).sum()) >= 2  # a root per process: two spin runs
    if name == "fixed-period":  # no period in the samples: perf gives the fixed one
        assert fast.totals["total_period"] == 200000 * fast.totals["total_samples"]


def _tables(perf: str, path: Path, tmp_path: Path) -> Path:
    env = perf_data.recording_env(perf, path, tmp_path, [])
    so = agg.compiled_filter(tmp_path)
    require(so is not None, "no C compiler")
    layout = agg.sample_layout(path)
    assert layout is not None and so is not None
    prefixes, _header, _err = agg.finish_parts(
        agg.start_parts(perf, path, env, 60, so, layout, [""]))
    return prefixes[0]


def test_cut_tables_are_refused(perf: str, tmp_path: Path) -> None:
    prefix = _tables(perf, CVM[0], tmp_path)
    part = agg.read_part(prefix)
    assert len(part.samples) == 3130 and "[kernel.kallsyms]" in part.dsos
    stacks = Path(f"{prefix}.stacks")
    raw = stacks.read_bytes()
    stacks.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(agg.NotComplete):
        agg.read_part(prefix)
    stacks.write_bytes(raw)
    frames = Path(f"{prefix}.frames")
    frames.write_bytes(frames.read_bytes()[:-3])
    with pytest.raises(agg.NotComplete):
        agg.read_part(prefix)


@pytest.fixture(scope="module")
def table_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    perf = require_tool("perf", "apt-get install linux-perf")
    work = tmp_path_factory.mktemp("tables")
    prefix = _tables(perf, CVM[1], work)
    return {ext: Path(f"{prefix}{ext}").read_bytes()
            for ext in (".samples", ".stacks", ".frames", ".shapes")}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ext=st.sampled_from([".samples", ".stacks", ".frames", ".shapes"]),
       pos=st.floats(0, 1), cut=st.booleans(), byte=st.integers(0, 255))
def test_mutated_tables_are_refused_or_read(table_files: dict[str, bytes], tmp_path: Path,
                                            ext: str, pos: float, cut: bool,
                                            byte: int) -> None:
    """A table cut or with one byte changed is refused (the text is then read) or read
    into a profile; nothing else escapes."""
    prefix = tmp_path / "m"
    for e, raw in table_files.items():
        if e == ext and raw:
            i = min(int(pos * len(raw)), len(raw) - 1)
            raw = raw[:i] if cut else raw[:i] + bytes([byte]) + raw[i + 1:]
        Path(f"{prefix}{e}").write_bytes(raw)
    try:
        part = agg.read_part(prefix)
        read_parts([part], CVM[1], "", has_period=True, has_time=True, format="perf-data")
    except (agg.NotComplete, ValueError, ParseError):
        pass
