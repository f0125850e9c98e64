"""Ticky closures grouped by module: a two-level profile (module -> closures).

A ticky report is a flat table of closures.  Which *module* got more expensive is the
first question of a ticky diff, and the answer is a sum over many closures, so the
"group by module" mode of the ticky view turns each run into a two-level tree - one
root per module, its closures below - and aligns the runs in tree mode.  Alignment
then matches modules first and closures (by the reader's unique-free ``match``)
within their module, exactly the identity the flat table uses.

The module rows carry the sums of their closures.  Ticky metrics are SELF counters of
a flat table; in the grouped tree the same columns become *inclusive* (a module row
is its subtree's sum, a closure row is a leaf so its value is its own), which is what
``Kind.INCLUSIVE`` says: never sum them along a path.

Qt-free: the viewer and tests build it, nothing else depends on Qt here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from profdiff.parsers.builder import profile_from_arrays
from profdiff.parsers.model import Kind, Profile, make_frame_table

NO_MODULE = "(no module)"
"""Module row of closures the report names without a module."""
MODULE_KIND = "module"
"""``frames.kind`` of the synthetic module rows."""


def group_by_module(p: Profile, sum_duplicates: bool = False) -> Profile:
    """``p`` (a one-level ticky profile) as module roots with their closures as children.

    ``sum_duplicates`` merges closures sharing one key (module + match) into one row
    with their summed counters - the tree-mode counterpart of the flat alignment the
    ungrouped view uses for "sum duplicates".
    """
    f = p.frames
    fr = np.asarray(p.frame)
    mods = np.array([str(m) or NO_MODULE for m in np.asarray(f.module, dtype=object)[fr]],
                    dtype=object)
    names = np.asarray(f.name, dtype=object)[fr]
    match = np.asarray(f.match if f.match is not None else f.name, dtype=object)[fr]
    srcs = np.asarray(f.src, dtype=object)[fr]
    lines = np.asarray(f.line)[fr]
    kinds = np.asarray(f.kind, dtype=object)[fr]
    metrics = [m.name for m in p.metrics]
    vals = {m: np.asarray(p.values[m], dtype=np.float64) for m in metrics}

    # closures in (module, original order); duplicates optionally summed
    import pandas as pd  # a ticky tab's groups: not at first paint of other formats

    df = pd.DataFrame({"module": mods, "match": match, "pos": np.arange(len(fr))})
    if sum_duplicates and len(df):
        g = df.groupby(["module", "match"], sort=False)
        first = g["pos"].transform("min").to_numpy()
        keep = np.flatnonzero(first == df["pos"].to_numpy())
        summed = {m: np.zeros(len(fr)) for m in metrics}
        for m in metrics:
            np.add.at(summed[m], first, vals[m])
        vals = summed
    else:
        keep = np.arange(len(fr))

    mod_order = list(dict.fromkeys(mods[keep].tolist()))
    mod_id = {m: i for i, m in enumerate(mod_order)}
    n_mod = len(mod_order)
    # closures sorted by module (stable: report order inside a module)
    cm = np.array([mod_id[m] for m in mods[keep].tolist()], dtype=np.int64)
    order = keep[np.argsort(cm, kind="stable")]
    cm_sorted = np.sort(cm, kind="stable")

    frames = make_frame_table(
        names=mod_order + names[order].tolist(),
        modules=[""] * n_mod + mods[order].tolist(),
        srcs=[""] * n_mod + srcs[order].tolist(),
        lines=[0] * n_mod + lines[order].tolist(),
        kinds=[MODULE_KIND] * n_mod + kinds[order].tolist(),
        match=mod_order + match[order].tolist(),
    )
    n = n_mod + len(order)
    parent = np.concatenate([np.full(n_mod, -1, dtype=np.int32),
                             cm_sorted.astype(np.int32)])
    cols: dict[str, np.ndarray] = {}
    for m in metrics:
        leaf = vals[m][order]
        sums = np.bincount(cm_sorted, weights=leaf, minlength=n_mod) if n_mod else np.zeros(0)
        cols[m] = np.concatenate([sums, leaf])
    new_metrics = [replace(m, kind=Kind.INCLUSIVE, self_of=None) if m.kind is Kind.SELF else m
                   for m in p.metrics]
    return profile_from_arrays(
        path=p.path, format=p.format, frames=frames, parent=parent,
        frame=np.arange(n, dtype=np.int32), metrics=new_metrics, columns=cols,
        meta=dict(p.meta), totals=dict(p.totals), total_metrics=dict(p.total_metrics),
        incomplete=p.incomplete, incomplete_reason=p.incomplete_reason,
        warnings=tuple(p.warnings), extras=dict(p.extras), default_metric=p.default_metric,
        display_metrics=tuple(p.display_metrics),
    )

