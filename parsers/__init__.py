"""Profile readers (one module per format) and the common columnar model. No Qt here."""

from .detect import detect, load, readers, supported_formats
from .errors import ParseError, ProfdiffError, UnknownFormatError
from .model import FrameTable, Kind, Metric, Profile, Unit

__all__ = [
    "FrameTable", "Kind", "Metric", "ParseError", "ProfdiffError", "Profile", "Unit",
    "UnknownFormatError", "detect", "load", "readers", "supported_formats",
]
