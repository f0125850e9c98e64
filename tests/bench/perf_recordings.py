"""Real perf.data recordings of a deep-recursive C program, made on this machine.

Why a recording and not a replicated text: the slow paths of the perf readers only show
with many distinct, deep stacks, which real programs have and copies of a small recording
do not.  Here six mutually recursive functions call each other 60-150 deep; the callee
follows a per-call pattern except in the last 10 calls, where it is random, so a sample
adds ~10 new tree nodes (the issue's Rust recording: 10.65M nodes at 1M samples).

``recording(n_samples, seed, cache)`` builds the program with frame pointers in
``cache`` (a temp dir by default), runs it under ``perf record -g -F 20000`` long enough
for about ``n_samples`` samples and returns the perf.data path; recordings are reused
when ``cache`` already holds them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
static uint64_t st = 88172645463325252ull;
static inline uint64_t rnd(void){ st ^= st<<13; st ^= st>>7; st ^= st<<17; return st; }
volatile uint64_t sink;
typedef uint64_t (*fn)(int, uint64_t);
#define LEAFY 10  /* the last 10 calls pick their callee at random, the rest by pattern */
static fn table[6];
#define DEF(name) __attribute__((noinline)) uint64_t name(int d, uint64_t x){ \
  if (d <= 0) { uint64_t s = x; for (int i = 0; i < 200 + (int)(x & 255); i++) \
    s = s*6364136223846793005ull + i; return s; } \
  fn next = d < LEAFY ? table[rnd() % 6] : table[(d * 5 + (x >> 40)) % 6]; \
  uint64_t r = next(d - 1, d < LEAFY ? x ^ rnd() : x); sink += r; return r + 1; }
DEF(walk_a) DEF(walk_b) DEF(walk_c) DEF(eval_d) DEF(eval_e) DEF(fold_f)
int main(int argc, char **argv){
  long iters = argc > 1 ? atol(argv[1]) : 100000;
  if (argc > 2) st += atol(argv[2]);
  table[0]=walk_a; table[1]=walk_b; table[2]=walk_c;
  table[3]=eval_d; table[4]=eval_e; table[5]=fold_f;
  for (long k = 0; k < iters; k++) { int depth = 60 + (int)(rnd() % 91); sink += table[k % 6](depth, rnd()); }
  printf("%llu\n", (unsigned long long)sink); return 0; }
"""
SAMPLES_PER_ITER = 0.058  # measured: 28,400 iterations gave 1,643 samples at 20 kHz


def perf_available() -> bool:
    """True when perf can record here (it needs perf_event_paranoid <= 2 for cpu-clock)."""
    if shutil.which("perf") is None or shutil.which("cc") is None:
        return False
    r = subprocess.run(["perf", "record", "-e", "cpu-clock", "-o", "/dev/null", "true"],
                       capture_output=True, check=False)
    return r.returncode == 0


def program(cache: Path) -> Path:
    exe = cache / "deep2"
    if not exe.exists():
        src = cache / "deep.c"
        src.write_text(SOURCE)
        subprocess.run(["cc", "-O2", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls",
                        "-o", str(exe), str(src)], check=True)
    return exe


def recording(n_samples: int, seed: int, cache: Path) -> Path:
    """perf.data with about ``n_samples`` deep-stack samples (reused if already made)."""
    out = cache / f"deep2-{n_samples}-{seed}.perf.data"
    if not out.exists():
        iters = max(1, round(n_samples / SAMPLES_PER_ITER))
        subprocess.run(["perf", "record", "-q", "-g", "-F", "20000", "-o", str(out),
                        str(program(cache)), str(iters), str(seed)],
                       stdout=subprocess.DEVNULL, check=True)
    return out
