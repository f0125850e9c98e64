"""perf.data reader: real recordings through the installed perf, and one made here."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import parsers
from parsers import perf_data, perf_script
from parsers.errors import ExternalToolError, ParseError

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"
PERF = shutil.which("perf")
needs_perf = pytest.mark.skipif(PERF is None, reason="perf is not installed (apt-get install linux-perf)")
pytestmark = pytest.mark.perf


def _flat_pct(prof) -> dict[str, float]:
    keys, codes = prof.frame_key_codes
    agg = np.bincount(codes, weights=prof.values["self_pct"], minlength=len(keys))
    return {k.split("\x1f")[1]: round(float(v), 2) for k, v in zip(keys, agg, strict=True)}


def _debug_listing() -> list[str]:
    d = Path(os.path.expanduser("~")) / ".debug"
    return sorted(str(p) for p in d.rglob("*")) if d.exists() else []


def test_sniff() -> None:
    for name in ("hotspot-true.v1.perf.data", "hotspot-true.v2.perf.data"):
        head = (DATA / "perf-data" / name).read_bytes()[:64]
        assert perf_data.sniff(head, Path(name)) == 1.0
    assert perf_data.sniff(b"PERFFILE" + bytes(100), Path("x")) == 1.0
    assert perf_data.sniff(b"vm 123 1.0: cycles:\n", Path("x")) == 0.0


@needs_perf
@pytest.mark.parametrize(("v", "n", "share"), [("v1", 3130, 95.27), ("v2", 4768, 96.75)])
def test_cvm_perf_data_matches_text_and_report(v: str, n: int, share: float) -> None:
    before = _debug_listing()
    prof = parsers.load(DATA / "c-vm" / v / "perf.data")
    assert _debug_listing() == before  # the user's build-id cache was not written
    assert prof.format == "perf-data"
    assert prof.totals["total_samples"] == n
    assert prof.meta["event"] == "cpu-clock:ppp"
    assert prof.meta["command_line"].startswith("/usr/bin/perf record -N -g -F 999")
    pct = _flat_pct(prof)
    assert pct["vm_run.constprop.0"] == share
    # symbols of the binary beside the recording were resolved
    assert "[unknown]" not in prof.name[prof.module == "vm"].tolist()
    assert "missing_binaries" not in prof.meta
    text = perf_script.read(DATA / "c-vm" / v / "perf.script.txt.gz")
    assert _flat_pct(text) == pct
    assert prof.n_nodes == text.n_nodes


@needs_perf
def test_binaries_gone_gives_unknown_frames_and_a_warning(tmp_path: Path) -> None:
    shutil.copy(DATA / "c-vm" / "v1" / "perf.data", tmp_path / "perf.data")
    prof = perf_data.read(tmp_path / "perf.data")
    assert prof.totals["total_samples"] == 3130
    assert "[unknown]" in prof.name[prof.module == "vm"].tolist()
    assert prof.meta["missing_binaries"] == ["/work/steering/shared/samples-generated/c-vm/v1/vm"]
    assert any("not found" in w and "[unknown]" in w for w in prof.warnings)
    assert prof.meta["unresolved_pct"] > 90


@needs_perf
def test_hotspot_samples() -> None:
    prof = perf_data.read(DATA / "perf-data" / "hotspot-true.v2.perf.data")
    assert prof.totals["total_samples"] == 1
    assert prof.totals["total_period"] == 250000
    assert prof.meta["event"] == "cpu-clock"
    with pytest.raises(ParseError, match="no samples") as e:
        perf_data.read(DATA / "perf-data" / "hotspot-true.v1.perf.data")
    assert "hotspot-true.v1.perf.data" in str(e.value)
    with pytest.raises(ParseError, match="unsupported ABI") as e:
        perf_data.read(DATA / "perf-data" / "hotspot-PerfFormatLost.perf.data")
    assert "hotspot-PerfFormatLost.perf.data" in str(e.value)


@needs_perf
def test_corrupt_and_truncated(tmp_path: Path) -> None:
    raw = (DATA / "c-vm" / "v1" / "perf.data").read_bytes()
    short = tmp_path / "short.data"
    short.write_bytes(raw[:50])
    with pytest.raises(ParseError, match=r"short.data \(byte 50\).*header"):
        parsers.load(short)
    garbage = tmp_path / "garbage.data"
    garbage.write_bytes(b"PERFILE2" + bytes(range(256)) * 64)
    with pytest.raises(ParseError, match="garbage.data"):
        parsers.load(garbage)
    cut = tmp_path / "cut.data"
    cut.write_bytes(raw[:200_000])
    try:
        prof = perf_data.read(cut)
    except ParseError as e:
        assert "cut.data" in str(e)
    else:
        assert prof.incomplete and "perf script" in prof.incomplete_reason


def test_perf_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROFDIFF_PERF", str(tmp_path / "no-such-perf"))
    with pytest.raises(ExternalToolError, match="apt-get install linux-perf"):
        perf_data.read(DATA / "c-vm" / "v1" / "perf.data")


@needs_perf
def test_timeout() -> None:
    with pytest.raises(ExternalToolError, match="did not finish"):
        perf_data.read(DATA / "c-vm" / "v2" / "perf.data", timeout=0.001)


@needs_perf
def test_redetect_under_unknown_name(tmp_path: Path) -> None:
    dst = tmp_path / "x.unknown"
    shutil.copy(DATA / "perf-data" / "hotspot-true.v2.perf.data", dst)
    assert parsers.load(dst).format == "perf-data"


C_PROG = r"""
__attribute__((noinline)) long leaf_work(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
__attribute__((noinline)) long middle(long n) { return leaf_work(n) + 1; }
int main(void) { long t = 0; for (int k = 0; k < 100; k++) t += middle(2000000); return (int)(t & 1); }
"""


@needs_perf
def test_record_and_load(tmp_path: Path) -> None:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler to build the recorded program")
    (tmp_path / "spin.c").write_text(C_PROG)
    subprocess.run([gcc, "-O1", "-fno-omit-frame-pointer", "-o", str(tmp_path / "spin"),
                    str(tmp_path / "spin.c")], check=True)
    env = dict(os.environ, HOME=str(tmp_path))  # keep perf record's build-id copy out of ~
    r = subprocess.run([PERF, "record", "-e", "cpu-clock", "-g", "-F", "999", "-o",
                        str(tmp_path / "perf.data"), str(tmp_path / "spin")],
                       capture_output=True, text=True, env=env, timeout=120)
    if not (tmp_path / "perf.data").exists() or "Permission" in r.stderr:
        paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
        level = paranoid.read_text().strip() if paranoid.exists() else "?"
        pytest.skip(f"perf record not permitted here (perf_event_paranoid={level}): "
                    f"{r.stderr.strip()[:200]}")
    prof = parsers.load(tmp_path / "perf.data")
    assert prof.format == "perf-data"
    assert prof.totals["total_samples"] > 10
    pct = _flat_pct(prof)
    assert pct.get("leaf_work", 0) > 50
    paths = {tuple(prof.path_labels(int(n))) for n in range(prof.n_nodes)}
    assert any(p[-3:] == ("spin.main", "spin.middle", "spin.leaf_work") for p in paths)
