"""Which kernel symbol table perf will read for a recording, named to perf up front.

Why: with no vmlinux, perf names kernel addresses from a kallsyms text.  On the machine
that recorded, that is ``/proc/kallsyms``, which the kernel formats anew on every read:
~49 ms a read for 122k symbols on a 2-core VM, where the same text from a regular file
takes a few, and that read was a quarter of the time of loading a small recording.
``perf record`` keeps a copy of ``/proc/kallsyms`` in the build-id cache (made by the
first recording of that kernel build), and perf reads that copy itself when the
recording kernel is not the running one.

:func:`script_args` names the copy with ``--kallsyms`` only where it is the very text
perf would read, following perf's own search (``dso__load_kernel_sym`` and
``dso__find_kallsyms`` in ``tools/perf/util/symbol.c``):

1. no vmlinux that perf would prefer: none in the build-id cache, none at perf's fixed
   paths for the recording's release or the running one, no debuginfod to fetch one;
2. no kcore: none in the cache, and on the recording's host ``/proc/kcore`` unreadable
   (there perf pairs ``/proc/kallsyms`` with a readable ``/proc/kcore``, which changes
   the maps that module frames fall in; away from the host it never looks at it);
3. the copy holds real addresses (a ``perf record`` without the right to read them
   writes zeros);
4. on the recording's host (the running kernel's build-id is the recording's): the copy
   was written since this boot, so kernel text addresses are those ``/proc/kallsyms``
   shows now, and no kernel module was hit (one loaded after the copy is not in it).

In every other case the answer is ``[]`` and perf searches as it always does.

Away from the recording host, perf run by the user reads the copy itself (by its path
``~/.debug/[kernel.kallsyms]/<build-id>/kallsyms``); in profdiff's private HOME, which
links only ``.build-id``, it would look there in vain and print the kernel frames as
``[unknown]``, so naming the copy gives the names ``perf report`` gives the user.  This
is not a format reader (no ``FORMAT``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .elf_notes import gnu_build_id
from .perf_header import MISC_KERNEL, MISC_USER, BuildId

KERNEL_DSO = "[kernel.kallsyms]"
VMLINUX_PATHS = ("vmlinux", "/boot/vmlinux")  # perf's vmlinux_paths, then per release:
VMLINUX_RELEASE_PATHS = (
    "/boot/vmlinux-{}",
    "/usr/lib/debug/boot/vmlinux-{}",
    "/lib/modules/{}/build/vmlinux",
    "/usr/lib/debug/lib/modules/{}/vmlinux",
    "/usr/lib/debug/boot/vmlinux-{}.debug",
)


def script_args(build_ids: Sequence[BuildId], release: str | None, home: Path, *,
                root: Path = Path("/"), cwd: Path | None = None,
                environ: Mapping[str, str] = os.environ) -> list[str]:
    """``["--kallsyms", copy]`` when the cached copy is what perf would read anyway
    (see the module docstring), else ``[]``.

    ``build_ids`` and ``release`` are the recording's (:mod:`parsers.perf_header`),
    ``home`` the HOME perf runs with; ``root``, ``cwd`` and ``environ`` are the machine
    perf looks at (the real one but in tests)."""
    kernel = [b for b in build_ids if b.name == KERNEL_DSO and b.cpumode == MISC_KERNEL]
    if len(kernel) != 1 or any(b.cpumode not in (MISC_KERNEL, MISC_USER) for b in build_ids):
        return []  # no kernel frames to name, or a guest's or hypervisor's
    bid = kernel[0].build_id
    cached = home / ".debug" / ".build-id" / bid[:2] / bid[2:]
    copy = cached / "kallsyms"
    if (not _has_addresses(copy) or (cached / "elf").exists() or (cached / "debug").exists()
            or (home / ".debug" / "[kernel.kcore]" / bid).exists()
            or environ.get("DEBUGINFOD_URLS", "").strip()
            or _vmlinux_found(root, cwd, [release, os.uname().release])):
        return []
    if running_build_id(root) == bid:
        # only on the host does perf look at /proc/kcore (its fast path); away from it
        # the copy is what it reads, whatever /proc/kcore is
        modules = any(b.cpumode == MISC_KERNEL and b.name != KERNEL_DSO for b in build_ids)
        boot = boot_time(root)
        if modules or boot is None or copy.stat().st_mtime < boot \
                or _readable(root / "proc" / "kcore"):
            return []
    return ["--kallsyms", str(copy)]


def _has_addresses(copy: Path) -> bool:
    """The copy is a readable kallsyms text whose first symbol has a non-zero address."""
    try:
        with open(copy, "rb") as f:
            first = f.readline(256).split(None, 1)
    except OSError:
        return False
    try:
        return bool(first) and int(first[0], 16) != 0
    except ValueError:
        return False


def _vmlinux_found(root: Path, cwd: Path | None, releases: list[str | None]) -> bool:
    here = cwd if cwd is not None else Path.cwd()
    paths = [here / VMLINUX_PATHS[0], root / VMLINUX_PATHS[1].lstrip("/")]
    for rel in {r for r in releases if r}:
        paths += [root / p.format(rel).lstrip("/") for p in VMLINUX_RELEASE_PATHS]
    return any(p.exists() for p in paths)


def _readable(path: Path) -> bool:
    """What perf's ``filename__readable`` asks: can the file be opened for reading."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    os.close(fd)
    return True


def running_build_id(root: Path = Path("/")) -> str | None:
    """The running kernel's GNU build-id from ``/sys/kernel/notes`` (hex), or None."""
    try:
        raw = (root / "sys" / "kernel" / "notes").read_bytes()
    except OSError:
        return None
    return gnu_build_id(raw)


def boot_time(root: Path = Path("/")) -> int | None:
    """Seconds since the epoch at which this machine booted (``btime`` of /proc/stat)."""
    try:
        with open(root / "proc" / "stat", "rb") as f:
            for line in f:
                if line.startswith(b"btime "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
