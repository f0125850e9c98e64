"""Detection by magic bytes (``detect.MAGIC_READERS``) agrees with asking every reader,
and detecting a perf.data imports no other reader."""

import subprocess
import sys
from pathlib import Path

import pytest

from profdiff.parsers import detect as detect_fn
from profdiff.parsers.detect import MAGIC_READERS, read_head, readers

DATA = Path(__file__).resolve().parents[1] / "data" / "perf"
PERF_DATA = [DATA / "c-vm" / "v1" / "perf.data", DATA / "c-vm" / "v2" / "perf.data",
             DATA / "perf-data" / "hotspot-true.v1.perf.data"]


def _full_scan(head: bytes, path: Path) -> str | None:
    """The reader the scoring loop over every reader picks (the pre-table behaviour)."""
    best, pick = 0.0, None
    for fmt, mod in readers().items():
        score = float(mod.sniff(head, path))
        if score > best:
            best, pick = score, fmt
    return pick


@pytest.mark.parametrize("path", PERF_DATA, ids=lambda p: p.parent.name + "/" + p.name)
def test_magic_table_picks_what_every_reader_would(path):
    head = read_head(path)
    assert head[:8] in MAGIC_READERS
    assert detect_fn(path).FORMAT == _full_scan(head, path) == "perf-data"


@pytest.mark.parametrize("prefix", list(MAGIC_READERS))
def test_every_magic_prefix_is_claimed_by_its_reader_alone(prefix, tmp_path):
    f = tmp_path / "rec.bin"
    f.write_bytes(prefix + bytes(200))
    mod = detect_fn(f)
    assert mod.__name__.rsplit(".", 1)[-1] == MAGIC_READERS[prefix]
    assert mod.FORMAT == _full_scan(read_head(f), f)


def test_detecting_a_perf_data_imports_no_other_reader():
    code = ("import sys; from profdiff.parsers import detect; "
            f"m = detect({str(PERF_DATA[1])!r}); "
            "print(m.FORMAT, sorted(n for n in sys.modules if n.startswith('profdiff.parsers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(" ", 1)
    assert out[0] == "perf-data"
    assert "profdiff.parsers.pprof" not in out[1] and "profdiff.parsers.ghc_prof" not in out[1]
