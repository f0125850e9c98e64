"""The window's hook for the Disassembly tab: "Compare instructions…" in the row menu
of perf rows, and double-click to open it.

Why a module of its own: every window installs the hook on its tree and table panes at
start-up, while the Disassembly tab (its objdump reading and alignment, ~20 ms of
imports) is only needed once a perf row asks for it.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QAbstractItemView, QWidget

from profdiff.viewer.compare import Comparison

from .models import ROW_ID_ROLE


def perf_row_target(cmp: Comparison, row: int) -> tuple[str, str, str] | None:
    """(symbol, baseline perf.data, current perf.data) for a row of a comparison of two
    perf.data runs, None for any other row (other formats, kernel/unknown frames)."""
    if cmp is None or cmp.n_runs < 2 or not 0 <= row < cmp.n_rows:
        return None
    a, b = cmp.runs[cmp.baseline], cmp.runs[cmp.current]
    if a.format != "perf-data" or b.format != "perf-data" or not a.path or not b.path:
        return None
    name = str(cmp.name[row])
    if not name or name.startswith("[") or str(cmp.module[row]).startswith("[kernel"):
        return None
    return name, str(a.path), str(b.path)


def add_compare_instructions(window: QWidget, view: QAbstractItemView) -> None:
    """Give ``view`` (a tree/table over a :class:`ComparisonTreeModel`) a context-menu
    action "Compare instructions…" and open the Disassembly tab on double-click, for perf
    rows.  ``window`` provides ``add_tab`` and, duck-typed, its rename ``rules``."""

    def target(index: QModelIndex) -> tuple[str, str, str] | None:
        model = index.model() if index.isValid() else None
        cmp = getattr(model, "cmp", None)
        row = index.data(ROW_ID_ROLE) if index.isValid() else None
        return perf_row_target(cmp, int(row)) if cmp is not None and row is not None else None

    def open_for(index: QModelIndex) -> None:
        t = target(index)
        if t is not None:
            from .disassembly_view import open_disassembly

            open_disassembly(window, *t, rules=getattr(window, "rules", ()))

    def entries(index: QModelIndex) -> list:
        t = target(index)
        return [] if t is None else [(f"Compare instructions of {t[0]}…",
                                      lambda: open_for(index))]

    from .row_menu import RowMenu

    RowMenu.of(view).add_extra(entries)  # an entry of the row's context menu
    view.doubleClicked.connect(open_for)
