"""The "Summary" tab: run totals, top changes with verdicts, renames, warnings.

Renders a :class:`viewer.summary.Summary` (built Qt-free) as one rich-text page in a
:class:`QTextBrowser`.  Every entry is an anchor; clicking it emits a request the main
window answers with its navigation API (show a row in the diff tree, the flame graph or
bottom-up; accept a rename rule; switch to a tab).  ``links`` lists every anchor with
what it asks for, so tests (and keyboard users, via Tab / Enter) reach the same actions.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser

from profdiff.parsers.model import Unit
from profdiff.viewer.summary import (
    NOISE,
    NOT_JUDGED,
    REAL,
    ROUNDING,
    Change,
    Summary,
    TotalRow,
)
from profdiff.viewer.units import (
    format_delta,
    format_rel,
    format_total_delta,
    format_value,
    timed_neutral,
)

from .widgets import format_total

WORSE, BETTER, NEUTRAL, MUTED = "#b2182b", "#1a7a30", "#333333", "#777777"
WARN = "#b35806"
_SECTION = ("<h3 style='margin-top:14px; margin-bottom:4px; background:#eceff3; "
            "color:#222'>&nbsp;{}</h3>")
_NOT_JUDGED_NOTE = ("  <i>Moved, not judged</i> = beyond the rounding of the printed values, "
                    "in metrics that follow the run's timing (heap censuses): one run per "
                    "side cannot tell that from run-to-run noise; open repeated runs of each "
                    "build to judge it.")


@dataclass(frozen=True)
class Link:
    """One anchor of the page: ``kind`` (tree, flame, bottom-up, heap, accept, rename,
    tab) and what it
    points at (a :class:`Change`, a rename offer, or a tab name)."""

    kind: str
    target: object
    text: str


class SummaryView(QTextBrowser):
    """The Summary page; requests go to the window through the signals below."""

    treeRequested = Signal(str, int)  # match key, tree row (-1: none)
    flameRequested = Signal(int)  # tree row
    bottomUpRequested = Signal(str)  # match key
    heapRequested = Signal(str)  # match key: highlight the band in "Heap over time"
    acceptRequested = Signal(object)  # a viewer.summary.RenameOffer
    renameRequested = Signal(object)  # show a RenameOffer's rows in the diff tree
    tabRequested = Signal(str)  # a view name for MainWindow.show_view

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("summaryView")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self.open_link)
        self.summary: Summary | None = None
        self.links: list[Link] = []
        self.has_bottom_up = False
        self.has_flame = True
        self.has_heap = False
        self.page_html = ""  # the page as written (toHtml() gives Qt's rewriting of it)
        self.setPlaceholderText("Open two runs to see what changed.")

    # ----- content ----------------------------------------------------------------------
    def set_summary(self, summary: Summary | None, *, flame: bool = True,
                    bottom_up: bool = False, heap: bool = False,
                    totals_tab: str | None = None) -> None:
        """Show ``summary``; ``flame`` / ``bottom_up`` / ``heap``: those tabs exist (offer
        links); ``totals_tab``: the view name listing every total, when the page shows
        a part."""
        self.summary = summary
        self.has_flame, self.has_bottom_up, self.has_heap = flame, bottom_up, heap
        self.links = []
        if summary is None:
            self.page_html = ""
            self.clear()
            return
        # renames before the changes: unmatched rows crowd the top of the change lists
        parts = [self._runs_html(summary), self._warnings_html(summary),
                 self._totals_html(summary, totals_tab), self._renames_html(summary),
                 self._changes_html(summary), self._hotspots_html(summary)]
        self.page_html = ("<body style='font-size:10pt'>" + "".join(p for p in parts if p)
                          + "</body>")
        self.setHtml(self.page_html)

    def _link(self, kind: str, target: object, text: str) -> str:
        self.links.append(Link(kind, target, text))
        return f"<a href='pd:{len(self.links) - 1}'>{html.escape(text)}</a>"

    def _runs_html(self, s: Summary) -> str:
        rows = []
        for r in s.runs:
            inc = f" <b style='color:{WARN}'>INCOMPLETE</b>" if r.incomplete else ""
            rows.append(f"<tr><td><b>{html.escape(r.role)}</b>&nbsp;&nbsp;</td>"
                        f"<td>{html.escape(r.label)}{inc}</td>"
                        f"<td style='color:{MUTED}'>&nbsp;&nbsp;{html.escape(r.format)}</td></tr>")
        return (_SECTION.format("Runs") + "<table cellspacing=0 cellpadding=2>"
                + "".join(rows) + "</table>")

    def _warnings_html(self, s: Summary) -> str:
        if not s.warnings:
            return ""
        items = []
        for w in s.warnings:
            warn = w.kind in ("incomplete", "incomparable", "reader")
            color = WARN if warn else MUTED
            mark = "⚠ " if warn else "note: "
            items.append(f"<div style='color:{color}; margin:2px'>{mark}"
                         f"{html.escape(w.text)}</div>")
        return _SECTION.format("Warnings and notes") + "".join(items)

    def _totals_html(self, s: Summary, totals_tab: str | None) -> str:
        if not s.totals:
            return ""
        others = [i for i in range(len(s.runs)) if i != s.baseline]
        head = "<tr><th align=left>total&nbsp;&nbsp;</th>" + "".join(
            f"<th align=right>&nbsp;&nbsp;{html.escape(r.role)}</th>" for r in s.runs)
        head += "".join(f"<th align=right>&nbsp;&nbsp;Δ {html.escape(s.runs[i].role)}</th>"
                        for i in others) + "<th></th></tr>"
        body = [head]
        for t in s.totals:
            cells = "".join(f"<td align=right>&nbsp;&nbsp;{format_total(v, t.unit)}</td>"
                            for v in t.values)
            once = t.timed and not s.grouped  # one measurement per side
            cells += "".join(f"<td align=right>&nbsp;&nbsp;"
                             f"{_total_delta(t, i, s.baseline, once)}</td>" for i in others)
            kind = "sampled" if t.sampled else "timed" if t.timed else ""
            note = (f"<td style='color:{MUTED}'>&nbsp;&nbsp;{kind}: one run is noisy</td>"
                    if kind and others and not s.grouped else "<td></td>")
            body.append(f"<tr><td>{html.escape(t.title)}</td>{cells}{note}</tr>")
        out = (_SECTION.format("Run totals") + "<table cellspacing=0 cellpadding=2>"
               + "".join(body) + "</table>")
        if totals_tab and s.n_totals > len(s.totals):
            out += (f"<div style='margin:2px'>{len(s.totals)} of {s.n_totals} totals; "
                    + self._link("tab", totals_tab, "all of them") + "</div>")
        return out

    def _changes_html(self, s: Summary) -> str:
        if not s.compared or not s.changes:
            return ""
        cur = s.runs[s.current]
        out = [_SECTION.format(f"Top changes: {html.escape(cur.role)} against the baseline")]
        if s.status_counts:
            c = s.status_counts
            fmt = s.runs[s.baseline].format
            noun = "cost centres" if fmt.startswith("ghc") else (
                "source lines" if fmt == "julia-mem" else "functions")
            out.append(f"<div style='color:{MUTED}; margin:2px'>{s.n_rows:,} {noun}: "
                       f"{c.get('changed', 0):,} changed, "
                       + (f"{c['moved']:,} moved (not judged), " if c.get("moved") else "")
                       + f"{c.get('added', 0):,} "
                       f"added, {c.get('removed', 0):,} removed, {c.get('same', 0):,} the "
                       "same.  Verdicts: <b>real</b> = beyond the rounding of the printed "
                       "values and beyond noise; <i>of run</i> = Δ as a share of the "
                       "baseline's total of that metric." + _NOT_JUDGED_NOTE * bool(
                           c.get("moved")) + "</div>")
        for mc in s.changes:
            count = (f"{mc.n_unjudged:,} moved, not judged" if mc.n_unjudged and not mc.n_real
                     else f"{mc.n_real:,} real change{'s' if mc.n_real != 1 else ''}")
            out.append(f"<h4 style='margin-top:8px; margin-bottom:2px'>"
                       f"{html.escape(mc.title)} <span style='color:{MUTED}; "
                       f"font-weight:normal'>({html.escape(mc.precision)}; {count})"
                       "</span></h4>")
            if not mc.changes:
                out.append(f"<div style='color:{MUTED}'>no row changed</div>")
                continue
            rows = ["<tr><th align=left>name</th><th align=right>&nbsp;&nbsp;baseline</th>"
                    "<th align=right>&nbsp;&nbsp;current</th><th align=right>&nbsp;&nbsp;Δ</th>"
                    "<th align=right>&nbsp;&nbsp;Δ%</th><th align=right>&nbsp;&nbsp;of run"
                    "</th><th align=left>&nbsp;&nbsp;verdict</th><th align=left>&nbsp;&nbsp;"
                    "show in</th></tr>"]
            rows += [self._change_row(c, mc.unit, mc.digits) for c in mc.changes]
            out.append("<table cellspacing=0 cellpadding=2>" + "".join(rows) + "</table>")
        return "".join(out)

    def _hotspots_html(self, s: Summary) -> str:
        if not s.hotspots:
            return ""
        out = [_SECTION.format("Top costs")]
        for mc in s.hotspots:
            out.append(f"<h4 style='margin-top:8px; margin-bottom:2px'>"
                       f"{html.escape(mc.title)} <span style='color:{MUTED}; "
                       f"font-weight:normal'>(own cost; {html.escape(mc.precision)})</span></h4>")
            rows = ["<tr><th align=left>name</th><th align=right>&nbsp;&nbsp;value</th>"
                    "<th align=right>&nbsp;&nbsp;of run</th><th align=left>&nbsp;&nbsp;"
                    "show in</th></tr>"]
            for c in mc.changes:
                rows.append(f"<tr><td>{html.escape(c.label)}</td><td align=right>&nbsp;&nbsp;"
                            f"{html.escape(format_value(c.new, mc.unit, rounding=mc.digits[1]))}</td>"
                            f"<td align=right>&nbsp;&nbsp;{c.share * 100:.2f}%</td>"
                            f"<td>&nbsp;&nbsp;{' · '.join(self._links_for(c))}</td></tr>")
            out.append("<table cellspacing=0 cellpadding=2>" + "".join(rows) + "</table>")
        return "".join(out)

    def _links_for(self, c: Change) -> list[str]:
        links = [self._link("tree", c, "tree")]
        if self.has_flame and c.tree_rows:
            links.append(self._link("flame", c, "flame"))
        if self.has_bottom_up:
            links.append(self._link("bottom-up", c, "bottom-up"))
        if self.has_heap:
            links.append(self._link("heap", c, "heap"))
        return links

    def _change_row(self, c: Change, unit: Unit, digits: tuple[float, float, float]) -> str:
        real = c.verdict == REAL
        color = (WORSE if c.worse else BETTER) if real and c.worse is not None else (
            NEUTRAL if real else MUTED)
        verdict = {REAL: "<b>real</b>", NOISE: "within noise", ROUNDING: "within rounding",
                   NOT_JUDGED: "not judged"}.get(c.verdict, html.escape(c.verdict))
        hb, hn, hd = digits
        share = _share_text(c.share)
        links = self._links_for(c)
        name = html.escape(c.label) + (f" <i style='color:{MUTED}'>({c.status})</i>"
                                       if c.status in ("added", "removed") else "")
        style = f"color:{color}" + ("" if real else "; font-style:italic")
        return (f"<tr><td>{name}</td>"
                f"<td align=right>&nbsp;&nbsp;{html.escape(format_value(c.base, unit, rounding=hb))}</td>"
                f"<td align=right>&nbsp;&nbsp;{html.escape(format_value(c.new, unit, rounding=hn))}</td>"
                f"<td align=right style='{style}'>&nbsp;&nbsp;"
                f"{html.escape(format_delta(c.delta, unit, rounding=hd))}</td>"
                f"<td align=right style='{style}'>&nbsp;&nbsp;{html.escape(format_rel(c.rel))}"
                f"</td><td align=right style='{style}'>&nbsp;&nbsp;{html.escape(share)}</td>"
                f"<td style='{style}'>&nbsp;&nbsp;{verdict}</td>"
                f"<td>&nbsp;&nbsp;{' · '.join(links)}</td></tr>")

    def _renames_html(self, s: Summary) -> str:
        if not s.renames:
            return ""
        out = [_SECTION.format("Unmatched: renames found"),
               f"<div style='color:{MUTED}; margin:2px'>Removed cost centres that look "
               "renamed in the current run.  Accepting a rule matches them and compares "
               "again (Tools ▸ Rename rules shows and saves it).</div>"]
        for o in s.renames:
            out.append(f"<div style='margin:3px'>{html.escape(o.text)} — "
                       + self._link("accept", o, "Accept") + " · "
                       + self._link("rename", o, "show in tree") + "</div>")
        return "".join(out)

    # ----- links ------------------------------------------------------------------------
    def open_link(self, url: QUrl | str) -> None:
        """Answer a click on an anchor ``pd:N`` (see :attr:`links`)."""
        text = url.toString() if isinstance(url, QUrl) else str(url)
        if not text.startswith("pd:"):
            return
        try:
            link = self.links[int(text[3:])]
        except (ValueError, IndexError):
            return
        self.activate(link)

    def activate(self, link: Link) -> None:
        t = link.target
        if link.kind == "tree" and isinstance(t, Change):
            self.treeRequested.emit(t.key, t.tree_rows[0] if t.tree_rows else -1)
        elif link.kind == "flame" and isinstance(t, Change) and t.tree_rows:
            self.flameRequested.emit(t.tree_rows[0])
        elif link.kind == "bottom-up" and isinstance(t, Change):
            self.bottomUpRequested.emit(t.key)
        elif link.kind == "heap" and isinstance(t, Change):
            self.heapRequested.emit(t.key)
        elif link.kind == "accept":
            self.acceptRequested.emit(t)
        elif link.kind == "rename":
            self.renameRequested.emit(t)
        elif link.kind == "tab":
            self.tabRequested.emit(str(t))

    def links_of(self, kind: str) -> list[Link]:
        return [k for k in self.links if k.kind == kind]


def _total_delta(t: TotalRow, i: int, baseline: int, measured_once: bool = False) -> str:
    """A total's Δ, coloured by its direction; not for a total measured once that moved
    within :data:`~viewer.units.TIMED_NEUTRAL` (a heap profile's peak, −4.4 %, read
    "better" in green beside "timed: one run is noisy")."""
    d, r = t.deltas[i], t.rels[i]
    if d is None:
        return "-"
    worse = (d > 0) if t.better == "lower" else (d < 0) if t.better == "higher" else None
    if measured_once and timed_neutral(r):
        worse = None
    color = MUTED if not d or worse is None else (WORSE if worse else BETTER)
    text = format_total_delta(t.values[baseline], t.values[i], t.unit)
    return (f"<span style='color:{color}'><b>{html.escape(text)}</b> "
            f"({html.escape(format_rel(r))})</span>")


def _share_text(share: float) -> str:
    """A change as a share of the run, to 0.01 %: ``+<0.01%`` for a change too small to
    show there (a stray 32-byte allocation of 343 MB), never ``+0.00%``, which reads as
    no change beside a "real" verdict."""
    pct = share * 100
    if pct and abs(pct) < 0.005:
        return ("+" if pct > 0 else "−") + "<0.01%"
    return f"{pct:+.2f}%".replace("-", "−")
