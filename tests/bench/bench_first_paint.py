"""A/B of the first-paint steps on a 10^6-node pair, in one process (prints figures only).

``python tests/bench/bench_first_paint.py [--nodes 1000000] [--rounds 5]``

For each step the bulk way and Qt's own per-row way are run in turn (A B A B ...) on the
same window with the same expanded rows:

* sizing the name column: ``fit_name_column`` (the widest candidates picked from the
  arrays) against ``QTreeView.sizeHintForColumn(0)`` (which asks the Python model for
  index, hasChildren, flags and data of every visited cell);
* collapsing: ``collapse_all`` (``collapseAll`` without per-row signals) against
  ``collapseAll`` with its ``collapsed`` signal per expanded row, mirrored into the other
  pane by ``_mirror_expand``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from bench_viewer import random_tree, synthetic  # noqa: E402


def _ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from viewer.qt.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    parent = random_tree(args.nodes, 0)
    base = synthetic(args.nodes, parent, 1, "base.prof")
    new = synthetic(args.nodes, parent, 2, "new.prof")
    tmp = tempfile.mkdtemp()
    win = MainWindow(settings=QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat),
                     synchronous=True)
    win.resize(1600, 900)
    win.set_runs([base, new], keep_state=False)
    win.show()
    win.show_view("side")
    app.processEvents()
    view = next(v for v in win.tree_views() if len(getattr(v, "panes", [])) == 2)

    view.expand_to_depth(4)
    app.processEvents()
    n_open = int(view.state.expanded.sum())
    fit_bulk, fit_qt, col_bulk, col_qt = [], [], [], []

    def qt_fit() -> None:
        for p in view.panes:
            p.sizeHintForColumn(0)

    def qt_collapse() -> None:
        for p in view.panes:
            p.collapseAll()  # emits collapsed per expanded row -> _mirror_expand
        view.state.expanded[:] = False

    for _ in range(args.rounds):
        fit_bulk.append(_ms(view.fit_name_column))
        fit_qt.append(_ms(qt_fit))
        view.expand_to_depth(4)
        app.processEvents()
        col_bulk.append(_ms(lambda: (view.collapse_all(), app.processEvents())))
        view.expand_to_depth(4)
        app.processEvents()
        col_qt.append(_ms(lambda: (qt_collapse(), app.processEvents())))
    med = statistics.median
    print(f"{args.nodes:,} nodes, {n_open:,} rows expanded at first, side-by-side panes")
    print(f"  name column: fit_name_column {med(fit_bulk):.1f} ms vs sizeHintForColumn "
          f"{med(fit_qt):.1f} ms = {med(fit_bulk) / med(fit_qt):.2f}x")
    print(f"  collapse all: quiet {med(col_bulk):.1f} ms vs with per-row signals "
          f"{med(col_qt):.1f} ms = {med(col_bulk) / med(col_qt):.2f}x")


if __name__ == "__main__":
    main()
