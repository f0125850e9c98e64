"""GHC RTS statistics readers: ``+RTS -s`` summaries (ghc-rts-s) and
``+RTS -t --machine-readable`` (ghc-rts-t), on the real files of tests/data/ghc-rts.

Expected values were read off the files by eye.  The hs-ad files come from GHC 9.0.2,
which prints ``%GC time 0.0%`` (integer-division bug); the readers recompute it.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from profdiff.parsers import ghc_rts_machine, ghc_rts_summary, load
from profdiff.parsers.detect import read_head
from profdiff.parsers.errors import ParseError, UnknownFormatError
from profdiff.parsers.ghc_rts import snake_key
from profdiff.parsers.model import Unit

RTS = Path(__file__).resolve().parents[1] / "data" / "ghc-rts"
V1_S, V2_S = RTS / "hs-ad-v1.stats.txt", RTS / "hs-ad-v2.stats.txt"
V1_T, V2_T = RTS / "hs-ad-v1.t-machine-readable.txt", RTS / "hs-ad-v2.t-machine-readable.txt"
CFD = RTS / "ghc-7.x-cfd-rts-s-windows.txt"
SLOG = RTS / "ghc-7.x-haskell-opengl-rts-S-full.txt.gz"

# Real `+RTS -s` output of a threaded program (-N10), quoted from a public project's source
# comment (parallel GC, TASKS and SPARKS lines, GHC 8.x layout).
THREADED = """Processing 'bible.txt' on 10 cores using 5 workers..

   1,417,042,168 bytes allocated in the heap
     125,122,160 bytes copied during GC
      28,160,096 bytes maximum residency (5 sample(s))
         937,888 bytes maximum slop
             113 MiB total memory in use (0 MB lost due to fragmentation)

                                     Tot time (elapsed)  Avg pause  Max pause
  Gen  0       189 colls,   189 par    0.087s   0.058s     0.0003s    0.0019s
  Gen  1         5 colls,     4 par    0.044s   0.013s     0.0026s    0.0052s

  Parallel GC work balance: 36.86% (serial 0%, perfect 100%)

  TASKS: 22 (1 bound, 21 peak workers (21 total), using -N10)

  SPARKS: 61 (31 converted, 0 overflowed, 0 dud, 30 GC'd, 0 fizzled)

  INIT    time    0.001s  (  0.010s elapsed)
  MUT     time    0.651s  (  0.357s elapsed)
  GC      time    0.131s  (  0.071s elapsed)
  EXIT    time    0.000s  (  0.012s elapsed)
  Total   time    0.783s  (  0.450s elapsed)

  Alloc rate    2,176,010,798 bytes per MUT second

  Productivity  83.2% of total user, 79.4% of total elapsed

gc_alloc_block_sync: 47012
whitehole_spin: 0
gen[0].sync: 4
gen[1].sync: 2

real    0m0.461s
"""

# Real GHC 6.x-era summary (Generation lines, old work-balance line), from a public README.
OLD = """    73,602,289,076 bytes allocated in the heap
       160,246,312 bytes copied during GC
           695,924 bytes maximum residency (1765 sample(s))
           235,592 bytes maximum slop
                 4 MB total memory in use (1 MB lost due to fragmentation)

    Generation 0: 101206 collections,     0 parallel,  3.89s,  4.97s elapsed
    Generation 1:  1765 collections,     0 parallel,  0.59s,  0.68s elapsed

    Parallel GC work balance: nan (0 / 0, ideal 1)

                        MUT time (elapsed)       GC time  (elapsed)
    Task  0 (worker) :  145.48s    (723.30s)       0.00s    (  0.00s)
    Task  1 (worker) :  145.48s    (723.29s)       0.00s    (  0.00s)

  INIT  time    0.00s  (  0.00s elapsed)
  MUT   time  145.48s  (723.29s elapsed)
  GC    time    4.48s  (  5.65s elapsed)
  EXIT  time    0.00s  (  0.00s elapsed)
  Total time  149.96s  (728.94s elapsed)

  %GC time       3.0%  (0.8% elapsed)

  Alloc rate    505,935,563 bytes per MUT second

  Productivity  97.0% of total user, 20.0% of total elapsed
"""


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")


# ------------------------------------------------------------------------------------------
# -s summary
# ------------------------------------------------------------------------------------------
def test_hs_ad_v1_summary_values() -> None:
    p = load(V1_S)
    assert p.format == "ghc-rts-s"
    assert p.meta["kind"] == "rts-summary"
    t = p.totals
    assert t["bytes_allocated"] == 6_688_508_720
    assert t["bytes_copied"] == 2_690_763_320
    assert t["max_residency_bytes"] == 2_668_152
    assert t["max_residency_samples"] == 658
    assert t["max_slop_bytes"] == 46_104
    assert t["total_memory_in_use_bytes"] == 9 * 1024 * 1024
    assert t["fragmentation_bytes"] == 0
    assert (t["gen0_collections"], t["gen0_par_collections"]) == (5777, 0)
    assert (t["gen0_cpu_s"], t["gen0_elapsed_s"]) == (0.893, 1.762)
    assert (t["gen0_avg_pause_s"], t["gen0_max_pause_s"]) == (0.0003, 0.1106)
    assert (t["gen1_collections"], t["gen1_cpu_s"], t["gen1_max_pause_s"]) == (658, 0.659, 0.0828)
    assert t["num_gcs"] == 5777 + 658
    assert (t["init_cpu_s"], t["init_elapsed_s"]) == (0.0, 0.0)
    assert (t["mut_cpu_s"], t["mut_elapsed_s"]) == (2.700, 5.154)
    assert (t["gc_cpu_s"], t["gc_elapsed_s"]) == (1.531, 3.128)
    assert (t["prof_cpu_s"], t["prof_elapsed_s"]) == (0.021, 0.065)
    assert (t["rp_cpu_s"], t["exit_cpu_s"]) == (0.0, 0.0)
    assert (t["total_cpu_s"], t["total_elapsed_s"]) == (4.252, 8.347)
    assert t["alloc_rate_bytes_per_s"] == 2_477_446_024
    assert t["productivity_cpu_pct"] == 64.0 and t["productivity_elapsed_pct"] == 62.5
    assert t["productivity_pct"] == 64.0
    # empty tree, statistics only
    assert p.n_nodes == 0 and p.parent.shape == (0,) and len(p.frames) == 0
    assert p.metrics == () and p.default_metric is None
    assert not p.incomplete


def test_ghc_902_gc_percent_bug_is_recomputed() -> None:
    p = load(V1_S)
    t = p.totals
    # GHC 9.0.2 printed "%GC time 0.0% (0.0% elapsed)"; GC/Total = 1.531/4.252, 3.128/8.347
    assert t["gc_time_pct_reported"] == 0.0 and t["gc_elapsed_pct_reported"] == 0.0
    assert t["gc_time_pct"] == pytest.approx(100 * 1.531 / 4.252)
    assert t["gc_elapsed_pct"] == pytest.approx(100 * 3.128 / 8.347)
    assert p.meta["gc_pct_recomputed"] is True
    assert any("integer-division" in w and "recomputed" in w for w in p.warnings)


def test_consistent_gc_percent_is_kept() -> None:
    p = load(CFD)
    # GHC 7 printed 8.5% (from unrounded times; 0.17/2.03 = 8.4%): within tolerance, kept
    assert p.totals["gc_time_pct"] == 8.5 and p.totals["gc_time_pct_reported"] == 8.5
    assert p.totals["gc_elapsed_pct"] == 10.2
    assert "gc_pct_recomputed" not in p.meta and p.warnings == ()


def test_v1_v2_regression() -> None:
    v1, v2 = load(V1_S), load(V2_S)
    assert v2.totals["bytes_allocated"] == 10_332_420_400
    assert v2.totals["bytes_allocated"] > v1.totals["bytes_allocated"]
    assert v2.totals["max_residency_bytes"] == 2_730_056
    assert v2.totals["max_residency_samples"] == 1636
    assert v2.totals["mut_cpu_s"] == 3.626 and v2.totals["gc_cpu_s"] == 4.834
    assert v2.totals["total_memory_in_use_bytes"] == 10 * 1024 * 1024
    assert v2.totals["productivity_pct"] == 43.1


def test_noise_runs_have_identical_allocation() -> None:
    runs = [load(RTS / f"hs-ad-noise-v1-run{i}.stats.txt") for i in (1, 2, 3)]
    assert {r.totals["bytes_allocated"] for r in runs} == {6_688_508_720}
    # copying and timings vary: run1 2,699,976,000 / run2 2,691,480,152 / run3 2,688,964,672
    assert [r.totals["bytes_copied"] for r in runs] == [2_699_976_000, 2_691_480_152,
                                                        2_688_964_672]
    assert [r.totals["mut_cpu_s"] for r in runs] == [3.229, 2.856, 2.566]


def test_windows_summary_with_command_line() -> None:
    p = load(CFD)
    assert p.meta["command_line"] == r"C:\Users\Chengyuan Zhao\workspace\CFD\src\Main.exe +RTS -stderr"
    assert p.meta["program"] == "Main.exe"
    t = p.totals
    assert t["bytes_allocated"] == 2_507_353_408
    assert t["total_memory_in_use_bytes"] == 3 * 1024 * 1024
    assert (t["gen0_collections"], t["gen1_collections"]) == (4850, 7)
    assert (t["mut_cpu_s"], t["mut_elapsed_s"], t["total_cpu_s"]) == (1.86, 1.92, 2.03)
    assert t["productivity_elapsed_pct"] == 86.7


def test_summary_after_large_minus_S_log() -> None:
    # 611 KB log: the summary is beyond the 64 KiB detection window; the -S header is not
    head = read_head(SLOG)
    assert b"bytes allocated in the heap" not in head
    assert ghc_rts_summary.sniff(head, SLOG) > 0
    p = load(SLOG)
    assert p.format == "ghc-rts-s"
    assert p.meta["command_line"] == "./Main +RTS -h -Sfull.txt -B"
    t = p.totals
    assert t["bytes_allocated"] == 4_055_025_672
    assert t["max_residency_bytes"] == 28_653_768
    assert (t["gen0_collections"], t["gen1_collections"]) == (7696, 206)
    assert t["gc_cpu_s"] == 11.33 and t["gc_time_pct"] == 79.6
    assert t["productivity_pct"] == 20.4
    log = p.extras["gc_log"]
    assert len(log["gen"]) == 7902 == p.meta["gc_log_rows"]
    # the per-GC rows add up to the summary's numbers
    assert int(log["alloc_bytes"].sum()) == 4_055_025_672
    assert int(log["copied_bytes"].sum()) == 5_618_723_568
    assert int(log["live_bytes"][log["gen"] == 1].max()) == 28_653_768
    assert (log["alloc_bytes"][0], log["live_bytes"][0], log["gen"][0]) == (9736, 4712, 1)


def test_minus_S_log_without_summary_is_incomplete(tmp_path: Path) -> None:
    lines = _text(SLOG).splitlines(keepends=True)
    f = tmp_path / "running.txt"
    f.write_text("".join(lines[:1003]))  # command, 2 header lines, 1000 GC rows
    p = load(f)
    assert p.format == "ghc-rts-s" and p.incomplete
    assert "1000 GC rows" in p.incomplete_reason
    rows = [ln.split() for ln in lines[3:1003]]
    assert p.totals["bytes_allocated"] == sum(int(r[0]) for r in rows)
    assert p.totals["gen0_collections"] + p.totals["gen1_collections"] == 1000
    assert p.totals["total_cpu_s"] == float(rows[-1][5])


def test_summary_embedded_in_program_output(tmp_path: Path) -> None:
    f = tmp_path / "out.txt"
    f.write_text("Case #1: 0\nCase #2: 4080\nsome: other output\n" + V1_S.read_text()
                 + "\nreal 0m8.4s\n")
    p = load(f)
    assert p.format == "ghc-rts-s"
    assert p.totals["bytes_allocated"] == 6_688_508_720 and p.totals["mut_cpu_s"] == 2.7
    assert p.meta["summary_line"] == 4
    assert p.meta["command_line"] == ""  # program output is not a command line
    assert not p.incomplete


def test_threaded_summary_parallel_gc_tasks_sparks(tmp_path: Path) -> None:
    f = tmp_path / "threaded.txt"
    f.write_text(THREADED)
    p = load(f)
    t = p.totals
    assert t["bytes_allocated"] == 1_417_042_168
    assert (t["gen0_par_collections"], t["gen1_par_collections"]) == (189, 4)
    assert t["par_gc_work_balance_pct"] == 36.86
    assert (t["task_count"], t["bound_task_count"], t["peak_worker_count"]) == (22, 1, 21)
    assert (t["worker_count"], t["n_capabilities"]) == (21, 10)
    assert (t["sparks_count"], t["sparks_converted"], t["sparks_gcd"]) == (61, 31, 30)
    assert t["sparks_fizzled"] == 0 and t["sparks_dud"] == 0
    assert t["gc_alloc_block_sync"] == 47012 and t["gen0_sync"] == 4 and t["gen1_sync"] == 2
    # no %GC line in this GHC: filled in from the times
    assert t["gc_time_pct"] == pytest.approx(100 * 0.131 / 0.783)
    assert "gc_time_pct_reported" not in t
    assert not p.incomplete and p.warnings == ()


def test_old_ghc6_layout(tmp_path: Path) -> None:
    f = tmp_path / "old.txt"
    f.write_text(OLD)
    p = load(f)
    t = p.totals
    assert (t["gen0_collections"], t["gen0_cpu_s"], t["gen0_elapsed_s"]) == (101206, 3.89, 4.97)
    assert t["gen1_collections"] == 1765
    assert t["total_memory_in_use_bytes"] == 4 * 1024 * 1024
    assert t["fragmentation_bytes"] == 1024 * 1024
    assert t["par_gc_work_balance_ideal"] == 1 and "par_gc_work_balance" not in t  # nan
    assert t["mut_elapsed_s"] == 723.29 and t["gc_time_pct"] == 3.0
    assert t["productivity_elapsed_pct"] == 20.0
    assert p.warnings == ()


def test_truncated_summary_loads_incomplete(tmp_path: Path) -> None:
    lines = V1_S.read_text().splitlines(keepends=True)
    assert lines[11].lstrip().startswith("MUT")
    f = tmp_path / "cut.txt"
    f.write_text("".join(lines[:12]))
    p = load(f)
    assert p.incomplete
    assert "Productivity" in p.incomplete_reason and "line 12" in p.incomplete_reason
    assert p.totals["bytes_allocated"] == 6_688_508_720 and p.totals["mut_cpu_s"] == 2.7
    assert "total_cpu_s" not in p.totals and "productivity_pct" not in p.totals


def test_unknown_lines_inside_summary_are_warned(tmp_path: Path) -> None:
    lines = V1_S.read_text().splitlines(keepends=True)
    f = tmp_path / "interleaved.txt"
    f.write_text("".join(lines[:3]) + "program says hi\n" + "".join(lines[3:]))
    p = load(f)
    assert not p.incomplete
    assert any(w.startswith("line 4:") and "program says hi" in w for w in p.warnings)


# ------------------------------------------------------------------------------------------
# -t --machine-readable
# ------------------------------------------------------------------------------------------
def test_machine_readable_v1_values() -> None:
    p = load(V1_T)
    assert p.format == "ghc-rts-t" and p.meta["kind"] == "rts-machine-readable"
    t = p.totals
    assert t["bytes_allocated"] == 6_688_508_720
    assert t["num_gcs"] == 6434
    assert t["max_residency_bytes"] == 2_456_928
    assert t["max_residency_samples"] == 645
    assert t["average_bytes_used"] == 1_607_313
    assert t["total_memory_in_use_bytes"] == 8_388_608
    assert t["peak_megabytes_allocated"] == 8
    assert (t["mut_cpu_s"], t["mut_elapsed_s"]) == (2.247251, 3.087156)
    assert (t["gc_cpu_s"], t["gc_elapsed_s"]) == (1.360637, 2.357551)
    assert (t["total_cpu_s"], t["total_elapsed_s"]) == (3.608086, 5.444899)
    assert t["bytes_copied"] == 2_672_355_456
    assert t["alloc_rate_bytes_per_s"] == 2_976_307_170
    assert t["productivity_cpu_pct"] == pytest.approx(62.2838)  # GHC prints 0.622838
    assert t["productivity_pct"] == pytest.approx(62.2838)
    assert (t["gen0_collections"], t["gen0_max_pause_s"]) == (5789, 0.163021)
    assert (t["gen1_elapsed_s"], t["gen1_avg_pause_s"]) == (0.867861, 0.001346)
    assert t["cumulative_live_bytes"] == 1_036_716_912  # unknown to -s, kept snake_cased
    assert p.n_nodes == 0 and p.default_metric is None


def test_machine_readable_keeps_every_key() -> None:
    p = load(V1_T)
    pairs = re.findall(r'\("([^"]*)", "([^"]*)"\)', V1_T.read_text())
    assert len(pairs) == 50
    assert set(p.meta["rts_keys"]) == {k for k, _ in pairs}
    assert set(p.meta["rts_keys"].values()) <= set(p.totals)
    assert p.meta["rts_keys"]["GC_cpu_seconds"] == "gc_cpu_s"
    assert p.meta["rts_keys"]["gen_1_wall_seconds"] == "gen1_elapsed_s"


def test_machine_readable_gc_percent_bug() -> None:
    p = load(V2_T)
    t = p.totals
    # gc_cpu_percent "0.000000": 3.889070 / 6.953112 CPU seconds
    assert t["gc_time_pct_reported"] == 0.0
    assert t["gc_time_pct"] == pytest.approx(100 * 3.88907 / 6.953112)
    assert p.meta["gc_pct_recomputed"] is True and p.warnings
    assert t["bytes_allocated"] == 10_332_420_400


def test_summary_and_machine_readable_share_keys() -> None:
    s, m = load(V1_S), load(V1_T)
    shared = set(s.totals) & set(m.totals)
    for key in ("bytes_allocated", "bytes_copied", "max_residency_bytes", "max_residency_samples",
                "max_slop_bytes", "total_memory_in_use_bytes", "num_gcs", "gen0_collections",
                "gen1_max_pause_s", "mut_cpu_s", "mut_elapsed_s", "gc_cpu_s", "gc_elapsed_s",
                "total_cpu_s", "total_elapsed_s", "gc_time_pct", "gc_time_pct_reported",
                "alloc_rate_bytes_per_s", "productivity_pct", "productivity_elapsed_pct"):
        assert key in shared, key
        assert s.total_metrics[key] == m.total_metrics[key]
    assert s.totals["bytes_allocated"] == m.totals["bytes_allocated"]


def test_total_metric_units() -> None:
    tm = load(V1_T).total_metrics
    assert tm["bytes_allocated"].unit is Unit.BYTES
    assert tm["mut_cpu_s"].unit is Unit.SECONDS
    assert tm["gc_time_pct"].unit is Unit.PERCENT
    assert tm["gen0_collections"].unit is Unit.COUNT
    assert tm["gen1_avg_pause_s"].unit is Unit.SECONDS
    assert tm["cumulative_live_bytes"].unit is Unit.BYTES


def test_machine_readable_with_command_line(tmp_path: Path) -> None:
    f = tmp_path / "ad.t"
    f.write_text("ad 20 +RTS -tad.t --machine-readable \n" + V1_T.read_text())
    p = load(f)
    assert p.format == "ghc-rts-t"
    assert p.meta["command_line"] == "ad 20 +RTS -tad.t --machine-readable"
    assert p.meta["program"] == "ad"
    assert p.totals["num_gcs"] == 6434


def test_machine_readable_truncated_is_incomplete(tmp_path: Path) -> None:
    lines = V1_T.read_text().splitlines(keepends=True)
    f = tmp_path / "cut.txt"
    f.write_text("".join(lines[:10]) + lines[10][:12])  # cut inside line 11
    p = load(f)
    assert p.incomplete and "10 pairs" in p.incomplete_reason
    assert p.totals["mut_cpu_s"] == 2.247251 and "gc_elapsed_s" not in p.totals


def test_machine_readable_corrupt_line(tmp_path: Path) -> None:
    lines = V1_T.read_text().splitlines(keepends=True)
    lines[4] = " ,(num_byte_usage_samples 645)\n"
    f = tmp_path / "bad.txt"
    f.write_text("".join(lines))
    with pytest.raises(ParseError) as ei:
        ghc_rts_machine.read(f)
    assert ei.value.line == 5 and str(f) in str(ei.value)
    p = ghc_rts_machine.read(f, lenient=True)
    assert "max_residency_samples" not in p.totals and p.totals["num_gcs"] == 6434
    assert any(w.startswith("line 5:") for w in p.warnings)


def test_plain_minus_t_one_liner(tmp_path: Path) -> None:
    # layout of rts/Stats.c's "-t" line (no real file in the corpus); numbers from hs-ad v1 -t
    f = tmp_path / "t.txt"
    f.write_text("ad 20 +RTS -tt.txt -RTS\n<<ghc: 6688508720 bytes, 6434 GCs, 1607313/2456928 "
                 "avg/max bytes residency (645 samples), 8M in use, 0.000 INIT (0.000 elapsed), "
                 "2.247 MUT (3.087 elapsed), 1.361 GC (2.358 elapsed) :ghc>>\n")
    p = load(f)
    assert p.format == "ghc-rts-t" and p.meta["kind"] == "rts-t"
    assert p.meta["program"] == "ad"
    t = p.totals
    assert (t["bytes_allocated"], t["num_gcs"], t["max_residency_bytes"]) == (6688508720, 6434,
                                                                             2456928)
    assert t["total_memory_in_use_bytes"] == 8 * 1024 * 1024
    assert (t["mut_cpu_s"], t["gc_elapsed_s"]) == (2.247, 2.358)
    assert "total_cpu_s" not in t and "gc_time_pct" not in t


def test_snake_key_for_unknown_keys() -> None:
    assert snake_key("gen_2_wall_seconds") == ("gen2_elapsed_s", 1.0)
    assert snake_key("nonmoving_gc_cpu_seconds") == ("nonmoving_gc_cpu_s", 1.0)
    assert snake_key("some_new_percent") == ("some_new_pct", 100.0)
    assert snake_key("Weird Key") == ("weird_key", 1.0)


# ------------------------------------------------------------------------------------------
# detection and bad input
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("src", "fmt"),
    [(V1_S, "ghc-rts-s"), (CFD, "ghc-rts-s"), (SLOG, "ghc-rts-s"), (V2_T, "ghc-rts-t")],
)
def test_redetect_under_unknown_name(tmp_path: Path, src: Path, fmt: str) -> None:
    dst = tmp_path / "x.unknown"
    shutil.copy(src, dst)
    assert load(dst).format == fmt


def test_formats_do_not_claim_each_other() -> None:
    for reader, other in ((ghc_rts_summary, V1_T), (ghc_rts_machine, V1_S)):
        assert reader.sniff(other.read_bytes(), other) == 0.0
    hp = RTS.parent / "ghc-hp" / "hs-ad-v1.hp"
    assert ghc_rts_summary.sniff(hp.read_bytes(), hp) == 0.0
    assert ghc_rts_machine.sniff(hp.read_bytes(), hp) == 0.0


@pytest.mark.parametrize("reader", [ghc_rts_summary, ghc_rts_machine])
def test_empty_garbage_and_wrong_format(tmp_path: Path, reader) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 20)
    hp = RTS.parent / "ghc-hp" / "hs-ad-v1.hp"
    for f in (empty, garbage, hp):
        with pytest.raises(ParseError) as ei:
            reader.read(f)
        assert str(f) in str(ei.value)
        assert ei.value.line is not None or f is empty
    with pytest.raises(UnknownFormatError):
        load(garbage)
    with pytest.raises(ParseError):
        load(empty)


def test_the_gc_count_is_judged_as_its_generations_are() -> None:
    """GCs (all generations) is gen 0 plus gen 1 collections (6,434 = 5,789 + 645 in
    hs-ad v1's -t file, 6,435 in its -s file), and fewer of each is better: its Δ was
    left uncoloured beside its parts'."""
    for path, n in ((V1_S, 6435), (V1_T, 6434)):
        p = load(path)
        t, m = p.totals, p.total_metrics
        assert t["num_gcs"] == t["gen0_collections"] + t["gen1_collections"] == n
        assert m["num_gcs"].better == m["gen0_collections"].better == \
            m["gen1_collections"].better == "lower"
        assert m["max_residency_samples"].better == "none"
