"""Loading and aligning off the GUI thread.

:func:`load_and_align` is plain Python over :mod:`viewer.session` (also used synchronously by ``--screenshot`` and
tests); :class:`LoadTask` runs it in the global ``QThreadPool`` and reports through
signals, so the GUI thread only swaps models when the result arrives.  Cancelling raises
:class:`Cancelled` from the readers' ``progress`` callback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QRunnable, Signal

from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.model import Profile
from profdiff.viewer import heap_prefault, tree_union
from profdiff.viewer.compare import Comparison, frame_keys
from profdiff.viewer.head_start import HeadStart
from profdiff.viewer.noise_job import NoiseJob
from profdiff.viewer.options import lenient_hint_for
from profdiff.viewer.ranking import main_metrics, noise_read_by_ranking
from profdiff.viewer.session import (  # noqa: F401 - Slot, Cancelled, describe_error re-exported
    Cancelled,
    Session,
    SessionSpec,
    Slot,
    describe_error,
    load_slots,
)

from .layout import precompute

LENIENT_IN_THE_WINDOW = "File ▸ Reading options ▸ Skip corrupt lines"
"""What a file that failed to read is told it can be read with, when a lenient read of it
succeeds (:func:`viewer.options.lenient_hint_for`)."""


@dataclass
class LoadResult:
    """What :func:`load_and_align` read and aligned.  The tree comparison is aligned in
    the worker; the flat one (:attr:`flat`) on first use, as the first view shown may not
    need it (the diff tree does not; the Summary does)."""

    runs: list[Profile]
    tree: Comparison | None
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    loaded: list[str] = field(default_factory=list)  # paths read successfully
    groups: tuple[list[Profile], list[Profile]] | None = None  # repeated-run groups
    group_paths: tuple[list[str], list[str]] | None = None  # their paths (read successfully)
    session: Session | None = None  # what tree and flat came from
    noise_job: NoiseJob | None = None  # the tree's estimate, started once it was aligned

    @property
    def flat(self) -> Comparison | None:
        """The flat comparison (aligned now if it was not yet; None when nothing loaded)."""
        if self.session is None or self.tree is None:
            return None
        return flat_of(self.session)


def flat_of(session: Session) -> Comparison:
    """``session.flat`` with the caches its views need filled (:func:`.layout.precompute`)."""
    built = session.built("flat")
    if built is not None:
        return built
    flat = session.flat
    precompute(flat)
    return flat


def load_and_align(
    slots: list[Slot],
    spec: SessionSpec,
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    loader: Callable[..., Profile] | None = None,
    n_base: int | None = None,
    flat: bool = False,
    judge: Callable[[Comparison], list[str]] | None = None,
    ahead: Callable[[list[Profile]], Sequence[str]] | None = None,
    paced: bool = False,
    head: HeadStart | None = None,
    prefault: bool = False,
) -> LoadResult:
    """Load the slots' paths with ``spec``'s reading options, keep previous profiles where
    loading fails, and build the :class:`~viewer.session.Session` (the tree comparison with
    the spec's rules, its layout precomputed; the flat one is aligned on first use).

    ``n_base``: the slots are two groups of repeated runs (the first ``n_base`` = baseline
    group) compared by their means instead of run by run.  ``flat``: align the flat
    comparison here too (watch mode reads it as soon as the runs are shown).  ``ahead``:
    given the runs read, the other comparisons (``"flat"``) the first view shown reads,
    each aligned in a thread of its own beside the tree's (:meth:`Session.align_ahead`).
    ``paced``: the noise job estimates the culprit ranking's metrics, then waits for the
    window's first paint before the others (:class:`~viewer.noise_job.NoiseJob`'s
    ``first``; the live window, which calls its ``go_on``).  ``head``: the command
    line's first file read in a child since start-up (:mod:`viewer.head_start`),
    adopted when this load reads it with the same options, else closed.  ``prefault``:
    the caller's thread waits meanwhile, so the memory the alignment and the first paint
    will use is faulted in on that idle core (:mod:`viewer.heap_prefault`).
    """
    out = load_slots(spec, slots, progress=progress, cancelled=cancelled, loader=loader,
                     ready=_ready(head, spec, slots, loader, cancelled),
                     on_read=_baseline_ahead(spec, n_base))
    if not spec.lenient and loader is None:
        out.errors = [(path, msg + lenient_hint_for(path, spec.format, dict(spec.reader_options),
                                                    LENIENT_IN_THE_WINDOW) if path else msg)
                      for path, msg in out.errors]
    runs = [p for p in out.slot_runs if p is not None]
    if not runs:
        return LoadResult([], None, out.errors, out.loaded)
    what = "groups" if n_base is not None else "runs"
    try:
        session = Session.from_slots(spec, out, n_base)
        for mode in ahead(session.runs) if ahead is not None else ():
            session.align_ahead(mode)
        if prefault:
            heap_prefault.start(heap_prefault.bytes_for(max(p.n_nodes for p in session.runs)))
        tree = session.tree
        wanted = judge(tree) if judge is not None else []
        job = NoiseJob(tree, wanted, spec.alpha, _first_metrics(tree) if paced else ()) \
            if wanted else None
        precompute(tree, statuses=job is None)  # the job prepares them beside this
        if flat:
            flat_of(session)
    except ProfdiffError as e:
        out.errors.append(("", str(e)))
        return LoadResult(runs, None, out.errors, out.loaded)
    except Exception as e:  # noqa: BLE001
        out.errors.append(("", f"cannot compare the {what}: {type(e).__name__}: {e}"))
        return LoadResult(runs, None, out.errors, out.loaded)
    if progress is not None:
        progress(1.0)
    if n_base is None:
        return LoadResult(session.runs, tree, out.errors, out.loaded, session=session,
                          noise_job=job)
    paths: tuple[list[str], list[str]] = ([], [])
    for i, (s, p) in enumerate(zip(slots, out.slot_runs, strict=True)):
        if p is not None:
            paths[0 if i < n_base else 1].append(s.path or p.path)
    return LoadResult(list(tree.runs), tree, out.errors, out.loaded, session.groups,
                      paths, session=session, noise_job=job)


def _first_metrics(tree: Comparison) -> tuple[str, ...]:
    """The metrics a paced noise job estimates before the window's first paint: those the
    culprit ranking reads (:func:`~viewer.ranking.noise_read_by_ranking`), which opens
    the path the first paint shows; else the main metrics (the job then holds back no
    more than before).  The others come after that paint."""
    return noise_read_by_ranking(tree) or main_metrics(tree)


def _baseline_ahead(spec: SessionSpec, n_base: int | None
                    ) -> Callable[[int, Profile], None] | None:
    """What :func:`load_slots` calls as each file is read: the baseline's half of the
    tree alignment started at once, in a thread of the lowest priority
    (:func:`viewer.tree_union.prepare`), while the other files are still being read.
    None where the runs aligned are not the ones read (groups are compared by their
    means; ``--bottom-up``, ``--by-type`` and ``--auto-match`` make other profiles or
    keys first).

    Why: the window opening a pair waits for the tree alignment after the reads, on one
    core; the baseline's half of it (~35 ms of the 100 MB hs-ad pair's ~0.11 s) fits in
    the time the other file's read leaves a core idle (its last, single-threaded steps).
    When the alignment's keys turn out different (a rule matching ``.mem`` files'
    sources), it makes its own."""
    if n_base is not None or spec.bottom_up or spec.by_type or spec.auto_match is not None:
        return None

    def on_read(i: int, profile: Profile) -> None:
        if i != spec.baseline:
            return
        try:
            tree_union.prepare(profile, frame_keys(profile, spec.rules)[0], beside=True)
        except Exception:  # noqa: BLE001, S110 - the alignment makes it (and says why not)
            pass

    return on_read


def _ready(head: HeadStart | None, spec: SessionSpec, slots: list[Slot], loader,
           cancelled: Callable[[], bool] | None) -> dict:
    """The slot the head start reads, when this load reads it as the child does
    (:func:`viewer.session.load_slots`'s ``ready``).  A head start serves one load: it
    is closed (its child killed) when this load does not read its file."""
    if head is None:
        return {}
    i = head.slot_of(spec, slots) if loader is None else None
    if i is None:
        head.close()
        return {}
    return {i: lambda cb: head.adopt(cb, cancelled)}


class _Signals(QObject):
    progress = Signal(float)
    finished = Signal(object)  # LoadResult
    cancelled = Signal()
    failed = Signal(str)


class LoadTask(QRunnable):
    """Runs :func:`load_and_align` in a pool thread; ``cancel()`` stops it at the next
    progress report of the reader.  Its noise job is paced: the window that shows the
    result calls the job's ``go_on`` once it has painted (:meth:`MainWindow._apply`)."""

    def __init__(self, slots: list[Slot], spec: SessionSpec, n_base: int | None = None,
                 flat: bool = False,
                 judge: Callable[[Comparison], list[str]] | None = None,
                 ahead: Callable[[list[Profile]], Sequence[str]] | None = None,
                 head: HeadStart | None = None) -> None:
        super().__init__()
        self.head = head
        self.flat = flat
        self.ahead = ahead
        self.judge = judge
        self.slots = slots
        self.spec = spec
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
                res = load_and_align(self.slots, self.spec,
                                     progress=self.signals.progress.emit,
                                     cancelled=self._cancel.is_set, n_base=self.n_base,
                                     flat=self.flat, judge=self.judge, ahead=self.ahead,
                                     paced=True, head=self.head, prefault=True)
            except Cancelled:
                self.signals.cancelled.emit()
                return
            except Exception as e:  # noqa: BLE001
                self.signals.failed.emit(f"{type(e).__name__}: {e}")
                return
            if self._cancel.is_set():
                if res.noise_job is not None:
                    res.noise_job.cancel()
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(res)
        except RuntimeError:  # the window closed while loading: nobody is listening
            pass
