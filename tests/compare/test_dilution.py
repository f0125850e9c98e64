"""Share dilution is not painted as improvement.

hs-ad v2's ``addGrad`` allocates 2.2 GB more, so every other cost centre's share of the
run falls although its bytes are identical (the ``-P`` reports print exact bytes).  Colours
measure a change against the baseline's total: those rows are neutral in the diff tree,
the flat table and the flame graph; share-of-run colouring stays available as an option.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profdiff import parsers
from profdiff.viewer import flame_layout as fl
from profdiff.viewer.compare import align
from profdiff.viewer.view_state import colour_change

HS = Path(__file__).parents[1] / "data" / "hs-ad"


def _pair(mode: str):
    return align([parsers.load(HS / "v1" / "ad.P.prof"), parsers.load(HS / "v2" / "ad.P.prof")],
                 mode=mode)


def test_identical_bytes_are_neutral_in_tables_and_flame() -> None:
    for mode in ("flat", "tree"):
        cmp = _pair(mode)
        same_bytes = cmp.present.all(axis=1) & (cmp.delta("bytes") == 0) & (
            cmp.value("bytes", 0) > 1e6)
        shrunk_share = same_bytes & (cmp.delta("alloc_pct") < -0.5)
        assert shrunk_share.sum() >= 3, mode  # the dilution really happens in this pair
        default = colour_change(cmp, "alloc_pct")
        assert (default[shrunk_share] == 0).all()
        by_share = colour_change(cmp, "alloc_pct", by_share=True)
        assert (by_share[shrunk_share] < -0.5).all()  # the old colouring: "better"
        grad = np.flatnonzero(cmp.name == "addGrad")
        assert (default[grad] > 10).any()  # the culprit is still loud
        if mode == "tree":
            flame = fl.color_changes(cmp, "alloc_pct", "self_pct")
            assert (flame[shrunk_share] == 0).all()
            share = fl.color_changes(cmp, "alloc_pct", "self_pct", by_share=True)
            assert (share[shrunk_share] < 0).all()
