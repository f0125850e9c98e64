"""Per-function facts that tell dispatch shapes apart: jumps, blocks, where samples sit.

Why these: a threaded interpreter ends every handler with its own indirect jump, so it
has many indirect jumps and their samples spread over them; a shared dispatch block is
one block that is the direct jump target of every handler and holds one hot indirect
jump.  Basic blocks start at the function entry, at every in-function direct jump target
and after every jump or return; "jump target of N sites" counts the direct jumps to a
block's first instruction (fall-through is not counted).
"""

from __future__ import annotations

import numpy as np

from .instructions import CALL, CJUMP, ICALL, IJUMP, JUMP, RET, Instructions

HOTTEST = 10


def block_starts(ins: Instructions) -> np.ndarray:
    """Block number of every instruction (0-based, in address order)."""
    n = len(ins)
    leader = np.zeros(n, dtype=bool)
    if n:
        leader[0] = True
    tgt = ins.target[ins.target >= 0]
    leader[tgt] = True
    ends = np.flatnonzero(np.isin(ins.kind, (JUMP, CJUMP, IJUMP, RET))) + 1
    leader[ends[ends < n]] = True
    return np.cumsum(leader) - 1


def blocks(ins: Instructions, samples: np.ndarray, total: int) -> list[dict]:
    """One dict per basic block: first instruction, size, samples, jump-target count."""
    bid = block_starts(ins)
    nb = int(bid[-1]) + 1 if len(bid) else 0
    first = np.searchsorted(bid, np.arange(nb))
    count = np.bincount(bid, minlength=nb)
    smp = np.bincount(bid, weights=samples, minlength=nb).astype(np.int64)
    sites = ins.target[(ins.target >= 0)]
    targeted = np.bincount(bid[sites], minlength=nb) if len(sites) else np.zeros(nb, int)
    # a target counts only if it is the block's first instruction (it always is: leaders)
    return [
        {"block": b, "index": int(first[b]), "address": hex(int(ins.address[first[b]])),
         "instructions": int(count[b]), "samples": int(smp[b]),
         "share": _pct(int(smp[b]), total), "jump_target_of": int(targeted[b]),
         "source": str(ins.source[first[b]])}
        for b in range(nb)
    ]


def summarise(ins: Instructions, samples: np.ndarray, total: int) -> dict:
    """The per-run summary of the ``--json`` output and the summary panel."""
    kind = ins.kind
    ij = int(samples[kind == IJUMP].sum())
    order = np.argsort(-samples, kind="stable")[:HOTTEST]
    hottest = [instruction_json(ins, samples, total, int(i)) for i in order if samples[i] > 0]
    blks = blocks(ins, samples, total)
    most = sorted(blks, key=lambda b: (-b["jump_target_of"], b["index"]))[:5]
    return {
        "symbol": ins.symbol, "binary": str(ins.binary),
        "code_bytes": int(ins.size), "instructions": len(ins),
        "direct_jumps": int(np.isin(kind, (JUMP, CJUMP)).sum()),
        "conditional_jumps": int((kind == CJUMP).sum()),
        "indirect_jumps": int((kind == IJUMP).sum()),
        "direct_calls": int((kind == CALL).sum()),
        "indirect_calls": int((kind == ICALL).sum()),
        "returns": int((kind == RET).sum()),
        "samples": int(total),
        "indirect_jump_samples": ij, "indirect_jump_share": _pct(ij, total),
        "hottest": hottest,
        "basic_blocks": len(blks),
        "most_jumped_to": [b for b in most if b["jump_target_of"] > 0],
        "blocks": blks,
        "largest_increase_block": None,
    }


def instruction_json(ins: Instructions, samples: np.ndarray, total: int, i: int) -> dict:
    d = {"index": i, "address": hex(int(ins.address[i])), "text": str(ins.text[i]),
         "samples": int(samples[i]), "share": _pct(int(samples[i]), total)}
    if ins.target[i] >= 0:
        d["target"] = int(ins.target[i])
    if ins.source[i]:
        d["source"] = str(ins.source[i])
    return d


def largest_increase(new: Instructions, new_samples: np.ndarray,
                     new_total: int, base_samples: np.ndarray, base_total: int,
                     base_of_new: np.ndarray) -> dict | None:
    """The block of the new run whose samples grew most against the aligned base code.

    A block's base samples are those of the base instructions aligned to its instructions
    (``base_of_new[j]`` = base index or -1); base instructions removed in the new build
    belong to no new block.  Ranked by the sample difference (the runs are assumed to do
    the same work); the share difference is given too.
    """
    bid = block_starts(new)
    if not len(bid):
        return None
    nb = int(bid[-1]) + 1
    matched = base_of_new >= 0
    base_per = np.bincount(bid[matched], weights=base_samples[base_of_new[matched]],
                           minlength=nb).astype(np.int64)
    new_per = np.bincount(bid, weights=new_samples, minlength=nb).astype(np.int64)
    delta = new_per - base_per
    b = int(np.argmax(delta))
    if delta[b] <= 0:
        return None
    first = int(np.searchsorted(bid, b))
    return {"block": b, "index": first, "address": hex(int(new.address[first])),
            "instructions": int((bid == b).sum()),
            "samples": int(new_per[b]), "base_samples": int(base_per[b]),
            "delta_samples": int(delta[b]),
            "share": _pct(int(new_per[b]), new_total),
            "base_share": _pct(int(base_per[b]), base_total),
            "delta_share": round(_pct_f(int(new_per[b]), new_total)
                                 - _pct_f(int(base_per[b]), base_total), 4),
            "source": str(new.source[first])}


def _pct_f(x: int, total: int) -> float:
    return x * 100.0 / total if total else 0.0


def _pct(x: int, total: int) -> float:
    """Percent, rounded to 4 decimals (samples are exact; the share is their ratio)."""
    return round(_pct_f(x, total), 4)
