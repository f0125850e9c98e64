"""A tree row's text cells drawn in one Python call: the fast path of ``TreePane.drawRow``.

Why: ``QTreeView.drawRow`` calls into Python several times per cell (``index`` for each
column, the delegate's ``initStyleOption``, each converting a style option), and QStyle's
``CE_ItemViewItem`` lays each text out with a ``QTextLayout``: ~110 us per cell, ~75 ms
for the ~650 cells of a 1600x900 diff tree, paid again after every expand, sort, filter
or selection.  :class:`RowPainter` draws an ordinary row from the model's cached cells
(:meth:`~.models.ComparisonTreeModel.painted_row`): each cell's background brush, then
its text elided by the column's delegate (:meth:`~.cell_delegate.CellDelegate.elide`) in
the cell's font, colour and alignment inside the style's text margins.  The tree
column's branch indicators are still drawn by ``QTreeView.drawBranches``.

It is used only where it gives the style's pixels: the first paint under a style, font,
palette and window state draws sample cells both ways (:func:`draws_like_style`) and
keeps Qt's path unless they match exactly (a style sheet styling items, another platform
style).  Everything else goes through Qt unchanged: the selected and the current row
(selection colours, focus frame), cells with an icon or another delegate, right-to-left
layouts, alternating row colours, and models whose ``data`` is overridden (their roles
may differ from the cached cells).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QCursor,
    QFont,
    QFontMetrics,
    QImage,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem, QTreeView

from .cell_delegate import CellDelegate, elide_right
from .models import ComparisonTreeModel

_BASE_DATA = ComparisonTreeModel.data
_ACTIVE = QStyle.StateFlag.State_Active
_ENABLED = QStyle.StateFlag.State_Enabled
_TEXT = QPalette.ColorRole.Text
_GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive,
           QPalette.ColorGroup.Disabled)
_POS = QStyleOptionViewItem.ViewItemPosition
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_NONE = QStyle.StateFlag.State_None
_ITEM = QStyle.StateFlag.State_Item
_SIBLING = QStyle.StateFlag.State_Sibling
_ROW_BRANCH = _SIBLING | QStyle.StateFlag.State_Children | QStyle.StateFlag.State_Open
_BRANCH = QStyle.PrimitiveElement.PE_IndicatorBranch
_MATCHES: dict[tuple, bool] = {}
""":func:`draws_like_style` by (style, font, palette, state)."""


def draw_cell(painter: QPainter, x: int, y: int, w: int, h: int, cell: tuple, font: QFont,
              fm: QFontMetrics, pen: QColor, margin: int, elide, last: list | None = None,
              pen_key: object = None) -> None:
    """One cached cell (text, alignment, background, ...) as the style's
    ``CE_ItemViewItem`` draws it: the background over the cell, the text elided to the
    room inside the margins (``elide(text, fm, room)``) in ``font`` and ``pen``.

    ``last``: [font, pen key] the painter has from the previous cell of the row (updated
    here), so a row sets them only when they change (``pen_key`` identifies ``pen``)."""
    text, align, bg = cell[0], cell[1], cell[2]
    if bg is not None:
        painter.fillRect(x, y, w, h, bg)
    if text:
        room = w - 2 * margin
        if last is None or last[0] is not font:
            painter.setFont(font)
        if last is None or last[1] is not pen_key or pen_key is None:
            painter.setPen(pen)
        if last is not None:
            last[0], last[1] = font, pen_key
        painter.drawText(QRect(x + margin, y, room, h), align, elide(text, fm, room))


class RowPainter:
    """What one paint of ``view`` needs to draw rows itself (see the module docstring);
    made per paint event by :meth:`for_paint`, so widths, fonts and delegates are read
    once per paint, not per row."""

    def __init__(self, view: QTreeView, model: ComparisonTreeModel, left: int,
                 right: int) -> None:
        self.view = view
        self.model = model
        h = view.header()
        self.margin = text_margin(view)
        self.indent = view.indentation()
        tp = view.treePosition()  # a logical column; -1: whichever is shown first
        self.tree_col = tp if tp >= 0 else h.logicalIndex(0)
        cur = view.currentIndex()
        self.current = cur.internalId() if cur.isValid() else -1
        self.selection = view.selectionModel()
        self.font = view.font()
        self.metrics = QFontMetrics(self.font)
        self.fonts: dict[int, tuple[QFont, QFontMetrics, QFont]] = {}
        self.text_colors = [view.palette().color(g, _TEXT) for g in _GROUPS]
        self.checked: dict[int, bool] = {}  # draws_like_style by a row's style state
        self.style = view.style()
        # the branches drawn here (not through drawBranches) when only the row's own
        # level shows anything; Qt's hover, alternate rows and hidden rows stay Qt's
        self.branch_flags = (_ENABLED if view.isEnabled() else _NONE) | \
            (_ACTIVE if view.hasFocus() else _NONE)
        self.branch_option: QStyleOptionViewItem | None = None
        if outer_branches_blank(view, self.branch_flags):
            self.branch_option = QStyleOptionViewItem()
            view.initViewItemOption(self.branch_option)
        self.per_pixel = view.verticalScrollMode() == QTreeView.ScrollMode.ScrollPerPixel
        self.hover = _hovered_row(view)
        # the sections in the painted band, in visual order: (column, x, width, delegate
        # drawing like cells or None, the position a style option gives it)
        shown = [h.logicalIndex(v) for v in range(h.count())
                 if not h.isSectionHidden(h.logicalIndex(v))]
        self.sections: list[tuple[int, int, int, CellDelegate | None, object]] = []
        self.delegates = {}
        for k, col in enumerate(shown):
            x, w = h.sectionViewportPosition(col), h.sectionSize(col)
            if w <= 0 or x > right or x + w <= left:
                continue
            d = self.delegates[col] = view.itemDelegateForColumn(col) or view.itemDelegate()
            plain = d if isinstance(d, CellDelegate) and d.draws_like_cells() else None
            self.sections.append((col, x, w, plain,
                                  _position(k, len(shown), col, self.tree_col)))

    @classmethod
    def for_paint(cls, view: QTreeView, model, left: int, right: int) -> RowPainter | None:
        """The painter of one paint event of ``view`` over ``model`` between viewport x
        ``left`` and ``right``, or None when Qt must draw every row."""
        if not isinstance(model, ComparisonTreeModel) or type(model).data is not _BASE_DATA:
            return None
        if view.isRightToLeft() or view.alternatingRowColors() or \
                view.selectionBehavior() != QTreeView.SelectionBehavior.SelectRows:
            return None
        return cls(view, model, left, right)

    def draw_row(self, painter, option, index) -> bool:
        """Draw ``index``'s row; False (nothing drawn) when Qt must draw it."""
        r = index.internalId()
        if r == self.current or r == self.hover or self.selection.isSelected(index):
            return False
        state = option.state
        g = 2 if not state & _ENABLED else (0 if state & _ACTIVE else 1)
        key = int(state.value)
        ok = self.checked.get(key)
        if ok is None:
            ok = self.checked[key] = draws_like_style(self.view, option)
        if not ok:
            return False
        cells = self.model.painted_row(index)
        painter.save()  # the pen and font set here stay inside this row
        try:
            self._cells(painter, option, index, cells, g)
        finally:
            painter.restore()
        return True

    def _cells(self, painter, option, index, cells: list[tuple], g: int) -> None:
        rect = option.rect
        y, h = rect.y(), rect.height()
        margin = self.margin
        text_color = self.text_colors[g]
        last: list = [None, None]  # font and pen key set on the painter in this row
        pen = text_color
        for col, x, w, plain, pos in self.sections:
            if col == self.tree_col:
                at = index if col == index.column() else \
                    self.model.sibling(index.row(), col, index)
                ind = self.view.visualRect(at).x() - x
                if ind > 0:
                    self._branches(painter, QRect(x, y, ind, h), w, index, option.state)
                    x, w = x + ind, w - ind
                    last[:] = [None, None]  # the style may leave another pen
                if w <= 0:
                    continue
            cell = cells[col]
            if plain is None or cell[5] is not None:  # an icon, or another delegate
                self._delegate_paint(painter, option, index, col, QRect(x, y, w, h), pos, g)
                last[:] = [None, None]  # the delegate leaves its own pen and font
                continue
            f, fm = self._font(cell[4])
            fg = cell[3]
            key = text_color if fg is None else fg  # the same brush object: the same pen
            if last[1] is not key:
                pen = text_color if fg is None else fg.color()
            draw_cell(painter, x, y, w, h, cell, f, fm, pen, margin, plain.elide, last, key)

    def _font(self, font: QFont | None) -> tuple[QFont, QFontMetrics]:
        """A cell's font (None: the view's) resolved against the view's, and its metrics."""
        if font is None:
            return self.font, self.metrics
        got = self.fonts.get(id(font))
        if got is None or got[2] is not font:
            f = font.resolve(self.font)
            got = self.fonts[id(font)] = (f, QFontMetrics(f), font)
        return got[0], got[1]

    def _branches(self, painter, branches: QRect, width: int, index, state) -> None:
        """The tree column's indentation: the branch indicators (clipped to the column)."""
        if self.indent == 0:
            return
        clip = branches.width() > width
        if clip:
            painter.save()
            painter.setClipRect(QRect(branches.x(), branches.y(), width, branches.height()))
        if self.branch_option is None:
            QTreeView.drawBranches(self.view, painter, branches, index)
        else:
            self._own_branches(painter, branches, index, state)
        if clip:
            painter.restore()

    def _own_branches(self, painter, branches: QRect, index, state) -> None:
        """``QTreeView.drawBranches`` for a style that draws nothing on the outer levels
        (:func:`outer_branches_blank`): only the row's own indicator, with the row's
        open / children / sibling state, not ~2 calls into the model per level."""
        opt = self.branch_option
        ind = self.indent
        level = branches.width() // ind - (1 if self.view.rootIsDecorated() else 0)
        if level < (0 if self.view.rootIsDecorated() else 1):
            return
        opt.rect = QRect(branches.right() + 1 - ind, branches.top(), ind, branches.height())
        opt.state = _ITEM | self.branch_flags | (state & _ROW_BRANCH)
        old = painter.brushOrigin()
        if self.per_pixel:
            painter.setBrushOrigin(0, self.view.verticalOffset())
        self.style.drawPrimitive(_BRANCH, opt, painter, self.view)
        painter.setBrushOrigin(old)

    def _delegate_paint(self, painter, option, index, col: int, rect: QRect, pos,
                        group: int) -> None:
        """One cell through its delegate, with the style option ``drawRow`` gives it."""
        opt = QStyleOptionViewItem(option)
        opt.rect = rect
        opt.showDecorationSelected = True  # rows are selected whole (SelectRows)
        opt.viewItemPosition = pos
        pal = QPalette(opt.palette)
        pal.setCurrentColorGroup(_GROUPS[group])
        opt.palette = pal
        idx = index if col == index.column() else self.model.sibling(index.row(), col, index)
        self.delegates[col].paint(painter, opt, idx)


def style_key(view: QTreeView) -> tuple:
    """What decides how ``view``'s style draws: the style and every style sheet that
    applies (the application's and the view's and its parents'; a style object's id alone
    may be reused by the next style sheet style Qt makes)."""
    style = view.style()
    sheets = [QApplication.instance().styleSheet()]
    w = view
    while w is not None:
        sheets.append(w.styleSheet())
        w = w.parentWidget()
    return (id(style), style.metaObject().className(), style.name(), "\0".join(sheets))


def _hovered_row(view: QTreeView) -> int:
    """The row id under the mouse (-1: none): Qt draws it (hover states)."""
    vp = view.viewport()
    if not vp.underMouse():
        return -1
    idx = view.indexAt(vp.mapFromGlobal(QCursor.pos()))
    return idx.internalId() if idx.isValid() else -1


_BLANK: dict[tuple, bool] = {}


def outer_branches_blank(view: QTreeView, flags) -> bool:
    """Whether ``view``'s style draws nothing for the outer levels of a row's branches
    (Fusion draws no lines: only a row's own arrow), with or without a sibling below;
    then those levels need not be drawn, nor their siblings looked up in the model."""
    key = (*style_key(view), int(flags.value), view.indentation(), view.palette().cacheKey())
    return _remembered(_BLANK, key, lambda: _blank_levels(view, flags))


def _remembered(store: dict, key: tuple, compute) -> bool:
    """``store[key]``, computed on first use (a few dozen keys at most are kept: one per
    style, font, palette and state seen)."""
    got = store.get(key)
    if got is None:
        if len(store) > 64:
            store.clear()
        got = store[key] = compute()
    return got


def _blank_levels(view: QTreeView, flags) -> bool:
    ind = max(view.indentation(), 1)
    h = QFontMetrics(view.font()).height() + 4
    opt = QStyleOptionViewItem()
    view.initViewItemOption(opt)
    for state in (flags, flags | _SIBLING):
        img = QImage(ind, h, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        blank = QImage(img)
        p = QPainter(img)
        try:
            opt.rect = QRect(0, 0, ind, h)
            opt.state = state
            view.style().drawPrimitive(_BRANCH, opt, p, view)
        finally:
            p.end()
        if img != blank:
            return False
    return True


def text_margin(view: QTreeView) -> int:
    """The padding the style leaves each side of a cell's text."""
    return view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1


def draws_like_style(view: QTreeView, row_option: QStyleOptionViewItem) -> bool:
    """Whether :func:`draw_cell` gives exactly the pixels of ``view``'s style for a few
    sample cells (a coloured right-aligned number, a bold label, an elided text, an
    italic placeholder) in rows drawn with ``row_option``'s state; cached per style,
    font, palette and state."""
    font, pal = view.font(), view.palette()
    key = (*style_key(view), font.key(), pal.cacheKey(), int(row_option.state.value))
    return _remembered(_MATCHES, key, lambda: _compare_samples(view, row_option))


def _samples(font: QFont) -> list[tuple]:
    bold, italic = QFont(), QFont()
    bold.setBold(True)
    italic.setItalic(True)
    right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    red, white = QBrush(QColor(203, 24, 29)), QBrush(QColor(255, 255, 255))
    return [("+24.7", right, red, white, None, None),
            ("trainEpoch.go.(...)", left, None, None, bold, None),
            ("a label much wider than its column", left, None, None, None, None),
            ("—", left, QBrush(QColor(235, 235, 235)), QBrush(QColor(150, 150, 150)),
             italic, None),
            ("0.000123", right, None, None, None, None)]


def _compare_samples(view: QTreeView, row_option: QStyleOptionViewItem) -> bool:
    """Draw :func:`_samples` with the style and with :func:`draw_cell`; True if equal."""
    h = max(row_option.rect.height(), QFontMetrics(view.font()).height() + 2)
    widths = (70, 160, 90, 50, 80)
    total = sum(widths)
    samples = _samples(view.font())
    images = []
    for own in (False, True):
        img = QImage(total, h * len(samples), QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor(255, 255, 255))
        p = QPainter(img)
        try:
            for i, (cell, w) in enumerate(zip(samples, widths, strict=True)):
                x = sum(widths[:i])
                _sample_cell(view, p, row_option, QRect(x, i * h, w, h), cell, own)
        finally:
            p.end()
        images.append(img)
    return images[0] == images[1]


def _sample_cell(view: QTreeView, p: QPainter, row_option, rect: QRect, cell: tuple,
                 own: bool) -> None:
    """One sample cell, by :func:`draw_cell` (``own``) or as ``QStyledItemDelegate.paint``
    draws it from the same roles (the option CellDelegate.initStyleOption fills)."""
    text, align, bg, fg, font, _deco = cell
    f = view.font() if font is None else font.resolve(view.font())
    state = row_option.state
    g = 2 if not state & _ENABLED else (0 if state & _ACTIVE else 1)
    if own:
        pen = view.palette().color(_GROUPS[g], _TEXT) if fg is None else fg.color()
        draw_cell(p, rect.x(), rect.y(), rect.width(), rect.height(), cell, f,
                  QFontMetrics(f), pen, text_margin(view), elide_right)
        return
    opt = QStyleOptionViewItem(row_option)
    opt.rect = rect
    opt.showDecorationSelected = True
    pal = QPalette(opt.palette)
    pal.setCurrentColorGroup(_GROUPS[g])
    if fg is not None:
        pal.setBrush(_TEXT, fg)
    opt.palette = pal
    opt.font = f
    opt.fontMetrics = QFontMetrics(f)
    opt.displayAlignment = Qt.AlignmentFlag(align)
    opt.features |= _HAS_DISPLAY
    opt.text = text
    opt.backgroundBrush = bg if bg is not None else QBrush()
    view.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, p, view)


def _position(k: int, n: int, col: int, tree_col: int):
    """The ``viewItemPosition`` ``drawRow`` gives the ``k``-th of ``n`` shown sections."""
    if n == 1:
        return _POS.OnlyOne
    if col == tree_col or k == 0:
        return _POS.Beginning
    return _POS.End if k == n - 1 else _POS.Middle
