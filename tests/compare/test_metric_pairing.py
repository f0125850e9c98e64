"""Metric pairing is data on the Metric (``self_of``, ``percent_of``), not name matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from profdiff import parsers
from profdiff.parsers.model import Kind, Unit
from profdiff.viewer.view_state import ViewState, metric_pairs

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize(("rel", "expected"), [
    ("hs-ad/v1/ad.prof", {"time_pct": "time_s", "alloc_pct": "alloc_bytes",
                          "inherited_time_pct": "inherited_time_s",
                          "inherited_alloc_pct": "inherited_alloc_bytes"}),
    ("hs-ad/v1/ad.prof.json", {"time_pct": "time_s", "alloc_pct": "alloc_bytes",
                               "inherited_time_pct": "inherited_time_s",
                               "inherited_alloc_pct": "inherited_alloc_bytes"}),
    ("perf/c-vm/v1/perf.script.txt.gz", {"self_pct": "self_samples",
                                         "total_pct": "total_samples"}),
    ("folded/austin-3.3.0-python-wall.folded.txt", {"self_pct": "self_samples",
                                                    "total_pct": "total_samples"}),
])
def test_percent_metrics_name_their_absolute_twin(rel, expected):
    p = parsers.load(DATA / rel)
    pairs = metric_pairs(p.metrics)
    assert {k: v for k, v in pairs.items() if k in expected} == expected
    for pct, absolute in expected.items():
        assert pairs[absolute] == pct  # both directions
        a, b = p.metric(pct), p.metric(absolute)
        assert a.unit is Unit.PERCENT and b.unit is not Unit.PERCENT and a.kind is b.kind
        if a.kind is Kind.INCLUSIVE:  # and the self metrics they sum pair up too
            assert pairs[a.self_of] == b.self_of


def test_unit_toggle_uses_the_pairing():
    from profdiff.viewer.compare import align

    p = parsers.load(DATA / "hs-ad/v1/ad.prof")
    cmp = align([p, parsers.load(DATA / "hs-ad/v2/ad.prof")], mode="flat")
    wanted = ["inherited_time_pct", "entries", "alloc_pct"]
    assert ViewState(percent=False).convert_units(cmp, wanted) == [
        "inherited_time_s", "entries", "alloc_bytes"]
    assert ViewState(percent=True).convert_units(cmp, ["time_s"]) == ["time_pct"]
