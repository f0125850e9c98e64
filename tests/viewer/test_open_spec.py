"""The window starts from a SessionSpec and a ViewState built by the shared options."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from profdiff.viewer.options import build_app_parser, spec_from_args, view_from_args

HS = Path(__file__).parents[1] / "data/hs-ad"


def _open(win, argv):
    args = build_app_parser().parse_args([str(a) for a in argv])
    win.open_spec(spec_from_args(args), view_from_args(args))
    return win


def test_command_line_options_reach_the_window(make_window):
    win = _open(make_window(), [HS / "v1/ad.prof", HS / "v2/ad.prof", "--absolute",
                                "--metrics", "entries,time_s", "--filter", "Dual",
                                "--rename", "sigmoidD=logisticD", "--changed-only"])
    assert not win.percent_mode and win.metrics == ["entries", "time_s"]
    assert win.session is not None and win.session.spec.rules == tuple(win.rules)
    cmp = win.comparison
    row = int(np.flatnonzero(cmp.name == "sigmoidD")[0])
    assert cmp.present[row].all() and cmp.matched_by[row] == 1  # the --rename rule
    assert win.filter_edit.text() == "Dual" and win.changed_box.isChecked()
    shown = win.diff.layout_.visible
    assert shown is not None and shown[row]  # a Dual row that changed
    assert not shown[np.flatnonzero(cmp.name == "addGrad")[0]]  # AD.Eval: filtered out


def test_no_rules_file_is_kept_for_files_opened_later(make_window, tmp_path):
    for v in ("v1", "v2"):
        (tmp_path / v).mkdir()
        shutil.copy(HS / v / "ad.prof", tmp_path / v / "ad.prof")
    (tmp_path / "v1/.profdiff.toml").write_text('[rename]\nnames = { "sigmoidD" = "logisticD" }\n',
                                             encoding="utf-8")
    runs = [tmp_path / "v1/ad.prof", tmp_path / "v2/ad.prof"]
    win = _open(make_window(), [*runs])
    assert win.rules and win.rules_source == tmp_path / "v1/.profdiff.toml"
    win2 = _open(make_window(), [*runs, "--no-rules-file"])
    assert win2.rules == []
    win2.load_paths([str(r) for r in runs])  # reopening does not pick the file up either
    assert win2.rules == [] and not win2.comparison.matched_by.any()
