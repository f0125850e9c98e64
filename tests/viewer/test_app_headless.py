"""The app entry without a usable display: a clear message and the terminal comparison."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profdiff.viewer.memory_settings import glibc_version
from profdiff.viewer.qt import app

HS = Path(__file__).parents[1] / "data/hs-ad"


def test_no_display_falls_back_to_terminal_table(monkeypatch, capsys):
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")
    code = app.main([str(HS / "v1/ad.prof"), str(HS / "v2/ad.prof")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "no display found" in err
    assert "addGrad" in out and "legend:" in out


def test_missing_x11_libraries_are_named_with_packages(monkeypatch, capsys):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")
    monkeypatch.setattr(app, "_missing_xcb_libraries", lambda: ["libxcb-icccm.so.4"])
    code = app.main([str(HS / "v1/ad.prof")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "sudo apt-get install libxcb-icccm4" in err
    assert "total alloc" in out  # profdiff show of the single run


def test_a_missing_library_closes_the_head_start(monkeypatch, capsys):
    """The first file's child is forked before the X11 check (it reads meanwhile); a
    window that cannot open then ends it."""
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")
    closed: list[bool] = []

    class Head:
        def close(self) -> None:
            closed.append(True)

    monkeypatch.setattr(app, "_head_start", lambda spec: Head())
    monkeypatch.setattr(app, "_missing_xcb_libraries", lambda: ["libxcb-icccm.so.4"])
    assert app.main([str(HS / "v1/ad.prof"), str(HS / "v2/ad.prof")]) == 0
    assert closed == [True]
    assert "libxcb-icccm4" in capsys.readouterr().err


@pytest.mark.skipif(not glibc_version(), reason="asks for glibc's libc.so.6 by name")
def test_the_x11_check_does_not_import_qt(tmp_path):
    """Run before the Qt-free modules are imported, the check finds PySide6's X11 plugin
    without importing PySide6 (whose import hook would slow every import after it), and
    asks the dynamic linker for xcb-cursor by the name Qt loads it by."""
    code = ("import sys; from profdiff.viewer.qt import app; "
            "print(isinstance(app._missing_xcb_libraries(), list), 'PySide6' in sys.modules, "
            "app._loads('libc.so.6'), app._loads('libprofdiff-absent.so.0'))")
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}, "DISPLAY": ":0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "True", "False"]


def test_debian_package_names():
    assert app._debian_package("libxcb-render-util.so.0") == "libxcb-render-util0"
    assert app._debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"


def test_start_up_pauses_the_collector_and_freezes_what_it_made():
    """The app's start-up (imports, the QApplication, the window) runs with the cyclic
    collector paused, and what it made is frozen: later collections skip it."""
    import gc

    from profdiff.viewer.qt.app import start_up

    was = gc.isenabled()
    before = gc.get_freeze_count()
    walked: list[int] = []  # objects in the youngest generation as a collection starts

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            walked.append(len(gc.get_objects(generation=0)))

    try:
        with start_up():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]  # objects the collector tracks
            gc.callbacks.append(seen)
        more = [[i] for i in range(gc.get_threshold()[0] + 10)]  # starts a collection
        assert gc.isenabled() == was
        assert gc.get_freeze_count() >= before + len(made)
        # frozen before the collector came back on: no collection walks what start-up
        # made (in the app ~10^5 objects, one 22 ms pass just before they were frozen)
        assert len(more) > gc.get_threshold()[0] and walked and max(walked) < len(made)
    finally:
        if seen in gc.callbacks:
            gc.callbacks.remove(seen)
        gc.unfreeze()
