"""The item delegate of the comparison views: a cell's style option from one model call.

Why: ``QStyledItemDelegate.initStyleOption`` asks the model for seven roles per painted
cell (font, alignment, foreground, check state, decoration, display, background), and
each is a call from C++ into Python (~4 us of binding overhead each: a 1600x900 diff
tree paints ~800 cells, ~25 ms a frame).  :class:`CellDelegate` reads the model's cached
cell (:meth:`~.models.ComparisonTreeModel.painted_cell`) once and fills the option as
Qt's own ``initStyleOption`` would from those roles.  Cells with an icon, and models whose
``data`` is overridden (their roles may differ from the cached cell), go through Qt's
version unchanged.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFontMetrics, QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from .models import ComparisonTreeModel

_BASE_DATA = ComparisonTreeModel.data
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_TEXT = QPalette.ColorRole.Text
_NO_BRUSH = QBrush()
_ALIGNMENTS: dict[int, Qt.AlignmentFlag] = {}


def _alignment(value: int) -> Qt.AlignmentFlag:
    """The flag for an alignment the model gives as an int (the option's field takes the
    flag type only: an int there crashes the binding)."""
    a = _ALIGNMENTS.get(value)
    if a is None:
        a = _ALIGNMENTS[value] = Qt.AlignmentFlag(value)
    return a


class CellDelegate(QStyledItemDelegate):
    """``initStyleOption`` from :meth:`ComparisonTreeModel.painted_cell` (see above)."""

    def initStyleOption(self, option, index) -> None:  # noqa: N802 - Qt API
        m = index.model()
        cell = None
        if isinstance(m, ComparisonTreeModel) and type(m).data is _BASE_DATA:
            cell = m.painted_cell(index)
        if cell is None or cell[5] is not None:
            super().initStyleOption(option, index)
            return
        text, align, bg, fg, font, _deco = cell
        # the same steps as QStyledItemDelegate::initStyleOption, role by role
        option.index = index
        if font is not None:
            f = font.resolve(option.font)
            option.font = f
            option.fontMetrics = QFontMetrics(f)
        option.displayAlignment = _alignment(align)
        if fg is not None:
            option.palette.setBrush(_TEXT, fg)
        if text is not None:
            option.features |= _HAS_DISPLAY
            option.text = text
        option.backgroundBrush = bg if bg is not None else _NO_BRUSH
        option.styleObject = None
