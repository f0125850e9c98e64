"""The GNU build-id in a block of ELF notes (a ``PT_NOTE`` segment, ``/sys/kernel/notes``).

Why one place: the annotate view checks that a binary on disk is the recorded build, and
the perf reader asks whether the running kernel is the recording's; both read the same
``NT_GNU_BUILD_ID`` note.  Not a format reader (no ``FORMAT``).
"""

from __future__ import annotations

import struct

NT_GNU_BUILD_ID = 3


def gnu_build_id(notes: bytes, end: str = "=") -> str | None:
    """The build-id (lower-case hex) of the first GNU build-id note in ``notes``, read
    with byte order ``end`` (``"<"``, ``">"`` or ``"="``); None when there is none or the
    notes are cut before its end."""
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, ntype = struct.unpack_from(end + "III", notes, pos)
        name_at = pos + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        if desc_at + descsz > len(notes):
            return None
        if ntype == NT_GNU_BUILD_ID and notes[name_at:name_at + namesz].rstrip(b"\0") == b"GNU":
            return notes[desc_at:desc_at + descsz].hex()
        pos = desc_at + (descsz + 3) // 4 * 4
    return None
