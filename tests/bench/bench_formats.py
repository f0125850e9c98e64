"""Whole-process speed of ``profdiff show`` on big -pj JSON, pprof and non-ASCII .prof
files, as ratios to a floor measured in the same alternating run (prints figures only).

``python tests/bench/bench_formats.py [--rounds 3] [--only pj|pprof|prof]``

* ``-pj`` JSON, 10^6 nodes: deep chains (60-150 frames) branching off each other, 2,000
  cost centres of which 3 % have names with λ, ⊕, öß.  Floor: ``json.load`` with the GC
  off in a fresh interpreter.  Target <= 2x.
* pprof (Julia-like), 10^6 samples over 9.8k distinct deep stacks.  Floor: a fresh
  interpreter that decodes the protobuf and loops over the samples' locations and
  values.  Target <= 1.5x.
* GHC ``.prof`` of ~100 MB with non-ASCII names in 4 % of rows (GHC pads by characters).
  Floor: a bare ``for line in f`` loop in a fresh interpreter.  Target <= 4x.

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

from alternate import alternate, summary  # noqa: E402

PROFDIFF = [sys.executable, "-m", "viewer.cli"]
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


def write_pprof(dst: Path, n_samples: int, n_stacks: int = 9800) -> None:
    from parsers.proto import profile_pb2

    rng = np.random.default_rng(2)
    p = profile_pb2.Profile()
    st = ["", "samples", "count", "nanoseconds", "cpu"]
    names = _names(3000, rng)
    fn_base = len(st)
    st += names + [f"/src/pkg{i % 40}/file{i % 300}.jl" for i in range(3000)]
    p.string_table.extend(st)
    vt = p.sample_type.add()
    vt.type, vt.unit = 1, 2
    for i in range(3000):
        f = p.function.add()
        f.id, f.name, f.filename, f.start_line = i + 1, fn_base + i, fn_base + 3000 + i, i
    for i in range(3000):
        loc = p.location.add()
        loc.id = i + 1
        ln = loc.line.add()
        ln.function_id, ln.line = i + 1, 10 + i
    stacks = []
    for _ in range(n_stacks):
        d = int(rng.integers(60, 151))
        base = rng.integers(1, 200, size=d // 2)
        stacks.append(np.concatenate([base, rng.integers(1, 3001, size=d - d // 2)]).tolist())
    pick = rng.integers(0, n_stacks, size=n_samples)
    for k in pick.tolist():
        smp = p.sample.add()
        smp.location_id.extend(stacks[k])
        smp.value.append(1)
    dst.write_bytes(gzip.compress(p.SerializeToString(), compresslevel=1))


PPROF_FLOOR = """
import gzip, sys
sys.path.insert(0, {root!r})
from parsers.proto import profile_pb2
p = profile_pb2.Profile()
p.ParseFromString(gzip.decompress(open({path!r}, "rb").read()))
for s in p.sample:
    s.location_id
    s.value
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


def _row(title: str, path: Path, floor: list[str], rounds: int) -> None:
    res = alternate({"profdiff show": [*PROFDIFF, "show", str(path)], "floor": floor}, rounds)
    size = path.stat().st_size / 1e6
    rss = max(x[1] for x in res["profdiff show"])
    print(f"{title} ({size:.0f} MB on disk): peak RSS {rss:.0f} MB = {rss / size:.1f}x file")
    print("   ", summary(res, "profdiff show", "floor"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=["pj", "pprof", "prof", "app"])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--code", type=Path, help="run profdiff from this source tree")
    args = ap.parse_args()
    if args.code:
        PROFDIFF[:] = ["env", f"PYTHONPATH={args.code.resolve()}", *PROFDIFF]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if args.only in (None, "pj"):
            f = d / "big.prof.json"
            write_pj(f, args.nodes)
            floor = [sys.executable, "-c", "import gc, json, sys; gc.disable(); "
                     f"json.load(open({str(f)!r}, encoding='utf-8'))"]
            _row(f"-pj JSON, {args.nodes:,} nodes; floor json.load with GC off", f, floor,
                 args.rounds)
        if args.only in (None, "pprof"):
            f = d / "julia.pb.gz"
            write_pprof(f, args.nodes)
            floor = [sys.executable, "-c", PPROF_FLOOR.format(root=str(ROOT), path=str(f))]
            _row(f"pprof, {args.nodes:,} samples, 9.8k stacks; floor decode + loop", f,
                 floor, args.rounds)
        if args.only in (None, "prof"):
            f = d / "unicode.prof"
            write_prof(f, args.mb)
            floor = [sys.executable, "-c", f"for _ in open({str(f)!r}, encoding='utf-8'): pass"]
            _row("GHC .prof, non-ASCII names in 4 % of rows; floor bare line loop", f, floor,
                 args.rounds)
        if args.only in (None, "app"):
            bench_app(d, args.mb, args.rounds)


def bench_app(d: Path, mb: float, rounds: int) -> None:
    """The app opening a pair of ~100 MB .prof and painting the diff tree (``--screenshot``
    mode: load, align, expand, fit the columns, paint, save) against ``profdiff diff`` of
    the same pair.  Target <= 1.5x."""
    from bench_ghc_prof import build_large

    a, b = d / "a.prof", d / "b.prof"
    build_large(a, mb)
    build_large(b, mb * 0.97)
    app = [*PROFDIFF[:-2], "-m", "viewer.qt.app"]  # same interpreter (and --code tree)
    env_app = ["env", "QT_QPA_PLATFORM=offscreen", *app, str(a), str(b), "--view", "diff",
               "--expand", "hot", "--screenshot", str(d / "shot.png")]
    res = alternate({"app first paint": env_app,
                     "profdiff diff": [*PROFDIFF, "diff", str(a), str(b)]}, rounds)
    print(f"app opens a pair of {mb:.0f} MB .prof and paints the diff tree:")
    print("   ", summary(res, "app first paint", "profdiff diff"))


if __name__ == "__main__":
    main()
