"""Bottom-up (inverted caller) tree: a hand-checkable tree and a brute-force check on real data."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import perf_script
from profdiff.parsers.bottom_up import bottom_up
from profdiff.parsers.builder import TreeBuilder, self_and_total
from profdiff.parsers.model import Kind, Unit

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"


def _small():
    s, t = self_and_total("samples", Unit.SAMPLES, "samples", sampled=True)
    tb = TreeBuilder(["self_samples"])
    main, a, b, c = (tb.frame(n, "m") for n in ("main", "a", "b", "c"))
    tb.add_stack([main, a, c], self_samples=3)
    tb.add_stack([main, b, c], self_samples=2)
    tb.add_stack([main, a], self_samples=1)
    tb.add_stack([main], self_samples=4)
    tb.add_stack([main, c, a, c], self_samples=5)  # recursion-like path
    return tb.build(path="x", format="test", metrics=[s, t],
                    inclusive={"total_samples": "self_samples"}, default_metric="total_samples")


def _paths(prof, col: str) -> dict[tuple[str, ...], float]:
    return {tuple(prof.name[n] for n in _up(prof, i))[::-1]: float(prof.values[col][i])
            for i in range(prof.n_nodes)}


def _up(prof, node: int) -> list[int]:
    out = []
    while node >= 0:
        out.append(node)
        node = int(prof.parent[node])
    return out


def test_small_tree_by_hand() -> None:
    inv = bottom_up(_small())
    got = _paths(inv, "self_samples")
    assert got == {
        ("c",): 10.0,
        ("c", "a"): 3.0 + 5.0,
        ("c", "a", "main"): 3.0,
        ("c", "a", "c"): 5.0,
        ("c", "a", "c", "main"): 5.0,
        ("c", "b"): 2.0,
        ("c", "b", "main"): 2.0,
        ("a",): 1.0,
        ("a", "main"): 1.0,
        ("main",): 4.0,
    }
    assert inv.metrics[0].kind is Kind.INCLUSIVE
    assert [m.name for m in inv.metrics] == ["self_samples"]
    assert inv.default_metric == "self_samples"
    assert inv.meta["view"] == "bottom-up"
    assert inv.values["self_samples"].dtype.kind in "iu"
    # parents precede children (the Profile constructor checks it too)
    assert np.all(inv.parent < np.arange(inv.n_nodes))


def test_real_profile_against_brute_force() -> None:
    prof = perf_script.read(DATA / "script" / "speedscope-system-wide.linux-perf.txt.gz")
    inv = bottom_up(prof)
    selfs = [m.name for m in prof.metrics if m.kind is Kind.SELF]
    assert [m.name for m in inv.metrics] == selfs
    # brute force: every original node's self value added to every prefix of its reversed path
    want: dict[str, dict[tuple[int, ...], float]] = {m: defaultdict(float) for m in selfs}
    for n in range(prof.n_nodes):
        rev = tuple(int(prof.frame[i]) for i in _up(prof, n))
        for m in selfs:
            v = float(prof.values[m][n])
            if v:
                for k in range(1, len(rev) + 1):
                    want[m][rev[:k]] += v
    for m in selfs:
        got = {tuple(int(inv.frame[i]) for i in _up(inv, n))[::-1]: float(inv.values[m][n])
               for n in range(inv.n_nodes)}
        assert got == pytest.approx(dict(want[m]))
    # roots hold the flat self cost, summing to the run total
    assert inv.values["self_samples"][inv.roots].sum() == prof.totals["total_samples"]
    assert inv.values["self_pct"][inv.roots].sum() == pytest.approx(100.0)


def test_cvm_leaf_callers() -> None:
    inv = bottom_up(perf_script.read(DATA / "c-vm" / "v1" / "perf.script.txt.gz"))
    roots = inv.roots
    by_name = dict(zip(inv.name[roots].tolist(), inv.values["self_pct"][roots].tolist(),
                       strict=True))
    assert round(by_name["vm_run.constprop.0"], 2) == 95.27  # perf report self overhead
    # perf report's caller graph for mix64: mix64 <- vm_run <- run_benchmark <- main
    mix = int(roots[inv.name[roots] == "mix64"][0])
    kids = inv.children(mix)
    assert inv.name[kids].tolist() == ["vm_run.constprop.0"]
    assert inv.values["self_samples"][kids[0]] == inv.values["self_samples"][mix]


def test_requires_a_self_metric() -> None:
    prof = _small()
    from dataclasses import replace

    only_total = replace(prof, metrics=(prof.metric("total_samples"),),
                         values={"total_samples": prof.values["total_samples"]})
    with pytest.raises(ValueError, match="SELF"):
        bottom_up(only_total)
