"""Profile readers (one module per format) and the common columnar model. No Qt here.

The names below are loaded on first use (PEP 562 ``__getattr__``): importing
``parsers.errors`` alone, as the command line's option parser does, must not pay for
numpy and the readers.  ``parsers.detect`` is the detection *function*, as it always was
(the module is ``sys.modules["parsers.detect"]``, e.g. ``from parsers.detect import
readers``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_WHERE = {
    "load": "detect", "readers": "detect", "supported_formats": "detect",
    "ParseError": "errors", "ProfdiffError": "errors", "UnknownFormatError": "errors",
    "FrameTable": "model", "Kind": "model", "Metric": "model", "Profile": "model",
    "Unit": "model",
}

__all__ = sorted([*_WHERE, "detect"])


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """``parsers.detect`` stays the function even after the import system binds the
    submodule of the same name to the package."""

    @property
    def detect(self):  # noqa: D401 - the function
        return importlib.import_module(".detect", __name__).detect

    @detect.setter
    def detect(self, _value) -> None:
        pass


sys.modules[__name__].__class__ = _Package
