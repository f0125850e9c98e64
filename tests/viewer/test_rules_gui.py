"""Matching across refactors in the app: suggestions panel, rules editor, .profdiff.toml."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from profdiff.viewer.compare import Status
from profdiff.viewer.qt.models import MATCH_MARK
from profdiff.viewer.qt.rules_editor import split_presets
from profdiff.viewer.rules import PRESETS, KeyMap, ModuleRename, NameRename, load_rules_file

DATA = Path(__file__).parent.parent / "data"
V1 = DATA / "hs-ad" / "v1" / "ad.prof"
V2 = DATA / "hs-ad" / "v2" / "ad.prof"
TICKY1 = DATA / "ghc-ticky" / "hs-ad-v1.ticky.txt"
TICKY2 = DATA / "ghc-ticky" / "hs-ad-v2.ticky.txt"


@pytest.fixture
def win(make_window):
    return make_window(1400, 900)


def _rows_named(cmp, name):
    return np.flatnonzero(cmp.name == name)


def _show_suggestions(w):
    w.show()
    w.suggestions_dock.show()
    assert w.suggestions.active
    return w.suggestions


def test_suggestions_model_passes_the_tester(win, model_tester):
    win.load_paths([str(V1), str(V2)])
    panel = _show_suggestions(win)
    model_tester(panel.model)
    m = panel.model
    assert m.rowCount() == 1 and m.columnCount() == 5
    assert m.data(m.index(0, 1)) == "AD.Dual.sigmoidD"
    assert m.data(m.index(0, 2)) == "AD.Dual.logisticD"
    assert "entries: equal (128)" in m.data(m.index(0, 4))
    assert m.setData(m.index(0, 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert m.data(m.index(0, 0), Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    panel.refresh()  # resets the model under the tester
    assert m.rowCount() == 1 and not m.checked


def test_accepting_sigmoid_to_logistic_matches_the_rows(win):
    win.load_paths([str(V1), str(V2)])
    before = win.comparison.status_counts()
    assert before["added"] == 7 and before["removed"] == 7
    panel = _show_suggestions(win)
    (s,) = panel.suggestions
    # selecting a suggestion reveals the removed row (and its added twin) in the diff tree
    panel.select(0)
    assert win.tabs.currentWidget() is win.diff
    assert win.diff.current_row() == s.removed_row
    m = win.diff.models[0]
    assert m.index_for_row(s.added_row).isValid()
    panel.accept_selected()
    cmp = win.comparison
    assert isinstance(win.rules[-1], KeyMap) and win.rules[-1].origin == "suggestion"
    sig_rows = _rows_named(cmp, "sigmoidD")
    assert len(sig_rows) == 3 and len(_rows_named(cmp, "logisticD")) == 0
    assert (cmp.matched_by[sig_rows] == 2).all()
    assert (cmp.status[sig_rows] != Status.ADDED).all()
    assert (cmp.status[sig_rows] != Status.REMOVED).all()
    # the diff tree marks the rows; the tooltip says how they were matched
    m = win.diff.models[0]
    win.diff.expand_rows([int(cmp.parent[sig_rows[0]])])
    idx = m.index_for_row(int(sig_rows[0]))
    assert m.data(idx) == MATCH_MARK + "sigmoidD"
    tip = m.data(idx, Qt.ItemDataRole.ToolTipRole)
    assert "matched by accepted suggestion" in tip and "AD.Dual.logisticD" in tip
    win.reveal_row(int(sig_rows[0]))
    assert "matched across runs by an accepted suggestion" in win.details.toPlainText()
    # the helper below the renamed function is the next (and last) suggestion
    (s2,) = panel.suggestions
    assert (s2.old_key, s2.new_key) == ("AD.Dual\x1fsigmoidD.s", "AD.Dual\x1flogisticD.s")
    panel.select(0)
    panel.accept_selected()
    c = win.comparison.status_counts()
    assert c["added"] == 0 and c["removed"] == 0
    assert c["same"] + c["changed"] == before["same"] + before["changed"] + 7
    assert panel.suggestions == []
    assert "rename rules: 2" in win.status_label.text()


def test_rejected_suggestion_stays_hidden(win):
    win.load_paths([str(TICKY1), str(TICKY2)])
    panel = _show_suggestions(win)
    olds = [s.old_key for s in panel.suggestions]
    # GHC's renumbered lvl1 -> lvl is matched already (same stem, entries and bytes)
    assert "AD.Eval\x1flvl1 (fun)" not in olds
    assert "AD.Eval\x1fdrainPending (fun)" in olds
    panel.select(olds.index("AD.Eval\x1fdrainPending (fun)"))
    rejected = panel.reject_selected()
    assert [s.old_key for s in rejected] == ["AD.Eval\x1fdrainPending (fun)"]
    win.reload()
    assert "AD.Eval\x1fdrainPending (fun)" not in [s.old_key for s in panel.suggestions]
    # accepting the logistic rename on ticky counters matches it too
    i = [s.old_key for s in panel.suggestions].index("AD.Dual\x1fsigmoidD (fun)")
    panel.model.setData(panel.model.index(i, 0), Qt.CheckState.Checked.value,
                        Qt.ItemDataRole.CheckStateRole)
    panel.accept_selected()
    keys = set(win.comparison.keys.tolist())
    assert "AD.Dual\x1flogisticD (fun)" not in keys
    row = int(np.flatnonzero(win.comparison.keys == "AD.Dual\x1fsigmoidD (fun)")[0])
    assert win.comparison.matched_by[row] == 2
    assert win.comparison.status[row] in (Status.SAME, Status.CHANGED)


def _project(tmp_path) -> tuple[Path, Path]:
    a, b = tmp_path / "v1", tmp_path / "v2"
    a.mkdir()
    b.mkdir()
    shutil.copy(V1, a / "ad.prof")
    shutil.copy(V2, b / "ad.prof")
    return a / "ad.prof", b / "ad.prof"


TOML = """
[rename]
modules = { "Old.Module" = "New.Module" }
names = { "AD.Dual:logisticD.s" = "sigmoidD.s" }
normalize = ["ghc"]

[[rename.keys]]
old = "AD.Dual.logisticD"
new = "AD.Dual.sigmoidD"
"""


def test_rules_file_beside_the_runs_is_applied_and_round_trips(win, tmp_path):
    a, b = _project(tmp_path)
    (a.parent / ".profdiff.toml").write_text(TOML, encoding="utf-8")
    win.load_paths([str(a), str(b)])
    assert win.rules_source == a.parent / ".profdiff.toml"
    assert win.rules == load_rules_file(a.parent / ".profdiff.toml")
    cmp = win.comparison
    c = cmp.status_counts()
    assert c["added"] == 0 and c["removed"] == 0
    assert (cmp.matched_by[_rows_named(cmp, "sigmoidD")] == 1).all()
    assert (cmp.matched_by[_rows_named(cmp, "sigmoidD.s")] == 1).all()
    # the editor shows them: presets as checkboxes, the rest as rows
    ed = win.open_rules_editor()
    assert ed.preset_boxes["ghc"].isChecked() and not ed.preset_boxes["perf"].isChecked()
    assert ed.table.rowCount() == 3
    assert ed.rules() == win.rules
    # Save writes next to the baseline, and reads back to the same rules
    out = tmp_path / "saved.toml"
    assert win.save_rules(ed.rules(), out) == out
    assert load_rules_file(out) == win.rules
    ed.save()  # default target: the baseline's folder
    assert load_rules_file(a.parent / ".profdiff.toml") == win.rules
    assert split_presets(win.rules)[1] == ["ghc"]


def test_editor_apply_realigns_in_place_keeping_selection(win, tmp_path):
    a, b = _project(tmp_path)
    win.load_paths([str(a), str(b)])
    assert win.rules == []
    cmp = win.comparison
    add_grad = next(r for r in range(cmp.n_rows)
                    if cmp.path_labels(r)[-2:] == ["AD.Eval.evalDelta", "AD.Eval.addGrad"])
    win.tabs.setCurrentWidget(win.diff)
    win.diff.select_row(add_grad)
    labels = cmp.path_labels(add_grad)
    ed = win.open_rules_editor()
    ed.add_rule("name", "logisticD", "sigmoidD", "AD.Dual")
    ed.add_rule("module", "Model", "Net")
    assert ed.apply()
    assert win.rules == [ModuleRename("Model", "Net"), NameRename("logisticD", "sigmoidD",
                                                                  "AD.Dual")]
    new = win.comparison
    assert new is not cmp
    assert len(_rows_named(new, "logisticD")) == 0
    assert (new.matched_by[_rows_named(new, "sigmoidD")] == 1).all()
    mlp = np.flatnonzero(new.module == "Model.MLP")
    assert mlp.size and (new.matched_by[mlp[new.present[mlp].all(axis=1)]] == 1).all()
    # what the user looked at is still there
    cur = win.diff.current_row()
    assert cur >= 0 and new.path_labels(cur) == labels
    assert win.diff.state.expanded.any()
    # presets and a bad regex
    ed.preset_boxes["ghc"].setChecked(True)
    assert ed.apply()
    assert all(r in win.rules for r in PRESETS["ghc"])
    ed.add_rule("regex", "([unclosed", "")
    assert not ed.apply()
    assert "invalid regular expression" in ed.error_label.text()
    assert all(r in win.rules for r in PRESETS["ghc"])  # unchanged


def test_app_command_line_opens_suggestions_panel(tmp_path):
    from profdiff.viewer.qt.app import main

    out = tmp_path / "s.png"
    assert main([str(V1), str(V2), "--screenshot", str(out), "--show-suggestions",
                 "--size", "1000x700"]) == 0
    assert out.stat().st_size > 10_000
