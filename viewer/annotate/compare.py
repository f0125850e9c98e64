"""Compare one function between two perf recordings, instruction by instruction.

Data flow: perf.data -> per-offset counts (:mod:`.samples`) -> the recorded binary, checked
by build-id (:mod:`.binaries`) -> objdump instructions (:mod:`.instructions`) -> samples per
instruction -> alignment of the normalised instructions (:mod:`.align`) -> summaries
(:mod:`.summary`).  The result is plain data used by the CLI, ``--json`` and the Qt view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from profdiff.parsers.errors import ProfdiffError
from profdiff.viewer.rules import PRESETS

from .align import Pair, align_refined
from .binaries import BinaryError, Located, locate_binary
from .instructions import Instructions, disassemble, function_symbols, rename, rename_all
from .samples import RecordingSamples, read_samples
from .summary import instruction_json, largest_increase, summarise


class SymbolNotFound(ProfdiffError):
    """The requested function has no samples and no symbol in the recording's binaries."""


@dataclass
class FunctionRun:
    """One run's side: the function's instructions and the samples on each."""

    path: Path
    symbol: str  # as perf names it in this run
    dso: str  # recorded path of the binary
    binary: Located
    instructions: Instructions
    samples: np.ndarray  # int64 per instruction
    total: int  # the function's self samples (including unplaced ones)
    recording_total: int  # samples of the event in the whole recording
    event: str
    unplaced: int = 0  # samples at offsets that are no instruction start
    incomplete: bool = False  # perf stopped early: the counts are a prefix of the recording
    warnings: list[str] = field(default_factory=list)

    def share(self) -> np.ndarray:
        """Percent of the function's samples on each instruction."""
        return self.samples * (100.0 / self.total) if self.total else np.zeros(len(self.samples))


@dataclass
class FunctionComparison:
    runs: list[FunctionRun]
    pairs: list[Pair]
    summaries: list[dict]


def symbol_rules(rules: Sequence = ()) -> list:
    """The user's rename rules plus the perf preset (GCC clone suffixes, Rust hashes)."""
    return [*rules, *PRESETS["perf"]]


def compare_function(path_a: str | Path, path_b: str | Path, symbol: str, *,
                     rules: Sequence = (), event: str | None = None) -> FunctionComparison:
    """Everything ``profdiff annotate`` prints, for ``symbol`` in runs A and B."""
    runs = [load_function(Path(p), symbol, rules=rules, event=event) for p in (path_a, path_b)]
    return compare_runs(runs)


def compare_runs(runs: list[FunctionRun]) -> FunctionComparison:
    """Align two loaded runs of one function and summarise both (the part that needs no
    perf or objdump: the benchmark times exactly this)."""
    a, b = runs
    pairs = align_refined(a.instructions.norm.tolist(), b.instructions.norm.tolist(),
                          filler=frozenset(("nop",)))
    summaries = [summarise(r.instructions, r.samples, r.total) for r in runs]
    base_of_new = np.full(len(b.instructions), -1, dtype=np.int64)
    for i, j in pairs:
        if i is not None and j is not None:
            base_of_new[j] = i
    summaries[1]["largest_increase_block"] = largest_increase(
        b.instructions, b.samples, b.total, a.samples, a.total, base_of_new)
    return FunctionComparison(runs, pairs, summaries)


def load_function(path: Path, symbol: str, *, rules: Sequence = (),
                  event: str | None = None) -> FunctionRun:
    """One run's function: samples per instruction of ``symbol`` (or its renamed twin)."""
    rec = read_samples(path, event=event)
    all_rules = symbol_rules(rules)
    try:
        dso, sym, warnings = pick_symbol(rec, symbol, all_rules)
    except SymbolNotFound as e:
        raise SymbolNotFound(f"{e}; {rec.incomplete}" if rec.incomplete else str(e)) from None
    if rec.incomplete:
        warnings.insert(0, rec.incomplete)
    if dso.startswith("[") or not dso.startswith("/"):
        raise BinaryError(f"{path}: {sym} is in {dso}, which has no binary on disk to "
                          "disassemble (kernel, vdso or JIT code); only functions of "
                          "executables and shared libraries can be compared")
    located = locate_binary(dso, path, rec.build_ids.get(dso))
    table = function_symbols(located.path)
    if sym not in table:
        raise SymbolNotFound(f"{located.path}: no function symbol {sym!r} in its symbol table "
                             f"(perf named it from {dso})")
    start, size = table[sym][0]
    if len(table[sym]) > 1:
        warnings.append(f"{located.path.name} has {len(table[sym])} functions named {sym}; "
                        f"showing the first, at {start:#x}, and perf's offsets may belong to "
                        "another")
    ins = disassemble(located.path, sym, start, size, all_rules)
    counts: dict = rec.by_symbol.get((dso, sym), {})
    samples, unplaced = place(ins, counts)
    total = sum(counts.values())
    if unplaced:
        warnings.append(f"{unplaced} of {total} samples of {sym} fall between instruction "
                        "starts or outside the symbol; they count in the total only")
    return FunctionRun(path, sym, dso, located, ins, samples, total, rec.total, rec.event,
                       unplaced, rec.incomplete is not None, warnings)


def place(ins: Instructions, counts: dict[int, int]) -> tuple[np.ndarray, int]:
    """Samples per instruction from counts per offset into the symbol; (array, unplaced)."""
    samples = np.zeros(len(ins), dtype=np.int64)
    if not counts:
        return samples, 0
    offs = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    n = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    addr = ins.start + offs
    idx = np.searchsorted(ins.address, addr)
    ok = (idx < len(ins)) & (ins.address[np.minimum(idx, len(ins) - 1)] == addr)
    np.add.at(samples, idx[ok], n[ok])
    return samples, int(n[~ok].sum())


def pick_symbol(rec: RecordingSamples, symbol: str,
                rules: Sequence) -> tuple[str, str, list[str]]:
    """(dso, perf symbol, warnings) for ``symbol``: exact name first, else same after rules."""
    warnings: list[str] = []
    hits = [k for k in rec.by_symbol if k[1] == symbol]
    if not hits:
        want = rename(symbol, "", rules)
        keys = [k for k in rec.by_symbol if not k[1].startswith("[")]
        names = rename_all([k[1] for k in keys], [Path(k[0]).name for k in keys], rules)
        hits = [k for k, n in zip(keys, names, strict=True) if n == want]
    if not hits:
        return _symbol_without_samples(rec, symbol, rules)
    hits.sort(key=lambda k: -rec.symbol_total(k))
    if len(hits) > 1:
        warnings.append(f"{len(hits)} symbols match {symbol!r}; showing the hottest, "
                        f"{hits[0][1]} ({Path(hits[0][0]).name}); others: "
                        + ", ".join(f"{s} ({Path(d).name})" for d, s in hits[1:6]))
    if hits[0][1] != symbol:
        warnings.append(f"{symbol!r} is called {hits[0][1]!r} in this run")
    return hits[0][0], hits[0][1], warnings


def _symbol_without_samples(rec: RecordingSamples, symbol: str,
                            rules: Sequence) -> tuple[str, str, list[str]]:
    """The function has no samples: find it in the recorded binaries, or explain why not."""
    want = rename(symbol, "", rules)
    problems: list[str] = []
    for dso, bid in rec.build_ids.items():
        if dso.startswith("[") or not dso.startswith("/"):
            continue
        try:
            located = locate_binary(dso, rec.path, bid)
        except BinaryError as e:
            if any(d == dso and s == "[unknown]" for d, s in rec.by_symbol):
                problems.append(str(e))
            continue
        names = list(function_symbols(located.path))
        renamed = rename_all(names, [Path(dso).name] * len(names), rules)
        for name, new in zip(names, renamed, strict=True):
            if name == symbol or new == want:
                return dso, name, [f"{name} has no samples in {rec.path}"]
    if problems:
        raise BinaryError(" ".join(problems))
    raise SymbolNotFound(f"{rec.path}: no samples and no function symbol named {symbol!r} "
                         f"(the hottest symbols: {', '.join(hottest_symbols(rec, 5))})")


def hottest_symbols(rec: RecordingSamples, k: int) -> list[str]:
    keys = sorted(rec.by_symbol, key=lambda key: -rec.symbol_total(key))
    return [s for _d, s in keys if not s.startswith("[")][:k]


def comparison_json(cmp: FunctionComparison) -> dict:
    """The ``--json`` document (shape documented in the README)."""
    runs = []
    for r in cmp.runs:
        ins = r.instructions
        runs.append({
            "path": str(r.path), "symbol": r.symbol, "binary": str(r.binary.path),
            "build_id": r.binary.build_id, "event": r.event, "samples": int(r.total),
            "recording_samples": int(r.recording_total), "unplaced_samples": int(r.unplaced),
            "incomplete": r.incomplete,
            "instructions": [instruction_json(ins, r.samples, r.total, i) for i in range(len(ins))],
            "warnings": list(r.warnings),
        })
    norm_a, norm_b = (r.instructions.norm for r in cmp.runs)
    reshaped = [k for k, (i, j) in enumerate(cmp.pairs)
                if i is not None and j is not None and norm_a[i] != norm_b[j]]
    return {"runs": runs, "alignment": [[i, j] for i, j in cmp.pairs],
            "registers_differ": reshaped, "summary": cmp.summaries}
