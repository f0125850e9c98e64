"""The Qt-free modules a window needs, imported before PySide6 is.

Why: importing ``PySide6.QtCore`` replaces ``builtins.__import__`` with PySide's
``__feature__`` hook, which looks at every module imported after it (does it switch on
``snake_case`` or ``true_property``?).  A window imports ~400 Qt-free modules (pandas
alone brings most of them); imported after Qt they took 0.13 s longer in a whole
process (``import PySide6.QtWidgets, pandas`` against ``import pandas,
PySide6.QtWidgets``: 0.60 s against 0.47 s).  Imported first they are already in
``sys.modules`` when the window imports them.

The list is what the first paint of a comparison imports: numpy, the readers (every
format is detected), and the core the views read from (comparison, noise, ranking,
summary, suggestions, flame layout, exporters).  Not pandas: the first paint of the
diff tree or the Summary does not use it (:mod:`viewer.factorize`), and importing it
cost 0.14 s; what needs it later (ticky tables, callgrind's reader) imports it then.  ``tests/viewer/test_qt_free_first.py``
runs the app on a pair and fails naming any of them imported after Qt.
"""

from __future__ import annotations

import importlib

MODULES = (
    "numpy",
    "numpy.ma",  # numpy 2.4's plain np.unique asks np.ma.is_masked (pandas imported it)
    "profdiff.parsers",
    "profdiff.parsers.detect",
    "profdiff.parsers.bottom_up",
    "profdiff.viewer.compare",
    "profdiff.viewer.session",
    "profdiff.viewer.noise",
    "profdiff.viewer.noise_job",
    "profdiff.viewer.head_start",
    "profdiff.viewer.ranking",
    "profdiff.viewer.summary",
    "profdiff.viewer.suggest",
    "profdiff.viewer.flame_layout",
    "profdiff.viewer.colors",
    "profdiff.viewer.units",
    "profdiff.viewer.export.speedscope",
    "profdiff.viewer.export.csv_export",
    "profdiff.resources",
    "profdiff.viewer.watch",
    "profdiff.viewer.runs",
    "profdiff.viewer.by_type",
    "profdiff.viewer.call_edges",
    "profdiff.viewer.row_key",
    "profdiff.viewer.single_source",
    "profdiff.viewer.memory_settings",
    "profdiff.viewer.heap_prefault",
)


def import_qt_free_modules(readers: bool = True) -> None:
    """Import :data:`MODULES` (call before the first ``PySide6`` import); ``readers``:
    every reader module too (~35 ms: what a window opening files detects them with; an
    empty window imports them when the first file comes)."""
    for name in MODULES:
        importlib.import_module(name)
    if readers:
        importlib.import_module("profdiff.parsers.detect").readers()
