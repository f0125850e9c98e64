"""Fixtures for the Qt viewer tests: synthetic GHC-like profiles and the real hs-ad pair."""

from __future__ import annotations

import pytest
from synth_profiles import BASE_STACKS, NEW_STACKS, synth


@pytest.fixture
def pair():
    return synth(BASE_STACKS, "base.prof"), synth(NEW_STACKS, "new.prof")


@pytest.fixture
def make_window(qtbot, tmp_path):
    """A MainWindow with throw-away settings, loading synchronously (so tests need no
    waits), sized ``width x height`` and optionally shown."""
    from PySide6.QtCore import QSettings

    from profdiff.viewer.qt.main_window import MainWindow

    def make(width: int = 1400, height: int = 900, show: bool = False) -> MainWindow:
        w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                       synchronous=True)
        qtbot.addWidget(w)
        w.resize(width, height)
        if show:
            w.show()
        return w

    return make


@pytest.fixture
def model_tester(request):
    """``check(model)``: pytest-qt's model tester (its Python implementation, which fails
    the test with an assertion) on ``model`` now and on every change it signals until the
    test ends.  One tester per model, so a test can watch several.  Unlike
    ``QAbstractItemModelTester`` in Fatal mode, a broken model fails one test instead of
    aborting the whole pytest process."""
    from pytestqt.modeltest import ModelTester

    testers: list[ModelTester] = []

    def check(model) -> ModelTester:
        t = ModelTester(request.config)
        t.check(model, force_py=True)
        testers.append(t)
        return t

    yield check
    for t in testers:
        try:
            t._cleanup()
        except RuntimeError:  # the model (and its widget) was deleted first: nothing to undo
            pass
