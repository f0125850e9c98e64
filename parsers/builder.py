"""One builder that every reader feeds, so a reader is only about its format.

Two ways in, mirroring the two shapes profiler output comes in:

* ``add_child(parent, frame, **values)`` for formats that print the tree (GHC ``.prof``,
  ``-pj`` JSON): nodes arrive parent-first.
* ``add_stack(frames, **values)`` for sampled formats (perf, pprof): each stack
  (root first) is merged into a trie and its values are added to the leaf's self values.

Values are kept in flat Python lists (appending is cheap) and turned into numpy columns
once in :meth:`TreeBuilder.build`, which also derives inclusive columns from self
columns with one vectorised reverse sweep.  Readers that already hold whole columns
(vectorised parsing) call :func:`profile_from_arrays` directly.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .model import FrameTable, Kind, Metric, Profile, inclusive_from_self, make_frame_table


class FrameInterner:
    """Interns (name, module, src, line, kind) tuples to dense frame ids."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str, str, int, str], int] = {}
        self._rows: list[tuple[str, str, str, int, str]] = []

    def __call__(
        self, name: str, module: str = "", src: str = "", line: int = 0, kind: str = ""
    ) -> int:
        key = (name, module, src, line, kind)
        fid = self._ids.get(key)
        if fid is None:
            fid = len(self._rows)
            self._ids[key] = fid
            self._rows.append(key)
        return fid

    def __len__(self) -> int:
        return len(self._rows)

    def table(self) -> FrameTable:
        if not self._rows:
            return make_frame_table([], [], [], [], [])
        names, modules, srcs, lines, kinds = zip(*self._rows, strict=True)
        return make_frame_table(names, modules, srcs, lines, kinds)


class TreeBuilder:
    """Accumulates a call tree node by node or stack by stack.

    ``metric_names`` are the self/node columns the reader will supply; missing values
    default to 0.
    """

    def __init__(self, metric_names: Sequence[str]) -> None:
        self.frame = FrameInterner()
        self._names = list(metric_names)
        self._parent: list[int] = []
        self._frame: list[int] = []
        self._cols: dict[str, list[float]] = {m: [] for m in self._names}
        self._trie: dict[tuple[int, int], int] = {}
        self._bulk: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]] | None = None

    def __len__(self) -> int:
        return len(self._parent) if self._bulk is None else len(self._bulk[0])

    def add_child(self, parent: int, frame: int, **values: float) -> int:
        """Append a node under ``parent`` (-1 for a root) and return its id."""
        nid = len(self._parent)
        if parent >= nid:
            raise ValueError("parent must be added before its children")
        self._parent.append(parent)
        self._frame.append(frame)
        for m, col in self._cols.items():
            col.append(values.get(m, 0))
        return nid

    def child(self, parent: int, frame: int) -> int:
        """The node for ``frame`` under ``parent``, created (with zero values) if new."""
        key = (parent, frame)
        nid = self._trie.get(key)
        if nid is None:
            nid = self.add_child(parent, frame)
            self._trie[key] = nid
        return nid

    def add_stack(self, frames: Iterable[int], **values: float) -> int:
        """Merge a root-first stack of frame ids; add ``values`` to the leaf. Returns the leaf."""
        node = -1
        for f in frames:
            node = self.child(node, f)
        if node < 0:
            raise ValueError("empty stack")
        self.add_values(node, **values)
        return node

    def add_stacks(self, flat: Sequence[int], lengths: Sequence[int],
                   columns: Mapping[str, np.ndarray]) -> None:
        """Merge many root-first stacks at once (``flat`` holds them one after the other,
        ``lengths`` their sizes; ``columns`` one value per stack, added to its leaf).

        Why: :meth:`add_stack` costs Python calls per frame; this is
        :func:`tree_from_paths`.  Only on an empty builder.
        """
        if len(self._parent) or self._bulk is not None:
            raise ValueError("add_stacks needs an empty builder")
        lens = np.asarray(lengths, dtype=np.int64)
        starts = np.cumsum(lens) - lens
        parent, frame, leaf, bounds = tree_from_paths(np.asarray(flat, dtype=np.int64), starts,
                                                      lens, len(self.frame))
        cols = {}
        for m in self._names:
            v = np.asarray(columns.get(m, np.zeros(len(lengths))))
            summed = np.zeros(len(parent), dtype=v.dtype if v.dtype.kind in "iuf" else np.int64)
            np.add.at(summed, leaf, v)
            cols[m] = summed
        self._bulk = (parent, frame, cols)

    def add_values(self, node: int, **values: float) -> None:
        for m, v in values.items():
            self._cols[m][node] += v

    def build(
        self,
        *,
        path: str,
        format: str,
        metrics: Sequence[Metric],
        inclusive: Mapping[str, str] | None = None,
        **profile_kwargs: Any,
    ) -> Profile:
        """Freeze into a :class:`Profile`.

        ``inclusive`` maps an inclusive metric name to the self column it is derived from;
        those columns are computed here (subtree sums).
        """
        if self._bulk is not None:
            parent, frame, cols = self._bulk
        else:
            cols = {m: np.asarray(v) for m, v in self._cols.items()}
            parent = np.asarray(self._parent, dtype=np.int32)
            frame = np.asarray(self._frame, dtype=np.int32)
        return profile_from_arrays(
            path=path,
            format=format,
            frames=self.frame.table(),
            parent=parent,
            frame=frame,
            metrics=metrics,
            columns=cols,
            inclusive=inclusive,
            **profile_kwargs,
        )


def profile_from_arrays(
    *,
    path: str,
    format: str,
    frames: FrameTable,
    parent: np.ndarray,
    frame: np.ndarray,
    metrics: Sequence[Metric],
    columns: Mapping[str, np.ndarray],
    inclusive: Mapping[str, str] | None = None,
    **profile_kwargs: Any,
) -> Profile:
    """Assemble a Profile from whole columns; derive ``inclusive`` columns from self ones."""
    cols = dict(columns)
    if inclusive:
        from .model import depth_from_parent

        depth = depth_from_parent(np.asarray(parent, dtype=np.int32))
        for inc, self_name in inclusive.items():
            cols[inc] = inclusive_from_self(np.asarray(parent), np.asarray(cols[self_name]), depth)
    names = {m.name for m in metrics}
    missing = names - cols.keys()
    if missing:
        raise ValueError(f"no column for metrics {sorted(missing)}")
    return Profile(
        path=str(path),
        format=format,
        frames=frames,
        parent=parent,
        frame=frame,
        metrics=tuple(metrics),
        values={m.name: cols[m.name] for m in metrics},
        **profile_kwargs,
    )


def flat_profile(*, path: str, format: str, frames: FrameTable, metrics: Sequence[Metric],
                 columns: Mapping[str, np.ndarray], **profile_kwargs: Any) -> Profile:
    """A one-level profile (every frame one root node, in frame order): how flat formats
    (ticky closures, ``.mem`` lines, heap bands, allocated types) enter the tree model."""
    n = len(frames)
    return profile_from_arrays(
        path=path, format=format, frames=frames, parent=np.full(n, -1, dtype=np.int32),
        frame=np.arange(n, dtype=np.int32), metrics=metrics, columns=columns, **profile_kwargs,
    )


def percent_of(values: np.ndarray, total: float) -> np.ndarray:
    """``values`` as percent of ``total`` (zeros for an empty run): the ``*_pct`` columns."""
    values = np.asarray(values, dtype=np.float64)
    return values * (100.0 / total) if total else np.zeros(len(values))


def self_and_total(
    base: str, unit: Any, label: str, *, sampled: bool = False, self_prefix: str = "self_",
    total_prefix: str = "total_", percent_of: str | None = None, timed: bool = False,
) -> tuple[Metric, Metric]:
    """The usual pair ``self_<base>`` / ``total_<base>`` (perf, pprof).  ``percent_of``: for
    a percent pair, the base of the absolute pair it is the share of (``"samples"``);
    ``timed``: durations measured once (:attr:`Metric.timed`)."""
    s = Metric(f"{self_prefix}{base}", unit, Kind.SELF, f"self {label}", sampled=sampled,
               percent_of=f"{self_prefix}{percent_of}" if percent_of else None, timed=timed)
    t = Metric(
        f"{total_prefix}{base}", unit, Kind.INCLUSIVE, f"total {label}", sampled=sampled,
        self_of=s.name, percent_of=f"{total_prefix}{percent_of}" if percent_of else None,
        timed=timed,
    )
    return s, t


HASHED_BUILD = 2_000_000  # path frames from which every level of a build hashes (pandas)


def factorize(keys: np.ndarray, pandas_from: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques) with uniques in first-appearance order, like ``pandas.factorize``
    (codes int64, uniques of the keys' dtype).

    pandas hashes in O(n), which matters for the 10^6-row levels of a big perf recording;
    inputs below ``pandas_from`` use numpy (a sort) so a small file does not pay for
    importing pandas (0.4-1 s at start-up), unless something imported it already.  A
    caller with one big array (not one per tree level) can raise ``pandas_from``: one
    10^6-key sort costs less than the import.
    """
    keys = np.asarray(keys)
    if len(keys) > pandas_from or (len(keys) > 20_000 and "pandas" in sys.modules):
        import pandas as pd

        codes, uniques = pd.factorize(keys, sort=False)
        return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=keys.dtype)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq), dtype=np.int64)
    return rank[inverse.ravel()], uniq[order]


_factorize = factorize  # the name tree_from_paths has always used


def tree_from_paths(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge many root-first paths into a trie, level by level with whole-array operations.

    The nodes come out level by level (breadth first); level ``d`` is nodes
    ``bounds[d]:bounds[d+1]`` (for :func:`inclusive_by_levels`).

    Path ``k`` is ``flat[starts[k] : starts[k] + lengths[k]]`` (frame ids, root first,
    ``lengths[k] >= 1``).  Returns ``(parent, frame, leaf)``: the trie's node columns
    (parents before children, siblings in the order of the first path that reaches them,
    as :meth:`TreeBuilder.add_stack` would make them), the node each path ends at and
    the level bounds.
    Why: a per-frame Python loop cost 5 M calls at 2 M nodes; this costs one hash pass
    per depth level.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    flat = np.asarray(flat)
    if len(lengths) and int(lengths.min()) < 1:
        raise ValueError("every path needs at least one frame")
    node = np.full(len(starts), -1, dtype=np.int64)
    parents: list[np.ndarray] = []
    frames: list[np.ndarray] = []
    active = np.arange(len(starts), dtype=np.int64)
    level = 0
    n = 0
    width = int(n_frames) + 1
    # a deep build (~100 levels of 10^5 rows) pays for the pandas import many times over
    pandas_from = 20_000 if int(lengths.sum()) > HASHED_BUILD else 200_000
    while active.size:
        f = flat[starts[active] + level].astype(np.int64)
        codes, uniq = _factorize((node[active] + 1) * width + f, pandas_from)
        parents.append(uniq // width - 1)
        frames.append(uniq % width)
        node[active] = n + codes
        n += len(uniq)
        level += 1
        active = active[lengths[active] > level]
    parent = np.concatenate(parents).astype(np.int32) if parents else np.zeros(0, np.int32)
    bounds = np.cumsum([0] + [len(p) for p in parents]).astype(np.int64)
    frame = np.concatenate(frames).astype(np.int32) if frames else np.zeros(0, np.int32)
    return parent, frame, node, bounds


def inclusive_by_levels(parent: np.ndarray, self_values: np.ndarray,
                        bounds: np.ndarray) -> np.ndarray:
    """Subtree sums of a tree stored level by level (level ``d`` is nodes
    ``bounds[d]:bounds[d+1]``, as :func:`tree_from_paths` makes it): one ``bincount``
    per level, deepest first, with no sort.  Integer columns stay exact below 2^53."""
    out = np.array(self_values, dtype=np.float64 if self_values.dtype.kind == "f" else np.int64)
    for d in range(len(bounds) - 2, 0, -1):
        lo, mid, hi = int(bounds[d - 1]), int(bounds[d]), int(bounds[d + 1])
        add = np.bincount(parent[mid:hi] - lo, weights=out[mid:hi], minlength=mid - lo)
        out[lo:mid] += add.astype(out.dtype)
    return out


def depth_of_levels(bounds: np.ndarray) -> np.ndarray:
    """Depth per node of a tree stored level by level (see :func:`tree_from_paths`)."""
    return np.repeat(np.arange(len(bounds) - 1, dtype=np.int32), np.diff(bounds))
