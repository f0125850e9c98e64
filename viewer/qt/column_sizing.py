"""Column widths from the model's arrays: names to their content, numbers to their widest
value, headers unclipped, and the rest of the window given to the names.

Why not Qt's own sizing: ``QTreeView.sizeHintForColumn`` asks the Python model for
index, flags and data of up to 1000 rows times every role (0.9 s on 10^6 rows), and the
fixed widths used before elided numbers (``+2,184,591,…``), clipped headers
(``nh. %alloc``) and left deep rows showing only their indentation.  Here:

* a numeric column is as wide as its widest formatted value, measured on the model's
  own strings for a few candidate rows picked with numpy (largest and smallest magnitudes
  of the whole column and of the rows shown) - numbers are never elided;
* every column is at least as wide as its header's size hint (bold, padded, with the
  sort arrow), so headers are never clipped;
* label columns (name, module, src) want the widest shown text, the name column with
  the indentation of its row's depth; the name column then gets what the viewport has
  left (never more than it needs), module/src shrink first when space is short, and the
  names elide on the left (:class:`ElideLeftDelegate`), so ``Module.Sub.function`` loses
  its module prefix before its function name.

Widths the user set by dragging a header are kept (``TreePane.user_sized``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QStyle, QTreeView

from profdiff.viewer.compare import STATUS_BLOCK, Extremes

from .cell_delegate import PLAIN_STYLE_OPTIONS, CellDelegate

SAMPLE = 48
"""Candidate rows per end (largest / smallest magnitude) measured for a numeric column."""
EXTREMES_ONLY = 50_000
"""Above this many rows a column's candidates are its extremes only (one pass each)."""
SHOWN_SAMPLE = 6
"""Rows per end measured among the shown rows (a number prints widest at the largest or
the smallest non-zero magnitudes); a dozen shown rows or fewer are all measured."""
NAME_MIN = 160
"""The name column never gets narrower than this to make room for other columns."""
NAME_SHARE = 0.6
"""Share of the viewport the name column may take even when the numbers then need the
horizontal scroll bar (a deep row would otherwise show only its indentation)."""
INDENT = 14
"""Indentation per level (px) of trees shown at most :data:`DEEP` levels deep; deeper
trees indent less (down to :data:`INDENT_MIN`) so deep names keep room."""
DEEP = 12
INDENT_MIN = 6


def indentation_for(max_depth: int) -> int:
    """Indentation per level for a tree whose deepest shown row is ``max_depth``."""
    if max_depth <= DEEP:
        return INDENT
    return max(INDENT_MIN, int(INDENT * DEEP / max_depth))
LABEL_MIN = 60
LABEL_SHARE = {"module": 0.22, "src": 0.2}
"""Largest share of the viewport a module / src column takes by itself."""
SLACK = 2  # px: rounding of sub-pixel glyph advances
MEASURE_ROWS = 120
"""Label cells measured exactly per column (the longest texts of the rows shown)."""


_QUALIFIERS = ("::", ".", "/", "\\")


def split_label(text: str) -> tuple[str, str, str]:
    """``Mod.Sub.f(args)`` -> (``Mod.Sub.``, ``f``, ``(args)``): the qualifier prefix,
    the function's own name, and its argument list / signature (perf, Julia)."""
    k = text.find("(", 1)
    head, args = (text, "") if k < 0 else (text[:k], text[k:])
    j = max((head.rfind(q) + len(q) for q in _QUALIFIERS if head.rfind(q) > 0), default=0)
    if j >= len(head):  # a name ending in a separator (an operator like `.`)
        j = 0
    return head[:j], head[j:], args


def elide_label(text: str, fm: QFontMetrics, width: int) -> str:
    """``text`` within ``width`` px, losing first the qualifier prefix (from the left),
    then the argument list (from the right), and the function's own name last."""
    if fm.horizontalAdvance(text) <= width:
        return text
    prefix, base, args = split_label(text)
    rest = fm.horizontalAdvance(base + args)
    if prefix and rest + fm.horizontalAdvance("…") <= width:
        return fm.elidedText(prefix, Qt.TextElideMode.ElideLeft, width - rest) + base + args
    lead = "…" if prefix else ""
    room = width - fm.horizontalAdvance(lead + base)
    if args and room >= fm.horizontalAdvance("…"):
        return lead + base + fm.elidedText(args, Qt.TextElideMode.ElideRight, room)
    return fm.elidedText(lead + base + args, Qt.TextElideMode.ElideRight, width)


_ELIDE_LEFT = Qt.TextElideMode.ElideLeft  # looked up once: enum members cost per access
_ITEM_TEXT = QStyle.SubElement.SE_ItemViewItemText
_FOCUS_MARGIN = QStyle.PixelMetric.PM_FocusFrameHMargin


class ElideLeftDelegate(CellDelegate):
    """Label cells that keep their end: names through :func:`elide_label` (module
    prefixes go first, the function's own name stays) instead of Qt's right elision,
    which cut ``Module.Sub.function`` to ``Module.Su…`` and deep names to ``…``;
    module paths (``names=False``) elided on the left (``…Map.Internal``)."""

    def __init__(self, parent=None, names: bool = True) -> None:
        super().__init__(parent)
        self.names = names

    def initStyleOption(self, option, index) -> None:  # noqa: N802 - Qt API
        super().initStyleOption(option, index)
        if not self.names:
            option.textElideMode = _ELIDE_LEFT
            return
        text = option.text
        if not text or option.rect.width() <= 0:
            return
        widget = option.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return
        r = style.subElementRect(_ITEM_TEXT, option, widget)
        margin = 2 * (style.pixelMetric(_FOCUS_MARGIN, None, widget) + 1)
        option.text = elide_label(text, QFontMetrics(option.font), r.width() - margin)

    def elide(self, text: str, fm: QFontMetrics, width: int) -> str:
        """What :meth:`initStyleOption` shows of ``text`` in ``width`` px of text room."""
        if self.names:
            return elide_label(text, fm, width)
        if fm.horizontalAdvance(text) <= width:
            return text
        return fm.elidedText(text, _ELIDE_LEFT, width)


PLAIN_STYLE_OPTIONS.add(ElideLeftDelegate.initStyleOption)


def text_margin(view: QTreeView) -> int:
    """Horizontal padding Qt's item delegate puts around a cell's text (both sides)."""
    return 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)


def icon_allowance(view: QTreeView) -> int:
    """Width of a decoration (status icon) in the name cell and its spacing."""
    size = view.iconSize().width()
    if size <= 0:
        size = view.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize, None, view)
    return size + text_margin(view)


def bold_metrics(view: QTreeView) -> QFontMetrics:
    f = QFont(view.font())
    f.setBold(True)
    return QFontMetrics(f)


def column_extremes(a: np.ndarray) -> np.ndarray:
    """Rows of a whole column whose value may print widest (:class:`~viewer.compare.Extremes`
    of the column, a block of rows at a time)."""
    ext = Extremes()
    for lo in range(0, len(a), STATUS_BLOCK):  # blocks: the scratch memory is reused
        ext.add(np.asarray(a[lo : lo + STATUS_BLOCK], dtype=np.float64), lo)
    return ext.rows()


def value_candidates(a: np.ndarray, rows: np.ndarray | None = None, k: int = SAMPLE) -> np.ndarray:
    """Rows of ``a`` (restricted to ``rows``) whose formatted value may be the widest:
    up to ``k`` rows with the largest and with the smallest non-zero magnitudes, and one
    NaN (more than :data:`EXTREMES_ONLY` rows: :func:`column_extremes`)."""
    a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        return np.zeros(0, dtype=np.int64)
    if rows is None:
        if len(a) > EXTREMES_ONLY:
            return column_extremes(a)
        rows = np.arange(len(a))
    idx = np.asarray(rows, dtype=np.int64)
    if idx.size > EXTREMES_ONLY:
        return idx[column_extremes(a[idx])]
    if idx.size <= 2 * k:
        return idx
    mag = np.abs(a[idx].astype(np.float64, copy=False))
    bad = ~np.isfinite(mag)
    big = np.where(bad, -1.0, mag)
    small = np.where(bad | (mag <= 0), np.inf, mag)
    out = [idx[bad][:1], idx[np.argpartition(-big, k - 1)[:k]],
           idx[np.argpartition(small, k - 1)[:k]]]
    return np.unique(np.concatenate(out))


def widest_rows(texts: np.ndarray, rows: np.ndarray, extra: np.ndarray | None = None,
                limit: int = MEASURE_ROWS) -> np.ndarray:
    """The ``limit`` of ``rows`` whose text (``texts``: one per row of ``rows``; plus
    ``extra[row]`` characters, e.g. the indentation) is longest: the only ones
    measured exactly."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size <= limit:
        return rows
    est = np.fromiter(map(len, texts), dtype=np.float64, count=rows.size)
    if extra is not None:
        est += np.asarray(extra, dtype=np.float64)[rows]
    return rows[np.argpartition(-est, limit - 1)[:limit]]


def numeric_width(view: QTreeView, model, col: int, shown: np.ndarray | None,
                  shown_values: np.ndarray | None = None, whole: bool = True) -> int:
    """Width of column ``col``'s widest value over the candidate rows (whole column and
    the rows shown), text margins included.  ``shown_values``: the column at ``shown``,
    when the caller read it already (``model.columns_at``); ``whole`` false: the whole
    column's candidates only if they are known already (a first paint's measure)."""
    rows = model.width_candidates(col, compute=whole)
    if shown is not None and shown.size:
        # the shown rows' extremes too (few cells: keeps a 10^6-row expand/select fast)
        if shown_values is None:
            shown_values = model.column_at(col, shown)
        picked = value_candidates(shown_values, k=SHOWN_SAMPLE)
        rows = np.union1d(rows, np.asarray(shown, dtype=np.int64)[picked])
    sig = model.columns[col].kind == "sig"
    fm = bold_metrics(view) if sig else view.fontMetrics()
    texts = set(model.cell_texts(col, rows))
    if sig:  # p-values print in a few fixed shapes: measure the widest ones
        texts |= {"noise p<0.001", "noise p=0.009", "noise p=0.99", "real (exact)"}
    w = max((fm.horizontalAdvance(t) for t in texts if t), default=0)
    return w + text_margin(view) + SLACK


def label_width(view: QTreeView, model, col: int, rows: np.ndarray,
                depth: np.ndarray | None) -> int:
    """Width the label column ``col`` needs for ``rows``: text (bold where the filter
    matched), text margins, and for the tree column the indentation and a status icon."""
    if rows.size == 0:
        return 0
    fm, fb = view.fontMetrics(), None
    matched = model.layout.matched
    texts = model.cell_texts(col, rows)
    tree_col = col == 0 and depth is not None
    ind = view.indentation()
    deco = view.rootIsDecorated()
    best = 0
    for r, t in zip(rows.tolist(), texts, strict=True):
        if matched is not None and matched[r]:
            fb = fb or bold_metrics(view)
            w = fb.horizontalAdvance(t)
        else:
            w = fm.horizontalAdvance(t)
        if tree_col:
            w += ind * (int(depth[r]) + (1 if deco else 0))
        best = max(best, w)
    extra = text_margin(view) + SLACK
    if col == 0 and model.has_icons():
        extra += icon_allowance(view)
    return best + extra


HEADER_PADDING = 14
"""Header section padding: the style sheet's 4 px a side, the 1 px border, and slack.
(The sort arrow is drawn above the centred title, so it needs no width of its own.)"""


def header_width(view: QTreeView, text: str) -> int:
    """Width a header section needs to show ``text`` (one or more lines) unclipped, in the
    bold face the style sheet gives header titles (measured in the header's and the
    view's font, whichever is wider)."""
    lines = str(text or "").split("\n")
    best = 0
    for font in (view.header().font(), view.font()):
        f = QFont(font)
        f.setBold(True)
        fm = QFontMetrics(f)
        best = max(best, max(fm.horizontalAdvance(x) for x in lines))
    return best + HEADER_PADDING


def available_width(view: QTreeView) -> int:
    """The viewport's width less the vertical scroll bar's (kept free whether or not it
    shows, so a scroll bar appearing later does not push the last number out of view)."""
    return view.maximumViewportSize().width() - view.verticalScrollBar().sizeHint().width()


def distribute(avail: int, content: dict[int, int], heads: dict[int, int], kinds: list[str],
               fixed: dict[int, int]) -> dict[int, int]:
    """Widths of the columns not in ``fixed`` (the user's): numbers at the larger of their
    content and header, then the name column up to its need within what ``avail`` leaves
    (at least :data:`NAME_MIN`), then module/src (shrunk first when space is short)."""
    out: dict[int, int] = {}
    used = sum(fixed.values())
    labels: list[int] = []
    for i, k in enumerate(kinds):
        if i in fixed:
            continue
        if k in ("name", "module", "src"):
            labels.append(i)
        else:
            out[i] = max(content.get(i, 0), heads.get(i, 0))
            used += out[i]
    rest = max(avail - used, 0)
    want = {}
    for i in labels:
        w = max(content.get(i, 0), heads.get(i, 0))
        if kinds[i] != "name":  # a long module path alone never takes the window
            w = min(w, max(int(avail * LABEL_SHARE.get(kinds[i], 0.2)), heads.get(i, 0)))
        want[i] = w
    others = [i for i in labels if kinds[i] != "name"]
    other_want = sum(want[i] for i in others)
    for i in labels:
        if kinds[i] == "name":
            room = max(rest - other_want, NAME_MIN, int(avail * NAME_SHARE))
            out[i] = max(min(want[i], room), heads.get(i, 0))
            rest -= out[i]
    scale = min(1.0, max(rest, 0) / other_want) if other_want else 1.0
    for i in others:
        out[i] = max(int(want[i] * scale), min(heads.get(i, 0), want[i]), LABEL_MIN)
    return out
