"""``viewer.factorize`` gives what ``pandas.factorize`` gives (codes, uniques, -1 for a
missing value, ``sort=True``) on real data, when pandas is not imported: the first paint
and ``profdiff diff`` factorize without importing it.

Checked here with the fallbacks called directly (pandas is loaded in this process), and
in a fresh interpreter: opening the hs-ad pair's diff tree and Summary, and diffing it,
import no pandas."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profdiff.parsers import load
from profdiff.viewer import compare
from profdiff.viewer.factorize import _factorize_ints, _factorize_objects, factorize, index_of

DATA = Path(__file__).parents[1] / "data"
HS = DATA / "hs-ad"
PROFILES = [HS / "v1/ad.P.prof", DATA / "perf/c-vm/v1/perf.script.txt.gz",
            DATA / "ghc-prof/ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof"]


def _same(got, want) -> None:
    codes, uniques = got
    wc, wu = want
    assert codes.dtype == np.int64
    assert np.array_equal(codes, np.asarray(wc, dtype=np.int64))
    assert list(np.asarray(uniques).tolist()) == list(np.asarray(wu).tolist())


PAIRS = [(HS / "v1/ad.P.prof", HS / "v2/ad.P.prof"),
         (DATA / "ghc-prof/ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof",
          DATA / "ghc-prof/ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof")]


def _level_keys(pair) -> list[np.ndarray]:
    """Integer keys as real as they come: per depth level of a real pair's tree
    alignment, the (parent row, key) code of each run's nodes there, run after run, in
    id order (nearly sorted, with repeats across the runs: what a level of two similar
    trees gives)."""
    runs = [load(p) for p in pair]
    cmp = compare.align(runs, mode="tree")
    codes, uniques = cmp.key_codes
    k = (cmp.parent.astype(np.int64) + 1) * len(uniques) + codes
    depth = cmp.depth
    out = []
    for d in range(int(depth.max()) + 1):
        parts = []
        for r in range(len(runs)):
            nodes = cmp.node[:, r]
            rows = np.flatnonzero((depth == d) & (nodes >= 0))
            parts.append(k[rows[np.argsort(nodes[rows])]])
        out.append(np.concatenate(parts))
    return out


@pytest.mark.parametrize("pair", PAIRS, ids=["hs-ad", "hcy2c"])
@pytest.mark.parametrize("sort", [False, True])
def test_integer_keys_of_a_real_alignment(pair, sort):
    levels = _level_keys(pair)
    assert len(levels) > 10 and sum(map(len, levels)) > 400
    for keys in levels:
        _same(_factorize_ints(keys, sort), pd.factorize(keys, sort=sort))
    rng = np.random.default_rng(3)  # and keys in no order at all, with repeats
    shuffled = rng.permutation(np.concatenate(levels))
    _same(_factorize_ints(shuffled, sort), pd.factorize(shuffled, sort=sort))


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("sort", [False, True])
def test_labels_of_real_frame_tables(path, sort):
    f = load(path).frames
    for col in ("name", "module", "src", "key"):
        a = np.asarray(getattr(f, col), dtype=object)
        _same(_factorize_objects(a, sort), pd.factorize(a, sort=sort))
        _same(factorize(a, sort=sort), pd.factorize(a, sort=sort))


@pytest.mark.parametrize("sort", [False, True])
def test_missing_values_get_minus_one(sort):
    a = np.array(["b", None, "a", float("nan"), "b", "c", None], dtype=object)
    got = _factorize_objects(a, sort)
    _same(got, pd.factorize(a, sort=sort))
    assert got[0][1] == -1 and got[0][3] == -1
    _same(_factorize_objects(np.zeros(0, dtype=object), sort), ([], []))
    _same(_factorize_ints(np.zeros(0, dtype=np.int64), sort), ([], []))


def test_index_of_is_get_indexer():
    f = load(PROFILES[0]).frames
    distinct = pd.unique(np.asarray(f.key, dtype=object))
    wanted = [*distinct[::7].tolist(), "no such key", distinct[0]]
    assert index_of(distinct, wanted).tolist() == \
        pd.Index(distinct).get_indexer(wanted).tolist()


_NO_PANDAS = """
import json, sys
from profdiff.viewer.qt import app
from profdiff.viewer import cli
code = app.main(sys.argv[1:])
print(json.dumps({"code": code, "pandas": "pandas" in sys.modules}))
"""


@pytest.mark.parametrize("view", ["diff", None])
def test_first_paint_of_a_pair_imports_no_pandas(tmp_path, view):
    args = [str(HS / "v1/ad.P.prof"), str(HS / "v2/ad.P.prof"),
            "--screenshot", str(tmp_path / "shot.png"), *(["--view", view] if view else [])]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", _NO_PANDAS, *args], capture_output=True,
                         text=True, env=env, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"code": 0, "pandas": False}


def test_diff_imports_no_pandas():
    script = ("import sys, json, io, contextlib\nfrom profdiff.viewer import cli\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    code = cli.main(sys.argv[1:])\n"
              "print(json.dumps({'code': code, 'pandas': 'pandas' in sys.modules}))")
    for extra in ([], ["--tree"]):
        out = subprocess.run([sys.executable, "-c", script, "diff", *extra,
                              str(HS / "v1/ad.P.prof"), str(HS / "v2/ad.P.prof")],
                             capture_output=True, text=True, timeout=120, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        assert got["pandas"] is False and got["code"] in (0, 1)
