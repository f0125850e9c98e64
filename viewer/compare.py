"""The comparison engine: align 2..N profiles against a baseline (Qt-free).

Alignment is columnar.  Every run's frames get a key (``module + name``, or the reader's
``match`` identity, after the user's rename rules); keys are factorised to integers once
across all runs.  In tree mode nodes are matched by their *path* of keys from the root:
the union tree is built one depth level at a time (:mod:`viewer.tree_union`: the
baseline's levels, then each other run's keys looked up in them), so a 10^6-node pair
aligns in about 0.1 s and no Python object exists per node.  Siblings with equal keys
(same cost centre twice under one parent with different SRC, ticky closures whose names
normalise to one key) are kept apart deterministically by their ordinal among equal-key
siblings ordered by (src, file order).

Flat mode aggregates each run per key first (:func:`parsers.model.flat_aggregate`,
recursion-safe for inclusive metrics) and aligns the keys.

The result, :class:`Comparison`, holds for every aligned row the node id in each run
(-1 where absent), the values of every metric per run (a 2-D ``[row, run]`` array; of a
tree comparison gathered from the runs on first read, :mod:`viewer.gathered_values`),
and derived deltas and statuses.  Qt models, the CLI and exporters all read it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from profdiff.parsers.model import (
    Kind,
    Metric,
    Profile,
    Unit,
    children_csr,
    depth_from_parent,
    flat_aggregate,
    outermost_mask,
)

from .factorize import factorize
from .gathered_values import GatheredValues
from .tree_union import union_tree

if TYPE_CHECKING:
    from .noise import Noise

_ALL = slice(None)
"""Every row: the default ``rows`` of :meth:`Comparison.delta` and its kin."""

STATUS_BLOCK = 1 << 15
"""Rows judged at once by :meth:`Comparison.status_for`: each metric's block of base and
new values (512 kB) stays in cache and in memory the allocator reuses."""

KeyRule = Callable[[np.ndarray], np.ndarray]
"""A rename rule: maps an object array of frame keys (``module\\x1fname``) to new keys."""


MATCHED_BY = ("path", "rule", "suggestion")
"""How a row's runs were matched: by identical key path (flat: key), by a rename rule, or
by an accepted suggestion.  ``Comparison.matched_by`` holds indices into this tuple."""


class Status(IntEnum):
    """A row's verdict in a run against the baseline.

    ``MOVED``: a value moved beyond its precision, but only in metrics that follow the
    run's timing (:attr:`parsers.model.Metric.timed`: heap residency, measured
    durations) and with one run per side, which cannot tell such a move from run-to-run
    noise: two runs of one binary read 47 of 47 heap bands "changed".  Repeated runs
    (``--base``/``--new``) judge it by their spread instead."""

    SAME = 0
    CHANGED = 1
    ADDED = 2
    REMOVED = 3
    MOVED = 4

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(eq=False)
class Comparison:
    """Aligned rows of 2..N runs.

    Attributes:
        runs: the profiles, in the user's order.
        baseline: index of the baseline run; ``current`` is the run compared with it by
            default (the last non-baseline run).
        mode: ``"tree"`` or ``"flat"``.
        parent: int32[n] union-tree parent (-1 roots; all -1 in flat mode).
        node: int32[n, R] node id of each row in each run, -1 where absent (flat mode:
            one representative node, the first call site).
        present: bool[n, R].
        name, module, src: object arrays for display (from the first run that has the row).
        keys: object array of match keys (``module\\x1fname``) per row.
        values: metric name -> float64[n, R]; NaN where the run lacks the metric,
            0 where the run lacks the row (absent cost is zero cost).
        metrics: metric descriptions (union over runs, baseline's first).
    """

    runs: list[Profile]
    baseline: int
    mode: str
    parent: np.ndarray
    node: np.ndarray
    name: np.ndarray
    module: np.ndarray
    src: np.ndarray
    keys: np.ndarray
    values: Mapping[str, np.ndarray]
    metrics: list[Metric]
    matched_by: np.ndarray | None = None  # int8 codes into MATCHED_BY
    current: int = -1
    notes: list[str] = field(default_factory=list)
    noise: Noise | None = None  # spread/significance, when computed (see add_noise)
    # 3+ single runs: each other run's own estimate against the baseline (add_run_noise)
    run_noise: dict[int, Noise] = field(default_factory=dict)
    groups: tuple[list[Profile], list[Profile]] | None = None  # repeated-run groups
    total_override: dict[str, list[float | None]] | None = None  # e.g. group means
    rounding: dict[str, np.ndarray] = field(default_factory=dict)  # metric -> float[n, R]
    labels: list[str] | None = None  # run names shown everywhere (viewer.run_labels)

    def __post_init__(self) -> None:
        if self.current < 0:
            others = [i for i in range(len(self.runs)) if i != self.baseline]
            self.current = others[-1] if others else self.baseline
        if self.matched_by is None:
            self.matched_by = np.zeros(self.n_rows, dtype=np.int8)

    def defer(self, attr: str, table: np.ndarray, codes: np.ndarray) -> None:
        """Let column ``attr`` (one the comparison was built with) be ``table[codes]``,
        gathered on first read of the whole column; :meth:`label_at` reads rows of it
        without gathering it.

        Why: a tree aligned from 10^6-node runs gathers each label column (one object
        per row) from the runs' frame tables, ~15 ms apiece, and its first paint reads
        the match keys and the source locations only of a few rows (the details pane,
        a tooltip) or not at all (``keys``, ``src``: filters, rules, Copy and the flat
        table read them whole, later)."""
        self.__dict__.pop(attr, None)
        self.__dict__.setdefault("_deferred", {})[attr] = (table, codes)

    def label_at(self, attr: str, rows: int | slice | np.ndarray) -> Any:
        """``getattr(self, attr)[rows]``, without gathering a deferred column whole."""
        deferred = self.__dict__.get("_deferred")
        if attr not in self.__dict__ and deferred is not None and attr in deferred:
            table, codes = deferred[attr]
            return table[codes[rows]]
        return getattr(self, attr)[rows]

    def __getattr__(self, attr: str) -> Any:
        """A column given to :meth:`defer`, gathered now (only reached while ``attr`` is
        not an attribute yet; two threads at once gather the same values twice)."""
        deferred = self.__dict__.get("_deferred")
        if deferred is None or attr not in deferred:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        table, codes = deferred[attr]
        value = table[codes]
        self.__dict__[attr] = value
        return value

    def add_noise(self, noise: Noise) -> None:
        """Keep ``noise`` with the comparison; metrics already estimated stay as they
        were (the one place a comparison's noise changes after it is built).

        The statuses are judged again only when ``noise`` estimates a metric they are
        judged by for the first time (a sampled change within noise is no change): the
        estimates that only fade cells (shares, while absolute costs decide) leave the
        10^6 statuses as they are."""
        have = self.noise.metrics if self.noise is not None else {}
        judged = set(self.status_metrics())
        if any(k not in have for k in noise.metrics if k in judged):
            self.__dict__.pop("status", None)
        if self.noise is None:
            self.noise = noise
            return
        for k, v in noise.metrics.items():
            self.noise.metrics.setdefault(k, v)

    def noise_of_run(self, run: int) -> Noise | None:
        """The estimate ``run``'s changes against the baseline are judged by: :attr:`noise`
        for the current run (its pair's sampling error, or the groups' spread); for
        another of 3+ single runs its own pair's (:meth:`add_run_noise`), None until
        estimated."""
        return self.noise if run == self.current else self.run_noise.get(run)

    def add_run_noise(self, run: int, noise: Noise) -> None:
        """Keep ``noise``, the estimate of ``run`` against the baseline, as :meth:`add_noise`
        keeps the current run's (metrics already estimated stay as they were).

        Why per run: with 3+ single runs each run is compared with the baseline on its
        own, and one pair's sampling error says nothing of another's.  Judged by
        precision alone, three runs of one hs-ad binary read "39 changed" where each pair
        compared alone reads none."""
        if run == self.current:
            self.add_noise(noise)
            return
        have = self.run_noise.get(run)
        if have is None:
            self.run_noise[run] = noise
        else:
            for k, v in noise.metrics.items():
                have.metrics.setdefault(k, v)
        self.__dict__.get("_run_status", {}).pop(run, None)

    def noise_with(self, noise: Noise) -> Noise:
        """The estimate :meth:`add_noise` of ``noise`` would leave, without changing the
        comparison: a worker ranks with it before the GUI thread attaches ``noise``."""
        if self.noise is None:
            return noise
        merged = dataclasses.replace(self.noise, metrics=dict(self.noise.metrics))
        for k, v in noise.metrics.items():
            merged.metrics.setdefault(k, v)
        return merged

    # ----- shape ------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return len(self.parent)

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @cached_property
    def present(self) -> np.ndarray:
        return self.node >= 0

    @cached_property
    def metric_by_name(self) -> dict[str, Metric]:
        return {m.name: m for m in self.metrics}

    def has_metric(self, name: str) -> bool:
        return name in self.values

    @cached_property
    def depth(self) -> np.ndarray:
        return depth_from_parent(self.parent)

    @cached_property
    def key_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(code of each row's match key, the distinct keys): rows with a given key are
        then found by comparing integers, not by hashing 10^6 strings per look-up."""
        codes, uniques = factorize(np.asarray(self.keys, dtype=object))
        return codes, np.asarray(uniques, dtype=object)

    @cached_property
    def label_frames(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(each row's frame in the runs' frame tables laid end to end, those frames'
        names, their modules), set by :func:`align`: the rows' names and modules are
        these frames', so their distinct values can be found over the frame tables
        (10^2-10^5 strings) instead of the rows (10^6).  None for a comparison built
        another way."""
        return None

    @cached_property
    def children_offsets_ids(self) -> tuple[np.ndarray, np.ndarray]:
        return children_csr(self.parent)

    def children(self, row: int) -> np.ndarray:
        off, ids = self.children_offsets_ids
        p = self.n_rows if row < 0 else row
        return ids[off[p] : off[p + 1]]

    def run_names(self, row: int) -> list[tuple[str, str] | None]:
        """(name, module) of ``row`` as each run spells it (None where absent): a row
        matched by a rename rule or auto-match has different names in different runs."""
        out: list[tuple[str, str] | None] = []
        for r, p in enumerate(self.runs):
            nd = int(self.node[row, r])
            if nd < 0:
                out.append(None)
                continue
            f = p.frame[nd]
            out.append((str(p.frames.name[f]), str(p.frames.module[f])))
        return out

    @property
    def line_level(self) -> bool:
        """Rows are source lines (Julia ``.mem``): their ``src`` is ``file:line``, which
        every view shows, as a line's name is only its text."""
        return any(len(p.frames) and str(p.frames.kind[0]) == "line" for p in self.runs)

    def location(self, row: int) -> str:
        """``file:line`` of a source-line row as the baseline has it (the current run's
        when the baseline lacks it), with ``→ line`` when the current run has it at
        another line (code moved): '' for rows that are not source lines."""
        where: list[tuple[str, str] | None] = []
        for r, p in enumerate(self.runs):
            nd = int(self.node[row, r])
            f = p.frame[nd] if nd >= 0 else -1
            where.append(None if f < 0 or str(p.frames.kind[f]) != "line" else
                         (str(p.frames.module[f]), str(p.frames.src[f])))
        base, cur = where[self.baseline], where[self.current]
        first = base or cur or next((x for x in where if x), None)
        if first is None:
            return ""
        # the line only: one file read from .mem files of other names is one file
        moved = f" → {cur[1]}" if base and cur and cur[1] != base[1] else ""
        return f"{first[0]}:{first[1]}{moved}"

    def path_labels(self, row: int) -> list[str]:
        """``module.name`` of each row from the root down to ``row``."""
        up = []
        while row >= 0:
            up.append(row)
            row = int(self.parent[row])
        return self.row_labels(np.asarray(up[::-1], dtype=np.intp))

    def row_labels(self, rows: np.ndarray) -> list[str]:
        """``module.name`` (``name`` alone without a module) of each of ``rows``."""
        names = self.label_at("name", rows).tolist()
        modules = self.label_at("module", rows).tolist()
        return [f"{m}.{n}" if m else str(n) for n, m in zip(names, modules, strict=True)]

    # ----- values and deltas ------------------------------------------------------------
    def value(self, metric: str, run: int | None = None) -> np.ndarray:
        """``values[metric][:, run]``.  Of a metric whose whole array is not built, read
        from the run without building (or keeping) the array of every run: a view's
        column reads one run, and kept arrays are memory the first paint pays for."""
        return value_column(self.values, metric, self.current if run is None else run)

    def values_at(self, metric: str, run: int, rows: np.ndarray | Sequence[int]
                  ) -> np.ndarray:
        """``values[metric][rows, run]`` for row ids ``rows`` (a screenful: what a view
        paints), without building the metric's whole array."""
        v = self.values
        if isinstance(v, GatheredValues):
            return v.at(metric, run, rows)
        return v[metric][rows, run]

    def delta(self, metric: str, run: int | None = None,
              rows: slice | np.ndarray = _ALL) -> np.ndarray:
        """``run - baseline`` per row (absent rows count as zero cost); ``rows``: a block
        of rows only (what a view paints), or row ids (:meth:`delta_at`)."""
        if isinstance(rows, np.ndarray):
            return self.delta_at(metric, run, rows)
        run = self.current if run is None else run
        if rows == _ALL:
            return self.value(metric, run) - self.value(metric, self.baseline)
        v = self.block(metric, rows)
        return v[:, run] - v[:, self.baseline]

    def delta_at(self, metric: str, run: int | None,
                 rows: np.ndarray | Sequence[int]) -> np.ndarray:
        """:meth:`delta` at row ids ``rows``."""
        run = self.current if run is None else run
        return self.values_at(metric, run, rows) - self.values_at(metric, self.baseline, rows)

    def rel_at(self, metric: str, run: int | None,
               rows: np.ndarray | Sequence[int]) -> np.ndarray:
        """:meth:`rel` at row ids ``rows``."""
        return _rel(self.delta_at(metric, run, rows),
                    self.values_at(metric, self.baseline, rows))

    def change_at(self, metric: str, run: int | None, rows: np.ndarray | Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(``run``'s values, the baseline's, :meth:`delta_at`, :meth:`rel_at`) at row ids
        ``rows``, each run's values read once (a view sizing a metric's four columns
        over the rows it shows)."""
        run = self.current if run is None else run
        new = self.values_at(metric, run, rows)
        base = self.values_at(metric, self.baseline, rows)
        d = new - base
        return new, base, d, _rel(d, base)

    def row_values(self, metric: str, row: int) -> np.ndarray:
        """``values[metric][row]`` (one value per run), without building the metric's
        whole array (a details pane reads every metric of one row)."""
        return self.block(metric, slice(row, row + 1))[0]

    def changed_at(self, metric: str, row: int) -> bool:
        """``changed_mask(metric)[row]`` for one row."""
        return bool(self.changed_mask(metric, rows=slice(row, row + 1))[0])

    def present_values(self, metric: str, run: int) -> np.ndarray:
        """``metric``'s values in the rows ``run`` has, in no particular order (sums and
        extremes of a column; absent rows only add zeros).  Of a tree comparison read
        from the runs these are the run's own values (each node is one row), so the
        column is not built for them."""
        v = self.values
        if isinstance(v, GatheredValues):
            return v.run_values(metric, run)
        return v[metric][self.present[:, run], run]

    def rows_of_present(self, run: int, idx: np.ndarray) -> np.ndarray:
        """The rows of the entries ``idx`` of :meth:`present_values` of ``run``."""
        v = self.values
        if isinstance(v, GatheredValues):
            return v.rows_of(run, idx)
        return np.flatnonzero(self.present[:, run])[idx]

    def block(self, metric: str, rows: slice = _ALL) -> np.ndarray:
        """``values[metric][rows]``; a block of a metric whose whole array is not built
        yet is taken from the runs without building it (:class:`GatheredValues`)."""
        v = self.values
        return v.block(metric, rows) if isinstance(v, GatheredValues) else v[metric][rows]

    def change_extremes(self, metric: str, run: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose Δ, and whose Δ%, of ``metric`` may print widest: for each, the rows
        of the largest finite and smallest non-zero magnitudes and the first non-finite
        value - :func:`column_extremes` of :meth:`delta` and :meth:`rel` (the same rows),
        read a block of rows at a time (cached).

        Why: a view sizes its Δ and Δ% columns on first paint, and on 10^6 rows the
        whole columns (each value of both runs gathered, the differences, the ratios,
        their magnitudes) were ~100 MB of arrays made for a few rows."""
        run = self.current if run is None else run
        cache = self.__dict__.setdefault("_change_extremes", {})
        got = cache.get((metric, run))
        if got is None:
            d_ext, r_ext = Extremes(), Extremes()
            for rows, new, base in self.value_blocks(metric, run):
                d = new - base
                d_ext.add(d, rows)
                r_ext.add(_rel(d, base), rows)
            got = cache[(metric, run)] = (d_ext.rows(), r_ext.rows())
        return got

    def value_blocks(self, metric: str, run: int
                     ) -> Iterator[tuple[int | np.ndarray, np.ndarray, np.ndarray]]:
        """(rows, ``run``'s values of ``metric``, the baseline's) of every row once, a
        block at a time: ``rows`` is the first of consecutive rows, or (a tree read from
        its runs) the row ids of the block, in the baseline's node order.  For a pass
        over a whole metric that builds no column of it (widths, noise)."""
        if isinstance(self.values, GatheredValues):
            return self._node_order_blocks(metric, run, self.values)
        return self._row_order_blocks(metric, run)

    def _row_order_blocks(self, metric: str, run: int
                          ) -> Iterator[tuple[int | np.ndarray, np.ndarray, np.ndarray]]:
        """(first row, ``run``'s values, the baseline's) of consecutive blocks of rows."""
        for lo in range(0, self.n_rows, STATUS_BLOCK):
            v = self.block(metric, slice(lo, lo + STATUS_BLOCK))
            yield lo, v[:, run], v[:, self.baseline]

    def _node_order_blocks(self, metric: str, run: int, v: GatheredValues
                           ) -> Iterator[tuple[int | np.ndarray, np.ndarray, np.ndarray]]:
        """(rows, ``run``'s values, the baseline's) of every row, in blocks: first the
        baseline's rows in its node order (its values read as slices, the other run's
        nearly in order, as :meth:`_changed_in_node_order`), then the rows it lacks.
        Level order would read both runs' arrays at random: 3x the time on 10^6 rows."""
        b = self.baseline
        order, nodes, rest, rest_nodes = self._base_order(run, v)
        for lo in range(0, len(order), STATUS_BLOCK):
            blk = slice(lo, lo + STATUS_BLOCK)
            yield (order[blk], v.of_nodes_or_zero(metric, run, nodes[blk]),
                   v.of_nodes(metric, b, blk))
        for lo in range(0, len(rest), STATUS_BLOCK):
            blk = slice(lo, lo + STATUS_BLOCK)
            yield (rest[blk], v.of_nodes_or_zero(metric, run, rest_nodes[blk, 0]),
                   v.of_nodes_or_zero(metric, b, rest_nodes[blk, 1]))

    def _base_order(self, run: int, v: GatheredValues
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(every row of the baseline in its node order, ``run``'s node of each; the rows
        the baseline lacks, their nodes of ``run`` and of the baseline), computed once
        per run (read-only): each metric's node-order pass reads the same rows, and
        gathering a column of the ``[row, run]`` node table costs as much as the pass."""
        cache = self.__dict__.setdefault("_base_orders", {})
        got = cache.get(run)
        if got is None:
            # once, whichever thread asks first (the loader's estimate and statuses threads
            # start at once and both read it)
            with self.__dict__.setdefault("_base_order_lock", threading.Lock()):
                got = cache.get(run)
                if got is None:
                    b = self.baseline
                    order = v.row_of_nodes(b)
                    rest = np.flatnonzero(self.node[:, b] < 0)
                    got = (order, self.node[order, run], rest, self.node[rest][:, [run, b]])
                    for a in got:
                        a.flags.writeable = False
                    cache[run] = got
        return got

    def rel(self, metric: str, run: int | None = None) -> np.ndarray:
        """Relative change ``delta / |base|``; +inf when the base is 0 and the value grew."""
        return _rel(self.delta(metric, run), self.value(metric, self.baseline))

    def precision_of(self, metric: str, run: int | None = None,
                     rows: slice | np.ndarray = _ALL) -> np.ndarray:
        """Half-width of the interval the change of ``metric`` is known to, per row.

        The sum of both runs' rounding half-widths (0 where both values are exact).
        """
        h = self.rounding.get(metric)
        if h is None:
            return np.zeros(len(rows) if isinstance(rows, np.ndarray)
                            else len(range(self.n_rows)[rows]))
        h = h[rows]
        run = self.current if run is None else run
        return h[:, run] + h[:, self.baseline]

    def changed_mask(self, metric: str, run: int | None = None,
                     rows: slice | np.ndarray = _ALL) -> np.ndarray:
        """Rows whose ``metric`` changed by more than float noise and its precision
        (``rows``: a block of rows, or row ids).

        A change smaller than the rounding of the printed numbers allows is no change: it
        gets no colour, no Δ%, and neither ``--fail-if`` nor significance counts it.
        """
        run = self.current if run is None else run
        if isinstance(rows, np.ndarray):
            return self._moved(metric, self.values_at(metric, run, rows),
                               self.values_at(metric, self.baseline, rows), run, rows)
        if rows == _ALL:  # the two columns alone: no [row, run] array built for them
            return self._moved(metric, self.value(metric, run),
                               self.value(metric, self.baseline), run, rows)
        v = self.block(metric, rows)
        return self._moved(metric, v[:, run], v[:, self.baseline], run, rows)

    def _moved(self, metric: str, new: np.ndarray, base: np.ndarray, run: int,
               rows: slice | np.ndarray) -> np.ndarray:
        """:meth:`changed_mask` of the values ``new`` and ``base`` of ``rows``.

        The tolerances are computed for the entries that differ at all: in real pairs
        0-50 % of a metric's rows differ, and the row statuses judge every metric of
        every row before the first paint."""
        out = new != base  # NaN differs: judged below with the others
        idx = np.flatnonzero(out)
        if idx.size == 0:
            return out
        n, b = new[idx], base[idx]
        d = np.abs(n - b)
        scale = np.maximum(np.abs(n), np.abs(b))
        with np.errstate(invalid="ignore"):
            keep = d > 1e-9 * np.maximum(scale, 1.0)
            if metric in self.rounding:
                sub = rows[idx] if isinstance(rows, np.ndarray) else _slice_rows(
                    range(self.n_rows)[rows], idx)
                keep &= d > self.precision_of(metric, run, sub) * (1 + 1e-9)
        out[idx] = keep
        return out

    def status_for(self, run: int | None = None, noise: Noise | None = None) -> np.ndarray:
        """int8 Status per row for ``run`` against the baseline (``noise``: the estimate
        to judge by instead of the run's own, :meth:`noise_of_run`, as
        :func:`viewer.ranking.rank_changes`)."""
        run = self.current if run is None else run
        noise = self.noise_of_run(run) if noise is None else noise
        return self._judge_statuses(self._moved_rows(run), self.present[:, self.baseline],
                                    self.present[:, run], noise, _ALL)

    def _judge_statuses(self, moved: dict[str, np.ndarray], b: np.ndarray, c: np.ndarray,
                        noise: Noise | None, rows: slice | np.ndarray) -> np.ndarray:
        """The int8 Status of ``rows`` from their :meth:`_moved_rows` masks ``moved`` and
        their presence in the baseline (``b``) and the run (``c``), judged by ``noise``."""
        st = np.full(len(b), Status.SAME, dtype=np.int8)
        # Only rows both runs have can be CHANGED (the others are ADDED or REMOVED, or
        # absent from both): their masks are false elsewhere.
        changed = np.zeros(len(b), dtype=bool)
        unjudged = np.zeros(len(b), dtype=bool)
        timed = self._unjudged_metrics(noise)
        for name, sig in self._status_judge(noise):
            if name in timed:
                unjudged |= moved[name]
            elif sig is None:
                changed |= moved[name]
            else:
                changed |= moved[name] & sig[rows]
        st[unjudged] = Status.MOVED
        st[changed] = Status.CHANGED
        st[~b & c] = Status.ADDED
        st[b & ~c] = Status.REMOVED
        return st

    def status_rows(self, rows: np.ndarray) -> np.ndarray:
        """``status[rows]``; until every row's moves are read (:meth:`prepare_statuses`),
        judged for these rows alone, from the same values and noise estimate, so they
        read what :attr:`status` will.

        Why: the window's first paint colours the 40 rows on screen, and reading the
        moves of all 10^6 rows first cost it 65 ms (the 100 MB hs-ad pair), or a wait for
        the loader's thread that reads them (26-70 ms)."""
        got = self.__dict__.get("status")
        if got is not None or self.current in self.__dict__.get("_moved_masks", {}):
            return (self.status if got is None else got)[rows]
        rows = np.asarray(rows, dtype=np.intp)
        run, base = self.current, self.baseline
        both = (self.node[rows, run] >= 0) & (self.node[rows, base] >= 0)  # as _moved_rows
        moved = {name: self.changed_mask(name, run, rows=rows) & both
                 for name in self.status_metrics()}
        return self._judge_statuses(moved, self.present[rows, base], self.present[rows, run],
                                    self.noise_of_run(run), rows)

    def status_at(self, row: int) -> int:
        """``status[row]`` as :meth:`status_rows` reads it."""
        return int(self.status_rows(np.array([row], dtype=np.intp))[0])

    def _moved_rows(self, run: int) -> dict[str, np.ndarray]:
        """Per metric the statuses compare, the rows both runs have whose value moved
        beyond precision from the baseline to ``run`` (computed once per run, read-only).

        Why kept: a status under another noise estimate is then these masks combined
        with its significance, not every value of every judged metric read again (the
        window judges a 10^6-row tree when it opens and again when the sampled metrics'
        estimate lands: 40 ms each)."""
        cache = self.__dict__.setdefault("_moved_masks", {})
        got = cache.get(run)
        if got is None:
            # once, whichever thread asks first (the loader's noise job prepares them
            # while the GUI thread builds the views: prepare_statuses)
            with self.__dict__.setdefault("_moved_lock", threading.Lock()):
                got = cache.get(run)
                if got is None:
                    names = self.status_metrics()
                    if isinstance(self.values, GatheredValues):
                        got = self._moved_in_node_order(run, names, self.values)
                    else:
                        got = self._moved_in_row_order(run, names)
                    for mask in got.values():
                        mask.flags.writeable = False
                    cache[run] = got
        return got

    def prepare_statuses(self) -> None:
        """Read what the current run's statuses are judged from (each judged metric's
        rows that moved beyond precision), so that :attr:`status`, with or without a
        noise estimate, is then only those masks combined: for a thread other than the
        one that will paint them."""
        self._moved_rows(self.current)

    def _moved_in_node_order(self, run: int, names: list[str], v: GatheredValues
                             ) -> dict[str, np.ndarray]:
        """:meth:`_moved_rows` of a tree comparison read from its runs: taken in the
        baseline's node order, so that the baseline's values are read as slices of its
        arrays and the other run's nearly in order (its tree is mostly the same), where
        the rows' level order would jump across both (3x the time on 10^6 rows)."""
        out = {name: np.zeros(self.n_rows, dtype=bool) for name in names}
        order, run_nodes = self._base_order(run, v)[:2]
        for lo in range(0, len(order), STATUS_BLOCK):
            rows = order[lo : lo + STATUS_BLOCK]
            nodes = run_nodes[lo : lo + STATUS_BLOCK]
            both = nodes >= 0
            if not both.any():
                continue
            nodes = np.maximum(nodes, 0)  # where the run lacks the row: any node (masked)
            mine = slice(lo, lo + len(rows))  # the baseline's nodes of these rows
            for name in names:
                new, base = v.of_nodes(name, run, nodes), v.of_nodes(name, self.baseline, mine)
                out[name][rows] = self._moved(name, new, base, run, rows) & both
        return out

    def _moved_in_row_order(self, run: int, names: list[str]) -> dict[str, np.ndarray]:
        """:meth:`_moved_rows` a block of rows at a time (a flat or group comparison)."""
        out = {name: np.zeros(self.n_rows, dtype=bool) for name in names}
        for lo in range(0, self.n_rows, STATUS_BLOCK):
            rows = slice(lo, lo + STATUS_BLOCK)
            nodes = self.node[rows]
            both = (nodes[:, run] >= 0) & (nodes[:, self.baseline] >= 0)
            if not both.any():
                continue
            for name in names:
                a = self.values[name][rows]
                out[name][rows] = self._moved(name, a[:, run], a[:, self.baseline], run,
                                              rows) & both
        return out

    def _status_judge(self, noise: Noise | None) -> list[tuple[str, np.ndarray | None]]:
        """The metrics a row's status compares, each with the significance mask ``noise``
        judges its change by (None: every change beyond precision counts)."""
        has_absolute = any(m.unit is not Unit.PERCENT for m in self.metrics
                           if m.kind is not Kind.NODE)
        judge: list[tuple[str, np.ndarray | None]] = []
        for name in self.values:
            m = self.metric_by_name.get(name)
            if has_absolute and m is not None and m.unit is Unit.PERCENT:
                continue  # shares move when others grow (dilution): absolute costs decide
            sig = None
            if noise is not None and m is not None and name in noise.metrics and (
                    m.sampled or _repeated(noise)):
                sig = noise.metrics[name].significant  # within noise: not a change
            judge.append((name, sig))
        return judge

    def _unjudged_metrics(self, noise: Noise | None) -> set[str]:
        """The status metrics whose moves are :attr:`Status.MOVED`, not changes: timed
        ones (:attr:`parsers.model.Metric.timed`) unless ``noise`` was measured from
        repeated runs, whose spread judges them."""
        if noise is not None and _repeated(noise):
            return set()
        by_name = self.metric_by_name
        return {n for n in self.values if n in by_name and by_name[n].timed}

    def unjudged_metrics(self) -> list[str]:
        """The metrics a row's status reports as moved but cannot judge (see
        :attr:`Status.MOVED`), for legends and notes."""
        unjudged = self._unjudged_metrics(self.noise)
        return [n for n in self.status_metrics() if n in unjudged]

    def is_judged(self, metric: str) -> bool:
        """Whether a change of ``metric`` can be told from run-to-run noise here: false
        for a timed metric with one run per side (:attr:`Status.MOVED`)."""
        return metric not in self._unjudged_metrics(self.noise)

    def changed_by(self, row: int) -> list[str]:
        """The metrics whose change made ``row`` "changed" or "moved" (beyond precision
        and, where estimated, noise), in status order: what a status is said to rest on
        when the columns shown (shares, self costs) all read 0 - a root whose inherited
        time grew 32 % reads 100 % -> 100 %."""
        if self.n_runs < 2 or not (self.present[row, self.baseline]
                                   and self.present[row, self.current]):
            return []
        rows = np.array([row], dtype=np.intp)
        return [name for name, sig in self._status_judge(self.noise)
                if bool(self.changed_mask(name, rows=rows)[0])
                and (sig is None or bool(sig[row]))]

    def status_metrics(self, sampled_only: bool = False) -> list[str]:
        """The metrics a row's status compares (``sampled_only``: those whose changes need
        a noise estimate to be judged: without one, any change beyond precision counts).

        Why public: every place that shows statuses (the CLI table, the window's icons
        and counts, the Summary) estimates the noise of these same metrics first, so the
        same pair never reads "41 changed" in one and "15 changed" in another."""
        names = [name for name, _ in self._status_judge(None)]
        if not sampled_only:
            return names
        by_name = self.metric_by_name
        return [n for n in names if n in by_name and by_name[n].sampled]

    def judged_by_precision_alone(self) -> list[str]:
        """The sampled status metrics (:meth:`status_metrics`) that some run of 3+ single
        runs has no estimate of (:meth:`noise_of_run`), so its statuses rest on
        precision alone there; none for two runs (their estimate is on its way:
        :meth:`statuses_final`) or groups (they carry theirs)."""
        if self.n_runs <= 2 or self.groups is not None:
            return []
        others = [r for r in range(self.n_runs) if r != self.baseline]
        have = [nz.metrics if (nz := self.noise_of_run(r)) is not None else {}
                for r in others]
        return [m for m in self.status_metrics(sampled_only=True)
                if any(m not in h for h in have)]

    def statuses_final(self) -> bool:
        """Whether the statuses are judged by every noise estimate they can get: a
        1-vs-1 comparison's by its sampled status metrics' (:meth:`status_metrics`),
        groups by the estimate they carry, 3+ single runs by the current run's pair's
        (the other runs' own are :meth:`judged_by_precision_alone`)."""
        if self.n_runs < 2 or self.groups is not None:
            return True
        have = self.noise.metrics if self.noise is not None else {}
        return all(m in have for m in self.status_metrics(sampled_only=True))

    @cached_property
    def status(self) -> np.ndarray:
        return self.status_for(self.current)

    def keep_status(self, status: np.ndarray, noise: Noise) -> bool:
        """Take ``status_for(current, noise)`` computed off the GUI thread as
        :attr:`status`, if ``noise`` is the estimate the comparison now carries (the same
        metric estimates, no more, no fewer); else it is stale and dropped."""
        mine = self.noise.metrics if self.noise is not None else {}
        if mine.keys() != noise.metrics.keys() or \
                any(mine[k] is not v for k, v in noise.metrics.items()):
            return False
        self.__dict__.setdefault("status", status)
        return True

    def status_of_run(self, run: int) -> np.ndarray:
        """Statuses of ``run`` against the baseline (cached per run; 3+ runs)."""
        if run == self.current:
            return self.status
        cache = self.__dict__.setdefault("_run_status", {})
        if run not in cache:
            cache[run] = self.status_for(run)
        return cache[run]


    def status_counts(self) -> dict[str, int]:
        counts = np.bincount(self.status, minlength=len(Status))
        return {s.label: int(counts[s]) for s in Status}

    def presence_counts(self) -> dict[str, int]:
        """Rows both runs have ('matched'), only the current run has ('added') and only
        the baseline has ('removed'): the added and removed counts of
        :meth:`status_counts`, read from presence alone, so a caller need not wait for
        the statuses another thread is preparing (:meth:`prepare_statuses`).  Kept per
        (baseline, current): the window's status bar asks three times while it opens a
        pair (3 ms each on 7*10^5 rows)."""
        memo = self.__dict__.setdefault("_presence_counts", {})
        got = memo.get((self.baseline, self.current))
        if got is None:
            b, c = self.present[:, self.baseline], self.present[:, self.current]
            got = memo[(self.baseline, self.current)] = {
                "matched": int(np.count_nonzero(b & c)),
                "added": int(np.count_nonzero(c & ~b)),
                "removed": int(np.count_nonzero(b & ~c))}
        return dict(got)

    def unread(self, run: int | None = None) -> np.ndarray:
        """Rows present on one side and absent from an incomplete run on the other
        (``run``: against the baseline; default the current run): absent, perhaps, only
        from the part of the file that was read.  Their "removed" or "added" is no
        verdict, so they never rank as a change (:func:`viewer.ranking.rank_changes`)
        and the Summary does not judge them."""
        run = self.current if run is None else run
        b, c = self.present[:, self.baseline], self.present[:, run]
        out = np.zeros(self.n_rows, dtype=bool)
        if self.runs[run].incomplete:
            out |= b & ~c
        if self.runs[self.baseline].incomplete:
            out |= c & ~b
        return out

    # ----- totals -----------------------------------------------------------------------
    @cached_property
    def total_keys(self) -> list[str]:
        """Run-level totals present in any run (baseline order first)."""
        seen: dict[str, None] = {}
        for p in [self.runs[self.baseline], *self.runs]:
            for k in p.totals:
                seen.setdefault(k, None)
        return list(seen)

    @property
    def distinct_total_keys(self) -> list[str]:
        """:attr:`total_keys` without a run's self sum where its inclusive twin says the
        same in every run (``self_alloc_count`` beside ``total_alloc_count``: a run's own
        costs sum to its root's total).  What the header, the Summary and ``diff``'s
        totals show; JSON, gates and the Run totals tab keep every key.

        Why: a PProf.jl allocation profile's header read 11,570 three times and 526,952 B
        twice in its five totals."""
        keys = self.total_keys
        out = []
        for k in keys:
            twin = "total_" + k[len("self_"):] if k.startswith("self_") else None
            if twin in keys and self.total_values(k) == self.total_values(twin):
                continue
            out.append(k)
        return out

    def total_metric(self, key: str) -> Metric | None:
        for p in self.runs:
            if key in p.total_metrics:
                return p.total_metrics[key]
        return None

    def total_values(self, key: str) -> list[float | None]:
        if self.total_override is not None and key in self.total_override:
            return list(self.total_override[key])
        return [p.totals.get(key) for p in self.runs]

    @property
    def totals_measured_once(self) -> bool:
        """Whether each run's totals are one run's measurement (2+ single runs), so a
        timed total (:attr:`Metric.timed`) is marked :data:`viewer.units.TIMED_MARK`
        wherever totals are compared; group means are not one timing."""
        return self.n_runs > 1 and self.groups is None

    @property
    def incomplete_runs(self) -> list[int]:
        return [i for i, p in enumerate(self.runs) if p.incomplete]

    # ----- sorting ----------------------------------------------------------------------
    def order_by(self, metric: str, how: str = "delta", descending: bool = True,
                 run: int | None = None) -> np.ndarray:
        """Row ids sorted by ``how`` in {delta, abs, rel, base, new} of ``metric``.

        NaNs go last; ties keep row order (stable), so output is deterministic.
        """
        if how == "delta":
            key = self.delta(metric, run)
        elif how == "abs":
            key = np.abs(self.delta(metric, run))
        elif how == "rel":
            key = self.rel(metric, run)
        elif how == "base":
            key = self.value(metric, self.baseline)
        elif how == "new":
            key = self.value(metric, run)
        else:
            raise ValueError(f"unknown sort {how!r}")
        k = np.where(np.isnan(key), -np.inf if descending else np.inf, key)
        order = np.argsort(-k if descending else k, kind="stable")
        return order


# ------------------------------------------------------------------------------------------
# Alignment
# ------------------------------------------------------------------------------------------
def frame_keys(p: Profile, rules: Sequence[KeyRule]) -> tuple[np.ndarray, np.ndarray]:
    """Keys after the rules, and per frame how it was rewritten (0 none, 1 rule, 2 suggestion;
    0 too for a rule matching one ``.mem`` file's source with another's,
    :mod:`viewer.single_source`: every row would read renamed)."""
    keys = p.frames.key
    how = np.zeros(len(keys), dtype=np.int8)
    for rule in rules:
        new = rule(keys)
        changed = new != keys
        origin = getattr(rule, "origin", "rule")
        if changed.any() and origin != "same file":
            how[changed] = 2 if origin == "suggestion" else 1
        keys = new
    return keys, how


_SRC_POS = re.compile(r"^(.*?):\(?(\d+)[,:](\d+)")


def _src_position(src: str) -> tuple[str, int, int, str]:
    """``Mod/F.hs:(38,1)-(43,48)`` -> ``("Mod/F.hs", 38, 1, src)``: sortable by place."""
    m = _SRC_POS.match(src)
    if m is None:
        return (src, 0, 0, src)
    return (m.group(1), int(m.group(2)), int(m.group(3)), src)


def _with_src_ordinal(p: Profile, keys: np.ndarray) -> np.ndarray:
    """Frame keys that tell apart one label defined at several SRCs of a module.

    GHC names a cost centre by (label, module, SRC): two ``go`` bindings or two ``(...)``
    pattern bindings of one module are different cost centres.  They keep the plain key
    for the first SRC in source order and get ``#2``, ``#3``... for the later ones, so
    runs whose SRC lines shifted (an edit above them) still match by order.
    """
    src = p.frames.src
    if len(keys) == 0 or not any(src.tolist()):
        return keys
    by_key: dict[str, set[str]] = {}
    for k, s in zip(keys.tolist(), src.tolist(), strict=True):
        if s and not s.startswith("<"):
            by_key.setdefault(k, set()).add(s)
    multi = {k: sorted(v, key=_src_position) for k, v in by_key.items() if len(v) > 1}
    if not multi:
        return keys
    out = keys.copy()
    for i, (k, s) in enumerate(zip(keys.tolist(), src.tolist(), strict=True)):
        ranks = multi.get(k)
        if ranks is not None and s in ranks and (r := ranks.index(s)) > 0:
            out[i] = f"{k}#{r + 1}"
    return out


def value_column(values: Mapping[str, np.ndarray], metric: str, run: int) -> np.ndarray:
    """``values[metric][:, run]`` of a comparison's values (:meth:`Comparison.value`):
    of a :class:`GatheredValues` metric not built whole, read from the run alone."""
    if isinstance(values, GatheredValues) and not values.is_built(metric):
        return values.column(metric, run)
    return values[metric][:, run]


class Extremes:
    """Rows of a column whose value may print widest, given the column a block at a time:
    the first row of the largest finite magnitude (most digits), of the smallest non-zero
    one (``0.00091``; of everything when all are zero or not finite, as ``argmax``/
    ``argmin`` of the whole column) and of a NaN/inf.  A few passes per block and no
    partial sort (every numeric column of every view is measured on first paint).

    A block is given by its first row (consecutive rows) or by its row ids (any order:
    :meth:`Comparison.change_extremes` reads a tree in its baseline's node order); of
    equal magnitudes the smallest row id is kept either way, so the rows found do not
    depend on the order the blocks came in."""

    def __init__(self) -> None:
        self.big: tuple[float, int] | None = None
        self.small: tuple[float, int] | None = None
        self.bad: int | None = None

    def add(self, v: np.ndarray, rows: int | np.ndarray) -> None:
        if v.size == 0:
            return
        mag = np.abs(np.asarray(v, dtype=np.float64))
        top = mag.max()  # NaN or inf when the block holds a bad value
        if not np.isfinite(top):
            r = _first_row(~np.isfinite(mag), rows)
            self.bad = r if self.bad is None else min(self.bad, r)
            top = _largest_finite(mag)
        self.big = _keep(self.big, mag, top, -1.0, rows, larger=True)
        low = mag.min()
        if not 0 < low < np.inf:  # zeros or bad values: the smallest of the others
            low = _smallest_positive(mag)
        self.small = _keep(self.small, mag, low, np.inf, rows, larger=False)

    def rows(self) -> np.ndarray:
        out = [x[1] for x in (self.big, self.small) if x is not None]
        if self.bad is not None:
            out.append(self.bad)
        return np.unique(np.asarray(out, dtype=np.int64))


def _keep(kept: tuple[float, int] | None, mag: np.ndarray, got: float, none: float,
          rows: int | np.ndarray, larger: bool) -> tuple[float, int]:
    """The extreme of ``kept`` and the block's ``got`` with its first row; ``none``:
    the block has no candidate, so its first row stands for it (as ``argmax``/``argmin``
    of a column of equal stand-ins).  The block's row is sought only when it can win:
    one pass fewer on most blocks, and these run on every numeric column at first paint."""
    got = float(got)
    if kept is not None and (got < kept[0] if larger else got > kept[0]):
        return kept
    if got == none:
        first = rows if isinstance(rows, int) else int(rows.min())
    else:
        first = _first_row(mag == got, rows)
    return _better(kept, (got, first), larger)


_INF_BITS = int(np.array(np.inf).view(np.uint64))
_WRAP = 1 << 64


def _largest_finite(mag: np.ndarray) -> float:
    """The largest finite entry of ``mag`` (non-negative or NaN; changed and restored in
    place), -1 when there is none.

    Why by bits: non-negative floats order as their bit patterns, and with the bits of
    inf taken off (wrapping), the finite ones come out on top and inf and NaN at the
    bottom, so one subtraction and one plain reduction do it.  A masked reduction
    (``max(where=)``) is ~50x slower than a plain one, a new array costs its first
    touch, and these run on every numeric column at first paint."""
    bits = mag.view(np.uint64)
    bits -= np.uint64(_INF_BITS)
    top = int(bits.max())
    bits += np.uint64(_INF_BITS)
    if top < _WRAP - _INF_BITS:
        return -1.0
    return float(np.array((top + _INF_BITS) % _WRAP, dtype=np.uint64).view(np.float64))


def _smallest_positive(mag: np.ndarray) -> float:
    """The smallest finite non-zero entry of ``mag`` (non-negative or NaN; changed and
    restored in place), inf when there is none: with one taken off the bits, zero wraps
    to the top (see :func:`_largest_finite`)."""
    bits = mag.view(np.uint64)
    bits -= np.uint64(1)
    low = int(bits.min()) + 1
    bits += np.uint64(1)
    if low >= _INF_BITS:
        return float("inf")
    return float(np.array(low, dtype=np.uint64).view(np.float64))


def _first_row(hit: np.ndarray, rows: int | np.ndarray) -> int:
    """The smallest row of the true entries of ``hit`` (one at least); ``rows``: the
    first row of consecutive rows, or the row id of each entry."""
    if isinstance(rows, int):
        return rows + int(np.argmax(hit))
    return int(rows[hit].min())


def _better(kept: tuple[float, int] | None, got: tuple[float, int], larger: bool
            ) -> tuple[float, int]:
    """The extreme of ``kept`` and ``got`` (ties: the smaller row)."""
    if kept is None:
        return got
    if got[0] == kept[0]:
        return got if got[1] < kept[1] else kept
    return got if (got[0] > kept[0]) == larger else kept


def _union_metrics(profiles: Sequence[Profile], baseline: int) -> list[Metric]:
    seen: dict[str, Metric] = {}
    for p in [profiles[baseline], *profiles]:
        for m in p.metrics:
            seen.setdefault(m.name, m)
    return list(seen.values())


def align(
    profiles: Sequence[Profile],
    *,
    baseline: int = 0,
    mode: str = "tree",
    rules: Sequence[KeyRule] = (),
    current: int = -1,
) -> Comparison:
    """Align ``profiles`` (2..N; 1 is allowed for single-run views) against ``baseline``."""
    if not profiles:
        raise ValueError("nothing to compare")
    if mode not in ("tree", "flat"):
        raise ValueError(f"mode must be 'tree' or 'flat', not {mode!r}")
    profiles = list(profiles)
    # Global key codes across runs.
    keyed = [frame_keys(p, rules) for p in profiles]
    keys_of = [k for k, _ in keyed]
    if mode == "flat":  # a cost centre is (label, module, SRC), as the profiler defines it
        keys_of = [_with_src_ordinal(p, k) for p, k in zip(profiles, keys_of, strict=True)]
    all_keys = np.concatenate(keys_of) if keys_of else np.zeros(0, dtype=object)
    codes, uniques = factorize(all_keys)
    uniques = np.asarray(uniques, dtype=object)
    offs = np.cumsum([0] + [len(k) for k in keys_of])
    frame_gkey = [codes[offs[i] : offs[i + 1]].astype(np.int64) for i in range(len(profiles))]
    if mode == "flat":
        node_gkey = [fk[p.frame] for fk, p in zip(frame_gkey, profiles, strict=True)]
        cmp = _align_flat(profiles, baseline, node_gkey, uniques, current)
    else:
        cmp = _align_tree(profiles, baseline, keys_of, frame_gkey, uniques, current)
    if rules:
        cmp.matched_by = _matched_by(cmp, [h for _, h in keyed])
    return cmp


def _repeated(noise: Noise) -> bool:
    """Whether ``noise`` was measured from repeated runs of a side: then it is the
    run-to-run spread, which judges any metric (a counted one's is 0 when it does not
    vary), not only the sampled ones."""
    return noise.n_base > 1 or noise.n_new > 1


def _matched_by(cmp: Comparison, frame_how: list[np.ndarray]) -> np.ndarray:
    """Rows present in 2+ runs whose key was rewritten in some run: 1 rule, 2 suggestion."""
    out = np.zeros(cmp.n_rows, dtype=np.int8)
    multi = cmp.present.sum(axis=1) >= 2
    for r, p in enumerate(cmp.runs):
        nodes = cmp.node[:, r]
        pres = nodes >= 0
        how = np.zeros(cmp.n_rows, dtype=np.int8)
        how[pres] = frame_how[r][p.frame[nodes[pres]]]
        out = np.maximum(out, how)
    out[~multi] = 0
    return out


def _slice_rows(r: range, idx: np.ndarray) -> np.ndarray:
    """The row ids of the entries ``idx`` of the rows ``r`` (a slice of all rows)."""
    return r.start + idx * r.step


def _rel(d: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``d / |base|``, +-inf where the base is 0 and the value moved, 0 where neither."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = d / np.abs(base)
    r[(base == 0) & (d == 0)] = 0.0
    return r


def _align_tree(profiles, baseline, frame_keys, frame_gkey, uniques, current) -> Comparison:
    R = len(profiles)
    u = union_tree(profiles, baseline, frame_keys, frame_gkey, max(len(uniques), 1))
    n_union = len(u.parent)
    parent, rep_run, rep_node, ukey = u.parent, u.rep_run, u.rep_node, u.key
    node = np.full((n_union, R), -1, dtype=np.int32)
    for r in range(R):
        node[u.union_of[r][:-1], r] = np.arange(profiles[r].n_nodes, dtype=np.int32)
    gf, tables = _label_frames(profiles, rep_run, rep_node)
    metrics = _union_metrics(profiles, baseline)
    values = GatheredValues(profiles, [m.name for m in metrics], node)
    empty = np.zeros(0, dtype=object)
    cmp = Comparison(
        runs=profiles, baseline=baseline, mode="tree", parent=parent, node=node, name=empty,
        module=empty, src=empty, keys=empty, values=values, metrics=metrics,
        current=current, rounding=_tree_rounding(profiles, metrics, node),
    )
    for col in ("name", "module", "src"):  # gathered when read whole (Comparison.defer)
        cmp.defer(col, tables[col], gf)
    cmp.defer("keys", uniques if n_union else empty, ukey)
    if n_union:  # the rows' key codes are known here: not factorized again (10^6 strings)
        cmp.__dict__["key_codes"] = (ukey, uniques)
    cmp.__dict__["label_frames"] = (gf, tables["name"], tables["module"])
    # rows come level by level, so their depths are known too (no pass over parents)
    cmp.__dict__["depth"] = np.repeat(np.arange(len(u.level_sizes), dtype=np.int32),
                                      u.level_sizes)
    return cmp


def _tree_rounding(profiles, metrics, node) -> dict[str, np.ndarray]:
    """Per [row, run] rounding half-widths: the run's half-width where the row is
    present (an absent row is an exact zero)."""
    out: dict[str, np.ndarray] = {}
    for m in metrics:
        hs = [float(p.rounding.get(m.name, 0.0)) for p in profiles]
        if not any(hs):
            continue
        out[m.name] = (node >= 0) * np.array(hs, dtype=np.float64)
    return out


def _flat_rounding(profiles, metrics, node_gkey, n_keys, keep) -> dict[str, np.ndarray]:
    """Flat rows sum several rounded values: the half-width grows with the number of
    call sites summed (all sites for self metrics, the outermost ones for inclusive)."""
    out: dict[str, np.ndarray] = {}
    counts: dict[tuple[int, bool], np.ndarray] = {}
    for m in metrics:
        hs = [float(p.rounding.get(m.name, 0.0)) for p in profiles]
        if not any(hs):
            continue
        h = np.zeros((len(keep), len(profiles)))
        for r, p in enumerate(profiles):
            if not hs[r]:
                continue
            inc = m.kind is Kind.INCLUSIVE
            if (r, inc) not in counts:
                g = node_gkey[r]
                if inc:
                    pre, size = p.preorder_size
                    g = g[outermost_mask(g, pre, size)]
                counts[(r, inc)] = np.bincount(g, minlength=n_keys)
            h[:, r] = hs[r] * counts[(r, inc)][keep]
        out[m.name] = h
    return out


def _representative_labels(profiles, rep_run, rep_node):
    """(name, module, src, label frames) of rows represented by node ``rep_node`` of run
    ``rep_run``: one object gather per column from the runs' frame tables laid end to
    end (:attr:`Comparison.label_frames`)."""
    gf, tables = _label_frames(profiles, rep_run, rep_node)
    names, modules = tables["name"], tables["module"]
    return names[gf], modules[gf], tables["src"][gf], (gf, names, modules)


def _label_frames(profiles, rep_run, rep_node) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(the frame of each row in the runs' frame tables laid end to end, those tables'
    name, module and src columns)."""
    offs = np.cumsum([0] + [len(p.frames.name) for p in profiles])
    gf = np.zeros(len(rep_run), dtype=np.int64)
    for r, p in enumerate(profiles):
        sel = np.flatnonzero(rep_run == r)
        if sel.size:
            gf[sel] = p.frame[rep_node[sel]] + offs[r]
    return gf, {col: _laid(profiles, col) for col in ("name", "module", "src")}


def _laid(profiles, col: str) -> np.ndarray:
    """Frame-table column ``col`` of every run, laid end to end (object array)."""
    parts = [np.asarray(getattr(p.frames, col), dtype=object) for p in profiles]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def _align_flat(profiles, baseline, node_gkey, uniques, current) -> Comparison:
    R = len(profiles)
    n_keys = len(uniques)
    metrics = _union_metrics(profiles, baseline)
    present = np.zeros((n_keys, R), dtype=bool)
    rep = np.full((n_keys, R), -1, dtype=np.int32)
    sums: list[dict[str, np.ndarray]] = []
    for r, p in enumerate(profiles):
        g = node_gkey[r]
        present[np.unique(g), r] = True
        # first call site per key as representative node
        first = np.full(n_keys, -1, dtype=np.int64)
        idx = np.arange(p.n_nodes)[::-1]
        first[g[::-1]] = idx
        rep[:, r] = first
        sums.append(flat_aggregate(p, g, n_keys))
    keep = np.flatnonzero(present.any(axis=1))
    # Row order: the baseline's first call sites first, then keys new in later runs.
    visit = [baseline] + [i for i in range(R) if i != baseline]
    vrank = np.full(n_keys, R, dtype=np.int64)
    vnode = np.zeros(n_keys, dtype=np.int64)
    for pos in range(R - 1, -1, -1):
        r = visit[pos]
        has = rep[:, r] >= 0
        vrank[has] = pos
        vnode[has] = rep[has, r]
    keep = keep[np.lexsort((vnode[keep], vrank[keep]))]
    node = rep[keep]
    values: dict[str, np.ndarray] = {}
    for m in metrics:
        v = np.zeros((len(keep), R), dtype=np.float64)
        for r, p in enumerate(profiles):
            v[:, r] = sums[r][m.name][keep] if p.has_metric(m.name) else np.nan
        values[m.name] = v
    rep_run = np.argmax(node >= 0, axis=1).astype(np.int32)
    # prefer the baseline as representative when present
    rep_run = np.where(node[:, baseline] >= 0, baseline, rep_run)
    rep_node = node[np.arange(len(keep)), rep_run]
    name, module, src, label_frames = _representative_labels(profiles, rep_run, rep_node)
    rounding = _flat_rounding(profiles, metrics, node_gkey, n_keys, keep)
    from .printed_summary import tighten_flat  # GHC's own per-cost-centre table

    tighten_flat(profiles, node, values, rounding)
    cmp = Comparison(
        runs=profiles, baseline=baseline, mode="flat",
        parent=np.full(len(keep), -1, dtype=np.int32), node=node, name=name, module=module,
        src=src, keys=uniques[keep], values=values, metrics=metrics, current=current,
        rounding=rounding,
    )
    cmp.__dict__["label_frames"] = label_frames
    return cmp


def comparable_metrics(cmp: Comparison) -> list[Metric]:
    """Metrics that every run has (the ones a delta makes sense for)."""
    return [m for m in cmp.metrics if all(p.has_metric(m.name) for p in cmp.runs)]


def self_metric_for(metric: Metric, metrics: Sequence[Metric]) -> Metric | None:
    """The self metric an inclusive metric sums, or the metric itself when it is self."""
    if metric.kind is not Kind.INCLUSIVE:
        return metric
    names = {m.name: m for m in metrics}
    return names.get(metric.self_of or "")


def _rts_options(command_line: str) -> tuple[str, ...]:
    """The ``+RTS ... -RTS`` options of a GHC command line (sorted), e.g. ``('-p', '-s')``."""
    out: list[str] = []
    inside = False
    for tok in str(command_line).split():
        if tok == "+RTS":
            inside = True
        elif tok == "-RTS":
            inside = False
        elif inside:
            out.append(tok)
    return tuple(sorted(out))


def incomparable_warnings(runs: Sequence[Profile]) -> list[str]:
    """Reasons the runs may not be comparable: a different format, program, RTS options,
    tick interval, processor count or sampled event."""
    out = []
    if len({p.format for p in runs}) > 1:
        out.append("runs have different formats: " + ", ".join(sorted({p.format for p in runs})))
    progs = {p.meta.get("program") for p in runs if p.meta.get("program")}
    if len(progs) > 1:
        out.append("runs are of different programs: " + ", ".join(sorted(map(str, progs))))
    rts = {_rts_options(p.meta.get("command_line", "")) for p in runs
           if "+RTS" in str(p.meta.get("command_line", ""))}
    if len(rts) > 1:
        out.append("runs used different RTS options: "
                   + " vs ".join(" ".join(o) or "(none)" for o in sorted(rts)))
    for key, what in (("tick_interval_us", "tick intervals"), ("processors", "processor counts"),
                      ("event", "sampled events")):
        vals = {p.meta.get(key) for p in runs if p.meta.get(key) not in (None, "")}
        if len(vals) > 1:
            out.append(f"runs have different {what}: " + ", ".join(sorted(map(str, vals))))
    return out
