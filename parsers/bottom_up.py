"""Bottom-up (caller / inverted) tree of any :class:`~parsers.model.Profile`.

Roots are the functions where cost was spent (the frames of nodes with self cost); the
children of a node are its callers.  For every SELF metric, an inverted node's value is the
sum of the self values of all original nodes whose call path *ends with* the inverted
node's path read backwards (leaf, caller, caller's caller, ...).  So a root holds the flat
self cost of its function, and each level below splits it by caller.  This is the
"bottom-up" view of perf report / hotspot.

Why level by level: each original node with self cost walks up its ancestors one step per
level; at each level all walkers are merged at once with ``np.unique`` on
``(inverted parent id, frame)`` pairs, and values are summed with ``np.bincount``.  Work is
O(sum of depths of nodes with self cost), all in numpy, and inverted node ids come out
parent-first as the model requires.

Values in the result are not self values any more (a sample's cost appears once on every
level of its inverted path), so the columns keep their names but are marked
``Kind.INCLUSIVE``; original inclusive and node metrics have no bottom-up meaning and are
dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

import numpy as np

from .model import Kind, Metric, Profile


def bottom_up_runs(profiles: Sequence[Profile]) -> list[Profile]:
    """Bottom-up trees of runs that are compared: a function with self cost in any run is
    a root in every run where it occurs, with 0 where it spends nothing, so that it reads
    "changed" (0 -> x), never "added", when the baseline ran it without self cost."""
    leaves: set[str] = set()
    for p in profiles:
        leaves |= set(_leaf_keys(p).tolist())
    return [bottom_up(p, also_roots=leaves) for p in profiles]


def _leaf_keys(p: Profile) -> np.ndarray:
    selfs = [np.asarray(p.values[m.name]) for m in p.metrics if m.kind is Kind.SELF]
    if not selfs:
        return np.zeros(0, dtype=object)
    spent = np.zeros(p.n_nodes, dtype=bool)
    for v in selfs:
        spent |= v != 0
    return np.unique(p.frames.key[np.unique(p.frame[spent])]) if spent.any() else \
        np.zeros(0, dtype=object)


def bottom_up(profile: Profile, also_roots: Collection[str] = ()) -> Profile:
    """The inverted (caller) tree of ``profile``; see the module docstring.

    ``also_roots``: frame keys that become (zero-valued) roots too when the function
    occurs in ``profile`` without self cost (see :func:`bottom_up_runs`).
    """
    self_metrics = [m for m in profile.metrics if m.kind is Kind.SELF]
    if not self_metrics:
        raise ValueError("bottom_up needs at least one SELF metric")
    nframes = max(len(profile.frames), 1)
    w = np.stack([np.asarray(profile.values[m.name], dtype=np.float64) for m in self_metrics])
    cursor = np.flatnonzero((w != 0).any(axis=0))
    weights = w[:, cursor]
    prev: np.ndarray | None = None
    parents: list[np.ndarray] = []
    frames: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    n_out = 0
    frame = np.asarray(profile.frame, dtype=np.int64)
    parent = np.asarray(profile.parent, dtype=np.int64)
    while cursor.size:
        f = frame[cursor]
        key = f if prev is None else prev * nframes + f
        ukey, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        k = len(ukey)
        parents.append(np.full(k, -1, dtype=np.int64) if prev is None else ukey // nframes)
        frames.append(ukey % nframes if prev is not None else ukey)
        cols.append(np.stack([np.bincount(inv, weights=wi, minlength=k) for wi in weights]))
        node_id = n_out + inv
        n_out += k
        up = parent[cursor]
        keep = up >= 0
        cursor = up[keep]
        prev = node_id[keep]
        weights = weights[:, keep]

    extra = _extra_roots(profile, frames[0] if frames else np.zeros(0, np.int64), also_roots)
    if extra.size:
        parents.append(np.full(extra.size, -1, dtype=np.int64))
        frames.append(extra)
        cols.append(np.zeros((len(self_metrics), extra.size)))
    if parents:
        out_parent = np.concatenate(parents).astype(np.int32)
        out_frame = np.concatenate(frames).astype(np.int32)
        out_vals = np.concatenate(cols, axis=1)
    else:
        out_parent = np.zeros(0, np.int32)
        out_frame = np.zeros(0, np.int32)
        out_vals = np.zeros((len(self_metrics), 0))

    metrics = []
    values = {}
    kept = {m.name for m in self_metrics}
    for i, m in enumerate(self_metrics):
        orig = np.asarray(profile.values[m.name])
        col = out_vals[i]
        if orig.dtype.kind in "iu":
            col = np.rint(col).astype(orig.dtype)
        values[m.name] = col
        metrics.append(Metric(
            m.name, m.unit, Kind.INCLUSIVE, label=f"{m.title} (bottom-up)",
            description=f"{m.title} of the function, split by caller path (bottom-up view)",
            sampled=m.sampled, timed=m.timed, better=m.better,
            # the twins a view colours and a noise estimate counts by, when kept: without
            # percent_of, %alloc was coloured by its share of the run, and code whose
            # bytes did not change read dark green beside a row that grew
            percent_of=m.percent_of if m.percent_of in kept else None,
            count_of=m.count_of if m.count_of in kept else None,
        ))
    default = profile.default_metric
    if default is not None and default not in values:
        dm = profile.metric_by_name.get(default)
        default = dm.self_of if dm is not None and dm.self_of in values else None
    if default is None:
        default = metrics[0].name
    meta = dict(profile.meta)
    meta["view"] = "bottom-up"
    return replace(
        profile,
        parent=out_parent,
        frame=out_frame,
        metrics=tuple(metrics),
        values=values,
        meta=meta,
        default_metric=default,
    )


def _extra_roots(profile: Profile, root_frames: np.ndarray,
                 also_roots: Collection[str]) -> np.ndarray:
    """Frames named in ``also_roots`` that occur in the tree but are not roots yet."""
    if not also_roots or profile.n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    used = np.unique(np.asarray(profile.frame, dtype=np.int64))
    wanted = np.isin(profile.frames.key[used], np.array(list(also_roots), dtype=object))
    cand = used[wanted]
    return cand[~np.isin(cand, root_frames)]
