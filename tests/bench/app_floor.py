"""The floor of any PySide6 window over profdiff's readers: read the runs as the app does
(one thread per file), align their trees, show a plain ``QTreeWidget`` of 40 rows at
the app's size and save it as the app saves its screenshot.

``python tests/bench/app_floor.py A.prof B.prof OUT.png`` (run by
``bench_formats.py --only app``).  What the app spends above it is what profdiff's own
window adds (its modules and widgets, the views, the noise estimate and statuses, the
expansion, a full paint); what this spends above ``profdiff diff`` is Qt and the tree
alignment, which no window built on this stack can avoid.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def main(a: str, b: str, out: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from live_first_paint import set_up_program

    set_up_program()  # the program's process settings: this floor is of the same process
    from profdiff.parsers import load  # before Qt, as the app imports them
    from profdiff.viewer.compare import align
    from profdiff.viewer.qt.app import PNG_QUALITY  # the module imports no Qt

    app, tree = _window()
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda p: load(p, cores=1), (a, b)))
    cmp = align(runs, mode="tree")
    _fill(tree, cmp.n_rows)
    tree.show()
    app.processEvents()
    if not tree.grab().save(str(Path(out)), "PNG", PNG_QUALITY):
        raise SystemExit(f"cannot write {out}")


def _window():
    from PySide6.QtWidgets import QApplication, QTreeWidget

    app = QApplication([sys.argv[0]])
    tree = QTreeWidget()
    tree.setColumnCount(6)
    tree.resize(1600, 900)
    return app, tree


def _fill(tree, n_rows: int) -> None:
    from PySide6.QtWidgets import QTreeWidgetItem

    for i in range(40):
        QTreeWidgetItem(tree, [f"row {i} of {n_rows}", *(str(i * k) for k in range(5))])


if __name__ == "__main__":
    main(*sys.argv[1:4])
