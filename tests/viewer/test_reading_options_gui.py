"""File ▸ Reading options…: the command line's reader options in the window, offered from
what the open runs have, and the runs read again with them (real files; situations made
in ``tmp_path``)."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import numpy as np

from profdiff.parsers.proto import profile_pb2
from profdiff.viewer.compare import Status

DATA = Path(__file__).resolve().parents[1] / "data"
TTD = DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz"
C_VM = (DATA / "export" / "c-vm-v1.perf.script.txt.gz",
        DATA / "export" / "c-vm-v2.perf.script.txt.gz")
DOTNET = DATA / "speedscope" / "dotnet-trace-robotcleaner-evented.speedscope.json.gz"


def _stray_allocation_pair(tmp_path: Path) -> tuple[Path, Path]:
    """The real TTD allocation profile, and a copy with one more 32-byte allocation of a
    Clade (a copy of the file's first such sample)."""
    prof = profile_pb2.Profile()
    prof.ParseFromString(gzip.decompress(TTD.read_bytes()))
    names = {f.id: prof.string_table[f.name] for f in prof.function}
    loc = {x.id: x for x in prof.location}
    stray = next(s for s in prof.sample if list(s.value) == [1, 32]
                 and names[loc[s.location_id[0]].line[0].function_id] == "Alloc: Clade")
    prof.sample.append(stray)
    base, cur = tmp_path / "base.pb.gz", tmp_path / "current.pb.gz"
    shutil.copy(TTD, base)
    cur.write_bytes(gzip.compress(prof.SerializeToString()))
    return base, cur


def _row(cmp, name: str) -> int:
    return int(np.flatnonzero(cmp.name == name)[0])


def test_julia_stray_allocation_is_a_change_once_every_allocation_is_recorded(
        make_window, tmp_path):
    """Read as samples (the default), one more 32-byte allocation of 2,701 is within
    sampling error; the dialog's "recorded at sample_rate 1" reads the pair again with
    exact counts, and then the Clade row, and only rows on its stack, changed."""
    base, cur = _stray_allocation_pair(tmp_path)
    win = make_window()
    win.load_paths([str(base), str(cur)])
    win.flush_pending()
    assert all(p.meta.get("allocations_sampled") for p in win.runs)
    flat = win.session.judge_statuses(win.flat_comparison)
    clade = _row(flat, "Alloc: Clade")
    assert flat.status[clade] == Status.SAME and flat.status_counts()["changed"] == 0
    win.tabs.setCurrentWidget(win.summary_view)
    assert "File ▸ Reading options" in win.summary_view.toPlainText()

    win.open_reading_options()
    dlg = win.reading_dialog
    assert dlg.julia_box.isVisibleTo(dlg) and not dlg.perf_box.isVisibleTo(dlg)
    assert not dlg.rate_known.isChecked() and not dlg.rate.isEnabled()
    dlg.rate_known.setChecked(True)
    assert dlg.rate.isEnabled() and dlg.rate.value() == 1.0
    dlg.accept()
    win.flush_pending()

    assert win.spec.reader_options == (("alloc_sample_rate", 1.0),)
    assert not any(p.meta.get("allocations_sampled") for p in win.runs)
    flat = win.session.judge_statuses(win.flat_comparison)
    clade = _row(flat, "Alloc: Clade")
    assert flat.status[clade] == Status.CHANGED
    assert flat.delta("self_alloc_count")[clade] == 1
    assert flat.delta("self_alloc_bytes")[clade] == 32
    changed = flat.status == Status.CHANGED
    same_counts = np.ones(flat.n_rows, dtype=bool)
    for m in ("self_alloc_count", "total_alloc_count", "self_alloc_bytes",
              "total_alloc_bytes"):
        v = flat.values[m]
        same_counts &= v[:, 0] == v[:, 1]
    assert not (changed & same_counts).any()  # rows off the stray's stack stay the same
    assert "File ▸ Reading options" not in win.summary_view.toPlainText()


def test_perf_choices_come_from_the_runs_and_apply(make_window):
    """The c-vm pair: the dialog lists the runs' one event with its samples and shows
    only the perf section; frame identity "symbol" reads both runs again without DSOs."""
    win = make_window()
    win.load_paths([str(p) for p in C_VM])
    win.flush_pending()
    win.open_reading_options()
    dlg = win.reading_dialog
    assert dlg.perf_box.isVisibleTo(dlg)
    assert not dlg.julia_box.isVisibleTo(dlg) and not dlg.pprof_box.isVisibleTo(dlg)
    items = [dlg.event_box.itemText(i) for i in range(dlg.event_box.count())]
    assert items[1:] == ["cpu-clock:ppp (7,898 samples)"]  # 3,130 + 4,768
    dlg.group_by.setCurrentIndex(dlg.group_by.findData("symbol"))
    assert dlg.chosen()[0]["group_by"] == "symbol"
    dlg.accept()
    win.flush_pending()
    assert [p.meta["group_by"] for p in win.runs] == ["symbol", "symbol"]
    assert win.spec.reader_options == (("group_by", "symbol"),)
    # reopened: the dialog shows what is set
    win.open_reading_options()
    assert win.reading_dialog.group_by.currentData() == "symbol"
    win.reading_dialog.reject()


def test_an_option_a_file_cannot_be_read_with_keeps_the_runs(make_window):
    """An event the files do not have: the message names the file, the runs shown stay
    as they were read."""
    win = make_window()
    win.load_paths([str(p) for p in C_VM])
    win.flush_pending()
    before = list(win.runs)
    win.set_reading_options({"event": "cycles"}, False)
    win.flush_pending()
    assert win.load_errors and all("c-vm-v" in e and "cycles" in e for e in win.load_errors)
    assert win.runs == before and win.comparison is not None


def test_a_file_with_a_corrupt_line_says_how_to_read_it_and_is_read(make_window, tmp_path):
    """The dotnet-trace speedscope file leaves a frame open (speedscope refuses it): the
    window's message says the dialog's "Skip corrupt lines" reads it, and ticking it
    reads the file that failed, with its warning."""
    f = tmp_path / DOTNET.name
    shutil.copy(DOTNET, f)
    win = make_window()
    win.load_paths([str(f)])
    win.flush_pending()
    (err,) = win.load_errors
    assert str(f) in err and "events[6601]" in err
    hint = re.search(r"; File ▸ Reading options ▸ Skip corrupt lines reads it, with (\d+) "
                     r"warnings$", err)
    assert hint is not None and not win.runs
    win.set_reading_options({}, True)
    win.flush_pending()
    assert not win.load_errors and len(win.runs) == 1
    assert any("events[6601]" in w for w in win.runs[0].warnings)
    assert len(win.runs[0].warnings) == int(hint.group(1))
