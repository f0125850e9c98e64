"""perf script text reader on every real file of the corpus plus the generated c-vm pairs."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from tool_requirements import require

import parsers
from parsers import perf_script
from parsers.errors import ParseError
from parsers.model import Kind

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"
SCRIPTS = sorted((DATA / "script").iterdir())

# Samples per event, checked against the files: the number of sample header lines
# (e.g. `grep -c '^[^[:space:]#]'`; per event `grep -c ' cycles: $'`).
EXPECTED = {
    "firefox-profiler-graphviz.perf.gz": {"cycles": 312},
    "firefox-profiler-gzip.perf.gz": {"cycles": 420},
    "firefox-profiler-simple-perf.txt.gz": {"task-clock:u": 163},
    "firefox-profiler-test.perf.gz": {"cycles:uppp": 72, "cycles:ppp": 1},
    "flamegraph-example-perf-stacks.txt.gz": {"cycles": 1315},
    "flamegraph-perf-cycles-instructions-01.txt": {"instructions": 333, "cycles": 111},
    "flamegraph-perf-dd-stacks-01.txt": {"cpu-clock": 11},
    "flamegraph-perf-funcab-cmd-01.txt": {"cpu-clock": 169},
    "flamegraph-perf-funcab-pid-01.txt": {"cpu-clock": 228},
    "flamegraph-perf-iperf-stacks-pidtid-01.txt.gz": {"cpu-clock": 201},
    "flamegraph-perf-java-faults-01.txt": {"page-faults": 23},
    "flamegraph-perf-java-stacks-01.txt.gz": {"cycles": 46},
    "flamegraph-perf-java-stacks-02.txt": {"cycles": 2},
    "flamegraph-perf-js-stacks-01.txt": {"cpu-clock": 2},
    "flamegraph-perf-mirageos-stacks-01.txt": {"cpu-clock": 53},
    "flamegraph-perf-numa-stacks-01.txt.gz": {"cpu-clock": 200},
    "flamegraph-perf-rust-Yamakaky-dcpu.txt.gz": {"cycles:u": 58},
    "flamegraph-perf-vertx-stacks-01.txt.gz": {"cpu-clock": 286},
    "inferno-cpp-stacks-std-function.perf.txt": {"cycles:uppp": 46},
    "inferno-go-stacks.perf.txt": {"cpu-clock:uhH": 5},
    "inferno-java-inline.perf.txt": {"cpu-clock": 22},
    "inferno-sourcepawn-jitdump.perf.txt": {"cycles": 1},
    "speedscope-forks.linux-perf.txt.gz": {"cpu-clock": 561},
    "speedscope-rust-mangled.linux-perf.txt": {"task-clock:ppp": 96},
    "speedscope-simple-with-header.linux-perf.txt": {"cpu-clock": 136},
    "speedscope-simple-with-pid.linux-perf.txt": {"cpu-clock": 137},
    "speedscope-simple.linux-perf.txt": {"cpu-clock": 1},
    "speedscope-system-wide.linux-perf.txt.gz": {"cpu-clock": 556},
}


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", "replace")


def _flat(prof, col: str) -> dict[str, float]:
    keys, codes = prof.frame_key_codes
    agg = np.bincount(codes, weights=prof.values[col], minlength=len(keys))
    return {k.split("\x1f")[1]: float(v) for k, v in zip(keys, agg, strict=True)}


def test_every_corpus_file_is_listed() -> None:
    assert sorted(p.name for p in SCRIPTS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_corpus_file(path: Path) -> None:
    prof = parsers.load(path)
    assert prof.format == "perf-script"
    text = _text(path)
    event, n = next(iter(EXPECTED[path.name].items()))
    # issue 18: with callchains, a sample is whole only with its blank line; corpus files
    # saved without the final one lose their last sample and say so
    cut = bool(text.rstrip("\n").rsplit("\n\n", 1)[-1].strip()) \
        and not text.endswith("\n\n")
    events = dict(EXPECTED[path.name])
    if cut and "\n\n" not in text.rstrip("\n"):  # the only sample: kept, marked as cut
        assert prof.incomplete and "only sample may be cut" in prof.incomplete_reason
    elif cut:
        last_event = text.rstrip("\n").rsplit("\n\n", 1)[-1].split("\n")[0].split()[-1][:-1]
        events[last_event] -= 1
        events = {k: v for k, v in events.items() if v}
        n = events[event]
        assert prof.incomplete and "blank line is missing" in prof.incomplete_reason
    else:
        assert "cannot tell" in prof.meta["completeness"]
    assert prof.meta["events"] == events
    assert prof.meta["event"] == event
    assert prof.totals["total_samples"] == n
    # independent count: header lines start in column 0 (java-stacks-02 has frames there too)
    if path.name != "flamegraph-perf-java-stacks-02.txt":
        headers = sum(1 for ln in text.split("\n") if ln[:1] not in ("", "#", " ", "\t"))
        assert headers == sum(EXPECTED[path.name].values())
    roots = prof.roots
    assert prof.values["total_samples"][roots].sum() == n
    assert prof.values["self_samples"].sum() == n
    assert prof.values["self_pct"].sum() == pytest.approx(100.0)
    assert prof.incomplete == cut
    unresolved = (prof.frames.kind[prof.frame] == "kernel") & (prof.name == "[unknown]")
    if unresolved.any():  # printed where the kernel's symbols were missing: one reported group
        assert not (unresolved & (prof.parent >= 0) & unresolved[prof.parent]).any()
        assert prof.meta["kernel_unresolved"]["samples"] > 0
        assert len(prof.warnings) == 1 and "kernel frames" in prof.warnings[0]
    else:
        assert prof.warnings == ()
    assert prof.metric("self_samples").kind is Kind.SELF and prof.metric("self_samples").sampled
    assert prof.metric("total_samples").self_of == "self_samples"
    # frame names never keep the +0x offset
    assert not any(re.search(r"\+0x[0-9a-f]+$", n) for n in prof.frames.name.tolist())


def _cvm(v: str, **kw):
    return perf_script.read(DATA / "c-vm" / v / "perf.script.txt.gz", **kw)


def _report_rows(v: str) -> dict[str, float]:
    """`perf report --stdio --no-children` self overhead per symbol."""
    rows = {}
    for ln in (DATA / "c-vm" / v / "perf.report.txt").read_text().splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\S+\s+\S+\s+\[[.k]\] (\S+)", ln)
        if m:
            rows[m.group(2)] = float(m.group(1))
    return rows


@pytest.mark.parametrize(("v", "n", "share"), [("v1", 3130, 95.27), ("v2", 4768, 96.75)])
def test_cvm_matches_perf_report(v: str, n: int, share: float) -> None:
    prof = _cvm(v)
    assert prof.totals["total_samples"] == n
    assert prof.meta["weighting"] == "period"
    # perf report: "Event count (approx.)" is the period sum
    report = (DATA / "c-vm" / v / "perf.report.txt").read_text()
    count = int(re.search(r"Event count \(approx\.\): (\d+)", report).group(1))
    assert prof.totals["total_period"] == count
    pct = _flat(prof, "self_pct")
    assert round(pct["vm_run.constprop.0"], 2) == share
    by_period = _flat(prof, "self_period")
    rows = _report_rows(v)
    assert len(rows) >= 10
    for sym, overhead in rows.items():
        assert round(by_period[sym] * 100 / count, 2) == overhead, sym
        assert round(pct[sym], 2) == overhead, sym


def test_cvm_frames_and_tree() -> None:
    prof = _cvm("v1")
    f = prof.frames
    i = f.name.tolist().index("vm_run.constprop.0")
    assert f.module[i] == "vm" and f.kind[i] == ""
    k = f.name.tolist().index("finish_task_switch.isra.0")
    assert f.module[k] == "[kernel.kallsyms]" and f.kind[k] == "kernel"
    assert "libc.so.6" in f.module.tolist()
    # root-first tree: __libc_start_call_main > main > run_benchmark... > vm_run...
    paths = {tuple(prof.path_labels(int(n))) for n in range(prof.n_nodes)}
    assert (
        "libc.so.6.__libc_start_call_main", "vm.main", "vm.run_benchmark.constprop.0.isra.0",
        "vm.vm_run.constprop.0",
    ) in paths
    root = prof.roots
    assert prof.name[root].tolist() == ["__libc_start_call_main"] or (
        "__libc_start_call_main" in prof.name[root].tolist()
    )
    assert prof.meta["comms"] == {"vm": 3130}
    assert prof.default_metric == "self_period"
    assert prof.meta["duration_s"] == pytest.approx(1820.979293 - 1817.838800, abs=1e-5)


def test_unresolved_kernel_frames_are_one_reported_group(tmp_path: Path) -> None:
    """The c-vm text as perf prints it on a host without the recording kernel's symbols
    (every kernel frame ``[unknown]``): each kernel chain is one node, and a warning says
    how many samples that group holds; user-space frames stay exact."""
    text = _text(DATA / "c-vm" / "v1" / "perf.script.txt.gz")
    cut = tmp_path / "nokallsyms.txt"
    cut.write_text(re.sub(r"^(\s+[0-9a-f]+) \S+ \(\[kernel\.kallsyms\]\)$",
                          r"\1 [unknown] ([kernel.kallsyms])", text, flags=re.M))
    whole = _cvm("v1")
    prof = perf_script.read(cut)
    blocks_with_kernel = sum(1 for b in text.split("\n\n") if "[kernel.kallsyms]" in b)
    assert blocks_with_kernel > 0
    info = prof.meta["kernel_unresolved"]
    assert info["samples"] == blocks_with_kernel
    assert info["frames_merged"] > 0
    assert any("kernel frames" in w for w in prof.warnings)
    unknown = (prof.module == "[kernel.kallsyms]") & (prof.name == "[unknown]")
    assert unknown.any() and not (unknown & (prof.parent >= 0) & unknown[prof.parent]).any()
    assert prof.totals == whole.totals
    assert prof.values["total_samples"][prof.roots].sum() == whole.totals["total_samples"]
    for col in ("self_pct", "self_period"):
        a, b = _flat(prof, col), _flat(whole, col)
        for name, v in b.items():
            if not name.startswith("[") and name in a and name in _names(whole, "vm"):
                assert a[name] == pytest.approx(v), name
    kernel_share = sum(v for k, v in _flat(whole, "self_samples").items()
                       if k in _names(whole, "[kernel.kallsyms]"))
    assert _flat(prof, "self_samples")["[unknown]"] == kernel_share


def _names(prof, module: str) -> set[str]:
    return set(prof.name[prof.module == module].tolist())


def test_no_callchain_one_line_per_sample() -> None:
    """`perf script -G` output of the same recording: ip on the header line, no blank lines."""
    prof = perf_script.read(DATA / "c-vm" / "v1" / "perf.script-nocallchain.txt.gz")
    assert prof.totals["total_samples"] == 3130
    assert prof.parent.max() == -1  # one level
    pct = _flat(prof, "self_pct")
    for sym, overhead in _report_rows("v1").items():
        assert round(pct[sym], 2) == overhead


def test_event_option_and_multi_event() -> None:
    path = DATA / "script" / "flamegraph-perf-cycles-instructions-01.txt"
    prof = perf_script.read(path, event="cycles")
    assert prof.meta["event"] == "cycles" and prof.totals["total_samples"] == 111
    assert prof.meta["weighting"] == "samples"
    assert "self_period" not in prof.values
    assert prof.meta["command_line"].startswith("/usr/bin/perf record -e cycles")
    assert prof.meta["perf_version"] == "4.13.0-rc1"
    with pytest.raises(ParseError, match="page-faults"):
        perf_script.read(path, event="page-faults")


def test_group_by_symbol_drops_module() -> None:
    prof = _cvm("v1", group_by="symbol")
    assert set(prof.frames.module.tolist()) == {""}
    assert prof.meta["group_by"] == "symbol"
    assert round(_flat(prof, "self_pct")["vm_run.constprop.0"], 2) == 95.27


def test_split_by_comm_and_pid() -> None:
    path = DATA / "script" / "speedscope-system-wide.linux-perf.txt.gz"
    prof = perf_script.read(path, split_by="comm")
    roots = prof.roots
    assert set(prof.frames.kind[prof.frame[roots]].tolist()) == {"comm"}
    names = prof.name[roots].tolist()
    assert {"swapper", "simple-terminat"} <= set(names)
    assert prof.values["total_samples"][roots].sum() == 556
    by_comm = dict(zip(names, prof.values["total_samples"][roots].tolist(), strict=True))
    assert by_comm == prof.meta["comms"]
    prof = perf_script.read(DATA / "script" / "flamegraph-perf-iperf-stacks-pidtid-01.txt.gz",
                            split_by="pid")
    roots = prof.roots
    assert set(prof.frames.kind[prof.frame[roots]].tolist()) == {"pid"}
    assert all(n.startswith("iperf [27409]") or "[" in n for n in prof.name[roots].tolist())


def test_rust_legacy_hash_is_not_part_of_the_match_key() -> None:
    prof = perf_script.read(DATA / "script" / "flamegraph-perf-rust-Yamakaky-dcpu.txt.gz")
    names = prof.frames.name.tolist()
    hashed = [i for i, n in enumerate(names) if re.search(r"::h[0-9a-f]{16}$", n)]
    assert hashed
    assert prof.frames.match is not None
    for i in hashed:
        assert prof.frames.match[i] == names[i][: -len("::h0123456789abcdef")]
        assert prof.frames.key[i] == f"{prof.frames.module[i]}\x1f{prof.frames.match[i]}"


def test_demangle_option() -> None:
    path = DATA / "script" / "speedscope-forks.linux-perf.txt.gz"
    plain = perf_script.read(path)
    assert "_Z5gammav" in plain.frames.name.tolist()
    prof = perf_script.read(path, demangle=True)
    names = prof.frames.name.tolist()
    require(not (prof.warnings and "cxxfilt" in prof.warnings[-1]),
            "cxxfilt not installed (pip install cxxfilt): " + (prof.warnings or ("",))[-1])
    assert "gamma()" in names and "_Z5gammav" not in names


def test_redetect_under_unknown_name(tmp_path: Path) -> None:
    dst = tmp_path / "x.unknown"
    shutil.copy(DATA / "script" / "flamegraph-perf-java-stacks-02.txt", dst)
    prof = parsers.load(dst)
    assert prof.format == "perf-script" and prof.totals["total_samples"] == 2


def test_truncated_text_loads_complete_samples(tmp_path: Path) -> None:
    text = gzip.decompress((DATA / "c-vm" / "v1" / "perf.script.txt.gz").read_bytes()).decode()
    cut = text.index("\n\n", 200_000) + 60  # inside the next sample's header/callchain
    dst = tmp_path / "cut.txt"
    dst.write_text(text[:cut])
    complete = text[:cut].count("\n\n")
    prof = perf_script.read(dst)
    assert prof.incomplete and "middle of a line" in prof.incomplete_reason
    assert prof.totals["total_samples"] == complete


def test_truncated_gzip(tmp_path: Path) -> None:
    raw = (DATA / "c-vm" / "v2" / "perf.script.txt.gz").read_bytes()
    dst = tmp_path / "cut.txt.gz"
    dst.write_bytes(raw[: len(raw) // 2])
    prof = perf_script.read(dst)
    assert prof.incomplete
    assert 0 < prof.totals["total_samples"] < 4768


def test_garbage_line_strict_and_lenient(tmp_path: Path) -> None:
    text = (DATA / "script" / "flamegraph-perf-funcab-cmd-01.txt").read_text()
    lines = text.split("\n")
    lines.insert(40, "%%% this is not perf output %%%")
    dst = tmp_path / "bad.txt"
    dst.write_text("\n".join(lines))
    with pytest.raises(ParseError) as e:
        perf_script.read(dst)
    assert e.value.line == 41 and "bad.txt:41" in str(e.value)
    prof = perf_script.read(dst, lenient=True)
    assert any("line 41" in w for w in prof.warnings)
    assert prof.totals["total_samples"] == 169


def test_bad_inputs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.perf.txt"
    empty.write_text("")
    with pytest.raises(ParseError, match="empty.perf.txt"):
        perf_script.read(empty)
    comments = tmp_path / "only-header.txt"
    comments.write_text("# ========\n# captured on: x\n# ========\n#\n")
    with pytest.raises(ParseError, match="no samples"):
        perf_script.read(comments)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(ParseError, match="garbage.bin"):
        parsers.load(garbage)
    with pytest.raises(ParseError, match="garbage.bin:1"):
        perf_script.read(garbage)
    wrong = tmp_path / "folded.txt"
    wrong.write_text("main;foo;bar 12\nmain;foo 3\n")
    with pytest.raises(ParseError) as e:
        perf_script.read(wrong)
    assert e.value.line == 1 and "sample header" in str(e.value)
    assert perf_script.sniff(wrong.read_bytes(), wrong) == 0.0
