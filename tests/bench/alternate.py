"""Alternating A/B timing of whole processes, for ratios on a shared, noisy machine.

Why: the machine runs other work, so single timings move by 2x between minutes; running
the command under test and its floor in turn (A B A B ...) and quoting the per-round
ratio cancels most of that.  Each process's own peak RSS comes from ``os.wait4``.

One discarded warm-up round runs first: on a virtual machine the host backs guest memory
lazily, and seen here the first touch of memory the guest has not used for a while cost
up to ~1 ms per MB (the app on a 100 MB .prof pair, 900 MB, took ~1 s more on its first
run after a pause than on the next ones), which would fall on whichever command runs first.

The rounds go forwards and backwards in turn (A B C, C B A, A B C, ...).  Memory the guest
frees is handed back to the host a moment later, so a process started just after a
bigger one finds warm pages and one started after a smaller one pays for the difference:
in a fixed order, the app on the 100 MB pair (700 MB), always run after ``profdiff diff``
(430 MB), measured 12 % slower than the same app run after another app.  Alternating the
direction gives every command the same neighbours before it.

And before every timed run, ``dd`` with one block a little bigger than the biggest peak
RSS of the warm-up round touches that much memory and frees it, so that every command
starts on equally warm pages (as on a machine whose memory is its own); without it the
per-round ratios of the app against ``profdiff diff`` spread over 1.8-2.3x.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_once(argv: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one run of ``argv`` (output discarded).

    The RSS comes from GNU time when installed: ``ru_maxrss`` of a child forked from a big
    benchmark process would include the parent's pages (it survives exec)."""
    gnu_time = Path("/usr/bin/time").exists()
    with tempfile.NamedTemporaryFile("r") as rss_file:
        cmd = list(argv)
        if gnu_time:
            cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *cmd]
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env=dict(env) if env else None)
        _pid, status, ru = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"{argv[0]} ... exited {code}: {' '.join(argv)}")
        lines = rss_file.read().split()
        kib = int(lines[-1]) if gnu_time and lines else ru.ru_maxrss
    return dt, kib / 1024


def alternate(cmds: Mapping[str, Sequence[str] | Sequence[Sequence[str]]], rounds: int
              ) -> dict[str, list[tuple[float, float]]]:
    """Run every command once per round, ``rounds`` times (forwards, then backwards).

    A value may be a list of argvs run one after the other (e.g. two ``perf report``
    runs as the peer of one ``profdiff diff``): its time is their sum, its RSS the max.
    """
    out: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    seqs = {name: argv if argv and not isinstance(argv[0], str) else [argv]
            for name, argv in cmds.items()}
    peak = 0.0
    for seq in seqs.values():  # the warm-up round (see the module's docstring)
        for a in seq:
            peak = max(peak, run_once(a)[1])  # type: ignore[arg-type]
    names = list(seqs)
    for i in range(rounds):
        for name in names if i % 2 == 0 else names[::-1]:  # see the module's docstring
            seq = seqs[name]
            runs = [_warm(peak) or run_once(a) for a in seq]  # type: ignore[arg-type]
            out[name].append((sum(r[0] for r in runs), max(r[1] for r in runs)))
    return out


def _warm(mb: float) -> None:
    """Touch ``mb`` MB (+10 %) of memory in a child and free it (module docstring)."""
    if mb > 0 and shutil.which("dd"):
        subprocess.run(["dd", "if=/dev/zero", "of=/dev/null", f"bs={int(mb * 1.1) + 16}M",
                        "count=1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)


def ratio(res: Mapping[str, list[tuple[float, float]]], a: str, b: str) -> tuple[float, float, float]:
    """(median, min, max) of the per-round ratios time(a) / time(b)."""
    rs = [x[0] / y[0] for x, y in zip(res[a], res[b], strict=True)]
    return statistics.median(rs), min(rs), max(rs)


def summary(res: Mapping[str, list[tuple[float, float]]], a: str, b: str) -> str:
    med, lo, hi = ratio(res, a, b)
    ta = statistics.median(x[0] for x in res[a])
    tb = statistics.median(x[0] for x in res[b])
    rss = max(x[1] for x in res[a])
    return (f"{a}: {ta:.2f} s vs {b}: {tb:.2f} s (medians) = {med:.2f}x "
            f"[{lo:.2f}-{hi:.2f} over {len(res[a])} rounds], peak RSS {rss:.0f} MB")
