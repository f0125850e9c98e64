"""One run opens along its heaviest path (where the cost goes), as two runs open along
the path to the top culprit; no row is made current (a real Julia allocation profile)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).parents[1] / "data"
ALLOCS = DATA / "pprof" / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz"


def test_one_run_opens_along_its_heaviest_path(make_window):
    w = make_window()
    w.load_paths([str(ALLOCS)])
    assert w.tabs.currentWidget() is w.side
    cmp = w.comparison
    total = np.asarray(cmp.values["total_alloc_count"])[:, 0]  # the main metric's
    # the heaviest path, read from the arrays: from the root, the child with the most
    # allocations (its total), down to a leaf
    row, path = -1, []
    while True:
        kids = np.flatnonzero(cmp.parent == row)
        if kids.size == 0:
            break
        row = int(kids[np.argmax(total[kids])])
        path.append(row)
    assert len(path) > 30  # a deep recursive stack: far below the two levels opened alone
    assert set(path[:-1]) <= set(w.side.expanded_rows().tolist())
    assert w.side.current_row() < 0  # the user's choice, not the window's
    assert total[path[0]] == total.max() == 11_570  # every sampled allocation
