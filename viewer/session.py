"""What is being compared, and everything derived from it (Qt-free).

A :class:`SessionSpec` (frozen) says *what* is compared: the files or the two groups of
repeated runs, how they are read (format, ``--lenient``, reader options), the baseline,
the main alignment mode, what each run is turned into first (bottom-up, by-type), the
rename rules, and how groups are combined (stat, alpha).  The command line builds one
(:func:`viewer.options.spec_from_args`); the desktop app starts from one and makes new
ones when the user opens files, edits rules or picks another baseline.

A :class:`Session` holds the loaded runs of one spec and gives every derived result,
all built with the spec's rules and cached: tree and flat :class:`~viewer.compare.
Comparison`, the bottom-up (caller) comparison, allocated types, ticky module groups,
noise estimates, and the ranked list of changes.  The CLI table, ``--json``,
``--fail-if``, the exports, watch and every Qt view read these, so they always agree:
before this module the load -> rules -> align -> noise chain was written six times and
three views silently dropped the rename rules.

Ranking is one replaceable function (:data:`RANKING`, default :func:`rank_changes`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.reader import usable_cores

from .defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    import numpy as np

    from profdiff.parsers.model import Profile

    from .compare import Comparison
    from .noise import Noise
    from .ranking import Ranking


class Cancelled(Exception):
    """Raised from a progress callback to stop a reader."""


@dataclass(frozen=True)
class SessionSpec:
    """What is compared; see the module docstring.  ``rules`` are resolved rule objects
    (rules file first, then the command line); ``rules_source`` is the rules file they
    came from; ``explicit_rules`` says the user gave rules on the command line;
    ``rules_file`` false: never read a ``.profdiff.toml`` (the app opens more files later)."""

    files: tuple[str, ...] = ()
    base: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    format: str | None = None
    lenient: bool = False
    reader_options: tuple[tuple[str, Any], ...] = ()
    baseline: int = 0
    mode: str = "flat"
    bottom_up: bool = False
    by_type: bool = False
    rules: tuple = ()
    rules_source: str | None = None
    explicit_rules: bool = False
    rules_file: bool = True  # read .profdiff.toml beside the runs (--no-rules-file: False)
    stat: str = "mean"
    alpha: float = DEFAULT_ALPHA
    auto_match: float | None = None
    labels: tuple[tuple[str, str], ...] = ()  # (path, label) the user chose (--label)

    @property
    def grouped(self) -> bool:
        """Two groups of repeated runs (``--base ... --new ...``)."""
        return bool(self.base)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every file, in order (groups: baseline runs first)."""
        return (*self.base, *self.new) if self.grouped else self.files

    def replace(self, **changes: Any) -> SessionSpec:
        return dataclasses.replace(self, **changes)


@dataclass
class Slot:
    """One run to show: a path to (re)load, and/or the profile shown before (kept on error)."""

    path: str | None = None
    previous: Profile | None = None


@dataclass
class LoadOutcome:
    """What :func:`load_slots` read: one entry per slot (None: nothing to show)."""

    slot_runs: list[Profile | None]
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    loaded: list[str] = field(default_factory=list)  # paths read successfully


def describe_error(path: str, e: BaseException) -> str:
    """One line naming the file (the message bar and the CLI say it the same way)."""
    if isinstance(e, ProfdiffError):
        msg = str(e)
        return msg if path in msg else f"{path}: {msg}"
    if isinstance(e, OSError):
        return f"{path}: cannot read ({e.strerror or e})"
    return f"{path}: unexpected error: {type(e).__name__}: {e}"


def load_run(spec: SessionSpec, path: str, progress: Callable[[float], None] | None = None,
             loader: Callable[..., Profile] | None = None, cores: int | None = None
             ) -> Profile:
    """Read one file with the spec's reading options (errors name the file); ``cores``:
    the read's share of the cores when other files are read at the same time."""
    if loader is None:
        from profdiff.parsers import load

        loader = load
    extra = {} if cores is None else {"cores": cores}
    return loader(path, format=spec.format, lenient=spec.lenient, progress=progress,
                  **dict(spec.reader_options), **extra)


def load_slots(spec: SessionSpec, slots: Sequence[Slot], *,
               progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None,
               loader: Callable[..., Profile] | None = None,
               ready: Mapping[int, Callable[[Callable[[float], None]], Profile | None]]
               | None = None,
               on_read: Callable[[int, Profile], None] | None = None) -> LoadOutcome:
    """Read the slots' paths, keeping a slot's previous profile when its file fails
    (the window shows what it can and lists every failure).  ``progress`` gets 0..0.9;
    ``cancelled()`` true stops the readers (:class:`Cancelled`).  ``ready``: slots
    being read elsewhere (:mod:`viewer.head_start`), each a function that waits for
    that profile, given the slot's progress callback; None from it and the slot is
    read here.  ``on_read(i, profile)``: called in the reading thread as soon as slot
    ``i`` is read, while the others may still be (it must not raise: what it does is
    an optimisation, like :func:`viewer.tree_union.prepare`).

    Why several files are read at once (:func:`read_workers` threads): the readers spend
    most of their time in numpy, pandas or a perf child process, which run beside each
    other, so a pair of 100 MB ``.prof`` reads in 0.70x the time of one after the other.
    Results and errors keep the slots' order."""
    todo = [i for i, s in enumerate(slots) if s.path]
    ready = ready or {}
    reads = len([i for i in todo if i not in ready])  # the reads this process runs
    cores = max(1, usable_cores() // read_workers(reads))  # each read's share
    share = [0.0] * len(slots)
    lock = threading.Lock()

    def read(i: int) -> Profile:
        def cb(f: float) -> None:
            if cancelled is not None and cancelled():
                raise Cancelled()
            if progress is not None:
                with lock:
                    share[i] = max(0.0, min(1.0, f))
                    progress(min(1.0, sum(share) / max(len(todo), 1)) * 0.9)

        p = ready[i](cb) if i in ready else None
        if p is None:
            p = load_run(spec, str(slots[i].path), cb, loader, cores)
        if on_read is not None:
            on_read(i, p)
        with lock:
            share[i] = 1.0
        return p

    results = _read_all(read, todo)
    out = LoadOutcome([])
    for i, s in enumerate(slots):
        got = results.get(i)
        if got is None:
            out.slot_runs.append(s.previous)
        elif isinstance(got, BaseException):
            out.errors.append((str(s.path), describe_error(str(s.path), got)))
            out.slot_runs.append(s.previous)
        else:
            out.slot_runs.append(got)
            out.loaded.append(str(s.path))
    if cancelled is not None and cancelled():
        raise Cancelled()
    return out


def read_workers(n_files: int) -> int:
    """Files read at once: one per usable core, at most 4 (each holds its file's
    transient arrays, so more would only add memory)."""
    return max(1, min(n_files, usable_cores(), 4))


def _read_all(read: Callable[[int], Profile], todo: list[int]
              ) -> dict[int, Profile | BaseException]:
    """``read(i)`` for every slot index, in :func:`read_workers` threads; each result or
    its exception by index.  A :class:`Cancelled` in any of them is raised once all have
    stopped (the others see ``cancelled()`` at their next progress call)."""
    def guarded(i: int) -> Profile | BaseException:
        try:
            return read(i)
        except Cancelled as e:
            return e
        except Exception as e:  # noqa: BLE001 - every failure goes to the message bar
            return e

    workers = read_workers(len(todo))
    if workers == 1:
        got = {i: guarded(i) for i in todo}
    else:
        from concurrent.futures import ThreadPoolExecutor  # only for several files

        with ThreadPoolExecutor(workers, thread_name_prefix="profdiff-read") as ex:
            got = dict(zip(todo, ex.map(guarded, todo), strict=True))
    if any(isinstance(r, Cancelled) for r in got.values()):
        raise Cancelled()
    return got


def transform_runs(spec: SessionSpec, runs: list[Profile]) -> list[Profile]:
    """Apply ``--bottom-up`` / ``--by-type`` to loaded runs (errors name the file)."""
    from .options import UsageError

    if spec.by_type:
        from .by_type import NoTypeTable, by_type_profile

        try:
            return [by_type_profile(p) for p in runs]
        except NoTypeTable as e:
            raise UsageError(f"--by-type: {e}") from None
    if spec.bottom_up:
        from profdiff.parsers.bottom_up import bottom_up_runs
        from profdiff.parsers.model import Kind

        for p in runs:
            if not any(m.kind is Kind.SELF for m in p.metrics):
                raise UsageError(f"--bottom-up: {p.path} ({p.format}) has no self cost to "
                                 "invert (run statistics, not a call tree)")
        return bottom_up_runs(runs)
    return runs


def rank_changes(cmp: Comparison, metric: str, how: str = "delta",
                 descending: bool = True) -> np.ndarray:
    """Row ids, the largest change of ``metric`` first (``how``: delta, abs, rel, base,
    new).  The ranking every view, the CLI, watch and export show; replace
    :data:`RANKING` to change it everywhere."""
    return cmp.order_by(metric, how, descending)


RANKING: Callable[..., np.ndarray] = rank_changes
"""The ranking function :meth:`Session.ranked_changes` uses."""


class Session:
    """The loaded runs of one :class:`SessionSpec` and their derived results (cached).

    ``runs`` are the loaded profiles after the spec's transform (bottom-up, by-type); with
    groups, ``groups`` holds (baseline runs, current runs) and ``runs`` both, baseline
    group first.  Build one with :meth:`open` (strict: the CLI) or :meth:`from_slots`
    (tolerant: the app keeps a run that failed to reload).
    """

    def __init__(self, spec: SessionSpec, runs: Sequence[Profile],
                 groups: tuple[list[Profile], list[Profile]] | None = None) -> None:
        from .options import UsageError

        if not runs:
            raise UsageError("nothing to compare: no run was loaded")
        if groups is not None and not (groups[0] and groups[1]):
            raise UsageError("repeated runs need at least one run on each side")
        self.spec = spec
        self.runs: list[Profile] = list(runs)
        self.groups = groups
        self._cache: dict[tuple, Any] = {}
        self._building: dict[tuple, threading.RLock] = {}  # one per result being built
        self._building_lock = threading.Lock()

    # ----- building -----------------------------------------------------------------
    @classmethod
    def open(cls, spec: SessionSpec, *, loader: Callable[..., Profile] | None = None
             ) -> Session:
        """Read every file of ``spec`` (the first failure raises, naming the file)."""
        from .options import UsageError

        if spec.grouped:
            base = transform_runs(spec, [load_run(spec, p, loader=loader) for p in spec.base])
            new = transform_runs(spec, [load_run(spec, p, loader=loader) for p in spec.new])
            return cls(spec, [*base, *new], (base, new))
        runs = transform_runs(spec, [load_run(spec, p, loader=loader) for p in spec.files])
        if not 0 <= spec.baseline < len(runs):
            raise UsageError(f"--baseline {spec.baseline}: there are {len(runs)} runs")
        return cls(spec, runs)

    @classmethod
    def from_slots(cls, spec: SessionSpec, outcome: LoadOutcome, n_base: int | None = None
                   ) -> Session:
        """A session over what :func:`load_slots` could read; ``n_base``: the first
        ``n_base`` slots are the baseline group of repeated runs."""
        runs = [p for p in outcome.slot_runs if p is not None]
        if n_base is None:
            spec = spec.replace(baseline=min(max(spec.baseline, 0), max(len(runs) - 1, 0)))
            return cls(spec, transform_runs(spec, runs))
        base = [p for p in outcome.slot_runs[:n_base] if p is not None]
        new = [p for p in outcome.slot_runs[n_base:] if p is not None]
        for g, what in ((base, "baseline"), (new, "current")):
            if not g:
                from .options import UsageError

                raise UsageError(f"cannot compare the groups: no readable run in the {what} "
                                 "group")
        base, new = transform_runs(spec, base), transform_runs(spec, new)
        return cls(spec, [*base, *new], (base, new))

    @classmethod
    def of(cls, source: Session | Comparison) -> Session:
        """``source`` itself, or a session over a comparison's runs (its baseline and
        groups, no rules): views built from a bare Comparison (tests, scripts)."""
        if isinstance(source, Session):
            return source
        spec = SessionSpec(baseline=source.baseline, mode=source.mode)
        return cls(spec, source.runs if source.groups is None else
                   [*source.groups[0], *source.groups[1]], source.groups)

    def with_spec(self, **changes: Any) -> Session:
        """The same loaded runs under a changed spec (rules, baseline, mode): nothing is
        read again, every derived result is rebuilt with the new spec."""
        return Session(self.spec.replace(**changes), self.runs, self.groups)

    def with_runs(self, runs: Sequence[Profile]) -> Session:
        """Other runs (already loaded) under the same spec (watch: a run landed)."""
        spec = self.spec.replace(base=(), new=(), files=tuple(p.path for p in runs),
                                 baseline=min(self.spec.baseline, max(len(runs) - 1, 0)))
        return Session(spec, runs)

    def swapped_groups(self) -> Session:
        """Groups exchanged (the current group becomes the baseline)."""
        if self.groups is None:
            return self
        spec = self.spec.replace(base=self.spec.new, new=self.spec.base)
        return Session(spec, [*self.groups[1], *self.groups[0]],
                       (self.groups[1], self.groups[0]))

    # ----- derived results ------------------------------------------------------------
    @property
    def rules(self) -> list:
        return list(self.spec.rules)

    @property
    def tree(self) -> Comparison:
        return self.comparison("tree")

    @property
    def flat(self) -> Comparison:
        return self.comparison("flat")

    @property
    def main(self) -> Comparison:
        """The comparison in the spec's mode (the CLI's table)."""
        return self.comparison(self.spec.mode)

    @property
    def labels(self) -> list[str]:
        """How each run of :attr:`runs` is named everywhere: the user's labels, else the
        shortest path suffix that tells the runs apart (:mod:`viewer.run_labels`)."""
        from .run_labels import distinct_labels

        return distinct_labels([str(p.path) for p in self.runs], dict(self.spec.labels))

    def label_runs(self, cmp: Any) -> Any:
        """``cmp`` with its runs' labels set (every comparison the session builds), so a
        view given only the comparison names the runs as the rest of the app does."""
        from .run_labels import distinct_labels

        runs = getattr(cmp, "runs", None)
        if runs is not None and hasattr(cmp, "labels"):
            cmp.labels = distinct_labels([str(p.path) for p in runs], dict(self.spec.labels))
        return cmp

    def relabel(self, labels: Sequence[tuple[str, str]]) -> None:
        """The user renamed runs: new (path, label) pairs, set on every comparison already
        built (nothing is aligned again: a label changes no number)."""
        self.spec = self.spec.replace(labels=tuple(labels))
        for value in list(self._cache.values()):  # (a comparison may be aligning ahead)
            self.label_runs(value)

    def _cached(self, key: tuple, build: Callable[[], Any]) -> Any:
        """``build()`` once per key, whichever thread asks first; another thread asking
        meanwhile waits for that result instead of building a second one (a comparison
        aligned ahead, :meth:`align_ahead`, is then the one every view gets)."""
        got = self._cache.get(key)
        if got is not None:
            return got
        with self._building_lock:
            lock = self._building.setdefault(key, threading.RLock())
        with lock:
            if key not in self._cache:
                self._cache[key] = self.label_runs(build())
        return self._cache[key]

    def align_ahead(self, mode: str) -> threading.Thread:
        """Start aligning the ``mode`` comparison in a thread of its own and return it:
        :meth:`comparison` then waits for that result, and a failure there is left for
        :meth:`comparison` to raise where it is asked for.

        Why: the window opening a pair on its Summary needs the flat comparison as well as
        the tree's, and aligned beside the tree (and the views being built) rather than
        after them, a pair of 100 MB ``.prof`` opened in 0.89x the time."""
        def run() -> None:
            try:
                self.comparison(mode)
            except Exception:  # noqa: BLE001, S110 - raised again where it is asked for
                pass

        t = threading.Thread(target=run, name=f"profdiff-align-{mode}", daemon=True)
        t.start()
        return t

    def built(self, mode: str) -> Comparison | None:
        """The ``mode`` comparison if it is aligned already, else None (nothing is
        computed: the window asks before painting, to align only what a view shows)."""
        return self._cache.get(("cmp", mode))

    def comparison(self, mode: str) -> Comparison:
        """Runs (or group means) aligned in ``mode`` with the spec's rules."""
        return self._cached(("cmp", mode), lambda: self._align(mode))

    def _align(self, mode: str) -> Comparison:
        """The runs (or groups) aligned in ``mode`` with the spec's rules, and with the
        rules matching single ``.mem`` files' sources (:mod:`viewer.single_source`)."""
        from .single_source import same_source_rules

        runs = [*self.groups[0], *self.groups[1]] if self.groups is not None else self.runs
        same, same_note = same_source_rules(runs, 0 if self.groups else self.spec.baseline)
        try:
            cmp = self._align_with(mode, [*same, *self.spec.rules])
        finally:
            if mode == "tree":  # what the loader prepared for it (tree_union.prepare)
                from .tree_union import forget

                forget(list(runs))
        if same_note:
            cmp.notes.append(same_note)
        return cmp

    def _align_with(self, mode: str, rules: list) -> Comparison:
        from .compare import align

        spec = self.spec
        if self.groups is not None:
            from .noise import group_comparison

            note = ""
            if spec.auto_match is not None:  # matches found over every run of both groups
                from .suggest import accept_all, auto_match

                runs = [*self.groups[0], *self.groups[1]]
                found, accepted = auto_match(runs, baseline=0, mode=mode, rules=rules,
                                             threshold=spec.auto_match)
                rules = [*rules, *accept_all(accepted)]
                note = next((n for n in found.notes if n.startswith("auto-matched")), "")
            cmp = group_comparison(self.groups[0], self.groups[1], mode=mode,
                                   rules=rules, stat=spec.stat, alpha=spec.alpha)
            if note:
                cmp.notes.append(note)
            return cmp
        if spec.auto_match is not None and len(self.runs) > 1:
            from .suggest import auto_match

            cmp, _ = auto_match(self.runs, baseline=spec.baseline, mode=mode,
                                rules=rules, threshold=spec.auto_match)
            return cmp
        if len(self.runs) > 1:  # the compiler's renumbered binders are matched by default
            from .suggest import align_renumbered

            return align_renumbered(self.runs, baseline=spec.baseline, mode=mode,
                                    rules=rules)
        return align(self.runs, baseline=spec.baseline, mode=mode, rules=rules)

    def bottom_up(self) -> Comparison:
        """The runs' inverted (caller) trees aligned in tree mode, same rules."""
        return self._cached(("bottom-up",), self._bottom_up)

    def _bottom_up(self) -> Comparison:
        from .compare import align

        if self.groups is not None:
            from .noise import group_comparison

            b, n = self.groups
            inv = inverted([*b, *n])
            return group_comparison(inv[: len(b)], inv[len(b):],
                                    mode="tree", rules=self.spec.rules, stat=self.spec.stat,
                                    alpha=self.spec.alpha)
        top = self.tree
        return align(inverted(self.runs), baseline=top.baseline,
                     current=top.current if top.n_runs > 1 else -1, mode="tree",
                     rules=self.spec.rules)

    def by_type(self) -> Comparison:
        """Allocated types (pprof allocation profiles), flat, same rules."""
        def build() -> Comparison:
            from .by_type import by_type_comparison

            top = self.flat
            return by_type_comparison(top.runs, baseline=top.baseline, current=top.current,
                                      rules=self.spec.rules)

        return self._cached(("by-type",), build)

    def ticky_groups(self, summed: bool = False) -> Comparison:
        """Ticky closures grouped by module (module -> closures trees), same rules."""
        def build() -> Comparison:
            from .compare import align
            from .ticky_groups import group_by_module

            top = self.tree
            runs = [group_by_module(p, sum_duplicates=summed) for p in top.runs]
            return align(runs, baseline=top.baseline, mode="tree", current=top.current,
                         rules=self.spec.rules)

        return self._cached(("ticky-groups", summed), build)

    def noise(self, cmp: Comparison, metrics: Sequence[str]) -> Noise | None:
        """Noise of ``metrics`` in ``cmp`` (computed once per metric, then kept with the
        comparison): groups carry theirs, a 1-vs-1 comparison gets its sampling error."""
        from .noise import ensure_noise

        return ensure_noise(cmp, metrics, self.spec.alpha)

    def judge_statuses(self, cmp: Comparison) -> Comparison:
        """``cmp`` with the noise of every sampled metric its statuses compare estimated
        (:meth:`Comparison.status_metrics`), of every run of 3+ single runs too
        (:func:`viewer.noise.judge_every_run`): a row whose only change is within
        sampling error is then "same" wherever it is counted or marked.  Returns ``cmp``."""
        from .noise import judge_every_run

        self.noise(cmp, cmp.status_metrics(sampled_only=True))
        judge_every_run(cmp, self.spec.alpha)
        return cmp

    def judge_every_metric(self, cmp: Comparison, also: Sequence[str] = ()) -> Comparison:
        """``cmp`` with the noise of every metric (and of ``also``: the gates' metrics)
        estimated once and every run's statuses judged (:meth:`judge_statuses`): what
        ``diff`` and the report print, so that their statuses, ranking and gates read one
        estimate.  Returns ``cmp``."""
        if cmp.n_runs >= 2:
            self.noise(cmp, [*cmp.values, *also])
            self.judge_statuses(cmp)
        return cmp

    def culprits(self, cmp: Comparison | None = None) -> Ranking:
        """Rows of ``cmp`` (default: the main comparison) culprit first: own change against
        the baseline's total over the format's main metrics, beyond precision and noise
        (:mod:`viewer.ranking`).  Every list of changes shows this order."""
        from .ranking import main_metrics
        from .ranking import rank_changes as culprit_ranking

        cmp = self.main if cmp is None else cmp
        self.noise(cmp, list(main_metrics(cmp)))
        return culprit_ranking(cmp)

    def ranked_changes(self, metric: str, how: str = "delta", descending: bool = True,
                       mode: str | None = None) -> np.ndarray:
        """Rows of the ``mode`` comparison (default: the spec's), the largest change first."""
        cmp = self.comparison(mode or self.spec.mode)
        return RANKING(cmp, metric, how, descending)


def inverted(runs: Sequence[Profile]) -> list[Profile]:
    """:func:`parsers.bottom_up.bottom_up_runs` with the plain metric titles: the tab
    already says "bottom up", and the column headers must stay short.  Inverted together,
    so a function the baseline ran without self cost reads "changed", not "added"."""
    from profdiff.parsers.bottom_up import bottom_up_runs

    out = []
    for bu in bottom_up_runs(runs):
        metrics = tuple(dataclasses.replace(m, label=m.label.removesuffix(" (bottom-up)"))
                        for m in bu.metrics)
        out.append(dataclasses.replace(bu, metrics=metrics))
    return out
