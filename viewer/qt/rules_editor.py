"""A small editor of the rename rules the main window aligns runs with (Tools ▸ Rename rules…).

Rules are the Qt-free dataclasses of :mod:`viewer.rules`; the editor shows one table row
per rule (module rename, name rename, regex on names or modules, matched pair from an
accepted suggestion) plus one checkbox per normalisation preset.  ``Apply`` emits the rule
list and the window re-aligns in place; ``Save`` also writes ``.profdiff.toml`` next to the
baseline run, the file the CLI and the app read back.

The list the editor emits is in the order :func:`viewer.rules.load_rules_file` produces
(modules, names, regexes, presets, matched pairs), so what is applied is exactly what a
later load of the saved file will apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from profdiff.viewer.rules import (
    PRESETS,
    KeyMap,
    ModuleRename,
    NameRename,
    RegexRewrite,
    Rule,
    RuleError,
    _dotted_to_key,
    key_to_dotted,
    preset_rules,
)

KINDS = {
    "module": "module rename",
    "name": "name rename",
    "regex": "regex on name",
    "regex-module": "regex on module",
    "pair": "matched pair",
}
"""Editor row kinds (key -> label of the kind combo box)."""

PRESET_HELP = {
    "ghc": "GHC: strip $w/$s, numbered binders, CAF numbering, ticky uniques, hex "
           "addresses, GHC.Internal.",
    "perf": "perf: strip .constprop.N/.isra.N clones, Rust hashes, +0x offsets",
}

_ORIGIN_ROLE = Qt.ItemDataRole.UserRole + 10


def split_presets(rules: Sequence[Rule]) -> tuple[list[Rule], list[str]]:
    """(rules without the expanded presets, names of the presets found in ``rules``)."""
    rest = list(rules)
    found: list[str] = []
    for name, preset in PRESETS.items():
        if preset and all(r in rest for r in preset):
            for r in preset:
                rest.remove(r)
            found.append(name)
    return rest, found


def ordered_rules(rules: Sequence[Rule], presets: Sequence[str]) -> list[Rule]:
    """Rules in the order ``load_rules_file`` returns them after ``save_rules_file``."""
    def of(t):
        return [r for r in rules if isinstance(r, t)]

    return [*of(ModuleRename), *of(NameRename), *of(RegexRewrite), *preset_rules(presets),
            *of(KeyMap)]


def describe_rules(rules: Sequence[Rule]) -> str:
    rest, presets = split_presets(rules)
    parts = [f"preset {p}" for p in presets] + [r.describe() for r in rest]
    return "; ".join(parts) if parts else "no rules"


class RulesEditor(QDialog):
    """Non-modal dialog editing a list of rename rules.

    Signals:
        applied(list): the rules to align with (presets expanded), on Apply and Save.
        saveRequested(list): the same list, when the user asks to write ``.profdiff.toml``.
    """

    applied = Signal(list)
    saveRequested = Signal(list)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rename rules — profdiff")
        self.setObjectName("rulesEditor")
        self.resize(760, 420)
        lay = QVBoxLayout(self)
        intro = QLabel("Rules rewrite every run's module and name <i>before</i> the runs are "
                       "matched, so a renamed function or a moved module lines up with its old "
                       "self (and so do the calls below it).")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        prow = QHBoxLayout()
        prow.addWidget(QLabel("Normalise:"))
        self.preset_boxes: dict[str, QCheckBox] = {}
        for name in PRESETS:
            b = QCheckBox(name)
            b.setObjectName(f"preset_{name}")
            b.setToolTip(PRESET_HELP.get(name, name))
            prow.addWidget(b)
            self.preset_boxes[name] = b
        prow.addStretch(1)
        lay.addLayout(prow)
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("rulesTable")
        self.table.setHorizontalHeaderLabels(["kind", "from / pattern", "to / replacement",
                                              "only in module"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(0, 140)
        self.table.setColumnWidth(3, 140)
        self.table.verticalHeader().setVisible(False)
        lay.addWidget(self.table, 1)
        brow = QHBoxLayout()
        self.kind_combo = QComboBox()
        for k, label in KINDS.items():
            self.kind_combo.addItem(label, k)
        brow.addWidget(self.kind_combo)
        add = QPushButton("Add")
        add.clicked.connect(lambda: self.add_rule(self.kind_combo.currentData()))
        brow.addWidget(add)
        rem = QPushButton("Remove")
        rem.clicked.connect(self.remove_selected)
        brow.addWidget(rem)
        brow.addStretch(1)
        lay.addLayout(brow)
        self.error_label = QLabel()
        self.error_label.setStyleSheet("color: #b2182b")
        self.error_label.setWordWrap(True)
        lay.addWidget(self.error_label)
        self.file_label = QLabel()
        self.file_label.setWordWrap(True)
        self.file_label.setStyleSheet("color: #555")
        lay.addWidget(self.file_label)
        row = QHBoxLayout()
        row.addStretch(1)
        self.apply_button = QPushButton("Apply")
        self.apply_button.setToolTip("Re-align the runs with these rules")
        self.apply_button.clicked.connect(self.apply)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Apply, and write .profdiff.toml next to the baseline run")
        self.save_button.clicked.connect(self.save)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        for b in (self.apply_button, self.save_button, close):
            row.addWidget(b)
        lay.addLayout(row)

    # ----- content ----------------------------------------------------------------------
    def set_rules(self, rules: Sequence[Rule], source: Path | None = None,
                  save_path: Path | None = None) -> None:
        rest, presets = split_presets(rules)
        for name, box in self.preset_boxes.items():
            box.setChecked(name in presets)
        self.table.setRowCount(0)
        for r in rest:
            if isinstance(r, ModuleRename):
                self.add_rule("module", r.old, r.new)
            elif isinstance(r, NameRename):
                self.add_rule("name", r.old, r.new, r.module or "")
            elif isinstance(r, RegexRewrite):
                self.add_rule("regex" if r.target == "name" else "regex-module", r.pattern,
                              r.replacement)
            elif isinstance(r, KeyMap):
                for a, b in r.pairs:
                    self.add_rule("pair", key_to_dotted(a), key_to_dotted(b), origin=r.origin)
        self.error_label.clear()
        self.set_file_info(source, save_path)

    def set_file_info(self, source: Path | None, save_path: Path | None) -> None:
        lines = [f"Read from {source}" if source else "Not read from a rules file"]
        if save_path is not None:
            lines.append(f"Save writes {save_path}")
        self.save_button.setEnabled(save_path is not None)
        self.file_label.setText("<br>".join(lines))

    def add_rule(self, kind: str = "module", old: str = "", new: str = "", module: str = "",
                 origin: str = "rule") -> int:
        """Append a row; returns its index."""
        i = self.table.rowCount()
        self.table.insertRow(i)
        combo = QComboBox()
        for k, label in KINDS.items():
            combo.addItem(label, k)
        combo.setCurrentIndex(list(KINDS).index(kind))
        self.table.setCellWidget(i, 0, combo)
        for c, text in ((1, old), (2, new), (3, module)):
            it = QTableWidgetItem(text)
            if c == 1:
                it.setData(_ORIGIN_ROLE, origin)
            self.table.setItem(i, c, it)
        return i

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        for r in rows:
            self.table.removeRow(r)

    def presets(self) -> list[str]:
        return [n for n, b in self.preset_boxes.items() if b.isChecked()]

    def _cell(self, row: int, col: int) -> str:
        it = self.table.item(row, col)
        return it.text().strip() if it is not None else ""

    def edited_rules(self) -> list[Rule]:
        """The table's rules (without presets); raises :class:`RuleError` on a bad row."""
        out: list[Rule] = []
        for i in range(self.table.rowCount()):
            combo = self.table.cellWidget(i, 0)
            kind = combo.currentData() if combo is not None else "module"
            old, new, module = self._cell(i, 1), self._cell(i, 2), self._cell(i, 3)
            if not old:
                raise RuleError(f"rule {i + 1} ({KINDS[kind]}): 'from' is empty")
            if kind == "module":
                out.append(ModuleRename(old, new))
            elif kind == "name":
                out.append(NameRename(old, new, module or None))
            elif kind in ("regex", "regex-module"):
                out.append(RegexRewrite(old, new, "name" if kind == "regex" else "module"))
            else:
                origin = self.table.item(i, 1).data(_ORIGIN_ROLE) or "rule"
                out.append(KeyMap(((_dotted_to_key(old), _dotted_to_key(new)),), origin=origin))
        return out

    def rules(self) -> list[Rule]:
        """Everything to align with: table rules and presets, in the rules file's order."""
        return ordered_rules(self.edited_rules(), self.presets())

    # ----- actions ----------------------------------------------------------------------
    def _collect(self) -> list[Rule] | None:
        try:
            rules = self.rules()
        except RuleError as e:
            self.error_label.setText(str(e))
            return None
        self.error_label.clear()
        return rules

    def apply(self) -> bool:
        rules = self._collect()
        if rules is None:
            return False
        self.applied.emit(rules)
        return True

    def save(self) -> bool:
        rules = self._collect()
        if rules is None:
            return False
        self.applied.emit(rules)
        self.saveRequested.emit(rules)
        return True
