"""Watch mode never reports or compares a half-written file (issue 18): chunked writes
with pauses longer than the settle interval, a growing ``.hp``, files renamed into the
folder, and a corrupt file among good ones."""

from __future__ import annotations

import io
import os
import threading
import time
from argparse import Namespace
from pathlib import Path

import pytest
from watch_helpers import SETTLE, WATCH_DATA, wait_for

from parsers import load
from viewer.runs import RunsTable
from viewer.watch import FolderWatcher, Landed
from viewer.watch_cli import _Printer

HP = Path(__file__).resolve().parent.parent / "data" / "ghc-hp" / "hs-ad-v1.hp"


class Rec:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.landed: list[Landed] = []

    def __call__(self, x: Landed) -> None:
        with self.lock:
            self.landed.append(x)

    def of(self, name: str) -> list[Landed]:
        with self.lock:
            return [x for x in self.landed if os.path.basename(x.path) == name]


@pytest.fixture
def watched(tmp_path):
    made: list[FolderWatcher] = []

    def start(folder: Path, rec: Rec, settle: float = SETTLE) -> FolderWatcher:
        w = FolderWatcher(folder, settle=settle, on_landed=rec).start()
        made.append(w)
        return w

    yield start
    for w in made:
        w.stop()
        assert not w.errors, w.errors


def _line_end_cuts(data: bytes, n: int) -> list[int]:
    """n-1 cut points at line ends inside the cost-centre tree (the hardest cuts: every
    chunk so far still parses)."""
    tree = data.index(b"COST CENTRE", data.index(b"COST CENTRE") + 1)
    ends = [i + 1 for i in range(tree, len(data) - 1) if data[i] == 10]
    return [ends[len(ends) * k // n] for k in range(1, n)]


def test_prof_written_in_chunks_with_long_pauses_is_writing_until_whole(tmp_path, watched):
    data = (WATCH_DATA / "v1" / "ad.prof").read_bytes()
    whole = load(WATCH_DATA / "v1" / "ad.prof")
    rec = Rec()
    watched(tmp_path, rec)
    dest = tmp_path / "ad.prof"
    cuts = _line_end_cuts(data, 4)
    with open(dest, "wb") as f:
        prev = 0
        for cut in [*cuts, len(data)]:
            f.write(data[prev:cut])
            f.flush()
            prev = cut
            if cut < len(data):
                # longer than the settle interval: each chunk is read on its own
                n = len(rec.of("ad.prof"))
                wait_for(lambda n=n: len(rec.of("ad.prof")) > n, timeout=15)
    wait_for(lambda: any(x.ok and not x.writing for x in rec.of("ad.prof")), timeout=15)
    seen = rec.of("ad.prof")
    assert len(seen) >= 4
    *early, last = seen
    assert all(x.writing and x.incomplete and x.reason for x in early), \
        [(x.size, x.incomplete) for x in early]
    assert not last.writing and last.profile.n_nodes == whole.n_nodes
    table = RunsTable(tmp_path)
    for x in seen:
        table.add(x)
    assert len(table) == 1 and table[0].status == "ok"


def test_growing_hp_replaces_its_own_run_and_is_not_compared_with_itself(tmp_path, watched):
    text = HP.read_bytes()
    samples = [i for i in range(len(text)) if text.startswith(b"END_SAMPLE", i)]
    stops = [text.index(b"\n", samples[k]) + 1 for k in (len(samples) // 4,
                                                          len(samples) // 2, -1)]
    rec = Rec()
    watched(tmp_path, rec)
    dest = tmp_path / "run.hp"
    prev = 0
    with open(dest, "wb") as f:
        for stop in stops:  # each stop is a whole sample: the file looks complete
            f.write(text[prev:stop])
            f.flush()
            prev = stop
            n = len(rec.of("run.hp"))
            wait_for(lambda n=n: len(rec.of("run.hp")) > n, timeout=15)
    seen = rec.of("run.hp")
    assert [x.size for x in seen] == stops
    table = RunsTable(tmp_path)
    actions = [table.add(x)[1] for x in seen]
    assert actions == ["new", "replaced", "replaced"] and len(table) == 1
    assert table[0].landed.size == len(text)
    # the headless printer does not compare the grown file with its own earlier version
    out = io.StringIO()
    pr = _Printer(Namespace(baseline=None, format=None, lenient=False, json=False, top=3,
                            event=None, sample_type=None, group_by=None, split_by=None,
                            demangle=None), tmp_path, out)
    for x in seen:
        pr.landed(x)
    assert out.getvalue().count("(first run)") == 3, out.getvalue()
    assert " vs " not in out.getvalue()


def test_file_renamed_into_the_folder_lands_once_whole(tmp_path, watched):
    folder = tmp_path / "watched"
    folder.mkdir()
    outside = tmp_path / "ad.prof.part"
    rec = Rec()
    watched(folder, rec)
    outside.write_bytes((WATCH_DATA / "v2" / "ad.prof").read_bytes())
    time.sleep(SETTLE)  # the file is old enough by the time it arrives
    os.rename(outside, folder / "ad.prof")
    x = wait_for(lambda: rec.of("ad.prof"), timeout=15)[0]
    assert x.ok and not x.writing
    assert x.profile.totals["total_alloc_bytes"] == 6560334592
    time.sleep(3 * SETTLE)
    assert len(rec.of("ad.prof")) == 1


def test_corrupt_file_among_good_ones_is_an_error_and_the_good_ones_compare(tmp_path,
                                                                            watched):
    rec = Rec()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "ad.prof").write_bytes((WATCH_DATA / "v1" / "ad.prof").read_bytes())
    bad = bytearray((WATCH_DATA / "v1" / "ad.prof").read_bytes())
    at = bad.index(b"\n", len(bad) // 2) + 1
    bad[at:at] = b" oops   Main  <none>  1  2  3.x  0.0  0.0  0.0\n"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ad.prof").write_bytes(bytes(bad))
    watched(tmp_path, rec)
    wait_for(lambda: len(rec.landed) == 2, timeout=15)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "ad.prof").write_bytes((WATCH_DATA / "v2" / "ad.prof").read_bytes())
    wait_for(lambda: len(rec.landed) == 3, timeout=15)
    by_dir = {Path(x.path).parent.name: x for x in rec.landed}
    assert by_dir["b"].error and "ad.prof:" in by_dir["b"].error and "3.x" in by_dir["b"].error
    assert by_dir["a"].ok and by_dir["c"].ok
    table = RunsTable(tmp_path)
    for x in sorted(rec.landed, key=lambda x: x.seq):
        table.add(x)
    pair = table.compared()
    assert [table.label(r) for r in pair] == ["a/ad.prof", "c/ad.prof"]
