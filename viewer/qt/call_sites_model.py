"""The call sites list of the "By cost centre" tab, as a model answering from arrays.

Why not a ``QTreeWidget`` of items: selecting a cost centre called from 16k places made
500 items of five cells, each call path joined from up to 169 frames: ~30 ms of the
40 ms the list took, in a click that must stay under 100 ms on 10^6 rows.  Here a row's
call path is made when Qt asks for it (the rows on screen); the callers' labels come
from one gather and the numbers' texts from one pass, and the columns are sized over
their texts' font metrics (:meth:`CallSitesModel.texts`), not by Qt asking every cell.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from profdiff.viewer.compare import Comparison
from profdiff.viewer.units import digits_rounding, format_delta, format_value

_Index = QModelIndex | QPersistentModelIndex
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
ROW_ROLE = Qt.ItemDataRole.UserRole
"""The tree row a line names (column 0): what revealing and the row menu read."""


class CallSitesModel(QAbstractTableModel):
    """Rows of the tree comparison (call sites), each: its caller, its call path and,
    with a metric, that metric's base, new and Δ values."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tree: Comparison | None = None
        self.rows = np.zeros(0, dtype=np.int64)
        self.headers = ["called from", "call path"]
        self.callers: list[str] = []
        self._paths: dict[int, str] = {}
        self.numbers: list[list[str]] = []  # per metric column: its text of each row

    def show(self, tree: Comparison | None, rows: np.ndarray, metric: str | None) -> None:
        """List ``rows`` of ``tree`` (in that order) with ``metric``'s columns, if given."""
        self.beginResetModel()
        self.tree = tree
        self.rows = np.asarray(rows, dtype=np.int64)
        self._paths = {}
        self.headers = ["called from", "call path"]
        self.numbers = []
        self.callers = self._callers(tree, self.rows) if tree is not None else []
        if tree is not None and metric and metric in tree.values:
            title = tree.metric_by_name[metric].title
            self.headers += [f"{title} base", f"{title} new", f"Δ {title}"]
            self.numbers = self._numbers(tree, metric, self.rows)
        self.endResetModel()

    @staticmethod
    def _numbers(tree: Comparison, metric: str, rows: np.ndarray) -> list[list[str]]:
        """The base, new and Δ texts of ``metric`` at ``rows``, as the trees print them
        (each run's rounding; Δ: both).  Made at once: they size their columns."""
        unit = tree.metric_by_name[metric].unit
        hb, hn = (digits_rounding(tree.runs, metric, i) for i in (tree.baseline, tree.current))
        base = tree.values_at(metric, tree.baseline, rows).tolist()
        new = tree.values_at(metric, tree.current, rows).tolist()
        return [[format_value(float(b), unit, rounding=hb) for b in base],
                [format_value(float(n), unit, rounding=hn) for n in new],
                [format_delta(float(n - b), unit, rounding=hb + hn)
                 for b, n in zip(base, new, strict=True)]]

    def texts(self, col: int) -> list[str]:
        """Column ``col``'s header and every cell text made ahead (not the call paths):
        what its width is measured over, by the font's metrics, instead of Qt asking every
        cell's size hint through :meth:`data` (~30 ms for 500 rows)."""
        cells = self.callers if col == 0 else self.numbers[col - 2] if col >= 2 else []
        return [self.headers[col], *cells]

    def clear(self) -> None:
        self.show(None, np.zeros(0, dtype=np.int64), None)

    @staticmethod
    def _callers(tree: Comparison, rows: np.ndarray) -> list[str]:
        """Each row's caller label ("module.name" of its parent; "(root)" for a root)."""
        par = tree.parent[rows] if rows.size else rows
        has = par >= 0
        it = iter(tree.row_labels(par[has]))
        return [next(it) if h else "(root)" for h in has.tolist()]

    def path_text(self, i: int) -> str:
        """Row ``i``'s call path, root first (made once, when first asked for)."""
        got = self._paths.get(i)
        if got is None and self.tree is not None:
            got = self._paths[i] = " ▸ ".join(self.tree.path_labels(int(self.rows[i])))
        return got or ""

    # ----- Qt's model interface -----------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt's
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.headers):
            return self.headers[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        i, col = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return self.callers[i]
            if col == 1:
                return self.path_text(i)
            return self.numbers[col - 2][i] if col >= 2 else None
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            return self.path_text(i)  # the column shows its head only
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(_RIGHT.value)
        if role == ROW_ROLE and col == 0:
            return int(self.rows[i])
        return None
