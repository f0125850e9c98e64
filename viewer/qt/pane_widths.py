"""Column widths of the comparison panes, shared by the tree panes and the flat table.

Why one mixin: :class:`~.views.TreePane` (a QTreeView) and :class:`~.table_pane.TablePane`
(a QTableView) size their columns by the same rules (:mod:`.column_sizing`: measured
content, header widths, the columns a user sized, the viewport's width), and hold the
header's signals while they do, so a resize costs one repaint instead of a second one
from the view's own resize handling.  Each pane sets the state in its ``__init__``:
``user_sized``, ``content_widths``, ``_head_widths``, ``_sizing`` and the two left-eliding
delegates ``_elide_names`` / ``_elide_modules``, and connects its header's
``sectionResized`` to :meth:`ColumnWidths._section_resized`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .column_sizing import available_width, distribute, header_width

if TYPE_CHECKING:
    from PySide6.QtWidgets import QHeaderView, QStyledItemDelegate, QWidget

    from .models import ComparisonTreeModel


class ColumnWidths:
    """The column-width methods of a pane (mixed in before the Qt view class)."""

    user_sized: set[int]
    content_widths: dict[int, int]
    _head_widths: dict[int, int] | None
    _sizing: int
    _elide_names: QStyledItemDelegate
    _elide_modules: QStyledItemDelegate

    if TYPE_CHECKING:  # provided by the Qt view and the pane
        def header(self) -> QHeaderView: ...
        def model_(self) -> ComparisonTreeModel | None: ...
        def viewport(self) -> QWidget: ...
        def updateGeometries(self) -> None: ...  # noqa: N802 - Qt API
        def setItemDelegateForColumn(self, column: int,  # noqa: N802 - Qt API
                                     delegate: QStyledItemDelegate) -> None: ...

    @property
    def auto_sizing(self) -> bool:
        """True while this pane sizes its own columns (not a user's drag)."""
        return self._sizing > 0

    def _section_resized(self, i: int, _old: int, _new: int) -> None:
        if not self._sizing:
            self.user_sized.add(i)

    def reset_widths(self) -> None:
        """New columns: nothing measured or user-sized yet; names and modules elide on
        the left (:class:`~.column_sizing.ElideLeftDelegate`)."""
        self.user_sized.clear()
        self.content_widths.clear()
        self._head_widths = None
        m = self.model_()
        for i in range(self.header().count()):
            self.setItemDelegateForColumn(i, None)  # type: ignore[arg-type]
        if m is not None:  # src keeps Qt's right elision: the file name comes first
            for i, c in enumerate(m.columns):
                if c.kind == "name":
                    self.setItemDelegateForColumn(i, self._elide_names)
                elif c.kind == "module":
                    self.setItemDelegateForColumn(i, self._elide_modules)

    def set_user_width(self, i: int, w: int) -> None:
        """A width the user chose (kept across column rebuilds and saved settings)."""
        self.user_sized.add(i)
        self.header().resizeSection(i, w)

    def user_widths(self) -> list[int]:
        """Section widths the user set, 0 for the columns sized automatically."""
        h = self.header()
        return [h.sectionSize(i) if i in self.user_sized else 0 for i in range(h.count())]

    def grow_content(self, widths: dict[int, int]) -> None:
        """Columns need at least ``widths`` (measured content); re-apply the widths."""
        for i, w in widths.items():
            if w > self.content_widths.get(i, 0):
                self.content_widths[i] = w
        self.apply_widths()

    def apply_widths(self) -> None:
        """Size the automatic columns from the measured content and the viewport width."""
        m = self.model_()
        if m is None or not self.content_widths:
            return
        h = self.header()
        if self._head_widths is None or len(self._head_widths) != h.count():
            self._head_widths = {i: header_width(self, c.header)  # type: ignore[arg-type]
                                 for i, c in enumerate(m.columns[: h.count()])}
        kinds = [c.kind for c in m.columns][: h.count()]
        fixed = {i: h.sectionSize(i) for i in self.user_sized if i < h.count()}
        widths = distribute(available_width(self),  # type: ignore[arg-type]
                            self.content_widths, self._head_widths, kinds, fixed)
        todo = [(i, w) for i, w in widths.items() if w > 0 and h.sectionSize(i) != w]
        if not todo:
            return
        # the header's signals are held: QTreeView would answer each resize with a
        # deferred geometry pass and repaint - a second paint of every visible cell
        # after the one already pending; one geometry pass and one repaint instead
        self._sizing += 1
        blocked = h.blockSignals(True)
        try:
            for i, w in todo:
                h.resizeSection(i, w)
        finally:
            h.blockSignals(blocked)
            self._sizing -= 1
        self.updateGeometries()
        self.viewport().update()

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(ev)  # type: ignore[misc]
        if ev.oldSize().width() != ev.size().width():
            self.apply_widths()

