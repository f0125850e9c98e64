"""FolderWatcher with a real watchdog observer on a temporary folder, and the runs table."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from watch_helpers import SETTLE, WATCH_DATA, copy, wait_for, write_chunks

from parsers import load
from viewer.compare import align
from viewer.runs import RunsTable, run_stem, top_changes
from viewer.watch import FolderWatcher, Landed

V1_ALLOC = 4291393792  # "total alloc = 4,291,393,792 bytes" in v1/ad.prof
V2_ALLOC = 6560334592


class Recorder:
    """Collects watcher callbacks (they arrive in the watcher's thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.landed: list[Landed] = []
        self.removed: list[str] = []
        self.scan_done: list[int] = []

    def on_landed(self, x: Landed) -> None:
        with self.lock:
            self.landed.append(x)

    def on_removed(self, p: str) -> None:
        with self.lock:
            self.removed.append(p)

    def on_scan_done(self, n: int) -> None:
        with self.lock:
            self.scan_done.append(n)

    def names(self) -> list[str]:
        with self.lock:
            return [os.path.basename(x.path) for x in self.landed]


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def watch(tmp_path, rec):
    made: list[FolderWatcher] = []

    def start(**kw) -> FolderWatcher:
        w = FolderWatcher(tmp_path, settle=kw.pop("settle", SETTLE), on_landed=rec.on_landed,
                          on_removed=rec.on_removed, on_scan_done=rec.on_scan_done, **kw)
        made.append(w.start())
        return w

    yield start
    for w in made:
        w.stop()
        assert not w._thread.is_alive(), "watcher thread did not stop"
        assert not w.errors, w.errors


def test_chunked_write_is_loaded_once_and_complete(tmp_path, rec, watch):
    w = watch(settle=0.5)
    wait_for(lambda: rec.scan_done)  # empty folder: scan finishes at once
    data = (WATCH_DATA / "v1" / "ad.prof").read_bytes()
    dest = tmp_path / "ad.prof"
    # pauses well below the settle interval: one write as far as the watcher is concerned
    write_chunks(dest, data, n=5, pause=0.05)
    wait_for(lambda: rec.landed)
    assert w.wait_idle(10)
    assert len(rec.landed) == 1, [x.size for x in rec.landed]
    x = rec.landed[0]
    assert x.ok and not x.incomplete
    assert x.format == "ghc-prof"
    assert x.size == len(data)
    assert x.profile.totals["total_alloc_bytes"] == V1_ALLOC
    assert not x.initial


@pytest.mark.parametrize("rel,fmt", [("v1/ad.prof", "ghc-prof"),
                                     ("v1/ad.stats.txt", "ghc-rts-s")])
def test_truncated_file_is_marked_and_reloaded_when_completed(tmp_path, rec, watch, rel, fmt):
    watch()
    wait_for(lambda: rec.scan_done)
    data = (WATCH_DATA / rel).read_bytes()
    dest = tmp_path / Path(rel).name
    cut = int(len(data) * 0.6)
    dest.write_bytes(data[:cut])  # cut in the middle of a line; the writer "stalls"
    first = wait_for(lambda: rec.landed)[0]
    assert first.format == fmt
    assert first.incomplete and first.reason
    table = RunsTable(tmp_path)
    run, action = table.add(first)
    assert action == "new" and run.incomplete and run.status.startswith("writing")
    with open(dest, "ab") as f:  # the writer finishes
        f.write(data[cut:])
    wait_for(lambda: len(rec.landed) >= 2)
    second = rec.landed[1]
    assert not second.incomplete and second.ok
    assert second.size == len(data)
    run2, action2 = table.add(second)
    assert run2 is run and action2 == "replaced" and run.status == "ok"
    assert len(table) == 1


def test_deleted_and_renamed_files_update_without_errors(tmp_path, rec, watch):
    a = copy("v1/ad.prof", tmp_path / "a" / "ad.prof")
    b = copy("v2/ad.prof", tmp_path / "b" / "ad.prof")
    watch()
    wait_for(lambda: len(rec.landed) == 2 and rec.scan_done)
    table = RunsTable(tmp_path)
    for x in rec.landed:
        table.add(x)
    a.unlink()
    wait_for(lambda: str(a) in rec.removed)
    assert table.remove_path(str(a)) and len(table) == 1
    renamed = tmp_path / "b" / "renamed.prof"
    b.rename(renamed)
    wait_for(lambda: str(b) in rec.removed and "renamed.prof" in rec.names())
    table.remove_path(str(b))
    table.add(rec.landed[-1])
    assert [table.label(r) for r in table] == ["b/renamed.prof"]
    # removing a whole folder reports the files in it
    c = copy("v1/ad.stats.txt", tmp_path / "c" / "ad.stats.txt")
    wait_for(lambda: "ad.stats.txt" in rec.names())
    for f in (tmp_path / "c").iterdir():
        f.unlink()
    (tmp_path / "c").rmdir()
    wait_for(lambda: str(c) in rec.removed)


def test_startup_scan_is_background_ordered_by_mtime_and_globbed(tmp_path, rec, watch):
    files = [copy("noise-v1/run3/ad.prof", tmp_path / "r3" / "ad.prof"),
             copy("noise-v1/run1/ad.prof", tmp_path / "r1" / "ad.prof"),
             copy("noise-v1/run2/ad.prof", tmp_path / "r2" / "ad.prof"),
             copy("noise-v1/run1/ad.stats.txt", tmp_path / "r1" / "ad.stats.txt")]
    (tmp_path / "README.txt").write_text("not a profile\n")
    now = time.time()
    for i, name in enumerate(["r1", "r2", "r3"]):  # r1 oldest
        os.utime(tmp_path / name / "ad.prof", (now - 100 + i, now - 100 + i))
    t0 = time.monotonic()
    watch(glob="*.prof")
    assert time.monotonic() - t0 < 1.0  # start() does not read anything itself
    wait_for(lambda: rec.scan_done)
    assert rec.scan_done == [3]
    assert [Path(x.path).parent.name for x in rec.landed] == ["r1", "r2", "r3"]
    assert all(x.initial and x.format == "ghc-prof" for x in rec.landed)
    assert len(files) == 4  # the stats file and README exist but do not match / are skipped


def test_many_files_stay_responsive_and_non_profiles_are_skipped(tmp_path, rec, watch):
    src = (WATCH_DATA / "v1" / "ad.stats.txt").read_bytes()
    for i in range(300):
        (tmp_path / f"s{i:03d}.stats.txt").write_bytes(src)
    (tmp_path / "notes.md").write_text("# notes\n")
    t0 = time.monotonic()
    watch()
    assert time.monotonic() - t0 < 1.0
    wait_for(lambda: rec.scan_done, timeout=60)
    assert rec.scan_done == [300]
    assert len(rec.landed) == 300
    assert "notes.md" not in rec.names()


def test_glob_matches_relative_paths_and_stop_is_clean(tmp_path, rec):
    copy("v1/ad.prof", tmp_path / "run1" / "ad.prof")
    copy("v1/ad.stats.txt", tmp_path / "run1" / "ad.stats.txt")
    w = FolderWatcher(tmp_path, glob="run*/*.stats.txt", settle=SETTLE, on_landed=rec.on_landed,
                      on_scan_done=rec.on_scan_done).start()
    try:
        wait_for(lambda: rec.scan_done)
        assert rec.names() == ["ad.stats.txt"]
    finally:
        w.stop()
    assert not w.running and not w._thread.is_alive()
    # after stop, new files are not reported
    copy("v2/ad.prof", tmp_path / "run2" / "ad.prof")
    time.sleep(SETTLE * 2)
    assert rec.names() == ["ad.stats.txt"]


# ------------------------------------------------------------------------------------------
# runs table (Qt-free)
# ------------------------------------------------------------------------------------------
def _landed(path: Path, seq: int = 0) -> Landed:
    p = load(path)
    st = path.stat()
    return Landed(str(path), p.format, st.st_mtime, st.st_size, p, p.incomplete,
                  p.incomplete_reason, None, True, seq)


def test_run_stem():
    assert run_stem("x/ad.prof") == "ad"
    assert run_stem("ad.stats.txt") == "ad"
    assert run_stem("ad.t-machine-readable.txt") == "ad"
    assert run_stem("ad.P.prof") == "ad.P"


def test_stats_log_merges_into_the_profile_row():
    table = RunsTable(WATCH_DATA)
    r1, a1 = table.add(_landed(WATCH_DATA / "v1" / "ad.prof"))
    r2, a2 = table.add(_landed(WATCH_DATA / "v1" / "ad.stats.txt"))
    r3, a3 = table.add(_landed(WATCH_DATA / "v2" / "ad.stats.txt"))  # log first, prof later
    r4, a4 = table.add(_landed(WATCH_DATA / "v2" / "ad.prof"))
    assert (a1, a2, a3, a4) == ("new", "merged", "new", "merged")
    assert r2 is r1 and r4 is r3 and len(table) == 2
    t = r1.totals
    assert t["total_alloc_bytes"] == V1_ALLOC
    assert t["bytes_copied"] == 2690763320  # "2,690,763,320 bytes copied during GC"
    assert t["productivity_pct"] == 64.0
    assert r3.format == "ghc-prof" and r3.totals["total_alloc_bytes"] == V2_ALLOC
    keys = table.total_keys()
    assert keys[:3] == ["total_time_s", "total_ticks", "total_alloc_bytes"]
    assert {"bytes_allocated", "max_residency_bytes", "mut_cpu_s", "gc_cpu_s"} <= set(keys)
    merged = table.profile_of(r1)
    assert merged.totals["bytes_copied"] == 2690763320
    assert merged.totals["total_alloc_bytes"] == V1_ALLOC
    xs, ys = table.series("total_alloc_bytes")
    assert xs.tolist() == [0, 1] and ys.tolist() == [V1_ALLOC, V2_ALLOC]
    xs, ys = table.frame_series("addGrad", "alloc_pct")
    assert ys[0] == pytest.approx(0.0, abs=0.05) and ys[1] == pytest.approx(33.3, abs=0.05)


def test_modes_previous_pinned_picked_and_eviction():
    table = RunsTable(WATCH_DATA, keep_profiles=2)
    runs = [table.add(_landed(WATCH_DATA / "v1" / "ad.prof"))[0]]
    table.pin(runs[0])
    runs += [table.add(_landed(WATCH_DATA / rel))[0]
             for rel in ("noise-v1/run1/ad.prof", "noise-v1/run2/ad.prof", "v2/ad.prof")]
    assert table.compared("previous") == [runs[2], runs[3]]
    assert table.compared("pinned") == [runs[0], runs[3]]
    assert table.compared("picked", [runs[1], runs[2], runs[3]]) == runs[1:]
    # only two profiles kept (the pinned one stays); evicted ones are re-read on demand
    assert [r.profile is not None for r in runs] == [True, False, False, True]
    p = table.profile_of(runs[1])
    assert p is not None and p.totals["total_alloc_bytes"] == V1_ALLOC


def test_top_changes_names_the_regression():
    v1, v2 = load(WATCH_DATA / "v1" / "ad.prof"), load(WATCH_DATA / "v2" / "ad.prof")
    ch = top_changes(align([v1, v2], mode="flat"), n=3)
    # README of the corpus: addGrad individual %alloc goes from 0.0 to 33.3 (of 6.56 GB)
    assert ch[0].startswith("addGrad: +2.") and ch[0].endswith("GB alloc")
    assert len(ch) == 3
    assert top_changes(align([v1, v1], mode="flat")) == []
    # identical allocation, only the run's speed differs: no culprit, only totals
    n1 = load(WATCH_DATA.parent / "hs-ad" / "noise-v1" / "run1" / "ad.prof")
    quiet = top_changes(align([v1, n1], mode="flat"))
    assert quiet and all(":" in c and "%" in c for c in quiet)  # run totals, not rows
    assert not any(c.startswith(("addD", "sumD", "addDelta")) for c in quiet)
    s1, s2 = load(WATCH_DATA / "v1" / "ad.stats.txt"), load(WATCH_DATA / "v2" / "ad.stats.txt")
    ch = top_changes(align([s1, s2], mode="flat"), n=5)
    assert "allocated: +54.5%" in ch  # 6,688,508,720 -> 10,330,... bytes allocated
