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

A command wrapped in :class:`ToMark` is timed to the moment it writes into the file named
by :data:`MARK_VARIABLE` (its ``time.monotonic()``, the clock every process of the
machine shares), not to its exit: the window timed to its first paint
(``live_first_paint.py``).  Why: the window's process on the 100 MB hs-ad pair took
50-70 ms from its ``os._exit`` after that paint to its parent's ``wait`` (the kernel
freeing ~450 MB of ordinary 4 kB pages), and no user of a window waits for it to end.
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

MARK_VARIABLE = "PROFDIFF_BENCH_MARK"
"""The environment variable naming the file a :class:`ToMark` command writes its end into."""


class ToMark(list):
    """An argv timed to the ``time.monotonic()`` it writes into the file named by
    :data:`MARK_VARIABLE`, not to its exit (module docstring)."""



def run_once(argv: Sequence[str], env: Mapping[str, str] | None = None
             ) -> tuple[float, float, float]:
    """(seconds, peak RSS in MB, wall seconds to the exit) of one run of ``argv`` (output
    discarded); the seconds are the wall seconds, or those to the mark of a
    :class:`ToMark` command (module docstring).

    The RSS comes from GNU time when installed: ``ru_maxrss`` of a child forked from a big
    benchmark process would include the parent's pages (it survives exec)."""
    gnu_time = Path("/usr/bin/time").exists()
    with tempfile.NamedTemporaryFile("r") as rss_file, \
            tempfile.NamedTemporaryFile("r") as mark_file:
        cmd = list(argv)
        if gnu_time:
            cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *cmd]
        run_env = dict(env) if env else dict(os.environ)
        if isinstance(argv, ToMark):
            run_env[MARK_VARIABLE] = mark_file.name
        t = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env=run_env)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"{argv[0]} ... exited {code}: {' '.join(argv)}")
        lines = rss_file.read().split()
        kib = int(lines[-1]) if gnu_time and lines else ru.ru_maxrss
        mark = mark_file.read().strip()
    if isinstance(argv, ToMark):
        if not mark:
            raise RuntimeError(f"{argv[0]} ... wrote no mark: {' '.join(argv)}")
        return float(mark) - t, kib / 1024, wall
    return wall, kib / 1024, wall


def alternate(cmds: Mapping[str, Sequence[str] | Sequence[Sequence[str]]], rounds: int
              ) -> dict[str, list[tuple[float, float, float]]]:
    """Run every command once per round, ``rounds`` times (forwards, then backwards):
    each run's (seconds, peak RSS, wall seconds to the exit) as :func:`run_once`.

    A value may be a list of argvs run one after the other (e.g. two ``perf report``
    runs as the peer of one ``profdiff diff``): its times are their sums, its RSS the max.
    """
    out: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cmds}
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
            out[name].append((sum(r[0] for r in runs), max(r[1] for r in runs),
                              sum(r[2] for r in runs)))
    return out


def _warm(mb: float) -> None:
    """Touch ``mb`` MB (+10 %) of memory in a child and free it (module docstring)."""
    if mb > 0 and shutil.which("dd"):
        subprocess.run(["dd", "if=/dev/zero", "of=/dev/null", f"bs={int(mb * 1.1) + 16}M",
                        "count=1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)


def ratio(res: Mapping[str, list[tuple[float, float, float]]], a: str, b: str,
          wall: bool = False) -> tuple[float, float, float]:
    """(median, min, max) of the per-round ratios time(a) / time(b); ``wall``: of the
    wall times to the exit (a :class:`ToMark` command's whole process)."""
    k = 2 if wall else 0
    rs = [x[k] / y[k] for x, y in zip(res[a], res[b], strict=True)]
    return statistics.median(rs), min(rs), max(rs)


def summary(res: Mapping[str, list[tuple[float, float, float]]], a: str, b: str,
            wall: bool = False) -> str:
    """One line: the medians of ``a`` and ``b`` and the ratio's median and range
    (``wall``: :func:`ratio`'s)."""
    med, lo, hi = ratio(res, a, b, wall)
    k = 2 if wall else 0
    ta = statistics.median(x[k] for x in res[a])
    tb = statistics.median(x[k] for x in res[b])
    rss = max(x[1] for x in res[a])
    return (f"{a}: {ta:.2f} s vs {b}: {tb:.2f} s (medians) = {med:.2f}x "
            f"[{lo:.2f}-{hi:.2f} over {len(res[a])} rounds], peak RSS {rss:.0f} MB")
