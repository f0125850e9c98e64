"""The "Bottom up" tab: the diff tree over the runs' inverted (caller) trees.

Roots are the functions where samples (or allocations) were spent, the children of a row
are its callers (:func:`parsers.bottom_up.bottom_up`); a perf user reads "which leaf got
hotter, and through which caller".  The widget is the same :class:`DiffTreeView` as the
"Diff tree" tab over ``align([bottom_up(p) for p in runs], mode="tree")``.

Why lazy: inverting and aligning costs about as much as the first alignment, and most
sessions never open this tab, so the work happens on the first ``showEvent`` (the tab
being shown), never while files are opened.  The comparison is the session's
(:meth:`viewer.session.Session.bottom_up`, so its rename rules apply); what is shown
follows a :class:`~viewer.view_state.ViewState` - the window connects its
``viewStateChanged`` signal to :meth:`BottomUpView.follow` - whose row rules are applied
over this tab's own rows (:meth:`ViewState.keep_mask` with this tab's metrics and
:func:`pp_factor`).  Selecting a row asks for details via ``detailsRequested``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from profdiff.parsers.model import Kind, Profile, Unit
from profdiff.viewer.colors import DivergingScale
from profdiff.viewer.compare import Comparison, Status
from profdiff.viewer.noise import ensure_noise
from profdiff.viewer.session import Session
from profdiff.viewer.view_state import ViewState, metric_pairs

from .layout import precompute
from .views import FIRST_LOOK_ROWS, DiffTreeView

NOISE_SYNC_ROWS = 200_000


def has_call_tree(p: Profile) -> bool:
    """A tree deeper than one level with self costs (not ticky/.mem/.hp/RTS statistics)."""
    return (p.n_nodes > 0 and bool((np.asarray(p.parent) >= 0).any())
            and any(m.kind is Kind.SELF for m in p.metrics))


def wants_bottom_up(cmp: Comparison) -> bool:
    """Offer the tab when every run has a call tree to invert."""
    runs = [*cmp.groups[0], *cmp.groups[1]] if cmp.groups is not None else cmp.runs
    return bool(runs) and all(has_call_tree(p) for p in runs)


def bottom_up_comparison(source: Session | Comparison) -> Comparison:
    """The runs (or repeated-run groups) inverted and aligned in tree mode, with the
    session's rules."""
    return Session.of(source).bottom_up()


def _bu_name(bu: Comparison, m: str | None, top: Comparison | None = None) -> str | None:
    """A window metric's counterpart in the inverted tree (whose columns are the self
    metrics): an inclusive metric of the top-down comparison ``top`` maps to the self
    metric it sums (``Metric.self_of``: ``total_x`` -> ``self_x``)."""
    if not m:
        return None
    met = top.metric_by_name.get(m) if top is not None else None
    if met is not None and met.kind is Kind.INCLUSIVE and met.self_of:
        m = met.self_of
    return m if m in bu.values else None


def _in_unit(bu: Comparison, m: str, percent: bool | None) -> str:
    """``m`` or its percent/absolute partner, as the window's "% of run" toggle wants."""
    if percent is None or m not in bu.values:
        return m
    pairs = metric_pairs(list(bu.metrics))
    if (bu.metric_by_name[m].unit is Unit.PERCENT) != percent and pairs.get(m) in bu.values:
        return pairs[m]
    return m


def bottom_up_metrics(bu: Comparison, wanted: Sequence[str] | None,
                      percent: bool | None = None, top: Comparison | None = None) -> list[str]:
    """The window's columns mapped onto the inverted tree's metrics (which are the self
    metrics: ``total_x`` -> ``self_x``), then the main metric (in the unit ``percent``
    asks for, when given); at most four."""
    out: list[str] = []
    for m in wanted or []:
        cand = _bu_name(bu, m, top)
        if cand is not None:
            out.append(cand)
    main = bu.runs[bu.baseline].default_metric
    if main in bu.values:
        out.append(_in_unit(bu, main, percent))
    out = list(dict.fromkeys(out)) or list(bu.values)[:1]
    return out[:4]


def pp_factor(bu: Comparison, metric: str) -> float:
    """Multiplier turning a Δ of ``metric`` into percentage points of its run.

    Not :func:`~viewer.qt.models.change_scale_factor`: the inverted tree's columns are
    marked inclusive but its roots split the run, so the run's total is the sum over the
    roots, not the largest value."""
    if bu.metric_by_name[metric].unit is Unit.PERCENT:
        return 1.0
    roots = np.asarray(bu.parent) < 0
    v = bu.values[metric]
    for r in (bu.baseline, bu.current):
        den = float(np.nansum(np.abs(v[roots, r])))
        if np.isfinite(den) and den > 0:
            return 100.0 / den
    return 1.0


class BottomUpView(QWidget):
    """Explanation line + :class:`DiffTreeView`, filled on first show."""

    detailsRequested = Signal(object, int)  # (this tab's comparison, row) for the details

    def __init__(self, source: Session | Comparison, view_state: ViewState | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = Session.of(source)
        self.view_state = view_state if view_state is not None else ViewState()
        self.icons: dict = {}
        self.cmp: Comparison | None = None
        self.shown_metrics: list[str] = []
        self.scale: DivergingScale | None = None
        self.error: str | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.note = QLabel(
            "Bottom-up: roots are the functions where the cost was spent (their own "
            "cost); expand a row to see its callers, and theirs.  Values are the root "
            "function's own cost along that caller path.")
        self.note.setObjectName("bottomUpNote")
        self.note.setWordWrap(True)
        self.note.setContentsMargins(6, 2, 6, 2)
        lay.addWidget(self.note)
        self.diff = DiffTreeView()
        self.diff.tree.setObjectName("bottomUpTree")
        self.diff.rowSelected.connect(self._row_selected)
        lay.addWidget(self.diff, 1)

    # ----- the main window's format-tab protocol --------------------------------------
    def set_scale(self, scale: DivergingScale) -> None:
        self.scale = scale
        if self.cmp is not None:
            self.diff.set_scale(scale)

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().showEvent(ev)
        self.ensure()

    def _row_selected(self, row: int) -> None:
        """Ask for the row's details (rows are this tab's own ids, so the other views are
        not told: their rows are top-down)."""
        if self.cmp is not None:
            self.detailsRequested.emit(self.cmp, row)

    # ----- building ---------------------------------------------------------------------
    @property
    def computed(self) -> bool:
        return self.cmp is not None or self.error is not None

    def ensure(self) -> Comparison | None:
        """Invert, align and fill the tree now unless done already (tests, screenshots)."""
        if self.computed:
            return self.cmp
        vs = self.view_state
        try:
            cmp = self.session.bottom_up()
        except Exception as e:  # noqa: BLE001 - an optional view must not break the window
            self.error = f"{type(e).__name__}: {e}"
            self.note.setText(f"Bottom-up view not available: {self.error}")
            return None
        precompute(cmp)
        metrics = bottom_up_metrics(cmp, vs.metrics, vs.percent, self.session.tree)
        self._add_noise(cmp, metrics)
        self.cmp = cmp
        self.shown_metrics = metrics
        self.diff.fade_noise = vs.fade_noise
        self.diff.icons = self.icons
        self.diff.set_comparison(cmp, metrics, self.scale)
        self.diff.legend.set_colour_basis(vs.colour_by_share)
        main = metrics[0]
        v = cmp.values[main]
        key = np.fmax(v[:, cmp.current], v[:, cmp.baseline])
        self.diff.sort_by_key(key)
        self.diff.expand_to_depth(2, max_rows=FIRST_LOOK_ROWS)
        self.diff.fit_name_column()
        self.follow(vs)
        return cmp

    @staticmethod
    def _add_noise(cmp: Comparison, metrics: Sequence[str]) -> bool:
        """Sampling-error estimate of the sampled ``metrics`` still missing (two single
        runs, small enough to do at once; groups carry theirs).  True when added."""
        if cmp.n_runs < 2 or cmp.groups is not None or cmp.n_rows > NOISE_SYNC_ROWS:
            return False
        have = cmp.noise.metrics if cmp.noise is not None else {}
        todo = [m for m in metrics if cmp.metric_by_name[m].sampled and m not in have]
        if not todo:
            return False
        try:
            ensure_noise(cmp, todo)
        except Exception:  # noqa: BLE001 - fading is optional
            return False
        return True

    def follow(self, view_state: ViewState | None = None) -> None:
        """Show what ``view_state`` asks for (metric choice, unit mode, filter text/regex,
        "changed only", "significant only", |Δ| threshold, noise fading), as the "Diff
        tree" tab does, over this tab's own rows.  Nothing to do before the tab is built
        (:meth:`ensure` calls this at the end)."""
        if view_state is not None:
            self.view_state = view_state
        cmp, vs = self.cmp, self.view_state
        if cmp is None:
            return
        top = self.session.tree
        metrics = bottom_up_metrics(cmp, vs.metrics, vs.percent, top)
        if self._add_noise(cmp, metrics):
            self.diff.noise_changed()
        if metrics != self.shown_metrics:
            self.shown_metrics = metrics
            self.diff.set_metrics(metrics)
        if vs.fade_noise != self.diff.fade_noise:
            self.diff.set_fade_noise(vs.fade_noise)
        if vs.filter_error() is not None:  # the window shows the error; keep the tab as is
            return
        main = bottom_up_metrics(cmp, None, vs.percent)[0]
        sig_m = _bu_name(cmp, vs.sig_metric(top), top) or main
        keep = vs.keep_mask(cmp, metrics=metrics, sig_metric=sig_m, factor=pp_factor)
        self.diff.apply_filter(vs.filter_text, vs.regex, keep)

    def status_counts(self) -> dict[str, int]:
        """Row statuses of the inverted comparison (empty before it is built)."""
        if self.cmp is None:
            return {}
        st = self.cmp.status
        return {s.label: int((st == s).sum()) for s in Status}
