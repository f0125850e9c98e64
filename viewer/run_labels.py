"""The name each run is shown by, everywhere (Qt-free).

Three runs ``v1/x.prof``, ``v2/x.prof``, ``v3/x.prof`` all used to read ``x.prof`` in the
header, the panes, the run pickers, the window title and every CLI column, so nobody could
tell which number came from which build.  :func:`distinct_labels` gives each run the
shortest path suffix that tells it apart from the others (``v1/x.prof``, ``v2/x.prof``);
a file given twice gets ``#2``; a label the user chose (``--label``, the app's runs panel
or a double-click on a pane header) replaces the suffix.  :func:`labels_of` is what every
view, table, JSON document and report calls for a comparison, so they all agree.

``--label`` (:func:`parse_label_options`): ``--label NAME`` names the runs in order (the
first ``--label`` the first run); ``--label NAME=PATH`` names the run read from PATH.
A label belongs to a file (its path), so it follows the run when the baseline changes or
runs are added.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from profdiff.parsers.errors import ProfdiffError

if TYPE_CHECKING:
    from .compare import Comparison


def path_key(path: str) -> str:
    """One spelling per file (``./v1/x.prof`` and ``v1/x.prof`` are the same run)."""
    return os.path.normcase(os.path.abspath(os.path.normpath(str(path))))


def _parts(path: str) -> list[str]:
    """Path components of the absolute path, so a suffix is always a real suffix and
    ``a/x.prof`` vs ``b/a/x.prof`` get told apart by the folder above ``a``."""
    norm = os.path.abspath(os.path.normpath(str(path))).replace(os.sep, "/")
    return [p for p in norm.split("/") if p] or [str(path)]


def _suffix(parts: list[str], k: int) -> tuple[str, ...] | None:
    """The last ``k`` components; None when the path is shorter (it then differs from
    every longer suffix)."""
    return tuple(parts[-k:]) if k <= len(parts) else None


def shortest_suffixes(paths: Sequence[str]) -> list[str]:
    """Per path, the shortest suffix of whole components that no other (different) file
    shares: ``/a/v1/x.prof, /a/v2/x.prof`` -> ``v1/x.prof, v2/x.prof``.  The same file
    twice keeps its file name here (:func:`distinct_labels` numbers it)."""
    keys = [path_key(p) for p in paths]
    parts = [_parts(p) for p in paths]
    out = []
    for i, pp in enumerate(parts):
        others = [parts[j] for j in range(len(parts)) if keys[j] != keys[i]]
        k = 1
        while k < len(pp) and any(_suffix(o, k) == _suffix(pp, k) for o in others):
            k += 1
        out.append("/".join(pp[-k:]))
    return out


def distinct_labels(paths: Sequence[str], given: Mapping[str, str] | None = None) -> list[str]:
    """Labels for runs read from ``paths`` (in run order): the user's label for a file
    (``given``: path -> label, any spelling of the path) or its shortest distinguishing
    suffix; a label that is still taken (the same file twice, a user label equal to
    another run's) gets ``#2``, ``#3``... so no two runs ever read the same."""
    named = {path_key(k): v.strip() for k, v in (given or {}).items() if v and v.strip()}
    auto = shortest_suffixes(paths)
    out: list[str] = []
    used: set[str] = set()
    for p, a in zip(paths, auto, strict=True):
        label = cand = named.get(path_key(p), a)
        n = 1
        while cand in used:
            n += 1
            cand = f"{label}#{n}"
        used.add(cand)
        out.append(cand)
    return out


def labels_of(cmp: Comparison) -> list[str]:
    """The run labels of ``cmp``: the ones its session gave it (the user's labels
    included), else the distinguishing suffixes of its runs' paths."""
    labels = getattr(cmp, "labels", None)
    if labels is not None and len(labels) == len(cmp.runs):
        return list(labels)
    return distinct_labels([str(p.path) for p in cmp.runs])


def natural_key(text: str) -> list:
    """Sort key that reads numbers as numbers: ``v2`` before ``v10``, ``run9`` before
    ``run10`` (how a user numbers builds, not how a string compares)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t.lower())
            for t in re.split(r"(\d+)", text) if t]


def order_dropped(paths: Sequence[str]) -> list[str]:
    """Files dropped together, in the order their labels sort naturally (``v1/x.prof``
    before ``v2/x.prof`` before ``v10/x.prof``), never by modification time: a baseline
    copied just now must not silently become the current run."""
    labels = shortest_suffixes(paths)
    order = sorted(range(len(paths)), key=lambda i: (natural_key(labels[i]), i))
    return [paths[i] for i in order]


class LabelError(ProfdiffError):
    """A ``--label`` that names no run (exit code 2, one line)."""


def parse_label_options(values: Sequence[str] | None, paths: Sequence[str]
                        ) -> tuple[tuple[str, str], ...]:
    """``--label`` values -> (path, label) pairs for :class:`viewer.session.SessionSpec`.
    ``NAME=PATH`` names the run read from PATH; a plain ``NAME`` names the next run in
    order (the first plain label the first run, ...)."""
    out: dict[str, tuple[str, str]] = {}
    keys = {path_key(p): p for p in paths}
    k = 0
    for v in values or ():
        name, sep, target = v.partition("=")
        if sep:
            if path_key(target) not in keys:
                raise LabelError(f"--label {v}: {target} is not one of the runs "
                                 f"({', '.join(paths) or 'none'})")
            p = keys[path_key(target)]
        else:
            if k >= len(paths):
                raise LabelError(f"--label {v}: more labels than runs ({len(paths)})")
            p, k = paths[k], k + 1
        if not name.strip():
            raise LabelError(f"--label {v!r}: the label is empty")
        out[path_key(p)] = (p, name.strip())
    return tuple(out.values())
