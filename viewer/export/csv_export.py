"""Export the flat comparison table (what the diff view shows) to CSV.

One line per row, in the order given (the GUI passes its filtered/sorted rows so the file
matches the screen).  Columns::

    name, module, src, [path (tree mode)], status,
    then per metric: <metric>[<run>] for every run, and for every run other than the
    baseline <metric> delta[<run>], <metric> rel[<run>]

``rel`` is the relative change as a fraction (0.25 = +25 %), ``inf`` when the baseline is
zero and the value grew.  Empty cells mean "no value" (a run without that metric).
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
    others = [r for r in range(cmp.n_runs) if r != cmp.baseline]
    # Pre-compute every numeric column for the chosen rows (vectorised), then stream lines.
    numeric: list[np.ndarray] = []
    for m in metrics:
        v = cmp.values[m][order]
        numeric += [v[:, r] for r in range(cmp.n_runs)]
        for r in others:
            numeric += [cmp.delta(m, r)[order], cmp.rel(m, r)[order]]
    status = np.array([Status(i).label for i in range(4)], dtype=object)[cmp.status[order]]
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
