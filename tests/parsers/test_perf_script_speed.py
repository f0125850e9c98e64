"""perf script reader: the whole-chunk path against a per-stack reference, and the
issue-18 rules on how a file ends and on out-of-range numbers."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from profdiff.parsers import perf_script
from profdiff.parsers.builder import TreeBuilder
from profdiff.parsers.errors import ParseError

DATA = Path(__file__).resolve().parent.parent / "data" / "perf"
CVM = DATA / "c-vm" / "v1" / "perf.script.txt.gz"


def _text() -> str:
    return gzip.decompress(CVM.read_bytes()).decode()


def _paths(prof) -> dict[tuple[str, ...], int]:
    """Self samples per root-to-node path of labels (independent of node numbering)."""
    out: dict[tuple[str, ...], int] = {}
    for i in range(prof.n_nodes):
        key = tuple(prof.path_labels(i))
        out[key] = out.get(key, 0) + int(prof.values["self_samples"][i])
    return out


def _reference(text: str) -> dict[tuple[str, ...], int]:
    """The same tree built stack by stack with TreeBuilder from a plain split of the text."""
    tb = TreeBuilder(["self_samples"])
    for blk in text.split("\n\n"):
        lines = [ln for ln in blk.split("\n") if ln.strip() and not ln.startswith("#")]
        if not lines:
            continue
        frames = []
        for ln in reversed(lines[1:]):
            _addr, rest = ln.strip().split(" ", 1)
            sym, _, dso = rest.rpartition(" (")
            sym = sym.split("+0x")[0] or "[unknown]"
            frames.append(tb.frame(sym, dso[:-1].rsplit("/", 1)[-1]))
        tb.add_stack(frames, self_samples=1)
    from profdiff.parsers.model import Kind, Metric, Unit
    prof = tb.build(path="ref", format="ref",
                    metrics=[Metric("self_samples", Unit.SAMPLES, Kind.SELF)])
    return _paths(prof)


def test_level_build_matches_stack_by_stack_reference() -> None:
    text = _text()
    prof = perf_script.read(CVM)
    got = _paths(prof)
    ref = _reference(text)
    # kernel chains the host cannot resolve are merged by perf_kernel: compare user paths
    user = {k: v for k, v in ref.items() if not any("[unknown]" in p for p in k)}
    for k, v in user.items():
        assert got.get(k) == v, k
    assert sum(got.values()) == sum(ref.values()) == prof.totals["total_samples"]


def test_children_keep_first_seen_order() -> None:
    text = "\n".join([
        "p 1 1.0: 1 cpu-clock: ", "\t1 b (x)", "\t2 main (x)", "",
        "p 1 2.0: 1 cpu-clock: ", "\t3 a (x)", "\t2 main (x)", "",
        "p 1 3.0: 1 cpu-clock: ", "\t1 b (x)", "\t2 main (x)", "", ""])
    prof = perf_script.read_stream(__import__("io").StringIO(text), "t.txt")
    main = int(prof.roots[0])
    assert [prof.frames.name[prof.frame[c]] for c in prof.children(main)] == ["b", "a"]
    assert prof.values["total_samples"][main] == 3


def test_cut_at_line_end_inside_a_chain_drops_the_sample(tmp_path: Path) -> None:
    text = _text()
    blocks = text.split("\n\n")
    cut_at = text.index("\n\n", 100_000) + 2  # start of a sample
    end_of_header = text.index("\n", cut_at) + 1
    two_frames = text.index("\n", text.index("\n", end_of_header) + 1) + 1
    dst = tmp_path / "cut.txt"
    dst.write_text(text[:two_frames])
    prof = perf_script.read(dst)
    assert prof.incomplete and "blank line is missing" in prof.incomplete_reason
    assert prof.totals["total_samples"] == text[:cut_at].count("\n\n")
    assert len(blocks) > prof.totals["total_samples"]


def test_whole_file_says_completeness_cannot_be_told(tmp_path: Path) -> None:
    prof = perf_script.read(CVM)
    assert not prof.incomplete
    assert prof.meta["completeness"].startswith("cannot tell")


@pytest.mark.parametrize("value", [str(2**63), "99999999999999999999999"])
def test_period_out_of_range_is_a_located_error(tmp_path: Path, value: str) -> None:
    text = "\n".join(["p 1 1.0: 5 cpu-clock: ", "\t1 b (x)", "",
                      f"p 1 2.0: {value} cpu-clock: ", "\t1 b (x)", "", ""])
    dst = tmp_path / "big.txt"
    dst.write_text(text)
    with pytest.raises(ParseError) as e:
        perf_script.read(dst)
    assert "big.txt:4" in str(e.value) and "period" in str(e.value) and value in str(e.value)
    prof = perf_script.read(dst, lenient=True)
    assert prof.totals["total_samples"] == 1
    assert any("line 4" in w and value in w for w in prof.warnings)


def test_level_hashing_equals_the_sort_path() -> None:
    """The pandas (hash) and numpy (sort) factorizations of a level agree: codes and
    uniques in first-seen order, so a deep build may use either."""
    import numpy as np

    from profdiff.parsers import builder

    prof = perf_script.read(CVM)
    width = len(prof.frames) + 1
    keys = (prof.parent.astype(np.int64) + 1) * width + prof.frame
    keys = np.concatenate([keys[::-1], keys, keys[::3]])[:20_000]  # repeats, not sorted
    hashed = builder._factorize(keys, pandas_from=0)
    sorted_ = builder._factorize(keys, pandas_from=len(keys))
    assert len(np.unique(keys)) < len(keys)
    for a, b in zip(hashed, sorted_, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(hashed[1][hashed[0]], keys)
