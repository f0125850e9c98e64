"""``profdiff watch DIR --no-gui`` / ``--json`` / ``--once`` / ``--timeout`` / Ctrl+C."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from watch_helpers import SETTLE, WATCH_DATA, copy, wait_for

from profdiff.viewer.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent


class Proc:
    """A ``profdiff watch`` subprocess whose stdout lines are collected by a thread."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1")
        self.p = subprocess.Popen(
            [sys.executable, "-m", "profdiff.viewer.cli", "watch", *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            encoding="utf-8")
        self.lines: list[str] = []
        self.q: queue.Queue = queue.Queue()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self) -> None:
        for line in self.p.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, pred, timeout: float = 90) -> str:
        def hit():
            return next((x for x in self.lines if pred(x)), None)
        try:
            return wait_for(hit, timeout)
        except AssertionError:
            raise AssertionError(f"no such line; got {self.lines!r}; "
                                 f"stderr so far: {self.stop_and_stderr()!r}") from None

    def stop_and_stderr(self) -> str:
        if self.p.poll() is None:
            self.p.kill()
        return self.p.stderr.read()

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        rc = self.p.wait(timeout)
        self.t.join(5)
        return rc, self.p.stderr.read()


def test_no_gui_prints_a_line_per_landed_run_and_ctrl_c_exits_0(tmp_path):
    proc = Proc(str(tmp_path), "--no-gui", "--settle", str(SETTLE), "--timeout", "60")
    try:
        # the watcher announces itself on stderr only; write the first run once it runs
        copy("v1/ad.prof", tmp_path / "v1" / "ad.prof")
        first = proc.wait_line(lambda x: "v1/ad.prof" in x)
        assert "[ghc-prof]" in first and "(first run)" in first
        assert "total_alloc_bytes=4.29 GB" in first
        copy("v2/ad.prof", tmp_path / "v2" / "ad.prof")
        line = proc.wait_line(lambda x: "v2/ad.prof" in x)
        assert "vs v1/ad.prof: addGrad: +2.18 GB alloc;" in line
        assert "total_alloc_bytes=6.56 GB" in line
        (tmp_path / "v1" / "ad.prof").unlink()
        proc.wait_line(lambda x: x.endswith("removed v1/ad.prof"))
    finally:
        if proc.p.poll() is None:
            proc.p.send_signal(signal.SIGINT)
    rc, err = proc.finish()
    assert rc == 0
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len([x for x in proc.lines if "ad.prof" in x]) == 3  # each landed once


def test_json_lines_with_incomplete_then_completed_file(tmp_path):
    data = (WATCH_DATA / "v2" / "ad.stats.txt").read_bytes()
    copy("v1/ad.stats.txt", tmp_path / "a" / "ad.stats.txt")
    proc = Proc(str(tmp_path), "--json", "--settle", str(SETTLE), "--timeout", "60")
    try:
        proc.wait_line(lambda x: '"a/ad.stats.txt"' in x)
        dest = tmp_path / "b" / "ad.stats.txt"
        dest.parent.mkdir()
        cut = data.index(b"Productivity")
        dest.write_bytes(data[:cut])
        proc.wait_line(lambda x: '"b/ad.stats.txt"' in x)
        with open(dest, "ab") as f:
            f.write(data[cut:])
        proc.wait_line(lambda x: '"b/ad.stats.txt"' in x and '"status": "ok"' in x)
    finally:
        if proc.p.poll() is None:
            proc.p.send_signal(signal.SIGINT)
    rc, err = proc.finish()
    assert rc == 0, err
    docs = [json.loads(x) for x in proc.lines]
    assert [(d["file"], d["status"]) for d in docs] == [
        ("a/ad.stats.txt", "ok"), ("b/ad.stats.txt", "writing"), ("b/ad.stats.txt", "ok")]
    a, inc, done = docs
    assert a["compared_with"] is None and a["totals"]["bytes_allocated"] == 6688508720
    assert "Productivity" in inc["reason"] and inc["top_changes"] == []
    assert done["action"] == "replaced" and done["run"] == inc["run"]
    assert done["compared_with"] == "a/ad.stats.txt"
    assert done["totals"]["bytes_allocated"] == 10332420400  # "10,332,420,400 bytes allocated"
    assert done["total_changes"]["bytes_allocated"]["delta"] == 10332420400 - 6688508720
    assert "allocated: +54.5%" in done["top_changes"]


def _run_main(argv: list[str], capsys, timeout: float = 30) -> tuple[int, str]:
    """``viewer.cli.main`` in a thread with a deadline (never hangs the test run)."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("rc", main(argv)), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "profdiff watch did not stop"
    return box["rc"], capsys.readouterr().out


def test_once_reads_existing_files_in_mtime_order_then_exits(tmp_path, capsys):
    now = time.time()
    for i, rel in enumerate(["v1/ad.prof", "noise-v1/run1/ad.prof", "v2/ad.prof"]):
        f = copy(rel, tmp_path / rel)
        os.utime(f, (now - 50 + i, now - 50 + i))
    copy("v1/ad.stats.txt", tmp_path / "v1" / "ad.stats.txt")
    rc, out = _run_main(["watch", str(tmp_path), "--once", "--json", "--glob", "*.prof"], capsys)
    assert rc == 0
    docs = [json.loads(x) for x in out.splitlines()]
    assert [d["file"] for d in docs] == ["v1/ad.prof", "noise-v1/run1/ad.prof", "v2/ad.prof"]
    assert all(d["initial"] and d["status"] == "ok" for d in docs)
    assert docs[1]["compared_with"] == "v1/ad.prof"
    # identical allocation between v1 and its rerun: time moves, allocation does not
    assert docs[1]["total_changes"]["total_alloc_bytes"]["delta"] == 0
    assert docs[2]["top_changes"][0].startswith("addGrad: +2.")  # bytes, not pp of a grown run


def test_baseline_file_and_timeout(tmp_path, capsys):
    copy("noise-v1/run1/ad.prof", tmp_path / "r1" / "ad.prof")
    copy("v2/ad.prof", tmp_path / "r2" / "ad.prof")
    t0 = time.monotonic()
    rc, out = _run_main(["watch", str(tmp_path), "--no-gui", "--timeout", "2.5",
                         "--settle", str(SETTLE), "--baseline",
                         str(WATCH_DATA / "v1" / "ad.prof")], capsys)
    assert rc == 0 and time.monotonic() - t0 >= 2.4
    lines = out.splitlines()
    assert len(lines) == 2
    base = str(WATCH_DATA / "v1" / "ad.prof")
    assert all(f"vs {base}:" in x for x in lines)
    assert "addGrad: +2.18 GB alloc" in next(x for x in lines if "r2/ad.prof" in x)


def test_not_a_folder_is_a_usage_error(tmp_path, capsys):
    rc = main(["watch", str(tmp_path / "missing"), "--no-gui", "--once"])
    assert rc == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--no-gui", "--json"])
def test_empty_folder_once_prints_nothing(tmp_path, capsys, flag):
    rc, out = _run_main(["watch", str(tmp_path), flag, "--once"], capsys)
    assert rc == 0 and out == ""


def test_the_window_gets_the_reading_options(tmp_path):
    """``profdiff watch DIR --lenient --group-by symbol`` in the window: the request to
    open the app carries them (they were dropped before), as ``--no-gui`` uses them."""
    from profdiff.viewer.cli import build_parser
    from profdiff.viewer.options import OpenApp

    args = build_parser(only="watch").parse_args(
        ["watch", str(tmp_path), "--lenient", "--group-by", "symbol",
         "--alloc-sample-rate", "1"])
    req = args.func(args)
    assert isinstance(req, OpenApp) and req.entry == "watch"
    assert req.kwargs["lenient"] is True
    assert req.kwargs["reader_options"] == {"group_by": "symbol", "alloc_sample_rate": 1.0}


def test_watch_hands_freed_memory_back_once_idle(tmp_path, capsys, monkeypatch):
    """After the runs that landed are compared and printed, with no event waiting, the
    memory their comparisons freed goes back to the kernel
    (:func:`viewer.memory_settings.give_back_freed`): a watched folder must not keep it."""
    import profdiff.viewer.watch_cli as watch_cli

    given: list[int] = []
    monkeypatch.setattr(watch_cli, "give_back_freed", lambda: given.append(1) or True)
    now = time.time()
    for i, rel in enumerate(["v1/ad.prof", "v2/ad.prof"]):
        f = copy(rel, tmp_path / rel)
        os.utime(f, (now - 50 + i, now - 50 + i))
    rc, out = _run_main(["watch", str(tmp_path), "--once", "--json", "--glob", "*.prof"], capsys)
    assert rc == 0 and len(out.splitlines()) == 2
    assert 1 <= len(given) <= 2
