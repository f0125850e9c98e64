"""Flame-graph (icicle) geometry and colours for a :class:`~viewer.compare.Comparison`, Qt-free.

Everything here is whole-array numpy so a 10^6-row union tree lays out in well under a
second and a frame of the Qt view only touches the rows it can show:

* :func:`effective_widths` turns a per-run inclusive metric into one width per union row
  for a *width basis*:

  - ``"current"``: the current run's inclusive value.  Rows absent from the current run
    (removed) get their **baseline** width anyway, and every ancestor is widened by the
    removed subtrees below it, so a removed call is a visible "ghost" in the place it used
    to be instead of vanishing.  Present rows without removed descendants keep exactly
    their current inclusive share.
  - ``"baseline"``: the mirror image: added rows get their current width.
  - ``"max"``: each row's *self* cost is the larger of the two runs' self costs and widths
    are the subtree sums of that, so every row is at least as wide as in either run and
    children always fit inside their parent (a per-row max of inclusive values would not).

* :func:`compute_layout` places rows: ``x0`` and ``width`` as fractions of the total width,
  one vectorised pass per depth level: ``x0(child) = x0(parent) + sum of widths of its
  earlier siblings``.  Siblings are ordered "left heavy" (widest first, like speedscope) or
  by name.  Children that overflow their parent (rounded percentages) are clipped to it.
  The result also keeps, per level, the rows in x order, so culling a frame is two binary
  searches per visible level (:meth:`FlameLayout.level_window`).

* :func:`color_changes` gives the oriented change (positive = worse) used for the colour:
  the Δ of the self or inclusive value, in percentage points of each run's own total or in
  absolute units, with :func:`scale_for` choosing a :class:`~viewer.colors.DivergingScale`
  in the same unit so the legend reads naturally.

* :func:`outermost` / :func:`search_share`: the share of the total under the frames that
  match a search, counting nested matches (recursion) once.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

import numpy as np

from profdiff.parsers.model import Kind, Metric, Unit, inclusive_from_self, level_order
from profdiff.viewer.colors import ADDED, REMOVED, DivergingScale
from profdiff.viewer.compare import Comparison, Status
from profdiff.viewer.factorize import factorize
from profdiff.viewer.text_match import contains

WIDTH_BASES = ("current", "baseline", "max")
COLOR_MODES = ("self_pct", "incl_pct", "self_abs", "incl_abs", "module")
COLOR_MODE_LABELS = {
    "self_pct": "Δ self, % of run",
    "incl_pct": "Δ inclusive, % of run",
    "self_abs": "Δ self, absolute",
    "incl_abs": "Δ inclusive, absolute",
    "module": "by module (no diff)",
}
SORTS = ("heavy", "name")


# ------------------------------------------------------------------------------------------
# Metrics: which column gives widths, which gives self / inclusive colour values
# ------------------------------------------------------------------------------------------
def _metric(cmp: Comparison, name: str) -> Metric:
    try:
        return cmp.metric_by_name[name]
    except KeyError:
        raise KeyError(f"comparison has no metric {name!r}") from None


def inclusive_partner(cmp: Comparison, name: str) -> str | None:
    """The inclusive metric of ``name``: itself if inclusive, the one whose ``self_of`` it is."""
    m = _metric(cmp, name)
    if m.kind is Kind.INCLUSIVE:
        return m.name
    for other in cmp.metrics:
        if other.kind is Kind.INCLUSIVE and other.self_of == m.name:
            return other.name
    return None


def self_partner(cmp: Comparison, name: str) -> str | None:
    """The self metric of ``name``: itself if self, its ``self_of`` if inclusive."""
    m = _metric(cmp, name)
    if m.kind is Kind.SELF:
        return m.name
    if m.kind is Kind.INCLUSIVE and m.self_of and m.self_of in cmp.values:
        return m.self_of
    return None


def default_width_metric(cmp: Comparison, color_metric: str | None = None) -> str:
    """The width metric for a colour metric: its inclusive partner, else a sensible inclusive.

    Preference: the partner of ``color_metric``; the partner of the baseline's
    ``default_metric``; the first inclusive metric (same unit as the colour metric first);
    else a self metric (its inclusive values are then summed on the union tree).
    """
    cands = []
    if color_metric and color_metric in cmp.values:
        cands.append(color_metric)
    dm = cmp.runs[cmp.baseline].default_metric if cmp.runs else None
    if dm and dm in cmp.values:
        cands.append(dm)
    for c in cands:
        inc = inclusive_partner(cmp, c)
        if inc:
            return inc
    incl = [m for m in cmp.metrics if m.kind is Kind.INCLUSIVE]
    if color_metric and color_metric in cmp.values:
        unit = cmp.metric_by_name[color_metric].unit
        same = [m for m in incl if m.unit == unit]
        if same:
            return same[0].name
    if incl:
        return incl[0].name
    selfs = [m for m in cmp.metrics if m.kind is Kind.SELF]
    if selfs:
        return (cands[0] if cands and _metric(cmp, cands[0]).kind is Kind.SELF
                else selfs[0].name)
    if cmp.metrics:
        return cmp.metrics[0].name
    raise ValueError("comparison has no metrics")


def inclusive_values(cmp: Comparison, name: str) -> np.ndarray:
    """float64[n, R] inclusive values of ``name`` per run (NaN -> 0).

    An inclusive metric is used as read; a self or node metric without an inclusive
    partner is summed over the union tree (:func:`parsers.model.inclusive_from_self`).
    """
    inc = inclusive_partner(cmp, name)
    if inc is not None:
        return np.nan_to_num(cmp.values[inc], nan=0.0)
    v = np.nan_to_num(cmp.values[name], nan=0.0)
    out = np.empty_like(v)
    depth = cmp.depth
    for r in range(v.shape[1]):
        out[:, r] = inclusive_from_self(cmp.parent, v[:, r], depth)
    return out


def _child_sum(parent: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = len(parent)
    has = parent >= 0
    return np.bincount(parent[has], weights=v[has], minlength=n)


def self_values(cmp: Comparison, name: str) -> np.ndarray:
    """float64[n, R] self values: the self partner if any, else inclusive minus children."""
    s = self_partner(cmp, name)
    if s is not None:
        return np.nan_to_num(cmp.values[s], nan=0.0)
    m = _metric(cmp, name)
    v = np.nan_to_num(cmp.values[name], nan=0.0)
    if m.kind is not Kind.INCLUSIVE:  # node metrics: per row already
        return v
    out = np.empty_like(v)
    for r in range(v.shape[1]):
        out[:, r] = np.maximum(v[:, r] - _child_sum(cmp.parent, v[:, r]), 0.0)
    return out


def effective_widths(cmp: Comparison, width_metric: str, basis: str = "current",
                     run: int | None = None) -> np.ndarray:
    """float64[n] width value per union row for a width basis (see the module docstring)."""
    if basis not in WIDTH_BASES:
        raise ValueError(f"width basis must be one of {WIDTH_BASES}, not {basis!r}")
    cur = cmp.current if run is None else run
    base = cmp.baseline
    inc = np.maximum(inclusive_values(cmp, width_metric), 0.0)
    if basis == "max":
        s = inc
        selfs = np.stack([np.maximum(s[:, r] - _child_sum(cmp.parent, s[:, r]), 0.0)
                          for r in (base, cur)], axis=1)
        return inclusive_from_self(cmp.parent, selfs.max(axis=1), cmp.depth)
    main, other = (cur, base) if basis == "current" else (base, cur)
    if main == other:
        return inc[:, main].copy()
    here = cmp.present[:, main]
    # outermost rows missing from the main run: drawn at their width in the other run
    par = cmp.parent
    par_here = np.where(par >= 0, here[np.maximum(par, 0)], True)
    ghost_root = ~here & par_here
    ghost = np.where(ghost_root, inc[:, other], 0.0)
    ghost_inc = inclusive_from_self(par, ghost, cmp.depth)  # ghosts below (or at) each row
    return np.where(here, inc[:, main] + ghost_inc, inc[:, other])


# ------------------------------------------------------------------------------------------
# Layout
# ------------------------------------------------------------------------------------------
@dataclass(eq=False)
class FlameLayout:
    """Geometry of every row; fractions of the total width (roots side by side).

    ``order[bounds[d]:bounds[d+1]]`` are the rows of depth ``d`` in increasing x; ``xs`` and
    ``xe`` are ``x0`` and ``x0 + width`` in that same order (both non-decreasing), so the
    rows of a level overlapping an x window are one contiguous slice.
    """

    x0: np.ndarray  # float64[n]
    width: np.ndarray  # float64[n]
    depth: np.ndarray  # int32[n]
    values: np.ndarray  # float64[n] width values in the metric's unit
    total: float  # sum of the roots' width values
    order: np.ndarray  # int64[n]
    bounds: np.ndarray  # int64[levels + 1]
    xs: np.ndarray  # float64[n] x0[order]
    xe: np.ndarray  # float64[n] (x0 + width)[order]
    level_max: np.ndarray  # float64[levels] widest row per level (non-increasing)

    @property
    def n_levels(self) -> int:
        return len(self.bounds) - 1

    def level_window(self, d: int, lo_x: float, hi_x: float) -> tuple[int, int]:
        """Slice ``[a, b)`` of ``order`` with the rows of level ``d`` overlapping (lo_x, hi_x)."""
        s, e = int(self.bounds[d]), int(self.bounds[d + 1])
        a = s + int(np.searchsorted(self.xe[s:e], lo_x, side="right"))
        b = s + int(np.searchsorted(self.xs[s:e], hi_x, side="left"))
        return a, max(a, b)

    def row_at(self, d: int, x: float) -> int:
        """Row of depth ``d`` whose rectangle contains ``x`` (fraction), or -1."""
        if d < 0 or d >= self.n_levels:
            return -1
        s, e = int(self.bounds[d]), int(self.bounds[d + 1])
        # first row ending after x (xe is non-decreasing; zero-width rows never qualify)
        i = s + int(np.searchsorted(self.xe[s:e], x, side="right"))
        if i >= e or not (self.xs[i] <= x < self.xe[i]):
            return -1
        return int(self.order[i])


def compute_layout(parent: np.ndarray, widths: np.ndarray, depth: np.ndarray | None = None,
                   *, sort: str = "heavy", names: np.ndarray | None = None) -> FlameLayout:
    """Lay out a forest given each row's (inclusive) width value.

    ``sort="heavy"``: siblings widest first (ties by row id); ``"name"``: alphabetical
    (``names`` required), which keeps the order stable when the width basis changes.
    """
    from profdiff.parsers.model import depth_from_parent

    parent = np.asarray(parent)
    n = len(parent)
    if depth is None:
        depth = depth_from_parent(parent)
    w_in = np.clip(np.nan_to_num(np.asarray(widths, dtype=np.float64), nan=0.0), 0.0, None)
    wid = w_in.copy()
    x0 = np.zeros(n, dtype=np.float64)
    rank = np.zeros(n, dtype=np.int64)
    order_out = np.empty(n, dtype=np.int64)
    if n == 0:
        return FlameLayout(x0, wid, np.asarray(depth), w_in, 0.0, order_out,
                           np.zeros(1, np.int64), x0, x0, np.zeros(0))
    lorder, bounds = level_order(depth)
    if sort == "name":
        if names is None:
            raise ValueError("sort='name' needs names")
        codes, _ = factorize(np.asarray(names, dtype=object), sort=True)
        secondary_all = codes.astype(np.float64)
    elif sort == "heavy":
        secondary_all = -wid
    else:
        raise ValueError(f"sort must be one of {SORTS}")
    n_levels = len(bounds) - 1
    level_max = np.zeros(n_levels)
    total = 0.0
    for d in range(n_levels):
        idx = lorder[bounds[d]:bounds[d + 1]]
        if d == 0:
            pr = np.zeros(len(idx), dtype=np.int64)
        else:
            pr = rank[parent[idx]]
        s = np.lexsort((idx, secondary_all[idx], pr))
        idx = idx[s]
        pr = pr[s]
        ww = wid[idx]
        csum = np.cumsum(ww)
        new_group = np.ones(len(idx), dtype=bool)
        new_group[1:] = pr[1:] != pr[:-1]
        gs = np.maximum.accumulate(np.where(new_group, np.arange(len(idx)), 0))
        before = csum - ww - (csum[gs] - ww[gs])
        if d == 0:
            xs = before
            total = float(ww.sum())
        else:
            p = parent[idx]
            base = x0[p]
            pend = base + wid[p]
            xs = np.minimum(base + before, pend)
            ww = np.maximum(np.minimum(ww, pend - xs), 0.0)
        x0[idx] = xs
        wid[idx] = ww
        rank[idx] = np.arange(len(idx))
        order_out[bounds[d]:bounds[d + 1]] = idx
        level_max[d] = ww.max(initial=0.0)
    scale = 1.0 / total if total > 0 else 0.0
    x0 *= scale
    wid *= scale
    level_max *= scale
    xs = x0[order_out]
    xe = xs + wid[order_out]
    # float noise must not break the binary searches: non-decreasing within each level
    for d in range(n_levels):
        a, b = bounds[d], bounds[d + 1]
        np.maximum.accumulate(xs[a:b], out=xs[a:b])
        np.maximum.accumulate(xe[a:b], out=xe[a:b])
    return FlameLayout(x0=x0, width=wid, depth=np.asarray(depth), values=w_in, total=total,
                       order=order_out, bounds=np.asarray(bounds, dtype=np.int64), xs=xs, xe=xe,
                       level_max=level_max)


def layout_comparison(cmp: Comparison, width_metric: str | None = None, basis: str = "current",
                      *, sort: str = "heavy") -> FlameLayout:
    """:func:`compute_layout` of :func:`effective_widths` on the comparison's union tree."""
    width_metric = width_metric or default_width_metric(cmp)
    w = effective_widths(cmp, width_metric, basis)
    return compute_layout(cmp.parent, w, cmp.depth, sort=sort, names=cmp.name)


def ancestors(parent: np.ndarray, row: int) -> list[int]:
    """Ancestors of ``row`` from the root down (``row`` excluded)."""
    out = []
    p = int(parent[row]) if row >= 0 else -1
    while p >= 0:
        out.append(p)
        p = int(parent[p])
    return out[::-1]


def is_descendant(parent: np.ndarray, row: int, ancestor: int) -> bool:
    """True when ``ancestor`` is ``row`` or one of its ancestors (``-1`` is everyone's)."""
    if ancestor < 0:
        return True
    while row >= 0:
        if row == ancestor:
            return True
        row = int(parent[row])
    return False


# ------------------------------------------------------------------------------------------
# Colours
# ------------------------------------------------------------------------------------------
def _run_totals(cmp: Comparison, inc: np.ndarray) -> np.ndarray:
    roots = cmp.parent < 0
    return inc[roots].sum(axis=0)


def color_changes(cmp: Comparison, metric: str, mode: str = "self_pct",
                  run: int | None = None, by_share: bool = False) -> np.ndarray:
    """Oriented change per row (positive = worse) that the diverging scale colours.

    ``*_pct`` modes: Δ in percentage points of the **baseline run's total**, so code whose
    own cost did not change stays neutral when another function grows (a percent metric
    is coloured through its absolute counterpart when the runs have one);
    ``by_share=True``: Δ of each run's share of its own total instead (dilution shows as
    change).  ``*_abs``: Δ in the metric's unit.
    ``metric`` may be self or inclusive; its partner of the requested kind is used (an
    inclusive value is summed on the union tree when only self exists, a self value is
    ``inclusive - children`` when only inclusive exists).
    """
    if mode not in COLOR_MODES or mode == "module":
        raise ValueError(f"not a Δ colour mode: {mode!r}")
    m = _metric(cmp, metric)
    if (not by_share and mode.endswith("pct") and m.unit is Unit.PERCENT
            and m.percent_of and m.percent_of in cmp.values):
        metric, m = m.percent_of, _metric(cmp, m.percent_of)
    cur = cmp.current if run is None else run
    b = cmp.baseline
    if m.kind is Kind.NODE:
        v = np.nan_to_num(cmp.values[metric], nan=0.0)
        tot = v.sum(axis=0)
    else:
        inc = inclusive_values(cmp, metric)
        v = self_values(cmp, metric) if mode.startswith("self") else inc
        tot = _run_totals(cmp, inc)
    if mode.endswith("pct") and m.unit is not Unit.PERCENT:
        own = tot[cur] if by_share else tot[b]  # default: both over the baseline's total
        with np.errstate(divide="ignore", invalid="ignore"):
            sb = np.where(tot[b] > 0, v[:, b] / tot[b] * 100.0, 0.0)
            sc = np.where(own > 0, v[:, cur] / own * 100.0, 0.0)
        d = sc - sb
    else:
        d = v[:, cur] - v[:, b]
    if not by_share and metric in cmp.rounding:  # within the rounding: no change, neutral
        d = np.where(cmp.changed_mask(metric, cur), d, 0.0)
    if m.better == "higher":
        d = -d
    return d


def scale_for(cmp: Comparison, metric: str, mode: str, palette: str = "red-green",
              *, dead_fraction: float = 0.001, clamp_fraction: float = 0.05) -> DivergingScale:
    """The diverging scale in the unit of :func:`color_changes`.

    Percent modes: dead zone 0.1 pp, saturated at 5 pp (the defaults of the shared scale).
    Absolute modes: the same fractions of the larger run total, so both modes saturate on
    changes of similar visual weight and the legend shows real units.
    """
    if mode.endswith("pct") or mode == "module" or _metric(cmp, metric).unit is Unit.PERCENT:
        return DivergingScale(dead_zone=100 * dead_fraction, clamp=100 * clamp_fraction,
                              palette=palette)
    m = _metric(cmp, metric)
    if m.kind is Kind.NODE:
        tot = np.nan_to_num(cmp.values[metric], nan=0.0).sum(axis=0)
    else:
        tot = _run_totals(cmp, inclusive_values(cmp, metric))
    big = float(np.max(np.abs(tot))) if tot.size else 1.0
    big = big or 1.0
    return DivergingScale(dead_zone=big * dead_fraction, clamp=big * clamp_fraction,
                          palette=palette)


_MODULE_PALETTE = np.array([
    (240, 180, 120), (235, 200, 110), (225, 160, 130), (240, 210, 150), (220, 185, 100),
    (245, 170, 100), (230, 195, 140), (215, 170, 120), (250, 190, 135), (225, 205, 125),
], dtype=np.uint8)


def row_colors(cmp: Comparison, metric: str, mode: str, scale: DivergingScale,
               run: int | None = None, by_share: bool = False) -> np.ndarray:
    """uint8[n, 3] fill colours: Δ on the scale; added/removed rows in ADDED/REMOVED.

    ``mode="module"`` (single runs): a warm colour per module, flamegraph.pl style.
    """
    n = cmp.n_rows
    if mode == "module":
        codes, _ = factorize(np.asarray(cmp.module, dtype=object))
        return _MODULE_PALETTE[np.asarray(codes) % len(_MODULE_PALETTE)]
    col = scale.colors(color_changes(cmp, metric, mode, run, by_share=by_share))
    if cmp.n_runs > 1:
        st = cmp.status_for(run) if run is not None else cmp.status
        col[st == Status.ADDED] = ADDED
        col[st == Status.REMOVED] = REMOVED
    return col.reshape(n, 3)


# ------------------------------------------------------------------------------------------
# Search
# ------------------------------------------------------------------------------------------
_LABELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def frame_labels(cmp: Comparison) -> tuple[np.ndarray, list[str]]:
    """(code per row, distinct ``module.name`` labels): searches scan distinct frames only."""
    codes, labels, _upper = _labels(cmp)
    return codes, labels


def _labels(cmp: Comparison) -> tuple[np.ndarray, list[str], list[str]]:
    """:func:`frame_labels` and the labels upper-cased (cached per comparison).

    Labelled over the runs' frame tables (:attr:`Comparison.label_frames`, 10^2-10^5
    frames) rather than the rows: the first search of a 10^6-row flame graph built
    10^6 strings with pandas (and imported it, 0.2 s after Qt)."""
    hit = _LABELS.get(cmp)
    if hit is None:
        frames = cmp.label_frames
        if frames is None:  # a comparison built another way: label the rows themselves
            row_frame, names, mods = None, cmp.name, cmp.module
        else:
            row_frame, names, mods = frames
        full = np.empty(len(names), dtype=object)
        full[:] = [_full_label(m, n) for m, n in zip(np.asarray(mods, dtype=object).tolist(),
                                                     np.asarray(names, dtype=object).tolist(),
                                                     strict=True)]
        codes, uniq = factorize(full)
        labels = uniq.tolist()
        hit = (codes if row_frame is None else codes[row_frame], labels,
               [x.upper() for x in labels])
        _LABELS[cmp] = hit
    return hit


def _full_label(module, name) -> str:
    """``module.name``, or ``name`` where the module is empty or missing."""
    mod = "" if module is None or (isinstance(module, float) and module != module) \
        else str(module)
    return f"{mod}.{name}" if mod else str(name)


def match_rows(cmp: Comparison, text: str) -> np.ndarray:
    """bool[n]: rows whose ``name`` or ``module.name`` contains ``text`` (case-insensitive,
    as the tree filter tests: :func:`viewer.text_match.contains`).

    ``/regex/`` searches with a regular expression.
    """
    if not text or cmp.n_rows == 0:
        return np.zeros(cmp.n_rows, dtype=bool)
    codes, full, upper = _labels(cmp)
    regex = len(text) > 2 and text.startswith("/") and text.endswith("/")
    try:
        hit = contains(full, upper, text[1:-1] if regex else text, regex)
    except re.error:
        return np.zeros(cmp.n_rows, dtype=bool)
    return hit[codes]


def outermost(parent: np.ndarray, mask: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Rows of ``mask`` with no ancestor in ``mask`` (one vectorised pass per level)."""
    n = len(parent)
    covered = np.zeros(n, dtype=bool)  # some strict ancestor is in mask
    order, bounds = level_order(depth)
    for d in range(1, len(bounds) - 1):
        idx = order[bounds[d]:bounds[d + 1]]
        p = parent[idx]
        covered[idx] = covered[p] | mask[p]
    return mask & ~covered


def search_share(layout: FlameLayout, parent: np.ndarray, mask: np.ndarray) -> float:
    """Share of the total width under the outermost matching rows (0..1)."""
    if layout.total <= 0:
        return 0.0
    top = outermost(parent, mask, layout.depth)
    return float(layout.width[top].sum())


def status_of(cmp: Comparison) -> np.ndarray:
    """int8 Status per row (all SAME for a single run)."""
    if cmp.n_runs < 2:
        return np.zeros(cmp.n_rows, dtype=np.int8)
    return np.asarray(cmp.status)


__all__ = [
    "COLOR_MODES", "COLOR_MODE_LABELS", "SORTS", "WIDTH_BASES", "FlameLayout", "ancestors",
    "color_changes", "compute_layout", "default_width_metric", "effective_widths",
    "inclusive_partner", "inclusive_values", "is_descendant", "layout_comparison",
    "match_rows", "outermost", "row_colors", "scale_for", "search_share", "self_partner",
    "self_values", "status_of",
]
