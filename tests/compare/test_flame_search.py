"""The flame graph's search (:func:`viewer.flame_layout.match_rows`), labelled over the
runs' frame tables without pandas, finds the rows pandas' ``str.contains`` finds over
every row's ``module.name``, on real ``.prof`` pairs (one with non-ASCII names)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.flame_layout import frame_labels, match_rows

DATA = Path(__file__).parents[1] / "data"
PAIRS = {
    "hs-ad": (DATA / "hs-ad/v1/ad.prof", DATA / "hs-ad/v2/ad.prof"),
    "utf8": (DATA / "ghc-prof/ghc-9.x-inferno-utf8-names-N32-P-2023-08.prof",
             DATA / "ghc-prof/ghc-9.x-inferno-ghc-prof-flamegraph-P-2023-08.prof"),
}
QUERIES = ["eval", "EVAL", "ad.eval.add", "main", "函数", "/^caf:一/", "zzz-none",
           "/^AD\\.(Eval|Dual)\\./", "/grad$/", "/[/", "."]


def _reference(cmp, text: str) -> np.ndarray:
    """pandas over every row: what the search did before it labelled frames."""
    full = pd.Series([f"{m}.{n}" if m else str(n)
                      for m, n in zip(cmp.module.tolist(), cmp.name.tolist(), strict=True)])
    if len(text) > 2 and text.startswith("/") and text.endswith("/"):
        try:
            with warnings.catch_warnings():  # "has match groups"
                warnings.simplefilter("ignore", UserWarning)
                return full.str.contains(text[1:-1], case=False, regex=True).to_numpy(bool)
        except Exception:  # noqa: BLE001 - an invalid pattern finds nothing
            return np.zeros(cmp.n_rows, dtype=bool)
    return full.str.contains(text, case=False, regex=False).to_numpy(bool)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_search_finds_what_pandas_finds_over_the_rows(pair):
    a, b = PAIRS[pair]
    cmp = align([load(a), load(b)], baseline=0, mode="tree")
    assert cmp.label_frames is not None  # the frame-table path is the one under test
    for q in QUERIES:
        got = match_rows(cmp, q)
        assert got.dtype == bool and len(got) == cmp.n_rows
        assert np.array_equal(got, _reference(cmp, q)), q
    assert match_rows(cmp, "eval" if pair == "hs-ad" else "函数").any()


def test_the_labels_are_the_rows_distinct_module_dot_name():
    a, b = PAIRS["utf8"]
    cmp = align([load(a), load(b)], baseline=0, mode="tree")
    codes, labels = frame_labels(cmp)
    rows = [f"{m}.{n}" if m else str(n)
            for m, n in zip(cmp.module.tolist(), cmp.name.tolist(), strict=True)]
    assert [labels[c] for c in codes.tolist()] == rows
    assert len(labels) == len(set(labels))
    assert any(not s.isascii() for s in labels)  # the non-ASCII names are searched too
