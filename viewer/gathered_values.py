"""Per-row values of a tree comparison, each metric gathered from the runs the first time
it is read (Qt-free).

Why lazily: a tree comparison of two 100 MB GHC ``.prof`` has 694k rows and 11 metrics,
116 MB as ``float64[row, run]``.  Its diff tree shows four of them, and a screen shows
forty rows: the row statuses compare base with new a block of rows at a time
in the baseline's node order (:meth:`GatheredValues.of_nodes`), a paint reads its rows (:meth:`GatheredValues.at`),
column widths and noise read one run's column (:meth:`GatheredValues.column`), and only
what needs a whole metric (a sort, a group's spread) builds it.  Building all eleven up
front was the largest single step of the app's first paint (0.43 s, most of it the first
touch of new memory, which on this VM costs 1-2 ms per MB).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from profdiff.parsers.model import Profile

RECENT_COLUMNS = 4
"""Single-run columns :meth:`GatheredValues.column` keeps: a metric's value, Δ and Δ%
columns (their widths, sort keys, rankings) read the same two runs' columns one after
the other; four 10^6-row columns are 32 MB, against the 16 MB of one metric built whole."""


FEW_NODES = 64
"""At most this many nodes are looked up by :meth:`GatheredValues.rows_of` without
building the run's inverse (:meth:`GatheredValues.row_of_nodes`)."""


class GatheredValues(Mapping[str, np.ndarray]):
    """``metric name -> float64[n, R]`` as :class:`viewer.compare.Comparison` documents it
    (0 where a run lacks the row, NaN where a run lacks the metric); each array is built
    on its first read, once, whichever thread reads it (workers rank and estimate noise
    while the GUI thread paints)."""

    def __init__(self, profiles: Sequence[Profile], names: Sequence[str],
                 node: np.ndarray) -> None:
        self._profiles = list(profiles)
        self._names = list(dict.fromkeys(names))
        self._known = frozenset(self._names)
        self._node = node
        self._built: dict[str, np.ndarray] = {}
        self._node_cols: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self._recent: dict[tuple[str, int], np.ndarray] = {}  # :meth:`column`'s last reads
        self._row_of: dict[int, np.ndarray] = {}  # run -> row of each of its nodes
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> np.ndarray:
        got = self._built.get(name)
        if got is not None:
            return got
        if name not in self._known:
            raise KeyError(name)
        with self._lock:
            got = self._built.get(name)
            if got is None:
                got = self._gather(name)
                self._built[name] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def is_built(self, name: str) -> bool:
        """Whether ``name``'s whole array exists (tests, and the benchmarks' accounting)."""
        return name in self._built

    def block(self, name: str, rows: slice) -> np.ndarray:
        """``self[name][rows]``, without building the whole array when it is not built:
        the rows' values are taken from the runs' arrays into a block-sized array."""
        got = self._built.get(name)
        if got is not None or rows == slice(None):
            return self[name][rows]
        if name not in self._known:
            raise KeyError(name)
        node = self._node[rows]
        out = np.empty(node.shape, dtype=np.float64)
        for r, p in enumerate(self._profiles):
            out[:, r] = self._column(p, name, node[:, r])
        return out

    def column(self, name: str, run: int) -> np.ndarray:
        """``self[name][:, run]``, from the run alone when the array is not built (and
        not kept: built arrays are the ones every run's column is read from)."""
        got = self._built.get(name)
        if got is not None:
            return got[:, run]
        if name not in self._known:
            raise KeyError(name)
        p = self._profiles[run]
        if not p.has_metric(name):
            return np.full(len(self._node), np.nan)
        col = p.values[name]
        if col.size == 0:
            return np.zeros(len(self._node))
        key = (name, run)
        with self._lock:
            out = self._recent.pop(key, None)
            if out is not None:
                self._recent[key] = out  # most recent last
                return out
        idx, absent = self._nodes(run)
        out = col.take(idx).astype(np.float64, copy=False)
        if absent is not None:
            out[absent] = 0.0
        out.flags.writeable = False  # as a view of a built array would be
        with self._lock:
            self._recent[key] = out
            while len(self._recent) > RECENT_COLUMNS:
                self._recent.pop(next(iter(self._recent)))
        return out

    def at(self, name: str, run: int, rows: np.ndarray | Sequence[int]) -> np.ndarray:
        """``self[name][rows, run]`` for row ids ``rows``, without building the array."""
        got = self._built.get(name)
        if got is not None:
            return got[rows, run]
        if name not in self._known:
            raise KeyError(name)
        return self._column(self._profiles[run], name, self._node[rows, run])

    def of_nodes(self, name: str, run: int, nodes: np.ndarray | slice) -> np.ndarray:
        """``run``'s values at its node ids ``nodes`` (all valid; a slice reads them in
        place), as float64; NaN when the run lacks the metric."""
        p = self._profiles[run]
        if name not in self._known:
            raise KeyError(name)
        if not p.has_metric(name):
            return np.full(len(range(p.n_nodes)[nodes]) if isinstance(nodes, slice)
                           else len(nodes), np.nan)
        return np.asarray(p.values[name][nodes], dtype=np.float64)

    def of_nodes_or_zero(self, name: str, run: int, nodes: np.ndarray) -> np.ndarray:
        """``run``'s values at its node ids ``nodes``, 0 where a node is -1 (the run lacks
        that row), as float64; NaN when the run lacks the metric."""
        if name not in self._known:
            raise KeyError(name)
        return self._column(self._profiles[run], name, nodes)

    def run_values(self, name: str, run: int) -> np.ndarray:
        """The values of ``run``'s rows: its own array as float64 (every node of a run is
        one row), all NaN when the run lacks the metric."""
        p = self._profiles[run]
        if name not in self._known:
            raise KeyError(name)
        if not p.has_metric(name):
            return np.full(p.n_nodes, np.nan)
        return np.asarray(p.values[name], dtype=np.float64)

    def rows_of(self, run: int, nodes: np.ndarray) -> np.ndarray:
        """The row of each of ``run``'s node ids ``nodes``.

        A few nodes (the rows a column's width is measured on) are looked up in the
        run's column of the node table while :meth:`row_of_nodes` is not built: building
        it is a scatter over every node (~10 ms a run at 10^6 rows) that the first paint
        would pay for a handful of rows, and only the baseline's is needed later (the
        blockwise readers)."""
        nodes = np.asarray(nodes, dtype=np.intp)
        if run not in self._row_of and nodes.size <= FEW_NODES:
            return self._search_rows(run, nodes)
        return self.row_of_nodes(run)[nodes]

    def _search_rows(self, run: int, nodes: np.ndarray) -> np.ndarray:
        """:meth:`rows_of` by a search of the node table (each node is in one row)."""
        col = self._node[:, run]
        hit = np.flatnonzero(np.isin(col, nodes))
        found = col[hit]
        order = np.argsort(found, kind="stable")
        at = np.searchsorted(found[order], nodes)
        if nodes.size and (at.max() >= len(found) or np.any(found[order][at] != nodes)):
            raise IndexError(f"node not in run {run}")
        return hit[order][at].astype(np.int64)

    def row_of_nodes(self, run: int) -> np.ndarray:
        """The row of each of ``run``'s nodes, by node id (read-only; computed once):
        the rows in the run's node order, which the blockwise readers walk."""
        with self._lock:
            inv = self._row_of.get(run)
            if inv is None:
                col = self._node[:, run]
                has = np.flatnonzero(col >= 0)
                inv = np.empty(self._profiles[run].n_nodes, dtype=np.int64)
                inv[col[has]] = has
                inv.flags.writeable = False
                self._row_of[run] = inv
        return inv

    @staticmethod
    def _column(p: Profile, name: str, nodes: np.ndarray) -> np.ndarray:
        """One run's values at ``nodes`` (0 where -1: an absent row costs nothing; NaN
        throughout when the run lacks the metric)."""
        if not p.has_metric(name):
            return np.full(len(nodes), np.nan)
        col = p.values[name]
        absent = nodes < 0
        if col.size == 0:
            return np.zeros(len(nodes))
        v = col.take(np.maximum(nodes, 0)).astype(np.float64, copy=False)
        if absent.any():
            v = np.where(absent, 0.0, v)
        return v

    def _nodes(self, run: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(``run``'s node of every row, 0 where absent; the absent rows' mask or None),
        computed once (two threads at once would compute the same twice): every
        metric's gather and column read them."""
        got = self._node_cols.get(run)
        if got is None:
            col = self._node[:, run]
            absent = col < 0
            got = (np.maximum(col, 0).astype(np.intp), absent if absent.any() else None)
            self._node_cols[run] = got
        return got

    def _gather(self, name: str) -> np.ndarray:
        """The whole array, column-major: each run's column is one contiguous ``take``
        from the run's own array (and every later read of one run's column is
        contiguous too)."""
        n, R = self._node.shape
        out = np.empty((n, R), dtype=np.float64, order="F")  # made read-only below
        for r, p in enumerate(self._profiles):
            dst = out[:, r]
            if not p.has_metric(name):
                dst[:] = np.nan
                continue
            col = p.values[name]
            if col.size == 0:
                dst[:] = 0.0
                continue
            idx, absent = self._nodes(r)
            if col.dtype == np.float64:
                np.take(col, idx, out=dst, mode="clip")  # "raise" would buffer
            else:
                dst[:] = col.take(idx)
            if absent is not None:
                dst[absent] = 0.0
        out.flags.writeable = False  # shared by every view and worker: nobody writes
        return out
