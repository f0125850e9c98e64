"""The "Bottom up" tab: the diff tree over the runs' inverted (caller) trees.

Roots are the functions where samples (or allocations) were spent, the children of a row
are its callers (:func:`parsers.bottom_up.bottom_up`); a perf user reads "which leaf got
hotter, and through which caller".  The widget is the same :class:`DiffTreeView` as the
"Diff tree" tab over ``align([bottom_up(p) for p in runs], mode="tree")``.

Why lazy: inverting and aligning costs about as much as the first alignment, and most
sessions never open this tab, so the work happens on the first ``showEvent`` (the tab
being shown), never while files are opened.  The main window's rename rules and metric
choice are read from ``self.window()`` at that moment (duck-typed ``rules`` / ``metrics``
attributes), so the tab needs no extra wiring in the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from parsers.bottom_up import bottom_up
from parsers.model import Kind, Profile
from viewer.colors import DivergingScale
from viewer.compare import Comparison, Status, align
from viewer.noise import group_comparison, single_run_noise

from .layout import precompute
from .views import DiffTreeView

NOISE_SYNC_ROWS = 200_000


def has_call_tree(p: Profile) -> bool:
    """A tree deeper than one level with self costs (not ticky/.mem/.hp/RTS statistics)."""
    return (p.n_nodes > 0 and bool((np.asarray(p.parent) >= 0).any())
            and any(m.kind is Kind.SELF for m in p.metrics))


def wants_bottom_up(cmp: Comparison) -> bool:
    """Offer the tab when every run has a call tree to invert."""
    runs = [*cmp.groups[0], *cmp.groups[1]] if cmp.groups is not None else cmp.runs
    return bool(runs) and all(has_call_tree(p) for p in runs)


def _inverted(p: Profile) -> Profile:
    """:func:`bottom_up` with the plain metric titles: the tab already says "bottom up",
    and the column headers must stay short."""
    bu = bottom_up(p)
    metrics = tuple(replace(m, label=m.label.removesuffix(" (bottom-up)")) for m in bu.metrics)
    return replace(bu, metrics=metrics)


def bottom_up_comparison(cmp: Comparison, rules: Sequence = ()) -> Comparison:
    """``cmp``'s runs (or repeated-run groups) inverted and aligned in tree mode."""
    if cmp.groups is not None:
        b, n = cmp.groups
        return group_comparison([_inverted(p) for p in b], [_inverted(p) for p in n],
                                mode="tree", rules=rules)
    return align([_inverted(p) for p in cmp.runs], baseline=cmp.baseline,
                 current=cmp.current if cmp.n_runs > 1 else -1, mode="tree", rules=rules)


def bottom_up_metrics(bu: Comparison, wanted: Sequence[str] | None) -> list[str]:
    """The window's columns mapped onto the inverted tree's metrics (which are the self
    metrics: ``total_x`` -> ``self_x``), then the main metric; at most four."""
    out: list[str] = []
    for m in wanted or []:
        cand = "self_" + m.removeprefix("total_") if m.startswith("total_") else m
        if cand in bu.values:
            out.append(cand)
    main = bu.runs[bu.baseline].default_metric
    if main in bu.values:
        out.append(main)
    out = list(dict.fromkeys(out)) or list(bu.values)[:1]
    return out[:4]


class BottomUpView(QWidget):
    """Explanation line + :class:`DiffTreeView`, filled on first show."""

    def __init__(self, source: Comparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.cmp: Comparison | None = None
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
        """Show the row in the window's details pane (rows are this tab's own ids, so the
        other views are not told: their rows are top-down)."""
        details = getattr(self.window(), "details", None)
        if details is not None and self.cmp is not None and hasattr(details, "show_row"):
            try:
                details.show_row(self.cmp, row)
            except Exception:  # noqa: BLE001 - optional
                pass

    # ----- building ---------------------------------------------------------------------
    @property
    def computed(self) -> bool:
        return self.cmp is not None or self.error is not None

    def ensure(self) -> Comparison | None:
        """Invert, align and fill the tree now unless done already (tests, screenshots)."""
        if self.computed:
            return self.cmp
        win = self.window()
        rules = list(getattr(win, "rules", None) or [])
        wanted = getattr(win, "metrics", None)
        try:
            cmp = bottom_up_comparison(self.source, rules)
        except Exception as e:  # noqa: BLE001 - an optional view must not break the window
            self.error = f"{type(e).__name__}: {e}"
            self.note.setText(f"Bottom-up view not available: {self.error}")
            return None
        precompute(cmp)
        metrics = bottom_up_metrics(cmp, wanted if isinstance(wanted, list) else None)
        if cmp.n_runs == 2 and cmp.groups is None and cmp.n_rows <= NOISE_SYNC_ROWS:
            sampled = [m for m in metrics if cmp.metric_by_name[m].sampled]
            if sampled:
                try:
                    cmp.noise = single_run_noise(cmp, metrics=sampled)
                except Exception:  # noqa: BLE001 - fading is optional
                    cmp.noise = None
        self.cmp = cmp
        self.diff.icons = getattr(getattr(win, "diff", None), "icons", {}) or {}
        self.diff.set_comparison(cmp, metrics, self.scale)
        self.diff.legend.unit_text = "pp of run"
        main = metrics[0]
        v = cmp.values[main]
        key = np.fmax(v[:, cmp.current], v[:, cmp.baseline])
        self.diff.sort_by_key(key)
        self.diff.expand_to_depth(2)
        self.diff.fit_name_column()
        return cmp

    def status_counts(self) -> dict[str, int]:
        """Row statuses of the inverted comparison (empty before it is built)."""
        if self.cmp is None:
            return {}
        st = self.cmp.status
        return {s.label: int((st == s).sum()) for s in Status}
