"""Format detection by content, and the reader registry.

Every module in :mod:`parsers` that defines the module-level names below is a reader and
is discovered automatically, so adding a format is one new module (plus its tests):

* ``FORMAT: str`` - the reader id (``"ghc-prof"``); also what ``Profile.format`` holds.
* ``DESCRIPTION: str`` - a few words for error messages (``"GHC .prof text report"``).
* ``def sniff(head: bytes, path: Path) -> float`` - confidence 0..1 that the file is this
  format, from its first :data:`HEAD_BYTES` bytes (already gunzipped) and its name.
  Content decides; the name may only break ties.
* ``def read(path: Path, *, lenient: bool = False, progress=None, **options) -> Profile``
  - parse. ``progress(fraction)`` may be called; it may raise to cancel. Unknown
  ``options`` must be ignored (they are meant for other readers).
* optional ``ACCEPTS_DIRECTORY = True`` for readers of a folder (Julia ``.mem`` runs).

Detection never reads more than :data:`HEAD_BYTES` of a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from . import gzip_io
from .errors import ParseError, UnknownFormatError, UnreadableFileError

if TYPE_CHECKING:  # numpy comes with the model: a reader imports it when it reads
    from .model import Profile

HEAD_BYTES = 64 * 1024

_SKIP = {"model", "builder", "detect", "errors", "textio", "gzip_io", "values"}
_readers: dict[str, ModuleType] | None = None
# Formats that announce themselves by magic bytes at offset 0, so detecting them needs no
# import of every reader (~0.2 s, a fifth of showing a small perf.data): prefix -> reader
# module.  Each reader's own ``sniff`` must give 1.0 for its prefixes (a test checks it).
MAGIC_READERS: dict[bytes, str] = {
    b"PERFILE2": "perf_data", b"PERFFILE": "perf_data", b"2ELIFREP": "perf_data",
}


def readers() -> dict[str, ModuleType]:
    """All reader modules by FORMAT id (discovered once)."""
    global _readers
    if _readers is None:
        found: dict[str, ModuleType] = {}
        # the package this module is in, whatever it is installed as (profdiff.parsers)
        pkg = importlib.import_module(__name__.rpartition(".")[0])
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name in _SKIP or info.name.startswith("_") or info.ispkg:
                continue
            mod = importlib.import_module(f".{info.name}", pkg.__name__)
            if hasattr(mod, "FORMAT") and hasattr(mod, "sniff") and hasattr(mod, "read"):
                found[mod.FORMAT] = mod
        _readers = dict(sorted(found.items()))
    return _readers


def supported_formats(long: bool = False) -> str:
    """Reader ids (``long``: with their descriptions), for error messages and help."""
    if long:
        return "\n".join(f"  {fid:12s} {m.DESCRIPTION}" for fid, m in readers().items())
    return ", ".join(readers())


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First ``size`` bytes, transparently gunzipped (a truncated gzip still gives its start)."""
    return gzip_io.read_head(path, size)


def is_gzip(path: Path) -> bool:
    return gzip_io.is_gzip(path)


def open_text(path: Path):
    """Open a possibly gzipped text file for streaming (UTF-8, undecodable bytes replaced).

    A cut gzip stream reads as a shorter text: ask ``gzip_io.cut_of(stream)`` afterwards."""
    return gzip_io.open_text(path)


def read_bytes(path: Path) -> bytes:
    """Whole file, gunzipped; a truncated gzip raises a located ParseError (readers use
    :func:`parsers.gzip_io.read_all`, which keeps the readable part instead)."""
    data, cut = gzip_io.read_all(path)
    if cut:
        raise ParseError(path, "a complete gzip stream", found=cut)
    return data


def detect(path: str | Path) -> ModuleType:
    """The reader module for ``path``; raises UnknownFormatError listing supported formats."""
    p = Path(path)
    if not p.exists():
        raise ParseError(p, "an existing file or folder", found="no such file")
    if p.is_dir():
        dir_readers = [m for m in readers().values() if getattr(m, "ACCEPTS_DIRECTORY", False)]
        for m in dir_readers:
            if m.sniff(b"", p) > 0:
                return m
        raise UnknownFormatError(
            p, "a profile file (folders are read only when they hold Julia .mem files)",
            found="a folder",
        )
    try:
        head = read_head(p)
    except PermissionError:
        raise UnreadableFileError(p) from None
    if not head.strip():
        raise UnknownFormatError(p, "a profile, but the file is empty", line=None)
    by_magic = _by_magic(head, p)
    if by_magic is not None:
        return by_magic
    regs = readers()
    best: tuple[float, ModuleType | None] = (0.0, None)
    for m in regs.values():
        try:
            score = float(m.sniff(head, p))
        except Exception:  # a sniffer must never break detection of other formats
            score = 0.0
        if score > best[0]:
            best = (score, m)
    if best[1] is None:
        first = head[:80]
        binary = b"\x00" in head[:4096]
        raise UnknownFormatError(
            p,
            f"a profile in a supported format ({supported_formats()})",
            found="binary data" if binary else first.decode("utf-8", "replace").split("\n")[0],
        )
    return best[1]


def _by_magic(head: bytes, path: Path) -> ModuleType | None:
    """The reader named in :data:`MAGIC_READERS` for ``head``'s first bytes, imported
    alone, if its ``sniff`` agrees; None to ask every reader."""
    for prefix, name in MAGIC_READERS.items():
        if head.startswith(prefix):
            mod = importlib.import_module(f".{name}", __name__.rpartition(".")[0])
            try:
                if float(mod.sniff(head, path)) >= 1.0:
                    return mod
            except Exception:  # a sniffer must never break detection
                return None
    return None


def load(
    path: str | Path,
    *,
    format: str | None = None,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    **options: object,
) -> Profile:
    """Detect (unless ``format`` is given) and read one profile.

    ``options`` are reader-specific keywords (``event=`` for perf, ``sample_type=`` for
    pprof); readers ignore the ones they do not know.
    """
    p = Path(path)
    if format is not None:
        try:
            mod = readers()[format]
        except KeyError:
            raise UnknownFormatError(p, f"a known format id ({', '.join(readers())})",
                                     found=format) from None
    else:
        mod = detect(p)
    try:
        return mod.read(p, lenient=lenient, progress=progress, **options)
    except ParseError:
        raise
    except PermissionError:
        raise UnreadableFileError(p) from None
    except (UnicodeDecodeError, ValueError, IndexError, KeyError, EOFError, OSError,
            OverflowError) as e:
        # A reader bug or an input we did not foresee: still a located, readable message.
        raise ParseError(p, f"a valid {mod.DESCRIPTION}", found=f"{type(e).__name__}: {e}") from e
