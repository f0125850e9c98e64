"""Gunzipping with ISA-L (``isal``, when installed) or the standard library's zlib reads
the same bytes and stops at the same place in a cut or damaged stream: which one a
machine has changes the speed of a read, never what it reports."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from profdiff.parsers import gzip_io
from profdiff.parsers.gzip_io import GzipReader

SRC = Path(__file__).parents[1] / "data" / "hs-ad" / "v1" / "ad.prof"


def _inflaters() -> list:
    out = [pytest.param(zlib, id="zlib")]
    try:
        from isal import isal_zlib
    except ImportError:
        out.append(pytest.param(None, id="isal", marks=pytest.mark.skip("isal not installed")))
    else:
        out.append(pytest.param(isal_zlib, id="isal"))
    return out


def _read(path: Path, inflate) -> tuple[bytes, str, int | None]:
    with GzipReader(path, inflate) as g:
        data = g.read_all()
        return data, g.cut, g.cut_offset


@pytest.mark.parametrize("inflate", _inflaters())
def test_whole_and_concatenated_streams(tmp_path, inflate):
    raw = SRC.read_bytes()
    one = tmp_path / "one.prof.gz"
    one.write_bytes(gzip.compress(raw, mtime=0))
    assert _read(one, inflate) == (raw, "", None)
    two = tmp_path / "two.prof.gz"  # cat a.gz b.gz, then stray bytes gzip -d ignores too
    two.write_bytes(gzip.compress(raw[:5000], mtime=0) + gzip.compress(raw[5000:], mtime=0)
                    + b"\n\0junk")
    assert _read(two, inflate) == (raw, "", None)


@pytest.mark.parametrize("inflate", _inflaters())
def test_a_cut_stream_gives_a_prefix_and_says_where(tmp_path, inflate):
    raw = SRC.read_bytes()
    packed = gzip.compress(raw, mtime=0)
    cut = tmp_path / "cut.prof.gz"
    cut.write_bytes(packed[: len(packed) * 2 // 3])
    data, why, offset = _read(cut, inflate)
    assert raw.startswith(data) and len(raw) // 3 < len(data) < len(raw)
    assert why.startswith(f"the gzip stream is truncated: it ends after {cut.stat().st_size} "
                          "compressed bytes")
    assert offset == cut.stat().st_size


@pytest.mark.parametrize("inflate", _inflaters())
def test_a_damaged_stream_stops_at_the_damage(tmp_path, inflate):
    raw = SRC.read_bytes()
    packed = bytearray(gzip.compress(raw, mtime=0))
    at = len(packed) // 2
    packed[at : at + 64] = bytes(64)  # a run of zeros where deflate blocks were
    bad = tmp_path / "bad.prof.gz"
    bad.write_bytes(bytes(packed))
    data, why, offset = _read(bad, inflate)
    assert raw.startswith(data) and len(data) < len(raw)
    assert why.startswith("the gzip stream is damaged near compressed byte ")
    assert offset is not None and offset <= at


def test_both_inflaters_stop_at_the_same_block(tmp_path):
    """The cut and the damage are reported at the same compressed offset (each is a
    64 KiB block read) by either inflater."""
    isal_zlib = pytest.importorskip("isal.isal_zlib")
    raw = SRC.read_bytes() * 30  # several 64 KiB blocks of compressed data
    packed = bytearray(gzip.compress(raw, mtime=0))
    at = len(packed) // 2
    packed[at : at + 64] = bytes(64)
    bad = tmp_path / "bad.prof.gz"
    bad.write_bytes(bytes(packed))
    assert _read(bad, zlib)[2] == _read(bad, isal_zlib)[2]


def test_the_inflater_is_isal_when_installed():
    try:
        from isal import isal_zlib
    except ImportError:
        assert gzip_io.inflater() is zlib
    else:
        assert gzip_io.inflater() is isal_zlib
