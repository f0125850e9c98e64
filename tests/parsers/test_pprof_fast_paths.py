"""The pprof reader's whole-array paths give exactly what the sample-by-sample paths give.

The reader groups samples from their framing (:mod:`parsers.pprof_wire`) and expands
stacks with numpy; each has a plain path it falls back to for unusual input.  These
tests run both on the real profiles in tests/data/pprof and on hand-made layouts the
fast paths must refuse (so the plain path decides)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import pprof, pprof_wire
from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.gzip_io import read_all
from profdiff.parsers.proto import profile_pb2

DATA = Path(__file__).parent.parent / "data" / "pprof"
MODERN = sorted(p.name for p in DATA.iterdir()
                if p.name != "SOURCES.md" and "legacy" not in p.name)


def _steps(path: Path, granularity: str = "functions"):
    data, cut = read_all(path)
    prof, st = pprof._parse(path, data, cut)
    s = pprof._Strings(path, st, False)
    header = pprof._read_header(prof, s, path, None)
    frames = pprof._Frames(prof, s, TreeBuilder(header.self_names), granularity, path, False)
    return prof, st, s, header, frames


def _plain(path: Path, granularity: str = "functions"):
    prof, st, s, header, fr = _steps(path, granularity)
    raw = list(prof.sample)
    smp = pprof._read_samples(prof, st, s, header, fr, pprof._distinct_samples(path, raw, ""),
                              False, None)
    return smp, fr


def _framed(path: Path, granularity: str = "functions"):
    prof, st, s, header, fr = _steps(path, granularity)
    return pprof._read_samples_framed(st, s, header, fr, list(prof.sample)), fr


def _same_samples(a: pprof._Samples, b: pprof._Samples) -> None:
    assert a.stacks == b.stacks
    np.testing.assert_array_equal(a.sums, b.sums)
    np.testing.assert_array_equal(a.run_totals, b.run_totals)
    assert a.by_type == b.by_type
    assert list(a.label_keys.items()) == list(b.label_keys.items())


@pytest.mark.parametrize("name", MODERN)
def test_framed_samples_equal_sample_by_sample(name):
    plain, fr_plain = _plain(DATA / name)
    framed, fr_framed = _framed(DATA / name)
    if framed is None:  # type labels (Julia allocation profiles): only the plain path
        assert "alloc" in name
        return
    _same_samples(framed, plain)
    assert fr_framed.loc_frames == fr_plain.loc_frames  # frames interned in the same order


def test_framed_path_covers_go_and_julia_cpu():
    # Go writes two values unpacked, Julia 1.11 gives every sample a unique cycle_clock
    for name in ("go-resolv-2018-cpu.pprof", "google-pprof-large.cpu.pb.gz",
                 "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz"):
        assert _framed(DATA / name)[0] is not None, name


@pytest.mark.parametrize("name", MODERN)
@pytest.mark.parametrize("granularity", ["functions", "lines"])
def test_stack_arrays_equal_loop(name, granularity):
    smp, fr = _plain(DATA / name, granularity)
    got = pprof._stack_frames_arrays(fr, smp)
    flat, lengths, used = pprof._stack_frames_loop(fr, smp)
    assert got is not None
    np.testing.assert_array_equal(got[0], flat)
    np.testing.assert_array_equal(got[1], lengths)
    np.testing.assert_array_equal(got[2], used)


def _profile(samples: list[bytes]) -> bytes:
    """A one-function profile whose samples are the given encodings."""
    p = profile_pb2.Profile()
    p.string_table.extend(["", "samples", "count", "f", "f.go", "thread"])
    p.sample_type.add(type=1, unit=2)
    p.function.add(id=1, name=3, filename=4)
    p.location.add(id=1).line.add(function_id=1, line=3)
    p.location.add(id=2).line.add(function_id=1, line=4)
    head = p.SerializeToString()
    return head + b"".join(b"\x12" + bytes([len(s)]) + s for s in samples)


def _sample(*fields: bytes) -> bytes:
    return b"".join(fields)


LOC_12 = b"\x0a\x02\x01\x02"  # location_id [1, 2], packed
LOC_1 = b"\x08\x01"  # location_id 1, unpacked
VAL = {3: b"\x12\x01\x03", 5: b"\x10\x05"}  # value 3 packed, value 5 unpacked
LABEL = b"\x1a\x04\x08\x05\x18\x07"  # label key "thread", num 7


@pytest.mark.parametrize("layout,framed", [
    ([_sample(LOC_12, VAL[3]), _sample(LOC_12, VAL[3]), _sample(LOC_1, VAL[5], LABEL)], True),
    ([_sample(VAL[5], LOC_12), _sample(LOC_1, LOC_12[0:0], VAL[3])], True),  # values first
    ([_sample(LOC_1, LABEL, b"\x08\x02", VAL[5])], False),  # a label between two ids
    ([_sample(LOC_12, VAL[3], b"\x20\x01")], False),  # a field Sample does not have
    ([_sample(LOC_12, LOC_1, VAL[3])], True),  # packed then unpacked ids: next to each other
])
def test_layouts_read_the_same_either_way(tmp_path, layout, framed):
    path = tmp_path / "x.pb.gz"
    path.write_bytes(gzip.compress(_profile(layout)))
    got, _fr = _framed(path)
    assert (got is not None) == framed
    plain, _fr = _plain(path)
    if got is not None:
        _same_samples(got, plain)
    full = pprof.read(path)  # whichever path ran: the totals an independent decode gives
    decoded = profile_pb2.Profile.FromString(gzip.decompress(path.read_bytes()))
    assert full.totals["self_samples"] == sum(v for s in decoded.sample for v in s.value)


def test_byte_identical_samples_are_counted_each(tmp_path):
    path = tmp_path / "dup.pb.gz"
    path.write_bytes(gzip.compress(_profile([_sample(LOC_12, VAL[3])] * 5
                                            + [_sample(LOC_1, VAL[5])])))
    p = pprof.read(path)
    assert p.totals["self_samples"] == 5 * 3 + 5
    # both locations are function f: the root f holds the lone sample, its child f the 5
    assert p.values["self_samples"].tolist() == [5, 15]
    assert p.values["total_samples"].tolist() == [20, 15]


def test_wire_refuses_a_damaged_length():
    sample = b"\x0a\x09\x01\x02"  # says 9 bytes of ids, has 2
    assert pprof_wire.frame_samples([sample]) is None


def test_progress_never_steps_back_when_the_framed_path_gives_up():
    seen: list[float] = []
    # type labels: the framed path reads the framing, then leaves it to the plain path
    pprof.read(DATA / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz", progress=seen.append)
    assert 0.3 in seen and seen == sorted(seen) and seen[-1] == 1.0
