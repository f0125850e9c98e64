"""Profile readers (one module per format) and the common columnar model. No Qt here.

The names below are loaded on first use (PEP 562 ``__getattr__``): importing
``parsers.errors`` alone, as the command line's option parser does, must not pay for
numpy and the readers.  (``parsers.detect`` is the module; the function is
``parsers.detect.detect``.)
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "load": "detect", "readers": "detect", "supported_formats": "detect",
    "ParseError": "errors", "ProfdiffError": "errors", "UnknownFormatError": "errors",
    "FrameTable": "model", "Kind": "model", "Metric": "model", "Profile": "model",
    "Unit": "model",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'parsers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value
