"""GHC ``.hp`` heap profile reader, on the real files of tests/data/ghc-hp.

Expected numbers were read off the files with awk/grep (noted per test).  Files larger
than 300 KB are stored gzipped (byte-identical content), which also covers the gzip path.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import detect, ghc_heap, load
from profdiff.parsers.errors import ParseError
from profdiff.parsers.model import Kind, Unit

HP = Path(__file__).resolve().parents[1] / "data" / "ghc-hp"
ALL_HP = sorted(p.name for p in HP.iterdir())


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")


def test_corpus_is_complete() -> None:
    # the 13 files of samples/ghc-hp plus the two hs-ad runs
    assert len(ALL_HP) == 15


@pytest.mark.parametrize("name", ALL_HP)
def test_every_file_loads_consistently(name: str) -> None:
    path = HP / name
    p = load(path)
    assert p.format == "ghc-hp"
    assert not p.incomplete
    text = _text(path)
    n_end = sum(1 for ln in text.splitlines() if ln.startswith("END_SAMPLE"))
    distinct = {ln.rsplit("\t", 1)[0] for ln in text.splitlines() if "\t" in ln}
    assert p.totals["n_samples"] == n_end
    assert p.n_nodes == len(distinct)
    assert set(p.frames.name.tolist()) == distinct
    assert np.all(p.parent == -1)
    series = p.extras["series"]
    assert series["times"].dtype == np.float64 and series["times"].shape == (n_end,)
    assert series["bands"].shape == (n_end, p.n_nodes)
    # column j is node j
    np.testing.assert_allclose(series["bands"].max(axis=0), p.column("peak_bytes"))
    # the run totals are the same statistics of the summed series
    assert p.totals["peak_bytes"] == pytest.approx(series["bands"].sum(axis=1).max())
    assert p.totals["integral_byte_s"] == pytest.approx(p.column("integral_byte_s").sum())
    assert p.totals["mean_bytes"] == pytest.approx(p.column("mean_bytes").sum())
    assert p.default_metric == "peak_bytes"


def test_hs_ad_v1_header_and_values() -> None:
    p = ghc_heap.read(HP / "hs-ad-v1.hp")
    assert p.meta["job"] == "ad 20 +RTS -p -s -hT"
    assert p.meta["program"] == "ad"
    assert p.meta["date"] == "Sun Nov 29 18:35 2026"
    assert p.meta["sample_unit"] == "seconds" and p.meta["value_unit"] == "bytes"
    assert p.meta["heap_mode"] == "closure-type" and p.meta["heap_mode_source"] == "flag"
    assert p.totals["n_samples"] == 31
    assert p.totals["duration_s"] == pytest.approx(2.721246)
    # awk: the largest sample total is 1,723,488 bytes at t=1.738426
    assert p.totals["peak_bytes"] == 1723488
    assert p.totals["peak_time_s"] == pytest.approx(1.738426)
    names = p.frames.name.tolist()
    # awk: D# peaks at 96,736 bytes; ARR_WORDS at 40,296
    assert p.column("peak_bytes")[names.index("ghc-prim:GHC.Types.D#")] == 96736
    assert p.column("peak_bytes")[names.index("ARR_WORDS")] == 40296
    # the first non-empty sample (t=0.090094) has D# = 70,048 bytes
    t = p.extras["series"]["times"]
    i = int(np.flatnonzero(np.isclose(t, 0.090094))[0])
    assert p.extras["series"]["bands"][i, names.index("ghc-prim:GHC.Types.D#")] == 70048
    assert p.metric("integral_byte_s").unit is Unit.BYTE_SECONDS
    assert p.metric("peak_bytes").kind is Kind.SELF


def test_hs_ad_v2_regression_visible() -> None:
    v1 = ghc_heap.read(HP / "hs-ad-v1.hp")
    v2 = ghc_heap.read(HP / "hs-ad-v2.hp")
    # awk: v2's boxed gradient accumulator: D# peak 317,472 bytes vs 96,736 in v1
    d1 = v1.column("peak_bytes")[v1.frames.name.tolist().index("ghc-prim:GHC.Types.D#")]
    d2 = v2.column("peak_bytes")[v2.frames.name.tolist().index("ghc-prim:GHC.Types.D#")]
    assert (d1, d2) == (96736, 317472)
    assert v2.totals["peak_bytes"] == 1648152
    assert v2.totals["n_samples"] == 40


def test_cost_centre_ids_are_stripped_for_matching() -> None:
    p = ghc_heap.read(HP / "ghc-8.8.4-haskell-test-v2-2021-02-25.hp")
    names = p.frames.name.tolist()
    i = names.index("(242)xs/Main.CAF")
    assert p.frames.match[i] == "xs/Main.CAF"
    assert p.frames.match[names.index("MAIN")] == "MAIN"
    assert "\x1fxs/Main.CAF" in p.frames.key[i]
    assert p.meta["heap_mode"] == "cost-centre-stack"  # plain -h, decided from the names
    assert p.meta["heap_mode_source"] == "names"
    # file: xs/Main.CAF holds 399,999,744 bytes from t=0.229341 on; the peak sample total
    # is 782,513,920 bytes at t=0.349317
    assert p.column("peak_bytes")[i] == 399999744
    assert p.totals["peak_bytes"] == 782513920
    assert p.totals["peak_time_s"] == pytest.approx(0.349317)


def test_repeated_band_in_one_sample_is_summed() -> None:
    # -hy file: "IO" appears many times in the sample at t=0.09; awk sum = 320 bytes
    p = ghc_heap.read(HP / "ghc-7.10.3-startstopfrp-example-hy-2016-11-28.hp")
    assert p.meta["heap_mode"] == "type"
    names = p.frames.name.tolist()
    assert names.count("IO") == 1
    t = p.extras["series"]["times"]
    i = int(np.flatnonzero(np.isclose(t, 0.09))[0])
    assert p.extras["series"]["bands"][i, names.index("IO")] == 320


def test_heap_modes_from_flags_and_names() -> None:
    modes = {n: ghc_heap.read(HP / n).meta["heap_mode"] for n in ALL_HP}
    assert modes["ghc-7.10.3-startstopfrp-example-hd-2016-11-03.hp.gz"] == "closure-description"
    assert modes["ghc-7.10.3-startstopfrp-example-hc-2016-10-14.hp.gz"] == "cost-centre-stack"
    assert modes["ghc-7.10.3-startstopfrp-example-h-2016-09-26.hp.gz"] == "cost-centre-stack"
    # JOB "Main" (no flags): closure types like ARR_WORDS, pkg:Module.Con
    assert modes["ghc-7.8-dilcue-2014-10.hp"] == "closure-type"


def test_empty_samples_file_loads_with_warning() -> None:
    # decision: a heap profile whose samples hold no band is valid (nothing was live)
    p = load(HP / "ghc-7.8-gba-hs-bench-empty-2014-11.hp")
    assert p.n_nodes == 0
    assert p.totals["n_samples"] == 2
    assert p.totals["peak_bytes"] == 0
    assert p.extras["series"]["bands"].shape == (2, 0)
    assert any("no heap bands" in w for w in p.warnings)
    assert p.meta["job"] == "bench +RTS -hc"


def test_file_cut_inside_last_sample_is_incomplete(tmp_path: Path) -> None:
    lines = (HP / "hs-ad-v1.hp").read_text().splitlines(keepends=True)
    # line 1249 is "BEGIN_SAMPLE 2.694648" (30th sample); cut 10 lines into it, mid-line
    assert lines[1248].startswith("BEGIN_SAMPLE 2.694648")
    cut = tmp_path / "running.hp"
    cut.write_text("".join(lines[:1258]) + lines[1258][:5])
    p = load(cut)
    assert p.incomplete
    assert "line 1249" in p.incomplete_reason and "29 complete samples" in p.incomplete_reason
    assert p.totals["n_samples"] == 29
    assert p.extras["series"]["times"][-1] == pytest.approx(2.597648)
    assert p.totals["peak_bytes"] == 1723488  # the peak is before the cut


def test_redetect_under_unknown_name(tmp_path: Path) -> None:
    for name in ("hs-ad-v2.hp", "ghc-7.x-ilp-main-v2.hp.gz"):
        dst = tmp_path / f"{name}.unknown"
        shutil.copy(HP / name, dst)
        assert detect(dst) is ghc_heap
        assert load(dst).format == "ghc-hp"


def test_time_weighted_mean_and_quoted_job(tmp_path: Path) -> None:
    f = tmp_path / "t.hp"
    f.write_text(
        'JOB "prog ""quoted arg"" +RTS -hm"\nDATE "x"\nSAMPLE_UNIT "seconds"\n'
        'VALUE_UNIT "bytes"\nBEGIN_SAMPLE 0\nEND_SAMPLE 0\nMARK 0.5\n'
        "BEGIN_SAMPLE 1\nA\t2\nname\twith tab\t2\nEND_SAMPLE 1\n"
        "BEGIN_SAMPLE 3\nA\t2\nEND_SAMPLE 3\n"
    )
    p = ghc_heap.read(f)
    assert p.meta["job"] == 'prog "quoted arg" +RTS -hm'
    assert p.meta["heap_mode"] == "module"
    assert p.extras["series"]["marks"] == [0.5]
    names = p.frames.name.tolist()
    assert names == ["A", "name\twith tab"]  # split on the last tab
    a = names.index("A")
    # trapezoid: 0..1 ramps 0->2 (1 B·s), 1..3 stays at 2 (4 B·s); mean over 3 s
    assert p.column("integral_byte_s")[a] == pytest.approx(5.0)
    assert p.column("mean_bytes")[a] == pytest.approx(5.0 / 3.0)
    assert p.column("peak_bytes")[a] == 2


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("", None, "JOB"),
        ("hello world\nnot a heap profile\n", 1, "JOB"),
        ('JOB "x"\nDATE "d"\n', 2, "complete BEGIN_SAMPLE"),
        ('JOB "x"\nBEGIN_SAMPLE 0\nA\tlots\nEND_SAMPLE 0\n', 3, "band line"),
        ('JOB "x"\nA\t12\nBEGIN_SAMPLE 0\nEND_SAMPLE 0\n', 2, "inside BEGIN_SAMPLE"),
        ('JOB "x"\nBEGIN_SAMPLE 0\nEND_SAMPLE 0\nEND_SAMPLE 1\n', 4, "BEGIN_SAMPLE before"),
        ('JOB "x"\nBEGIN_SAMPLE zero\nEND_SAMPLE 0\n', 2, "BEGIN_SAMPLE <time>"),
        ('JOB "x"\nBEGIN_SAMPLE 0\nA\t1\nEND_SAMPLE 0\nwhat is this\n', 5, "BEGIN_SAMPLE, "),
    ],
)
def test_bad_input_is_located(tmp_path: Path, content: str, line: int | None,
                              expected: str) -> None:
    f = tmp_path / "bad.hp"
    f.write_text(content)
    with pytest.raises(ParseError) as ei:
        ghc_heap.read(f)
    assert ei.value.line == line
    assert expected in ei.value.expected
    assert str(f) in str(ei.value)


def test_binary_garbage(tmp_path: Path) -> None:
    f = tmp_path / "garbage.hp"
    f.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(ParseError) as ei:
        ghc_heap.read(f)
    assert "JOB" in ei.value.expected
    with pytest.raises(ParseError):
        load(f)  # no reader claims it


def test_wrong_format_is_refused(tmp_path: Path) -> None:
    rts = HP.parent / "ghc-rts" / "hs-ad-v1.stats.txt"
    with pytest.raises(ParseError) as ei:
        ghc_heap.read(rts)
    assert ei.value.line == 1
    assert ghc_heap.sniff(rts.read_bytes(), rts) == 0.0


def test_lenient_skips_bad_lines_with_warnings(tmp_path: Path) -> None:
    f = tmp_path / "lenient.hp"
    f.write_text('JOB "x"\nBEGIN_SAMPLE 0\nA\t1\nB\tlots\nEND_SAMPLE 0\ngarbage\n'
                 "BEGIN_SAMPLE 1\nA\t3\nEND_SAMPLE 1\n")
    p = ghc_heap.read(f, lenient=True)
    assert p.frames.name.tolist() == ["A"]
    assert p.column("peak_bytes")[0] == 3
    assert len(p.warnings) == 2
    assert p.warnings[0].startswith("line 4") and p.warnings[1].startswith("line 6")


def test_progress_is_reported() -> None:
    seen: list[float] = []
    ghc_heap.read(HP / "ghc-7.10.3-startstopfrp-tryitout-h-2016-11-11.hp.gz",
                  progress=seen.append)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
