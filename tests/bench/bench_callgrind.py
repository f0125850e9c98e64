"""Benchmark of the callgrind reader (run by hand: ``python tests/bench/bench_callgrind.py``).

Target: reading a 100 MB callgrind file takes at most 4x a bare Python line loop over
the same file (``for line in f: pass``, text mode, UTF-8).  The file is generated like
valgrind writes one: a header, many distinct functions in several objects and files with
name compression (``fn=(id) name`` once, ``fn=(id)`` after), non-ASCII (UTF-8) names,
``fi=``/``fe=`` inlined-file switches, subposition compression (``+N``, ``-N``, ``*``),
``cob=``/``cfi=``/``cfn=``/``calls=`` call edges and two event columns.

Timings alternate (loop, read, loop, read, ...) in one run; the ratio of the medians and
the per-round ratios are printed, then the peak RSS of one read in a fresh process (the
interpreter with numpy and pandas included) and that of a bare loop for comparison.  It
exits 0 whatever the figure (a measurement, not a test).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from alternate import run_once  # noqa: E402
from bench_ghc_prof import bare_loop  # noqa: E402  (the same floor for every reader)

from profdiff.parsers import callgrind  # noqa: E402

_NAMES = ["parse", "größe_berechnen", "日本語::処理", "Vec<T>::push", "ßpecial_fn", "hash_map",
          "rayon::iter::ξ", "core::fmt::write", "compute_дерево", "std::sort<int*>"]


def generate(dest: Path, size_mb: int, n_functions: int = 60000, seed: int = 7) -> int:
    """Write a realistic callgrind file of about ``size_mb`` MB; returns its size."""
    rng = random.Random(seed)
    n_obj, n_file = 40, 3000
    defined = {"ob": set(), "fl": set(), "fn": set()}

    def ref(space: str, i: int, text: str) -> str:
        if i in defined[space]:
            return f"({i})"
        defined[space].add(i)
        return f"({i}) {text}"

    def fn_name(i: int) -> str:
        return f"{_NAMES[i % len(_NAMES)]}_{i}"

    target = size_mb * 1_000_000
    with open(dest, "w", encoding="utf-8") as f:
        f.write("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\n"
                "cmd:  ./bench --input data.bin\npart: 1\n\ndesc: I1 cache: \n"
                "desc: Timerange: Basic block 0 - 123456789\ndesc: Trigger: Program termination\n"
                "\npositions: line\nevents: Ir Dr\n\n\n")
        size = 0
        while size < target:
            chunk = []
            for _ in range(2000):
                fn = rng.randrange(n_functions)
                ob, fl = fn % n_obj, fn % n_file
                chunk.append(f"ob={ref('ob', ob, f'/usr/lib/libbench{ob}.so')}\n"
                             f"fl={ref('fl', fl, f'/src/module_{fl}/file_{fl}.c')}\n"
                             f"fn={ref('fn', fn, fn_name(fn))}\n")
                line = rng.randrange(10, 5000)
                chunk.append(f"{line} {rng.randrange(1, 400)} {rng.randrange(0, 90)}\n")
                for _ in range(rng.randrange(2, 9)):
                    step = rng.choice(("+1", "+2", "+3", "-1", "-4", "*", "+12"))
                    chunk.append(f"{step} {rng.randrange(1, 3000)} {rng.randrange(0, 200)}\n")
                if rng.random() < 0.2:
                    inl = rng.randrange(n_file)
                    chunk.append(f"fi={ref('fl', inl, f'/usr/include/header_{inl}.h')}\n"
                                 f"{rng.randrange(1, 300)} {rng.randrange(1, 50)}\n"
                                 f"fe={ref('fl', fl, '')}\n")
                for _ in range(rng.randrange(0, 3)):
                    callee = rng.randrange(n_functions)
                    if callee % n_obj != ob:
                        chunk.append(f"cob={ref('ob', callee % n_obj, f'/usr/lib/libbench{callee % n_obj}.so')}\n")
                    if callee % n_file != fl:
                        chunk.append(f"cfi={ref('fl', callee % n_file, f'/src/module_{callee % n_file}/file_{callee % n_file}.c')}\n")
                    chunk.append(f"cfn={ref('fn', callee, fn_name(callee))}\n"
                                 f"calls={rng.randrange(1, 5000)} {rng.randrange(1, 900)}\n"
                                 f"* {rng.randrange(100, 10**9)} {rng.randrange(0, 10**7)}\n")
                chunk.append("\n")
            text = "".join(chunk)
            f.write(text)
            size += len(text.encode("utf-8"))
    return dest.stat().st_size




def timed(fn, *args) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, result): on a shared machine the CPU
    time is the steadier of the two, so both are printed."""
    c, t = time.process_time(), time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, time.process_time() - c, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--file", type=Path, help="keep the generated file here (reused if it "
                    "exists: generating 100 MB takes a minute)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or Path(tmp) / "callgrind.out.4242"
        t = time.perf_counter()
        if not path.exists():
            generate(path, args.size_mb)
        lines = sum(1 for _ in open(path, "rb"))
        print(f"file {path.stat().st_size / 1e6:.1f} MB, {lines:,} lines "
              f"({time.perf_counter() - t:.1f} s to make and count)")
        loops, reads = [], []
        for r in range(args.rounds):  # A B A B ...
            loops.append(timed(bare_loop, path)[:2])
            wall, cpu, prof = timed(callgrind.read, path)
            reads.append((wall, cpu))
            print(f"round {r + 1}: line loop {loops[-1][0]:.2f} s (cpu {loops[-1][1]:.2f}), "
                  f"callgrind.read {wall:.2f} s (cpu {cpu:.2f}), {prof.n_nodes:,} functions")
        for k, what in ((0, "wall"), (1, "cpu")):
            a = statistics.median(x[k] for x in loops)
            b = statistics.median(x[k] for x in reads)
            per_round = ", ".join(f"{y[k] / x[k]:.2f}" for x, y in zip(loops, reads, strict=True))
            print(f"median {what}: line loop {a:.2f} s, read {b:.2f} s -> ratio {b / a:.2f}x "
                  f"(target <= 4x); per round {per_round}")
        print(f"peak RSS: callgrind.read {_child_rss(_READ, path):.0f} MB, bare loop "
              f"{_child_rss(_LOOP, path):.0f} MB (fresh processes)")


_READ = ("import sys; sys.path.insert(0, {root!r}); import numpy, pandas; "
         "from profdiff.parsers import callgrind; callgrind.read({path!r})")
_LOOP = ("import sys; sys.path.insert(0, {root!r}); import numpy, pandas\n"
         "for _ in open({path!r}, encoding='utf-8'): pass")


def _child_rss(code: str, path: Path) -> float:
    """Peak RSS (MB) of ``code`` run in a fresh interpreter."""
    root = str(HERE.parent.parent)
    return run_once([sys.executable, "-c", code.format(root=root, path=str(path))])[1]


if __name__ == "__main__":
    main()
