"""``pandas.factorize`` without importing pandas for it (Qt-free).

Why: importing pandas costs 0.14 s (0.21 s once Qt is imported: PySide's import hook
reads the source of every module imported after it), ~10 % of the app's first paint of
two 100 MB ``.prof`` files and of ``profdiff diff``, and factorizing is all those paths
used it for.  Where pandas is loaded already its hash tables are used; otherwise:

* integer keys (pairs of codes: a filter's (name, module) per row, a callgrind
  caller's (caller, callee)): numpy's stable sort, which is adaptive (timsort), and
  such keys come nearly sorted: as fast as pandas' hashing on the hs-ad pair's 1.4 M
  tree-level keys (24 ms against 26 ms; ``tests/compare/test_factorize.py``);
* other values (labels of a frame table, 10^2-10^5 strings): a dict; more than
  :data:`OBJECTS_FOR_PANDAS` of them (the names of a 10^6-row flat or bottom-up table):
  pandas after all, whose C hash table is ~3x a dict's loop there and pays its import.

Either way the codes and uniques are pandas' own: first appearance order (or sorted
uniques with ``sort=True``), ``-1`` for a missing value (None or NaN), which is in no
unique.  ``tests/compare/test_factorize.py`` checks this against pandas.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

OBJECTS_FOR_PANDAS = 200_000
"""More values than this that are not integers are factorized by pandas (imported)."""


def factorize(values, sort: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(int64 code of each value, the distinct values), as ``pandas.factorize``."""
    a = np.asarray(values)
    ints = a.dtype.kind in "iu"
    pd = sys.modules.get("pandas")
    if pd is None and not ints and a.size > OBJECTS_FOR_PANDAS:
        pd = importlib.import_module("pandas")
    if pd is not None:
        codes, uniques = pd.factorize(a, sort=sort)
        return np.asarray(codes, dtype=np.int64), np.asarray(uniques)
    if ints:
        return _factorize_ints(a.astype(np.int64, copy=False), sort)
    return _factorize_objects(a, sort)


def _factorize_ints(a: np.ndarray, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(a, kind="stable")
    s = a[order]
    new = np.empty(len(s), dtype=bool)
    new[:1] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    group = np.cumsum(new) - 1  # per sorted position: its value's rank among the sorted
    uniques = s[new]
    if sort:
        rank = np.arange(len(uniques))
    else:  # renumber by first appearance (stable sort: a group starts at its first)
        first = order[new]
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        uniques = uniques[np.argsort(rank, kind="stable")]
    codes = np.empty(len(a), dtype=np.int64)
    codes[order] = rank[group]
    return codes, uniques


def _factorize_objects(a: np.ndarray, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    seen: dict = {}
    add = seen.setdefault
    codes = np.fromiter((add(v, len(seen)) for v in a.ravel().tolist()), dtype=np.int64,
                        count=a.size)
    found = list(seen)
    missing = [i for i, v in enumerate(found) if _is_missing(v)]
    if missing:
        keep = np.ones(len(found), dtype=bool)
        keep[missing] = False
        remap = np.where(keep, np.cumsum(keep) - 1, -1)
        codes = remap[codes]
        found = [v for v, k in zip(found, keep.tolist(), strict=True) if k]
    uniques = np.empty(len(found), dtype=object)
    uniques[:] = found
    if sort and len(found):
        order = sorted(range(len(found)), key=found.__getitem__)
        rank = np.empty(len(found), dtype=np.int64)
        rank[order] = np.arange(len(found))
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
        uniques = uniques[order]
    return codes, uniques


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def index_of(distinct: np.ndarray, wanted) -> np.ndarray:
    """Position of each of ``wanted`` in ``distinct`` (distinct values), -1 where absent:
    ``pandas.Index(distinct).get_indexer(wanted)``."""
    at = {v: i for i, v in enumerate(np.asarray(distinct, dtype=object).tolist())}
    return np.fromiter((at.get(v, -1) for v in wanted), dtype=np.int64, count=len(wanted))
