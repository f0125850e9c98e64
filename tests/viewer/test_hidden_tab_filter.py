"""The filter reaches a hidden side-by-side tab when it is shown (its panes' relayout and
paint cost nothing meanwhile), with the same rows, expansion and selection as a filter
applied at once; typing queues one filter, not one per key."""

from __future__ import annotations

import numpy as np
import pytest
from synth_profiles import VIEWER_DATA

V1 = VIEWER_DATA / "hs-ad-v1.prof"
V2 = VIEWER_DATA / "hs-ad-v2.prof"


@pytest.fixture
def loaded(make_window):
    w = make_window(1400, 800, show=True)
    w.load_paths([str(V1), str(V2)])
    assert w.comparison is not None and w.comparison.n_runs == 2
    w.show_view("side")  # its opening work done: the tab starts laid out
    w.show_view("diff")
    return w


def _filter(w, text: str) -> None:
    w.filter_edit.blockSignals(True)
    w.filter_edit.setText(text)
    w.filter_edit.blockSignals(False)
    w.apply_filter()


def test_hidden_side_by_side_filters_when_shown(loaded, monkeypatch):
    w = loaded
    calls = []
    real = type(w.side).apply_filter
    monkeypatch.setattr(type(w.side), "apply_filter",
                        lambda self, *a: (calls.append(a[0]), real(self, *a)))
    _filter(w, "add")
    _filter(w, "addGrad")
    assert w.diff.layout_.filter_text == "addGrad"  # the shown tab (and the status line)
    assert "rows shown" in w.status_label.text()
    assert calls == [] and w.side.layout_.filter_text == ""
    w.show_view("side")
    assert calls == ["addGrad"]  # the last text only
    side, diff = w.side.layout_, w.diff.layout_
    assert side.filter_text == "addGrad"
    assert np.array_equal(side.visible, diff.visible)
    assert np.array_equal(side.matched, diff.matched)
    shown = set(w.comparison.name[np.flatnonzero(side.matched)].tolist())
    assert shown == {"addGrad"}
    # the ancestors of the matches are open in the panes, as in the diff tree
    for r in np.flatnonzero(side.matched)[:5].tolist():
        p = int(w.comparison.parent[r])
        for pane, m in zip(w.side.panes, w.side.models, strict=True):
            assert pane.isExpanded(m.index_for_row(p))


def test_a_row_selected_meanwhile_is_selected_after_the_filter(loaded):
    w = loaded
    _filter(w, "addGrad")
    row = int(np.flatnonzero(w.diff.layout_.matched)[0])
    w.reveal_row(row)  # selects everywhere: the side tab after its owed filter
    assert w.diff.current_row() == row
    w.show_view("side")
    assert w.side.current_row() == row
    for pane, m in zip(w.side.panes, w.side.models, strict=True):
        assert int(pane.currentIndex().internalId()) == row
        assert m.index_for_row(row).isValid()


def test_collapse_all_keeps_the_owed_filter(loaded):
    w = loaded
    _filter(w, "addGrad")
    w.collapse_all()
    w.show_view("side")
    assert w.side.layout_.filter_text == "addGrad"
    assert len(w.side.expanded_rows()) == 0
    assert len(w.diff.expanded_rows()) == 0
