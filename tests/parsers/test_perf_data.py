"""perf.data reader: real recordings through the installed perf, and one made here."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tool_requirements import require, require_tool

from profdiff import parsers
from profdiff.parsers import perf_data, perf_header, perf_script
from profdiff.parsers.errors import ExternalToolError, ParseError

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"
pytestmark = pytest.mark.perf


def _perf() -> str:
    """The perf binary (skips locally, fails under CI when it is missing)."""
    return require_tool("perf", "apt-get install linux-perf")


@pytest.fixture
def needs_perf_fixture() -> str:
    return _perf()


needs_perf = pytest.mark.usefixtures("needs_perf_fixture")


def _flat_pct(prof, module: str | None = None) -> dict[str, float]:
    keys, codes = prof.frame_key_codes
    agg = np.bincount(codes, weights=prof.values["self_pct"], minlength=len(keys))
    out = {}
    for k, v in zip(keys, agg, strict=True):
        mod, name = k.split("\x1f")[:2]
        if module is None or mod == module:
            out[name] = round(float(v), 2)
    return out


def _user_paths(prof, module: str) -> dict[tuple[str, ...], int]:
    """total_samples of every node whose path holds only frames of ``module``."""
    out = {}
    for n in range(prof.n_nodes):
        labels = prof.path_labels(n)
        node, mods = n, []
        while node >= 0:
            mods.append(prof.module[node])
            node = int(prof.parent[node])
        if all(m == module for m in mods):
            out[tuple(labels)] = int(prof.values["total_samples"][n])
    return out


def test_sniff() -> None:
    for name in ("hotspot-true.v1.perf.data", "hotspot-true.v2.perf.data"):
        head = (DATA / "perf-data" / name).read_bytes()[:64]
        assert perf_data.sniff(head, Path(name)) == 1.0
    assert perf_data.sniff(b"PERFFILE" + bytes(100), Path("x")) == 1.0
    assert perf_data.sniff(b"vm 123 1.0: cycles:\n", Path("x")) == 0.0


@needs_perf
@pytest.mark.parametrize(("v", "n", "share"), [("v1", 3130, 95.27), ("v2", 4768, 96.75)])
def test_cvm_perf_data_matches_text_and_report(v: str, n: int, share: float,
                                               _empty_home: Path) -> None:
    """perf.data and the text perf printed where it was recorded agree on what is the same
    on every host: the frames of the binary beside the recording.  Kernel frames come out
    resolved or as one reported unresolved group, never as a silent difference."""
    prof = parsers.load(DATA / "c-vm" / v / "perf.data")
    assert not (_empty_home / ".debug").exists()  # the user's build-id cache was not written
    assert prof.format == "perf-data"
    assert prof.totals["total_samples"] == n
    assert prof.meta["event"] == "cpu-clock:ppp"
    assert prof.meta["command_line"].startswith("/usr/bin/perf record -N -g -F 999")
    pct = _flat_pct(prof, "vm")
    assert pct["vm_run.constprop.0"] == share
    # symbols of the binary beside the recording were resolved
    assert "[unknown]" not in prof.name[prof.module == "vm"].tolist()
    assert "missing_binaries" not in prof.meta
    text = perf_script.read(DATA / "c-vm" / v / "perf.script.txt.gz")
    assert _flat_pct(text, "vm") == pct
    assert _user_paths(text, "vm") == _user_paths(prof, "vm")
    kernel_unknown = (prof.module == "[kernel.kallsyms]") & (prof.name == "[unknown]")
    if kernel_unknown.any():  # this host lacks the recording kernel's symbols
        info = prof.meta["kernel_unresolved"]
        assert any("kernel frames" in w for w in prof.warnings)
        # said once: perf's own "No kallsyms or vmlinux with build-id ..." is folded into
        # that warning, which names the recording kernel's build-id from the header
        kernel = [w for w in prof.warnings if "kallsyms or vmlinux" in w]
        assert len(kernel) == 1 and kernel[0].startswith("kernel symbols were not resolved")
        recorded = {b.name: b.build_id for b in perf_header.recorded_build_ids(
            DATA / "c-vm" / v / "perf.data")}
        if "build-id" in kernel[0]:
            assert f"(build-id {recorded['[kernel.kallsyms]']}) here." in kernel[0]
        # one unresolved node per chain: never an [unknown] directly under an [unknown]
        assert not (kernel_unknown & (prof.parent >= 0) & kernel_unknown[prof.parent]).any()
        with_kernel = _samples_through_kernel(DATA / "c-vm" / v / "perf.script.txt.gz")
        assert info["samples"] == with_kernel
    else:
        assert "kernel_unresolved" not in prof.meta


def _samples_through_kernel(script_gz: Path) -> int:
    """Samples of the stored text whose chain holds a kernel frame (counted from the text)."""
    blocks = gzip.decompress(script_gz.read_bytes()).decode().split("\n\n")
    return sum(1 for b in blocks if "[kernel.kallsyms]" in b)


C_PROG = r"""
__attribute__((noinline)) long leaf_work(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
__attribute__((noinline)) long middle(long n) { return leaf_work(n) + 1; }
int main(void) { long t = 0; for (int k = 0; k < 100; k++) t += middle(2000000); return (int)(t & 1); }
"""


def _record_spin(tmp_path: Path, cache: bool = False) -> tuple[Path, Path]:
    """Build ``spin`` in ``tmp_path/build`` and record it; (binary, perf.data).
    ``cache``: perf record fills the build-id cache in ``tmp_path/.debug``."""
    perf = _perf()
    gcc = require_tool("gcc", "apt-get install gcc")
    build = tmp_path / "build"
    build.mkdir()
    (build / "spin.c").write_text(C_PROG)
    subprocess.run([gcc, "-O1", "-fno-omit-frame-pointer", "-o", str(build / "spin"),
                    str(build / "spin.c")], check=True)
    data = build / "perf.data"
    env = dict(os.environ, HOME=str(tmp_path))  # keep perf record's build-id copy out of ~
    r = subprocess.run([perf, "record", *([] if cache else ["-N"]), "-e", "cpu-clock", "-g",
                        "-F", "999", "-o", str(data), str(build / "spin")],
                       capture_output=True, text=True, env=env, timeout=120)
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    level = paranoid.read_text().strip() if paranoid.exists() else "?"
    require(data.exists() and "Permission" not in r.stderr,
            f"perf record not permitted here (perf_event_paranoid={level}): "
            f"{r.stderr.strip()[:200]}")
    return build / "spin", data


def test_binaries_gone_gives_unknown_frames_and_a_warning(tmp_path: Path) -> None:
    """A recording whose binary was deleted: its frames are [unknown] and a warning names it."""
    binary, data = _record_spin(tmp_path)
    kept = tmp_path / "rec" / "perf.data"
    kept.parent.mkdir()
    shutil.move(data, kept)
    binary.unlink()
    prof = perf_data.read(kept)
    assert prof.totals["total_samples"] > 10
    assert "[unknown]" in prof.name[prof.module == "spin"].tolist()
    assert "leaf_work" not in prof.name.tolist()
    assert prof.meta["missing_binaries"] == [str(binary)]
    assert any("not found" in w and "[unknown]" in w for w in prof.warnings)
    assert prof.meta["unresolved_pct"] > 50


def test_binary_gone_resolves_from_the_users_cache(tmp_path: Path, monkeypatch) -> None:
    """perf record cached the binary in the user's ``~/.debug``; deleted from its path, it
    still resolves through the private HOME, which links the recording's build-ids and
    no others."""
    binary, data = _record_spin(tmp_path, cache=True)  # the cache: tmp_path/.debug
    binary.unlink()
    user_ids = tmp_path / ".debug" / ".build-id"
    stray = user_ids / "ff" / ("0" * 38)
    stray.parent.mkdir(exist_ok=True)
    stray.symlink_to(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    prof = perf_data.read(data)
    assert _flat_pct(prof).get("leaf_work", 0) > 50
    assert "missing_binaries" not in prof.meta
    recorded = [b.build_id for b in perf_header.recorded_build_ids(data)]
    linked = perf_data._private_home(tmp_path / "h1", recorded)
    mine = Path(linked["HOME"]) / ".debug" / ".build-id"
    got = sorted(p.parent.name + p.name for p in mine.glob("*/*"))
    assert got == sorted(b for b in set(recorded) if (user_ids / b[:2] / b[2:]).exists())
    assert len(got) >= 2  # the binary and the kernel at least
    everything = Path(perf_data._private_home(tmp_path / "h2")["HOME"]) / ".debug" / ".build-id"
    assert (everything / "ff" / ("0" * 38)).is_symlink() and not (mine / "ff").exists()


@needs_perf
def test_hotspot_samples() -> None:
    prof = perf_data.read(DATA / "perf-data" / "hotspot-true.v2.perf.data")
    assert prof.totals["total_samples"] == 1
    assert prof.totals["total_period"] == 250000
    assert prof.meta["event"] == "cpu-clock"
    with pytest.raises(ParseError, match="no samples") as e:
        perf_data.read(DATA / "perf-data" / "hotspot-true.v1.perf.data")
    assert "hotspot-true.v1.perf.data" in str(e.value)
    with pytest.raises(ParseError, match="unsupported ABI") as e:
        perf_data.read(DATA / "perf-data" / "hotspot-PerfFormatLost.perf.data")
    assert "hotspot-PerfFormatLost.perf.data" in str(e.value)


@needs_perf
def test_corrupt_and_truncated(tmp_path: Path) -> None:
    raw = (DATA / "c-vm" / "v1" / "perf.data").read_bytes()
    short = tmp_path / "short.data"
    short.write_bytes(raw[:50])
    with pytest.raises(ParseError, match=r"short.data \(byte 50\).*header"):
        parsers.load(short)
    garbage = tmp_path / "garbage.data"
    garbage.write_bytes(b"PERFILE2" + bytes(range(256)) * 64)
    with pytest.raises(ParseError, match="garbage.data"):
        parsers.load(garbage)
    cut = tmp_path / "cut.data"
    cut.write_bytes(raw[:200_000])
    try:
        prof = perf_data.read(cut)
    except ParseError as e:
        assert "cut.data" in str(e)
    else:
        assert prof.incomplete and "perf script" in prof.incomplete_reason


def _cut_cvm(tmp_path: Path, size: int) -> Path:
    """The c-vm v1 recording cut after ``size`` bytes (as a copy cut in transfer)."""
    cut = tmp_path / "cut.perf.data"
    cut.write_bytes((DATA / "c-vm" / "v1" / "perf.data").read_bytes()[:size])
    return cut


def _perf_text(path: Path) -> str:
    """What ``perf script`` prints for ``path`` with the fields profdiff asks for."""
    r = subprocess.run([_perf(), "script", "-i", str(path), "-F", ",".join(perf_data.FIELDS)],
                       capture_output=True, text=True, check=False,
                       env={**os.environ, "LC_ALL": "C"})
    assert r.returncode != 0 and "failed to process type: 0" in r.stderr  # perf stopped
    return r.stdout


def _headers(text: str) -> tuple[list[str], list[str]]:
    """(real, zero-filled) sample header lines of perf script text: perf's sample of a
    record cut by the file's end has time 0.000000 and period 0."""
    heads = [ln for ln in text.splitlines() if ln.strip() and not ln[0].isspace()]
    zero = [h for h in heads if h.split()[-3:-1] == ["0.000000:", "0"]]
    return [h for h in heads if h not in zero], zero


@needs_perf
@pytest.mark.parametrize("size", [6000, 140938])
@pytest.mark.parametrize("lenient", [False, True])
def test_cut_recording_with_no_sample_is_an_error(tmp_path: Path, size: int,
                                                  lenient: bool) -> None:
    """perf prints only its zero-filled sample for these cuts: that is not a one-sample
    profile but an error naming the file and the byte where it ends (also --lenient:
    there is nothing to skip to)."""
    cut = _cut_cvm(tmp_path, size)
    real, zero = _headers(_perf_text(cut))
    assert not real and len(zero) == 1
    with pytest.raises(ParseError, match=r"cut or damaged") as e:
        perf_data.read(cut, lenient=lenient)
    assert e.value.offset == size and f"cut.perf.data (byte {size})" in str(e.value)
    assert "failed to process type: 0" in str(e.value)


@needs_perf
def test_cut_recording_cli_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from profdiff.viewer.cli import main

    cut = _cut_cvm(tmp_path, 140938)
    assert main(["show", str(cut)]) == 2
    err = capsys.readouterr().err
    assert f"{cut} (byte 140938)" in err and "cut or damaged" in err


@needs_perf
def test_cut_recording_keeps_its_real_samples_only(tmp_path: Path) -> None:
    """A cut after perf has printed real samples: those load, marked incomplete, and
    perf's zero-filled sample of the cut record is not counted."""
    cut = _cut_cvm(tmp_path, 263000)
    real, zero = _headers(_perf_text(cut))
    assert real and len(zero) == 1
    prof = perf_data.read(cut)
    assert prof.incomplete and "perf script stopped" in prof.incomplete_reason
    assert prof.totals["total_samples"] == len(real)
    assert prof.totals["total_period"] == sum(int(h.split()[-2]) for h in real)
    assert perf_script.NO_STACK not in prof.name.tolist()
    assert any("zero-filled sample" in w for w in prof.warnings)


@needs_perf
def test_cut_recordings_text_drops_the_zero_filled_sample(tmp_path: Path) -> None:
    """The same holds for the text perf printed for a cut recording: alone, the
    zero-filled sample is no sample; after real ones, the text is incomplete."""
    only = tmp_path / "only.perf.txt"
    only.write_text(_perf_text(_cut_cvm(tmp_path, 140938)))
    with pytest.raises(ParseError, match="no samples .only the zero-filled sample"):
        perf_script.read(only)
    some = tmp_path / "some.perf.txt"
    text = _perf_text(_cut_cvm(tmp_path, 263000))
    some.write_text(text)
    real, _zero = _headers(text)
    prof = perf_script.read(some)
    assert prof.totals["total_samples"] == len(real)
    assert prof.incomplete and "zero-filled sample" in prof.incomplete_reason
    assert perf_script.NO_STACK not in prof.name.tolist()


def test_perf_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROFDIFF_PERF", str(tmp_path / "no-such-perf"))
    with pytest.raises(ExternalToolError, match="apt-get install linux-perf"):
        perf_data.read(DATA / "c-vm" / "v1" / "perf.data")


@needs_perf
def test_timeout() -> None:
    with pytest.raises(ExternalToolError, match="did not finish"):
        perf_data.read(DATA / "c-vm" / "v2" / "perf.data", timeout=0.001)


@needs_perf
def test_redetect_under_unknown_name(tmp_path: Path) -> None:
    dst = tmp_path / "x.unknown"
    shutil.copy(DATA / "perf-data" / "hotspot-true.v2.perf.data", dst)
    assert parsers.load(dst).format == "perf-data"


def test_record_and_load(tmp_path: Path) -> None:
    _binary, data = _record_spin(tmp_path)
    prof = parsers.load(data)
    assert prof.format == "perf-data"
    assert prof.totals["total_samples"] > 10
    pct = _flat_pct(prof)
    assert pct.get("leaf_work", 0) > 50
    paths = {tuple(prof.path_labels(int(n))) for n in range(prof.n_nodes)}
    assert any(p[-3:] == ("spin.main", "spin.middle", "spin.leaf_work") for p in paths)


def test_perf_killed_by_a_signal_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A perf that dies (here: SIGBUS, as on a cut mmap) is reported as killed by that
    signal, naming the file - not as '(byte 0) ... perf script exit -7'."""
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\ncase \"$1\" in script) kill -BUS $$;; esac\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PROFDIFF_PERF", str(fake))
    src = tmp_path / "rec.perf.data"
    shutil.copy(DATA / "perf-data" / "hotspot-true.v2.perf.data", src)
    with pytest.raises(ExternalToolError) as e:
        perf_data.read(src)
    msg = str(e.value)
    assert "killed by signal 7 (SIGBUS)" in msg and str(src) in msg
    assert "byte 0" not in msg and "exit -7" not in msg


def _header_sample_times(perf: str, path: Path) -> tuple[str, str]:
    """'time of first/last sample' as ``perf report --header-only`` prints them."""
    r = subprocess.run([perf, "report", "--header-only", "-i", str(path)], capture_output=True,
                       text=True, check=False, env={**os.environ, "LC_ALL": "C"})
    found = dict(ln.lstrip("# ").split(" : ", 1) for ln in r.stdout.splitlines()
                 if ln.startswith("# time of "))
    return found["time of first sample"].strip(), found["time of last sample"].strip()


@needs_perf
@pytest.mark.parametrize("v", ["v1", "v2"])
def test_sample_time_span_is_perfs_header(v: str) -> None:
    """The first/last sample times read from the header bytes are those perf prints
    (perf shows them cut to microseconds)."""
    path = DATA / "c-vm" / v / "perf.data"
    first, last = perf_data.sample_time_span(path)
    us = (f"{first // 10**9}.{first % 10**9 // 1000:06d}",
          f"{last // 10**9}.{last % 10**9 // 1000:06d}")
    assert us == _header_sample_times(_perf(), path)


def test_sample_time_span_absent(tmp_path: Path) -> None:
    """No span (so one perf run) for a v1 file, a one-sample file without the feature, and
    a header cut before its feature table."""
    assert perf_data.sample_time_span(DATA / "perf-data" / "hotspot-true.v1.perf.data") is None
    assert perf_data.sample_time_span(DATA / "perf-data" / "hotspot-true.v2.perf.data") is None
    cut = tmp_path / "cut.perf.data"
    cut.write_bytes((DATA / "c-vm" / "v1" / "perf.data").read_bytes()[:4096])
    assert perf_data.sample_time_span(cut) is None


def _same_profile(a, b) -> None:
    for name in ("parent", "frame"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.frames.name.tolist() == b.frames.name.tolist()
    assert a.frames.module.tolist() == b.frames.module.tolist()
    assert a.values.keys() == b.values.keys()
    for m in a.values:
        assert np.array_equal(a.values[m], b.values[m]), m
    assert a.meta == b.meta and a.warnings == b.warnings and a.totals == b.totals


@needs_perf
@pytest.mark.parametrize("split_by", [None, "pid"])
def test_sliced_read_equals_one_run(monkeypatch: pytest.MonkeyPatch, split_by) -> None:
    """Three perf script runs over disjoint time ranges give the profile of one run."""
    monkeypatch.setenv("PROFDIFF_PERF_TEXT", "1")  # the text's slices (tables: test_perf_dlfilter)
    path = DATA / "c-vm" / "v2" / "perf.data"
    whole = perf_data.read(path, split_by=split_by)
    monkeypatch.setattr(perf_data, "SLICE_MIN_BYTES", 0)
    monkeypatch.setattr(perf_data, "slice_count", lambda cores=None: 3)
    ranges = perf_data._slice_ranges(path)
    assert len(ranges) == 3 and ranges[0].startswith(",") and ranges[-1].endswith(",")
    used = []
    real = perf_data._read_sliced
    monkeypatch.setattr(perf_data, "_read_sliced",
                        lambda *a: used.append(real(*a)) or used[-1])
    sliced = perf_data.read(path, split_by=split_by)
    assert used and used[0] is not None  # the sliced path ran and was kept
    assert sliced.totals["total_samples"] == 4768
    _same_profile(sliced, whole)


@needs_perf
def test_a_failing_slice_reruns_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slice perf rejects (here a bad --time range) never yields a partial profile: the
    recording is read again by one run."""
    monkeypatch.setenv("PROFDIFF_PERF_TEXT", "1")
    path = DATA / "c-vm" / "v1" / "perf.data"
    whole = perf_data.read(path)
    monkeypatch.setattr(perf_data, "_slice_ranges", lambda p, cores=None: [",1.0", "not-a-time,"])
    used = []
    real = perf_data._read_sliced
    monkeypatch.setattr(perf_data, "_read_sliced",
                        lambda *a: used.append(real(*a)) or used[-1])
    again = perf_data.read(path)
    assert used == [None]
    _same_profile(again, whole)


@needs_perf
@pytest.mark.parametrize("v", ["v1", "v2"])
def test_recorded_dsos_are_perfs_buildid_list(v: str) -> None:
    """The DSO names read from the header's build-id table are those perf lists."""
    path = DATA / "c-vm" / v / "perf.data"
    r = subprocess.run([_perf(), "buildid-list", "-i", str(path)], capture_output=True,
                       text=True, check=True)
    listed = [ln.split(None, 1)[1] for ln in r.stdout.splitlines() if ln.strip()]
    assert perf_data.recorded_dsos(path) == listed
    assert any(d.endswith("/vm") for d in listed)
    assert perf_data.recorded_dsos(DATA / "perf-data" / "hotspot-true.v1.perf.data") == []


def test_recorded_binary_beside_needs_no_cache_run(tmp_path: Path) -> None:
    """The very binary recorded, beside its perf.data, is not offered to the build-id cache
    (perf opens it by its path); a copy under another name still is, and the recording
    still resolves its frames."""
    binary, data = _record_spin(tmp_path)
    copy = binary.parent / "spin-copy"
    shutil.copy(binary, copy)
    beside = perf_data.elf_beside(data)
    assert binary in beside and copy in beside
    assert perf_data._needed_beside(data, beside) == [copy]
    copy.unlink()
    assert perf_data._needed_beside(data, perf_data.elf_beside(data)) == []
    assert _flat_pct(perf_data.read(data)).get("leaf_work", 0) > 50


def test_unknown_outside_any_mapping_needs_no_binary_check() -> None:
    """'[unknown]' in '[unknown]' (an address outside every mapping) asks for no
    'perf buildid-list' run; '[unknown]' in a named binary does."""
    script = DATA / "script"
    plain = perf_script.read(script / "speedscope-simple-with-header.linux-perf.txt")
    assert "[unknown]" in plain.name.tolist()
    assert not perf_data._may_lack_binaries(plain)
    numa = perf_script.read(script / "flamegraph-perf-numa-stacks-01.txt.gz")
    assert perf_data._may_lack_binaries(numa)
    assert perf_data._may_lack_binaries(perf_script.read(
        script / "flamegraph-perf-numa-stacks-01.txt.gz", group_by="symbol"))


def test_slice_count_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROFDIFF_PERF_SLICES", "1")
    assert perf_data.slice_count() == 1
    assert perf_data._slice_ranges(DATA / "c-vm" / "v1" / "perf.data") == []
    monkeypatch.setenv("PROFDIFF_PERF_SLICES", "3")
    assert perf_data.slice_count() == 3
    assert perf_data.slice_count(cores=1) == 3  # the variable wins over the share
    monkeypatch.setenv("PROFDIFF_PERF_SLICES", "x")
    assert 1 <= perf_data.slice_count() <= perf_data.MAX_SLICES


def test_slices_follow_the_reads_share_of_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read given one core (another file is read beside it) runs one perf; a share of
    more cores runs that many, at most MAX_SLICES."""
    monkeypatch.delenv("PROFDIFF_PERF_SLICES", raising=False)
    assert perf_data.slice_count(cores=1) == 1
    assert perf_data.slice_count(cores=2) == 2
    assert perf_data.slice_count(cores=64) == perf_data.MAX_SLICES
    big = DATA / "c-vm" / "v1" / "perf.data"
    monkeypatch.setattr(perf_data, "SLICE_MIN_BYTES", 0)  # so the small file would split
    assert perf_data._slice_ranges(big, cores=1) == []
    assert len(perf_data._slice_ranges(big, cores=2)) == 2


def test_no_slice_waits_for_the_parser(tmp_path: Path) -> None:
    """Every slice's perf, the first included, writes to a file (on main before, the first one wrote to a pipe and this timed out): it never blocks on a
    full pipe while the parser holds the GIL.  A stand-in perf writes 4 MiB (64 pipes'
    worth) and exits though nothing reads yet."""
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\nexec head -c 4194304 /dev/zero\n")
    fake.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    errs = [open(os.devnull, "wb") for _ in range(2)]  # noqa: SIM115 - closed below
    procs: list[subprocess.Popen] = []
    try:
        files = perf_data._start_slices(str(fake), tmp_path / "perf.data", [",1", "1,"],
                                        {"HOME": str(home), "PATH": os.defpath}, errs, procs)
        rcs = [q.wait(timeout=20) for q in procs]
    finally:
        for q in procs:
            if q.poll() is None:
                q.kill()
                q.wait()
        for e in errs:
            e.close()
    assert rcs == [0, 0]
    assert [f.stat().st_size for f in files] == [4 << 20, 4 << 20]


def test_slice_file_growing_is_read_while_its_writer_still_writes(tmp_path: Path) -> None:
    """_GrowingFile gives every byte a still-running writer adds (cut mid-line and in
    the middle of a UTF-8 character), and ends only once the writer has exited."""
    import sys

    out = tmp_path / "slice1.txt"
    text = "".join(f"λ line {i}\n" for i in range(2000))
    data = text.encode()
    code = ("import sys, time\n"
            f"data = open({str(tmp_path / 'src')!r}, 'rb').read()\n"
            "with open(sys.argv[1], 'ab', buffering=0) as f:\n"
            "    for i in range(0, len(data), 997):\n"
            "        f.write(data[i:i + 997]); time.sleep(0.002)\n")
    (tmp_path / "src").write_bytes(data)
    out.write_bytes(b"")
    writer = subprocess.Popen([sys.executable, "-c", code, str(out)])
    reader = perf_data._GrowingFile(out, writer)
    parts = []
    while s := reader.read(4096):
        parts.append(s)
    reader.close()
    assert writer.poll() is not None
    assert len(parts) > 1 and "".join(parts) == text


@needs_perf
def test_data_end_is_the_header_perf_reports(tmp_path: Path) -> None:
    """The byte where a recording's samples end, from its header, is perf's own ``data
    offset`` + ``data size`` (``perf report --header-only``); a cut copy still says it."""
    src = DATA / "c-vm" / "v1" / "perf.data"
    r = subprocess.run(["perf", "report", "--header-only", "-i", str(src)],
                       capture_output=True, text=True, timeout=60)
    fields = dict(ln.lstrip("# ").split(":", 1) for ln in r.stdout.splitlines()
                  if ln.startswith("# data offset") or ln.startswith("# data size"))
    want = int(fields["data offset    "]) + int(fields["data size      "])
    assert perf_header.data_end(src) == want <= src.stat().st_size
    assert perf_header.data_end(_cut_cvm(tmp_path, 4096)) == want


@needs_perf
def test_a_recording_cut_before_its_samples_says_so_whatever_perf_does(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Cut at 4,096 bytes, perf dies of SIGBUS here (another perf may stop with an
    error): either way the message names the file and says it is cut, exit 2."""
    from profdiff.viewer.cli import main

    cut = _cut_cvm(tmp_path, 4096)
    assert main(["show", str(cut)]) == 2
    err = capsys.readouterr().err
    assert str(cut) in err and ("the file is cut" in err or "cut or damaged" in err), err
    assert perf_data.cut_note(DATA / "c-vm" / "v1" / "perf.data") == ""  # not cut


@needs_perf
def test_cut_after_the_samples_warns_and_drops_the_facts_perf_made_up(tmp_path: Path) -> None:
    """A copy cut inside the header features that follow the samples: perf reads it
    without a word and prints "arch: (null)", "nrcpus online: 0".  The reader warns,
    naming the lost features by perf's names, and keeps no made-up run facts."""
    src = DATA / "perf-data" / "hotspot-true.v2.perf.data"
    raw = src.read_bytes()
    end = perf_header.data_end(src)
    assert end is not None and perf_header.cut_features(src) == []
    whole = perf_data.read(src)
    assert not any("cut after its samples" in w for w in whole.warnings)
    assert whole.meta["arch"] == "x86_64"
    cut = tmp_path / "cut.perf.data"
    with open(src, "rb") as f:
        arch = perf_header.feature_section(f, 6)  # perf's HEADER_ARCH
    assert arch is not None and end < arch[0] < len(raw)
    cut.write_bytes(raw[: arch[0] + 1])  # inside the ARCH section
    lost = perf_header.cut_features(cut)
    assert lost[0] == "ARCH" and "HOSTNAME" not in lost
    prof = perf_data.read(cut)
    assert not prof.incomplete
    (w,) = [w for w in prof.warnings if "cut after its samples" in w]
    assert ", ".join(lost) in w and f"({arch[0] + 1:,} bytes)" in w
    assert "arch" not in prof.meta and "processors" not in prof.meta
    assert prof.meta["hostname"] == whole.meta["hostname"]
    header = perf_header.cut_features(tmp_path / "missing.perf.data")
    assert header == []


@needs_perf
def test_cut_in_the_features_is_named_whether_or_not_perf_survives_it(tmp_path: Path) -> None:
    """The fork-exec recording cut inside its header features: perf may die reading it
    (SIGSEGV with this machine's perf) or read it; either way the file is named as cut
    after its samples, with the features lost."""
    src = DATA / "fork-exec" / "perf.data"
    raw = src.read_bytes()
    cut = tmp_path / "cut.perf.data"
    cut.write_bytes(raw[: len(raw) * 9 // 10])
    end = perf_header.data_end(src)
    assert end is not None and end < len(raw) * 9 // 10
    lost = perf_header.cut_features(cut)
    assert lost
    try:
        prof = perf_data.read(cut)
    except (ParseError, ExternalToolError) as e:  # perf died: ExternalToolError
        assert f"cut after its samples: its header sections {', '.join(lost)}" in str(e)
    else:
        assert any(f"header sections {', '.join(lost)}" in w for w in prof.warnings)


@needs_perf
def test_date_is_said_to_be_the_files_time(tmp_path: Path) -> None:
    """perf's "captured on" is the perf.data's modification time: an old recording
    checked out here showed the checkout's time as its date.  The date says what it is."""
    src = DATA / "perf-data" / "hotspot-true.v2.perf.data"
    copy = tmp_path / "copy.perf.data"
    shutil.copy(src, copy)
    os.utime(copy, (0, 86400 * (365 + 180)))  # mid-1971 in every time zone
    date = perf_data.read(copy).meta["date"]
    assert date.endswith(" (perf.data file time)") and "1971" in date


def test_perf_kernel_message_folded_into_the_kernel_warning() -> None:
    """perf's stderr line about the kernel's missing symbols is not repeated beside the
    reader's warning, which takes its build-id; perf's other lines stay, and without
    that warning the line stays too (nothing else would say it)."""
    from profdiff.parsers import perf_kernel

    bid = "48dc540c8b76393804ca8088dbfa7d42911a9444"
    err = (f"No kallsyms or vmlinux with build-id {bid} was found\n"
           "# a comment perf printed\n\nWarning: 3 out of order events\n")
    said, kernel_id = perf_data._perf_messages(err, kernel_said=True)
    assert said == ["perf: Warning: 3 out of order events"] and kernel_id == bid
    said, kernel_id = perf_data._perf_messages(err, kernel_said=False)
    assert said[0] == f"perf: No kallsyms or vmlinux with build-id {bid} was found"
    assert kernel_id is None
    warning = perf_kernel._warning({"source": "perf.data", "os_release": "6.1.0"}, 9, 0.3)
    named = perf_kernel.with_build_id(warning, bid)
    assert named.startswith("kernel symbols were not resolved: perf has no kallsyms or "
                            f"vmlinux of the recording kernel 6.1.0 (build-id {bid}) here. 9 ")
    assert perf_kernel.with_build_id(named, bid) == named  # named once
    text = perf_kernel._warning({"source": "perf script"}, 9, 0.3)
    assert perf_kernel.with_build_id(text, bid) == text  # only a perf.data's warning


_SPAWN_ORDER = """
import subprocess, sys
seen = []
start = subprocess.Popen.__init__
def spy(self, args, *a, **k):
    if "script" in list(args)[:2]:
        seen.append("numpy" in sys.modules)
    start(self, args, *a, **k)
subprocess.Popen.__init__ = spy
from profdiff.viewer.cli import main
code = main(["show", sys.argv[1]])
print(code, seen[:1], "numpy" in sys.modules)
"""


@needs_perf
def test_perf_starts_before_numpy_is_imported() -> None:
    """``profdiff show`` of a perf.data starts ``perf script`` before it imports numpy,
    so numpy's import (~50 ms) runs while perf reads the recording: most of the time of
    a small recording.  A fresh interpreter, as the program runs."""
    rec = DATA / "c-vm" / "v1" / "perf.data"
    out = subprocess.run([sys.executable, "-c", _SPAWN_ORDER, str(rec)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "0 [False] True"  # the first perf, before numpy
