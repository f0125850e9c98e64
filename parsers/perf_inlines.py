"""Could perf add inlined frames to a recording's text?  Then its tables would differ.

perf prints a frame per inlined function ("sym (inlined)") only when it was built with
libbfd or with an addr2line that unwinds inlines (Debian's perf 6.1 never does), and only
for binaries with DWARF debug information.  :func:`expands_inlines` asks perf itself,
once per perf binary, on a bundled recording (``perf_probe/``: a program built with
``-g`` whose hot function is inlined); :func:`debug_info_reason` says which binary of a
recording could carry inlines.  Used by :mod:`parsers.perf_data` to choose between
perf's tables (:mod:`parsers.perf_dlfilter`) and its text.
"""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

from .perf_dlfilter import cache_dir

PROBE = Path(__file__).with_name("perf_probe")  # a recording whose hot function is inlined
_DEBUG_SECTIONS = (b".debug_info", b".zdebug_info")
_VMLINUX = (("/boot", "vmlinux*"), ("/usr/lib/debug/boot", "*"),
            ("/usr/lib/debug/lib/modules", "*"))


def elf_facts(path: Path) -> tuple[bool, str] | None:
    """(has DWARF sections, GNU build-id in hex) of an ELF file; None if it is not a
    64-bit little-endian ELF file this can read (the caller then assumes DWARF)."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            return None
        shoff, = struct.unpack_from("<Q", ident, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
        if not shoff or shentsize < 64 or not 0 < shnum <= 4096 or shstrndx >= shnum:
            return None
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        heads = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
        f.seek(heads[shstrndx][4])
        names = f.read(min(heads[shstrndx][5], 1 << 20))
        dwarf = False
        bid = ""
        for name_off, sh_type, _flags, _addr, off, size in heads:
            name = names[name_off : names.find(b"\0", name_off)]
            dwarf |= name in _DEBUG_SECTIONS
            if name == b".note.gnu.build-id" and sh_type == 7 and 16 < size <= 256:
                f.seek(off)
                note = f.read(size)
                namesz, descsz = struct.unpack_from("<II", note)
                desc = 12 + (namesz + 3) // 4 * 4
                bid = note[desc : desc + descsz].hex()
    return dwarf, bid


def debug_info_reason(dsos: list[str], cache: Path) -> str:
    """Why perf could add inlined frames to these binaries ('' when it cannot): a binary
    with DWARF, a separate debug file for it (by build-id), or its copy with debug
    information in perf's build-id ``cache``; and a kernel image with symbols."""
    for d in dsos:
        if d.startswith("[kernel"):
            if _kernel_image():
                return "a kernel image with symbols is installed"
            continue
        if not d.startswith("/"):
            continue
        p = Path(d)
        try:
            facts = elf_facts(p) if p.is_file() else (False, "")
        except (OSError, struct.error, IndexError):
            facts = None
        if facts is None or facts[0]:
            return f"{p.name} has debug information"
        bid = facts[1]
        if bid and ((Path("/usr/lib/debug/.build-id") / bid[:2] / f"{bid[2:]}.debug").exists()
                    or (cache / ".build-id" / bid[:2] / bid[2:] / "debug").exists()):
            return f"a separate debug file for {p.name} is installed"
    return ""


def _kernel_image() -> bool:
    """A kernel image perf could read DWARF from (it then prefers it to kallsyms)."""
    for folder, pattern in _VMLINUX:
        try:
            if any(Path(folder).glob(pattern)):
                return True
        except OSError:
            return True
    return False


def expands_inlines(perf: str, probe_env: Callable[[Path, Path], dict[str, str]],
                    workdir: Path) -> bool:
    """Does this perf print inlined frames?  Asked once per perf binary (the answer is
    cached) by reading a bundled recording of a program whose hot function is inlined.

    Why ask: perf prints them only when built with libbfd or with an addr2line that
    unwinds inlines (Debian's perf 6.1 never does), and only then can a binary's debug
    information make the text differ from the tables.  Any doubt answers True.
    """
    try:
        st = Path(os.path.realpath(perf)).stat()
    except OSError:
        return True
    ident = f"{os.path.realpath(perf)}\0{st.st_size}\0{st.st_mtime_ns}".encode()
    key = f"{zlib.crc32(ident):08x}{zlib.adler32(ident):08x}"  # no hashlib import: 3.5 ms
    cached = cache_dir() / f"perf-inlines-{key}"
    try:
        return cached.read_text().strip() != "0"
    except OSError:
        pass
    home = workdir / "probe-home"
    home.mkdir()
    recording = PROBE / "probe.perf.data"
    try:
        env = probe_env(recording, home)
        done = subprocess.run([perf, "script", "-i", str(recording), "-F", "ip,sym,dso"],
                              env=env, capture_output=True, text=True, timeout=60,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return True
    # the probe only answers when perf resolved its hot function at all
    answer = "(inlined)" in done.stdout or done.returncode != 0 or " work " not in done.stdout
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text("1" if answer else "0")
    except OSError:
        pass
    return answer
