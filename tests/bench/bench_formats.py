"""Whole-process speed of ``profdiff show`` on big -pj JSON, pprof and non-ASCII .prof
files, as ratios to a floor measured in the same alternating run (prints figures only).

``python tests/bench/bench_formats.py [--rounds 3] [--only pj|pprof|prof|app]
[--code TREE] [--baseline TREE]`` (``--baseline``: another source tree run in the same
alternation, for before/after ratios).

* ``-pj`` JSON, 10^6 nodes: deep chains (60-150 frames) branching off each other, 2,000
  cost centres of which 3 % have names with λ, ⊕, öß.  Floor: ``json.load`` with the GC
  off in a fresh interpreter.  Target <= 2x.
* pprof (Julia-1.11-like), 10^6 samples over 9.8k distinct deep stacks, each sample with
  PProf.jl's four labels (a unique ``cycle_clock``).  Floor: a fresh interpreter that
  decodes the protobuf and loops over the samples' locations and values.  Target <= 1.5x.
  Also printed: the decode alone (gunzip + ``ParseFromString``).
* GHC ``.prof`` of ~100 MB with non-ASCII names in 4 % of rows (GHC pads by characters).
  Floor: a bare ``for line in f`` loop in a fresh interpreter.  Target <= 4x.
* start-up: ``profdiff show`` of a small real ``.prof`` and ``profdiff --help`` against
  ``python -c pass``.  Targets <= 10x and <= 4x.

Each row also prints the peak RSS of ``profdiff show`` against the file size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from alternate import ToMark, alternate, summary  # noqa: E402

CLI = (sys.executable, "-m", "profdiff.viewer.cli")
PROFDIFF = list(CLI)
UNICODE = ["λ", "⊕", "öß"]


def _names(n: int, rng: np.random.Generator) -> list[str]:
    out = []
    for i in range(n):
        name = f"fn{i}_{'abcdefgh'[i % 8]}"
        if rng.random() < 0.03:
            name = f"{UNICODE[i % 3]}{name}{UNICODE[(i + 1) % 3]}"
        out.append(name)
    return out


def deep_depths(n: int, rng: np.random.Generator) -> np.ndarray:
    """Pre-order depths of a tree made of 60-150-frame chains, each branching off the
    previous chain's path at a random depth: many distinct deep stacks."""
    depth = np.empty(n, dtype=np.int64)
    depth[0] = 0
    i, cur = 1, 0
    while i < n:
        b = int(rng.integers(0, cur + 1))
        length = int(rng.integers(60, 151)) - b if b < 60 else int(rng.integers(1, 30))
        length = max(1, min(length, n - i))
        depth[i : i + length] = np.arange(b + 1, b + 1 + length)
        i += length
        cur = b + length
    return depth


def write_pj(dst: Path, n: int) -> None:
    rng = np.random.default_rng(1)
    names = _names(2000, rng)
    depth = deep_depths(n, rng)
    cc = rng.integers(1, len(names) + 1, size=n)
    ticks = rng.integers(0, 5, size=n) * (rng.random(n) < 0.3)
    alloc = rng.integers(0, 10_000, size=n)
    entries = rng.integers(1, 100, size=n)
    ccs = ",\n".join(
        json.dumps({"id": i + 1, "label": nm, "module": f"Mod{i % 50}", "src_loc": f"M.hs:{i}",
                    "is_caf": False}, ensure_ascii=False) for i, nm in enumerate(names))
    with open(dst, "w", encoding="utf-8") as f:
        f.write('{"program": "bench", "arguments": ["bench"], "rts_arguments": ["-pj"], '
                '"end_time": "2026-01-01", "initial_capabilities": 1, "total_time": 1.0, '
                f'"total_ticks": {int(ticks.sum())}, "tick_interval": 1000, '
                f'"total_alloc": {int(alloc.sum())},\n"cost_centres": [{ccs}],\n"profile": ')
        parts = []
        dl = depth.tolist()
        for i in range(n):
            parts.append(f'{{"id": {cc[i]}, "entries": {entries[i]}, "alloc": {alloc[i]}, '
                         f'"ticks": {ticks[i]}, "children": [')
            nxt = dl[i + 1] if i + 1 < n else 0
            close = dl[i] - nxt + 1  # this node and the ancestors the next row leaves
            parts.append("]}" * close)
            if i + 1 < n and close:
                parts.append(",")
            if len(parts) > 30_000:
                f.write("".join(parts))
                parts.clear()
        f.write("".join(parts) + "}\n")  # closes the document


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (the generator writes samples as bytes: a
    million ``Sample`` messages built in Python would take minutes)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def write_pprof(dst: Path, n_samples: int, n_stacks: int = 9800) -> None:
    """Julia-1.11-like CPU profile: deep stacks (60-150 frames) and, as PProf.jl writes
    them, four labels per sample of which ``cycle_clock`` differs in every sample, so no
    two samples are byte-identical (tests/data/pprof/julia-1.11.3-*-cpu-*.pb.gz)."""
    from profdiff.parsers.proto import profile_pb2

    rng = np.random.default_rng(2)
    p = profile_pb2.Profile()
    st = ["", "events", "count", "nanoseconds", "cpu", "thread_sleeping", "false",
          "cycle_clock", "taskid", "threadid", "4500242448", "1"]
    names = _names(3000, rng)
    fn_base = len(st)
    st += names + [f"/src/pkg{i % 40}/file{i % 300}.jl" for i in range(3000)]
    p.string_table.extend(st)
    p.sample_type.add(type=1, unit=2)
    for i in range(3000):
        p.function.add(id=i + 1, name=fn_base + i, filename=fn_base + 3000 + i, start_line=i)
        p.location.add(id=i + 1).line.add(function_id=i + 1, line=10 + i)
    stacks = []  # location_id (packed) and value [1] of each distinct stack
    for _ in range(n_stacks):
        d = int(rng.integers(60, 151))
        ids = np.concatenate([rng.integers(1, 200, size=d // 2),
                              rng.integers(1, 3001, size=d - d // 2)]).tolist()
        stacks.append(_field(1, b"".join(map(_varint, ids))) + _field(2, _varint(1)))
    label = profile_pb2.Label
    sleeping = _field(3, label(key=5, str=6).SerializeToString())
    task_thread = (_field(3, label(key=8, str=10).SerializeToString())
                   + _field(3, label(key=9, str=11).SerializeToString()))
    clock_head = label(key=7, num_unit=3).SerializeToString() + _varint(3 << 3)  # num=...
    parts = [p.SerializeToString()]
    clocks = (4_384_178_311_358 - rng.integers(20_000, 40_000, size=n_samples).cumsum()).tolist()
    for k, clock in zip(rng.integers(0, n_stacks, size=n_samples).tolist(), clocks, strict=True):
        body = stacks[k] + sleeping + _field(3, clock_head + _varint(clock)) + task_thread
        parts.append(_field(2, body))  # Profile.sample
    dst.write_bytes(gzip.compress(b"".join(parts), compresslevel=1))


PPROF_FLOOR = """
import gzip, sys
from profdiff.parsers.proto import profile_pb2
p = profile_pb2.Profile()
p.ParseFromString(gzip.decompress(open({path!r}, "rb").read()))
for s in p.sample:
    s.location_id
    s.value
"""
PPROF_FLOOR_ISAL = """
from isal import isal_zlib
from profdiff.parsers.proto import profile_pb2
p = profile_pb2.Profile()
p.ParseFromString(isal_zlib.decompress(open({path!r}, "rb").read(), 31))
for s in p.sample:
    s.location_id
    s.value
"""
PPROF_DECODE = """
import gzip
from profdiff.parsers.proto import profile_pb2
profile_pb2.Profile().ParseFromString(gzip.decompress(open({path!r}, "rb").read()))
"""


def write_prof(dst: Path, mb: float) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "parsers"))
    from bench_ghc_prof import build_large

    build_large(dst, mb)
    rng = np.random.default_rng(3)
    swap = str.maketrans({"a": "λ", "o": "ö", "s": "ß", "e": "⊕"})
    out = []
    with open(dst, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("MAIN "))
    pick = rng.random(len(lines)) < 0.04
    for i, ln in enumerate(lines):
        if i > start and pick[i] and ln.strip():
            body = ln.lstrip(" ")
            name, sep, rest = body.partition(" ")
            ln = ln[: len(ln) - len(body)] + name.translate(swap) + sep + rest
        out.append(ln)
    dst.write_text("\n".join(out), encoding="utf-8")


def _row(title: str, path: Path, floors: dict[str, list[str]], rounds: int) -> None:
    """One alternating run of ``profdiff show`` (and the baseline tree's, with
    ``--baseline``) against each floor; every ratio is printed."""
    cmds = {"profdiff show": [*PROFDIFF, "show", str(path)]}
    if BASELINE:
        cmds["baseline show"] = [*BASELINE, "show", str(path)]
    res = alternate({**cmds, **floors}, rounds)
    size = path.stat().st_size / 1e6
    print(f"{title} ({size:.0f} MB on disk)")
    for name in cmds:
        rss = max(x[1] for x in res[name])
        print(f"    {name}: peak RSS {rss:.0f} MB = {rss / size:.1f}x file")
        for floor in floors:
            print("       ", summary(res, name, floor))
    if BASELINE:
        print("       ", summary(res, "profdiff show", "baseline show"))


def package_tree(code: Path, tmp: Path, name: str) -> list[str]:
    """``python -m profdiff.viewer.cli`` running the source tree ``code``.

    Why: the installed (editable) profdiff maps its package name onto one checkout, so
    ``PYTHONPATH=<tree>`` alone still runs that checkout; a folder of symlinks laid out
    as the package (``[tool.setuptools.package-dir]``) put first on the path runs ``code``.
    """
    pkg = tmp / name / "profdiff"
    pkg.mkdir(parents=True)
    code = code.resolve()
    for f in ("__init__.py", "__main__.py"):
        (pkg / f).symlink_to(code / "viewer" / "package" / f)
    for sub in ("parsers", "viewer", "resources", "samples"):
        (pkg / sub).symlink_to(code / sub)
    return ["env", f"PYTHONPATH={pkg.parent}", *CLI]


BASELINE: list[str] = []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=["pj", "pprof", "prof", "app", "startup"])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--code", type=Path, help="run profdiff from this source tree")
    ap.add_argument("--baseline", type=Path, help="also run profdiff from this source tree "
                    "(e.g. an unpacked main) in the same alternation, for before/after")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if args.baseline:
            BASELINE[:] = package_tree(args.baseline, d, "baseline")
        if args.code:
            PROFDIFF[:] = package_tree(args.code, d, "code")
        if args.only in (None, "pj"):
            f = d / "big.prof.json"
            write_pj(f, args.nodes)
            floor = [sys.executable, "-c", "import gc, json, sys; gc.disable(); "
                     f"json.load(open({str(f)!r}, encoding='utf-8'))"]
            _row(f"-pj JSON, {args.nodes:,} nodes; floor json.load with GC off", f,
                 {"json.load": floor}, args.rounds)
        if args.only in (None, "pprof"):
            f = d / "julia.pb.gz"
            write_pprof(f, args.nodes)
            _row(f"pprof, {args.nodes:,} samples, 9.8k stacks, unique labels; floors: decode "
                 "+ loop over samples (the target's: the standard library's gzip), the same "
                 "with ISA-L's inflate (what the reader uses), decode alone", f,
                 {"decode+loop": [sys.executable, "-c", PPROF_FLOOR.format(path=str(f))],
                  "isal decode+loop": [sys.executable, "-c",
                                       PPROF_FLOOR_ISAL.format(path=str(f))],
                  "decode": [sys.executable, "-c", PPROF_DECODE.format(path=str(f))]},
                 args.rounds)
        if args.only in (None, "prof"):
            f = d / "unicode.prof"
            write_prof(f, args.mb)
            floor = [sys.executable, "-c", f"for _ in open({str(f)!r}, encoding='utf-8'): pass"]
            _row("GHC .prof, non-ASCII names in 4 % of rows; floor bare line loop", f,
                 {"line loop": floor}, args.rounds)
        if args.only in (None, "app"):
            bench_app(d, args.mb, args.rounds)
        if args.only in (None, "startup"):
            bench_startup(args.rounds)


SMALL_PROF = ROOT / "tests" / "data" / "ghc-prof" / "ghc-6.12-ann-run-0134-2010-07-02.prof"


def bench_startup(rounds: int) -> None:
    """``profdiff show`` of a small real ``.prof`` (17 kB) and ``profdiff --help`` against
    ``python -c pass`` (same interpreter).  Targets <= 10x and <= 4x."""
    cmds = {"show small .prof": [*PROFDIFF, "show", str(SMALL_PROF)],
            "--help": [*PROFDIFF, "--help"]}
    if BASELINE:
        cmds["baseline show small .prof"] = [*BASELINE, "show", str(SMALL_PROF)]
    res = alternate({**cmds, "python -c pass": [sys.executable, "-c", "pass"]}, max(rounds, 5))
    print("start-up:")
    for name in cmds:
        print("   ", summary(res, name, "python -c pass"))


def bench_app(d: Path, mb: float, rounds: int) -> None:
    """The app opening the hs-ad pair's ``-P`` reports scaled to ~100 MB each (totals
    scaled to match: :func:`bench_ghc_prof.build_large`) and painting the diff tree (``--screenshot``
    mode: load, align, expand, fit the columns, paint, save) against ``profdiff diff`` of
    the same pair.  Target <= 1.5x.  Also printed: the window as it opens without
    ``--view`` (the Summary page, with its verdicts); the empty window's screenshot (no
    file: Python, PySide6, the window and a PNG), which is the part of that budget spent
    before any file is read; the window a user opens, timed to its first paint of the
    diff tree (``live_first_paint.py``: loaded in the thread pool with its progress bar,
    opened along the path to the top culprit, no picture saved), timed to that paint
    (:class:`alternate.ToMark`) and, printed after it, to its process's end; the floor
    of any window on this stack (``app_floor.py``: the same reads and tree alignment under a bare
    ``QTreeWidget``) against ``profdiff diff``, and the app against it; and with
    ``--baseline`` the same rows of that tree (before/after)."""
    from bench_ghc_prof import build_large

    a, b = d / "a.prof", d / "b.prof"  # the hs-ad pair (v2 lost a specialisation)
    hs = ROOT / "tests" / "data" / "hs-ad"
    build_large(a, mb, hs / "v1" / "ad.P.prof")
    build_large(b, mb, hs / "v2" / "ad.P.prof")

    def shot(cli: list[str], name: str, *opts: str, files: tuple = (a, b)) -> list[str]:
        app = [*cli[:-1], "profdiff.viewer.qt.app"]  # same interpreter (and --code tree)
        return ["env", "QT_QPA_PLATFORM=offscreen", *app, *map(str, files), *opts,
                "--screenshot", str(d / name)]

    cmds = {"bare Qt window over the same reads and tree alignment": [
        "env", "QT_QPA_PLATFORM=offscreen", *PROFDIFF[:-2], str(HERE / "app_floor.py"),
        str(a), str(b), str(d / "floor.png")]}
    for tag, cli in (("", PROFDIFF), ("baseline ", BASELINE)):
        if cli:
            cmds[f"{tag}app first paint"] = shot(cli, f"{tag}diff.png", "--view", "diff",
                                                 "--expand", "hot")
            cmds[f"{tag}app opens on the Summary"] = shot(cli, f"{tag}summary.png")
            cmds[f"{tag}app opens an empty window"] = shot(cli, f"{tag}empty.png", files=())
            cmds[f"{tag}live window paints the diff tree"] = ToMark([
                "env", "QT_QPA_PLATFORM=offscreen", *cli[:-2], str(HERE / "live_first_paint.py"),
                str(a), str(b), "--view", "diff"])
            cmds[f"{tag}profdiff diff"] = [*cli, "diff", str(a), str(b)]
    res = alternate(cmds, rounds)
    print(f"app opens a pair of {mb:.0f} MB .prof and paints the diff tree:")
    for tag in ("", "baseline ") if BASELINE else ("",):
        for what in ("app first paint", "live window paints the diff tree",
                     "app opens on the Summary", "app opens an empty window"):
            print("   ", summary(res, f"{tag}{what}", f"{tag}profdiff diff"))
        print("    (whole process, its exit after the paint included)",
              summary(res, f"{tag}live window paints the diff tree", f"{tag}profdiff diff",
                      wall=True))
    floor = "bare Qt window over the same reads and tree alignment"
    print("   ", summary(res, floor, "profdiff diff"))
    print("   ", summary(res, "app first paint", floor))
    if BASELINE:
        for what in ("app first paint", "live window paints the diff tree",
                     "app opens on the Summary", "profdiff diff"):
            print("   ", summary(res, what, f"baseline {what}"))


if __name__ == "__main__":
    main()
