"""Suggested matches for rows that exist in only one run (renames the rules missed).

After alignment, a refactor shows as a *removed* row in the baseline and an *added* row in
the current run.  We score candidate pairs with evidence a user would weigh:

* name similarity (whole name, and the last ``.``-component: ``buildVectors.eval0`` vs
  ``buildFinMaps.eval0``), module similarity;
* the same parent row (tree mode): a renamed function usually keeps its callers;
* the same source file, with shifted lines tolerated;
* equal or close ``entries``: call counts are deterministic across builds of the same
  program, time is not (272,510,500 entries on both sides is strong evidence; 1 is not).

Only the *frontier* is considered: removed rows whose parent exists in both runs, and the
same for added rows, so a whole renamed subtree is one candidate, and once accepted its
children match by path.  Pairs are assigned greedily one-to-one by score.  An accepted
suggestion becomes a :class:`~viewer.rules.KeyMap` rule and the runs are re-aligned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np

from profdiff.parsers.model import Kind, Metric, Profile

from .compare import Comparison, KeyRule, Status, align
from .defaults import DEFAULT_MATCH_THRESHOLD
from .rules import KeyMap, ModuleRename

WEIGHTS = {"name": 0.25, "module": 0.10, "parent": 0.20, "source": 0.10, "entries": 0.35}
DEFAULT_THRESHOLD = DEFAULT_MATCH_THRESHOLD


@dataclass(frozen=True)
class Suggestion:
    removed_row: int
    added_row: int
    old_key: str
    new_key: str
    score: float
    evidence: dict = field(default_factory=dict, hash=False, compare=False)

    def describe(self) -> str:
        o = self.old_key.replace("\x1f", ".")
        n = self.new_key.replace("\x1f", ".")
        ev = ", ".join(f"{k} {v}" for k, v in self.evidence.items())
        return f"{o} -> {n} (score {self.score:.2f}: {ev})"


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio() if a or b else 1.0


def _file_line(src: str) -> tuple[str, int | None]:
    """``AD/Dual.hs:(38,1)-(43,48)`` -> (``AD/Dual.hs``, 38); ``<built-in>`` -> (src, None)."""
    if ":" not in src:
        return src, None
    f, _, rest = src.partition(":")
    digits = ""
    for ch in rest.lstrip("("):
        if ch.isdigit():
            digits += ch
        else:
            break
    return f, int(digits) if digits else None


def _entries_metric(cmp: Comparison) -> str | None:
    """A deterministic call-count metric: ``entries`` or any per-node count."""
    if "entries" in cmp.values:
        return "entries"
    for m in cmp.metrics:
        if m.kind is Kind.NODE and m.name in cmp.values:
            return m.name
    return None


_TAGS = re.compile(r"\s*\([^()]*\)|\{[^{}]*\}")


def _core_name(key: str) -> str:
    """The identity's name without kind tags ``(fun)`` and uniques ``{v r4Bn}``."""
    return _core_of(key.partition("\x1f")[2])


def _core_of(name: str) -> str:
    """:func:`_core_name` of a name (the part of a key after the module)."""
    return _TAGS.sub("", name).strip() or name


def _frontier(cmp: Comparison, rows: np.ndarray, run_a: int, run_b: int) -> np.ndarray:
    """Rows whose parent is a root or present in both runs."""
    par = cmp.parent[rows]
    ok = par < 0
    both = cmp.present[:, run_a] & cmp.present[:, run_b]
    ok |= both[np.maximum(par, 0)] & (par >= 0)
    return rows[ok]


def name_spread(cmp: Comparison, names: set[str]) -> dict[str, int]:
    """For each core name in ``names``: in how many modules it occurs in the run that has
    the most of them (baseline or current).

    Why: the same name in another module is evidence of a move only when the name is
    the module's own (``buildVectors``); ``<module>`` or ``__init__`` occur in hundreds of
    Python files, so two runs that sampled different imports read as 219 "renames"
    (``tqdm/__init__.py.<module> -> smmap/__init__.py.<module>``, name 1.00)."""
    if not names:
        return {}
    runs = (cmp.baseline, cmp.current)
    seen: dict[tuple[str, int], set[str]] = {}
    core: dict[str, str] = {}
    present = cmp.present
    for row, key in enumerate(cmp.keys.tolist()):
        module, _, name = str(key).partition("\x1f")
        c = core.get(name)
        if c is None:
            c = core[name] = _core_of(name)
        if c in names:
            for run in runs:
                if present[row, run]:
                    seen.setdefault((c, run), set()).add(module)
    return {n: max(len(seen.get((n, run), ())) for run in runs) for n in names}


def _beyond_sampling(cmp: Comparison, rows: np.ndarray) -> np.ndarray:
    """The ``rows`` (removed or added) whose absence from the other run is beyond the
    sampling error of a sampled main metric or its inclusive twin (:mod:`viewer.noise`);
    all of them when none is sampled.

    Why: two runs of a sampling profiler each miss functions the other caught a few
    times.  Paired by name alone they read as renames: the py-spy pair gave 29 at the
    auto-match threshold (``is_int -> is_dict``, ``__len__ -> __init__``, one sample
    each), none a rename."""
    from .noise import ensure_noise
    from .ranking import main_metrics

    main = main_metrics(cmp)  # and their inclusive twins: a caller's samples are its own
    sampled = [m.name for m in cmp.metrics
               if m.sampled and m.percent_of is None and m.name in cmp.values
               and (m.name in main or m.self_of in main)]
    if not sampled or cmp.n_runs < 2:
        return rows
    noise = ensure_noise(cmp, sampled)
    if noise is None:
        return rows
    keep = np.zeros(rows.size, dtype=bool)
    for m in sampled:
        if m in noise.metrics:
            keep |= np.asarray(noise.metrics[m].significant, dtype=bool)[rows]
    return rows[keep]


def worth_pairing(cmp: Comparison, rows: np.ndarray) -> np.ndarray:
    """The removed or added ``rows`` a rename could explain: all of them when the runs
    count calls, else (only samples) those whose absence from the other run is beyond
    sampling error (:func:`_beyond_sampling`): an absence within it is no removal."""
    return rows if _entries_metric(cmp) is not None else _beyond_sampling(cmp, rows)


MIN_MOVE_EVIDENCE = 2.0
"""A module moved when the names it kept weigh at least this much: two of its own names
(one is a coincidence a name rule states better)."""


def moved_modules(cmp: Comparison, removed: np.ndarray, added: np.ndarray,
                  suggestions: Sequence[Suggestion] = ()) -> list[tuple[tuple[str, str], int]]:
    """((old module, new module), how many removed names of the old module the new one
    added) for each module that moved, each old module to one place; linear, for
    comparisons with too many unmatched rows to score pairwise.

    A name weighs one over the number of modules it occurs in (:func:`name_spread`), and
    only the rows :func:`worth_pairing` keeps count.  Why: two py-spy runs of one program
    sampled different imports, and ``<module>`` plus ``__init__`` read as three moved
    modules (``multiprocessing/synchronize.py -> argparse.py``).  With ``suggestions``,
    only module pairs they support."""
    removed_keys = [str(k) for k in cmp.keys[worth_pairing(cmp, removed)]]
    added_in: dict[str, set[str]] = {}
    for k in (str(k) for k in cmp.keys[worth_pairing(cmp, added)]):
        m, _, n = k.partition("\x1f")
        added_in.setdefault(n, set()).add(m)
    spread = name_spread(cmp, {_core_of(k.partition("\x1f")[2]) for k in removed_keys
                               if k.partition("\x1f")[2] in added_in})
    weight: dict[tuple[str, str], float] = {}
    count: dict[tuple[str, str], int] = {}
    for k in removed_keys:
        om, _, n = k.partition("\x1f")
        w = 1.0 / max(spread.get(_core_of(n), 1), 1)
        for nm in added_in.get(n, ()):
            if nm != om:
                weight[(om, nm)] = weight.get((om, nm), 0.0) + w
                count[(om, nm)] = count.get((om, nm), 0) + 1
    if suggestions:
        backed = {(s.old_key.partition("\x1f")[0], s.new_key.partition("\x1f")[0])
                  for s in suggestions
                  if s.old_key.partition("\x1f")[2] == s.new_key.partition("\x1f")[2]}
        weight = {k: v for k, v in weight.items() if k in backed}
    best: dict[str, tuple[str, int]] = {}
    for (om, nm), w in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0])):
        if w >= MIN_MOVE_EVIDENCE - 1e-9 and om not in best \
                and nm not in {v[0] for v in best.values()}:
            best[om] = (nm, count[(om, nm)])
    return [((om, nm), n) for om, (nm, n) in best.items()]


def score_pair(cmp: Comparison, r: int, a: int, entries: str | None,
               spread: dict[str, int] | None = None) -> tuple[float, dict]:
    """The pair's score (weighted evidence, :data:`WEIGHTS`) and the evidence said.
    ``spread`` (:func:`name_spread`) discounts an equal name in another module by the
    number of modules that name occurs in."""
    ev: dict = {}
    parts: dict[str, float] = {}
    n_old, n_new = _core_name(str(cmp.keys[r])), _core_name(str(cmp.keys[a]))
    tail_old, tail_new = n_old.rsplit(".", 1)[-1], n_new.rsplit(".", 1)[-1]
    name_s = _ratio(n_old, n_new)
    if tail_old == tail_new and tail_old != n_old:
        name_s = max(name_s, 0.85)
    ev["name"] = f"{name_s:.2f}"
    k = (spread or {}).get(n_old, 1) if n_old == n_new else 1
    if k > 1 and cmp.module[r] != cmp.module[a]:
        name_s /= k  # a name every module has says nothing about where one went
        ev["name"] += f", a name in {k} modules"
    parts["name"] = name_s
    parts["module"] = 1.0 if cmp.module[r] == cmp.module[a] else _ratio(str(cmp.module[r]),
                                                                        str(cmp.module[a]))
    if cmp.mode == "tree":
        same_parent = cmp.parent[r] == cmp.parent[a]
        parts["parent"] = 1.0 if same_parent else 0.0
        ev["same caller"] = "yes" if same_parent else "no"
    f_old, l_old = _file_line(str(cmp.src[r]))
    f_new, l_new = _file_line(str(cmp.src[a]))
    if f_old and f_new and not f_old.startswith("<"):
        if f_old == f_new:
            shift = abs((l_old or 0) - (l_new or 0))
            parts["source"] = 1.0 if shift <= 50 else 0.6
            ev["source"] = f"same file, line shift {shift}" if l_old and l_new else "same file"
        else:
            parts["source"] = 0.5 * _ratio(f_old.rsplit("/", 1)[-1], f_new.rsplit("/", 1)[-1])
    if entries is not None:
        eo = float(cmp.values[entries][r, cmp.baseline])
        en = float(cmp.values[entries][a, cmp.current])
        if eo == en:
            s = 1.0 if eo >= 100 else (0.6 if eo >= 2 else 0.3)
            ev["entries"] = f"equal ({eo:,.0f})"
        elif max(eo, en) > 0 and abs(eo - en) / max(eo, en) <= 0.01:
            s = 0.7
            ev["entries"] = f"within 1% ({eo:,.0f} vs {en:,.0f})"
        else:
            s = 0.0
            ev["entries"] = f"differ ({eo:,.0f} vs {en:,.0f})"
        parts["entries"] = s
    total_w = sum(WEIGHTS[k] for k in parts)
    score = sum(WEIGHTS[k] * v for k, v in parts.items()) / total_w if total_w else 0.0
    return score, ev


def suggest_matches(cmp: Comparison, *, min_score: float = 0.5,
                    max_pairs: int = 200_000) -> list[Suggestion]:
    """Greedy one-to-one suggestions between removed and added rows, best first."""
    st = cmp.status
    removed = _frontier(cmp, np.flatnonzero(st == Status.REMOVED), cmp.baseline, cmp.current)
    added = _frontier(cmp, np.flatnonzero(st == Status.ADDED), cmp.baseline, cmp.current)
    if removed.size == 0 or added.size == 0:
        return []
    entries = _entries_metric(cmp)
    removed, added = worth_pairing(cmp, removed), worth_pairing(cmp, added)
    if removed.size == 0 or added.size == 0:
        return []
    spread = name_spread(cmp, {_core_name(str(cmp.keys[r])) for r in removed.tolist()}
                         & {_core_name(str(cmp.keys[a])) for a in added.tolist()})
    cands: list[tuple[float, int, int, dict]] = []
    if cmp.mode == "tree" and removed.size * added.size > max_pairs:
        by_parent: dict[int, list[int]] = {}
        for a in added.tolist():
            by_parent.setdefault(int(cmp.parent[a]), []).append(a)
        pairs = ((r, a) for r in removed.tolist() for a in by_parent.get(int(cmp.parent[r]), []))
    else:
        pairs = ((r, a) for r in removed.tolist() for a in added.tolist())
    for r, a in pairs:
        if cmp.keys[r] == cmp.keys[a]:
            continue  # same function under another caller: moved in the tree, not renamed
        s, ev = score_pair(cmp, r, a, entries, spread)
        if s >= min_score:
            cands.append((s, r, a, ev))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_r: set[int] = set()
    used_a: set[int] = set()
    best: dict[tuple[str, str], tuple[float, int, int, dict]] = {}
    sites: dict[tuple[str, str], int] = {}
    for s, r, a, ev in cands:
        if r in used_r or a in used_a:
            continue
        used_r.add(r)
        used_a.add(a)
        pair = (str(cmp.keys[r]), str(cmp.keys[a]))
        sites[pair] = sites.get(pair, 0) + 1
        best.setdefault(pair, (s, r, a, ev))
    out = []
    for pair, (s, r, a, ev) in best.items():  # one suggestion per key pair, best site's evidence
        if sites[pair] > 1:
            ev = {**ev, "call sites": sites[pair]}
        out.append(Suggestion(r, a, pair[0], pair[1], round(s, 3), ev))
    return out


RENUMBERED_FORMATS = frozenset({"ghc-ticky"})
"""Formats whose rows are the compiler's own binders (ticky's closures: ``lvl1``,
``go9``, ``$wgo3``), so a rebuild renumbers them.  A ``.prof`` names cost centres after
the source (its generated names are only CAFs): :func:`suggest_matches` handles those,
and its 714k-row trees do not pay the search."""


_NUMBERED = re.compile(r"^(.*?[^\d\s])\d+((?:\s.*)?)$")


def _stem(key: str) -> str:
    """The key with its name's trailing number dropped: ``AD.Eval<SEP>lvl1 (fun)`` ->
    ``AD.Eval<SEP>lvl (fun)``; a name without one is its own stem."""
    module, _, name = key.partition("\x1f")
    m = _NUMBERED.match(name)
    return f"{module}\x1f{m.group(1)}{m.group(2)}" if m else key


def renumbered(cmp: Comparison) -> list[Suggestion]:
    """Removed/added pairs that are one binder renumbered by the compiler: the same
    module and name up to a trailing number (``lvl1`` -> ``lvl``, ``go9`` -> ``go3``),
    and the same non-zero values of every deterministic metric (entries, allocation).
    A pair is taken only when it is the one such pair of both rows.

    Why by default: GHC numbers the bindings it floats out per module, so a rebuild
    renumbers them; hs-ad's ticky pair showed ``lvl1{v r4Bm}`` removed (-98,713,600 B)
    and ``lvl{v r47i}`` added (+98,713,600 B) as the second-largest change, for the same
    closure with 2,467,840 entries in both.  Equal exact counts under one stem leave no
    doubt, which a name-similarity suggestion cannot say."""
    if cmp.n_runs < 2 or _entries_metric(cmp) is None \
            or any(p.format not in RENUMBERED_FORMATS for p in cmp.runs):
        return []
    exact = [m.name for m in _exact_metrics(cmp)]
    st = cmp.status  # frontier only: below a renumbered node its children match by path
    removed = _frontier(cmp, np.flatnonzero(st == Status.REMOVED), cmp.baseline, cmp.current)
    added = _frontier(cmp, np.flatnonzero(st == Status.ADDED), cmp.baseline, cmp.current)
    if not removed.size or not added.size:
        return []

    stems = {int(r): _stem(str(cmp.keys[r])) for r in (*removed.tolist(), *added.tolist())}
    numbered = {stems[r] for r in stems if stems[r] != cmp.keys[r]}
    if not numbered:  # no name on either side ends in a number: nothing renumbered
        return []

    def signature(row: int, run: int) -> tuple | None:
        if stems[row] not in numbered:
            return None
        vals = tuple(float(cmp.values[m][row, run]) for m in exact)
        if not any(vals) or not all(np.isfinite(vals)):
            return None
        return (stems[row], int(cmp.parent[row]) if cmp.mode == "tree" else -1, vals)

    olds: dict[tuple, list[int]] = {}
    news: dict[tuple, list[int]] = {}
    for r in removed.tolist():
        if (sig := signature(r, cmp.baseline)) is not None:
            olds.setdefault(sig, []).append(r)
    for a in added.tolist():
        if (sig := signature(a, cmp.current)) is not None:
            news.setdefault(sig, []).append(a)
    out = []
    for sig, rs in olds.items():
        as_ = news.get(sig, [])
        if len(rs) == 1 and len(as_) == 1 and cmp.keys[rs[0]] != cmp.keys[as_[0]]:
            r, a = rs[0], as_[0]
            out.append(Suggestion(r, a, str(cmp.keys[r]), str(cmp.keys[a]), 1.0,
                                  {"renumbered": "same stem, same " + ", ".join(exact)}))
    return out


def align_renumbered(profiles: Sequence[Profile], *, baseline: int = 0, mode: str = "tree",
                     rules: Sequence[KeyRule] = ()) -> Comparison:
    """:func:`align`, with the compiler's renumbered binders (:func:`renumbered`) matched
    and a note naming them.  In tree mode a pair must also share its caller; the key map
    then matches the binder at every call site."""
    from . import compare  # looked up when called: the session's align, spied on in tests

    cmp = compare.align(profiles, baseline=baseline, mode=mode, rules=rules)
    found = renumbered(cmp) if len(profiles) > 1 else []
    if not found:
        return cmp
    pairs = list({(s.old_key, s.new_key): s for s in found}.values())
    what = "/".join(m.title for m in _exact_metrics(cmp))
    cmp = compare.align(profiles, baseline=baseline, mode=mode,
                        rules=[*rules, accept(pairs)])
    names = "; ".join(f"{s.old_key.partition(chr(31))[2]} -> {s.new_key.partition(chr(31))[2]}"
                      for s in pairs[:5])
    more = f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""
    cmp.notes.append(f"matched {len(pairs)} binder(s) the compiler renumbered (same module, "
                     f"name up to a trailing number, same {what} in both runs): {names}{more}")
    return cmp


def _exact_metrics(cmp: Comparison) -> list[Metric]:
    """The comparison's own exact counts (neither sampled nor timed, no percent and no
    inclusive sums): what :func:`renumbered` requires to be equal."""
    return [m for m in cmp.metrics if not m.sampled and not m.timed and m.percent_of is None
            and m.kind is not Kind.INCLUSIVE and m.name in cmp.values]


def accept(suggestions: Sequence[Suggestion]) -> KeyMap:
    """A rule mapping each suggestion's new key onto its old key (applied to every run)."""
    return KeyMap(tuple((s.new_key, s.old_key) for s in suggestions), origin="suggestion")


def module_moves(suggestions: Sequence[Suggestion], min_count: int = 2) -> dict[tuple[str, str], int]:
    """(new module, old module) -> how many suggestions keep the name and only change the
    module: a moved module (``HordeAd.Core.Delta`` -> ``HordeAd.Internal.Delta``)."""
    counts: dict[tuple[str, str], int] = {}
    for s in suggestions:
        om, _, on = s.old_key.partition("\x1f")
        nm, _, nn = s.new_key.partition("\x1f")
        if om != nm and on == nn:
            counts[(nm, om)] = counts.get((nm, om), 0) + 1
    return {k: v for k, v in counts.items() if v >= min_count}


def accept_all(suggestions: Sequence[Suggestion]) -> list[KeyRule]:
    """Rules for a batch of accepted suggestions: a module rename for each moved module
    (it also matches the module's CAFs and anything not suggested), key maps for the rest."""
    moves = module_moves(suggestions)
    rules: list[KeyRule] = [ModuleRename(new, old, prefix=False, origin="suggestion")
                            for (new, old) in moves]
    rest = [s for s in suggestions
            if (s.new_key.partition("\x1f")[0], s.old_key.partition("\x1f")[0]) not in moves]
    if rest:
        rules.append(accept(rest))
    return rules


def auto_match(
    profiles: Sequence[Profile], *, baseline: int = 0, mode: str = "tree",
    rules: Sequence[KeyRule] = (), threshold: float = DEFAULT_THRESHOLD, rounds: int = 3,
) -> tuple[Comparison, list[Suggestion]]:
    """Align, accept suggestions scoring >= ``threshold``, re-align (a few rounds).

    In tree mode the flat comparison is consulted too: a renamed function is one
    removed/added pair there however many call sites it has, and a moved module shows as
    many same-name pairs even where the tree's frontier is an all-zero ``CAF`` node.
    """
    rules = list(rules)
    accepted: list[Suggestion] = []
    cmp = align(profiles, baseline=baseline, mode=mode, rules=rules)
    for _ in range(rounds):
        good = suggest_matches(cmp, min_score=threshold)
        if mode == "tree":
            flat = align(profiles, baseline=baseline, mode="flat", rules=rules)
            seen = {(s.old_key, s.new_key) for s in good}
            used_old = {s.old_key for s in good}
            used_new = {s.new_key for s in good}
            for s in suggest_matches(flat, min_score=threshold):
                if ((s.old_key, s.new_key) not in seen and s.old_key not in used_old
                        and s.new_key not in used_new):
                    good.append(s)
        if not good:
            break
        accepted += good
        rules += accept_all(good)
        cmp = align(profiles, baseline=baseline, mode=mode, rules=rules)
    if accepted:
        moves = module_moves(accepted)
        parts = [f"module {old} -> {new} ({n} names)" for (new, old), n in moves.items()]
        parts += [s.describe() for s in accepted
                  if (s.new_key.partition("\x1f")[0], s.old_key.partition("\x1f")[0])
                  not in moves]
        cmp.notes.append(f"auto-matched {len(accepted)} renamed node(s): " + "; ".join(parts))
    return cmp, accepted
