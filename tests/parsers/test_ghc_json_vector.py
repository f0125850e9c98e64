"""-pj JSON: the token-counting tree reader agrees with json.loads + the dict walk, and
hands anything unusual to them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import ghc_json
from profdiff.parsers.errors import ParseError

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
    assert ghc_json._vector_tree(path.read_bytes()) is not None
    fast = ghc_json.read(path)
    monkeypatch.setattr(ghc_json, "_vector_tree", lambda data: None)
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
    assert ghc_json._vector_tree(bad.encode()) is None
    dst = tmp_path / "x.prof.json"
    dst.write_text(bad)
    try:
        ghc_json.read(dst)
    except (ParseError, OverflowError):  # out-of-range values: issue 18's located errors
        pass


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_node_numbers_are_the_token_grammars(path: Path) -> None:
    """The numpy token reader finds the numbers the grammar's regex finds, in order."""
    text = path.read_text()
    section = text[text.find(":", text.rfind('"profile"')) + 1 :].encode()
    got = ghc_json._node_numbers(section)
    assert got is not None
    vals, digits = got
    tokens = ghc_json._NODE_TOKEN.findall(text)
    assert len(tokens) > 100 and vals.tolist() == [[int(x) for x in t] for t in tokens]
    assert digits == sum(len(x) for t in tokens for x in t)


@pytest.mark.parametrize("bad", [
    b'{"id": 1, "entries": 2, "alloc": 3, "ticks": 4, "children": [',  # fine: control
    b'{"id": 1, "entries": 2, "alloc": 3, "ticks": 4, "childre": [',
    b'{"id": , "entries": 2, "alloc": 3, "ticks": 4, "children": [',
    b'{"id": 1, "entries": 1234567890123456789, "alloc": 3, "ticks": 4, "children": [',
    b'{"id": 1, "entries": 2, "alloc": 3, "ticks": 4',  # cut inside the token
    b'{"id": 1x, "entries": 2, "alloc": 3, "ticks": 4, "children": [',
])
def test_node_numbers_refuse_what_is_not_the_token(bad: bytes) -> None:
    good = bad == b'{"id": 1, "entries": 2, "alloc": 3, "ticks": 4, "children": ['
    got = ghc_json._node_numbers(b"]}, " + bad + b"]}")
    if good:
        assert got is not None and got[0].tolist() == [[1, 2, 3, 4]] and got[1] == 4
    else:
        assert got is None
