"""Expanding, revealing and selecting rows across the views; switching and adding tabs.

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

import weakref

import numpy as np
from PySide6.QtWidgets import (
    QWidget,
)

from profdiff.viewer.row_key import RowKey
from profdiff.viewer.view_state import change_scale_factor, inclusive_of

_HOT_VALUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""comparison -> {metric: :meth:`NavigationMixin.hot_key` by value}; gone with it."""


def _larger_of_runs(cmp, metric: str) -> RowKey:
    """Per row the larger of ``metric`` in the current run and the baseline (as they are
    now), read at the rows asked for.  It holds the comparison weakly: it is kept in
    :data:`_HOT_VALUES` under that comparison, which a strong reference would keep
    alive for ever."""
    ref, current, baseline = weakref.ref(cmp), cmp.current, cmp.baseline

    def at(rows: np.ndarray) -> np.ndarray:
        c = ref()
        if c is None:  # only views of the comparison read it, and they hold it
            raise ReferenceError("the comparison of this row key is gone")
        return np.fmax(c.values_at(metric, current, rows), c.values_at(metric, baseline, rows))

    return RowKey(cmp.n_rows, at)


class NavigationMixin:
    """Expanding, revealing and selecting rows across the views; switching and adding tabs."""

    def tree_views(self) -> list:
        return [self.side, self.diff]

    def _defer(self, view, fn) -> None:
        """Run ``fn`` now if ``view`` is the visible tab, else when it is first shown
        (expanding or laying out hidden tabs would cost the user time for nothing)."""
        if self.tabs.currentWidget() is view:
            fn()
        else:
            self._pending.setdefault(id(view), []).append(fn)

    def _defer_latest(self, view, kind: str, fn) -> None:
        """:meth:`_defer`, where ``fn`` replaces the view's last pending operation when
        that is of the same ``kind``: typing in the filter box leaves a hidden tab one
        filter to apply when shown (the last text, as if typed at once), not one per key."""
        fn.kind = kind
        if self.tabs.currentWidget() is view:
            fn()
            return
        todo = self._pending.setdefault(id(view), [])
        if todo and getattr(todo[-1], "kind", None) == kind:
            todo[-1] = fn
        else:
            todo.append(fn)

    def _owes_filter(self, view) -> bool:
        """Whether ``view`` (a hidden tab) has a filter to apply when shown."""
        return any(getattr(fn, "kind", None) == "filter" for fn in self._pending.get(id(view), ()))

    def _tab_changed(self, _i: int) -> None:
        w = self.tabs.currentWidget()
        for fn in self._pending.pop(id(w), []):
            fn()

    def flush_pending(self) -> None:
        """Apply every deferred operation to every tab now (tests, screenshots)."""
        pending, self._pending = self._pending, {}
        for fns in pending.values():
            for fn in fns:
                fn()

    def expand_to_depth(self, depth: int, max_rows: int | None = None) -> None:
        """Open every tree view ``depth`` levels deep (``max_rows``: only the levels
        that keep it within that many shown rows; see ``views.expand_to_depth``)."""
        for v in self.tree_views():
            self._defer(v, lambda v=v: v.expand_to_depth(depth, max_rows))

    def collapse_all(self) -> None:
        self._culprit_owed = None  # the opening paths are dropped with the pending work
        for v in self.tree_views():
            todo = self._pending.pop(id(v), [])
            filters = [fn for fn in todo if getattr(fn, "kind", None) == "filter"][-1:]
            if filters:  # the filter a hidden tab owes still applies, then the collapse
                self._pending[id(v)] = [*filters, v.collapse_all]
            elif len(v.expanded_rows()):  # Qt's collapseAll lays out even a closed tree
                v.collapse_all()

    def expand_hottest(self, by: str = "value", views=None) -> int:
        """Expand along the largest inherited cost (``by="value"``), or down to the row with
        the largest self change of the main metric (``by="delta"``), in ``views`` (default:
        every tree view)."""
        cmp = self.comparison
        if cmp is None:
            return -1
        if by == "delta" and cmp.n_runs > 1:
            key = self._delta_key(cmp)
            to_max = True
        else:
            key = self.hot_key("value")
            to_max = False
        if key is None:
            return -1
        last = -1
        for v in (self.tree_views() if views is None else views):
            # a hidden tab opens its path when first shown, after its deferred expansion
            self._defer(v, lambda v=v: v.expand_hottest(key, to_max=to_max))
            path = v.hottest_path(key, to_max)
            last = path[-1] if path else last
        if last >= 0:
            self._row_selected(last, None)
        return last

    def open_heaviest_path(self) -> None:
        """Open every tree view along the heaviest path of a single run (two runs open
        along the path to the top culprit).  Why: two levels alone showed a Julia
        allocation profile as 3 rows of an empty window.  No row is made current: that is
        the user's choice (the runs panel plots its own default row until one is made)."""
        key = self.hot_key("value")
        if key is not None:
            for v in self.tree_views():
                self._defer(v, lambda v=v: v.open_hottest(key))

    def open_along_culprit(self) -> None:
        """Open every tree view along the path to the top culprit, that row current, when
        the view is first shown: the ranking (and the noise it needs) is computed then,
        not before the first paint of a window that opens on the Summary.  The first view
        to open selects the row everywhere (as :meth:`expand_hottest` does); a later one
        only opens its path, so it does not undo a selection the user made meanwhile."""
        cmp = self.comparison
        if cmp is None or cmp.n_runs < 2:
            return
        memo: dict[str, object] = {}
        # see rank_culprits_now; weakly: a reload does not open paths, and the marker
        # kept the replaced comparison (every array of it) alive until the next load
        self._culprit_owed = (weakref.ref(cmp), memo)

        def open_view(v) -> None:
            if self.comparison is not cmp:
                return
            if "key" not in memo:
                memo["key"] = self._delta_key(cmp)
            key = memo["key"]
            if key is None:
                return
            if memo.get("selected"):
                path = v.hottest_path(key, to_max=True)
                v.expand_rows(path[:-1])
                v.fit_name_column(rows=path)
                return
            last = v.expand_hottest(key, to_max=True)
            if last >= 0:
                memo["selected"] = True
                self._row_selected(last, v)

        for v in self.tree_views():
            self._defer(v, lambda v=v: open_view(v))

    def culprits_owed(self, cmp) -> bool:
        """True while a tree view not shown yet still owes ``cmp`` (the shown comparison)
        its opening path and nothing has ranked it: what a worker may rank ahead."""
        owed = getattr(self, "_culprit_owed", None)
        return owed is not None and owed[0]() is cmp and cmp is self.comparison \
            and "key" not in owed[1] and any(id(v) in self._pending for v in self.tree_views())

    def rank_culprits_now(self, cmp=None, ranking=None) -> bool:
        """Rank the culprits a tree view not shown yet still owes its opening path, so the
        first click on the tree tab only opens the path.  ``ranking``: the
        :func:`viewer.ranking.rank_changes` of ``cmp`` a worker computed (the live window
        ranks off the GUI thread); it is dropped unless ``cmp`` is still the shown
        comparison (a reload meanwhile made it stale).  True when the path's key was set."""
        cmp = self.comparison if cmp is None else cmp
        if not self.culprits_owed(cmp):
            return False
        self._culprit_owed[1]["key"] = self._delta_key(cmp, ranking)
        return True

    def _delta_key(self, cmp, ranking=None) -> np.ndarray | None:
        """What ``expand_hottest("delta")`` follows: the culprit score, else |Δ self|."""
        key = self._culprit_key(cmp, ranking)
        if key is None:
            m = self._main_self_metric()
            if m is None:
                return None
            key = np.abs(cmp.delta(m)) * change_scale_factor(cmp, m)
        return key

    def _culprit_key(self, cmp, ranking=None) -> np.ndarray | None:
        """Per-row size of the culprit score (own change against the baseline's total,
        beyond precision and noise; :mod:`viewer.ranking`), or None when no row has one."""
        from profdiff.viewer.ranking import rank_changes

        if ranking is None:
            ranking = self.ranking_from_job(cmp)
        if ranking is None:
            session = getattr(self, "session", None)
            ranking = session.culprits(cmp) if session is not None else rank_changes(cmp)
        return ranking.path_key

    def hot_key(self, by: str = "value") -> np.ndarray | RowKey | None:
        """Per-row inherited cost (larger of baseline and current) or its Δ (``by="delta"``)."""
        cmp = self.comparison
        if cmp is None:
            return None
        m = inclusive_of(cmp, self._main_self_metric())
        if m is None:
            return None
        if by == "delta" and cmp.n_runs > 1:
            return cmp.delta(m)
        per_cmp = _HOT_VALUES.setdefault(cmp, {})
        key = per_cmp.get(m)
        if key is None:  # asked for twice as a comparison opens (sort, then expand)
            key = per_cmp[m] = _larger_of_runs(cmp, m)  # read at the rows views list
        return key

    def _row_selected(self, row: int, source) -> None:
        if self._selecting:
            return
        self._selecting = True
        try:
            self.details.show_row(self.comparison, row)
            for v in [self.side, self.diff, self.flame, *self._extra_tabs]:
                if v is None or v is source or not hasattr(v, "select_row"):
                    continue
                if self._owes_filter(v):  # selects after it, as it would have
                    self._defer_latest(v, "select", lambda v=v: v.select_row(row))
                    continue
                try:
                    v.select_row(row)
                except Exception:  # noqa: BLE001 - optional views
                    pass
        finally:
            self._selecting = False

    def _flat_selected(self, row: int) -> None:
        self.details.show_row(self.flat_comparison, row)

    def reveal_key(self, key: str) -> None:
        """Show every tree row with match ``key`` (expanded) and select the first."""
        cmp = self.comparison
        if cmp is None:
            return
        rows = np.flatnonzero(cmp.keys == key)
        if rows.size == 0:
            return
        for v in self.tree_views():
            v.expand_rows([int(cmp.parent[r]) for r in rows if cmp.parent[r] >= 0])
        self.reveal_row(int(rows[0]), expand=False)

    def reveal_row(self, row: int, expand: bool = True) -> None:
        self.tabs.setCurrentWidget(self.diff if self.comparison.n_runs > 1 else self.side)
        self._row_selected(row, None)
        self.diff.select_row(row)

    def next_tab(self, step: int = 1) -> None:
        n = self.tabs.count()
        if n:
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % n)

    def view_widget(self, name: str) -> QWidget | None:
        """The tab ``--view name`` means, or None when this comparison has no such tab."""
        w = {"side": self.side, "diff": self.diff, "flat": self.flat,
             "flame": self.flame}.get(name)
        if w is None:  # format tabs by the first word of their title: heap, rts, ticky, ...
            for i in range(self.tabs.count()):
                words = self.tabs.tabText(i).lower().split()
                if name.lower() in words or name.lower().split("-") == words:  # bottom-up
                    w = self.tabs.widget(i)
                    break
        return w if w is not None and self.tabs.indexOf(w) >= 0 else None

    def available_views(self) -> list[str]:
        """The ``--view`` names this window has a tab for (in --view's order)."""
        from profdiff.viewer.options import VIEWS

        return [v for v in VIEWS if self.view_widget(v) is not None]

    def show_view(self, name: str) -> None:
        w = self.view_widget(name)
        if w is not None:
            self.tabs.setCurrentWidget(w)

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a view tab; it receives comparisons and selections if it has the hooks."""
        self._extra_tabs.append(widget)
        idx = self.tabs.addTab(widget, title)
        if hasattr(widget, "rowSelected"):
            widget.rowSelected.connect(lambda r, w=widget: self._row_selected(r, w))
        if self.comparison is not None and hasattr(widget, "set_comparison"):
            widget.set_comparison(self.comparison)
        return idx

    def remove_tab(self, widget: QWidget) -> None:
        """Remove a tab added with :meth:`add_tab` (the widget is not deleted)."""
        idx = self.tabs.indexOf(widget)
        if idx >= 0:
            self.tabs.removeTab(idx)
        if widget in self._extra_tabs:
            self._extra_tabs.remove(widget)
        if widget is self.watch_panel:
            self.watch_panel = None
