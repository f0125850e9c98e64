"""Which tabs the window shows for the loaded runs, which one opens, and the Summary tab.

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).

* The **Summary** tab comes first whenever runs are loaded
  (:mod:`viewer.summary` builds it, :class:`~viewer.qt.summary_view.SummaryView` shows
  it); its links go through :meth:`show_in_tree`, :meth:`show_in_flame`,
  :meth:`show_in_bottom_up` and :meth:`accept_rule`.
* The generic views appear only when they have something to show: the trees and the
  flat table need rows (``+RTS -s`` logs have none), the flame graph needs a call tree
  deeper than one level (``.hp`` bands, ticky closures, callgrind and ``.mem`` files
  are flat: one row of boxes says nothing).
* The tab current at open is the format's most useful one
  (:func:`viewer.qt.format_views.opening_view`): Heap over time for ``.hp``, RTS
  statistics for ``+RTS -s``/``-t``, Ticky closures for ticky; otherwise Summary when
  runs are compared, Side by side for a single run.
* The details pane is hidden while it has nothing to say: no row selected, or a tab
  without rows (Summary, heap charts, RTS statistics).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from profdiff.viewer.compare import Comparison

from .summary_view import SummaryView

HEAP_TAB = "Heap over time"


class TabsMixin:
    """Per-format tabs, the opening tab, the Summary page and the details pane's visibility."""

    def _build_summary_tab(self) -> None:
        """The Summary page (call before the other tabs are added: it is the first)."""
        self.summary_view = SummaryView()
        self.tabs.addTab(self.summary_view, "Summary")
        self.summary_view.treeRequested.connect(self.show_in_tree)
        self.summary_view.flameRequested.connect(self.show_in_flame)
        self.summary_view.bottomUpRequested.connect(self.show_in_bottom_up)
        self.summary_view.heapRequested.connect(self.show_in_heap)
        self.summary_view.acceptRequested.connect(self.accept_rule)
        self.summary_view.renameRequested.connect(self.show_rename)
        self.summary_view.tabRequested.connect(self.show_view)

    def _core_tabs(self) -> list[tuple[QWidget, str]]:
        """The tabs every format may have, in tab order, with their titles."""
        if not hasattr(self, "_core_titles"):
            self._core_titles = [(w, self.tabs.tabText(self.tabs.indexOf(w)))
                                 for w in (self.summary_view, self.side, self.diff,
                                           self.flat, self.flame) if w is not None]
        return self._core_titles

    def wanted_core_tabs(self, cmp: Comparison | None) -> list[QWidget]:
        """The generic tabs with data for ``cmp``: Summary always; the trees and the flat
        table when there are rows; the flame graph when some row has a parent."""
        if cmp is None:
            return [w for w, _ in self._core_tabs()]
        out: list[QWidget] = [self.summary_view]
        if cmp.n_rows:
            out += [self.side, self.diff, self.flat]
            if self.flame is not None and bool(np.any(cmp.parent >= 0)):
                out.append(self.flame)
        return out

    def flat_tab_title(self) -> str:
        """The flat table's tab title, in the words of the runs' format (:func:`flat_title`)."""
        idx = self.tabs.indexOf(self.flat)
        return self.tabs.tabText(idx) if idx >= 0 else flat_title(self.comparison)

    def _layout_core_tabs(self, cmp: Comparison | None) -> None:
        """Remove the generic tabs without data and put back the ones that have it, in
        their order before any format tab; the flat table's title names its rows as the
        format does (:func:`flat_title`)."""
        wanted = set(map(id, self.wanted_core_tabs(cmp)))
        current = self.tabs.currentWidget()
        pos = 0
        for w, title in self._core_tabs():
            idx = self.tabs.indexOf(w)
            if id(w) in wanted:
                if idx < 0:
                    self.tabs.insertTab(pos, w, title)
                pos += 1
            elif idx >= 0:
                self.tabs.removeTab(idx)
        if (idx := self.tabs.indexOf(self.flat)) >= 0:
            self.tabs.setTabText(idx, flat_title(cmp))
        if current is not None and self.tabs.indexOf(current) >= 0:
            self.tabs.setCurrentWidget(current)

    def _refresh_format_tabs(self) -> QWidget | None:
        """Tabs specific to the runs' format (heap charts, RTS statistics, ticky counters,
        run totals), rebuilt for each comparison, and the generic tabs that have data.
        Returns the tab to show first for this format (see :meth:`primary_tab`)."""
        from .format_views import extra_views, opening_view, primary_view, totals_view

        for w in self._format_tabs:
            idx = self.tabs.indexOf(w)
            if idx >= 0:
                self.tabs.removeTab(idx)
            w.deleteLater()
        self._format_tabs = []
        cmp = self.comparison
        self._layout_core_tabs(cmp)
        views: list[tuple[str, QWidget]] = []
        try:
            primary = primary_view(cmp)
            if primary is not None:
                views.append(primary)
            views += extra_views(self.session if self.session is not None else cmp)
            if primary is None:
                tv = totals_view(cmp)
                if tv is not None:
                    views.append(tv)
        except Exception as e:  # noqa: BLE001 - an optional view must not stop the window
            self.message_bar.show_message(f"format view: {type(e).__name__}: {e}", "warning")
            views = []
        insert_at = len(self.wanted_core_tabs(cmp))
        for title, w in views:
            if hasattr(w, "set_scale"):
                w.set_scale(self.scale)
            self._bind_view(w)
            self.tabs.insertTab(insert_at, w, title)
            insert_at += 1
            self._format_tabs.append(w)
        self._primary_tab = self._pick_opening(cmp, views, opening_view(cmp))
        return self._primary_tab

    def _pick_opening(self, cmp: Comparison | None, views: list[tuple[str, QWidget]],
                      title: str | None) -> QWidget | None:
        if cmp is None:
            return None
        for t, w in views:
            if t == title:
                return w
        if cmp.n_runs > 1:
            return self.summary_view
        return self.side if cmp.n_rows else self.summary_view

    def _format_tab(self, title: str) -> QWidget | None:
        """The format tab titled ``title`` (by title: no need to import its module, and
        pyqtgraph with it, for formats without it)."""
        for w in self._format_tabs:
            if self.tabs.tabText(self.tabs.indexOf(w)) == title:
                return w
        return None

    def primary_tab(self) -> QWidget | None:
        """The tab current when these runs were opened: the format's most useful view."""
        return getattr(self, "_primary_tab", None)

    # ----- the Summary page ---------------------------------------------------------------
    def _refresh_summary(self) -> None:
        """Build the Summary page of the shown session (deferred until the tab is shown:
        it aligns the flat comparison and estimates its noise)."""
        from profdiff.viewer.summary import build_summary

        from .bottom_up_view import BottomUpView

        if self.session is None or self.comparison is None:
            self.summary_view.set_summary(None)
            return
        try:
            summary = build_summary(self.session)
        except Exception as e:  # noqa: BLE001 - the page must not stop the window
            self.summary_view.set_summary(None)
            self.message_bar.show_message(f"Summary: {type(e).__name__}: {e}", "warning")
            return
        titles = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        totals = next((t for t in ("RTS statistics", "Run totals") if t in titles), None)
        self.summary_view.set_summary(
            summary, flame=self.tabs.indexOf(self.flame) >= 0 if self.flame else False,
            bottom_up=any(isinstance(w, BottomUpView) for w in self._format_tabs),
            heap=self._format_tab(HEAP_TAB) is not None,
            totals_tab=totals.split()[0].lower() if totals else None)

    def show_in_tree(self, key: str, row: int = -1) -> None:
        """Show the cost centre ``key`` in the diff tree: every call site expanded, ``row``
        (a call site) selected, else the first."""
        cmp = self.comparison
        if cmp is None or self.tabs.indexOf(self.diff) < 0:
            return
        self.reveal_key(key)
        if 0 <= row < cmp.n_rows:
            self.reveal_row(row, expand=False)

    def show_in_flame(self, row: int) -> None:
        """Switch to the flame graph with tree ``row`` selected (zoomed to be readable)."""
        if self.flame is None or self.comparison is None or self.tabs.indexOf(self.flame) < 0:
            return
        self.tabs.setCurrentWidget(self.flame)  # runs its deferred set_comparison first
        self._row_selected(row, None)

    def bottom_up_tab(self) -> QWidget | None:
        """The shown "Bottom up" tab, if the format has one (the Summary's links and the
        row menu both go through here)."""
        from .bottom_up_view import BottomUpView

        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if isinstance(w, BottomUpView):
                return w
        return None

    def show_in_bottom_up(self, key: str) -> None:
        """Switch to "Bottom up" with the function ``key`` (a root there) selected."""
        view = self.bottom_up_tab()
        if view is None:
            return
        self.tabs.setCurrentWidget(view)
        bu = view.ensure()
        if bu is None:
            return
        roots = np.flatnonzero((bu.keys == key) & (bu.parent < 0))
        if roots.size:
            view.diff.select_row(int(roots[0]))

    def show_in_heap(self, key: str) -> None:
        """Switch to "Heap over time" with the band ``key`` highlighted in every chart."""
        view = self._format_tab(HEAP_TAB)
        if view is None:
            return
        self.tabs.setCurrentWidget(view)
        rows = np.flatnonzero(view.cmp.keys == key)
        if rows.size:
            view.set_highlight(int(rows[0]))

    def accept_rule(self, offer) -> None:
        """Add a rename offer's rule (Summary ▸ Accept) and compare again."""
        rule = getattr(offer, "rule", None)
        if rule is None or not self.runs:
            return
        self.rules.append(rule)
        self._rules_dirty = True
        self._realign()
        self._sync_rules_editor()
        self.statusBar().showMessage(f"Matched {getattr(offer, 'text', rule)}", 6000)

    def show_rename(self, offer) -> None:
        """Show a rename offer in the diff tree: its first removed row and the added row
        it would match (both visible, the removed one selected)."""
        from profdiff.viewer.compare import Status

        cmp = self.comparison
        if cmp is None or self.tabs.indexOf(self.diff) < 0:
            return
        st = cmp.status
        if offer.kind == "module":
            added = (st == Status.ADDED) & (cmp.module == offer.new)
            names = set(cmp.name[added].tolist())
            gone = np.flatnonzero((st == Status.REMOVED) & (cmp.module == offer.old)
                                  & np.isin(cmp.name, list(names)))
            new = np.flatnonzero(added & (cmp.name == cmp.name[gone[0]])) if gone.size \
                else gone
        else:
            (sug,) = offer.suggestions
            gone = np.flatnonzero((st == Status.REMOVED) & (cmp.keys == sug.old_key))
            new = np.flatnonzero((st == Status.ADDED) & (cmp.keys == sug.new_key))
        if gone.size:
            self.reveal_pair(int(gone[0]), int(new[0]) if new.size else -1)

    # ----- the details pane -------------------------------------------------------------
    def _row_view(self, w: QWidget | None) -> bool:
        """A tab whose rows fill the details pane when selected."""
        if w is None or w is self.summary_view:
            return False
        if w in (self.side, self.diff, self.flat, self.flame):
            return True
        return hasattr(w, "detailsRequested") or hasattr(w, "rowSelected")

    def _update_details_visibility(self, *_args) -> None:
        """Show the details pane only with a row to describe, on a tab with rows."""
        show = self.details.has_content and self._row_view(self.tabs.currentWidget())
        self.details.setVisible(show)


def flat_title(cmp: Comparison | None) -> str:
    """"By cost centre" for GHC's formats, "By line" for Julia ``.mem`` files (rows are
    source lines), "By function" for the others (perf, pprof, callgrind, speedscope,
    folded): a perf user reading "cost centre", GHC's word, looked for something else."""
    fmt = cmp.runs[0].format if cmp is not None and cmp.runs else "ghc"
    if fmt.startswith("ghc"):
        return "By cost centre"
    return "By line" if fmt == "julia-mem" else "By function"
