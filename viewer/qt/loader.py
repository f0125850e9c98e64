"""Loading and aligning off the GUI thread.

:func:`load_and_align` is plain Python (also used synchronously by ``--screenshot`` and
tests); :class:`LoadTask` runs it in the global ``QThreadPool`` and reports through
signals, so the GUI thread only swaps models when the result arrives.  Cancelling raises
:class:`Cancelled` from the readers' ``progress`` callback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QRunnable, Signal

from parsers import load
from parsers.errors import ProfdiffError
from parsers.model import Profile
from viewer.compare import Comparison, KeyRule, align

from .layout import precompute


class Cancelled(Exception):
    """Raised from a progress callback to stop a reader."""


@dataclass
class Slot:
    """One run to show: a path to (re)load, and/or the profile shown before (kept on error)."""

    path: str | None = None
    previous: Profile | None = None


@dataclass
class LoadResult:
    runs: list[Profile]
    tree: Comparison | None
    flat: Comparison | None
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    loaded: list[str] = field(default_factory=list)  # paths read successfully
    groups: tuple[list[Profile], list[Profile]] | None = None  # repeated-run groups
    group_paths: tuple[list[str], list[str]] | None = None  # their paths (read successfully)


def describe_error(path: str, e: BaseException) -> str:
    if isinstance(e, ProfdiffError):
        msg = str(e)
        return msg if path in msg else f"{path}: {msg}"
    if isinstance(e, OSError):
        return f"{path}: cannot read ({e.strerror or e})"
    return f"{path}: unexpected error: {type(e).__name__}: {e}"


def load_and_align(
    slots: list[Slot],
    *,
    baseline: int = 0,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    loader: Callable[..., Profile] = load,
    rules: Sequence[KeyRule] = (),
    n_base: int | None = None,
) -> LoadResult:
    """Load the slots' paths, keep previous profiles where loading fails, align the runs.

    ``rules``: rename rules applied by the alignment.  ``n_base``: the slots are two groups
    of repeated runs (the first ``n_base`` = baseline group) compared by their means with
    :func:`viewer.noise.group_comparison` instead of run by run.
    """
    runs: list[Profile] = []
    slot_runs: list[Profile | None] = []
    errors: list[tuple[str, str]] = []
    loaded: list[str] = []
    todo = [s for s in slots if s.path]
    done = 0

    for s in slots:
        if s.path:
            def cb(f: float, _d=done) -> None:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                if progress is not None:
                    progress(min(1.0, (_d + max(0.0, min(1.0, f))) / max(len(todo), 1)) * 0.9)

            try:
                p = loader(s.path, progress=cb)
                runs.append(p)
                slot_runs.append(p)
                loaded.append(s.path)
            except Cancelled:
                raise
            except Exception as e:  # noqa: BLE001 - every failure goes to the message bar
                errors.append((s.path, describe_error(s.path, e)))
                if s.previous is not None:
                    runs.append(s.previous)
                slot_runs.append(s.previous)
            done += 1
            if cancelled is not None and cancelled():
                raise Cancelled()
        elif s.previous is not None:
            runs.append(s.previous)
            slot_runs.append(s.previous)
        else:
            slot_runs.append(None)
    if not runs:
        return LoadResult([], None, None, errors, loaded)
    if n_base is not None:
        return _align_groups(slots, slot_runs, n_base, rules, errors, loaded, progress)
    baseline = min(max(baseline, 0), len(runs) - 1)
    try:
        tree = align(runs, baseline=baseline, mode="tree", rules=rules)
        flat = align(runs, baseline=baseline, mode="flat", rules=rules)
        precompute(tree)
        precompute(flat)
    except Exception as e:  # noqa: BLE001
        errors.append(("", f"cannot compare the runs: {type(e).__name__}: {e}"))
        return LoadResult(runs, None, None, errors, loaded)
    if progress is not None:
        progress(1.0)
    return LoadResult(runs, tree, flat, errors, loaded)


def _align_groups(slots, slot_runs, n_base, rules, errors, loaded, progress) -> LoadResult:
    from viewer.noise import group_comparison

    groups: tuple[list[Profile], list[Profile]] = ([], [])
    paths: tuple[list[str], list[str]] = ([], [])
    for i, (s, p) in enumerate(zip(slots, slot_runs, strict=True)):
        if p is not None:
            groups[0 if i < n_base else 1].append(p)
            paths[0 if i < n_base else 1].append(s.path or p.path)
    runs = [*groups[0], *groups[1]]
    for g, what in zip(groups, ("baseline", "current"), strict=True):
        if not g:
            errors.append(("", f"cannot compare the groups: no readable run in the {what} group"))
            return LoadResult(runs, None, None, errors, loaded)
    try:
        tree = group_comparison(groups[0], groups[1], mode="tree", rules=rules)
        flat = group_comparison(groups[0], groups[1], mode="flat", rules=rules)
        precompute(tree)
        precompute(flat)
    except Exception as e:  # noqa: BLE001
        errors.append(("", f"cannot compare the groups: {type(e).__name__}: {e}"))
        return LoadResult(runs, None, None, errors, loaded)
    if progress is not None:
        progress(1.0)
    return LoadResult(runs, tree, flat, errors, loaded, groups, paths)


class _Signals(QObject):
    progress = Signal(float)
    finished = Signal(object)  # LoadResult
    cancelled = Signal()
    failed = Signal(str)


class LoadTask(QRunnable):
    """Runs :func:`load_and_align` in a pool thread; ``cancel()`` stops it at the next
    progress report of the reader."""

    def __init__(self, slots: list[Slot], baseline: int = 0, rules: Sequence[KeyRule] = (),
                 n_base: int | None = None) -> None:
        super().__init__()
        self.slots = slots
        self.baseline = baseline
        self.rules = list(rules)
        self.n_base = n_base
        self.signals = _Signals()
        self._cancel = threading.Event()
        self.setAutoDelete(False)

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self) -> None:
        try:
            try:
                res = load_and_align(self.slots, baseline=self.baseline,
                                     progress=self.signals.progress.emit,
                                     cancelled=self._cancel.is_set, rules=self.rules,
                                     n_base=self.n_base)
            except Cancelled:
                self.signals.cancelled.emit()
                return
            except Exception as e:  # noqa: BLE001
                self.signals.failed.emit(f"{type(e).__name__}: {e}")
                return
            if self._cancel.is_set():
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(res)
        except RuntimeError:  # the window closed while loading: nobody is listening
            pass
