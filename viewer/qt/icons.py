"""The app's icons, from the installed package's resources (:mod:`viewer.bundled`)."""

from __future__ import annotations

from PySide6.QtGui import QIcon

from profdiff.viewer.bundled import SAMPLE_PAIR, resource, sample_pair

__all__ = ["SAMPLE_PAIR", "icon", "sample_pair"]


def icon(name: str) -> QIcon:
    p = resource(f"{name}.svg")
    return QIcon(str(p)) if p is not None else QIcon()
