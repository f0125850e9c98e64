"""A big ``.prof`` read in two halves at once (two cores) reads exactly as one pass.

The split applies to trees of 32 MB and more; here the threshold is lowered so that
every real report of ``tests/data`` (GHC 6.12 to 9.x, ``-P`` columns, non-ASCII names,
rows the fast path leaves to the line parser, a file cut while being written) is split.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profdiff.parsers import ghc_prof
from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.ghc_prof_columns import FastTree

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from mutants import make, write  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
REPORTS = sorted([*DATA.glob("ghc-prof/*.prof"), *DATA.glob("hs-ad/*/*.prof")])
SWAP = str.maketrans({"a": "λ", "o": "ö", "s": "ß", "e": "⊕"})


def _same(one, two) -> None:
    for f in dataclasses.fields(one):
        a, b = getattr(one, f.name), getattr(two, f.name)
        if f.name == "values":
            assert list(a) == list(b)
            for k in a:
                np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        elif f.name == "frames":
            for g in dataclasses.fields(a):
                np.testing.assert_array_equal(getattr(a, g.name), getattr(b, g.name))
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f.name)
        else:
            assert a == b, f.name


@pytest.fixture
def halves(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every tree splits (read in 8 kB blocks, so that the first block, read with the
    header, does not hold the whole tree); counts the merges (``{"n": ...}``)."""
    monkeypatch.setattr(ghc_prof, "SPLIT_BYTES", 1)
    monkeypatch.setattr(ghc_prof, "CHUNK_BYTES", 8192)
    seen = {"n": 0}
    real = FastTree.absorb

    def counting(self, later, line_offset):
        seen["n"] += 1
        return real(self, later, line_offset)

    monkeypatch.setattr(FastTree, "absorb", counting)
    return seen


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_two_halves_read_as_one_pass(path: Path, halves: dict[str, int]) -> None:
    one = ghc_prof.read(path, cores=1)
    assert halves["n"] == 0
    two = ghc_prof.read(path, cores=2)
    if path.stat().st_size > 3 * 8192:  # the tree goes on past the header's block
        assert halves["n"] == 1
    _same(one, two)


def test_non_ascii_and_cut_reports_split_the_same(tmp_path: Path,
                                                  halves: dict[str, int]) -> None:
    src = (DATA / "hs-ad/v1/ad.P.prof").read_text(encoding="utf-8").split("\n")
    start = next(i for i, ln in enumerate(src) if ln.lstrip().startswith("MAIN "))
    lines = [ln if i <= start or i % 5 else ln.translate(SWAP) for i, ln in enumerate(src)]
    whole = tmp_path / "u.prof"
    whole.write_text("\n".join(lines), encoding="utf-8")
    cut = tmp_path / "cut.prof"
    data = whole.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.8)])  # ends mid-row: written while profiling
    for path in (whole, cut):
        one, two = ghc_prof.read(path, cores=1), ghc_prof.read(path, cores=2)
        _same(one, two)
    assert halves["n"] == 2
    assert two.incomplete and "cut while being written" in two.incomplete_reason


def test_a_failing_half_stops_the_read(halves: dict[str, int]) -> None:
    """The progress callback raising (the user's cancel) in either half ends the read
    with that exception, not a hang nor a half-read profile."""
    class Stop(Exception):
        pass

    calls = {"n": 0}

    def progress(_f: float) -> None:
        calls["n"] += 1
        if calls["n"] >= 2:
            raise Stop()

    big = max(REPORTS, key=lambda p: p.stat().st_size)
    with pytest.raises(Stop):
        ghc_prof.read(big, cores=2, progress=progress)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_damaged_reports_split_as_one_pass(tmp_path_factory, halves, seed):
    """Mutants of real reports (cut, flipped, re-numbered, duplicated or dropped lines,
    CRLF, Latin-1): the two-half read gives the one-pass profile or the same error."""
    rng = random.Random(seed)
    rel = rng.choice(["hs-ad/v1/ad.prof", "ghc-prof/ghc-8.0-flamingra-fib-P.prof",
                      "hs-ad/v1/ad.P.prof"])
    m = make(rel, "ghc-prof", rng)
    if m.gz or m.kind == "gzip-cut":
        return  # gzip streams cannot seek: read in one pass (test_two_halves...)
    path = write(m, tmp_path_factory.mktemp("m"))
    lenient = rng.random() < 0.5
    got = []
    for cores in (1, 2):
        try:
            got.append(ghc_prof.read(path, cores=cores, lenient=lenient))
        except ProfdiffError as e:
            got.append(str(e))
    if isinstance(got[0], str):
        assert got[1] == got[0]
    else:
        _same(*got)
