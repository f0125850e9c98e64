"""Property tests: damaged copies of real corpus files never crash a reader, a cut is
never silent where the format can tell, and ``--lenient`` reports every line it skips.

Mutants come from :mod:`mutants` (shared with ``tests/bench/damage_counts.py``).  The
default budget keeps the whole module well under 60 s; set ``PROFDIFF_FUZZ_EXAMPLES``
(examples per property) for a longer hunt, e.g. ``PROFDIFF_FUZZ_EXAMPLES=2000``.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutants import (
    CORPUS,
    DATA,
    NOT_ASSERTED,
    content,
    fingerprint,
    judge,
    make,
    write,
)

from profdiff.parsers import load
from profdiff.parsers.errors import ProfdiffError

EXAMPLES = int(os.environ.get("PROFDIFF_FUZZ_EXAMPLES", "0")) or None
FUZZ = settings(max_examples=EXAMPLES or 8, deadline=None, derandomize=EXAMPLES is None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

_WHOLE: dict[str, tuple] = {}


def _whole(rel: str) -> tuple:
    if rel not in _WHOLE:
        _WHOLE[rel] = fingerprint(load(DATA / rel))
    return _WHOLE[rel]


IDS = [rel.split("/")[-1] for _fmt, rel in CORPUS]


@pytest.mark.parametrize(("fmt", "rel"), CORPUS, ids=IDS)
@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_mutants_give_a_profile_or_a_located_error(tmp_path_factory, fmt, rel, seed):
    m = make(rel, fmt, random.Random(seed))
    path = write(m, tmp_path_factory.mktemp("m"))
    verdict, detail = judge(m, path, _whole(rel), fmt=fmt)
    assert verdict != "internal", f"{m.kind}: {detail}"
    if verdict == "error":
        assert path.name in detail, detail  # the message names the file
    if fmt not in NOT_ASSERTED:
        assert verdict != "silent", f"{m.kind} cut to {len(m.data)} bytes loaded unmarked"


@pytest.mark.parametrize(("fmt", "rel"), [c for c in CORPUS if c[0] not in NOT_ASSERTED],
                         ids=[i for c, i in zip(CORPUS, IDS, strict=True)
                              if c[0] not in NOT_ASSERTED])
@FUZZ
@given(frac=st.floats(0.05, 0.999))
def test_a_cut_inside_a_line_is_always_marked(tmp_path_factory, fmt, rel, frac):
    """Every format can tell a last line without its newline (or a cut gzip stream)."""
    data, gz = content(rel)
    cut = int(len(data) * frac)
    while cut < len(data) and data[cut - 1 : cut] in (b"\n", b"\r"):
        cut += 1  # keep the cut inside a line
    if fmt == "pprof" or cut >= len(data):
        return  # binary protobuf: covered by the mutant property (error or marked)
    if data[:cut].rstrip() == data.rstrip():
        return  # only trailing whitespace went (a JSON file's last newline): nothing lost
    from mutants import Mutant

    m = Mutant(rel, fmt, "truncate-byte", True, data[:cut], gz)
    path = write(m, tmp_path_factory.mktemp("c"))
    verdict, detail = judge(m, path, _whole(rel), fmt=fmt)
    assert verdict in ("marked", "error"), (verdict, detail, cut)


@pytest.mark.parametrize(("fmt", "rel"), [c for c in CORPUS if c[0] not in NOT_ASSERTED],
                         ids=[i for c, i in zip(CORPUS, IDS, strict=True)
                              if c[0] not in NOT_ASSERTED])
@FUZZ
@given(frac=st.floats(0.02, 0.98))
def test_a_cut_gzip_stream_is_marked_and_says_where(tmp_path_factory, fmt, rel, frac):
    import gzip

    data, _gz = content(rel)
    packed = gzip.compress(data, mtime=0)
    cut = max(20, int(len(packed) * frac))
    path = tmp_path_factory.mktemp("g") / (Path(rel).name.removesuffix(".gz") + ".gz")
    path.write_bytes(packed[:cut])
    try:
        p = load(path, format=fmt)
    except ProfdiffError as e:
        assert path.name in str(e)
        return
    assert p.incomplete, "a cut gzip stream loaded as complete"
    assert "gzip stream" in p.incomplete_reason and "compressed" in p.incomplete_reason


LINE_FORMATS = [("ghc-prof", "hs-ad/v1/ad.prof"), ("ghc-hp", "ghc-hp/ghc-7.8-dilcue-2014-10.hp"),
                ("ghc-ticky", "ghc-ticky/hs-ad-v1.ticky.txt"),
                ("julia-mem", "julia-mem/gvfn-test.jl.mem"),
                ("julia-profile-print",
                 "julia-profile-print/julia-1.10-grass-eclipse-Profile.print.txt"),
                ("folded", "folded/flamegraph-perf-java-stacks-01-collapsed-all.txt")]


def _body_lines(fmt: str, lines: list[bytes]) -> list[int]:
    """Indices of data lines (not headers) where a garbage line may be inserted."""
    if fmt == "ghc-prof":
        start = next(i for i, ln in enumerate(lines) if b"no." in ln and b"entries" in ln) + 3
        return list(range(start, len(lines) - 2))
    if fmt == "ghc-hp":
        return [i for i, ln in enumerate(lines) if b"\t" in ln]
    if fmt == "ghc-ticky":
        start = next(i for i, ln in enumerate(lines) if b"STG Name" in ln) + 2
        end = next(i for i in range(start, len(lines)) if not lines[i].strip())
        return list(range(start + 1, end))
    if fmt == "julia-profile-print":
        return list(range(3, len(lines) - 3))
    return list(range(1, len(lines) - 1))


@pytest.mark.parametrize(("fmt", "rel"), LINE_FORMATS, ids=[r.split("/")[-1] for _f, r in LINE_FORMATS])
@FUZZ
@given(data=st.data())
def test_lenient_reports_every_skipped_line(tmp_path_factory, fmt, rel, data):
    raw, _gz = content(rel)
    lines = raw.split(b"\n")
    spots = _body_lines(fmt, lines)
    picks = sorted(set(data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=4))))
    bad = data.draw(st.sampled_from([b"9223372036854775808", b"@@ not a line @@",
                                     b"-1 -2 -3"]))
    for k, i in enumerate(picks):  # insert above line i (shifted by earlier inserts)
        lines.insert(i + k, _garbage(fmt, lines[i + k], bad))
    path = tmp_path_factory.mktemp("l") / Path(rel).name
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ProfdiffError) as exc:
        load(path, format=fmt)
    assert path.name in str(exc.value)
    p = load(path, format=fmt, lenient=True)
    inserted = [i + k + 1 for k, i in enumerate(picks)]  # 1-based line numbers
    text = "\n".join(p.warnings)
    for no in inserted:
        assert f":{no}:" in text or f"line {no}:" in text or f"line {no} " in text, (no, text)


def _garbage(fmt: str, model: bytes, bad: bytes) -> bytes:
    """A line shaped like ``model`` (so it lands in the same section) with a bad value."""
    if fmt == "ghc-hp":
        return model.rsplit(b"\t", 1)[0] + b"\t" + bad
    if fmt == "folded":
        return model.rsplit(b" ", 1)[0] + b" " + bad.replace(b" ", b"")
    if fmt == "julia-mem":
        return b" " + bad.replace(b" ", b"x") + b" x = 1" if bad[:1].isdigit() else b"@@ x"
    if fmt == "ghc-prof":
        head, _sep, _tail = model.rstrip().rpartition(b" ")
        return head + b" " + (bad if bad[:1].isdigit() else b"x.y")
    if fmt == "ghc-ticky":
        return b" " + (bad if bad[:1].isdigit() else b"zz") + b" 0 0   0  f"
    return b"  @@ " + bad


GHC_TREES = [c for c in CORPUS if c[0] in ("ghc-prof", "ghc-prof-json")]


@pytest.mark.parametrize(("fmt", "rel"), GHC_TREES, ids=[c[1].split("/")[-1] for c in GHC_TREES])
@FUZZ
@given(seed=st.integers(0, 2**32 - 1), lenient=st.booleans())
def test_mutants_pre_order_is_the_walks(tmp_path_factory, fmt, rel, seed, lenient):
    """The subtree ends a GHC reader offers (:meth:`Profile.offer_subtree_ends`) give a
    damaged file's tree the pre-order a walk of its parents gives, or are refused."""
    import numpy as np

    from profdiff.parsers.model import preorder_and_size

    m = make(rel, fmt, random.Random(seed))
    path = write(m, tmp_path_factory.mktemp("m"))
    try:
        p = load(path, lenient=lenient)
    except ProfdiffError:
        return
    pre, size = p.preorder_size
    ref_pre, ref_size = preorder_and_size(np.asarray(p.parent))
    assert np.array_equal(pre, ref_pre) and np.array_equal(size, ref_size), m.kind
