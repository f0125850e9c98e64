"""The window's Qt-free modules are imported before PySide6 (:mod:`viewer.qt.qt_free_first`):
PySide's import hook makes every module imported after Qt slower to import.

Each test runs a fresh interpreter (this one imported Qt long ago)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HS = Path(__file__).parents[1] / "data/hs-ad"

_AFTER_QT = """
import json, sys
from profdiff.viewer.qt import app
code = app.main(sys.argv[1:])
names = list(sys.modules)
after = names[names.index("PySide6"):]
late = [n for n in after if n.split(".")[0] in ("numpy", "pandas")
        or n.startswith("profdiff.") and not n.startswith("profdiff.viewer.qt")]
print(json.dumps({"code": code, "late": late}))
"""


def _run(script: str, *args: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                         text=True, env=env, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_first_paint_of_a_pair_imports_no_qt_free_module_after_qt(tmp_path):
    """Opening the hs-ad pair on its diff tree (load, align, noise, paint, grab): every
    numpy, pandas and Qt-free profdiff module it uses was imported before PySide6."""
    got = _run(_AFTER_QT, str(HS / "v1/ad.prof"), str(HS / "v2/ad.prof"),
               "--view", "diff", "--screenshot", str(tmp_path / "shot.png"))
    assert got["code"] == 0
    assert (tmp_path / "shot.png").stat().st_size > 0
    assert got["late"] == [], "add these to viewer/qt/qt_free_first.py MODULES"


def test_the_qt_free_modules_do_not_import_qt():
    """The list itself must stay Qt-free, or it would import Qt before the rest."""
    got = _run("import json, sys\n"
               "from profdiff.viewer.qt.qt_free_first import import_qt_free_modules\n"
               "import_qt_free_modules()\n"
               "print(json.dumps({'qt': sorted(n for n in sys.modules"
               " if n.startswith(('PySide6', 'shiboken6')))}))")
    assert got["qt"] == []
