"""No Qt subclass of the window keeps data under the name of a method of its Qt base.

Why: shiboken calls a Python attribute named like one of Qt's virtual methods in place
of it.  ``FlatView.metric = "time_pct"`` (the main metric's name) stood in for
``QWidget::metric``, so anything asking the By cost centre tab for its device metrics
(``logicalDpiX``, ``devicePixelRatio``, ``grab``) crashed the app with a segmentation
fault; ``CallGraphView.metric`` printed "Error calling Python override of
QWidget::metric()" as the tab was shown, and the reading dialog kept its event picker as
``event``.  Scanned from the source: every ``self.NAME = ...`` in a QObject subclass of
``viewer.qt``, against the callables of its PySide6 bases.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from PySide6.QtCore import QObject

QT_DIR = Path(__file__).parents[2] / "viewer" / "qt"


def _assigned(cls_node: ast.ClassDef) -> list[tuple[str, int]]:
    out = []
    for sub in ast.walk(cls_node):
        targets = sub.targets if isinstance(sub, ast.Assign) else \
            [sub.target] if isinstance(sub, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                    and t.value.id == "self":
                out.append((t.attr, sub.lineno))
    return out


def test_no_attribute_shadows_a_qt_method():
    found = []
    files = sorted(QT_DIR.glob("*.py"))
    assert len(files) > 40
    for f in files:
        mod = importlib.import_module(f"profdiff.viewer.qt.{f.stem}")
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            cls = getattr(mod, node.name, None) if isinstance(node, ast.ClassDef) else None
            if not (isinstance(cls, type) and issubclass(cls, QObject)):
                continue
            bases = [b for b in cls.__mro__ if b.__module__.startswith("PySide6")]
            for name, line in _assigned(node):
                if any(name in b.__dict__ and callable(b.__dict__[name]) for b in bases):
                    found.append(f"{f.name}:{line} {node.name}.{name}")
    assert found == []
