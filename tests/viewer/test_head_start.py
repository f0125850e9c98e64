"""The command line's first file read in a forked child while the window is built
(:mod:`viewer.head_start`): the profile handed over is the one the window would have
read, a child that fails or is not needed never changes what the window shows or says,
and a cancelled load leaves no child behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers.model import Profile
from profdiff.viewer import head_start as head_mod
from profdiff.viewer.head_start import HeadStart
from profdiff.viewer.qt import app as app_mod
from profdiff.viewer.qt.loader import load_and_align
from profdiff.viewer.session import Cancelled, SessionSpec, Slot, load_run

DATA = Path(__file__).resolve().parents[1] / "data"
HS_AD = DATA / "hs-ad"
REAL_FILES = [
    HS_AD / "v1" / "ad.P.prof",  # GHC -p text
    DATA / "ghc-ticky" / "hs-ad-v1.ticky.txt",  # ticky: counters in extras
    DATA / "perf" / "script" / "flamegraph-perf-java-stacks-01.txt.gz",  # perf script, gzip
    DATA / "pprof" / "go-resolv-2018-cpu.pprof",  # protobuf
]


def _same(got: Profile, want: Profile) -> None:
    """Every column, table and fact of two profiles equal."""
    assert (got.path, got.format, got.metrics) == (want.path, want.format, want.metrics)
    for col in ("name", "module", "src", "line", "kind"):
        assert np.array_equal(getattr(got.frames, col), getattr(want.frames, col)), col
    assert np.array_equal(got.parent, want.parent)
    assert np.array_equal(got.frame, want.frame)
    for m in want.metrics:
        assert np.array_equal(got.values[m.name], want.values[m.name], equal_nan=True), m.name
        assert not got.values[m.name].flags.writeable  # read-only, as a read gives it
    assert (dict(got.meta), dict(got.totals), got.incomplete, got.warnings) == \
        (dict(want.meta), dict(want.totals), want.incomplete, want.warnings)
    assert (dict(got.rounding), got.default_metric, got.display_metrics) == \
        (dict(want.rounding), want.default_metric, want.display_metrics)
    assert sorted(got.extras) == sorted(want.extras)


def _gone(pid: int) -> bool:
    """Whether the child has ended and been reaped (polled: the reaper is a thread)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_the_profile_handed_over_is_the_one_read_here(path: Path) -> None:
    spec = SessionSpec()
    head = HeadStart.begin(spec, str(path))
    assert head is not None
    seen: list[float] = []
    got = head.adopt(seen.append)
    assert got is not None
    _same(got, load_run(spec, str(path)))
    assert head.closed and _gone(head.pid)
    assert head.adopt() is None  # it serves one load


def test_a_failed_child_leaves_the_read_and_its_message_to_the_window(tmp_path) -> None:
    bad = tmp_path / "cut.prof"
    bad.write_bytes((HS_AD / "v1" / "ad.P.prof").read_bytes()[:1500])  # a cut header
    other = str(HS_AD / "v2" / "ad.P.prof")
    spec = SessionSpec()
    slots = [Slot(str(bad)), Slot(other)]
    want = load_and_align(slots, spec)
    head = HeadStart.begin(spec, str(bad))
    assert head is not None
    assert head.adopt() is None  # the child could not read it either
    got = load_and_align(slots, spec, head=HeadStart.begin(spec, str(bad)))
    assert got.errors == want.errors and got.errors and str(bad) in got.errors[0][1]
    assert got.loaded == want.loaded == [other]


def test_the_load_adopts_it_and_compares_the_same(tmp_path) -> None:
    a, b = str(HS_AD / "v1" / "ad.P.prof"), str(HS_AD / "v2" / "ad.P.prof")
    spec = SessionSpec()
    want = load_and_align([Slot(a), Slot(b)], spec)
    head = HeadStart.begin(spec, a)
    adopted = []
    real_adopt = head.adopt
    head.adopt = lambda *args: adopted.append(1) or real_adopt(*args)
    got = load_and_align([Slot(a), Slot(b)], spec, head=head)
    assert adopted == [1] and head.closed
    assert got.errors == [] and got.loaded == [a, b]
    assert got.tree.n_rows == want.tree.n_rows
    for m in ("time_s", "alloc_bytes", "entries"):
        for run in (0, 1):
            assert np.array_equal(got.tree.value(m, run), want.tree.value(m, run),
                                  equal_nan=True)


@pytest.mark.parametrize("case", ["other options", "other file", "kept run"])
def test_a_load_that_reads_otherwise_closes_it_and_reads_itself(case: str) -> None:
    a, b = str(HS_AD / "v1" / "ad.P.prof"), str(HS_AD / "v2" / "ad.P.prof")
    head = HeadStart.begin(SessionSpec(), a)
    spec = SessionSpec(lenient=True) if case == "other options" else SessionSpec()
    slots = {"other options": [Slot(a), Slot(b)], "other file": [Slot(b), Slot(b)],
             "kept run": [Slot(a, previous=load_run(spec, b)), Slot(b)]}[case]
    assert head.slot_of(spec, slots) is None
    head.adopt = lambda *args: pytest.fail("adopted a read of another kind")
    got = load_and_align(slots, spec, head=head)
    assert got.errors == [] and got.tree is not None
    assert head.closed and _gone(head.pid)


def test_a_cancelled_load_kills_the_child(tmp_path) -> None:
    """The child blocks opening a FIFO nobody writes: it runs until killed."""
    fifo = tmp_path / "never.prof"
    os.mkfifo(fifo)
    head = HeadStart.begin(SessionSpec(), str(fifo))
    assert head is not None
    deadline = time.monotonic() + 0.3
    with pytest.raises(Cancelled):
        head.adopt(cancelled=lambda: time.monotonic() > deadline)
    assert head.closed and _gone(head.pid)


def test_only_a_single_threaded_process_forks() -> None:
    """The program at start-up runs one thread; this test process runs several."""
    code = ("from profdiff.viewer.program_start import set_up_program; set_up_program(); "
            "from profdiff.viewer.head_start import only_thread; print(only_thread())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "True"
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert head_mod.only_thread() is False
    finally:
        stop.set()
        t.join()


def test_the_app_starts_one_for_a_big_first_file_only(tmp_path, monkeypatch) -> None:
    a, b = str(HS_AD / "v1" / "ad.P.prof"), str(HS_AD / "v2" / "ad.P.prof")
    started: list[str] = []
    monkeypatch.setattr(head_mod, "only_thread", lambda: True)
    monkeypatch.setattr(HeadStart, "begin", classmethod(
        lambda cls, spec, path: started.append(path)))
    monkeypatch.setattr(app_mod, "HEAD_START_BYTES", os.path.getsize(a))
    app_mod._head_start(SessionSpec(files=(a, b)))
    assert started == [a]
    started.clear()
    for spec in (SessionSpec(files=(b, a)),  # smaller than the limit
                 SessionSpec(files=(a,)),  # nothing to read beside it
                 SessionSpec(base=(a,), new=(b,)),  # groups
                 SessionSpec(files=(str(tmp_path / "missing.prof"), a))):
        app_mod._head_start(spec)
    assert started == []
    monkeypatch.setattr(head_mod, "only_thread", lambda: False)
    app_mod._head_start(SessionSpec(files=(a, b)))
    assert started == []


def test_the_window_opens_a_pair_through_it(tmp_path) -> None:
    """The program as run (one thread at start-up), its limit lowered so the bundled
    pair is read through a child: the window's screenshot and counts are those of a
    window that read both files itself."""
    a = shutil.copy(HS_AD / "v1" / "ad.P.prof", tmp_path / "a.prof")
    b = shutil.copy(HS_AD / "v2" / "ad.P.prof", tmp_path / "b.prof")
    script = (
        "import sys\n"
        "from profdiff.viewer.program_start import set_up_program; set_up_program()\n"
        "from profdiff.viewer import head_start\n"
        "from profdiff.viewer.qt import app\n"
        "app.HEAD_START_BYTES = int(sys.argv[1])\n"
        "adopt = head_start.HeadStart.adopt\n"
        "def adopted(self, *a, **k):\n"
        "    got = adopt(self, *a, **k)\n"
        "    print('ADOPTED', got is not None, flush=True)\n"
        "    return got\n"
        "head_start.HeadStart.adopt = adopted\n"
        "sys.exit(app._main(sys.argv[2:]))\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    outs = []
    for limit in (0, 1 << 40):
        png = tmp_path / f"shot{limit}.png"
        out = subprocess.run([sys.executable, "-c", script, str(limit), str(a), str(b),
                              "--view", "diff", "--screenshot", str(png)],
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr
        assert png.stat().st_size > 0
        outs.append(out.stdout)
    assert "ADOPTED True" in outs[0]
    assert "ADOPTED" not in outs[1]
    assert (tmp_path / "shot0.png").read_bytes() == (tmp_path / f"shot{1 << 40}.png").read_bytes()


def test_a_short_hand_over_is_refused_not_mapped() -> None:
    """A memfd holding less than the child said (never written whole) gives None: its
    pages past the end would kill the window when read."""
    prof = load_run(SessionSpec(), str(HS_AD / "v1" / "ad.P.prof"))
    memfd = os.memfd_create("test-hand-over")
    try:
        meta, sizes = head_mod._dump(prof, memfd)
        _same(head_mod._load(memfd, meta, sizes), prof)
        os.ftruncate(memfd, sum(sizes) - 1)
        assert head_mod._load(memfd, meta, sizes) is None
    finally:
        os.close(memfd)


_PARENT_ENDS = """
import os, sys
from profdiff.viewer.head_start import HeadStart
from profdiff.viewer.session import SessionSpec
head = HeadStart.begin(SessionSpec(), sys.argv[1])
print(head.pid, flush=True)
os._exit(0)  # as the program ends: no loader left to cancel
"""


def _ended(pid: int) -> bool:
    """Gone, or a zombie waiting for whoever adopted it (a container's init may not
    reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_the_child_ends_with_the_program(tmp_path) -> None:
    """A program that ends while its child reads (a FIFO nobody writes: it would read
    forever) leaves no child behind."""
    fifo = tmp_path / "never.prof"
    os.mkfifo(fifo)
    said, err = tmp_path / "pid.txt", tmp_path / "err.txt"  # files, not pipes: the
    with open(said, "w") as f, open(err, "w") as e:  # child holds them open too
        out = subprocess.run([sys.executable, "-c", _PARENT_ENDS, str(fifo)], stdout=f,
                             stderr=e, timeout=120)
    assert out.returncode == 0, err.read_text()
    pid = int(said.read_text().split()[0])
    deadline = time.monotonic() + 10
    while not _ended(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _ended(pid)
