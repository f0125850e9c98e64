"""Benchmark of the GHC ``.prof`` reader on a large report (a script, not a test).

Builds a ~100 MB ``.prof`` by repeating the subtrees under MAIN of the real report
``tests/data/hs-ad/v1/ad.P.prof`` (GHC 9.0.2, ``-P``: ticks and bytes columns, whose
``bytes`` column overflows its width on some rows) in a temporary folder, then prints:

* the time of the bare Python loop over the file's lines (``for line in f: pass``),
* the reader's parse time (best and first of several runs in one process) and the ratio,
* the peak memory of a parse in a fresh subprocess (``ru_maxrss`` above the interpreter
  with numpy/pandas/parsers imported, and tracemalloc's peak), relative to the file size.

Usage::

    python tests/bench/bench_ghc_prof.py [--mb 100] [--runs 5] [--check]

``--check`` exits with status 1 when parse > 4x the bare loop or memory > 10x the file.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "data" / "hs-ad" / "v1" / "ad.P.prof"
sys.path.insert(0, str(ROOT))


_TOTAL_TIME = re.compile(r"(total time\s*=\s*)([\d.]+)( secs\s*\()(\d+)( ticks)")
_TOTAL_ALLOC = re.compile(r"(total alloc\s*=\s*)([\d,]+)( bytes)")
_TOP_ROW = re.compile(r"^(.*\S)(\s+)(\d+)(\s+)(\d+)$")


def scaled_header(head: str, reps: int) -> str:
    """``head`` (a ``-P`` report's lines up to its MAIN row) for a tree whose subtrees
    under MAIN are repeated ``reps`` times: the header's total ticks, time and bytes and
    the top table's ticks and bytes scaled to match (MAIN's own costs are not repeated),
    so the report adds up as GHC's own do (MAIN holds 100 % of the ticks)."""
    lines = head.rstrip("\n").split("\n")
    main = lines[-1].split()
    main_ticks, main_bytes = int(main[-2]), int(main[-1])

    def grown(total: int, own: int) -> int:
        return own + (total - own) * reps

    def time(m: re.Match) -> str:
        ticks = grown(int(m[4]), main_ticks)
        return f"{m[1]}{float(m[2]) * ticks / int(m[4]):.2f}{m[3]}{ticks}{m[5]}"

    def alloc(m: re.Match) -> str:
        return f"{m[1]}{grown(int(m[2].replace(',', '')), main_bytes):,}{m[3]}"

    top = next(i for i, ln in enumerate(lines) if ln.startswith("COST CENTRE"))
    tree = next(i for i in range(top + 1, len(lines)) if lines[i].startswith("COST CENTRE"))
    for i, ln in enumerate(lines):
        ln = _TOTAL_ALLOC.sub(alloc, _TOTAL_TIME.sub(time, ln))
        m = _TOP_ROW.match(ln) if top < i < tree else None
        if m:  # a top-table row of a -P report: ... ticks bytes
            ln = f"{m[1]}{m[2]}{int(m[3]) * reps}{m[4]}{int(m[5]) * reps}"
        lines[i] = ln
    return "\n".join(lines) + "\n"


def build_large(dst: Path, target_mb: float, src: Path = SOURCE) -> int:
    """Write ``src`` with the subtrees under MAIN repeated until ``target_mb``, and its
    totals scaled to match (:func:`scaled_header`); returns the number of tree rows."""
    lines = src.read_text(encoding="utf-8").split("\n")
    hi = next(i for i, ln in enumerate(lines) if "no." in ln and "entries" in ln)
    main_at = next(i for i in range(hi + 1, len(lines)) if lines[i].startswith("MAIN"))
    head = "\n".join(lines[: main_at + 1]) + "\n"
    block = "\n".join(ln for ln in lines[main_at + 1 :] if ln.strip()) + "\n"
    per_block = block.count("\n")
    target = int(target_mb * 1_000_000)
    reps = max(1, (target - len(head)) // len(block))
    with open(dst, "w", encoding="utf-8") as f:
        f.write(scaled_header(head, reps))
        for _ in range(reps):
            f.write(block)
    return 1 + reps * per_block


def bare_loop(path: Path) -> float:
    t = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        for _line in f:
            pass
    return time.perf_counter() - t


_CHILD = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, {root!r})
import numpy, pandas  # noqa: F401  (part of the baseline)
from profdiff.parsers import ghc_prof
def hwm():  # KiB; /proc's VmHWM belongs to this process image (ru_maxrss survives exec)
    try:
        for ln in open("/proc/self/status"):
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
base = hwm()
if {traced!r}:
    tracemalloc.start()
t = time.perf_counter()
p = ghc_prof.read({path!r})
dt = time.perf_counter() - t
peak = tracemalloc.get_traced_memory()[1] if {traced!r} else 0
rss = hwm()
print(json.dumps({{"rows": p.n_nodes, "seconds": dt, "rss_kib": rss - base,
                  "traced_peak": peak}}))
"""


def child(path: Path, traced: bool) -> dict:
    """Parse in a fresh interpreter: cold time and peak RSS (VmHWM, KiB), or
    tracemalloc's peak (numpy buffers included) when ``traced``."""
    code = _CHILD.format(root=str(ROOT), path=str(path), traced=traced)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of the generated report")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--check", action="store_true", help="fail above 4x time / 10x memory")
    args = ap.parse_args()

    from profdiff.parsers import ghc_prof

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.prof"
        rows = build_large(path, args.mb)
        size = path.stat().st_size
        print(f"file: {size / 1e6:.1f} MB, {rows:,} tree rows (from {SOURCE.name})")
        bare = []
        parse = []
        for _ in range(args.runs):
            bare.append(bare_loop(path))
            t = time.perf_counter()
            p = ghc_prof.read(path)
            parse.append(time.perf_counter() - t)
        assert p.n_nodes == rows, (p.n_nodes, rows)
        b, q = min(bare), min(parse)
        print(f"bare loop  : best {b:.3f} s   (runs: {', '.join(f'{x:.3f}' for x in bare)})")
        print(f"parse      : best {q:.3f} s   first {parse[0]:.3f} s   "
              f"(runs: {', '.join(f'{x:.3f}' for x in parse)})")
        ratio = q / b
        print(f"ratio      : {ratio:.2f}x the bare loop (best vs best)")
        cold = child(path, traced=False)
        traced = child(path, traced=True)
        rss_ratio = cold["rss_kib"] * 1024 / size
        traced_ratio = traced["traced_peak"] / size
        print(f"fresh process: parse {cold['seconds']:.3f} s (cold); peak RSS above the "
              f"imports {cold['rss_kib'] / 1024:.0f} MiB = {rss_ratio:.2f}x file; "
              f"tracemalloc peak {traced['traced_peak'] / 2**20:.0f} MiB = "
              f"{traced_ratio:.2f}x file")
    if args.check and (ratio > 4.0 or max(rss_ratio, traced_ratio) > 10.0):
        print("FAIL: over budget (4x time, 10x memory)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
