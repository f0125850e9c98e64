"""Format-specific views: the one entry point the main window asks for extra tabs.

The generic views (trees, flame graph, flat table) fit every call-tree format; a few
formats carry data they cannot show:

* ``ghc-hp`` (heap profiles): time series -> :class:`~viewer.qt.heap_view.HeapView`;
* ``ghc-ticky``: run-level counters and histograms, closures identical across runs,
  ambiguous keys -> :mod:`viewer.qt.ticky_view`;
* ``ghc-rts-s`` / ``ghc-rts-t`` (RTS statistics): zero-node profiles, so the tree views
  are empty and :class:`~viewer.qt.rts_view.RtsView` replaces them (:func:`primary_view`).
* any run with a call tree (perf, pprof, GHC ``.prof``): "Bottom up", the diff tree of
  the inverted (caller) trees, built when first shown -> :mod:`viewer.qt.bottom_up_view`;
* pprof allocation profiles with type labels (Julia ``Profile.Allocs``): "Allocated
  types" -> :mod:`viewer.qt.alloc_types_view`;
* callgrind (call edges, no stacks): "Callers / callees" -> :mod:`viewer.qt.call_graph_view`.

Views are built from the comparison's runs (re-aligning in the mode each needs), so the
caller can pass its tree- or flat-mode comparison.  Every returned widget has
``set_scale(DivergingScale)`` for the colour palette setting.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from profdiff.viewer.compare import Comparison
from profdiff.viewer.session import Session

RTS_FORMATS = frozenset({"ghc-rts-s", "ghc-rts-t"})
HEAP_FORMATS = frozenset({"ghc-hp"})
TICKY_FORMATS = frozenset({"ghc-ticky"})


def _formats(cmp: Comparison) -> set[str]:
    return {p.format for p in cmp.runs}


def is_rts(cmp: Comparison) -> bool:
    """All runs are RTS statistics (``-s`` and ``-t`` files compare with each other)."""
    f = _formats(cmp)
    return bool(f) and f <= RTS_FORMATS


def extra_views(source: Session | Comparison) -> list[tuple[str, QWidget]]:
    """Tabs to add for the runs' format: ``[(tab title, widget)]``, empty for others.

    Only when every run has the format (a heap view of a .prof run makes no sense).
    Every view aligns through the session, so its rename rules apply in every tab.
    """
    session = Session.of(source)
    cmp = session.tree
    f = _formats(cmp)
    if not f:
        return []
    if f <= HEAP_FORMATS:
        from .heap_view import HeapView

        return [("Heap over time", HeapView(session))]
    if f <= TICKY_FORMATS:
        from .ticky_view import TickyClosuresView, TickyCountersView

        return [("Ticky closures", TickyClosuresView(session)),
                ("Ticky counters", TickyCountersView(session.flat))]
    views: list[tuple[str, QWidget]] = []
    from .bottom_up_view import BottomUpView, wants_bottom_up

    if wants_bottom_up(cmp):  # cheap until the tab is first shown
        views.append(("Bottom up", BottomUpView(session)))
    from .alloc_types_view import AllocTypesView, wants_alloc_types

    if wants_alloc_types(cmp):
        views.append(("Allocated types", AllocTypesView(session)))
    from .call_graph_view import CallGraphView, wants_call_graph

    if wants_call_graph(cmp):
        views.append(("Callers / callees", CallGraphView(session.flat)))
    return views


def opening_view(cmp: Comparison | None) -> str | None:
    """The title of the format view to open these runs on, or None (the window then opens
    on Summary for a comparison, Side by side for a single run).  One table, documented
    in the README: heap profiles open on their chart, RTS statistics on their table,
    ticky on its closures."""
    if cmp is None:
        return None
    return opening_view_of(_formats(cmp))


def opening_view_of(f: set[str]) -> str | None:
    """:func:`opening_view` of runs in the formats ``f`` (known once they are read,
    before they are compared: the loader aligns ahead what that view reads)."""
    if not f:
        return None
    if f <= RTS_FORMATS:
        return "RTS statistics"
    if f <= HEAP_FORMATS:
        return "Heap over time"
    if f <= TICKY_FORMATS:
        return "Ticky closures"
    return None


def primary_view(cmp: Comparison) -> tuple[str, QWidget] | None:
    """A view replacing the tree views, for formats without a call tree (RTS stats)."""
    if is_rts(cmp):
        from .rts_view import RtsView

        return ("RTS statistics", RtsView(cmp))
    return None


def totals_view(cmp: Comparison) -> tuple[str, QWidget] | None:
    """A generic "run totals side by side" tab for any format with run totals."""
    if not cmp.total_keys:
        return None
    from .totals_table import TotalsTable, totals_data

    return ("Run totals", TotalsTable(totals_data(cmp)))
