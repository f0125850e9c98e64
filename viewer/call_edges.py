"""Callers / callees of one function across two runs (no Qt): the data of the
"Callers / callees" tab for formats that record call edges (callgrind).

Functions are matched across runs by their frame key (``module\\x1fname``, the same
identity the flat comparison uses); an edge is matched by the key of its other end.
Values are the exact edge costs of the files: calls count and inclusive cost per call
edge; nothing is inferred beyond one call level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parsers.call_graph import CallGraph
from parsers.model import Profile


def has_call_edges(p: Profile) -> bool:
    return isinstance(p.extras.get("call_graph"), CallGraph)


@dataclass(frozen=True)
class EdgeRow:
    """One caller (or callee) of the chosen function in the two runs (None: absent)."""

    label: str
    calls: tuple[int | None, int | None]
    cost: tuple[int | None, int | None]

    @property
    def delta(self) -> int:
        return (self.cost[1] or 0) - (self.cost[0] or 0)


def _node_of_key(p: Profile, key: str) -> list[int]:
    return np.flatnonzero(p.frames.key[p.frame] == key).tolist()


def edge_rows(base: Profile, new: Profile, key: str, side: str, metric: str) -> list[EdgeRow]:
    """Callers (``side="callers"``) or callees of the function ``key`` in both runs,
    largest change of ``metric``'s edge cost first."""
    acc: dict[str, list] = {}
    for r, p in enumerate((base, new)):
        g = p.extras.get("call_graph")
        if not isinstance(g, CallGraph) or metric not in g.cost:
            continue
        keys = p.frames.key[p.frame]
        for node in _node_of_key(p, key):
            edges = g.callers(node) if side == "callers" else g.callees(node)
            other = g.caller if side == "callers" else g.callee
            for e in edges.tolist():
                k = keys[int(other[e])]
                cell = acc.setdefault(k, [p.frames.label(int(p.frame[other[e]])),
                                          [None, None], [None, None]])
                cell[1][r] = (cell[1][r] or 0) + int(g.calls[e])
                cell[2][r] = (cell[2][r] or 0) + int(g.cost[metric][e])
    rows = [EdgeRow(lab, tuple(c), tuple(v)) for lab, c, v in acc.values()]
    return sorted(rows, key=lambda row: (-abs(row.delta), row.label))
