"""The "Allocated types" tab for Julia / pprof allocation profiles.

One row per allocated type (``extras["by_type"]`` of the pprof reader): allocations and
bytes per run, Δ, Δ%, and added/removed status, largest byte growth first: "which type is
the stray 32-byte allocation?".  The data is :func:`viewer.by_type.by_type_comparison`
(a flat Comparison), shown with the "By cost centre" tab's :class:`FlatView` table (its
call-site pane hidden: types have no call sites here; the call tree has their
``Alloc: T`` frames).  Small (one row per type), so it is built with the tab.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from profdiff.viewer.by_type import BYTES, COUNT, has_by_type
from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison
from profdiff.viewer.session import Session
from profdiff.viewer.units import format_delta, format_value

from .flat_view import FlatView
from .models import Column
from .views import fit_columns


def wants_alloc_types(cmp: Comparison) -> bool:
    """Every run is a pprof profile with an allocated-type table."""
    return bool(cmp.runs) and all(p.format == "pprof" and has_by_type(p) for p in cmp.runs)


class AllocTypesView(QWidget):
    """Totals line + flat table of allocated types across runs."""

    def __init__(self, source: Session | Comparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        cmp = Session.of(source).by_type()
        self.cmp = cmp
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.note = QLabel(self._summary(cmp))
        self.note.setObjectName("allocTypesNote")
        self.note.setContentsMargins(6, 2, 6, 2)
        lay.addWidget(self.note)
        self.table = FlatView()
        self.table.table.setObjectName("allocTypesTable")
        self.table.splitter.widget(1).hide()  # call sites: none for types
        lay.addWidget(self.table, 1)
        self.table.set_comparison(cmp, None, [BYTES, COUNT], BYTES, None)
        # "type" instead of "name"; no module column (types have none)
        cols = [Column("name", header="allocated type", tooltip="Julia type of the objects")
                if c.kind == "name" else c
                for c in self.table.model.columns if c.kind != "module"]
        self.table.model.set_columns(cols)
        self.table.table.header().setSortIndicator(self.table.default_sort_column(),
                                                   Qt.SortOrder.DescendingOrder)
        fit_columns(self.table.table, 320)

    @property
    def model(self):
        return self.table.model

    def set_scale(self, scale: DivergingScale) -> None:
        self.table.set_scale(scale)

    @staticmethod
    def _summary(cmp: Comparison) -> str:
        c = cmp.status_counts()
        parts = [f"{cmp.n_rows:,} allocated types"]
        b = cmp.total_values(BYTES)
        n = cmp.total_values(COUNT)
        if cmp.n_runs > 1:
            base, new = cmp.baseline, cmp.current
            parts.append(f"bytes {format_value(b[base], 'bytes')} → {format_value(b[new], 'bytes')}"
                         f" ({format_delta((b[new] or 0) - (b[base] or 0), 'bytes')})")
            parts.append(f"allocations {format_value(n[base], 'count')} → "
                         f"{format_value(n[new], 'count')}")
            parts.append(f"{c['added']} added, {c['removed']} removed, {c['changed']} changed")
        else:
            parts.append(f"bytes {format_value(b[0], 'bytes')}, "
                         f"allocations {format_value(n[0], 'count')}")
        return " · ".join(parts)
