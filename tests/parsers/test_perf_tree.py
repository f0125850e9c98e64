"""parsers.perf_tree builds exactly the tree parsers.builder.tree_from_paths builds."""

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import builder, perf_script, perf_tree

DATA = Path(__file__).resolve().parents[1] / "data" / "perf"


def _paths(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Random root-first paths sharing prefixes (like stacks), some given out of order."""
    rng = np.random.default_rng(seed)
    npaths = int(rng.integers(1, 2000))
    nfr = int(rng.integers(1, 40 if seed % 2 else 4000))
    lengths = rng.integers(1, 40, npaths)
    flat = rng.integers(0, nfr, int(lengths.sum())).astype(np.int32)
    starts = np.cumsum(lengths) - lengths
    for k in range(1, npaths):
        if rng.random() < 0.7:
            c = int(rng.integers(0, min(lengths[k], lengths[k - 1]) + 1))
            flat[starts[k] : starts[k] + c] = flat[starts[k - 1] : starts[k - 1] + c]
    if seed % 3 == 0:
        perm = rng.permutation(npaths)
        starts, lengths = starts[perm], lengths[perm]
    return flat, starts, lengths, nfr


@pytest.mark.parametrize("dense", [True, False], ids=["dense table", "sorting path"])
@pytest.mark.parametrize("seed", range(12))
def test_same_tree_as_the_builder(seed, dense, monkeypatch):
    if not dense:  # every level through builder.factorize
        monkeypatch.setattr(perf_tree, "DENSE_MIN", 0)
        monkeypatch.setattr(perf_tree, "DENSE_FACTOR", 0)
    args = _paths(seed)
    want = builder.tree_from_paths(*args)
    got = perf_tree.tree_from_paths(*args)
    for name, w, g in zip(("parent", "frame", "leaf", "bounds"), want, got, strict=True):
        assert np.array_equal(w, g), name


REAL = ["script/firefox-profiler-graphviz.perf.gz", "script/flamegraph-example-perf-stacks.txt.gz",
        "script/flamegraph-perf-iperf-stacks-pidtid-01.txt.gz", "c-vm/v2/perf.script.txt.gz"]


@pytest.mark.parametrize("split_by", [None, "comm", "pid"])
@pytest.mark.parametrize("name", REAL)
def test_real_recordings_read_the_same_with_either_build(name, split_by, monkeypatch):
    path = DATA / name
    mine = perf_script.read(path, split_by=split_by)
    monkeypatch.setattr(perf_script, "tree_from_paths", builder.tree_from_paths)
    theirs = perf_script.read(path, split_by=split_by)
    assert mine.n_nodes == theirs.n_nodes > 30
    assert np.array_equal(mine.parent, theirs.parent)
    assert np.array_equal(mine.frame, theirs.frame)
    assert mine.frames.name.tolist() == theirs.frames.name.tolist()
    for m, v in theirs.values.items():
        assert np.array_equal(mine.values[m], v), m
