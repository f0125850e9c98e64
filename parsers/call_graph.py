"""Caller -> callee edges with inclusive costs: what callgrind records instead of stacks.

callgrind (and KCachegrind, pprof's ``-callgrind`` output, ...) keeps one record per
(calling function, called function) pair: how often the call happened and the inclusive
cost spent inside those calls, per event.  That is enough for a flat table, a
callers/callees view and a call graph, but not for a call tree: which caller a
callee's cost came from, two levels up, is not recorded, so profdiff does not
invent one.  The structure is Qt-free and indexed by the profile's node ids (a flat
profile: one node per function).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class CallGraph:
    """Edges ``caller[i] -> callee[i]`` (node ids), ``calls[i]`` times, with inclusive
    ``cost[metric][i]`` per event (keyed like the profile's self metrics)."""

    caller: np.ndarray
    callee: np.ndarray
    calls: np.ndarray
    cost: Mapping[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.caller)

    @cached_property
    def _by_caller(self) -> np.ndarray:
        return np.argsort(self.caller, kind="stable")

    @cached_property
    def _by_callee(self) -> np.ndarray:
        return np.argsort(self.callee, kind="stable")

    def callees(self, node: int) -> np.ndarray:
        """Edge indices whose caller is ``node`` (file order)."""
        order = self._by_caller
        lo, hi = np.searchsorted(self.caller[order], [node, node + 1])
        return order[lo:hi]

    def callers(self, node: int) -> np.ndarray:
        """Edge indices whose callee is ``node`` (file order)."""
        order = self._by_callee
        lo, hi = np.searchsorted(self.callee[order], [node, node + 1])
        return order[lo:hi]

    def incoming_calls(self, n_nodes: int) -> np.ndarray:
        """Calls into every node (recursive self-calls included), int64."""
        return np.bincount(self.callee, weights=self.calls, minlength=n_nodes).astype(np.int64)


def inclusive_costs(graph: CallGraph, self_cost: np.ndarray, metric: str) -> np.ndarray:
    """Inclusive cost per node from the edges, without double counting direct recursion.

    A called function's inclusive cost is the sum of the inclusive costs of the calls
    into it from *other* functions (a recursive self-call's cost is already inside the
    outer call); a function nobody calls (the entry point, a thread start) gets its self
    cost plus the calls it makes to other functions.  This is callgrind_annotate's
    ``--inclusive=yes`` figure with self-calls left out, and never below the self cost.
    Mutual recursion (a -> b -> a) is still counted once per arc, as in callgrind's own
    numbers.
    """
    n = len(self_cost)
    c = np.asarray(graph.cost[metric], dtype=np.int64)
    other = graph.caller != graph.callee
    into = _int_bincount(graph.callee[other], c[other], n)
    out = _int_bincount(graph.caller[other], c[other], n)
    called = np.bincount(graph.callee[other], minlength=n) > 0
    own = np.asarray(self_cost, dtype=np.int64)
    # never below the self cost: producers' edges can miss a few units (valgrind on
    # macOS, pprof's callgrind output writes 0-cost edges)
    return np.maximum(np.where(called, into, own + out), own)


def _int_bincount(keys: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact int64 sums per key (``np.bincount`` goes through float64)."""
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, keys, values)
    return out


def edges_json(graph: CallGraph, edges: np.ndarray, other_end: np.ndarray,
               labels: np.ndarray, names: np.ndarray, metrics: list[str]) -> list[dict]:
    """Rows ``{"function", "name", "calls", <metric>: cost}`` for a callers/callees listing
    (``function``: the display label ``module.name``)."""
    return [
        {"function": str(labels[int(other_end[e])]), "name": str(names[int(other_end[e])]),
         "calls": int(graph.calls[e]), **{m: int(graph.cost[m][e]) for m in metrics}}
        for e in edges.tolist()
    ]
