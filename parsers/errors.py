"""Errors raised by readers.

Every reader reports bad input through :class:`ParseError`, which carries the file,
the 1-based line (or byte offset for binary formats), what was expected and what
was found.  The CLI and the GUI print ``str(error)`` and never a traceback, so the
message must stand on its own.
"""

from __future__ import annotations

from os import PathLike


class ProfdiffError(Exception):
    """Base class of every error profdiff reports to a user (CLI exit 2, GUI message bar)."""


class ParseError(ProfdiffError):
    """A file could not be read as the format it claims (or any supported format).

    ``line`` is 1-based; ``None`` when the problem is about the whole file (empty,
    binary).  ``offset`` is used instead of ``line`` for binary formats.  ``found`` may
    be the raw bytes a binary reader met (see :func:`found_text`).
    """

    def __init__(
        self,
        path: str | PathLike[str] | None,
        expected: str,
        *,
        line: int | None = None,
        found: str | bytes | None = None,
        offset: int | None = None,
    ) -> None:
        self.path = str(path) if path is not None else "<input>"
        self.line = line
        self.offset = offset
        self.expected = expected
        self.found = found_text(found) if isinstance(found, bytes) else found
        super().__init__(self._message())

    def _message(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        elif self.offset is not None:
            where += f" (byte {self.offset})"
        msg = f"{where}: expected {self.expected}"
        if self.found is not None:
            found = self.found if len(self.found) <= 120 else self.found[:117] + "..."
            msg += f", found {found!r}"
        return msg


def found_text(raw: bytes) -> str:
    """The bytes a reader found, as text for a message: decoded as UTF-8 with errors
    replaced.  Why: the message quotes ``found`` with ``repr`` of a *string*, which
    escapes control characters readably ('\\tSun Nov'); a caller passing ``repr(bytes)``
    showed the user a Python literal inside that ("b'\\tSun Nov'")."""
    return raw.decode("utf-8", "replace")


class UnreadableFileError(ParseError):
    """The file exists but may not be read (permissions)."""

    def __init__(self, path: str | PathLike[str]) -> None:
        super().__init__(path, "a readable file", found="permission denied")

    def _message(self) -> str:
        return f"{self.path}: permission denied (the file cannot be read)"


class UnknownFormatError(ParseError):
    """No reader recognised the file; the message lists the supported formats."""


class ExternalToolError(ProfdiffError):
    """An external program a reader needs (``perf``) is missing or failed."""
