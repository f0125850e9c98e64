"""Files that ship inside the installed package: icons, stylesheet, the sample comparison.

Why ``importlib.resources`` and not paths relative to this file: in the source tree the
folders sit side by side (``resources/``, ``samples/``), but installed they are the
package data of ``profdiff.resources`` and ``profdiff.samples`` wherever pip put them
(and an editable install maps those names back to the source folders).  Asking the
import system for the package is right in every case; a path computed from
``__file__`` is right in one.

Qt-free: the Qt side (``viewer/qt/icons.py``, ``viewer/qt/app.py``) turns these paths
into icons and the style sheet.
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path

RESOURCES_PACKAGE = "profdiff.resources"
SAMPLES_PACKAGE = "profdiff.samples"
SAMPLE_PAIR = ("hs-ad-v1.prof", "hs-ad-v2.prof")
"""The bundled comparison (baseline, new): a GHC ``.prof`` pair of the hs-ad program."""

_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def _file(package: str, name: str) -> Path | None:
    """A real file-system path to ``name`` in ``package``, or None when it is missing.

    Packages installed as plain folders (the usual case) give their own path; a zipped
    install is extracted to a temporary file kept until exit, because Qt and the readers
    need a path, not a stream."""
    try:
        res = resources.files(package).joinpath(name)
    except (ModuleNotFoundError, TypeError):
        return None
    if not res.is_file():
        return None
    if isinstance(res, Path):
        return res
    return _extracted.enter_context(resources.as_file(res))


def resource(name: str) -> Path | None:
    """An icon or style sheet of ``profdiff.resources`` (e.g. ``"open.svg"``)."""
    return _file(RESOURCES_PACKAGE, name)


def sample_pair() -> tuple[list[Path], list[str]]:
    """The bundled sample comparison: (found paths, names of the missing files)."""
    found: list[Path] = []
    missing: list[str] = []
    for name in SAMPLE_PAIR:
        p = _file(SAMPLES_PACKAGE, name)
        if p is None:
            missing.append(f"{SAMPLES_PACKAGE}/{name}")
        else:
            found.append(p)
    return found, missing
