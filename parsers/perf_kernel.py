"""Kernel frames perf could not resolve: one reported group, never a silent difference.

Why: perf turns kernel addresses into names only with the recording kernel's kallsyms or
a vmlinux of the same build-id.  Opened on another machine, every kernel frame prints as
``[unknown]``, and how many of them a call chain holds depends on the kernel's unwinder,
not on the program.  Two runs (or a perf.data and the text perf printed where it was
recorded) would then differ in kernel depth and in kernel function names, a difference
that says nothing about the program.  Each chain of unresolved kernel frames therefore
becomes one ``[unknown]`` node in ``[kernel.kallsyms]``, and a warning plus
``meta["kernel_unresolved"]`` say how many samples that group holds.

This is not a reader (no ``FORMAT``); the perf readers call :func:`collapse_unresolved`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .model import Kind, Profile, inclusive_from_self, level_order

UNRESOLVED = "[unknown]"
KERNEL_KIND = "kernel"


def collapse_unresolved(prof: Profile) -> Profile:
    """``prof`` with every chain of unresolved kernel frames merged into its first node."""
    fr = prof.frames
    bad_frame = (fr.name == UNRESOLVED) & (fr.kind == KERNEL_KIND)
    if prof.n_nodes == 0 or not bad_frame.any():
        return prof
    bad = bad_frame[prof.frame]
    if not bad.any():
        return prof
    parent = prof.parent.astype(np.int64)
    has_parent = parent >= 0
    merge = bad & has_parent & bad[np.where(has_parent, parent, 0)]
    samples, share = _unresolved_samples(prof, bad)
    out = _merge_into_parents(prof, merge) if merge.any() else prof
    meta = dict(out.meta)
    meta["kernel_unresolved"] = {"samples": samples, "pct": round(share, 2),
                                 "frames_merged": int(merge.sum())}
    warning = _warning(meta, samples, share)
    return replace(out, meta=meta, warnings=tuple(out.warnings) + (warning,))


NO_KERNEL_SYMBOLS = ("kernel symbols were not resolved: perf has no kallsyms or vmlinux of "
                     "the recording kernel")
"""How the warning of a perf.data whose kernel frames are unresolved begins."""


def _warning(meta: dict, samples: int, share: float) -> str:
    """Why kernel frames are unresolved, and what that means for the comparison."""
    if meta.get("source") == "perf.data":
        release = str(meta.get("os_release") or "").strip()
        cause = f"{NO_KERNEL_SYMBOLS}{' ' + release if release else ''} here"
    else:
        cause = ("this text has unresolved kernel frames ('[unknown]' in [kernel.kallsyms]): "
                 "perf printed it where the recording kernel's symbols were missing")
    return (
        f"{cause}. {samples} samples ({share:.1f} %) pass through kernel code; each of their "
        f"kernel call chains is shown as one '{UNRESOLVED}' frame in [kernel.kallsyms]. "
        "User-space frames are exact; compare kernel frames only between runs whose kernel "
        "symbols were resolved."
    )


def with_build_id(warning: str, build_id: str) -> str:
    """A perf.data's unresolved-kernel ``warning`` naming the recording kernel's build-id
    (what a matching vmlinux is found by: debuginfod, a distribution's debug package);
    any other warning unchanged.

    Why: perf says the same on stderr ("No kallsyms or vmlinux with build-id ... was
    found"), and shown beside this warning it read as a second problem of every run."""
    if not warning.startswith(NO_KERNEL_SYMBOLS) or build_id in warning:
        return warning
    head, sep, tail = warning.partition(" here. ")
    return f"{head} (build-id {build_id}) here. {tail}" if sep else warning


def _unresolved_samples(prof: Profile, bad: np.ndarray) -> tuple[int, float]:
    """Samples (and their percent) whose call chain holds an unresolved kernel frame."""
    weight_name = "self_samples" if "self_samples" in prof.values else None
    if weight_name is None:
        return 0, 0.0
    w = np.asarray(prof.values[weight_name], dtype=np.float64)
    through = bad.copy()
    order, bounds = level_order(prof.depth)
    for d in range(1, len(bounds) - 1):
        idx = order[bounds[d] : bounds[d + 1]]
        through[idx] |= through[prof.parent[idx]]
    total = float(w.sum())
    n = float(w[through].sum())
    return int(round(n)), (n * 100.0 / total if total else 0.0)


def _merge_into_parents(prof: Profile, merge: np.ndarray) -> Profile:
    """Rebuild the tree with ``merge`` nodes folded into their parents.

    Folding can make two siblings equal (``H→K→B`` and ``H→B`` both become ``H→B``), so
    kept nodes are re-interned level by level of their *new* depth on (new parent, frame).
    """
    n = prof.n_nodes
    parent = prof.parent.astype(np.int64)
    head = np.arange(n, dtype=np.int64)  # the kept node a merged node folds into
    new_depth = np.zeros(n, dtype=np.int64)
    order, bounds = level_order(prof.depth)
    for d in range(1, len(bounds) - 1):
        idx = order[bounds[d] : bounds[d + 1]]
        p = parent[idx]
        m = merge[idx]
        head[idx] = np.where(m, head[p], idx)
        new_depth[idx] = np.where(m, new_depth[head[p]], new_depth[head[p]] + 1)
    new_id = np.full(n, -1, dtype=np.int64)
    new_parent: list[np.ndarray] = []
    new_frame: list[np.ndarray] = []
    kept = np.flatnonzero(~merge)
    k_order, k_bounds = level_order(new_depth[kept])
    n_frames = len(prof.frames)
    next_id = 0
    for d in range(len(k_bounds) - 1):
        idx = kept[k_order[k_bounds[d] : k_bounds[d + 1]]]  # ascending old id = file order
        if idx.size == 0:
            continue
        p_new = np.where(parent[idx] >= 0, new_id[head[np.maximum(parent[idx], 0)]], -1)
        key = (p_new + 1) * n_frames + prof.frame[idx]
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        new_id[idx] = next_id + rank[inv]
        firsts = idx[np.sort(first)]
        new_parent.append(np.where(parent[firsts] >= 0,
                                   new_id[head[np.maximum(parent[firsts], 0)]], -1))
        new_frame.append(prof.frame[firsts])
        next_id += len(first)
    new_id[merge] = new_id[head[merge]]
    par = np.concatenate(new_parent).astype(np.int32)
    frm = np.concatenate(new_frame).astype(np.int32)
    return replace(prof, parent=par, frame=frm,
                   values=_regrouped_values(prof, new_id, par, next_id))


def _regrouped_values(prof: Profile, new_id: np.ndarray, par: np.ndarray,
                      m: int) -> dict[str, np.ndarray]:
    """Self and node values summed per new node; inclusive values re-summed over the tree."""
    out: dict[str, np.ndarray] = {}
    for metric in prof.metrics:
        v = np.asarray(prof.values[metric.name])
        if metric.kind is Kind.INCLUSIVE:
            continue
        s = np.bincount(new_id, weights=v.astype(np.float64), minlength=m)
        out[metric.name] = s.astype(v.dtype) if v.dtype.kind in "iu" else s
    for metric in prof.metrics:
        if metric.kind is not Kind.INCLUSIVE:
            continue
        v = np.asarray(prof.values[metric.name])
        src = metric.self_of or _self_name(metric.name)
        if src not in out:
            raise ValueError(f"inclusive metric {metric.name} has no self metric to re-sum")
        inc = inclusive_from_self(par, np.asarray(out[src]))
        out[metric.name] = inc.astype(v.dtype) if v.dtype.kind in "iu" else inc
    return out


def _self_name(inclusive: str) -> str:
    """``total_samples`` → ``self_samples`` (the perf readers' naming)."""
    return "self_" + inclusive.removeprefix("total_")
