"""Benchmark of ``profdiff annotate`` (run by hand: ``python tests/bench/bench_annotate.py``).

Target (issue 20): a 6k-instruction function in both runs with 10^6 samples each is
aligned and displayed in under 2 s.

1. Two builds of one generated C function (a ``switch`` of ``--cases`` arithmetic cases,
   about 6k instructions; build B adds a guard to every third case) are compiled with gcc
   and disassembled with objdump.
2. Samples: with ``--record`` both are recorded with ``perf record -e cpu-clock -F max``
   until about ``--samples`` samples, and the extraction (``perf script`` + counting,
   objdump) is timed on the real recordings.  Without it, ``--samples`` samples per run
   are drawn (multinomial over the instructions) so the align/display part is measured
   without perf.
3. Alignment (:func:`viewer.annotate.align.align`) against ``difflib.SequenceMatcher``
   (``autojunk=False``) on the same normalised instructions, alternating A B A B.
4. Display: :func:`aligned_rows`, the Qt model and :meth:`DisassemblyView.set_result`
   (offscreen), with one ``processEvents`` so the table is laid out and painted.

Prints the figures; exits 0 whatever they are (it is a measurement, not a test).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from profdiff.viewer.annotate.align import align  # noqa: E402
from profdiff.viewer.annotate.binaries import Located  # noqa: E402
from profdiff.viewer.annotate.compare import (  # noqa: E402
    FunctionComparison,
    FunctionRun,
    compare_runs,
    load_function,
    symbol_rules,
)
from profdiff.viewer.annotate.instructions import disassemble, function_symbols  # noqa: E402


def c_source(cases: int, guarded: bool) -> str:
    out = ["#include <stdio.h>\n#include <stdlib.h>\nlong hits;",
           "__attribute__((noinline)) long big(unsigned op, long x, long y) {", " switch (op) {"]
    for k in range(cases):
        a, b, c = 2 * k + 3, (k * 7) % 29 + 1, (k * 2654435761) & 0xffff
        body = f"x = x * {a} + (y >> {b % 13 + 1}); y ^= x + {c}; x += y * {k % 5 + 2};"
        if guarded and k % 3 == 0:
            body += f" if (x == {c}) hits++;"
        out.append(f"  case {k}: {body} break;")
    out += ["  default: x ^= y; }", " return x ^ y;", "}",
            "int main(int argc, char **argv) { long n = atol(argv[1]); unsigned s = 1;",
            " long x = 1, y = 2;",
            f" for (long i = 0; i < n; i++) {{ s = s * 1103515245u + 12345u;"
            f" x = big((s >> 8) % {cases}, x, y); y += x; }}",
            ' printf("%ld %ld\\n", x, hits); return 0; }']
    return "\n".join(out)


def build(tmp: Path, cases: int) -> list[Path]:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        sys.exit("needs gcc")
    out = []
    for name, guarded in (("a", False), ("b", True)):
        d = tmp / name
        d.mkdir()
        (d / "big.c").write_text(c_source(cases, guarded))
        subprocess.run([gcc, "-O2", "-g", "-o", str(d / "big"), str(d / "big.c")], check=True)
        out.append(d / "big")
    return out


def record(binary: Path, samples: int) -> Path:
    """perf.data beside ``binary`` with about ``samples`` samples (iterations calibrated)."""
    data = binary.parent / "perf.data"
    env = dict(os.environ, HOME=str(binary.parent))
    iters = 2_000_000
    while True:
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "max", "-o", str(data),
                        str(binary), str(iters)], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        got = int(subprocess.run(["perf", "script", "-i", str(data), "-F", "ip", "-G"], env=env,
                                 capture_output=True, text=True).stdout.count("\n"))
        if got >= samples * 0.9 or iters > 2_000_000_000:
            return data
        iters = int(iters * min(20.0, samples * 1.05 / max(got, 1)))


def perf_script_alone(data: Path) -> float:
    """Seconds perf itself needs for the samples command :mod:`.samples` runs."""
    from profdiff.viewer.annotate.samples import FIELDS

    env = dict(os.environ, HOME=str(data.parent))
    t = time.perf_counter()
    subprocess.run(["perf", "script", "-i", str(data), "-F", FIELDS, "-G"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def synthetic_run(binary: Path, samples: int, seed: int) -> FunctionRun:
    start, size = function_symbols(binary)["big"][0]
    ins = disassemble(binary, "big", start, size, symbol_rules())
    rng = np.random.default_rng(seed)
    weights = rng.pareto(1.5, len(ins)) + 1e-3
    counts = rng.multinomial(samples, weights / weights.sum()).astype(np.int64)
    return FunctionRun(binary.parent / "perf.data", "big", str(binary), Located(binary, None, "-"),
                       ins, counts, int(counts.sum()), int(counts.sum()), "cpu-clock")


def timed(f, *args):
    t = time.perf_counter()
    r = f(*args)
    return r, time.perf_counter() - t


def display(cmp: FunctionComparison) -> float:
    from PySide6.QtWidgets import QApplication

    from profdiff.viewer.qt.disassembly_view import DisassemblyView

    app = QApplication.instance() or QApplication([])
    t = time.perf_counter()
    view = DisassemblyView("big")
    view.resize(1400, 900)
    view.set_result(cmp)
    view.show()
    app.processEvents()
    dt = time.perf_counter() - t
    view.close()
    return dt


def compare(runs: list[FunctionRun]) -> FunctionComparison:
    return compare_runs(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=590, help="switch cases (~10 instructions each)")
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--record", action="store_true", help="record with perf (slow: ~10 s CPU each)")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-annotate-") as tmpdir:
        binaries = build(Path(tmpdir), args.cases)
        if args.record:
            runs = []
            for b in binaries:
                data, dt_rec = timed(record, b, args.samples)
                for _rep in range(args.reps):  # ours, perf script alone, ours, ...
                    run, dt = timed(load_function, data, "big")
                    t_perf = perf_script_alone(data)
                    print(f"{b.parent.name}: {len(run.instructions):,} instructions, "
                          f"{run.total:,} samples in big of {run.recording_total:,}; extraction "
                          f"(perf script + count + objdump) {dt:.2f} s; the same 'perf script' "
                          f"to /dev/null alone {t_perf:.2f} s  [recording took {dt_rec:.0f} s]")
                runs.append(run)
        else:
            runs = [synthetic_run(b, args.samples, seed) for seed, b in enumerate(binaries)]
            print("synthetic samples: " + ", ".join(
                f"{r.instructions.symbol} {len(r.instructions):,} instructions, {r.total:,} samples"
                for r in runs))
        na, nb = (r.instructions.norm.tolist() for r in runs)
        for rep in range(args.reps):  # A B A B
            _pairs, t_ours = timed(align, na, nb, frozenset(("nop",)))
            sm, t_dl = timed(lambda: difflib.SequenceMatcher(None, na, nb, autojunk=False)
                             .get_matching_blocks())
            matched = sum(1 for i, j in _pairs if i is not None and j is not None)
            print(f"rep {rep}: align (bit-parallel LCS) {t_ours:.3f} s, {matched:,} matched; "
                  f"difflib.SequenceMatcher(autojunk=False) {t_dl:.3f} s, "
                  f"{sum(m.size for m in sm):,} matched")
        cmp, t_cmp = timed(compare, runs)
        t_disp = display(cmp)
        print(f"align + summaries {t_cmp:.3f} s, display (model + view + first paint) "
              f"{t_disp:.3f} s -> aligned and displayed in {t_cmp + t_disp:.2f} s; target < 2 s")


if __name__ == "__main__":
    main()
