"""Qt's log messages reach stderr, but for a platform plugin's notes on what it lacks
(:mod:`viewer.qt.qt_messages`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from profdiff.viewer.qt.qt_messages import PLATFORM_NOTES, passing_on

HS = Path(__file__).parents[1] / "data/hs-ad"


def test_a_platform_note_is_dropped_and_every_other_message_passed_on():
    got: list[tuple] = []
    handler = passing_on(lambda *msg: got.append(msg))
    for note in PLATFORM_NOTES:
        handler("warning", None, note)
    handler("warning", None, "QPainter::begin: Paint device returned engine == 0")
    handler("critical", "ctx", "propagateSizeHints() is not what this says")
    assert got == [("warning", None, "QPainter::begin: Paint device returned engine == 0"),
                   ("critical", "ctx", "propagateSizeHints() is not what this says")]


def _screenshot(tmp_path: Path, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "profdiff.viewer.qt.app", *files,
                           "--screenshot", str(tmp_path / "shot.png")],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_screenshot_offscreen_writes_nothing_but_real_messages_to_stderr(tmp_path):
    """The offscreen plugin's note came once or twice a run (the window's minimum size
    changes as it is built); a file that cannot be read is still said."""
    ok = _screenshot(tmp_path, str(HS / "v1/ad.prof"), str(HS / "v2/ad.prof"))
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""
    empty = _screenshot(tmp_path)
    assert empty.returncode == 0 and empty.stderr == ""
    bad = tmp_path / "cut.prof"
    bad.write_bytes((HS / "v2/ad.prof").read_bytes()[:300])
    failed = _screenshot(tmp_path, str(HS / "v1/ad.prof"), str(bad))
    assert failed.returncode == 2
    assert "cut.prof" in failed.stderr and "propagateSizeHints" not in failed.stderr
