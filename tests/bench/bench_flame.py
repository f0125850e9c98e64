"""Benchmark of the flame graph on a 10^6-node synthetic comparison.

    QT_QPA_PLATFORM=offscreen /work/venv/bin/python tests/bench/bench_flame.py [n_nodes]

Prints: alignment time (for context), layout time (width computation + vectorised
placement), colour time, and frame times of the offscreen paint (QImage, 1400x800):
full view, pan steps, Ctrl+wheel zoom steps into a deep frame, a deep zoom and a search.
Target: pan/zoom frames <= 50 ms.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")



import numpy as np  # noqa: E402

from profdiff.parsers.builder import profile_from_arrays  # noqa: E402
from profdiff.parsers.model import Kind, Metric, Unit, make_frame_table  # noqa: E402

METRICS = [
    Metric("self_samples", Unit.SAMPLES, Kind.SELF, "self samples", sampled=True),
    Metric("total_samples", Unit.SAMPLES, Kind.INCLUSIVE, "total samples", sampled=True,
           self_of="self_samples"),
]


def synthetic_tree(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Parent array with a profile-like shape: deep-ish (tens of levels), heavy fan-out."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    parent = np.minimum((i * rng.random(n) ** 0.12).astype(np.int64), i - 1)
    parent[0] = -1
    return parent.astype(np.int32), rng.lognormal(0.0, 2.0, n).round()


def synthetic_pair(n: int, n_frames: int = 20_000, seed: int = 1):
    """Two runs over the same tree: 1 % of nodes renamed (removed + added subtrees), noise."""
    rng = np.random.default_rng(seed)
    parent, own = synthetic_tree(n, seed)
    names = [f"fn_{k}" for k in range(n_frames + 500)]
    mods = [f"Mod{k % 97}" for k in range(n_frames + 500)]
    frames = make_frame_table(names, mods)
    frame = rng.integers(0, n_frames, n).astype(np.int32)
    frame2 = frame.copy()
    from profdiff.parsers.model import inclusive_from_self

    size = inclusive_from_self(parent, np.ones(n))
    ch = (rng.random(n) < 0.01) & (size <= 50)  # renamed calls: small removed+added subtrees
    ch[0] = False
    frame2[ch] = n_frames + rng.integers(0, 500, int(ch.sum()))
    own2 = own * rng.lognormal(0.0, 0.3, n).round(3)
    inc = {"total_samples": "self_samples"}
    a = profile_from_arrays(path="base/synthetic", format="test", frames=frames, parent=parent,
                            frame=frame, metrics=METRICS, columns={"self_samples": own},
                            inclusive=inc, default_metric="self_samples")
    b = profile_from_arrays(path="new/synthetic", format="test", frames=frames, parent=parent,
                            frame=frame2, metrics=METRICS, columns={"self_samples": own2},
                            inclusive=inc, default_metric="self_samples")
    return a, b


def _ms(t: float) -> str:
    return f"{t * 1000:8.1f} ms"


def main(n: int = 1_000_000) -> None:
    from PySide6.QtWidgets import QApplication

    from profdiff.viewer import flame_layout as fl
    from profdiff.viewer.compare import align
    from profdiff.viewer.qt.flame_view import FlameView

    app = QApplication.instance() or QApplication([])
    t = time.perf_counter()
    a, b = synthetic_pair(n)
    print(f"synthetic profiles ({n:,} nodes each): {_ms(time.perf_counter() - t)}")
    t = time.perf_counter()
    cmp = align([a, b])
    print(f"align -> {cmp.n_rows:,} union rows, depth {int(cmp.depth.max())}: "
          f"{_ms(time.perf_counter() - t)}")
    _ = cmp.status, cmp.depth
    for basis in fl.WIDTH_BASES:
        t = time.perf_counter()
        w = fl.effective_widths(cmp, "total_samples", basis)
        t1 = time.perf_counter()
        fl.compute_layout(cmp.parent, w, cmp.depth)
        t2 = time.perf_counter()
        print(f"layout [{basis:8}]  widths {_ms(t1 - t)}  placement {_ms(t2 - t1)}")
    t = time.perf_counter()
    fl.row_colors(cmp, "total_samples", "self_pct", fl.scale_for(cmp, "total_samples",
                                                                   "self_pct"))
    print(f"colours (self Δ, pp):           {_ms(time.perf_counter() - t)}")

    view = FlameView()
    view.resize(1400, 900)
    t = time.perf_counter()
    view.set_comparison(cmp, "total_samples")
    print(f"FlameView.set_comparison total: {_ms(time.perf_counter() - t)}")
    size = (1400, 800)
    view.canvas.resize(*size)

    def frame() -> float:
        t0 = time.perf_counter()
        view.render_image(size)
        return time.perf_counter() - t0

    def report(label: str, times: list[float]) -> None:
        ts = np.array(times) * 1000
        print(f"{label:34} median {np.median(ts):6.1f} ms  max {ts.max():6.1f} ms  "
              f"({len(ts)} frames, {len(view.canvas.last_rects.get('rows', []))} rects last)")

    report("paint, full view", [frame() for _ in range(5)])
    # zoom around a deep, heavy point with Ctrl+wheel-like steps
    lay = view._layout
    deep = int(np.argmax(np.where(lay.width * 1400 > 3, lay.depth, -1)))
    cx = lay.x0[deep] + lay.width[deep] / 2
    zt = []
    for _ in range(30):
        x0, x1 = view._window
        span = (x1 - x0) / 1.25
        view._set_window(cx - span / 2, cx + span / 2)
        zt.append(frame())
    report("zoom steps (x1.25, 30 frames)", zt)
    pt = []
    for _ in range(30):
        x0, x1 = view._window
        view._set_window(x0 + 0.03 * (x1 - x0), x1 + 0.03 * (x1 - x0))
        pt.append(frame())
    report("pan steps at that zoom", pt)
    view.zoom_to(-1)
    pt = []
    for k in range(30):
        view._set_window(0.3 + k * 0.01, 0.5 + k * 0.01)
        pt.append(frame())
    report("pan steps, 20 % window", pt)
    t = time.perf_counter()
    view.zoom_to(int(cmp.parent[deep]) if cmp.parent[deep] >= 0 else deep)
    report("after zoom_to(deep frame)", [frame() for _ in range(5)])
    t = time.perf_counter()
    share = view.search("fn_12")
    ts = time.perf_counter() - t
    view.zoom_to(-1)
    report("paint with search active", [frame() for _ in range(5)])
    print(f"search('fn_12'): {_ms(ts)}  share {share * 100:.2f} %")
    app.processEvents()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
