"""The fast paths of the comparison views give what the plain paths give (real hs-ad pair).

Painting reads cached cells (``ComparisonTreeModel.painted_cell``) through
``CellDelegate``; Δ colours are computed per block of rows; filter matches are cached per
comparison and tested on upper-cased strings.  Each is checked against the path it
replaces: Qt's own ``initStyleOption``, a fresh model, the whole-column colour, pandas'
``str.contains``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from profdiff.parsers import load
from profdiff.viewer.compare import align
from profdiff.viewer.qt.cell_delegate import CellDelegate
from profdiff.viewer.qt.layout import RowLayout, contains
from profdiff.viewer.qt.models import ComparisonTreeModel, diff_columns, set_colour_by_share
from profdiff.viewer.qt.views import TreePane
from profdiff.viewer.view_state import change_scale_factor, colour_change, colour_source

HS = Path(__file__).parents[1] / "data" / "hs-ad"
ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole,
         Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
         Qt.ItemDataRole.FontRole, Qt.ItemDataRole.DecorationRole]


@pytest.fixture(scope="module")
def hs_cmp():
    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    return align(runs, mode="tree")


def _model(cmp, layout=None) -> ComparisonTreeModel:
    metrics = [m for m in ("time_pct", "alloc_pct", "inherited_time_pct") if m in cmp.values]
    return ComparisonTreeModel(cmp, diff_columns(cmp, metrics, status=True), layout=layout)


def _all_indexes(m: ComparisonTreeModel) -> list[QModelIndex]:
    out, todo = [], [QModelIndex()]
    while todo:
        p = todo.pop()
        for i in range(m.rowCount(p)):
            out.extend(m.index(i, c, p) for c in range(m.columnCount()))
            todo.append(m.index(i, 0, p))
    return out


def _brush(b) -> tuple:
    return (int(b.style().value), b.color().getRgb())


def _roles(m, idx) -> list:
    out = []
    for role in ROLES:
        v = m.data(idx, role)
        if hasattr(v, "color"):  # QBrush
            v = _brush(v)
        elif hasattr(v, "bold"):  # QFont
            v = ("font", v.bold(), v.italic())
        elif hasattr(v, "isNull"):  # QIcon
            v = ("icon", v.cacheKey())
        out.append(v)
    return out


def test_cached_cells_follow_noise_fade_filter_and_colour_basis(qapp):
    """Every role of every cell of a model that painted before a change equals a fresh
    model's after it: significance computed (faded Δ cells), fading off, a filter (bold
    matches), the colour basis switched - and each step changes some cell."""
    from profdiff.viewer.noise import compute_noise

    runs = [load(str(HS / "v1" / "ad.prof")), load(str(HS / "v2" / "ad.prof"))]
    cmp = align(runs, mode="tree")
    cached = _model(cmp)

    def fresh_roles(fade: bool, text: str) -> list:
        f = _model(cmp, RowLayout(cmp))
        f.layout.set_filter(text)
        f.set_fade_noise(fade)
        return [_roles(f, i) for i in _all_indexes(f)]

    def cached_roles() -> list:
        return [_roles(cached, i) for i in _all_indexes(cached)]

    before = cached_roles()  # fills the cache
    assert len(before) > 2000 and any(r[2] is not None for r in before)
    steps = [lambda: setattr(cmp, "noise", compute_noise(cmp, [0], [1])),
             lambda: cached.set_fade_noise(False),
             lambda: cached.layout.set_filter("train"),
             lambda: set_colour_by_share(True)]
    try:
        for k, step in enumerate(steps):
            step()
            got = cached_roles()
            assert got == fresh_roles(k < 1, "train" if k >= 2 else ""), k
            assert got != before, k
            before = got
        assert any(r[4] == ("font", True, False) for r in got)  # the matches are bold
    finally:
        set_colour_by_share(False)


def test_cell_delegate_fills_the_option_as_qt_does(qapp, hs_cmp):
    """The option CellDelegate builds from one model call equals the one Qt's
    QStyledItemDelegate builds from seven data() calls, for every cell."""
    m = _model(hs_cmp)
    view = TreePane()
    view.setModel(m)
    fast, qt = CellDelegate(view), QStyledItemDelegate(view)
    checked = 0
    idxs = _all_indexes(m)
    m.layout.set_filter("eval")  # bold cells too
    for idx in idxs[:1000] + _all_indexes(m):
        opts = []
        for d in (fast, qt):
            o = QStyleOptionViewItem()
            o.initFrom(view)
            d.initStyleOption(o, idx)
            opts.append((o.text, int(o.displayAlignment.value), o.font.bold(), o.font.italic(),
                         int(o.features.value), _brush(o.backgroundBrush),
                         _brush(o.palette.brush(QPalette.ColorRole.Text)), o.index == idx))
        assert opts[0] == opts[1], (m.row_id(idx), idx.column())
        checked += 1
    assert checked > 1300


def test_block_colours_equal_the_whole_column(hs_cmp):
    """colour_change over a block of rows is the whole column's slice, for every metric
    and both colour bases."""
    n = hs_cmp.n_rows
    blocks = [slice(0, 7), slice(5, 60), slice(n - 9, n), slice(0, n)]
    for metric in hs_cmp.values:
        for share in (False, True):
            whole = colour_change(hs_cmp, metric, by_share=share)
            f = change_scale_factor(hs_cmp, colour_source(hs_cmp, metric, share))
            for b in blocks:
                part = colour_change(hs_cmp, metric, by_share=share, rows=b, factor=f)
                np.testing.assert_array_equal(part, whole[b])
    assert any(colour_change(hs_cmp, m).any() for m in hs_cmp.values)


@pytest.mark.parametrize("text,regex", [
    ("eval", False), ("EVAL", False), ("ss", False), ("SS", False), ("λ", False),
    ("ö", False), ("Ö", False), ("", False), ("^train[A-Z]", True), ("(?i)GRAD", True),
    ("a|ß", True), ("^$", True), (r"\.", True), ("straße", False)])
def test_contains_is_pandas_str_contains(hs_cmp, text, regex):
    """The filter's substring / regex test matches pandas' case-blind ``str.contains`` on
    the real names plus non-ASCII ones (ß upper-cases to SS, λ, ö)."""
    strings = sorted(set(map(str, hs_cmp.name)) | set(map(str, hs_cmp.module))) + [
        "Straße", "STRASSE", "λx", "Λx", "öß", "Öl", "", "a.b", "fn12"]
    want = pd.Series(strings, dtype=object).astype(str).str.contains(
        text, case=False, regex=regex).to_numpy(dtype=bool)
    got = contains(strings, [s.upper() for s in strings], text, regex)
    assert got.tolist() == want.tolist()


def test_sort_after_filter_and_expansion_across_sort(qapp, hs_cmp):
    """A sort after a filter orders each shown parent's visible children by the key
    (descending, NaN last), and rows expanded before the sort stay expanded after it."""
    m = _model(hs_cmp)
    view = TreePane()
    view.setModel(m)
    view.resize(900, 600)
    view.show()
    m.layout.set_filter("train")
    vis = m.layout.visible
    parents = [r for r in range(hs_cmp.n_rows) if vis[r] and m.layout.has_children(r)]
    assert len(parents) > 5
    view.expand_indexes(m.indexes_for_rows(parents))
    qapp.processEvents()
    col = [i for i, c in enumerate(m.columns) if c.kind == "delta"][0]
    key = m.sort_key(col)
    m.sort(col, Qt.SortOrder.DescendingOrder)
    qapp.processEvents()
    for p in [-1, *parents]:
        pidx = QModelIndex() if p < 0 else m.index_for_row(p)
        if p >= 0:
            assert view.isExpanded(pidx), p
        kids = [m.row_id(m.index(i, 0, pidx)) for i in range(m.rowCount(pidx))]
        assert kids and all(vis[k] for k in kids)
        assert sorted(kids) == sorted(int(k) for k in hs_cmp.children(p) if vis[k])
        k = np.where(np.isnan(key[kids]), -np.inf, key[kids])
        assert list(k) == sorted(k, reverse=True)
    view.close()


@pytest.mark.parametrize("runs", [2, 3])
def test_columns_read_together_equal_each_column_read_alone(qapp, runs):
    """ComparisonTreeModel.columns_at (one read of each run's values per metric, for
    sizing the columns over the shown rows) gives each column's column_at exactly: the
    merged diff columns (2 runs: base/new/Δ/Δ%; 3 runs: a value per run and Δs) and a
    side-by-side pane's columns of either run, on a real pair."""
    from profdiff.viewer.qt.models import pane_columns

    paths = [HS / "v1" / "ad.prof", HS / "v2" / "ad.prof", HS / "noise-v1" / "run1" / "ad.prof"]
    cmp = align([load(str(p)) for p in paths[:runs]], mode="tree")
    metrics = ["time_pct", "alloc_pct", "inherited_time_pct", "entries"]
    rows = np.random.default_rng(3).integers(0, cmp.n_rows, size=500)
    models = [ComparisonTreeModel(cmp, diff_columns(cmp, metrics, status=True))]
    models += [ComparisonTreeModel(cmp, pane_columns(cmp, metrics, r), pane_run=r)
               for r in range(runs)]
    for m in models:
        cols = list(range(len(m.columns)))
        together = m.columns_at(cols, rows)
        kinds = {c.kind for c in m.columns}
        assert {"value"} <= kinds
        for col, got in zip(cols, together, strict=True):
            got, alone = np.asarray(got), np.asarray(m.column_at(col, rows))
            assert got.dtype == alone.dtype, m.columns[col]
            same = np.array_equal(got, alone, equal_nan=got.dtype.kind == "f")
            assert same, m.columns[col]
    # not vacuous: a Δ column moved
    deltas = [i for i, c in enumerate(models[0].columns) if c.kind == "delta"]
    assert max(np.nanmax(np.abs(a)) for a in models[0].columns_at(deltas, rows)) > 0


def test_siblings_sorted_by_the_lazy_hot_key_as_by_the_whole_array(qapp, hs_cmp):
    """The window's sibling order (the larger inherited cost of the two runs) read at
    each listed row's children equals the order by the whole array, and so does the
    hottest path; the whole key is never built for them."""
    from profdiff.viewer.qt.views import hottest_path
    from profdiff.viewer.row_key import RowKey

    cmp = hs_cmp
    m = "inherited_time_pct"

    def at(rows):
        return np.fmax(cmp.values_at(m, cmp.current, rows), cmp.values_at(m, cmp.baseline, rows))

    lazy = RowKey(cmp.n_rows, at)
    whole = np.fmax(cmp.value(m, cmp.current), cmp.value(m, cmp.baseline))
    a, b = RowLayout(cmp), RowLayout(cmp)
    a.set_sort(lazy)
    b.set_sort(whole)
    parents = [-1, *np.flatnonzero(np.bincount(cmp.parent[cmp.parent >= 0],
                                                minlength=cmp.n_rows) > 1)[:200].tolist()]
    a.prefetch(parents[100:])
    for p in parents:
        assert a.children(p).tolist() == b.children(p).tolist()
    assert hottest_path(a, lazy) == hottest_path(b, whole)
    assert len(hottest_path(a, lazy)) > 3
    assert lazy._whole is None


@pytest.mark.parametrize("arrange", ["sorted", "filtered"])
def test_prefetched_child_lists_are_the_lists_each_parent_gets_alone(qapp, hs_cmp, arrange):
    """``prefetch`` fills the Python lists ``index()`` reads (``plists``) for many
    parents at once, sliced from one list: each equals the list the parent gets alone
    (:meth:`RowLayout.child_list`), in the same sorted, filtered order."""
    from profdiff.viewer.compare import Status

    cmp = hs_cmp
    a, b = RowLayout(cmp), RowLayout(cmp)
    for lay in (a, b):
        if arrange == "sorted":
            lay.set_sort(cmp.delta("time_pct"), descending=True)
        else:
            lay.set_filter("", keep=cmp.status != Status.SAME)
    parents = [-1, *np.flatnonzero(np.bincount(cmp.parent[cmp.parent >= 0],
                                                minlength=cmp.n_rows) > 0).tolist()]
    a.prefetch(parents)
    filled = [p for p in parents if p in a.plists]
    assert len(filled) == len(parents)  # none wider than the window here
    for p in filled:
        assert a.plists[p] == b.child_list(p)
        assert all(type(r) is int for r in a.plists[p])  # plain ints: createIndex's id
