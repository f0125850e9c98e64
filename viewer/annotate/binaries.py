"""Which binary a recording's samples came from, and whether a file on disk is that binary.

Why: the disassembly must be of the exact build that was recorded, or sample offsets land
on the wrong instructions.  perf stores each DSO's build-id in the perf.data; ELF files
carry theirs in a ``NT_GNU_BUILD_ID`` note.  A candidate (beside the recording, at the
recorded path, or in the user's build-id cache) is used only when the two agree.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from profdiff.parsers.elf_notes import gnu_build_id
from profdiff.parsers.errors import ProfdiffError

PT_NOTE = 4
BUILD_ID_RE = re.compile(r"[0-9a-f]{32,64}")


class BinaryError(ProfdiffError):
    """The recorded binary is missing, or the file found is a different build."""


@dataclass(frozen=True)
class Located:
    path: Path
    build_id: str | None  # the file's own build-id (None if it has none)
    how: str  # "beside the recording", "at the recorded path", "in the build-id cache"


def elf_build_id(path: Path) -> str | None:
    """The GNU build-id of an ELF file as lower-case hex, None if it has none or is no ELF."""
    try:
        with open(path, "rb") as f:
            ident = f.read(64)
            if ident[:4] != b"\x7fELF" or len(ident) < 52:
                return None
            is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
            if is64:
                phoff, = struct.unpack_from(end + "Q", ident, 32)
                phentsize, phnum = struct.unpack_from(end + "HH", ident, 54)
            else:
                phoff, = struct.unpack_from(end + "I", ident, 28)
                phentsize, phnum = struct.unpack_from(end + "HH", ident, 42)
            for k in range(min(phnum, 256)):
                f.seek(phoff + k * phentsize)
                ph = f.read(phentsize)
                if len(ph) < phentsize:
                    return None
                if is64:
                    ptype, _fl, off, _va, _pa, size = struct.unpack_from(end + "IIQQQQ", ph)
                else:
                    ptype, off, _va, _pa, size = struct.unpack_from(end + "IIIII", ph)
                if ptype == PT_NOTE:
                    f.seek(off)
                    bid = gnu_build_id(f.read(min(size, 1 << 16)), end)
                    if bid:
                        return bid
    except (OSError, struct.error):
        return None
    return None


def recorded_build_ids(perf: str, recording: Path, env: dict[str, str]) -> dict[str, str]:
    """DSO path -> build-id, as stored in the recording (``perf buildid-list``)."""
    try:
        r = subprocess.run([perf, "buildid-list", "-i", str(recording)], env=env,
                           capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return {}
    out: dict[str, str] = {}
    for ln in r.stdout.splitlines():
        parts = ln.split(None, 1)
        if len(parts) == 2 and BUILD_ID_RE.fullmatch(parts[0]):
            out[parts[1].strip()] = parts[0]
    return out


def locate_binary(dso: str, recording: Path, build_id: str | None) -> Located:
    """The file to disassemble for ``dso`` (its recorded path) of ``recording``.

    Looks beside the recording (same file name), at the recorded path, then in the user's
    build-id cache.  With a recorded build-id only a file with that build-id is accepted; a
    file with another build-id gives a :class:`BinaryError` that says so.
    """
    name = Path(dso).name
    candidates = [(recording.resolve().parent / name, "beside the recording"),
                  (Path(dso), "at the recorded path")]
    if build_id:
        home = Path(os.path.expanduser("~"))
        candidates.append((home / ".debug" / ".build-id" / build_id[:2] / build_id[2:] / "elf",
                           "in the build-id cache"))
    mismatched: list[str] = []
    for path, how in candidates:
        if not path.is_file():
            continue
        bid = elf_build_id(path)
        if build_id is None or bid == build_id:
            return Located(path, bid, how)
        mismatched.append(f"{path} ({how}) has build-id {bid or 'none'}")
    if mismatched:
        raise BinaryError(
            f"{recording}: the recorded binary {dso} has build-id {build_id}, but "
            + "; ".join(mismatched)
            + ". That is a different build: put the exact binary that was recorded beside "
            "the perf.data")
    raise BinaryError(
        f"{recording}: the recorded binary {dso} was not found (looked beside the recording "
        f"for '{name}', at {dso}" + (", and in ~/.debug" if build_id else "")
        + "). Copy the exact binary that was recorded beside the perf.data")
