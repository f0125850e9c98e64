"""Rename rules (.profdiff.toml, the rules editor) and accepted match suggestions.

A part of :class:`viewer.qt.main_window.MainWindow` (a mixin: its methods use the
window's own attributes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
)

from profdiff.viewer.rules import (
    RULES_FILE,
    RuleError,
    find_rules_file,
    load_rules_file,
    save_rules_file,
)
from profdiff.viewer.session import Session
from profdiff.viewer.suggest import accept as accept_suggestions

from .layout import precompute
from .rules_editor import RulesEditor, split_presets


class RulesMixin:
    """Rename rules (.profdiff.toml, the rules editor) and accepted match suggestions."""

    def _pick_up_rules(self, paths: Sequence[str]) -> None:
        """Read ``.profdiff.toml`` beside the runs (baseline's folder first) unless the rules
        were edited in the app since; leaving the rules file's folders drops its rules.
        Never with ``--no-rules-file`` (``spec.rules_file`` false)."""
        if not self.spec.rules_file:
            return
        try:
            found = find_rules_file([p for p in paths if p])
        except OSError:
            found = None
        if found is not None:
            if found == self.rules_source and self._rules_dirty:
                return
            try:
                self.rules = load_rules_file(found)
            except RuleError as e:
                self.message_bar.show_message(str(e), "warning")
                return
            self.rules_source = found
            self._rules_dirty = False
        elif self.rules_source is not None and not self._rules_dirty:
            self.rules, self.rules_source = [], None
        self._sync_rules_editor()

    def rules_save_path(self) -> Path | None:
        """Where Save writes the rules: ``.profdiff.toml`` in the baseline run's folder."""
        base = self.group_paths[0][0] if self.group_paths else (
            self.paths[0] if self.paths else None)
        return Path(base).resolve().parent / RULES_FILE if base else None

    def set_rules(self, rules: Sequence) -> None:
        """Align with ``rules`` from now on and re-align the shown runs in place."""
        self.rules = list(rules)
        self._rules_dirty = True
        self._realign()

    def save_rules(self, rules: Sequence | None = None, path: str | Path | None = None
                   ) -> Path | None:
        """Write the rules (default: the current ones) to ``.profdiff.toml``."""
        if rules is not None:
            self.rules = list(rules)
        target = Path(path) if path else self.rules_save_path()
        if target is None:
            self.message_bar.show_message("Open a run first: rules are saved next to it.")
            return None
        rest, presets = split_presets(self.rules)
        try:
            save_rules_file(target, rest, presets)
        except OSError as e:
            self.message_bar.show_message(f"Cannot write {target}: {e.strerror or e}")
            return None
        self.rules_source = target
        self._rules_dirty = False
        self._sync_rules_editor()
        self.statusBar().showMessage(f"Saved rename rules to {target}", 5000)
        return target

    def open_rules_editor(self) -> RulesEditor:
        if self.rules_editor is None:
            self.rules_editor = RulesEditor(self)
            self.rules_editor.applied.connect(self.set_rules)
            self.rules_editor.saveRequested.connect(lambda r: self.save_rules(r))
        self._sync_rules_editor(force=True)
        self.rules_editor.show()
        self.rules_editor.raise_()
        return self.rules_editor

    def _sync_rules_editor(self, force: bool = False) -> None:
        ed = self.rules_editor
        if ed is not None and (force or ed.isVisible()):
            ed.set_rules(self.rules, self.rules_source, self.rules_save_path())

    def accept_suggestions(self, suggestions: Sequence) -> None:
        """Turn accepted suggestions into a rule (mapping new names onto old) and re-align."""
        suggestions = list(suggestions)
        if not suggestions:
            return
        self.rules.append(accept_suggestions(suggestions))
        self._rules_dirty = True
        self._realign()
        self._sync_rules_editor()
        self.statusBar().showMessage(
            "Matched " + "; ".join(s.describe().split(" (")[0] for s in suggestions), 6000)

    def _realign(self) -> None:
        """Align the shown runs again (new rules), keeping expansion and selection."""
        if not self.runs:
            return
        if self.groups is not None and self.session is not None:
            session = Session(self.session.spec.replace(rules=tuple(self.rules)),
                              [*self.groups[0], *self.groups[1]], self.groups)
            precompute(session.tree)
            self._apply(session, list(self.paths), keep_state=True)
        else:
            self._set_runs(list(self.runs), True, list(self.paths))

    def _size_suggestions_dock(self, visible: bool) -> None:
        if visible and not self._dock_sized:
            self._dock_sized = True
            self.resizeDocks([self.suggestions_dock], [max(150, self.height() // 5)],
                             Qt.Orientation.Vertical)

    def reveal_pair(self, removed: int, added: int) -> None:
        """Show a suggested pair in the diff tree: both rows visible, the removed selected."""
        cmp = self.comparison
        if cmp is None:
            return
        rows = [r for r in (removed, added) if 0 <= r < cmp.n_rows]
        for v in self.tree_views():
            v.expand_rows([int(cmp.parent[r]) for r in rows if cmp.parent[r] >= 0])
        if rows:
            self.reveal_row(rows[0], expand=False)
            m = self.diff.models[0] if self.diff.models else None
            idx = m.index_for_row(rows[0]) if m is not None else None
            if idx is not None and idx.isValid():
                self.diff.tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
