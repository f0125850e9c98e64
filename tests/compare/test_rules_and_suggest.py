"""Rename rules and match suggestions on real ticky files of the hs-ad pair.

v2 renames ``AD.Dual.sigmoidD`` to ``logisticD`` (same code, 12,928 entries in both).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profdiff.parsers import load
from profdiff.viewer.compare import MATCHED_BY, Status, align
from profdiff.viewer.rules import (
    KeyMap,
    ModuleRename,
    NameRename,
    RegexRewrite,
    load_rules_file,
    name_rule,
    preset_rules,
    save_rules_file,
)
from profdiff.viewer.suggest import auto_match, suggest_matches

DATA = Path(__file__).parents[1] / "data"


def pair():
    return (load(DATA / "ghc-ticky/hs-ad-v1.ticky.txt"),
            load(DATA / "ghc-ticky/hs-ad-v2.ticky.txt"))


def rows_named(cmp, fragment):
    return [i for i in range(cmp.n_rows) if fragment in str(cmp.name[i])]


def test_exact_matching_shows_rename_as_removed_and_added():
    cmp = align(pair(), mode="flat")
    (old,) = rows_named(cmp, "sigmoidD")
    (new,) = rows_named(cmp, "logisticD")
    assert cmp.status[old] == Status.REMOVED and cmp.status[new] == Status.ADDED


def test_name_rule_matches_renamed_closure():
    a, b = pair()
    # ticky identities are "name (kind)"; a rule on the identity name
    rule = NameRename("logisticD (fun)", "sigmoidD (fun)")
    cmp = align([a, b], mode="flat", rules=[rule])
    (row,) = rows_named(cmp, "sigmoidD")
    assert cmp.status[row] == Status.SAME
    assert cmp.value("entries", 0)[row] == cmp.value("entries", 1)[row] == 12_928
    assert MATCHED_BY[cmp.matched_by[row]] == "rule"
    assert not rows_named(cmp, "logisticD")  # displayed under the baseline's name


def test_auto_match_accepts_rename_and_keeps_weak_candidates_apart():
    a, b = pair()
    cmp0 = align([a, b], mode="flat")
    sugg = {(s.old_key.split("\x1f")[1], s.new_key.split("\x1f")[1]): s
            for s in suggest_matches(cmp0, min_score=0.3)}
    assert ("sigmoidD (fun)", "logisticD (fun)") in sugg
    cmp, accepted = auto_match([a, b], mode="flat")
    names = {s.old_key.split("\x1f")[1] for s in accepted}
    assert "sigmoidD (fun)" in names
    # drainPending -> backprop4 has equal entries but nothing else in common: not accepted
    assert "drainPending (fun)" not in names
    (row,) = rows_named(cmp, "sigmoidD")
    assert MATCHED_BY[cmp.matched_by[row]] == "suggestion"
    assert cmp.status[row] == Status.SAME
    # every other row keeps its exact-key status: no false merges
    assert cmp.n_rows == cmp0.n_rows - len(accepted)
    assert any("auto-matched" in n for n in cmp.notes)


def test_module_prefix_and_regex_rules():
    keys = np.array(["HordeAd.Core.Delta\x1feval0", "HordeAd.Core\x1fx",
                     "Other\x1f$wgo"], dtype=object)
    out = ModuleRename("HordeAd.Core", "HordeAd.Internal")(keys)
    assert out.tolist()[:2] == ["HordeAd.Internal.Delta\x1feval0", "HordeAd.Internal\x1fx"]
    out = RegexRewrite(r"^\$w", "")(keys)
    assert out[2] == "Other\x1fgo"
    ghc = preset_rules(["ghc"])
    k = np.array(["GHC.Internal.Base\x1f$wfoo", "M\x1fCAF:main11"], dtype=object)
    for r in ghc:
        k = r(k)
    assert k.tolist() == ["GHC.Base\x1ffoo", "M\x1fCAF:main"]
    r = name_rule("AD.Dual:sigmoidD=logisticD")
    assert r == NameRename("sigmoidD", "logisticD", "AD.Dual")


def test_rules_file_round_trip(tmp_path):
    rules = [
        ModuleRename("HordeAd.Core.Delta", "HordeAd.Internal.Delta"),
        NameRename("buildVectors.eval0", "buildFinMaps.eval0"),
        RegexRewrite(r"^\$s", ""),
        KeyMap((("AD.Dual\x1flogisticD", "AD.Dual\x1fsigmoidD"),)),
    ]
    path = tmp_path / ".profdiff.toml"
    save_rules_file(path, rules, presets=["ghc"])
    loaded = load_rules_file(path)
    assert loaded[:3] == rules[:3]
    assert loaded[-1].pairs == rules[-1].pairs
    assert len(loaded) == 4 + len(preset_rules(["ghc"]))


def test_prof_tree_auto_match_renamed_function():
    hs = DATA / "hs-ad"
    a, b = load(hs / "v1/ad.prof"), load(hs / "v2/ad.prof")
    cmp0 = align([a, b], mode="tree")
    assert cmp0.status_counts()["removed"] == 7 and cmp0.status_counts()["added"] == 7
    cmp, accepted = auto_match([a, b], mode="tree")
    pairs = {(s.old_key, s.new_key) for s in accepted}
    assert pairs == {("AD.Dual\x1fsigmoidD", "AD.Dual\x1flogisticD"),
                     ("AD.Dual\x1fsigmoidD.s", "AD.Dual\x1flogisticD.s")}
    counts = cmp.status_counts()
    assert counts["added"] == 0 and counts["removed"] == 0
    # the renamed node now carries its delta: entries identical at every call site
    rows = [i for i in range(cmp.n_rows) if cmp.name[i] == "sigmoidD"]
    assert len(rows) == 3
    assert all(cmp.value("entries", 0)[i] == cmp.value("entries", 1)[i] > 0 for i in rows)
    assert {MATCHED_BY[cmp.matched_by[i]] for i in rows} == {"suggestion"}
    # unrelated rows were matched by path only
    assert (cmp.matched_by[[i for i in range(cmp.n_rows) if "sigmoid" not in cmp.name[i]
                            and cmp.name[i] != "scaleDelta"]] == 0).all()


def test_corpus_module_move_is_found():
    """StartStopFRP (Sep 26 -> Sep 27 2016) moved Control.StartStop.ReworkedCore to
    Control.StartStop.Core and ReworkedRun to Run: exact matching sees 69 removed and 69
    added cost centres."""
    prof = DATA / "ghc-prof"
    a = load(prof / "ghc-7.10.3-startstopfrp-example-2016-09-26.prof")
    b = load(prof / "ghc-7.10.3-startstopfrp-example-2016-09-27.prof")
    cmp0 = align([a, b], mode="flat")
    assert cmp0.status_counts()["removed"] == 69
    cmp, accepted = auto_match([a, b], mode="flat")
    assert any("module Control.StartStop.ReworkedCore -> Control.StartStop.Core" in n
               for n in cmp.notes)
    assert cmp.status_counts()["removed"] <= 5 and cmp.status_counts()["added"] <= 5
    # every accepted pair kept its name or has (near) equal entries: no guesses
    for s in accepted:
        same_name = s.old_key.split("\x1f")[1] == s.new_key.split("\x1f")[1]
        assert same_name or "equal" in s.evidence.get("entries", "")
    # the tree view of the same pair benefits from the same rules
    tree, _ = auto_match([a, b], mode="tree")
    assert tree.status_counts()["removed"] < align([a, b]).status_counts()["removed"] / 4


def test_corpus_pairs_without_renames_accept_nothing():
    prof = DATA / "ghc-prof"
    for x, y in [("ghc-7.x-ilp-main1-v1.prof", "ghc-7.x-ilp-main-v2.prof"),
                 ("ghc-8.4.4-square-game-baseline-2019-04-03.prof",
                  "ghc-8.4.4-square-game-tilesets-2019-04-04.prof"),
                 ("ghc-7.8.4-hcy2c-before-regex-removal-2015-09-09.prof",
                  "ghc-7.8.4-hcy2c-after-regex-removal-2015-09-09.prof")]:
        for mode in ("flat", "tree"):
            _, accepted = auto_match([load(prof / x), load(prof / y)], mode=mode)
            assert accepted == [], (x, mode, [s.describe() for s in accepted])


def _folded_frame_samples(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for ln in text.splitlines():
        stack, _, n = ln.rpartition(" ")
        for frame in set(stack.split(";")):
            out[frame] = out.get(frame, 0) + int(n)
    return out


def test_sampled_runs_suggest_only_absences_beyond_sampling_error(tmp_path):
    """Two samplings of one program each miss functions the other caught a few times;
    paired by name alone they read as renames (the py-spy pair: 219 auto-matched, all
    noise, e.g. tqdm/__init__.py.<module> -> smmap/__init__.py.<module>).  A hot
    function renamed (60 samples) is still suggested; a one-sample one is not."""
    from profdiff.viewer.suggest import DEFAULT_THRESHOLD

    src = (DATA / "folded" / "inferno-vertx-collapsed-unsorted-1.txt").read_text()
    counts = _folded_frame_samples(src)
    hot = "sun/nio/ch/FileDispatcherImpl:.write0_[j]"
    cold = sorted(f for f, n in counts.items() if n == 1 and f.endswith("_[k]"))[0]
    assert counts[hot] == 60
    renamed = src.replace(hot, hot.replace("write0", "writeZero"))
    renamed = renamed.replace(cold, cold.replace("_[k]", "_v2_[k]"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(src)
    b.write_text(renamed)
    cmp = align([load(a), load(b)], mode="flat")
    got = {(s.old_key.split("\x1f")[1], s.new_key.split("\x1f")[1])
           for s in suggest_matches(cmp)}
    assert (hot, hot.replace("write0", "writeZero")) in got
    assert not any(old == cold for old, _ in got)
    sp = DATA / "speedscope"
    runs = [load(sp / f"pyspy-0.4.1-self-driving-sim-run-{x}.speedscope.json.gz") for x in "ab"]
    cmp = align(runs, mode="flat")
    assert (cmp.status == Status.REMOVED).sum() > 100  # absent from one sampling or the other
    assert suggest_matches(cmp, min_score=DEFAULT_THRESHOLD) == []


def test_a_name_every_module_has_is_no_evidence_of_a_move():
    """name_spread: <module> occurs in hundreds of files of the py-spy runs."""
    from profdiff.viewer.suggest import name_spread

    sp = DATA / "speedscope"
    runs = [load(sp / f"pyspy-0.4.1-self-driving-sim-run-{x}.speedscope.json.gz") for x in "ab"]
    cmp = align(runs, mode="flat")
    spread = name_spread(cmp, {"<module>", "sigmoid_not_there"})
    assert spread["<module>"] > 100 and spread["sigmoid_not_there"] == 0


def test_renumbered_binders_are_matched_by_default():
    """GHC numbers floated-out bindings per module, so a rebuild renumbers them: hs-ad's
    ticky pair has lvl1{v r4Bm} (v1) and lvl{v r47i} (v2), 2,467,840 entries and
    98,713,600 bytes in both.  The session matches them (and says so); drainPending ->
    backprop4 (another name, same entries) stays a suggestion; names that only look alike
    with other counts are not matched."""
    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.suggest import renumbered

    files = (str(DATA / "ghc-ticky/hs-ad-v1.ticky.txt"), str(DATA / "ghc-ticky/hs-ad-v2.ticky.txt"))
    found = renumbered(align(pair(), mode="flat"))
    assert [(s.old_key, s.new_key) for s in found] == [("AD.Eval\x1flvl1 (fun)",
                                                        "AD.Eval\x1flvl (fun)")]
    for mode in ("flat", "tree"):
        cmp = Session.open(SessionSpec(files=files)).comparison(mode)
        (row,) = np.flatnonzero(cmp.keys == "AD.Eval\x1flvl1 (fun)")
        assert cmp.status[row] == Status.SAME and MATCHED_BY[cmp.matched_by[row]] == "suggestion"
        assert cmp.values["entries"][row].tolist() == [2_467_840, 2_467_840]
        assert "AD.Eval\x1flvl (fun)" not in cmp.keys.tolist()
        assert any("renumbered" in n and "lvl1 (fun) -> lvl (fun)" in n for n in cmp.notes)
        assert "AD.Eval\x1fdrainPending (fun)" in cmp.keys.tolist()  # a suggestion only
    a, b = pair()
    b_vals = {k: v.copy() for k, v in b.values.items()}
    (i,) = np.flatnonzero(b.frames.key[b.frame] == "AD.Eval\x1flvl (fun)")
    b_vals["entries"][i] += 1  # one entry more: no longer beyond doubt
    from dataclasses import replace

    assert renumbered(align([a, replace(b, values=b_vals)], mode="flat")) == []


def test_moved_modules_are_told_by_their_own_names_beyond_sampling(tmp_path):
    """The Summary's linear search for moved modules (too many unmatched rows to score
    pairwise): the py-spy pair's imports, sampled differently, share only names every
    file has (``<module>``, ``__init__``) and are no move; the simulator's sensor.py
    renamed in the second run (its 35 frames, 1,176 samples of ray intersection among
    them) is one."""
    import gzip

    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.summary import MAX_SUGGEST_PAIRS, build_summary

    sp = DATA / "speedscope"
    a = sp / "pyspy-0.4.1-self-driving-sim-run-a.speedscope.json.gz"
    b = sp / "pyspy-0.4.1-self-driving-sim-run-b.speedscope.json.gz"
    s = Session(SessionSpec(), [load(a), load(b)])
    st = s.flat.status
    assert (st == Status.REMOVED).sum() * (st == Status.ADDED).sum() > MAX_SUGGEST_PAIRS
    assert not [o for o in build_summary(s).renames if o.kind == "module"]
    old = "/simulator/src/simulator/sensor.py"
    moved = tmp_path / "run-b-moved.speedscope.json"
    moved.write_text(gzip.decompress(b.read_bytes()).decode().replace(
        old, "/simulator/src/simulator/lidar.py"))
    s = Session(SessionSpec(), [load(a), load(moved)])
    offers = [o for o in build_summary(s).renames if o.kind == "module"]
    assert len(offers) == 1
    o = offers[0]
    assert o.old.endswith(old) and o.new.endswith("/simulator/lidar.py") and o.count >= 2
