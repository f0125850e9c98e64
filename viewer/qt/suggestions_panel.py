"""The "Unmatched" panel: suggested matches for removed/added rows, accept or reject each.

A refactor shows as a *removed* row in the baseline and an *added* row in the current run;
:func:`viewer.suggest.suggest_matches` pairs them by name, caller, source file and equal
``entries``.  The panel lists those pairs with their evidence; accepting one (or the
checked ones) asks the window to turn them into a :class:`~viewer.rules.KeyMap` rule and
re-align, rejecting hides them for this session.  Selecting a pair asks the window to show
both rows in the diff tree.

Suggestions are computed only while the panel is visible (scoring is Python per candidate
pair: cheap for a real refactor, not worth paying on every open of a 10^6-node tree).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.compare import Comparison
from profdiff.viewer.suggest import DEFAULT_THRESHOLD, Suggestion, suggest_matches

_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


def dotted(key: str) -> str:
    return key.replace("\x1f", ".")


def evidence_text(s: Suggestion) -> str:
    return ", ".join(f"{k}: {v}" for k, v in s.evidence.items())


class SuggestionsModel(QAbstractTableModel):
    """Flat table of suggestions: [✓], baseline (removed), current (added), score, evidence."""

    HEADERS = ("", "baseline (removed)", "current (added)", "score", "evidence")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.items: list[Suggestion] = []
        self.checked: set[int] = set()

    def set_suggestions(self, items: Sequence[Suggestion]) -> None:
        self.beginResetModel()
        self.items = list(items)
        self.checked = set()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.HEADERS):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.HEADERS[section]
            if role == Qt.ItemDataRole.ToolTipRole and section == 0:
                return "check to accept or reject several at once"
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        f = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == 0:
            f |= Qt.ItemFlag.ItemIsUserCheckable
        return f

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.items):
            return None
        s = self.items[index.row()]
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return ("", dotted(s.old_key), dotted(s.new_key), f"{s.score:.2f}",
                    evidence_text(s))[c]
        if role == Qt.ItemDataRole.CheckStateRole and c == 0:
            return (Qt.CheckState.Checked if index.row() in self.checked
                    else Qt.CheckState.Unchecked)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if c == 3 else _LEFT
        if role == Qt.ItemDataRole.ToolTipRole and c > 0:
            return s.describe()
        return None

    def setData(self, index: QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != 0 or role != Qt.ItemDataRole.CheckStateRole:
            return False
        on = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, 2, True)
        (self.checked.add if on else self.checked.discard)(index.row())
        self.dataChanged.emit(index, index, [role])
        return True


class SuggestionsPanel(QWidget):
    """Suggestions for the current tree comparison, with Accept / Reject.

    Signals:
        acceptRequested(list): suggestions to turn into a rule (the window re-aligns).
        revealRequested(int, int): (removed row, added row) to show in the diff tree.
    """

    acceptRequested = Signal(list)
    revealRequested = Signal(int, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("suggestionsPanel")
        self.cmp: Comparison | None = None
        self.rejected: set[tuple[str, str]] = set()
        self.active = False
        self._stale = True
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.model = SuggestionsModel(self)
        self.view = QTableView()
        self.view.setObjectName("suggestionsTable")
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        self.view.setColumnWidth(0, 24)
        self.view.setColumnWidth(1, 200)
        self.view.setColumnWidth(2, 200)
        self.view.setColumnWidth(3, 50)
        self.view.setWordWrap(False)
        self.view.selectionModel().currentRowChanged.connect(self._current)
        lay.addWidget(self.view, 1)
        row = QHBoxLayout()
        self.accept_button = QPushButton("Accept")
        self.accept_button.setObjectName("acceptSuggestion")
        self.accept_button.setToolTip("Match these rows (the checked ones, else the selected "
                                      "one): adds a rename rule and re-aligns")
        self.accept_button.clicked.connect(self.accept_selected)
        self.reject_button = QPushButton("Reject")
        self.reject_button.setObjectName("rejectSuggestion")
        self.reject_button.setToolTip("Hide these suggestions for this session")
        self.reject_button.clicked.connect(self.reject_selected)
        self.accept_good = QPushButton(f"Accept all ≥ {DEFAULT_THRESHOLD:.2f}")
        self.accept_good.setToolTip("Accept every suggestion scoring at least "
                                    f"{DEFAULT_THRESHOLD:.2f} (what --auto-match does)")
        self.accept_good.clicked.connect(self.accept_confident)
        for b in (self.accept_button, self.reject_button, self.accept_good):
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
        self._update_summary()

    # ----- content ----------------------------------------------------------------------
    def set_active(self, on: bool) -> None:
        """Compute suggestions only while the panel is shown."""
        self.active = on
        if on and self._stale:
            self.refresh()

    def set_comparison(self, cmp: Comparison | None) -> None:
        self.cmp = cmp
        self._stale = True
        if self.active:
            self.refresh()
        else:
            self.model.set_suggestions([])
            self._update_summary()

    def refresh(self) -> None:
        cmp = self.cmp
        items: list[Suggestion] = []
        if cmp is not None and cmp.n_runs >= 2:
            items = [s for s in suggest_matches(cmp)
                     if (s.old_key, s.new_key) not in self.rejected]
        self.model.set_suggestions(items)
        self._stale = False
        self._update_summary()

    @property
    def suggestions(self) -> list[Suggestion]:
        return list(self.model.items)

    def _update_summary(self) -> None:
        cmp = self.cmp
        if cmp is None or cmp.n_runs < 2:
            self.summary.setText("Compare two runs to see unmatched rows.")
            return
        # from presence, not the statuses: this runs as a big comparison is shown,
        # while another thread still judges its rows (the counts are the same)
        counts = cmp.presence_counts()
        n_rem, n_add = counts["removed"], counts["added"]
        if self._stale:
            self.summary.setText(f"{n_rem:,} removed and {n_add:,} added rows.")
            return
        n = len(self.model.items)
        hidden = f" ({len(self.rejected)} rejected)" if self.rejected else ""
        self.summary.setText(
            f"<b>{n_rem:,}</b> removed and <b>{n_add:,}</b> added rows have no match. "
            f"<b>{n}</b> suggested match{'es' if n != 1 else ''}{hidden}: accepting one adds a "
            "rename rule (Tools ▸ Rename rules…) and re-aligns.")

    # ----- actions ----------------------------------------------------------------------
    def _targets(self) -> list[int]:
        if self.model.checked:
            return sorted(self.model.checked)
        cur = self.view.currentIndex()
        return [cur.row()] if cur.isValid() else []

    def accept_selected(self) -> list[Suggestion]:
        sel = [self.model.items[i] for i in self._targets()]
        if sel:
            self.acceptRequested.emit(sel)
        return sel

    def accept_confident(self) -> list[Suggestion]:
        sel = [s for s in self.model.items if s.score >= DEFAULT_THRESHOLD]
        if sel:
            self.acceptRequested.emit(sel)
        return sel

    def reject_selected(self) -> list[Suggestion]:
        sel = [self.model.items[i] for i in self._targets()]
        for s in sel:
            self.rejected.add((s.old_key, s.new_key))
        if sel:
            self.model.set_suggestions([s for s in self.model.items if s not in sel])
            self._update_summary()
        return sel

    def select(self, i: int) -> None:
        self.view.setCurrentIndex(self.model.index(i, 1))

    def _current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if cur.isValid() and cur.row() < len(self.model.items):
            s = self.model.items[cur.row()]
            self.revealRequested.emit(s.removed_row, s.added_row)
