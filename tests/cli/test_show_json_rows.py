"""``profdiff show --json``'s rows on deep real trees: the depth-first order (hottest child
first) and each row's bounded path, built in bulk (``show_cli.dfs_rows``,
``report.bounded_paths``), are those of a walk one node at a time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.viewer.cli import main
from profdiff.viewer.report import PATH_LIMIT

DATA = Path(__file__).parents[1] / "data"
DEEP = [DATA / "pprof/julia-1.9-pprofjl-heapsnapshotparser-alloc-profile.pb.gz",  # depth 140
        DATA / "perf/script/firefox-profiler-simple-perf.txt.gz",  # depth 188
        DATA / "hs-ad/v1/ad.prof"]


def _walk(p, metric: str, limit: int, max_depth: int | None) -> list[int]:
    """The reference: children sorted as each node is reached (hottest first, ties in
    file order), pushed on a stack."""
    key = np.nan_to_num(np.asarray(p.values[metric], dtype=float))
    kids: dict[int, list[int]] = {}
    for n in range(p.n_nodes):
        kids.setdefault(int(p.parent[n]), []).append(n)

    def ordered(ids: list[int]) -> list[int]:
        return sorted(ids, key=lambda n: (-key[n], n))

    out: list[int] = []
    stack = ordered(kids.get(-1, []))[::-1]
    while stack and (limit <= 0 or len(out) < limit):
        n = stack.pop()
        out.append(n)
        if max_depth is None or p.depth[n] < max_depth:
            stack.extend(ordered(kids.get(n, []))[::-1])
    return out


def _path(p, n: int) -> list[str]:
    labels = []
    while n >= 0:
        m = p.module[n]
        labels.append(f"{m}.{p.name[n]}" if m else str(p.name[n]))
        n = int(p.parent[n])
    labels.reverse()
    return ["…", *labels[-PATH_LIMIT:]] if len(labels) > PATH_LIMIT else labels


@pytest.mark.parametrize("path", DEEP, ids=lambda p: p.name)
@pytest.mark.parametrize(("top", "depth"), [("0", None), ("40", None), ("0", "3")])
def test_show_json_rows_are_the_node_by_node_walk(capsys, path: Path, top: str,
                                                  depth: str | None) -> None:
    p = load(path)
    argv = ["show", "--json", "--top", top, str(path)] + (["--depth", depth] if depth else [])
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    want = _walk(p, p.default_metric, int(top), int(depth) if depth else None)
    assert [r["id"] for r in doc["rows"]] == want
    for r in doc["rows"]:
        assert r["path"] == _path(p, r["id"]), r["id"]
    if top == "0" and depth is None:
        assert len(want) == p.n_nodes
        assert any(r["path"][0] == "…" for r in doc["rows"]) == (p.depth.max() >= PATH_LIMIT)
