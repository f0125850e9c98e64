"""Benchmark of the perf readers against perf itself (run by hand, prints figures only).

``python tests/bench/bench_perf.py [--rounds 3] [--big] [--cache DIR] [--only WHAT] [--code DIR] [--baseline DIR]``

Recordings: a deep-recursive C program (60-150 frames, six mutually recursive functions
picked at random, so almost every sample's stack is new) recorded with ``perf record -g
-F 20000`` (:mod:`perf_recordings`).  Every figure is a ratio from one alternating run
(A B A B ...) of whole processes, with each one's peak RSS:

1. ``profdiff show`` of ~84k and ~198k samples (and ~1.02M with ``--big``) against
   ``perf report --stdio --no-children``, also with one perf run and through perf's
   text (``PROFDIFF_PERF_TEXT=1``); perf with the table filter alone (the floor of the
   tables path), ``perf script`` with our fields to /dev/null (the text's floor) and
   ``perf report -g folded`` are printed as peers.  Target <= 2x, RSS <= 2 GB at 1M.
2. ``profdiff diff`` of two ~90k-sample recordings against two ``perf report`` runs.
3. ``profdiff show`` of a small recording (~2.5k samples), in seconds and as ratios to
   ``perf report`` and ``perf script`` with our fields.  Target <= 0.25 s.
4. The text reader in-process on replicated c-vm text (10^6 samples), in seconds.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / "tests" / "data" / "perf"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from alternate import alternate, summary  # noqa: E402
from perf_recordings import perf_available, recording  # noqa: E402

from profdiff.parsers import perf_data, perf_dlfilter, perf_script  # noqa: E402

PROFDIFF = [sys.executable, "-m", "profdiff.viewer.cli"]
BASELINE: list[str] = []  # --baseline: the same command from another tree, in the same rounds


def _report(path: Path, *extra: str) -> list[str]:
    return ["perf", "report", "-i", str(path), "--stdio", "--no-children", *extra]


def _kernel_args(rec: Path) -> list[str]:
    """The kernel-symbol options profdiff gives perf for ``rec`` (through the user's
    build-id cache, which profdiff's private HOME links)."""
    return perf_data.kernel_symbol_args(rec, {"HOME": str(Path.home())})


def _tables_alone(rec: Path) -> list[str] | None:
    """perf running the table filter over the whole recording, nothing read after it,
    with the kernel symbols profdiff names: the floor of the tables path (one perf, no
    slices)."""
    work = Path(tempfile.mkdtemp(prefix="profdiff-bench-"))
    so = perf_dlfilter.compiled_filter(work)
    layout = perf_dlfilter.sample_layout(rec)
    if so is None or layout is None:
        return None
    return perf_dlfilter.command("perf", rec, so, work / "t", layout, "", header=True,
                                 extra=_kernel_args(rec))


def bench_show(cache: Path, n: int, rounds: int, peers: bool) -> None:
    rec = recording(n, 1, cache)
    cmds: dict = {"profdiff show": [*PROFDIFF, "show", str(rec)],
                  "perf report": _report(rec)}
    if BASELINE:
        cmds["baseline show"] = [*BASELINE, "show", str(rec)]
    cmds["show, one perf run"] = ["env", "PROFDIFF_PERF_SLICES=1", *PROFDIFF, "show", str(rec)]
    cmds["show, perf's text"] = ["env", "PROFDIFF_PERF_TEXT=1", *PROFDIFF, "show", str(rec)]
    if peers:
        if (tables := _tables_alone(rec)) is not None:
            cmds["perf with the table filter alone"] = tables
        cmds["perf script (our fields)"] = [
            "perf", "script", "--header", "-i", str(rec), "-F", ",".join(perf_data.FIELDS)]
        cmds["perf report -g folded"] = _report(rec, "-g", "folded")
    res = alternate(cmds, rounds)
    print(f"perf.data, {n:,} samples ({rec.stat().st_size / 1e6:.0f} MB):")
    for peer in list(cmds)[1:]:
        print("   ", summary(res, "profdiff show", peer) if peer == "perf report"
              else summary(res, peer, "perf report"))
    if BASELINE:
        print("   ", summary(res, "profdiff show", "baseline show"))
    print("   ", summary(res, "profdiff show", "show, one perf run"))
    print("   ", summary(res, "profdiff show", "show, perf's text"))
    print(f"    (perf runs in {perf_data.slice_count()} time slices at once here)")


def bench_diff(cache: Path, rounds: int) -> None:
    a, b = recording(90_000, 2, cache), recording(90_000, 3, cache)
    cmds: dict = {"profdiff diff": [*PROFDIFF, "diff", str(a), str(b)],
                  "two perf reports": [_report(a), _report(b)]}
    if BASELINE:
        cmds["baseline diff"] = [*BASELINE, "diff", str(a), str(b)]
    res = alternate(cmds, rounds)
    print("perf.data diff, two ~90k-sample recordings:")
    print("   ", summary(res, "profdiff diff", "two perf reports"))
    if BASELINE:
        print("   ", summary(res, "baseline diff", "two perf reports"))
        print("   ", summary(res, "profdiff diff", "baseline diff"))


def bench_small(cache: Path, rounds: int) -> None:
    rec = recording(2_500, 1, cache)
    cmds: dict = {"profdiff show": [*PROFDIFF, "show", str(rec)], "perf report": _report(rec),
                  "perf script (our fields)": [
                      "perf", "script", "--header", "-i", str(rec), "-F", ",".join(perf_data.FIELDS)]}
    if (tables := _tables_alone(rec)) is not None:
        cmds["perf with the table filter alone"] = tables
    if kernel := _kernel_args(rec):  # how much of perf report is reading /proc/kallsyms
        cmds["perf report, kallsyms named"] = _report(rec, *kernel)
    cmds["python3 -c pass"] = [sys.executable, "-c", "pass"]
    if BASELINE:
        cmds["baseline show"] = [*BASELINE, "show", str(rec)]
    res = alternate(cmds, max(rounds, 5))
    t = statistics.median(x[0] for x in res["profdiff show"])
    print(f"perf.data, ~2.5k samples: profdiff show {t:.3f} s (target <= 0.25 s);")
    print("   ", summary(res, "profdiff show", "perf report"))
    print("   ", summary(res, "profdiff show", "perf script (our fields)"))
    print(f"    kernel symbols named to perf: {' '.join(_kernel_args(rec)) or 'none'}")
    for peer in ("perf with the table filter alone", "perf report, kallsyms named",
                 "python3 -c pass"):
        if peer in cmds:
            print("   ", summary(res, peer, "perf report"))
    if BASELINE:
        print("   ", summary(res, "profdiff show", "baseline show"))


def bench_text(n_samples: int) -> None:
    text = gzip.decompress((DATA / "c-vm" / "v2" / "perf.script.txt.gz").read_bytes())
    per_copy = text.count(b"\n\n")
    copies = max(1, round(n_samples / per_copy))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.perf.script.txt"
        with open(path, "wb") as f:
            for _ in range(copies):
                f.write(text)
        path.read_bytes()
        t = time.perf_counter()
        prof = perf_script.read(path)
        dt = time.perf_counter() - t
        size = path.stat().st_size
    print(f"perf script text (c-vm replicated): {copies * per_copy:,} samples, "
          f"{size / 1e6:.0f} MB -> {dt:.2f} s, {prof.n_nodes} nodes")


def code_command(code: Path, label: str) -> list[str]:
    """The ``profdiff`` command run from the source tree ``code`` (a checkout's root).

    The import name ``profdiff`` is the repository root (package-dir), so ``PYTHONPATH``
    gets a folder holding a ``profdiff`` link to it; ``PYTHONPATH=code`` itself would
    silently import the installed (editable) tree instead.
    """
    import subprocess

    shim = Path(tempfile.mkdtemp(prefix="profdiff-code-"))
    (shim / "profdiff").symlink_to(code.resolve(), target_is_directory=True)
    env = ["env", f"PYTHONPATH={shim}"]
    where = subprocess.run([*env, sys.executable, "-c",
                            "import profdiff.parsers, os; "
                            "print(os.path.realpath(profdiff.parsers.__file__))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    print(f"{label} from {where}")
    return [*env, *PROFDIFF]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also the ~1.02M-sample recording")
    ap.add_argument("--cache", type=Path, help="keep recordings here between runs")
    ap.add_argument("--only", choices=["show", "big", "diff", "small", "text"])
    ap.add_argument("--code", type=Path, help="run profdiff from this source tree")
    ap.add_argument("--baseline", type=Path, help="also run profdiff from this source tree "
                    "in the same alternating rounds (a before/after ratio, e.g. a checkout "
                    "of main)")
    args = ap.parse_args()
    if args.baseline:
        BASELINE[:] = code_command(args.baseline, "baseline profdiff")
    if args.code:
        PROFDIFF[:] = code_command(args.code, "profdiff")
    if not perf_available():
        print("perf (or a C compiler) is not usable here: perf.data figures skipped")
        bench_text(1_000_000)
        return
    tmp = None
    if args.cache is None:
        tmp = tempfile.mkdtemp(prefix="profdiff-bench-perf-")
        args.cache = Path(tmp)
    args.cache.mkdir(parents=True, exist_ok=True)
    try:
        if args.only in (None, "small"):
            bench_small(args.cache, args.rounds)
        if args.only in (None, "show"):
            bench_show(args.cache, 84_000, args.rounds, peers=True)
            bench_show(args.cache, 198_000, args.rounds, peers=False)
        if args.big or args.only == "big":
            bench_show(args.cache, 1_020_000, max(1, args.rounds - 1), peers=False)
        if args.only in (None, "diff"):
            bench_diff(args.cache, args.rounds)
        if args.only in (None, "text"):
            bench_text(1_000_000)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
