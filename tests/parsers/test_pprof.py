"""pprof reader on the real Go and Julia profiles in tests/data/pprof, plus a small
allocation profile written here with the protobuf package in PProf.jl's layout."""

from __future__ import annotations

import gzip
import re
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import pprof
from profdiff.parsers.detect import detect, load
from profdiff.parsers.errors import ParseError
from profdiff.parsers.model import Kind, Unit, flat_aggregate
from profdiff.parsers.proto import profile_pb2

DATA = Path(__file__).parent.parent / "data" / "pprof"
ALL = sorted(p.name for p in DATA.iterdir() if p.name != "SOURCES.md")
LEGACY = [n for n in ALL if "legacy" in n]
MODERN = [n for n in ALL if "legacy" not in n]


def _decode(path: Path) -> profile_pb2.Profile:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return profile_pb2.Profile.FromString(data)


def _independent(path: Path):
    """Run totals and per-(file base name, function) inclusive sums, straight from the
    protobuf with plain loops (each function counted once per sample; Julia gensym
    numbers ``#123`` dropped from names, as the alignment key does)."""
    prof = _decode(path)
    st = prof.string_table
    funcs = {f.id: (st[f.filename].rsplit("/", 1)[-1], st[f.name] or st[f.system_name])
             for f in prof.function}
    locs = {loc.id: [funcs[ln.function_id] for ln in loc.line] for loc in prof.location}
    n = len(prof.sample_type)
    totals = [0] * n
    inclusive = defaultdict(lambda: [0] * n)
    for s in prof.sample:
        keys = set()
        for lid in s.location_id:
            for mod, name in locs[lid]:
                if name.startswith("Alloc: ") or mod == "nothing":  # Julia's `nothing`
                    mod = ""
                keys.add(f"{mod}\x1f{re.sub(r'#[0-9]+', '#', name)}")  # Julia gensyms
        for i, v in enumerate(s.value):
            totals[i] += v
            for k in keys:
                inclusive[k][i] += v
    return prof, totals, inclusive


def test_corpus_is_complete():
    assert len(MODERN) == 17 and len(LEGACY) == 3


@pytest.mark.parametrize("name", MODERN)
def test_totals_and_flat_inclusive_match_independent_loop(name):
    path = DATA / name
    prof, totals, inclusive = _independent(path)
    p = load(path)
    assert p.format == "pprof"
    assert p.meta["n_samples"] == len(prof.sample)
    bases = [b for _t, _u, b in p.meta["sample_types"]]
    assert len(bases) == len(prof.sample_type)
    for i, b in enumerate(bases):
        self_col, total_col = p.values[f"self_{b}"], p.values[f"total_{b}"]
        assert int(self_col.sum()) == totals[i]
        assert int(total_col[p.roots].sum()) == totals[i]
        assert p.totals[f"self_{b}"] == p.totals[f"total_{b}"] == totals[i]
        assert p.metric(f"total_{b}").self_of == f"self_{b}"
        assert p.metric(f"total_{b}").kind is Kind.INCLUSIVE
    # no node has two children with the same alignment key (module + match/name)
    _keys, node_key = p.frame_key_codes
    parent_key = (p.parent.astype(np.int64) + 1) * (len(_keys) + 1) + node_key
    assert len(np.unique(parent_key)) == p.n_nodes
    # flat per-function inclusive values, derived from the tree, equal the direct count
    # of samples whose stack contains the function (recursion counted once)
    uniq, codes = p.frame_key_codes
    flat = flat_aggregate(p, codes, len(uniq))
    for i, b in enumerate(bases):
        got = dict(zip(uniq.tolist(), flat[f"total_{b}"].astype(np.int64).tolist(),
                       strict=True))
        want = {k: v[i] for k, v in inclusive.items() if v[i]}
        assert {k: v for k, v in got.items() if v} == want


def test_go_cpu_profile_header_and_metrics():
    p = load(DATA / "go-1.18-wordcount-amd64-B4KO-cpu.pprof")
    assert [m.name for m in p.metrics] == [
        "self_samples", "total_samples", "self_cpu_ns", "total_cpu_ns"]
    assert all(m.sampled for m in p.metrics)
    assert p.metric("self_cpu_ns").unit is Unit.NANOSECONDS
    assert p.metric("self_samples").unit is Unit.SAMPLES
    assert p.default_metric == "self_cpu_ns"  # no default_sample_type: the last one
    assert p.meta["sample_types"] == [["samples", "count", "samples"],
                                      ["cpu", "nanoseconds", "cpu_ns"]]
    assert p.meta["period_type"] == ["cpu", "nanoseconds"]
    assert p.meta["period"] == 10_000_000
    assert p.meta["duration_ns"] == 804450327
    assert p.meta["date"].startswith("2023-03-06T09:34:47")
    assert p.meta["program"] == "wordcount01"
    assert p.meta["producer"] == "go"
    assert p.totals["total_samples"] == 62 and p.totals["total_cpu_ns"] == 620_000_000
    # frames: function name, source file base name, start line, full path in src
    i = int(np.flatnonzero(p.frames.name == "main.readbyte")[0])
    assert p.frames.module[i] == "wordcount01.go"
    # Go 1.18 wrote no start_line for it: src is the full path alone, line 0
    assert p.frames.src[i] == "/pprof/wordcount01.go" and p.frames.line[i] == 0
    # Go writes the root frames as runtime.main / runtime.goexit etc., never the leaf
    root_names = set(p.name[p.roots].tolist())
    assert "main.readbyte" not in root_names


def test_go_heap_metric_names_and_pair_alignment():
    a = load(DATA / "go-1.18-wordcount-amd64-B4KO-mem.pprof")
    b = load(DATA / "go-1.18-wordcount-arm64-Andreaswiv-mem.pprof")
    assert [m.name for m in a.metrics] == [
        "self_alloc_objects", "total_alloc_objects", "self_alloc_space_bytes",
        "total_alloc_space_bytes", "self_inuse_objects", "total_inuse_objects",
        "self_inuse_space_bytes", "total_inuse_space_bytes"]
    assert not any(m.sampled for m in a.metrics)
    assert a.metric("self_alloc_space_bytes").unit is Unit.BYTES
    assert a.totals["total_alloc_space_bytes"] == 15272
    assert b.totals["total_alloc_space_bytes"] == 10760
    assert a.default_metric == "self_inuse_space_bytes"
    assert a.meta["label_keys"] == {"bytes": ""}
    # the same program on two machines (/pprof/... vs /home/<user>/pprof/...): the main
    # package's functions align because module is the file's base name
    ka, kb = set(a.frames.key.tolist()), set(b.frames.key.tolist())
    assert "wordcount03.go\x1fmain.main" in ka & kb


def test_julia_alloc_profile_by_type_and_alloc_frames():
    p = load(DATA / "julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz")  # raw, not gzip
    assert [m.name for m in p.metrics] == [
        "self_alloc_count", "total_alloc_count", "self_alloc_bytes", "total_alloc_bytes"]
    assert p.default_metric == "self_alloc_count"  # default_sample_type = "allocs"
    # Profile.Allocs records a sample of the allocations (the rate is not in the file):
    # counts are samples, bytes are counted by them, and every recorded one is a sample
    assert p.metric("self_alloc_count").sampled and p.metric("self_alloc_bytes").sampled
    assert p.metric("self_alloc_bytes").count_of == "self_alloc_count"
    assert p.metric("total_alloc_bytes").count_of == "total_alloc_count"
    assert p.totals["total_samples"] == p.totals["self_alloc_count"] == 5
    exact = load(DATA / "julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz", alloc_sample_rate=1)
    assert not any(m.sampled or m.count_of for m in exact.metrics)
    assert "total_samples" not in exact.totals
    assert p.totals["total_alloc_count"] == 5 and p.totals["total_alloc_bytes"] == 3192
    assert p.meta["producer"] == "julia"
    assert p.meta["label_keys"] == {"bytes": "bytes", "type": ""}
    by_type = p.extras["by_type"]
    assert by_type[0] == {"type": "Profile.Allocs.BufferType", "count": 1, "bytes": 3080}
    assert sum(r["count"] for r in by_type) == 5
    assert sum(r["bytes"] for r in by_type) == 3192
    # every sample ends in an "Alloc: <Type>" leaf of kind "alloc" with no module
    alloc = p.frames.kind == "alloc"
    assert set(p.frames.name[alloc].tolist()) == {f"Alloc: {r['type']}" for r in by_type}
    assert set(p.frames.module[alloc].tolist()) == {""}
    leaves = np.flatnonzero(p.values["self_alloc_count"] > 0)
    assert (p.frames.kind[p.frame[leaves]] == "alloc").all()
    # the leaf's parent chain: Alloc -> jl_gc_alloc -> ... (leaf first in the file)
    vec = np.flatnonzero(p.name == "Alloc: Vector{Tuple{JuLox.Token, JuLox.Position}}")[0]
    assert p.path_labels(int(vec))[-3:] == [
        "libjulia-internal.1.8.dylib._new_array_",
        "libjulia-internal.1.8.dylib.jl_gc_alloc",
        "Alloc: Vector{Tuple{JuLox.Token, JuLox.Position}}"]
    assert p.values["self_alloc_bytes"][vec] == 48


def test_julia_gensym_names_get_a_build_independent_match():
    p = load(DATA / "julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz")
    assert p.frames.match is not None
    i = int(np.flatnonzero(p.frames.name == '(::Base.var\\"#967#969\\"{Bool, Bool, Bool})'
                                            "(::Module)")[0])
    assert p.frames.match[i] == '(::Base.var\\"##\\"{Bool, Bool, Bool})(::Module)'
    j = int(np.flatnonzero(p.frames.name == "scan_tokens(::String)")[0])
    assert p.frames.match[j] == "scan_tokens(::String)"


def test_julia_cpu_run_pair_aligns():
    r1 = load(DATA / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz")
    r2 = load(DATA / "julia-1.11.3-pprofjl-ttd-cpu-run2-2025-03-16.pb.gz")
    assert r1.totals["total_samples"] == 18894 and r2.totals["total_samples"] == 7006
    assert [m.name for m in r1.metrics] == ["self_samples", "total_samples"]
    assert r1.metric("self_samples").sampled and r1.default_metric == "self_samples"
    assert r1.meta["period_type"] == ["cpu", "nanoseconds"] and r1.meta["period"] == 1_000_000
    assert set(r1.meta["label_keys"]) == {"thread_sleeping", "cycle_clock", "taskid",
                                          "threadid"}
    assert "by_type" not in r1.extras
    k1, k2 = set(r1.frames.key.tolist()), set(r2.frames.key.tolist())
    shared = k1 & k2
    assert len(shared) > 0.75 * min(len(k1), len(k2))  # 308 of 396 and 420

    # inlined frames: a location with several lines is several frames, its last line (the
    # caller) nearest the root.  Rebuild the deepest-inlined sample's path independently
    # and walk it down the tree.
    prof = _decode(DATA / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz")
    st = prof.string_table
    funcs = {f.id: f"{st[f.filename].rsplit('/', 1)[-1]}.{st[f.name]}" for f in prof.function}
    locs = {loc.id: loc for loc in prof.location}
    assert max(len(loc.line) for loc in prof.location) == 12
    smp = max(prof.sample, key=lambda s: max(len(locs[i].line) for i in s.location_id))
    want = [funcs[ln.function_id] for lid in reversed(smp.location_id)
            for ln in reversed(locs[lid].line)]
    frontier = [-1]  # all nodes whose path matches so far: one label may belong to
    for label in want:  # several frames (the same function name at other start lines)
        frontier = [int(k) for n in frontier for k in (r1.roots if n < 0 else r1.children(n))
                    if r1.frames.label(int(r1.frame[k])) == label]
        assert frontier, label
    assert all(r1.path_labels(n) == want for n in frontier) and len(want) >= 12
    assert sum(int(r1.values["self_samples"][n]) for n in frontier) >= 1


def test_uncompressed_pprof_and_stack_depth_type():
    p = load(DATA / "julia-1.8.1-pprofjl-heapsnapshotparser-prof.pprof")
    assert [m.name for m in p.metrics] == [
        "self_samples", "total_samples", "self_stack_depth", "total_stack_depth"]
    assert p.totals["total_samples"] == 3280 and p.totals["total_stack_depth"] == 69455
    assert p.meta["period"] == 10_000_000


def test_sample_type_option_and_granularity_lines():
    path = DATA / "julia-1.8.5-pprofjl-julox-alloc-profile.pb.gz"
    assert load(path, sample_type="size").default_metric == "self_alloc_bytes"
    assert load(path, sample_type="alloc_bytes").default_metric == "self_alloc_bytes"
    with pytest.raises(ParseError, match="sample_type"):
        load(path, sample_type="cpu")
    fn = load(path)
    ln = load(path, granularity="lines")
    assert ln.meta["granularity"] == "lines"
    # new_tokens is sampled on two lines (67 and 68): one frame per line
    assert sorted(ln.frames.line[ln.frames.name == "new_tokens(::String)"].tolist()) == [67, 68]
    assert fn.frames.line[fn.frames.name == "new_tokens(::String)"].tolist() == [66]
    assert ln.totals == fn.totals


# --------------------------------------------------------------------------------------
# a small allocation profile in PProf.jl's layout, built here field by field
# --------------------------------------------------------------------------------------
def _synthetic(with_alloc_frames: bool = True) -> profile_pb2.Profile:
    st: list[str] = [""]

    def s(x: str) -> int:
        if x not in st:
            st.append(x)
        return st.index(x)

    p = profile_pb2.Profile()
    p.sample_type.add(type=s("allocs"), unit=s("count"))
    p.sample_type.add(type=s("size"), unit=s("bytes"))
    p.default_sample_type = s("allocs")
    p.period_type.type, p.period_type.unit = s("heap"), s("bytes")
    p.period = 1
    p.time_nanos = 1_700_000_000_000_000_000
    p.duration_nanos = 2_500_000_000
    p.drop_frames = s("jl_.*")
    p.comment.append(s("written by the test"))
    # functions: (id, name, system name, file, start line)
    fns = [
        (1, "main()", "main", "/src/App.jl", 10),
        (2, "work(::Int64)", "work", "/src/App.jl", 20),
        (3, "helper(::Int64)", "helper", "/src/Util.jl", 5),  # inlined into work
        (4, 'var"#f#12"(::Int64)', "#f#12", "/src/App.jl", 40),
        (5, "jl_gc_alloc", "jl_gc_alloc", "/lib/libjulia-internal.so", -1),
        (6, "Alloc: Vector{Int64}", "Alloc: Vector{Int64}", "nothing", 0),
        (7, "Alloc: String", "Alloc: String", "nothing", 0),
    ]
    for fid, name, sysname, file, start in fns:
        p.function.add(id=fid, name=s(name), system_name=s(sysname), filename=s(file),
                       start_line=start)
    # locations: (id, [(function, line), ...]) - line[0] innermost
    locs = [
        (1, [(1, 12)]),
        (2, [(3, 7), (2, 22)]),  # helper inlined into work at line 22
        (3, [(4, 41)]),
        (4, [(5, -1)]),
        (5, [(6, 0)]),
        (6, [(7, 0)]),
    ]
    for lid, lines in locs:
        loc = p.location.add(id=lid)
        for fid, line in lines:
            loc.line.add(function_id=fid, line=line)

    def sample(stack, count, size, typ):
        if with_alloc_frames:
            stack = [5 if typ == "Vector{Int64}" else 6, *stack]
        smp = p.sample.add(location_id=stack, value=[count, size])
        smp.label.add(key=s("bytes"), num=size, num_unit=s("bytes"))
        smp.label.add(key=s("type"), str=s(typ))

    # stacks leaf first: jl_gc_alloc <- work/helper <- main
    sample([4, 2, 1], 1, 80, "Vector{Int64}")
    sample([4, 2, 1], 1, 80, "Vector{Int64}")
    sample([4, 3, 1], 1, 24, "String")
    sample([4, 1], 1, 16, "String")
    p.string_table.extend(st)
    return p


def _write(tmp_path: Path, prof: profile_pb2.Profile, name: str, gz: bool = True) -> Path:
    out = tmp_path / name
    data = prof.SerializeToString()
    out.write_bytes(gzip.compress(data) if gz else data)
    return out


def test_synthetic_allocation_profile_exact(tmp_path):
    path = _write(tmp_path, _synthetic(), "alloc.pb.gz")
    p = load(path)
    assert p.format == "pprof" and p.warnings == ()
    assert p.default_metric == "self_alloc_count"
    assert p.meta["sample_types"] == [["allocs", "count", "alloc_count"],
                                      ["size", "bytes", "alloc_bytes"]]
    assert p.meta["period_type"] == ["heap", "bytes"] and p.meta["period"] == 1
    assert p.meta["date"] == "2023-11-14T22:13:20+00:00"
    assert p.meta["time_nanos"] == 1_700_000_000_000_000_000
    assert p.meta["duration_ns"] == 2_500_000_000
    assert p.meta["drop_frames"] == "jl_.*" and p.meta["keep_frames"] == ""
    assert p.meta["comments"] == ["written by the test"]
    assert p.meta["n_samples"] == 4 and p.meta["n_locations"] == 6
    assert p.totals == {"self_alloc_count": 4, "total_alloc_count": 4,
                        "self_alloc_bytes": 200, "total_alloc_bytes": 200,
                        "total_samples": 4}  # recorded allocations: a sample (rate unknown)
    # the tree, root first, inlined helper below work
    paths = {" > ".join(p.path_labels(i)): (int(p.values["self_alloc_bytes"][i]),
                                            int(p.values["total_alloc_bytes"][i]))
             for i in range(p.n_nodes)}
    assert paths == {
        "App.jl.main()": (0, 200),
        "App.jl.main() > App.jl.work(::Int64)": (0, 160),
        "App.jl.main() > App.jl.work(::Int64) > Util.jl.helper(::Int64)": (0, 160),
        "App.jl.main() > App.jl.work(::Int64) > Util.jl.helper(::Int64) > "
        "libjulia-internal.so.jl_gc_alloc": (0, 160),
        "App.jl.main() > App.jl.work(::Int64) > Util.jl.helper(::Int64) > "
        "libjulia-internal.so.jl_gc_alloc > Alloc: Vector{Int64}": (160, 160),
        'App.jl.main() > App.jl.var"#f#12"(::Int64)': (0, 24),
        'App.jl.main() > App.jl.var"#f#12"(::Int64) > libjulia-internal.so.jl_gc_alloc': (0, 24),
        'App.jl.main() > App.jl.var"#f#12"(::Int64) > libjulia-internal.so.jl_gc_alloc > '
        "Alloc: String": (24, 24),
        "App.jl.main() > libjulia-internal.so.jl_gc_alloc": (0, 16),
        "App.jl.main() > libjulia-internal.so.jl_gc_alloc > Alloc: String": (16, 16),
    }
    assert int(p.values["total_alloc_count"][p.roots[0]]) == 4
    # frames: function start line, full path in src, C functions without a line
    f = {n: i for i, n in enumerate(p.frames.name.tolist())}
    assert p.frames.line[f["work(::Int64)"]] == 20
    assert p.frames.src[f["work(::Int64)"]] == "/src/App.jl:20"
    assert p.frames.src[f["helper(::Int64)"]] == "/src/Util.jl:5"
    assert p.frames.line[f["jl_gc_alloc"]] == 0
    assert p.frames.src[f["jl_gc_alloc"]] == "/lib/libjulia-internal.so"
    assert p.frames.kind[f["Alloc: String"]] == "alloc"
    assert p.frames.module[f["Alloc: String"]] == ""
    assert p.frames.match[f['var"#f#12"(::Int64)']] == 'var"#f#"(::Int64)'
    assert p.extras["by_type"] == [
        {"type": "Vector{Int64}", "count": 2, "bytes": 160},
        {"type": "String", "count": 2, "bytes": 40},
    ]
    # granularity="lines": the sampled line instead of the start line
    ln = load(path, granularity="lines")
    g = {n: i for i, n in enumerate(ln.frames.name.tolist())}
    assert ln.frames.line[g["work(::Int64)"]] == 22
    assert ln.frames.src[g["helper(::Int64)"]] == "/src/Util.jl:7"


def test_type_frames_option_synthesises_alloc_leaves(tmp_path):
    bare = _write(tmp_path, _synthetic(with_alloc_frames=False), "bare.pb", gz=False)
    p = load(bare)
    assert not (p.frames.kind == "alloc").any()  # only frames some sample reaches
    assert p.extras["by_type"][0] == {"type": "Vector{Int64}", "count": 2, "bytes": 160}
    t = load(bare, type_frames=True)
    full = load(_write(tmp_path, _synthetic(), "full.pb.gz"))
    assert sorted(" > ".join(t.path_labels(i)) for i in range(t.n_nodes)) == sorted(
        " > ".join(full.path_labels(i)) for i in range(full.n_nodes))
    # with frames already present, type_frames adds nothing
    again = load(tmp_path / "full.pb.gz", type_frames=True)
    assert again.n_nodes == full.n_nodes


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LEGACY)
def test_legacy_profiles_get_a_clear_error(name):
    with pytest.raises(ParseError, match="legacy pprof format not supported") as e:
        load(DATA / name)  # detection routes them here
    assert name in str(e.value)


def test_truncated_gzip_is_a_located_error(tmp_path):
    src = (DATA / "julia-1.11.3-pprofjl-ttd-alloc-profile.pb.gz").read_bytes()
    cut = tmp_path / "cut.pb.gz"
    cut.write_bytes(src[: len(src) // 2])
    with pytest.raises(ParseError) as e:
        load(cut)
    msg = str(e.value)
    assert "cut.pb.gz" in msg and "truncated" in msg and f"byte {len(src) // 2}" in msg


def test_truncated_raw_protobuf(tmp_path):
    src = (DATA / "julia-1.8.1-pprofjl-heapsnapshotparser-prof.pprof").read_bytes()
    cut = tmp_path / "cut.pprof"
    cut.write_bytes(src[: len(src) // 2])
    with pytest.raises(ParseError, match="pprof protobuf") as e:
        load(cut)
    # said as a cut, where the file ends, not as the runtime's "Wire format was corrupt"
    assert e.value.offset == len(src) // 2 and "cut short" in str(e.value)
    assert "Wire format" not in str(e.value)


def test_gzip_cut_before_the_string_table_is_named_as_cut(tmp_path):
    """A gzip stream cut where the protobuf inside stops between two fields parses, but
    holds no string table: detected as pprof all the same, and said to be cut (it was
    "not a supported format, found 'H...'")."""
    import zlib

    src = (DATA / "go-resolv-examples-cpu.pprof").read_bytes()
    raw = gzip.decompress(src)
    table = raw.index(b"\x32\x00")  # the string table's first entry: "" (field 6)
    for n in range(len(src) // 20, len(src), 64):  # the first cut the runtime parses
        out = zlib.decompressobj(31).decompress(src[:n])
        if table // 2 < len(out) < table:
            break
    cut = tmp_path / "cut.pprof"
    cut.write_bytes(src[:n])
    with pytest.raises(ParseError) as e:
        load(cut)
    assert "complete gzip stream" in str(e.value) and "truncated" in str(e.value)


def test_non_pprof_protobuf(tmp_path):
    from google.protobuf import descriptor_pb2

    other = descriptor_pb2.FileDescriptorProto(name="x.proto", package="demo")
    other.message_type.add(name="M").field.add(name="f", number=1, type=9)
    path = tmp_path / "other.pb"
    path.write_bytes(other.SerializeToString())
    with pytest.raises(ParseError, match="pprof"):
        pprof.read(path)
    assert pprof.sniff(path.read_bytes(), path) <= 0.2  # only a weak claim


def test_empty_and_garbage(tmp_path):
    empty = tmp_path / "empty.pb.gz"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match="empty"):
        pprof.read(empty)
    garbage = tmp_path / "garbage.pprof"
    garbage.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ParseError) as e:
        pprof.read(garbage)
    assert "garbage.pprof" in str(e.value)


def test_lenient_skips_samples_with_wrong_value_count(tmp_path):
    prof = _synthetic()
    prof.sample[0].value.append(7)  # 3 values for 2 sample types
    path = _write(tmp_path, prof, "bad.pb.gz")
    with pytest.raises(ParseError, match="2 values per sample"):
        pprof.read(path)
    p = pprof.read(path, lenient=True)
    assert len(p.warnings) == 1 and "sample #0" in p.warnings[0]
    assert p.totals["total_alloc_bytes"] == 120


def test_missing_location_is_an_error(tmp_path):
    prof = _synthetic()
    prof.sample[3].location_id.append(99)
    path = _write(tmp_path, prof, "badloc.pb.gz")
    with pytest.raises(ParseError, match="location 99"):
        pprof.read(path)
    assert "location 99" in pprof.read(path, lenient=True).warnings[0]


@pytest.mark.parametrize("name", [
    "go-resolv-2018-cpu.pprof",                            # gzip, time_nanos first
    "julia-1.8.5-pprofjl-julox-cpu-profile.pb.gz",          # raw protobuf, sample_type first
    "google-pprof-large.cpu.pb.gz",                         # longer than the sniff head
])
def test_redetect_under_unknown_name(tmp_path, name):
    dst = tmp_path / "x.unknown"
    shutil.copy(DATA / name, dst)
    assert detect(dst) is pprof
    p = load(dst)
    assert p.format == "pprof" and p.n_nodes > 0


def test_sniff_does_not_claim_text():
    txt = b"        - function f(x)\n     1024     x = zeros(10)\n        - end\n"
    assert pprof.sniff(txt, Path("a.jl.mem")) == 0.0
    assert pprof.sniff(b"heap profile: 13: 1 [ 2: 3] @ heap/1048576\n", Path("a.txt")) > 0
    assert pprof.sniff(b"pid tid 123.456: cycles:\n", Path("perf.txt")) == 0.0


def test_progress_is_reported():
    seen: list[float] = []
    load(DATA / "julia-1.9-pprofjl-heapsnapshotparser-cpu-profile.pb.gz",
                 progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_julia_nothing_is_no_file():
    """PProf.jl writes Julia's ``nothing`` as the file of frames without a source
    ([unknown function], top-level scope, some closures): they get no module, not a
    module called "nothing"."""
    path = DATA / "julia-1.11.3-pprofjl-ttd-cpu-run1-2025-03-12.pb.gz"
    prof = _decode(path)
    st = prof.string_table
    assert any(st[f.filename] == "nothing" for f in prof.function)
    p = load(path)
    assert "nothing" not in set(p.frames.module.tolist())
    unknown = [i for i, n in enumerate(p.frames.name.tolist()) if n == "[unknown function]"]
    assert "" in {p.frames.module[i] for i in unknown}
