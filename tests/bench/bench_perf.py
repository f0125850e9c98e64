"""Benchmark of the perf readers (run by hand: ``python tests/bench/bench_perf.py``).

1. ``perf script`` text of ~10^6 samples: the real c-vm v2 recording (4,768 samples) is
   replicated until it holds ``--samples`` samples, then parsed.  Target <= 5 s.
2. ``perf.data``: :func:`parsers.perf_data.read` against ``perf report --stdio
   --no-children`` on the same file, side by side.  Target <= 2x.

Prints the figures; exits 0 whatever they are (it is a measurement, not a test).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "perf"
sys.path.insert(0, str(HERE.parent.parent))

from profdiff.parsers import perf_data, perf_script  # noqa: E402


def _replicated_text(dest: Path, n_samples: int) -> tuple[int, int]:
    """Write ``dest`` with whole copies of the c-vm v2 script text; (samples, bytes)."""
    text = gzip.decompress((DATA / "c-vm" / "v2" / "perf.script.txt.gz").read_bytes())
    per_copy = text.count(b"\n\n")
    copies = max(1, round(n_samples / per_copy))
    with open(dest, "wb") as f:
        for _ in range(copies):
            f.write(text)
    return copies * per_copy, dest.stat().st_size


def bench_text(n_samples: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.perf.script.txt"
        samples, size = _replicated_text(path, n_samples)
        path.read_bytes()  # warm the page cache so the figure is parse time, not disk
        t = time.perf_counter()
        prof = perf_script.read(path)
        dt = time.perf_counter() - t
        print(f"perf script text: {samples:,} samples, {size / 1e6:.0f} MB -> {dt:.2f} s "
              f"({samples / dt / 1e3:.0f} k samples/s, {size / 1e6 / dt:.0f} MB/s), "
              f"{prof.n_nodes} nodes; target <= 5 s")


def bench_data(reps: int) -> None:
    perf = shutil.which("perf")
    if perf is None:
        print("perf.data: skipped (no perf binary)")
        return
    for v in ("v1", "v2"):
        src = DATA / "c-vm" / v / "perf.data"
        best_ours = best_perf = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            prof = perf_data.read(src)
            best_ours = min(best_ours, time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([perf, "report", "-i", str(src), "--stdio", "--no-children"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            best_perf = min(best_perf, time.perf_counter() - t)
        print(f"perf.data c-vm/{v}: {int(prof.totals['total_samples']):,} samples: "
              f"profdiff {best_ours * 1e3:.0f} ms vs perf report {best_perf * 1e3:.0f} ms "
              f"= {best_ours / best_perf:.2f}x; target <= 2x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    bench_text(args.samples)
    bench_data(args.reps)


if __name__ == "__main__":
    main()
