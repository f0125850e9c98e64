"""``--fail-if`` expressions: turn a comparison into a CI verdict.

Grammar (documented in the README)::

    EXPR      := [ "total." | "sig." ] METRIC OP THRESHOLD
    OP        := ">" | ">=" | "<" | "<="
    THRESHOLD := [ "+" | "-" ] NUMBER [ "k" | "M" | "G" ] [ "%" ]

The left side is always a *change* from the baseline to the compared run: the absolute
delta (in the metric's unit) or, when the threshold ends in ``%``, the relative change in
percent.  ``alloc_bytes>+10%`` fails when any row's allocation grew by more than 10 %;
``total.bytes_allocated>+5%`` looks at run totals instead of rows; ``time_s>0.5`` fails
on any row that got slower by more than half a second.  A row that is new in the
compared run has an infinite relative change.  ``sig.time_pct>+1`` counts only rows whose
change is statistically significant (see :mod:`viewer.noise`), so timing noise does not
fail a build.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass

import numpy as np

from profdiff.parsers.errors import ProfdiffError

from .compare import Comparison
from .ranking import rank_changes

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_RX = re.compile(
    r"^\s*(?:(?P<total>total\.)|(?P<sig>sig\.))?(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|>|<)\s*"
    r"(?P<num>[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*(?P<scale>[kMG])?\s*(?P<pct>%)?\s*$"
)
_SCALE = {"k": 1e3, "M": 1e6, "G": 1e9, None: 1.0}


class GateError(ProfdiffError):
    """A --fail-if expression that does not parse or names an unknown metric."""


@dataclass(frozen=True)
class Gate:
    text: str
    total: bool
    metric: str
    op: str
    threshold: float
    relative: bool
    significant_only: bool = False

    def crosses(self, change: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return _OPS[self.op](change, self.threshold) & ~np.isnan(change)


@dataclass(frozen=True)
class Violation:
    gate: Gate
    row: int | None  # None for a totals gate
    label: str
    name: str
    module: str
    base: float | None
    new: float | None
    change: float


def parse_gate(text: str) -> Gate:
    m = _RX.match(text)
    if not m:
        raise GateError(
            f"--fail-if {text!r}: expected METRIC OP THRESHOLD, e.g. 'alloc_bytes>+10%' or "
            "'total.bytes_allocated>=+1G' (OP is >, >=, <, <=)"
        )
    return Gate(
        text=text.strip(),
        total=bool(m["total"]),
        metric=m["metric"],
        op=m["op"],
        threshold=float(m["num"]) * _SCALE[m["scale"]],
        relative=bool(m["pct"]),
        significant_only=bool(m["sig"]),
    )


def evaluate(cmp: Comparison, gates: list[Gate], run: int | None = None) -> list[Violation]:
    """All rows (or totals) crossing any gate, for ``run`` against the baseline."""
    run = cmp.current if run is None else run
    out: list[Violation] = []
    for g in gates:
        if g.total:
            vals = cmp.total_values(g.metric)
            if all(v is None for v in vals):
                raise GateError(
                    f"--fail-if {g.text!r}: no run has a total named {g.metric!r}; "
                    f"totals: {', '.join(cmp.total_keys) or 'none'}"
                )
            b, n = vals[cmp.baseline], vals[run]
            if b is None or n is None:
                missing = cmp.runs[cmp.baseline if b is None else run].path
                raise GateError(f"--fail-if {g.text!r}: {missing} has no total {g.metric!r}, "
                                "so the gate cannot be judged")
            total_change = n - b
            if g.relative:
                total_change = ((math.inf if total_change > 0 else 0.0) if b == 0
                                else 100.0 * total_change / abs(b))
            if g.crosses(np.array([total_change]))[0]:
                out.append(Violation(g, None, f"total {g.metric}", g.metric, "", b, n,
                                     total_change))
            continue
        if not cmp.has_metric(g.metric):
            raise GateError(
                f"--fail-if {g.text!r}: unknown metric {g.metric!r}; metrics: "
                f"{', '.join(cmp.values) or 'none'}; prefix with 'total.' for run totals"
            )
        lacking = [cmp.runs[r].path for r in (cmp.baseline, run)
                   if not cmp.runs[r].has_metric(g.metric)]
        if lacking:  # never pass on what cannot be judged
            raise GateError(f"--fail-if {g.text!r}: {', '.join(lacking)} has no metric "
                            f"{g.metric!r}, so the gate cannot be judged")
        change = cmp.rel(g.metric, run) * 100.0 if g.relative else cmp.delta(g.metric, run)
        crossing = g.crosses(change) & cmp.changed_mask(g.metric, run)  # rounding is no change
        if g.significant_only:
            if cmp.noise is None or g.metric not in cmp.noise.metrics:
                raise GateError(f"--fail-if {g.text!r}: significance is only known for a "
                                "two-run or two-group comparison")
            mn = cmp.noise.metrics[g.metric]
            if not mn.judged:  # never pass on what cannot be judged
                raise GateError(f"--fail-if {g.text!r}: {g.metric} follows the run's timing "
                                "and one run per side cannot tell its changes from noise; "
                                "give repeated runs (--base/--new), or gate on the change "
                                f"itself ({g.text.removeprefix('sig.')!r})")
            crossing &= mn.significant
        base = cmp.value(g.metric, cmp.baseline)
        new = cmp.value(g.metric, run)
        order = rank_changes(cmp, run=run).order  # culprit first, as in every list of changes
        for i in order[crossing[order]]:
            label = " / ".join(cmp.path_labels(int(i))[-2:]) if cmp.mode == "tree" else (
                f"{cmp.module[i]}.{cmp.name[i]}" if cmp.module[i] else str(cmp.name[i]))
            out.append(Violation(g, int(i), label, str(cmp.name[i]), str(cmp.module[i]),
                                 float(base[i]), float(new[i]), float(change[i])))
    return out
