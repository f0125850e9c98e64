"""Benchmark (script, not a test): align two ~10^6-node trees, tree and flat mode.

    python tests/bench/bench_compare.py [N]

Builds two random trees that share most structure (the second drops ~2 % of subtrees
and adds new leaves), then times ``align`` in tree and flat mode and the first
``order_by``; and the tree alignment once the baseline's half is made ahead
(:func:`viewer.tree_union.prepare`, what the window's loader does while the other file
is read), against the whole, medians of alternating rounds.  Prints figures; no
assertions (targets: tree diff <= 2 s on 2 cores).
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

from profdiff.parsers.builder import profile_from_arrays
from profdiff.parsers.model import Kind, Metric, Unit, make_frame_table
from profdiff.viewer import tree_union
from profdiff.viewer.compare import align

METRICS = [
    Metric("ticks", Unit.TICKS, Kind.SELF, sampled=True),
    Metric("inherited_ticks", Unit.TICKS, Kind.INCLUSIVE, self_of="ticks"),
    Metric("entries", Unit.COUNT, Kind.NODE),
]


def random_tree(n: int, n_frames: int, seed: int, drop: float = 0.0):
    rng = np.random.default_rng(seed)
    # parent-first random tree shaped like real profiles: ~30 levels, fan-out ~1.6
    sizes = [1]
    while sum(sizes) < n:
        sizes.append(min(int(sizes[-1] * 1.6) + 1, n - sum(sizes)))
    parent = np.empty(n, dtype=np.int32)
    parent[0] = -1
    start = 0
    for k in range(1, len(sizes)):
        prev = np.arange(start, start + sizes[k - 1])
        begin = start + sizes[k - 1]
        parent[begin : begin + sizes[k]] = np.sort(rng.choice(prev, sizes[k]))
        start = begin
    frame = rng.integers(0, n_frames, n).astype(np.int32)
    names = [f"f{i}" for i in range(n_frames)]
    mods = [f"Mod{i % 97}" for i in range(n_frames)]
    frames = make_frame_table(names, mods, [f"src/M{i % 97}.hs:{i}" for i in range(n_frames)])
    ticks = rng.poisson(3, n).astype(np.float64)
    if drop:  # the "new" run: some costs double, some nodes become other functions
        ticks[rng.random(n) < drop] *= 2
        moved = rng.random(n) < drop / 4
        frame[moved] = rng.integers(0, n_frames, int(moved.sum()))
    return profile_from_arrays(
        path=f"synthetic-{seed}", format="synthetic", frames=frames, parent=parent, frame=frame,
        metrics=METRICS, columns={"ticks": ticks, "entries": rng.integers(0, 1000, n)},
        inclusive={"inherited_ticks": "ticks"},
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    t0 = time.perf_counter()
    a = random_tree(n, 20_000, 1)
    b = random_tree(n, 20_000, 1, drop=0.02)
    print(f"built two {n:,}-node trees in {time.perf_counter() - t0:.2f} s")
    for mode in ("tree", "flat"):
        t0 = time.perf_counter()
        c = align([a, b], mode=mode)
        t1 = time.perf_counter()
        order = c.order_by("ticks")
        _ = c.status
        t2 = time.perf_counter()
        print(f"align {mode:4s}: {t1 - t0:6.2f} s  ({c.n_rows:,} rows); sort+status {t2 - t1:.2f} s;"
              f" top row {c.name[order[0]]}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:,.0f} MB")
    ahead(a, b)


def ahead(a, b, rounds: int = 5) -> None:
    """The tree alignment whole, the baseline's half made ahead, and the alignment then."""
    whole, made, then = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        align([a, b], mode="tree")
        t1 = time.perf_counter()
        tree_union.prepare(a, a.frames.key)
        t2 = time.perf_counter()
        align([a, b], mode="tree")
        t3 = time.perf_counter()
        tree_union.forget([a])
        whole.append(t1 - t0)
        made.append(t2 - t1)
        then.append(t3 - t2)
    med = [float(np.median(x)) for x in (whole, made, then)]
    print(f"align tree whole {med[0] * 1e3:.0f} ms; the baseline's half made ahead "
          f"{med[1] * 1e3:.0f} ms, the alignment then {med[2] * 1e3:.0f} ms "
          f"({med[2] / med[0]:.2f}x; medians of {rounds})")


if __name__ == "__main__":
    main()
