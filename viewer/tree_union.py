"""The union tree of a tree comparison (Qt-free): the runs' nodes matched by their path
of keys from the root, one depth level at a time, the baseline's levels first and each
other run's added to them.

A row is a distinct (parent row, key, duplicate rank): siblings of one run with the same
key (GHC merges them, but a key rule or a format may not) are told apart by their rank
among themselves, ordered by (src, file order), so that the n-th of them matches the n-th
in the other run.  Rows are numbered level by level; within a level, the baseline's
nodes first (in id order, one row each), then each other run's new rows in the order of
its nodes.

Why the baseline first, on its own: its half of the work (its level order, the key of
each of its nodes and a sorted table of each level's keys) depends on the baseline
alone.  The window's loader makes it (:func:`prepare`) as soon as the baseline is read,
while the other files are still being read, on the core those reads leave idle; the
alignment then only looks the other runs' keys up in those tables.
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from profdiff.parsers.model import Profile, level_order

from .factorize import factorize

KEY_STRIDE = 1 << 31
"""A node's level key is ``(its parent's code in the level above + 1) * KEY_STRIDE + the
code of its frame's key``: unique per (parent row, key), whatever the other runs bring
(frame key codes stay below it; parent codes below 2^32)."""


@dataclass
class UnionTree:
    """Per row its parent row, key code (of the comparison's keys) and representative
    (run, node); the rows of each depth level, in order; per run the row of each node
    (and a trailing -1: what a root's parent -1 reads)."""

    parent: np.ndarray
    key: np.ndarray
    rep_run: np.ndarray
    rep_node: np.ndarray
    level_sizes: list[int]
    union_of: list[np.ndarray]


def ranks_in_groups(group: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each entry's rank among the entries of its ``group``, in the order ``order`` puts
    them (a permutation sorting by group first, then by whatever breaks the ties)."""
    g = group[order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = g[1:] != g[:-1]
    starts = np.flatnonzero(new_group)
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(len(order)) - starts[np.cumsum(new_group) - 1]
    return out


class _SrcCodes:
    """A run's frames ranked by source location (equal ones equal), made on first use:
    the order duplicate siblings are matched in.  Why per frame table: a table has
    10^2-10^5 entries, ranked once, where ranking the duplicates' own locations
    factorized their strings at every level."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.codes: np.ndarray | None = None

    def of_nodes(self, nodes: np.ndarray) -> np.ndarray:
        if self.codes is None:
            src = np.asarray(self.profile.frames.src, dtype=object)
            self.codes = factorize(src, sort=True)[0]
        return self.codes[self.profile.frame[nodes]]


def _sorted_keys(k: np.ndarray, nodes: np.ndarray, src: _SrcCodes
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the order sorting a level's keys ``k`` of one run, the sorted keys, each sorted
    entry's duplicate rank: 0 unless the run has several nodes of that key there).

    The keys of a level come nearly sorted (parents in id order), so numpy's stable sort
    (timsort) is fast here, and the common level without duplicates costs no more."""
    order = np.argsort(k, kind="stable")
    sk = k[order]
    new = _firsts(sk)
    rank = np.zeros(len(sk), dtype=np.int64)
    if new.all():
        return order, sk, rank
    group = np.cumsum(new) - 1
    dup = np.flatnonzero(np.bincount(group)[group] > 1)  # sorted positions
    g, n = group[dup], nodes[order[dup]]
    rank[dup] = ranks_in_groups(g, np.lexsort((n, src.of_nodes(n), g)))
    again = np.lexsort((rank, sk))  # a key's rows by rank (stable: keys stay sorted)
    return order[again], sk[again], rank[again]


def _firsts(sk: np.ndarray) -> np.ndarray:
    """Where each distinct value of the sorted ``sk`` first appears (bool mask)."""
    new = np.empty(len(sk), dtype=bool)
    new[:1] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    return new


def _table(sk: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A level's rows by key (:meth:`_Level.rows_by_key`) from its keys sorted by (key,
    rank), ``sk``, and the rows in that order."""
    start = np.flatnonzero(_firsts(sk))
    return sk[start], start.astype(np.int32), rows.astype(np.int32)


@dataclass
class _Level:
    """One level's rows so far (the baseline's nodes, then other runs' new rows): each
    row's parent code in the level above, key code (the baseline's coding), duplicate
    rank (None: all 0) and representative (run, node); and, made when looked up, the
    rows by key.  Codes and nodes are int32: the baseline's levels are kept from its
    read to the alignment, beside the other file's read."""

    pcode: list[np.ndarray]
    gk: list[np.ndarray]
    rank: list[np.ndarray | None]
    rep_run: list[int]
    rep_node: list[np.ndarray]
    size: int
    table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def empty(cls) -> _Level:
        return cls([], [], [], [], [], 0)

    def add(self, run: int, nodes: np.ndarray, pcode: np.ndarray, gk: np.ndarray,
            rank: np.ndarray) -> None:
        self.pcode.append(pcode.astype(np.int32))
        self.gk.append(gk.astype(np.int32))
        self.rank.append(rank.astype(np.int32) if rank.any() else None)
        self.rep_run.append(run)
        self.rep_node.append(nodes.astype(np.int32))
        self.size += len(nodes)
        self.table = None

    def find(self, sk: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """The code of the row with each (sorted) key ``sk`` and duplicate rank, -1 where
        there is none."""
        out = np.full(len(sk), -1, dtype=np.int64)
        if not self.size or not len(sk):
            return out
        keys, start, rows = self.rows_by_key()
        pos = np.minimum(np.searchsorted(keys, sk), len(keys) - 1)
        if len(keys) == len(rows):  # one row a key: rank 0 only
            hit = np.flatnonzero((keys[pos] == sk) & (rank == 0))
        else:
            count = np.diff(start, append=len(rows))
            hit = np.flatnonzero((keys[pos] == sk) & (rank < count[pos]))
        out[hit] = rows[start[pos[hit]] + rank[hit]]
        return out

    def rows_by_key(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(distinct keys sorted, where each one's rows start, the rows by (key, rank))."""
        if self.table is None:
            pc = np.concatenate(self.pcode).astype(np.int64)
            k = (pc + 1) * KEY_STRIDE + np.concatenate(self.gk)
            if any(r is not None for r in self.rank):
                rk = np.concatenate([np.zeros(len(p), np.int32) if r is None else r
                                     for p, r in zip(self.pcode, self.rank, strict=True)])
                rows = np.lexsort((rk, k))
            else:
                rows = np.argsort(k, kind="stable")
            self.table = _table(k[rows], rows)
        return self.table


@dataclass
class BaselineLevels:
    """The baseline's half of a union tree, for one set of its frame keys: the code of
    each frame's key (first appearance), and per node its level code (its index in its
    level; a trailing -1), per level its rows (:class:`_Level`, one per node)."""

    frame_code: np.ndarray
    n_codes: int
    node_code: np.ndarray
    levels: list[_Level] = field(default_factory=list)

    def for_run(self, run: int) -> list[_Level]:
        """Copies of the levels, the baseline being run ``run``, to add other runs to
        (the tables are shared: a level that grows makes its own)."""
        return [_Level(list(lv.pcode), list(lv.gk), list(lv.rank), [run], list(lv.rep_node),
                       lv.size, lv.table) for lv in self.levels]


def baseline_levels(profile: Profile, keys: np.ndarray) -> BaselineLevels:
    """The levels of ``profile`` as the baseline, its frames keyed by ``keys``; each
    level's table of keys is made too (what the other runs look up)."""
    frame_code, uniques = factorize(np.asarray(keys, dtype=object))
    if len(uniques) >= KEY_STRIDE:
        raise ValueError(f"{len(uniques)} distinct frame keys: at most {KEY_STRIDE - 1}")
    gk = frame_code[profile.frame]
    order, bounds = level_order(profile.depth)
    code = np.full(profile.n_nodes + 1, -1, dtype=np.int32)
    src = _SrcCodes(profile)
    out = BaselineLevels(frame_code, len(uniques), code)
    for d in range(len(bounds) - 1):
        nodes = order[bounds[d]:bounds[d + 1]]
        code[nodes] = np.arange(len(nodes), dtype=np.int32)
        pcode = code[profile.parent[nodes]].astype(np.int64)
        k = (pcode + 1) * KEY_STRIDE + gk[nodes]
        srt, sk, rank_sorted = _sorted_keys(k, nodes, src)
        rank = np.empty(len(nodes), dtype=np.int64)
        rank[srt] = rank_sorted
        level = _Level.empty()
        level.add(0, nodes, pcode, gk[nodes], rank)
        level.table = _table(sk, srt)  # the baseline's row codes are its node positions
        out.levels.append(level)
    return out


@dataclass
class _Prepared:
    """Levels being made (or made) ahead for a profile with frame keys ``keys``."""

    keys: np.ndarray
    done: threading.Event = field(default_factory=threading.Event)
    levels: BaselineLevels | None = None  # None once done: making them failed


_PREPARED: weakref.WeakKeyDictionary[Profile, _Prepared] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
IDLE_NICE = 19
"""The niceness of the thread making levels ahead: it runs on a core the reads leave
idle, never in their way."""
WAIT_S = 0.05
"""How long the alignment waits for levels still being made ahead before it makes its
own: a thread of the lowest priority on a machine busy with other work may not run for
a long while (it takes ~35 ms of one core for 10^6 nodes)."""


def prepare(profile: Profile, keys: np.ndarray, *, beside: bool = False) -> None:
    """Make ``profile``'s levels as a baseline with frame keys ``keys`` now, for the
    alignment to take (:func:`union_tree`); kept until :func:`forget`.  ``beside``: in a
    thread of its own at the lowest priority (the alignment waits for it if it must)."""
    entry = _Prepared(keys)
    with _LOCK:
        _PREPARED[profile] = entry
    if not beside:
        _make(profile, entry)
        return
    threading.Thread(target=_make, args=(profile, entry, IDLE_NICE), daemon=True,
                     name="profdiff-baseline-levels").start()


def _make(profile: Profile, entry: _Prepared, nice: int = 0) -> None:
    """Make ``entry``'s levels (at niceness ``nice``), done in any case: a failure here
    only leaves them for the alignment to make, and to report if it fails too."""
    try:
        if nice:
            _lower_priority(nice)
        entry.levels = baseline_levels(profile, entry.keys)
    except Exception:  # noqa: BLE001, S110 - the alignment makes them (and says why not)
        pass
    finally:
        entry.done.set()


def _lower_priority(nice: int) -> None:
    """This thread's niceness raised to ``nice`` (Linux: a thread id is a process id to
    ``setpriority``); nothing where that cannot be done."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass


def is_prepared(profile: Profile) -> bool:
    """Whether :func:`prepare` made (or makes) levels for ``profile``, not forgotten."""
    with _LOCK:
        return profile in _PREPARED


def forget(profiles: list[Profile]) -> None:
    """Drop the levels prepared for ``profiles`` (their alignment is done)."""
    with _LOCK:
        for p in profiles:
            _PREPARED.pop(p, None)


def _baseline(profile: Profile, keys: np.ndarray) -> BaselineLevels:
    """The levels :func:`prepare` made for ``profile`` with these keys (waited for, at
    most :data:`WAIT_S`), else made now."""
    with _LOCK:
        entry = _PREPARED.get(profile)
    if entry is not None and (entry.keys is keys or (len(entry.keys) == len(keys) and bool(
            np.array_equal(entry.keys, keys)))):
        entry.done.wait(WAIT_S)
        if entry.levels is not None:
            return entry.levels
    return baseline_levels(profile, keys)


def union_tree(profiles: list[Profile], baseline: int, frame_keys: list[np.ndarray],
               frame_gkey: list[np.ndarray], n_keys: int) -> UnionTree:
    """Match the runs' nodes by their path of keys (``frame_gkey``: each run's frame
    key codes over all runs, of ``n_keys`` keys; ``frame_keys``: the keys)."""
    if n_keys >= KEY_STRIDE:
        raise ValueError(f"{n_keys} distinct frame keys: at most {KEY_STRIDE - 1}")
    base = _baseline(profiles[baseline], frame_keys[baseline])
    # the comparison's key codes in the baseline's coding (keys it lacks after its own)
    to_base = np.full(n_keys, -1, dtype=np.int64)
    to_base[frame_gkey[baseline]] = base.frame_code
    lacking = to_base < 0
    to_base[lacking] = base.n_codes + np.arange(int(lacking.sum()))
    levels = base.for_run(baseline)
    codes: dict[int, np.ndarray] = {baseline: base.node_code}
    for r, p in enumerate(profiles):
        if r != baseline:
            codes[r] = _add_run(levels, r, p, to_base[frame_gkey[r]])
    from_base = np.empty(n_keys, dtype=np.int64)
    from_base[to_base] = np.arange(n_keys)
    return _assemble(levels, [codes[r] for r in range(len(profiles))], profiles, from_base)


def _add_run(levels: list[_Level], run: int, p: Profile, frame_gk: np.ndarray
             ) -> np.ndarray:
    """Add run ``run``'s nodes to ``levels``: each finds the row of its (parent row, key,
    rank), or makes one; returns each node's level code (and a trailing -1)."""
    gk = frame_gk[p.frame]
    order, bounds = level_order(p.depth)
    code = np.full(p.n_nodes + 1, -1, dtype=np.int32)
    src = _SrcCodes(p)
    for d in range(len(bounds) - 1):
        if d == len(levels):
            levels.append(_Level.empty())
        level = levels[d]
        nodes = order[bounds[d]:bounds[d + 1]]
        pcode = code[p.parent[nodes]].astype(np.int64)
        k = (pcode + 1) * KEY_STRIDE + gk[nodes]
        srt, sk, rank_sorted = _sorted_keys(k, nodes, src)
        mine = np.empty(len(nodes), dtype=np.int64)
        mine[srt] = level.find(sk, rank_sorted)
        new = np.flatnonzero(mine < 0)  # in node order: numbered by first appearance
        if new.size:
            rank = np.empty(len(nodes), dtype=np.int64)
            rank[srt] = rank_sorted
            mine[new] = level.size + np.arange(len(new))
            level.add(run, nodes[new], pcode[new], gk[nodes[new]], rank[new])
        code[nodes] = mine
    return code


def _assemble(levels: list[_Level], codes: list[np.ndarray], profiles: list[Profile],
              from_base: np.ndarray) -> UnionTree:
    """The rows numbered level after level, parents and nodes given their rows."""
    sizes = [lv.size for lv in levels]
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    parent, key, rep_run, rep_node = [], [], [], []
    for d, lv in enumerate(levels):
        above = off[d - 1] if d else 0
        for pc, gk, run, nodes in zip(lv.pcode, lv.gk, lv.rep_run, lv.rep_node, strict=True):
            parent.append(np.where(pc >= 0, pc + above, -1))
            key.append(from_base[gk])
            rep_run.append(np.full(len(nodes), run, dtype=np.int32))
            rep_node.append(nodes)
    union_of = []
    for p, code in zip(profiles, codes, strict=True):
        u = np.full(p.n_nodes + 1, -1, dtype=np.int64)
        u[:-1] = off[p.depth] + code[:-1]
        union_of.append(u)
    if not parent:
        z = np.zeros(0, dtype=np.int64)
        return UnionTree(z.astype(np.int32), z, z.astype(np.int32), z, [], union_of)
    return UnionTree(np.concatenate(parent).astype(np.int32), np.concatenate(key),
                     np.concatenate(rep_run), np.concatenate(rep_node).astype(np.int64),
                     sizes, union_of)
