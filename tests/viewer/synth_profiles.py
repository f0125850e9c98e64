"""Synthetic GHC-like profiles for the viewer tests and the viewer benchmark."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.model import Kind, Metric, Unit

VIEWER_DATA = Path(__file__).parent.parent / "data" / "viewer"

METRICS = [
    Metric("entries", Unit.COUNT, Kind.NODE, "entries", better="none"),
    Metric("time_pct", Unit.PERCENT, Kind.SELF, "%time", sampled=True, percent_of="time_s"),
    Metric("alloc_pct", Unit.PERCENT, Kind.SELF, "%alloc", percent_of="alloc_bytes"),
    Metric("inherited_time_pct", Unit.PERCENT, Kind.INCLUSIVE, "inh %time", sampled=True,
           self_of="time_pct"),
    Metric("inherited_alloc_pct", Unit.PERCENT, Kind.INCLUSIVE, "inh %alloc",
           self_of="alloc_pct", percent_of="inherited_alloc_bytes"),
    Metric("alloc_bytes", Unit.BYTES, Kind.SELF, "alloc"),
    Metric("inherited_alloc_bytes", Unit.BYTES, Kind.INCLUSIVE, "inh alloc",
           self_of="alloc_bytes"),
]


def synth(stacks: list[tuple[list[str], float, float]], path: str = "synth.prof",
          program: str = "prog"):
    """A GHC-like profile from (stack, self time %, self alloc bytes) triples."""
    b = TreeBuilder(["entries", "time_pct", "alloc_pct", "alloc_bytes"])
    total_alloc = sum(a for _, _, a in stacks) or 1
    for frames, t, a in stacks:
        fids = [b.frame(n, n.split(".")[0] if "." in n else "Main", f"{n}.hs:1") for n in frames]
        leaf = b.add_stack(fids, time_pct=t, alloc_bytes=a, alloc_pct=100 * a / total_alloc)
        b.add_values(leaf, entries=1)
    return b.build(
        path=path, format="ghc-prof", metrics=METRICS,
        inclusive={"inherited_time_pct": "time_pct", "inherited_alloc_pct": "alloc_pct",
                   "inherited_alloc_bytes": "alloc_bytes"},
        meta={"program": program, "command_line": f"{program} +RTS -p", "date": "today"},
        totals={"total_alloc_bytes": float(total_alloc)},
        default_metric="time_pct",
        display_metrics=("entries", "time_pct", "alloc_pct", "inherited_time_pct",
                         "inherited_alloc_pct"),
    )


BASE_STACKS = [
    (["MAIN", "main", "f"], 40.0, 1000),
    (["MAIN", "main", "f", "h"], 5.0, 50),
    (["MAIN", "main", "g"], 30.0, 2000),
    (["MAIN", "main", "g", "Data.Map.insert"], 10.0, 500),
    (["MAIN", "CAF"], 15.0, 10),
]
NEW_STACKS = [
    (["MAIN", "main", "f"], 20.0, 1000),
    (["MAIN", "main", "g"], 50.0, 6000),
    (["MAIN", "main", "g", "Data.Map.insert"], 10.0, 500),
    (["MAIN", "main", "k"], 5.0, 100),
    (["MAIN", "CAF"], 15.0, 10),
]


def random_profile(n: int, seed: int = 0, path: str = "big.prof", n_names: int = 5000):
    """A random tree of ``n`` nodes (parents precede children) with GHC-like metrics."""
    from profdiff.parsers.builder import profile_from_arrays
    from profdiff.parsers.model import make_frame_table

    rng = np.random.default_rng(seed)
    parent = np.empty(n, dtype=np.int32)
    parent[0] = -1
    # mostly shallow-ish: parent chosen among recent nodes
    idx = np.arange(1, n)
    parent[1:] = np.maximum(idx - 1 - rng.geometric(0.02, n - 1), 0)
    frame = rng.integers(0, n_names, n).astype(np.int32)
    names = [f"fn{i}" for i in range(n_names)]
    modules = [f"Mod{i % 97}" for i in range(n_names)]
    frames = make_frame_table(names, modules, [f"M{i % 97}.hs:{i}" for i in range(n_names)])
    t = rng.exponential(1.0, n)
    t *= 100 / t.sum()
    a = rng.exponential(1000.0, n).round()
    cols = {"entries": rng.integers(0, 100, n).astype(np.float64), "time_pct": t,
            "alloc_pct": 100 * a / a.sum(), "alloc_bytes": a}
    return profile_from_arrays(
        path=path, format="ghc-prof", frames=frames, parent=parent, frame=frame,
        metrics=METRICS, columns=cols,
        inclusive={"inherited_time_pct": "time_pct", "inherited_alloc_pct": "alloc_pct",
                   "inherited_alloc_bytes": "alloc_bytes"},
        default_metric="time_pct",
        display_metrics=("entries", "time_pct", "alloc_pct", "inherited_time_pct",
                         "inherited_alloc_pct"),
    )
