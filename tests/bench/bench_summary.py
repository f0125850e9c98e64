"""How long the Summary page takes to build, next to the alignment it follows (figures only).

``python tests/bench/bench_summary.py [--nodes 1000000] [--rounds 3]``

On a synthetic GHC-like pair (the viewer benchmark's random trees), each round builds a
fresh session, aligns it (tree and flat, as the window does on open) and then builds the
Summary page, so the page's cost is quoted as a ratio to the alignment it follows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from bench_viewer import random_tree, synthetic  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.summary import build_summary

    n = args.nodes
    runs = [synthetic(n, random_tree(n, 1), 1, "a.prof"), synthetic(n, random_tree(n, 2), 2,
                                                                      "b.prof")]
    align_s, page_s = [], []
    for _ in range(args.rounds):
        s = Session(SessionSpec(), runs)
        t = time.perf_counter()
        _ = s.tree, s.flat  # both alignments, as the window builds on open
        t1 = time.perf_counter()
        sm = build_summary(s)
        t2 = time.perf_counter()
        align_s.append(t1 - t)
        page_s.append(t2 - t1)
    print(f"{n:,} nodes per run, {s.tree.n_rows:,} tree rows, {s.flat.n_rows:,} flat rows")
    print(f"align (tree + flat): median {statistics.median(align_s):.2f} s")
    print(f"summary page:        median {statistics.median(page_s):.2f} s "
          f"({statistics.median(p / a for p, a in zip(page_s, align_s, strict=True)):.2f} x "
          "the alignment, per round)")
    print(f"changes listed: {sum(len(mc.changes) for mc in sm.changes)}, "
          f"renames offered: {len(sm.renames)}")


if __name__ == "__main__":
    main()
