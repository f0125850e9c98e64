"""Reading several runs at once (:func:`viewer.session.load_slots`): the files of a
comparison are read side by side, yet each result, error and kept profile stays in its
slot, and a cancel stops them all."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from profdiff.parsers import load
from profdiff.viewer import session as session_mod
from profdiff.viewer.session import Cancelled, SessionSpec, Slot, load_slots

DATA = Path(__file__).resolve().parents[1] / "data" / "hs-ad"


def _pair(tmp_path: Path) -> list[str]:
    out = []
    for v in ("v1", "v2"):
        (tmp_path / v).mkdir()
        out.append(str(shutil.copy(DATA / v / "ad.prof", tmp_path / v / "ad.prof")))
    return out


def test_two_files_are_read_at_the_same_time(tmp_path, monkeypatch) -> None:
    """Each read waits until the other has started: one after the other, the first
    would time out at the barrier and its slot would be an error."""
    monkeypatch.setattr(session_mod, "read_workers", lambda n: min(n, 2))
    both = threading.Barrier(2, timeout=10)

    def loader(path: str, **kw: object):
        both.wait()
        return load(path, **kw)

    a, b = _pair(tmp_path)
    out = load_slots(SessionSpec(), [Slot(a), Slot(b)], loader=loader)
    assert out.errors == []
    assert out.loaded == [a, b]
    assert [p.path for p in out.slot_runs] == [load(a).path, load(b).path]
    assert [p.totals["total_ticks"] for p in out.slot_runs] == [2877, 3791]  # GHC's header


def test_a_bad_file_keeps_its_slot_and_the_others_read(tmp_path) -> None:
    a, b = _pair(tmp_path)
    bad = tmp_path / "cut.prof"
    bad.write_bytes(Path(a).read_bytes()[:300])
    before = load(b)
    out = load_slots(SessionSpec(), [Slot(a), Slot(str(bad), previous=before), Slot(b)])
    assert out.loaded == [a, b]
    assert [e[0] for e in out.errors] == [str(bad)]
    assert str(bad) in out.errors[0][1]
    assert out.slot_runs[1] is before  # what was shown stays shown
    assert out.slot_runs[0].totals["total_ticks"] == 2877 and out.slot_runs[2].totals["total_ticks"] == 3791


def test_cancel_stops_every_reader(tmp_path) -> None:
    a, b = _pair(tmp_path)
    with pytest.raises(Cancelled):
        load_slots(SessionSpec(), [Slot(a), Slot(b)], cancelled=lambda: True)


def test_progress_rises_to_nine_tenths(tmp_path) -> None:
    a, b = _pair(tmp_path)
    seen: list[float] = []
    load_slots(SessionSpec(), [Slot(a), Slot(b)], progress=seen.append)
    assert seen and all(0.0 <= f <= 0.9 for f in seen)
    assert max(seen) == pytest.approx(0.9)


@pytest.mark.parametrize(("n_files", "cores", "share"), [(2, 2, 1), (1, 2, 2), (2, 5, 2),
                                                          (3, 2, 1)])
def test_each_read_gets_its_share_of_the_cores(tmp_path, monkeypatch, n_files, cores,
                                               share) -> None:
    """Files read side by side split the cores between them (``cores=`` to the reader),
    so two perf.data on two cores run one perf each instead of two."""
    monkeypatch.setattr(session_mod, "usable_cores", lambda: cores)
    got: list[object] = []

    def loader(path: str, **kw: object):
        got.append(kw.get("cores"))
        return load(path, **kw)

    paths = (_pair(tmp_path) * 2)[:n_files]
    out = load_slots(SessionSpec(), [Slot(p) for p in paths], loader=loader)
    assert out.errors == []
    assert got == [share] * n_files
