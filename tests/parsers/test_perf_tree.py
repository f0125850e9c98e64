"""parsers.perf_tree builds exactly the tree parsers.builder.tree_from_paths builds."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# -- the sorting build (perf_tree._tree_by_sorting) against the reference ----------------

def _same(want, got) -> None:
    """Values and dtypes of (parent, frame, leaf, bounds) are the reference's."""
    for name, w, g in zip(("parent", "frame", "leaf", "bounds"), want, got, strict=True):
        assert g.dtype == w.dtype, name
        assert np.array_equal(w, g), name


def _both_builds(flat, starts, lengths, n_frames) -> None:
    """The reference, the public function, and each of its two builds called directly."""
    want = builder.tree_from_paths(flat, starts, lengths, n_frames)
    _same(want, perf_tree.tree_from_paths(flat, starts, lengths, n_frames))
    args = (np.asarray(flat), np.asarray(starts, dtype=np.int64),
            np.asarray(lengths, dtype=np.int64), n_frames)
    _same(want, perf_tree._tree_by_levels(*args))
    _same(want, perf_tree._tree_by_sorting(*args))


def _recorded_paths(path: Path, split_by=None) -> list[tuple]:
    """The arguments perf_script.read passes to tree_from_paths for a real recording."""
    calls: list[tuple] = []
    real = perf_script.tree_from_paths

    def record(*args):
        calls.append(args)
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(perf_script, "tree_from_paths", record)
        perf_script.read(path, split_by=split_by)
    assert calls
    return calls


SCRIPTS = sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*")
                 if p.is_file() and (p.parent.name == "script" or p.name.startswith("perf.script")))


@pytest.mark.parametrize("split_by", [None, "pid"])
@pytest.mark.parametrize("name", SCRIPTS)
def test_real_path_sets_build_as_the_reference(name, split_by):
    """Every perf script text in tests/data (1-4,768 paths, 1-189 deep, up to 655 frames:
    one- and two-byte rows), paths as perf_script hands them over."""
    for args in _recorded_paths(DATA / name, split_by):
        _both_builds(*args)


def test_deep_real_paths_take_the_sorting_build(monkeypatch):
    """The build this module exists for is the one used on a deep recording."""
    used = []
    sorting = perf_tree._tree_by_sorting
    monkeypatch.setattr(perf_tree, "_tree_by_sorting",
                        lambda *a: used.append(1) or sorting(*a))
    (args,) = _recorded_paths(DATA / "script/flamegraph-example-perf-stacks.txt.gz")
    _same(builder.tree_from_paths(*args), perf_tree.tree_from_paths(*args))
    assert used


@st.composite
def path_sets(draw) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Paths made from earlier ones (a prefix of one, or all of it: duplicates) plus a
    tail, short or long; frame ids up to n_frames-1 around the one/two/four-byte edges;
    stored in order, shuffled, or with gaps between them."""
    n_frames = draw(st.one_of(st.integers(1, 6), st.integers(1, 3000), st.sampled_from(
        [254, 255, 256, 65534, 65535, 65536, 70000])))  # the per-level build: n_frames bytes
    top = st.just(n_frames - 1)
    frame = st.one_of(st.integers(0, min(n_frames - 1, 3)), st.integers(0, n_frames - 1), top)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    paths: list[list[int]] = []
    for _ in range(draw(st.integers(1, 25))):
        base = draw(st.sampled_from(paths)) if paths and draw(st.booleans()) else []
        path = base[:draw(st.integers(0, len(base)))] + draw(st.lists(frame, max_size=6))
        if draw(st.integers(0, 4)) == 0:  # a long tail from a few frames
            alphabet = np.array(draw(st.lists(frame, min_size=1, max_size=3)))
            path += rng.choice(alphabet, int(rng.integers(1, 300))).tolist()
        paths.append(path or [draw(frame)])
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    layout = draw(st.sampled_from(["in order", "shuffled", "gaps"]))
    order = rng.permutation(len(paths)) if layout == "shuffled" else np.arange(len(paths))
    gap = 3 if layout == "gaps" else 0
    starts = np.zeros(len(paths), dtype=np.int64)
    flat: list[int] = []
    for k in order:
        flat += [0] * gap
        starts[k] = len(flat)
        flat += paths[k]
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    return np.array(flat, dtype=dtype), starts, lengths, n_frames


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path_sets())
def test_random_path_sets_build_as_the_reference(paths):
    _both_builds(*paths)


def test_single_path_and_single_frame_paths():
    _both_builds(np.arange(50, dtype=np.int32), np.array([0]), np.array([50]), 50)
    _both_builds(np.zeros(3, dtype=np.int32), np.array([0, 1, 2]), np.array([1, 1, 1]), 1)
    _both_builds(np.array([0, 1], dtype=np.int32), np.array([0, 1, 0]), np.array([1, 1, 2]), 2)


def _deep(n_paths: int = 30, depth: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Paths deep enough for the sorting build."""
    lengths = np.full(n_paths, depth, dtype=np.int64)
    flat = (np.arange(n_paths * depth) % 7).astype(np.int32)
    return flat, np.arange(n_paths, dtype=np.int64) * depth, lengths, 7


def test_zero_length_paths_and_no_paths():
    flat, starts, lengths, n = _deep()
    lengths[3] = 0
    for depth_ok in (lengths, lengths[:5]):  # deep enough to sort, or not
        with pytest.raises(ValueError, match="every path needs at least one frame"):
            perf_tree.tree_from_paths(flat, starts[:len(depth_ok)], depth_ok, n)
    empty = (np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    _same(builder.tree_from_paths(*empty), perf_tree.tree_from_paths(*empty))


def test_frames_out_of_range_go_the_old_way():
    """Ids outside 0..n_frames-1 are the caller's bug: the result (or error) is the
    per-level build's, as before the sorting build."""
    flat, starts, lengths, n = _deep()
    flat[45] = n
    with pytest.raises(IndexError):
        perf_tree.tree_from_paths(flat, starts, lengths, n)
    flat[45] = -1
    _same(perf_tree._tree_by_levels(flat, starts, lengths, n),
          perf_tree.tree_from_paths(flat, starts, lengths, n))
    flat = flat.astype(np.int64)
    flat[45] = 2**32 - 1  # no room for the padding value in four bytes
    assert perf_tree._byte_rows(flat, starts, lengths, 2**32) is None
    flat[45] = 2**32 - 2
    assert perf_tree._byte_rows(flat, starts, lengths, 2**32).dtype == np.dtype(">u4")
