"""Export the flat comparison table (what the diff view shows) to CSV.

One line per row, in the order given (the GUI passes its filtered/sorted rows so the file
matches the screen).  Columns::

    name, module, src, [path (tree mode)], status,
    then per metric: <metric>[<run>] for every run, and for every run other than the
    baseline <metric> delta[<run>], <metric> rel[<run>]

``rel`` is the relative change as a fraction (0.25 = +25 %), empty when the baseline is
zero and the value moved, or when the change is within the rounding of the printed
values (undefined; ``diff --json`` gives null).  Empty cells mean "no
value": a run without that metric, or without that row (absent is not zero; ``delta``
still counts an absent row as zero cost, as ``diff`` does).
Numbers keep full precision; integral values are written without ``.0``.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..compare import Comparison, Status
from .speedscope import ExportError, run_labels

PATH_SEP = " > "


def _num(x: float) -> str:
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def _paths(cmp: Comparison) -> list[str]:
    """Root-to-row label path of every row (parents precede children in the union tree)."""
    labels = [f"{m}.{n}" if m else str(n) for m, n in zip(cmp.module.tolist(), cmp.name.tolist(),
                                                         strict=True)]
    out: list[str] = [""] * cmp.n_rows
    for row, par in enumerate(cmp.parent.tolist()):
        out[row] = out[par] + PATH_SEP + labels[row] if par >= 0 else labels[row]
    return out


def _numeric_columns(cmp: Comparison, metrics: Sequence[str], order: np.ndarray
                     ) -> list[np.ndarray]:
    """Every numeric column for the rows ``order``, computed vectorised before the lines
    are streamed, with NaN (an empty cell) where there is no number to give.

    As in ``diff --json``: a run that lacks the row has no value (the comparison stores
    0 there for the deltas, but absent is not zero: a reader summing or averaging a
    column must not count it); a relative change from a zero base is undefined (``inf``
    is no number a spreadsheet or ``float()`` reader should meet), and so is one of a
    change within the rounding of the printed values (a ``-p`` report's 0.1 % steps).  A run that
    has the row with value 0 keeps its 0, and the deltas keep counting absence as zero
    cost, as everywhere else."""
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    absent = ~cmp.present[order]
    numeric: list[np.ndarray] = []
    for m in metrics:
        v = np.where(absent, np.nan, cmp.values[m][order])
        numeric += [v[:, r] for r in range(cmp.n_runs)]
        for r in others:
            d, rel = cmp.delta(m, r)[order], cmp.rel(m, r)[order]
            undefined = np.isinf(rel)
            if m in cmp.rounding:  # no Δ% the rounded printed values cannot support
                undefined |= (d != 0) & ~cmp.changed_mask(m, r, order)
            numeric += [d, np.where(undefined, np.nan, rel)]
    return numeric


def csv_header(cmp: Comparison, metrics: Sequence[str]) -> list[str]:
    labels = run_labels(cmp)
    cols = ["name", "module", "src"]
    if cmp.mode == "tree":
        cols.append("path")
    cols.append("status")
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    for m in metrics:
        cols += [f"{m}[{labels[r]}]" for r in range(cmp.n_runs)]
        for r in others:
            cols += [f"{m} delta[{labels[r]}]", f"{m} rel[{labels[r]}]"]
    return cols


def export_csv(cmp: Comparison, out_path: str | os.PathLike[str],
               rows: Iterable[int] | np.ndarray | None = None,
               metrics: Sequence[str] | None = None) -> dict:
    """Write the comparison table to ``out_path``; return ``{path, rows, columns, metrics}``.

    ``rows``: row ids in output order (default: every row in comparison order).
    ``metrics``: metric names (default: every metric of the comparison).
    ``status`` is the current run against the baseline (same/changed/added/removed).
    """
    metrics = list(cmp.values) if metrics is None else list(metrics)
    bad = [m for m in metrics if m not in cmp.values]
    if bad:
        raise ExportError(f"unknown metric(s) {', '.join(bad)}; metrics: {', '.join(cmp.values)}")
    order = np.arange(cmp.n_rows) if rows is None else np.asarray(list(rows) if not isinstance(
        rows, np.ndarray) else rows, dtype=np.int64)
    if order.size and (order.min() < 0 or order.max() >= cmp.n_rows):
        raise ExportError(f"row ids must be in 0..{cmp.n_rows - 1}")
    numeric = _numeric_columns(cmp, metrics, order)
    status = np.array([s.label for s in Status], dtype=object)[cmp.status[order]]
    paths = _paths(cmp) if cmp.mode == "tree" else None
    header = csv_header(cmp, metrics)
    out = Path(out_path)
    cols = [c.tolist() for c in numeric]
    names, modules, srcs = cmp.name.tolist(), cmp.module.tolist(), cmp.src.tolist()
    try:
        with open(out, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            for i, row in enumerate(order.tolist()):
                line = [names[row], modules[row] or "", srcs[row] or ""]
                if paths is not None:
                    line.append(paths[row])
                line.append(status[i])
                line += [_num(c[i]) for c in cols]
                w.writerow(line)
    except OSError as e:
        raise ExportError(f"{out}: cannot write: {e.strerror or e}") from e
    return {"path": str(out), "rows": int(order.size), "columns": len(header),
            "metrics": metrics, "mode": cmp.mode}
