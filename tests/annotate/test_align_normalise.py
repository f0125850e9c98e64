"""Alignment (checked against a textbook LCS table), instruction normalisation and kinds,
and symbol matching across builds (GCC clone suffixes, Rust hashes, rename rules)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from profdiff.viewer.annotate.align import align
from profdiff.viewer.annotate.compare import pick_symbol, symbol_rules
from profdiff.viewer.annotate.instructions import (
    CALL,
    CJUMP,
    ICALL,
    IJUMP,
    JUMP,
    OTHER,
    RET,
    classify,
    normalise,
    split_mnemonic,
)
from profdiff.viewer.annotate.samples import RecordingSamples
from profdiff.viewer.rules import name_rule


def lcs_length(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("seed", range(5))
def test_alignment_is_a_longest_common_subsequence(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        pairs = align(a, b)
        matched = [(i, j) for i, j in pairs if i is not None and j is not None]
        assert len(matched) == lcs_length(a, b)
        assert all(a[i] == b[j] for i, j in matched)
        assert [i for i, _ in pairs if i is not None] == list(range(len(a)))
        assert [j for _, j in pairs if j is not None] == list(range(len(b)))


def test_filler_matches_only_in_common_prefix_and_suffix() -> None:
    a = ["push", "nop", "x", "nop", "y", "ret", "nop"]
    b = ["push", "nop", "z", "nop", "w", "ret", "nop"]
    pairs = align(a, b, filler=frozenset({"nop"}))
    assert pairs[:2] == [(0, 0), (1, 1)] and pairs[-2:] == [(5, 5), (6, 6)]
    assert (3, 3) not in pairs  # the padding between unrelated code stays unpaired


def test_long_sequences_are_fast_enough() -> None:
    rng = random.Random(1)
    vocab = [f"op{k}" for k in range(200)]
    a = [rng.choice(vocab) for _ in range(3000)]
    b = list(a)
    for _ in range(300):
        b[rng.randrange(len(b))] = rng.choice(vocab)
    pairs = align(a, b)
    assert sum(1 for i, j in pairs if i is not None and j is not None) >= 2700


@pytest.mark.parametrize(("text", "kind"), [
    ("jmp *%rax", IJUMP), ("notrack jmp *%rax", IJUMP), ("bnd jmp 1bc0 <f+0x40>", JUMP),
    ("jmp 1bc0 <f+0x40>", JUMP), ("jne 1bc0 <f+0x40>", CJUMP), ("ja 1070 <f.cold>", CJUMP),
    ("call 12b0 <mix64>", CALL), ("call *0x8(%rax)", ICALL), ("ret", RET),
    ("repz ret", RET), ("mov %rax,%rbx", OTHER), ("jmpq *0x2fe2(%rip)", IJUMP),
])
def test_classify(text: str, kind: int) -> None:
    assert classify(*split_mnemonic(text)) == kind


def _norm(text: str, inside: bool = False, callee: str | None = None, rules=()) -> str:
    mnem, ops = split_mnemonic(text)
    return normalise(mnem, ops, classify(mnem, ops), inside, callee, "vm", rules)


def test_normalise_abstracts_addresses_and_keeps_registers() -> None:
    assert _norm("jne 1bc0 <vm_run+0x40>", inside=True) == "jne <L>"
    assert _norm("jne 2c00 <vm_run+0x80>", inside=True) == "jne <L>"
    assert _norm("mov 0x18(%rsp),%rax") == _norm("mov 0x20(%rsp),%rax") == "mov N(%rsp),%rax"
    assert _norm("mov 0x18(%rsp),%rax") != _norm("mov 0x18(%rsp),%rbx")
    assert _norm("add $0x1,%r8d") == "add $N,%r8d"
    assert _norm("lea 0x34ce(%rip),%r14 # 5060 <p.0>") == "lea N(%rip),%r14 <p.0>"
    assert _norm("nopw 0x0(%rax,%rax,1)") == _norm("xchg %ax,%ax") == "nop"
    assert _norm("call 12b0 <mix64>", callee="mix64") == "call <mix64>"
    rules = symbol_rules()
    assert (_norm("call 12b0 <heap_cons.constprop.0>", callee="heap_cons.constprop.0",
                  rules=rules)
            == _norm("call 1300 <heap_cons.constprop.1>", callee="heap_cons.constprop.1",
                     rules=rules) == "call <heap_cons>")


def _rec(symbols: dict[str, int]) -> RecordingSamples:
    by = {("/build/app", s): Counter({0: n}) for s, n in symbols.items()}
    return RecordingSamples(Path("perf.data"), "cycles", sum(symbols.values()), by)


def test_pick_symbol_across_rust_hashes_and_gcc_clones() -> None:
    rec = _rec({"app::Executor::execute::h0123456789abcdef": 90, "main": 10})
    dso, sym, warnings = pick_symbol(rec, "app::Executor::execute::hfedcba9876543210",
                                     symbol_rules())
    assert sym == "app::Executor::execute::h0123456789abcdef" and dso == "/build/app"
    assert any("is called" in w for w in warnings)
    rec = _rec({"vm_run.constprop.0": 5, "vm_run.constprop.1": 50})
    _dso, sym, warnings = pick_symbol(rec, "vm_run", symbol_rules())
    assert sym == "vm_run.constprop.1"  # the hottest of several matches, and it says so
    assert any("2 symbols match" in w for w in warnings)


def test_pick_symbol_with_a_rename_rule() -> None:
    rec = _rec({"dispatch_loop": 7})
    _dso, sym, _w = pick_symbol(rec, "run_loop", symbol_rules([name_rule("dispatch_loop=run_loop")]))
    assert sym == "dispatch_loop"


def test_kernel_function_is_refused_with_a_reason(monkeypatch) -> None:
    from profdiff.viewer.annotate import BinaryError, compare

    rec = RecordingSamples(Path("perf.data"), "cpu-clock", 5,
                           {("[kernel.kallsyms]", "finish_task_switch"): Counter({4: 5})})
    monkeypatch.setattr(compare, "read_samples", lambda path, event=None: rec)
    with pytest.raises(BinaryError, match=r"kernel.kallsyms\], which has no binary on disk"):
        compare.load_function(Path("perf.data"), "finish_task_switch")


def test_jump_lanes_never_overlap_within_a_lane() -> None:
    import numpy as np

    from profdiff.viewer.annotate.rows import jump_lanes

    rng = np.random.default_rng(3)
    src = rng.integers(0, 2000, 400)
    dst = np.clip(src + rng.integers(-80, 80, 400), 0, 1999)
    lanes = jump_lanes(src, dst, max_lanes=8)
    for ln in range(7):  # the last lane takes the overflow
        k = np.flatnonzero(lanes.lane == ln)
        order = np.argsort(lanes.lo[k])
        assert (lanes.lo[k][order][1:] > lanes.hi[k][order][:-1]).all()
    inner = jump_lanes(np.array([10, 5]), np.array([12, 20]))  # nested: short one inside
    assert inner.lane.tolist() == [0, 1]
    segs = inner.at(12)
    assert (0, True, False, 2, False) in segs and (1, True, True, 0, False) in segs


def test_hung_perf_is_stopped(tmp_path, monkeypatch) -> None:
    import shutil
    import time

    from profdiff.parsers.errors import ExternalToolError
    from profdiff.viewer.annotate.samples import read_samples

    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PROFDIFF_PERF", str(fake))
    monkeypatch.setenv("HOME", str(tmp_path))
    rec = tmp_path / "perf.data"
    shutil.copy(Path(__file__).parent.parent / "data" / "perf" / "c-vm" / "v1" / "perf.data", rec)
    t = time.monotonic()
    with pytest.raises(ExternalToolError, match=r"did not finish within 1 s"):
        read_samples(rec, timeout=1.0)
    assert time.monotonic() - t < 20


def test_register_shape_keeps_the_width_and_rip():
    from profdiff.viewer.annotate.align import register_shape

    assert register_shape("add %r12,%rax") == register_shape("add %r14,%rcx") == "add %Rq,%Rq"
    assert register_shape("mov %rcx,N(%rip) <m>") != register_shape("mov %ebx,N(%rip) <m>")
    assert register_shape("movslq %r8d,%rdi") == "movslq %Rd,%Rq"
    assert register_shape("mov %al,(%rsp)") == "mov %Rb,(%Rq)"
    assert register_shape("cmp $N,%dx") == "cmp $N,%Rw"
    assert register_shape("movsd %xmm0,%xmm1") == "movsd %Rxmm,%Rxmm"
    assert register_shape("lea N(%rip),%r9") == "lea N(%rip),%Rq"
    assert register_shape("mov %fs:N,%rax") == "mov %fs:N,%Rq"


def test_refined_alignment_pairs_register_twins_inside_a_stretch_only():
    from profdiff.viewer.annotate.align import align_refined

    a = ["push %rbp", "movslq (%r12,%rdx,4),%rax", "add %r12,%rax", "jmp *%rax", "ret"]
    b = ["push %rbp", "mov %ebx,N(%rip) <m>", "movslq (%r14,%rax,4),%rax", "add %r14,%rax",
         "jmp *%rax", "ret"]
    assert align(a, b) == [(0, 0), (1, None), (2, None), (None, 1), (None, 2), (None, 3),
                           (3, 4), (4, 5)]
    assert align_refined(a, b) == [(0, 0), (None, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    # an exact match is a fence: twins on either side of it are not paired across it
    a = ["add %rax,%rbx", "call <f>", "sub %rcx,%rdx"]
    b = ["sub %r8,%r9", "call <f>", "add %r10,%r11"]
    assert align_refined(a, b) == [(0, None), (None, 0), (1, 1), (2, None), (None, 2)]
    # every instruction once, in order, on its side
    rng = random.Random(5)
    regs = ["%rax", "%rbx", "%r12", "%eax", "%ecx"]
    for _ in range(50):
        a = [f"{rng.choice(['mov', 'add', 'cmp'])} {rng.choice(regs)},{rng.choice(regs)}"
             for _ in range(rng.randrange(0, 30))]
        b = [f"{rng.choice(['mov', 'add', 'cmp'])} {rng.choice(regs)},{rng.choice(regs)}"
             for _ in range(rng.randrange(0, 30))]
        got = align_refined(a, b)
        assert [i for i, _ in got if i is not None] == list(range(len(a)))
        assert [j for _, j in got if j is not None] == list(range(len(b)))
        exact = {(i, j) for i, j in align(a, b) if i is not None and j is not None}
        assert exact <= set(got)  # the second pass only adds pairs
