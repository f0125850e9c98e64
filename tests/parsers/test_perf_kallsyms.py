"""Naming the kernel symbols perf would read anyway: the rules on a machine made in
tmp_path, and one recording made here, read both ways."""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tool_requirements import require, require_tool

from profdiff.parsers import perf_data, perf_header, perf_kallsyms
from profdiff.parsers.perf_header import MISC_KERNEL, MISC_USER, BuildId

BID = "a3e4cd60a8ec14f02aa41b41d5b5846d3d9f1dd8"
OTHER = "0123456789abcdef0123456789abcdef01234567"
RELEASE = "6.1.0-test"
BOOT = 1_700_000_000
KALLSYMS = "ffffffff81000000 T _text\nffffffff81000010 T do_syscall_64\n"
RECORDED = [BuildId(BID, "[kernel.kallsyms]", MISC_KERNEL),
            BuildId(OTHER, "/usr/bin/prog", MISC_USER)]


def _note(build_id: str) -> bytes:
    """An ELF note section as /sys/kernel/notes holds it: a Xen note, then the build-id."""
    xen = struct.pack("=III", 4, 4, 6) + b"Xen\0" + b"\1\0\0\0"
    desc = bytes.fromhex(build_id)
    return xen + struct.pack("=III", 4, len(desc), 3) + b"GNU\0" + desc


def _machine(tmp_path: Path, running: str = BID, copy: str = KALLSYMS,
             written: int = BOOT + 60) -> tuple[Path, Path]:
    """(root, home): a machine booted at BOOT running ``running``, whose build-id cache
    holds a kallsyms copy of the recording kernel written at ``written``."""
    root, home = tmp_path / "root", tmp_path / "home"
    (root / "sys" / "kernel").mkdir(parents=True)
    (root / "sys" / "kernel" / "notes").write_bytes(_note(running))
    (root / "proc").mkdir()
    (root / "proc" / "stat").write_text(f"cpu  1 2 3\nbtime {BOOT}\nprocesses 9\n")
    cached = home / ".debug" / ".build-id" / BID[:2] / BID[2:]
    cached.mkdir(parents=True)
    (cached / "kallsyms").write_text(copy)
    os.utime(cached / "kallsyms", (written, written))
    return root, home


def _args(root: Path, home: Path, recorded: list[BuildId] = RECORDED, **env: str) -> list[str]:
    return perf_kallsyms.script_args(recorded, RELEASE, home, root=root, cwd=root,
                                     environ=env)


def test_copy_named_on_the_recording_host(tmp_path: Path) -> None:
    root, home = _machine(tmp_path)
    copy = home / ".debug" / ".build-id" / BID[:2] / BID[2:] / "kallsyms"
    assert perf_kallsyms.running_build_id(root) == BID
    assert perf_kallsyms.boot_time(root) == BOOT
    assert _args(root, home) == ["--kallsyms", str(copy)]


def test_copy_named_away_from_the_recording_host(tmp_path: Path) -> None:
    """Another kernel runs: perf reads the copy itself, however old it is."""
    root, home = _machine(tmp_path, running=OTHER, written=BOOT - 86400)
    assert _args(root, home)[0] == "--kallsyms"
    (root / "sys" / "kernel" / "notes").unlink()  # no notes: not known to be the host
    assert _args(root, home)[0] == "--kallsyms"


@pytest.mark.parametrize("why", ["older than the boot", "a module was hit", "no boot time"])
def test_host_copy_that_may_differ_from_proc(tmp_path: Path, why: str) -> None:
    root, home = _machine(tmp_path, written=BOOT - 1 if why == "older than the boot"
                          else BOOT + 60)
    recorded = RECORDED
    if why == "a module was hit":
        recorded = [*RECORDED, BuildId(OTHER, "/lib/modules/6.1/ext4.ko", MISC_KERNEL)]
    if why == "no boot time":
        (root / "proc" / "stat").write_text("cpu  1 2 3\n")
    assert _args(root, home, recorded) == []


@pytest.mark.parametrize("vmlinux", ["boot/vmlinux", f"boot/vmlinux-{RELEASE}",
                                     f"lib/modules/{RELEASE}/build/vmlinux",
                                     f"usr/lib/debug/lib/modules/{RELEASE}/vmlinux",
                                     f"usr/lib/debug/boot/vmlinux-{RELEASE}.debug",
                                     "vmlinux", "cache-elf", "cache-kcore"])
def test_a_vmlinux_or_kcore_perf_prefers(tmp_path: Path, vmlinux: str) -> None:
    root, home = _machine(tmp_path)
    assert _args(root, home) != []
    if vmlinux == "cache-elf":
        target = home / ".debug" / ".build-id" / BID[:2] / BID[2:] / "elf"
    elif vmlinux == "cache-kcore":
        target = home / ".debug" / "[kernel.kcore]" / BID
    else:
        target = root / vmlinux
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\x7fELF")
    assert _args(root, home) == []


def test_readable_proc_kcore_or_debuginfod(tmp_path: Path) -> None:
    root, home = _machine(tmp_path)
    assert _args(root, home, DEBUGINFOD_URLS="https://debuginfod.example") == []
    (root / "proc" / "kcore").write_bytes(b"")
    assert _args(root, home) == []


def test_readable_proc_kcore_away_from_the_host(tmp_path: Path) -> None:
    """perf's dso__find_kallsyms looks at /proc/kcore only for the running kernel; for
    another one it reads the build-id cache's copy, which profdiff's private HOME does
    not hold under perf's name for it: named, or the kernel frames would be [unknown]
    where the user's perf report names them (root, with a readable /proc/kcore)."""
    root, home = _machine(tmp_path, running=OTHER)
    (root / "proc" / "kcore").write_bytes(b"")
    assert _args(root, home)[0] == "--kallsyms"


@pytest.mark.parametrize("copy", ["0000000000000000 T _text\n", "", "not kallsyms\n"])
def test_copy_without_addresses(tmp_path: Path, copy: str) -> None:
    """perf record without the right to read addresses writes zeros: never named."""
    root, home = _machine(tmp_path, copy=copy)
    assert _args(root, home) == []


def test_no_kernel_or_a_guest(tmp_path: Path) -> None:
    root, home = _machine(tmp_path)
    assert _args(root, home, RECORDED[1:]) == []
    assert _args(root, home, [*RECORDED, BuildId(OTHER, "[guest.kernel.kallsyms]", 4)]) == []


def test_notes_cut_or_without_a_build_id(tmp_path: Path) -> None:
    root, _home = _machine(tmp_path)
    notes = root / "sys" / "kernel" / "notes"
    whole = notes.read_bytes()
    notes.write_bytes(whole[:-4])
    assert perf_kallsyms.running_build_id(root) is None
    notes.write_bytes(whole[:24])
    assert perf_kallsyms.running_build_id(root) is None


SYSCALLS = r"""
#include <fcntl.h>
#include <unistd.h>
__attribute__((noinline)) void writer(int fd) { char c = 'x'; for (int i = 0; i < 300000; i++) write(fd, &c, 1); }
int main(void) { int fd = open("/dev/null", O_WRONLY); writer(fd); return 0; }
"""


def _record(tmp_path: Path, data: Path) -> tuple[str, dict[str, str]]:
    """Record :data:`SYSCALLS` here into ``data`` with HOME = ``tmp_path`` (perf record
    caches its kallsyms copy in tmp_path/.debug); (perf's path, that environment).
    Skipped where perf or gcc is missing or recording is not permitted."""
    perf = require_tool("perf", "apt-get install linux-perf")
    gcc = require_tool("gcc", "apt-get install gcc")
    (tmp_path / "w.c").write_text(SYSCALLS)
    subprocess.run([gcc, "-O1", "-fno-omit-frame-pointer", "-o", str(tmp_path / "w"),
                    str(tmp_path / "w.c")], check=True)
    env = dict(os.environ, HOME=str(tmp_path))
    r = subprocess.run([perf, "record", "-e", "cpu-clock", "-g", "-F", "2000", "-o", str(data),
                        str(tmp_path / "w")], capture_output=True, text=True, env=env,
                       timeout=120)
    require(data.exists() and "Permission" not in r.stderr,
            f"perf record not permitted here: {r.stderr.strip()[:200]}")
    return perf, env


@pytest.mark.perf
def test_recording_reads_the_same_through_the_copy(tmp_path: Path, monkeypatch) -> None:
    """A recording of a program that lives in write(2), made here: its build-id table is
    perf's, and read through the kallsyms copy perf record cached it gives the profile
    perf's own search gives, kernel frames and all."""
    data = tmp_path / "perf.data"
    perf, env = _record(tmp_path, data)
    listed = subprocess.run([perf, "buildid-list", "-i", str(data)], capture_output=True,
                            text=True, check=True, env=env).stdout.split()
    ids = perf_header.recorded_build_ids(data)
    assert [x for b in ids for x in (b.build_id, b.name)] == listed
    kernel = next(b for b in ids if b.name == "[kernel.kallsyms]")
    copy = tmp_path / ".debug" / ".build-id" / kernel.build_id[:2] / kernel.build_id[2:]
    require((copy / "kallsyms").exists(), "perf record cached no copy of /proc/kallsyms")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(perf_data, "kernel_symbol_args", lambda rec, env: [])
    own = perf_data.read(data)
    monkeypatch.setattr(perf_data, "kernel_symbol_args",
                        lambda rec, env: ["--kallsyms", str(copy / "kallsyms")])
    named = perf_data.read(data)
    kernel_names = set(named.frames.name[named.frames.kind == "kernel"])
    assert len(kernel_names) > 3 and "[unknown]" not in kernel_names
    assert named.n_nodes == own.n_nodes
    for col in ("name", "module", "kind"):
        assert np.array_equal(getattr(named.frames, col), getattr(own.frames, col))
    assert np.array_equal(named.parent, own.parent) and np.array_equal(named.frame, own.frame)
    for k, v in own.values.items():
        assert np.array_equal(named.values[k], v), k


def _kernel_self_samples(p) -> dict[str, int]:
    """Self samples per kernel symbol of a read recording."""
    kind = p.frames.kind[p.frame]
    names = p.frames.name[p.frame]
    out: dict[str, int] = {}
    for name, n in zip(names[kind == "kernel"], p.values["self_samples"][kind == "kernel"],
                       strict=True):
        if n:
            out[str(name)] = out.get(str(name), 0) + int(n)
    return out


@pytest.mark.perf
def test_recording_of_another_kernel_names_its_frames_as_perf_report(tmp_path: Path,
                                                                     monkeypatch) -> None:
    """A recording whose kernel is not the running one (made here, its kernel build-id
    changed to one this machine never ran, with perf record's kallsyms copy cached under
    that id as a user's ~/.debug holds it after a kernel upgrade): profdiff names its
    kernel frames from the copy, with the self samples ``perf report`` counts for each
    kernel symbol with the same HOME."""
    made = tmp_path / "made.data"
    perf, env = _record(tmp_path, made)
    real = next(b.build_id for b in perf_header.recorded_build_ids(made)
                if b.name == "[kernel.kallsyms]")
    copy = tmp_path / ".debug" / ".build-id" / real[:2] / real[2:] / "kallsyms"
    require(copy.exists(), "perf record cached no copy of /proc/kallsyms")
    first = copy.read_text(errors="replace").split(None, 1)
    require(bool(first) and first[0].strip("0") != "",
            "kernel addresses are hidden here (kptr_restrict): the copy holds zeros")
    other = "ab" * 20  # a kernel this machine never ran
    raw = made.read_bytes()
    assert bytes.fromhex(real) in raw  # the build-id table's entry (and any event's)
    data = tmp_path / "other.data"
    data.write_bytes(raw.replace(bytes.fromhex(real), bytes.fromhex(other)))
    assert [b.build_id for b in perf_header.recorded_build_ids(data)
            if b.name == "[kernel.kallsyms]"] == [other]
    cache = tmp_path / ".debug" / "[kernel.kallsyms]" / other
    cache.mkdir(parents=True)
    (cache / "kallsyms").write_bytes(copy.read_bytes())
    link = tmp_path / ".debug" / ".build-id" / other[:2] / other[2:]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"../../[kernel.kallsyms]/{other}")
    report = subprocess.run([perf, "report", "-i", str(data), "--stdio", "-n", "--no-children",
                             "--sort", "sym", "-g", "none"], capture_output=True, text=True,
                            env=env, check=True, timeout=120).stdout
    want = {}
    for line in report.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "[k]":
            want[" ".join(parts[3:])] = want.get(" ".join(parts[3:]), 0) + int(parts[1])
    assert len(want) > 3 and not any(k.startswith("0x") for k in want), report[:2000]
    monkeypatch.setenv("HOME", str(tmp_path))
    p = perf_data.read(data)
    assert _kernel_self_samples(p) == want
    assert p.meta["perf_kallsyms"] == "the build-id cache's copy"
