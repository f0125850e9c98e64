"""Row order and visibility of a :class:`~viewer.compare.Comparison`, without Qt.

A :class:`RowLayout` answers "which rows are the visible children of row ``p``, in display
order" for every parent, lazily: a parent's child list is sorted (numpy) and filtered the
first time a view asks for it and cached until the sort or the filter changes.  The
position of every row inside its parent's list is kept in one int array, so a Qt model's
``parent()`` is two array reads.

Several Qt models share one layout (the two panes of the side-by-side view), which is
what keeps their rows aligned one-to-one: a sort or a filter is applied once and every
model listening to the layout emits ``layoutAboutToBeChanged``/``layoutChanged`` around it.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from functools import cached_property

import numpy as np

from profdiff.parsers.model import level_order
from profdiff.viewer.compare import Comparison
from profdiff.viewer.factorize import factorize
from profdiff.viewer.qt.bulk_ops import csr_children
from profdiff.viewer.row_key import RowKey, as_key
from profdiff.viewer.text_match import contains
from profdiff.viewer.tree_union import ranks_in_groups

_NAME_CODES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

WIDE_WINDOW = 2000
"""Children of one parent a tree shows at first, and how many more each step adds.

Why: Qt's tree view asks the Python model for ``index`` and ``hasChildren`` of every
child of an expanded row, so opening a parent with 32k children (MAIN of a big ``.prof``)
cost ~0.2 s on the first paint.  A wider parent shows its first children, and the next
ones as its last shown child is painted (the view is scrolled to it) or a row further
down is asked for (a selection, a pane kept in step, an expanded path); the models
insert them as rows (``beginInsertRows``).  Not Qt's ``canFetchMore``/``fetchMore``: a
tree view fetches once on every expand, which would show twice as many at first, and
only the root's on scrolling.  Flat lists are tables and show every row."""


def name_codes(cmp: Comparison) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(name codes, distinct names, module codes, distinct modules) of a comparison, cached
    per comparison so every view filtering it shares one factorisation.  From an aligned
    comparison's frame tables (:attr:`~viewer.compare.Comparison.label_frames`) the
    distinct values may include names no row shows; a code always names its row's."""
    v = _NAME_CODES.get(cmp)
    if v is None:
        frames = cmp.label_frames
        if frames is not None:  # over the runs' frame tables, not every row
            gf, names, modules = frames
            fc, nu = factorize(names)
            fm, mu = factorize(modules)
            nc, mc = fc[gf], fm[gf]
        else:
            nc, nu = factorize(cmp.name)
            mc, mu = factorize(cmp.module)
        v = (nc, np.asarray(nu, dtype=object), mc, np.asarray(mu, dtype=object))
        _NAME_CODES[cmp] = v
    return v


_MATCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per comparison: the last few text matches, by (text, regex) - the views showing one
comparison (the side-by-side panes and the diff tree) filter it with the same text."""
_UPPER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per comparison: its distinct names and modules upper-cased (case-blind substring tests)."""


def _upper(cmp: Comparison) -> tuple[list[str], list[str]]:
    v = _UPPER.get(cmp)
    if v is None:
        _, nu, _, mu = name_codes(cmp)
        v = _UPPER[cmp] = ([str(x).upper() for x in nu.tolist()],
                           [str(x).upper() for x in mu.tolist()])
    return v


_LEVELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def levels(cmp: Comparison) -> tuple[np.ndarray, np.ndarray]:
    """``level_order(cmp.depth)`` cached per comparison (a 10^6-row argsort, ~25 ms):
    shared by every view's filter and by :func:`path_hashes`."""
    v = _LEVELS.get(cmp)
    if v is None:
        v = level_order(cmp.depth)
        _LEVELS[cmp] = v
    return v


_MOST_CHILDREN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def most_children(cmp: Comparison) -> int:
    """The largest number of children of one row (or of the roots), cached per
    comparison: every pane's layout asks (a 10^6-row ``diff`` each, ~7 ms)."""
    got = _MOST_CHILDREN.get(cmp)
    if got is None:
        off, _ = cmp.children_offsets_ids
        got = _MOST_CHILDREN[cmp] = int(np.diff(off).max()) if len(off) > 1 else 0
    return got


def precompute(cmp: Comparison, statuses: bool = True) -> None:
    """Fill the lazy caches views need (children, depth, levels, name codes, statuses);
    meant for the loader thread so the GUI thread does not pay for them on the first
    click.  ``statuses`` false: another thread prepares them (the loader's noise job,
    :meth:`Comparison.prepare_statuses`)."""
    _ = cmp.children_offsets_ids, cmp.depth, cmp.present
    if statuses:
        _ = cmp.status
    name_codes(cmp)
    _upper(cmp)
    if cmp.mode != "flat":
        levels(cmp)
        most_children(cmp)


class RowLayout:
    """Sorted, filtered child lists of a comparison's union tree (or flat list)."""

    def __init__(self, cmp: Comparison) -> None:
        self.cmp = cmp
        self.n = cmp.n_rows
        self.sort_key: np.ndarray | RowKey | None = None
        self.descending = True
        self.visible: np.ndarray | None = None  # bool[n]; None = all
        self.matched: np.ndarray | None = None  # bool[n]; rows to highlight (text matches)
        self.filter_text = ""
        self.filter_regex = False
        self.keep: np.ndarray | None = None  # extra row mask (changed-only, threshold)
        self._lists: dict[int, np.ndarray] = {}
        # the same lists as Python lists of ints, for the Qt model's per-index calls
        # (``lst[row]`` on a list is ~10x cheaper than on an ndarray); cleared with _lists
        self.plists: dict[int, list[int]] = {}
        self._has_kids: bytes | None = None  # per row: 1 when it has a visible child
        self._window: dict[int, int] = {}  # wide parent -> children shown (WIDE_WINDOW)
        # last shown child of a wide parent that shows only some -> that parent
        self.edges: dict[int, int] = {}
        self._pos = np.full(self.n, -1, dtype=np.int64)
        self._listeners: weakref.WeakSet = weakref.WeakSet()

    # ----- structure --------------------------------------------------------------------
    @property
    def flat(self) -> bool:
        return self.cmp.mode == "flat"

    @cached_property
    def _csr(self) -> tuple[np.ndarray, np.ndarray]:
        return self.cmp.children_offsets_ids

    def raw_child_count(self, parent: int) -> int:
        off, _ = self._csr
        p = self.n if parent < 0 else parent
        return int(off[p + 1] - off[p])

    def children(self, parent: int) -> np.ndarray:
        """Visible children of ``parent`` (-1 = roots) in display order (cached)."""
        lst = self._lists.get(parent)
        if lst is None:
            lst = self.cmp.children(parent)
            if self.visible is not None and lst.size:
                lst = lst[self.visible[lst]]
            if self.sort_key is not None and lst.size > 1:
                k = self.sort_key[lst]
                if self.descending:
                    k = -k
                # NaN last, ties in file order
                k = np.where(np.isnan(k), np.inf, k)
                lst = lst[np.argsort(k, kind="stable")]
            lst = np.ascontiguousarray(lst)
            self._lists[parent] = lst
            self._pos[lst] = np.arange(lst.size)
        return lst

    def child_list(self, parent: int) -> list[int]:
        """The shown part of :meth:`children` as a Python list (cached): what
        ``QAbstractItemModel.index`` reads once per shown row."""
        lst = self.plists.get(parent)
        if lst is None:
            full = self.children(parent)
            n = self.shown_count(parent, full.size)
            lst = full[:n].tolist()
            self.plists[parent] = lst
            if n < full.size:
                self.edges[lst[-1]] = parent
        return lst

    def shown_count(self, parent: int, n: int) -> int:
        """How many of ``parent``'s ``n`` visible children the views show
        (:data:`WIDE_WINDOW`)."""
        if n <= WIDE_WINDOW or self.flat:
            return n
        return min(n, self._window.get(parent, WIDE_WINDOW))

    def shown_children(self, parents, wide_only: bool = False) -> np.ndarray:
        """The children the views show of each of ``parents`` (-1: the roots), in no
        particular order: every visible child, but of a wide parent only its window
        (:meth:`shown_count`).  What an expansion's columns are measured over: a parent
        with 32k children shows 2,000 of them, and measuring the rest would size the
        columns to rows nobody sees (the window's next rows are measured when shown).
        ``wide_only``: the windows of the wide parents among ``parents`` alone."""
        ps = np.unique(np.asarray(parents, dtype=np.int64))
        ps = ps[(ps >= -1) & (ps < self.n)]
        if ps.size == 0 or (wide_only and (self.flat or not self.any_wide)):
            return ps[:0]
        off, ids = self._csr
        pi = np.where(ps < 0, self.n, ps)
        wide = (off[pi + 1] - off[pi]) > WIDE_WINDOW
        kids = ps[:0]
        if not wide_only:
            kids = csr_children(off, ids, pi[~wide])[0].astype(np.int64, copy=False)
            if self.visible is not None:
                kids = kids[self.visible[kids]]
        parts = [kids]
        for p in ps[wide].tolist():  # few: their sorted lists are what the views show
            full = self.children(p)
            parts.append(full[: self.shown_count(p, full.size)])
        return np.concatenate(parts) if len(parts) > 1 else kids

    def has_more(self, parent: int) -> bool:
        """``parent`` has visible children the views do not show yet."""
        n = self.visible_child_count(parent)
        return self.shown_count(parent, n) < n

    def show_more(self, parent: int, upto: int | None = None, quiet: bool = False) -> None:
        """Show the next :data:`WIDE_WINDOW` children of ``parent`` (or enough for the one
        at position ``upto``); listening models insert the rows (``quiet``: inside a
        layout change, which relayouts anyway)."""
        n = self.visible_child_count(parent)
        old = self.shown_count(parent, n)
        want = old + WIDE_WINDOW if upto is None else -(-(upto + 1) // WIDE_WINDOW) * WIDE_WINDOW
        new = min(n, want)
        if new <= old:
            return
        if not quiet and parent >= 0:
            self.show_path(parent)  # the models' index of ``parent`` must exist first
        ls = [] if quiet else list(self._listeners)
        for m in ls:
            m._rows_about_to_show(parent, old, new)
        self._window[parent] = new
        lst = self.plists.pop(parent, None)
        if lst:
            self.edges.pop(lst[-1], None)
        for m in ls:
            m._rows_shown()

    def show_path(self, row: int) -> None:
        """:meth:`show_rows` for ``row`` and its ancestors (one index asked for)."""
        if self.flat or not self.any_wide or not 0 <= row < self.n:
            return
        par = self.cmp.parent
        for a in self.ancestors(row):
            q = self.position(a)
            if q >= WIDE_WINDOW:
                self.show_more(int(par[a]), q)

    @cached_property
    def any_wide(self) -> bool:
        """Some parent has more than :data:`WIDE_WINDOW` children (else nothing to do)."""
        return most_children(self.cmp) > WIDE_WINDOW

    def show_rows(self, rows, quiet: bool = False) -> None:
        """Make ``rows`` (row ids) shown rows of their parents, :meth:`show_more` where a
        wide parent hides them: what a Qt index for a row needs.  Pass a row's
        ancestors too when they may be hidden (:meth:`ancestors`); they are shown first."""
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if self.flat or rows.size == 0 or not self.any_wide:
            return
        rows = rows[(rows >= 0) & (rows < self.n)]
        pos = self.positions(rows)
        far = pos >= WIDE_WINDOW
        if not far.any():
            return
        par, pos = self.cmp.parent[rows[far]].astype(np.int64), pos[far]
        order = np.lexsort((-pos, par))  # per parent, its farthest row first
        par, pos = par[order], pos[order]
        first = np.ones(par.size, dtype=bool)
        first[1:] = par[1:] != par[:-1]
        depth = self.cmp.depth
        want = sorted(zip(par[first].tolist(), pos[first].tolist(), strict=True),
                      key=lambda pq: -1 if pq[0] < 0 else int(depth[pq[0]]))
        for p, q in want:  # parents above first: their own index must exist
            self.show_more(p, q, quiet)

    def prefetch(self, parents) -> None:
        """Compute the child lists of many ``parents`` at once (one lexsort over all their
        children instead of one argsort per parent): a sort or filter with thousands of
        expanded rows would otherwise pay ~10 us of numpy overhead per parent."""
        ps = np.unique(np.asarray(parents, dtype=np.int64))
        ps = ps[(ps >= -1) & (ps < self.n)]
        todo = [p for p in ps.tolist() if p not in self._lists]
        if len(todo) < 8:
            for p in todo:
                self.children(p)
            return
        ps = np.asarray(todo, dtype=np.int64)
        off, ids = self._csr
        pi = np.where(ps < 0, self.n, ps)
        start = off[pi].astype(np.int64)
        lens = (off[pi + 1] - off[pi]).astype(np.int64)
        total = int(lens.sum())
        grp = np.repeat(np.arange(ps.size), lens)
        first = np.cumsum(lens) - lens
        ch = ids[np.arange(total) - np.repeat(first - start, lens)]
        if self.visible is not None and total:
            keep = self.visible[ch]
            ch, grp = ch[keep], grp[keep]
        if self.sort_key is not None and ch.size > 1:
            k = self.sort_key[ch]
            if self.descending:
                k = -k
            k = np.where(np.isnan(k), np.inf, k)  # NaN last, ties in file order (stable)
            order = np.lexsort((k, grp))
            ch, grp = ch[order], grp[order]
        bounds = np.searchsorted(grp, np.arange(ps.size + 1))
        self._pos[ch] = np.arange(ch.size) - bounds[grp]
        # the Python lists the model's index() reads (child_list), sliced from one list:
        # a relayout reads every one of them
        every, cuts = ch.tolist(), bounds.tolist()
        for j, p in enumerate(todo):
            a, b = cuts[j], cuts[j + 1]
            self._lists[p] = ch[a:b]
            if self.shown_count(p, b - a) == b - a:  # else child_list cuts its window
                self.plists[p] = every[a:b]

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`position` (-1 for hidden rows)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return rows
        par = self.cmp.parent[rows]
        self.prefetch(par)
        pos = self._pos[rows].copy()
        if self.visible is not None:
            pos[~self.visible[rows]] = -1
        return pos

    def has_kids(self) -> bytes:
        """Per row 1 when it has a visible child (cached until the filter changes)."""
        hk = self._has_kids
        if hk is None:
            if self.flat:
                a = np.zeros(self.n, dtype=np.uint8)
            elif self.visible is None:
                off, _ = self._csr
                a = (np.diff(off[: self.n + 1]) > 0).astype(np.uint8)
            else:
                par = self.cmp.parent
                sel = par[self.visible]
                sel = sel[sel >= 0]
                a = np.zeros(self.n, dtype=np.uint8)
                a[sel] = 1
            hk = self._has_kids = a.tobytes()
        return hk

    def visible_child_count(self, parent: int) -> int:
        """Visible children of ``parent``, shown or not (:data:`WIDE_WINDOW`)."""
        if self.visible is None and parent not in self._lists:
            return self.raw_child_count(parent)
        return len(self.children(parent))

    def child_count(self, parent: int) -> int:
        """Children of ``parent`` the views show (``rowCount``)."""
        return self.shown_count(parent, self.visible_child_count(parent))

    def has_children(self, parent: int) -> bool:
        if parent < 0:
            return self.child_count(parent) > 0
        return self.has_kids()[parent] == 1

    def is_visible(self, row: int) -> bool:
        return 0 <= row < self.n and (self.visible is None or bool(self.visible[row]))

    def position(self, row: int) -> int:
        """Index of ``row`` in its parent's visible list, -1 when hidden."""
        if not self.is_visible(row):
            return -1
        p = int(self.cmp.parent[row])
        if p not in self._lists:
            self.children(p)
        return int(self._pos[row])

    def ancestors(self, row: int) -> list[int]:
        """Rows from the root down to ``row`` (inclusive)."""
        out = []
        par = self.cmp.parent
        while row >= 0:
            out.append(row)
            row = int(par[row])
        return out[::-1]

    # ----- changes (wrapped so listening Qt models can keep persistent indexes) --------
    def add_listener(self, listener) -> None:
        """``listener`` has ``_layout_about_to_change()`` and ``_layout_changed()``, and
        ``_rows_about_to_show(parent, first, end)`` and ``_rows_shown()`` around
        :meth:`show_more`."""
        self._listeners.add(listener)

    def _change(self, fn: Callable[[], None]) -> None:
        ls = list(self._listeners)
        for m in ls:
            m._layout_about_to_change()
        fn()
        self._lists.clear()
        self.plists.clear()
        self.edges.clear()
        self._pos.fill(-1)
        for m in ls:
            m._layout_changed()

    def set_sort(self, key: np.ndarray | None, descending: bool = True) -> None:
        def apply() -> None:
            self.sort_key = None if key is None else as_key(key)
            self.descending = descending

        self._change(apply)

    def set_filter(self, text: str = "", regex: bool = False,
                   keep: np.ndarray | None = None) -> None:
        """Show rows whose name or module matches ``text`` (and ``keep``), plus ancestors.

        Matching is done once per distinct name/module string, then mapped to rows, so a
        10^6-row comparison with 10^4 distinct names costs 10^4 string tests.
        Raises ``re.error`` for a bad regex (the caller shows it).
        """
        match = self._text_match(text, regex) if text else None
        base = match
        if keep is not None:
            base = keep if base is None else (base & keep)
        visible = None if base is None else self._with_ancestors(base)

        def apply() -> None:
            self.filter_text, self.filter_regex, self.keep = text, regex, keep
            self.matched = match
            self.visible = visible
            self._has_kids = None

        self._change(apply)

    @property
    def _name_codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return name_codes(self.cmp)

    def _text_match(self, text: str, regex: bool) -> np.ndarray:
        """Rows whose name, module or ``Module.name`` contains ``text`` (cached per
        comparison: read-only, shared by every layout over it)."""
        if regex:
            re.compile(text)  # raise early with a readable message
        per_cmp = _MATCHES.setdefault(self.cmp, {})
        m = per_cmp.get((text, regex))
        if m is None:
            m = self._compute_match(text, regex)
            m.setflags(write=False)
            if len(per_cmp) >= 8:
                per_cmp.clear()
            per_cmp[(text, regex)] = m
        return m

    def _compute_match(self, text: str, regex: bool) -> np.ndarray:
        nc, nu, mc, mu = self._name_codes
        if not len(nc):
            return np.zeros(0, dtype=bool)
        un, um = _upper(self.cmp)
        # the original strings only for a regex (a substring test reads the upper-cased)
        names = [str(x) for x in nu.tolist()] if regex else un
        mods = [str(x) for x in mu.tolist()] if regex else um
        m = contains(names, un, text, regex)[nc] | contains(mods, um, text, regex)[mc]
        if "." in text:
            # qualified "Module.name" as the details pane shows it, tested per distinct pair
            pair = nc.astype(np.int64) * max(len(mu), 1) + mc
            pc, pu = factorize(pair)
            pu = np.asarray(pu)
            labels = [f"{mu[b]}.{nu[a]}" for a, b in zip((pu // max(len(mu), 1)).tolist(),
                                                        (pu % max(len(mu), 1)).tolist(),
                                                        strict=True)]
            m = m | contains(labels, [x.upper() for x in labels], text, regex)[pc]
        return m

    @property
    def _levels(self) -> tuple[np.ndarray, np.ndarray]:
        return levels(self.cmp)

    def _with_ancestors(self, mask: np.ndarray) -> np.ndarray:
        vis = np.array(mask, dtype=bool, copy=True)
        if self.flat or not vis.any():
            return vis
        order, bounds = self._levels
        par = self.cmp.parent
        for d in range(len(bounds) - 2, 0, -1):
            idx = order[bounds[d]: bounds[d + 1]]
            sel = idx[vis[idx]]
            if sel.size:
                vis[par[sel]] = True
        return vis


_PATH_HASHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def path_hashes(cmp: Comparison) -> np.ndarray:
    """uint64 hash of every row's key path from the root (tree: each step its match key
    and its rank among its parent's rows of that key) or of its key (flat), cached per
    comparison (a watched folder's runs are the new side of one re-compare and the old
    side of the next).

    Used to carry expansion and selection over when runs are replaced: rows of two
    comparisons with equal hashes are the same call path.  The keys' own ``hash()``
    (equal keys hash equal within a process, which is all this compares) - not
    pandas' ``hash_array``, whose import cost 0.2 s at the first reload or watched run.
    """
    got = _PATH_HASHES.get(cmp)
    if got is None:
        got = _PATH_HASHES[cmp] = _path_hashes(cmp)
    return got


def _path_hashes(cmp: Comparison) -> np.ndarray:
    keys = np.asarray(cmp.keys, dtype=object).tolist()
    kh = np.fromiter(map(hash, keys), dtype=np.int64, count=len(keys)).view(np.uint64)
    if cmp.mode == "flat" or cmp.n_rows == 0:
        kh.flags.writeable = False  # cached: shared by every caller
        return kh
    par = cmp.parent
    mul = np.uint64(1099511628211)
    with np.errstate(over="ignore"):
        kx = kh + _sibling_ordinals(cmp).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        h = kx.copy()
        order, bounds = levels(cmp)
        for d in range(1, len(bounds) - 1):
            idx = order[bounds[d]: bounds[d + 1]]
            h[idx] = h[par[idx]] * mul ^ kx[idx]
    h.flags.writeable = False  # cached: shared by every caller
    return h


def _sibling_ordinals(cmp: Comparison) -> np.ndarray:
    """Each row's rank, in row order, among the rows with its parent and match key (0
    for all but repeated keys).  Why: GHC gives one call site two cost-centre rows with
    one name and module when their SRC differs (``trainStep.(...)`` at Main.hs:22 and
    :23 in hs-ad); without the rank both had one path hash, and a reload opened the
    first where the second had been open.  Rows of such siblings come in (src, file
    order) in every comparison (:func:`viewer.compare.align`), so ranks carry over."""
    codes, _ = cmp.key_codes
    grp = (cmp.parent.astype(np.int64) + 1) * (int(codes.max(initial=0)) + 1) + codes
    return ranks_in_groups(grp, np.argsort(grp, kind="stable"))


def map_rows(old: Comparison, new: Comparison, rows: np.ndarray) -> np.ndarray:
    """Rows of ``new`` on the same call path as ``rows`` of ``old`` (-1 where gone)."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0 or new.n_rows == 0:
        return np.full(rows.size, -1, dtype=np.int64)
    known, first = np.unique(path_hashes(new), return_index=True)  # first row per path
    ho = path_hashes(old)[rows]
    at = np.minimum(np.searchsorted(known, ho), len(known) - 1)
    return np.where(known[at] == ho, first[at], -1).astype(np.int64)


_PATH_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per comparison: the last key :func:`path_to_max` walked, with its (own, subtree max)
arrays - every tree view walks the same key, a hidden tab again when first shown (keys
are fresh arrays per request: one changed in place would need a new object)."""


def subtree_max(cmp: Comparison, v: np.ndarray) -> np.ndarray:
    """Largest ``v`` in every row's subtree (itself included); one sweep per depth level."""
    out = np.nan_to_num(np.array(v, dtype=np.float64), nan=-np.inf, copy=False)
    if cmp.mode == "flat" or cmp.n_rows == 0:
        return out
    order, bounds = levels(cmp)
    par = cmp.parent
    for d in range(len(bounds) - 2, 0, -1):
        idx = order[bounds[d]: bounds[d + 1]]
        np.maximum.at(out, par[idx], out[idx])
    return out


def path_key_max(cmp: Comparison, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v`` without NaN and its :func:`subtree_max`, remembered for ``cmp``'s last key:
    every tree view walks the same key, and the worker that ranks the culprits calls this
    ahead (a 10^6-row sweep, 15-35 ms), so the first click on a tree tab only walks."""
    got = _PATH_KEYS.get(cmp)
    if got is not None and got[0] is v:
        return got[1], got[2]
    own = np.nan_to_num(np.asarray(v, dtype=np.float64), nan=-np.inf)
    sub = subtree_max(cmp, own)
    _PATH_KEYS[cmp] = (v, own, sub)
    return own, sub


def path_to_max(layout: RowLayout, v: np.ndarray) -> list[int]:
    """Visible rows from a root down to the row with the largest ``v`` (e.g. |Δ self|)."""
    own, sub = path_key_max(layout.cmp, v)
    path: list[int] = []
    p = -1
    while True:
        ch = layout.children(p)
        if ch.size == 0 or (layout.flat and p >= 0):
            break
        best = int(ch[np.argmax(sub[ch])])
        if p >= 0 and own[p] >= sub[best]:
            break
        path.append(best)
        p = best
    return path
