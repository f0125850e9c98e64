"""Julia allocation profiles (PProf.jl ``Allocs``) are samples of the allocations:
``Profile.Allocs`` records each with probability ``sample_rate`` (0.1 by default) and the
file does not say the rate.  Two recordings of one program are made here from one real
profile by keeping each recorded allocation with probability 1/2 (two seeds): what two
sampled runs of the same program look like.  Nothing changed between them, so nothing
may read "changed"; a site whose allocations were doubled must."""

from __future__ import annotations

import gzip
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import load
from profdiff.parsers.proto import profile_pb2
from profdiff.viewer.compare import Status, align
from profdiff.viewer.noise import single_run_noise

TTD = Path(__file__).resolve().parent.parent / "data" / "pprof" / \
    "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz"


def _profile() -> profile_pb2.Profile:
    p = profile_pb2.Profile()
    p.ParseFromString(gzip.decompress(TTD.read_bytes()))
    return p


def _write(prof: profile_pb2.Profile, samples, path: Path) -> Path:
    out = profile_pb2.Profile()
    out.CopyFrom(prof)
    del out.sample[:]
    out.sample.extend(samples)
    path.write_bytes(gzip.compress(out.SerializeToString()))
    return path


def _half(prof: profile_pb2.Profile, seed: int) -> list:
    rng = random.Random(seed)
    return [s for s in prof.sample if rng.random() < 0.5]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("allocs")
    prof = _profile()
    a, b = _half(prof, 1), _half(prof, 2)
    # the regression: every sampled allocation at one site, twice (a site with 40-80
    # recorded allocations, so neither tiny nor dominant)
    site = Counter(s.location_id[0] for s in b)
    leaf = next(loc for loc, n in site.most_common() if 40 <= n <= 80)
    grown = b + [s for s in b if s.location_id[0] == leaf]
    return (_write(prof, a, d / "a.pb.gz"), _write(prof, b, d / "b.pb.gz"),
            _write(prof, grown, d / "grown.pb.gz"), leaf, prof)


def _statuses(a: Path, b: Path, mode: str = "flat", **options):
    cmp = align([load(a, **options), load(b, **options)], mode=mode)
    cmp.add_noise(single_run_noise(cmp, metrics=cmp.status_metrics(sampled_only=True)))
    return cmp


def test_two_samples_of_one_recording_read_unchanged(pair):
    a, b, _grown, _leaf, _prof = pair
    sampled = _statuses(a, b)
    counts = sampled.status_counts()
    assert counts["changed"] == 0 and counts["same"] > 150
    # read as exact counts (--alloc-sample-rate 1), nearly every shared row "changed"
    exact = _statuses(a, b, alloc_sample_rate=1)
    shared = exact.present.all(axis=1)
    moved = np.zeros(exact.n_rows, bool)
    for m in ("self_alloc_count", "self_alloc_bytes", "total_alloc_count",
              "total_alloc_bytes"):
        moved |= exact.value(m, 0) != exact.value(m, 1)
    assert exact.status_counts()["changed"] == int((moved & shared).sum()) > 150
    # the call tree too: callers whose bytes mix large and small allocations included
    tree = _statuses(a, b, mode="tree")
    assert tree.status_counts()["changed"] == 0 and tree.status_counts()["same"] > 7000
    assert _statuses(a, b, mode="tree", alloc_sample_rate=1).status_counts()["changed"] > 5000


def test_a_site_whose_allocations_doubled_is_changed(pair):
    a, _b, grown, leaf, prof = pair
    cmp = _statuses(a, grown)
    changed = {str(cmp.name[r]) for r in np.flatnonzero(cmp.status == Status.CHANGED)}
    fn = {f.id: f for f in prof.function}
    loc = next(x for x in prof.location if x.id == leaf)
    leaf_name = prof.string_table[fn[loc.line[0].function_id].name]
    assert leaf_name in changed
    assert len(changed) <= 3  # the site (and callers whose allocations it is)
    # (in the call tree its 42 allocations are spread over many call paths, each too
    # few to tell a doubling from sampling error: the flat row is where it shows)


def test_bytes_are_judged_by_their_allocations(pair):
    """One sampled 1 kB allocation is one sample: as a share of the run's bytes it
    weighed as ~23, and bytes alone read rows "changed" whose counts did not move."""
    a, b, *_ = pair
    cmp = _statuses(a, b)
    for m in ("self_alloc_bytes", "total_alloc_bytes"):
        assert cmp.metric_by_name[m].count_of is not None
        assert not cmp.noise.metrics[m].significant.any()


def test_the_sampling_assumption_is_said_where_the_counts_are_read(pair, capsys, tmp_path):
    """The CLI header, the Summary's notes and the HTML report's notes say the counts
    were read as samples and which option makes them exact; with that option, nothing."""
    from profdiff.viewer.cli import main
    from profdiff.viewer.reading_notes import ALLOCATIONS_SAMPLED
    from profdiff.viewer.session import Session, SessionSpec
    from profdiff.viewer.summary import build_summary

    a, b, *_ = pair
    assert main(["diff", str(a), str(b)]) == 0
    assert f"note: {ALLOCATIONS_SAMPLED}" in capsys.readouterr().out
    assert main(["diff", str(a), str(b), "--alloc-sample-rate", "1"]) == 0
    assert "--alloc-sample-rate 1" not in capsys.readouterr().out
    sm = build_summary(Session.open(SessionSpec(files=(str(a), str(b)))))
    assert ALLOCATIONS_SAMPLED in [n.text for n in sm.warnings]
    out = tmp_path / "r.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    assert "alloc-sample-rate 1 (in the app: File ▸ Reading options) judges them as exact" \
        in out.read_text(encoding="utf-8")
