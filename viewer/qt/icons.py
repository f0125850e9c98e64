"""Where the app finds its icons and the bundled sample comparison."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
RESOURCES = REPO_ROOT / "resources"
SAMPLE_PAIR = ("hs-ad-v1.prof", "hs-ad-v2.prof")


def samples_dir() -> Path:
    return REPO_ROOT / "samples"


def icon(name: str) -> QIcon:
    p = RESOURCES / f"{name}.svg"
    return QIcon(str(p)) if p.exists() else QIcon()
