"""What a perf.data says about itself in its header features, read without perf.

Why without perf: each perf start costs ~0.1 s, most of the time of a small recording.
These few bytes decide how perf is run (how to split the work, which binaries to
offer, which kernel symbols to name), so they are read straight from the file.

Every reader returns an empty answer (None or []) for a file that lacks the feature,
is of another byte order, is a pipe-mode file or cannot be read: the caller then runs
perf as it would without the hint.  This is not a format reader (no ``FORMAT``).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO, NamedTuple

HEADER_SIZE_V2 = 104  # struct perf_file_header: magic, size, attr_size, 3 sections
FEAT_BUILD_ID = 2  # header feature bits (perf's HEADER_*): recorded DSOs and build-ids,
FEAT_OSRELEASE = 4  # the recording kernel's release,
FEAT_SAMPLE_TIME = 21  # the first and last sample time
MISC_CPUMODE_MASK = 7  # perf_event_header.misc: where the DSO ran
MISC_KERNEL, MISC_USER = 1, 2
MISC_BUILD_ID_SIZE = 1 << 15  # the build-id's length is in the record (else 20 bytes)
MAX_SECTION = 1 << 24


class BuildId(NamedTuple):
    """One row of the recording's build-id table, as ``perf buildid-list`` prints it."""

    build_id: str  # lower-case hex
    name: str  # the DSO's path, or [kernel.kallsyms], [vdso], a module's name
    cpumode: int  # MISC_KERNEL, MISC_USER, or a guest's or hypervisor's mode


def data_end(path: Path) -> int | None:
    """The byte where the header of the little-endian v2 perf.data ``path`` says its
    sample data ends (data offset + size), or None (no such header, unreadable, or a
    recording perf never finished: size 0).

    Why: a file shorter than that was cut after perf wrote it (a copy, a full disk),
    which perf itself does not say when it dies reading it (SIGBUS)."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE_V2)
    except OSError:
        return None
    if len(head) < HEADER_SIZE_V2 or head[:8] != b"PERFILE2":
        return None
    data_off, data_size = struct.unpack_from("<QQ", head, 40)
    return data_off + data_size if data_size else None


FEATURE_NAMES = {
    1: "TRACING_DATA", 2: "BUILD_ID", 3: "HOSTNAME", 4: "OSRELEASE", 5: "VERSION",
    6: "ARCH", 7: "NRCPUS", 8: "CPUDESC", 9: "CPUID", 10: "TOTAL_MEM", 11: "CMDLINE",
    12: "EVENT_DESC", 13: "CPU_TOPOLOGY", 14: "NUMA_TOPOLOGY", 15: "BRANCH_STACK",
    16: "PMU_MAPPINGS", 17: "GROUP_DESC", 18: "AUXTRACE", 19: "STAT", 20: "CACHE",
    21: "SAMPLE_TIME", 22: "MEM_TOPOLOGY", 23: "CLOCKID", 24: "DIR_FORMAT",
    25: "BPF_PROG_INFO", 26: "BPF_BTF", 27: "COMPRESSED", 28: "CPU_PMU_CAPS",
    29: "CLOCK_DATA", 30: "HYBRID_TOPOLOGY", 31: "PMU_CAPS",
}
"""perf's header feature bits (``HEADER_*`` in perf's header.h), named as
``perf report --header-only`` names them."""


def cut_features(path: Path) -> list[str]:
    """The header features the little-endian v2 perf.data ``path`` declares but that lie
    (wholly or partly) past its end, by perf's names; [] when all are there or the
    header cannot be read.

    Why: the features follow the samples, so a copy cut there still holds every
    sample and perf reads it without a word, filling in the lost ones itself: the cut
    hotspot recording showed "arch: (null)", "processors: 0" and *this* machine's
    CPUID."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE_V2)
            size = os.fstat(f.fileno()).st_size
            if len(head) < HEADER_SIZE_V2 or head[:8] != b"PERFILE2":
                return []
            data_off, data_size = struct.unpack_from("<QQ", head, 40)
            bits = int.from_bytes(head[72:104], "little")
            if not data_size or data_off + data_size > size:
                return []  # samples cut too (or never finished): cut_note's case
            present = [b for b in range(256) if bits >> b & 1]
            f.seek(data_off + data_size)
            index = f.read(16 * len(present))
    except OSError:
        return []
    cut = []
    for k, bit in enumerate(present):
        if 16 * k + 16 > len(index):
            cut.append(bit)
            continue
        off, sec_size = struct.unpack_from("<QQ", index, 16 * k)
        if off + sec_size > size:
            cut.append(bit)
    return [FEATURE_NAMES.get(b, f"feature {b}") for b in cut]


def feature_section(f: BinaryIO, bit: int) -> tuple[int, int] | None:
    """(offset, size) of header feature ``bit`` of the open little-endian v2 perf.data
    ``f``, or None."""
    f.seek(0)
    head = f.read(HEADER_SIZE_V2)
    if len(head) < HEADER_SIZE_V2 or head[:8] != b"PERFILE2":
        return None
    size, = struct.unpack_from("<Q", head, 8)
    data_off, data_size = struct.unpack_from("<QQ", head, 40)
    bits = int.from_bytes(head[72:104], "little")
    if size != HEADER_SIZE_V2 or not bits >> bit & 1:
        return None
    index = bin(bits & ((1 << bit) - 1)).count("1")
    f.seek(data_off + data_size + 16 * index)
    off, sec_size = struct.unpack("<QQ", f.read(16))
    return off, sec_size


def _section_bytes(path: Path, bit: int) -> bytes:
    """The bytes of feature ``bit`` (at most MAX_SECTION), b"" when absent: one open."""
    try:
        with open(path, "rb") as f:
            sec = feature_section(f, bit)
            if sec is None:
                return b""
            f.seek(sec[0])
            return f.read(min(sec[1], MAX_SECTION))
    except (OSError, struct.error, ValueError):
        return b""


def recorded_build_ids(path: Path) -> list[BuildId]:
    """The recording's ``BUILD_ID`` table: the DSOs perf recorded build-ids for (those
    that samples hit), in file order; [] when there is none or it cannot be read."""
    raw = _section_bytes(path, FEAT_BUILD_ID)
    out = []
    pos = 0
    while pos + 36 <= len(raw):  # header (8), pid (4), build-id (24), name
        _type, misc, rec_size = struct.unpack_from("<IHH", raw, pos)
        if rec_size < 36 or pos + rec_size > len(raw):
            break
        n = raw[pos + 32] if misc & MISC_BUILD_ID_SIZE else 20
        bid = raw[pos + 12 : pos + 12 + min(n, 20)].hex()
        name = raw[pos + 36 : pos + rec_size].split(b"\0", 1)[0]
        out.append(BuildId(bid, os.fsdecode(name), misc & MISC_CPUMODE_MASK))
        pos += rec_size
    return out


def recorded_dsos(path: Path) -> list[str]:
    """File names in the recording's build-id table (see :func:`recorded_build_ids`)."""
    return [b.name for b in recorded_build_ids(path)]


def os_release(path: Path) -> str | None:
    """The recording kernel's release (``uname -r`` where it was recorded), or None."""
    raw = _section_bytes(path, FEAT_OSRELEASE)
    if len(raw) < 4:
        return None
    n, = struct.unpack_from("<I", raw)
    text = raw[4 : 4 + n].split(b"\0", 1)[0]
    return os.fsdecode(text) or None


def sample_time_span(path: Path) -> tuple[int, int] | None:
    """(first, last) sample time in ns from the ``SAMPLE_TIME`` feature, or None."""
    raw = _section_bytes(path, FEAT_SAMPLE_TIME)
    if len(raw) < 16:
        return None
    first, last = struct.unpack_from("<QQ", raw)
    return (first, last) if 0 < first < last else None
