"""Julia Profile.print() text reader on the real report in tests/data/julia-profile-print."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import julia_profile_print as jpp
from profdiff.parsers.detect import detect, load
from profdiff.parsers.errors import ParseError
from profdiff.parsers.model import Kind, Unit
from profdiff.viewer.compare import Status, align

DATA = Path(__file__).parent.parent / "data" / "julia-profile-print"
GRASS = DATA / "julia-1.10-grass-eclipse-Profile.print.txt"


def _lines() -> list[str]:
    return GRASS.read_text(encoding="utf-8").splitlines()


def test_corpus_is_complete():
    assert sorted(p.name for p in DATA.glob("*.txt")) == [GRASS.name]


def test_grass_totals_and_meta():
    p = load(GRASS)
    assert p.format == "julia-profile-print" and not p.incomplete and p.warnings == ()
    lines = _lines()
    assert lines[-1].startswith("Total snapshots: 138959. Utilization: 100%")
    tree = lines[2:-1]
    assert p.n_nodes == len(tree) == 4562
    # root lines: a count right after the first ╎ (computed without the reader)
    roots = [int(ln.split("╎", 1)[1].split()[0]) for ln in tree
             if re.match(r"^\s*\d*╎\d", ln)]
    assert p.totals["total_samples"] == 138959
    assert p.meta["total_snapshots"] == 138959
    assert p.meta["samples_in_tree"] == sum(roots) == 132405
    assert p.meta["utilization"] == 100.0 and p.meta["program"] == "julia"
    assert int(p.values["total_samples"][p.parent == -1].sum()) == sum(roots)
    # Overhead column summed over all lines (independently) is the self sum
    overhead = sum(int(ln.split("╎", 1)[0].strip() or 0) for ln in tree)
    assert int(p.values["self_samples"].sum()) == overhead == 132404
    assert p.meta["unattributed_samples"] == 1  # one leaf "1 …array.jl:1021; setindex!"
    assert p.metric("self_samples").kind is Kind.SELF
    t = p.metric("total_samples")
    assert t.kind is Kind.INCLUSIVE and t.self_of == "self_samples" and t.sampled
    assert t.unit is Unit.SAMPLES
    assert p.metric("total_pct").unit is Unit.PERCENT
    assert p.default_metric == "self_samples"


def test_grass_rows_checked_by_eye():
    p = load(GRASS)
    s, t = p.values["self_samples"], p.values["total_samples"]
    # line 3: "     ╎50     @Base/array.jl:376; _copyto_impl!(dest::Matrix{Float64}, doffs::In…"
    assert p.name[0] == "_copyto_impl!(dest::Matrix{Float64}, doffs::In…"
    assert p.module[0] == "array.jl" and p.src[0] == "@Base/array.jl:376"
    assert p.frames.line[p.frame[0]] == 376
    assert (s[0], t[0], p.parent[0]) == (0, 50, -1)
    # line 5: "   50╎  50     @Base/cmem.jl:26; memmove"  (grandchild of line 3)
    assert p.name[2] == "memmove" and (s[2], t[2]) == (50, 50)
    assert p.parent[2] == 1 and p.parent[1] == 0
    # line 9: "     ╎132306 @Base/client.jl:552; _start()"
    assert p.name[6] == "_start()" and t[6] == 132306 and p.parent[6] == -1
    assert p.values["total_pct"][6] == pytest.approx(132306 / 138959 * 100)
    # last tree line: "    6╎  6      …ebra/src/generic.jl:462; generic_norm2(x::Vector{Float64})"
    last = p.n_nodes - 1
    assert p.name[last] == "generic_norm2(x::Vector{Float64})"
    assert p.module[last] == "generic.jl" and p.src[last] == "…ebra/src/generic.jl:462"
    assert (s[last], t[last]) == (6, 6)
    par = p.parent[last]  # "    6╎ 12     …Algebra/src/dense.jl:106; norm2"
    assert p.name[par] == "norm2" and (s[par], t[par]) == (6, 12)
    assert p.values["self_pct"][last] == pytest.approx(6 / 138959 * 100)


def test_grass_plus_n_indent():
    """Past half the width Julia prints '+n': line 197 is one deeper than line 196."""
    lines = _lines()
    assert "╎  +1 1      …educedim.jl:324; mapreduc…" in lines[196]
    assert "╎  +4 1      @Base/int.jl:87; +" in lines[199]
    p = load(GRASS)
    n196, n197, n200 = 196 - 3, 197 - 3, 200 - 3  # node id = line number - 3
    assert p.parent[n197] == n196
    assert p.depth[n197] == p.depth[n196] + 1 == 41
    assert p.depth[n200] == 44 and p.values["self_samples"][n200] == 1
    assert p.name[n200] == "+" and p.module[n200] == "int.jl"
    assert int(p.depth.max()) == 54


def test_count_is_overhead_plus_children():
    p = load(GRASS)
    s = p.values["self_samples"].astype(np.int64)
    t = p.values["total_samples"].astype(np.int64)
    kids = np.zeros_like(t)
    has = p.parent >= 0
    np.add.at(kids, p.parent[has], t[has])
    bad = np.nonzero(t != s + kids)[0]
    assert bad.tolist() == [32]  # line 35, a leaf with count 1 and no overhead
    assert p.name[32] == "setindex!" and (s[32], t[32]) == (0, 1)


def test_match_drops_the_signature():
    p = load(GRASS)
    f = p.frames
    i = list(f.name).index("_copyto_impl!(dest::Matrix{Float64}, doffs::In…")
    assert f.match[i] == "_copyto_impl!"
    assert f.key[i] == "array.jl\x1f_copyto_impl!"


def test_redetect_under_unknown_name(tmp_path):
    dst = tmp_path / "x.unknown"
    shutil.copy(GRASS, dst)
    assert detect(dst) is jpp
    assert load(dst).totals["total_samples"] == 138959


def test_sniff_without_header():
    body = "\n".join(_lines()[2:200]).encode()
    assert jpp.sniff(body, Path("x")) > 0.5
    assert jpp.sniff(b"hello world\nfoo bar\n", Path("x")) == 0.0


def test_empty_file(tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("")
    with pytest.raises(ParseError, match="empty"):
        jpp.read(f)


def test_garbage(tmp_path):
    f = tmp_path / "junk.bin"
    f.write_bytes(bytes(range(256)) * 50)
    with pytest.raises(ParseError):
        load(f)
    with pytest.raises(ParseError) as e:
        jpp.read(f)
    assert str(f) in str(e.value) and ":1:" in str(e.value) and "tree line" in str(e.value)


def test_wrong_format_line_named(tmp_path):
    lines = _lines()
    lines[10] = "this is not a profile line"
    f = tmp_path / "bad.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ParseError) as e:
        load(f)
    assert f"{f}:11:" in str(e.value) and "Profile.print tree line" in str(e.value)
    p = load(f, lenient=True)
    assert any(":11:" in w for w in p.warnings)
    assert p.totals["total_samples"] == 138959


def test_truncated_mid_line(tmp_path):
    data = GRASS.read_bytes()
    cut = data[: len(data) // 2]
    cut = cut[: cut.rfind(b"\n") + 20]  # inside a line
    f = tmp_path / "cut.txt"
    f.write_bytes(cut)
    n_full = cut.count(b"\n") - 2  # complete tree lines (header and ==== excluded)
    p = load(f)
    assert p.incomplete and "no newline" in p.incomplete_reason
    assert p.n_nodes == n_full
    # totals fall back to the printed roots' counts
    roots = [int(ln.split("╎", 1)[1].split()[0]) for ln in
             cut.decode("utf-8", "replace").splitlines()[2:-1] if re.match(r"^\s*\d*╎\d", ln)]
    assert p.totals["total_samples"] == sum(roots)


def test_truncated_at_line_end(tmp_path):
    lines = _lines()[:1000]
    f = tmp_path / "cut.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    p = load(f)
    assert p.incomplete and "Total snapshots" in p.incomplete_reason
    assert p.n_nodes == 998


def test_flat_format(tmp_path):
    """format=:flat (layout of Profile.jl print_flat), rows taken from the GRASS tree."""
    text = (
        " Count  Overhead File                     Line Function\n"
        " =====  ======== ====                     ==== ========\n"
        "    50         0 @Base/array.jl            376 _copyto_impl!(dest::Matrix{Float64})\n"
        "    61         0 @Base/array.jl            337 unsafe_copyto!\n"
        "    61        61 @Base/cmem.jl              26 memmove\n"
        "     3         3 my dir/math.jl              ? pow_body(x::Float64, n::Int64)\n"
        "Total snapshots: 138959. Utilization: 100% across all threads and tasks. Use the "
        "`groupby` kwarg to break down by thread and/or task.\n"
    )
    f = tmp_path / "flat.txt"
    f.write_text(text, encoding="utf-8")
    assert detect(f) is jpp
    p = load(f)
    assert p.meta["variant"] == "flat" and not p.incomplete
    assert (p.parent == -1).all() and p.n_nodes == 4
    assert p.name.tolist()[2:] == ["memmove", "pow_body(x::Float64, n::Int64)"]
    assert p.module.tolist() == ["array.jl", "array.jl", "cmem.jl", "math.jl"]
    assert p.src[3] == "my dir/math.jl:?"
    assert p.values["self_samples"].tolist() == [0, 0, 61, 3]
    assert p.values["total_samples"].tolist() == [50, 61, 61, 3]
    assert p.totals["total_samples"] == 138959


def test_groupby_threads(tmp_path):
    lines = _lines()
    head, body = lines[:2], lines[2:8]  # the _copyto_impl! and vcat subtrees (61 snapshots)
    text = "\n".join(head + ["Thread 1"] + body + ["Total snapshots: 70 (100% utilization)",
                             "", "Thread 2"] + body[:3] + ["Total snapshots: 50 (90% utilization)",
                                                         ""]) + "\n"
    f = tmp_path / "grouped.txt"
    f.write_text(text, encoding="utf-8")
    p = load(f)
    assert p.meta["threads"] == [1, 2]
    roots = p.roots
    assert [p.name[r] for r in roots] == ["Thread 1", "Thread 2"]
    assert p.values["total_samples"][roots].tolist() == [70, 50]
    assert p.values["self_samples"][roots].tolist() == [70 - 61, 0]
    assert p.totals["total_samples"] == 120
    assert p.frames.kind[p.frame[roots[0]]] == "thread"


def test_diff_with_one_subtree_changed(tmp_path):
    """The vcat subtree (lines 6-8, 11 snapshots) doubled in a copy: only it changes."""
    lines = _lines()
    assert lines[5].startswith("     ╎11     @Base/array.jl:2041; vcat(")
    assert lines[7] == "   11╎  11     @Base/cmem.jl:26; memmove"
    new = list(lines)
    for i in (5, 6, 7):
        new[i] = new[i].replace("11", "22")
    f = tmp_path / "new.txt"
    f.write_text("\n".join(new) + "\n", encoding="utf-8")
    c = align([load(GRASS), load(f)])
    paths = {" / ".join(c.path_labels(i)): i for i in range(c.n_rows)}
    d = c.delta("total_samples")
    vcat = [k for k in paths if k.startswith("array.jl.vcat(")]
    assert len(vcat) == 3  # vcat, vcat/unsafe_copyto!, vcat/unsafe_copyto!/memmove
    for k in vcat:
        assert d[paths[k]] == 11 and c.status[paths[k]] == Status.CHANGED
    assert c.delta("self_samples")[paths[max(vcat, key=len)]] == 11
    others = [i for k, i in paths.items() if k not in vcat]
    assert not np.any(d[others])
    assert int((c.status == Status.CHANGED).sum()) == 3


ALL_DATA = Path(__file__).parent.parent / "data"
OTHERS = sorted(p for p in ALL_DATA.rglob("*") if p.is_file() and DATA not in p.parents
                and p.suffix != ".md")


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(ALL_DATA)))
def test_never_claims_other_formats(path):
    try:
        mod = detect(path)
    except ParseError:
        return
    assert mod.FORMAT != "julia-profile-print"
