"""-pj JSON: the token-counting tree reader agrees with json.loads + the dict walk, and
hands anything unusual to them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsers import ghc_json
from parsers.errors import ParseError

DATA = Path(__file__).resolve().parent.parent / "data"
FILES = [DATA / "hs-ad" / "v1" / "ad.prof.json",
         DATA / "ghc-prof-json" / "speedscope-binary-trees.pj.prof.json"]


def _same(a, b) -> None:
    assert a.n_nodes == b.n_nodes
    assert np.array_equal(a.parent, b.parent)
    assert a.name.tolist() == b.name.tolist()
    for m in a.metrics:
        assert np.array_equal(a.values[m.name], b.values[m.name]), m.name
    assert a.warnings == b.warnings and a.totals == b.totals


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vector_path_taken_and_equal(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ghc_json._vector_tree(path.read_text()) is not None
    fast = ghc_json.read(path)
    monkeypatch.setattr(ghc_json, "_vector_tree", lambda text: None)
    _same(fast, ghc_json.read(path))


@pytest.mark.parametrize("edit", [
    ('"ticks": 0, "children": []}', '"ticks": 0,  "children": []}'),  # other spacing
    ('"ticks": 0, "children": []}', '"ticks": 0, "x": 1, "children": []}'),  # extra key
    ('"children": []}', '"children": [}]'),  # swapped closers: invalid JSON
    ('"ticks": 0, "children": []}', '"ticks": 99999999999999999999, "children": []}'),
])
def test_unusual_sections_take_the_careful_path(tmp_path: Path, edit: tuple[str, str]) -> None:
    text = FILES[0].read_text()
    assert edit[0] in text
    bad = text.replace(edit[0], edit[1], 1)
    assert ghc_json._vector_tree(bad) is None
    dst = tmp_path / "x.prof.json"
    dst.write_text(bad)
    try:
        ghc_json.read(dst)
    except (ParseError, OverflowError):  # out-of-range values: issue 18's located errors
        pass
