"""The item delegate of the comparison views: a cell's style option from one model call.

Why: ``QStyledItemDelegate.initStyleOption`` asks the model for seven roles per painted
cell (font, alignment, foreground, check state, decoration, display, background), and
each is a call from C++ into Python (~4 us of binding overhead each: a 1600x900 diff
tree paints ~800 cells, ~25 ms a frame).  :class:`CellDelegate` reads the model's cached
cell (:meth:`~.models.ComparisonTreeModel.painted_cell`) once and fills the option as
Qt's own ``initStyleOption`` would from those roles.  Cells with an icon, and models whose
``data`` is overridden (their roles may differ from the cached cell), go through Qt's
version unchanged.

A :class:`~.views.TreePane` draws most text cells without this delegate's ``paint``
(:mod:`.row_painter`: one Python call per row, not several per cell); it asks the
delegate only how a cell's text is elided (:meth:`CellDelegate.elide`).
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
_ELIDE_RIGHT = Qt.TextElideMode.ElideRight
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

    def elide(self, text: str, fm: QFontMetrics, width: int) -> str:
        """The part of ``text`` a cell ``width`` px wide shows (the style's right
        elision); :class:`~.column_sizing.ElideLeftDelegate` keeps the end instead."""
        return elide_right(text, fm, width)

    def draws_like_cells(self) -> bool:
        """Whether a cell painted by this delegate is what :mod:`.row_painter` draws from
        the cached cell (background, elided text): this class's style option, Qt's
        ``paint``.  A subclass with another ``initStyleOption`` registers it in
        :data:`PLAIN_STYLE_OPTIONS` when it only changes the elision (:meth:`elide`)."""
        cls = type(self)
        return cls.paint is QStyledItemDelegate.paint and \
            cls.initStyleOption in PLAIN_STYLE_OPTIONS


def elide_right(text: str, fm: QFontMetrics, width: int) -> str:
    """``text`` cut on the right with "…" to fit ``width`` px (the style's elision)."""
    if fm.horizontalAdvance(text) <= width:
        return text
    return fm.elidedText(text, _ELIDE_RIGHT, width)


PLAIN_STYLE_OPTIONS = {CellDelegate.initStyleOption}
"""``initStyleOption`` versions whose cells :mod:`.row_painter` may draw itself."""
