"""The flat comparison aligned ahead, beside the tree's, when the tab shown first reads it
(:meth:`viewer.session.Session.align_ahead`, the loader's ``ahead``): one alignment,
whichever thread asks first, the same comparison for every view, and none at all when
the first tab does not need it."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.parsers.errors import ProfdiffError
from profdiff.viewer import compare
from profdiff.viewer.session import Session, SessionSpec

DATA = Path(__file__).resolve().parents[1] / "data"
HS1, HS2 = DATA / "hs-ad" / "v1" / "ad.prof", DATA / "hs-ad" / "v2" / "ad.prof"
FV = DATA / "format-views"


def _spy_align(monkeypatch) -> list[tuple[str, str]]:
    """Record (mode, thread name) of every alignment."""
    calls: list[tuple[str, str]] = []
    real = compare.align

    def align(profiles, **kw):
        calls.append((kw.get("mode", "tree"), threading.current_thread().name))
        return real(profiles, **kw)

    monkeypatch.setattr(compare, "align", align)
    return calls


def test_asked_while_aligning_ahead_waits_for_that_comparison(monkeypatch) -> None:
    """A thread asking for the flat comparison while it is being aligned ahead gets that
    one: aligned once, not twice."""
    real = compare.align
    started, go = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow_align(profiles, **kw):
        calls.append(threading.current_thread().name)
        started.set()
        assert go.wait(10)
        return real(profiles, **kw)

    monkeypatch.setattr(compare, "align", slow_align)
    s = Session(SessionSpec(), [load(HS1), load(HS2)])
    ahead = s.align_ahead("flat")
    assert started.wait(10)
    got: list = []
    asker = threading.Thread(target=lambda: got.append(s.flat))
    asker.start()
    asker.join(0.2)
    assert asker.is_alive()  # waiting for the alignment ahead
    go.set()
    asker.join(10)
    ahead.join(10)
    assert calls == ["profdiff-align-flat"]
    assert got[0] is s.flat is s.built("flat")
    ref = compare.align([load(HS1), load(HS2)], mode="flat")
    assert list(got[0].keys) == list(ref.keys)
    assert np.array_equal(got[0].values["time_s"], ref.values["time_s"])


def test_a_failure_ahead_is_raised_where_the_comparison_is_asked_for(monkeypatch) -> None:
    """The thread ahead keeps no failure: the views' own call aligns again and raises
    there (the window's message bar names it), or succeeds."""
    real = compare.align

    def align(profiles, **kw):
        if threading.current_thread().name == "profdiff-align-flat":
            raise ProfdiffError("ahead only")
        return real(profiles, **kw)

    monkeypatch.setattr(compare, "align", align)
    s = Session(SessionSpec(), [load(HS1), load(HS2)])
    s.align_ahead("flat").join(10)
    assert s.built("flat") is None
    assert s.flat.n_rows == compare.align([load(HS1), load(HS2)], mode="flat").n_rows

    monkeypatch.setattr(compare, "align", lambda *a, **k: (_ for _ in ()).throw(
        ProfdiffError("everywhere")))
    s2 = Session(SessionSpec(), [load(HS1), load(HS2)])
    s2.align_ahead("flat").join(10)
    with pytest.raises(ProfdiffError, match="everywhere"):
        s2.comparison("flat")


@pytest.fixture
def win(make_window):
    return make_window(1400, 900, show=True)


def test_a_pair_opening_on_the_summary_aligns_the_flat_comparison_ahead(win, monkeypatch):
    calls = _spy_align(monkeypatch)
    win.load_paths([str(HS1), str(HS2)])
    assert win.tabs.tabText(win.tabs.currentIndex()) == "Summary"
    assert ("flat", "profdiff-align-flat") in calls
    assert [c for c in calls if c[0] == "flat"] == [("flat", "profdiff-align-flat")]
    assert win.summary_view.summary is not None
    assert win.session.built("flat") is win.session.flat


def test_view_diff_aligns_no_flat_comparison(win, monkeypatch):
    """``--view diff``: the first paint reads the tree only; the flat comparison waits
    for a tab that reads it (here the Summary this bare window stays on: the app's
    ``--view`` would have switched to the diff tree first)."""
    calls = _spy_align(monkeypatch)
    win.first_view = "diff"
    win.load_paths([str(HS1), str(HS2)])
    assert calls[0] == ("tree", "MainThread")
    assert not any(name == "profdiff-align-flat" for _, name in calls)


@pytest.mark.parametrize("files", [
    [FV / "hs-ad-v1.hp", FV / "hs-ad-v2.hp"],  # opens on Heap over time
    [HS1],  # one run opens on Side by side
])
def test_runs_opening_elsewhere_align_nothing_ahead(win, monkeypatch, files):
    calls = _spy_align(monkeypatch)
    win.load_paths([str(p) for p in files])
    assert win.tabs.tabText(win.tabs.currentIndex()) != "Summary"
    assert not any(name == "profdiff-align-flat" for _, name in calls)
