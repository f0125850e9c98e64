"""One function's machine code from ``objdump``: columnar instructions with their kinds.

Why objdump (binutils): it is on every machine that has perf, knows every x86 encoding and
prints source lines from DWARF with ``-l``.  We only parse its text.  Each instruction gets
a *kind* (jump, conditional jump, indirect jump, call, indirect call, return) and a
*normalised* form for alignment: addresses, jump targets inside the function, immediates
and displacements are abstracted so that the same code at another address compares equal,
while registers and external callees are kept.  Classification follows AT&T x86 syntax
(objdump's default); on other architectures every instruction is ``other``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from profdiff.parsers.errors import ExternalToolError, ProfdiffError
from profdiff.viewer.rules import SEP

OTHER, JUMP, CJUMP, IJUMP, CALL, ICALL, RET = range(7)
KIND_NAMES = ("other", "jump", "conditional jump", "indirect jump", "call", "indirect call",
              "return")
PREFIXES = frozenset(("bnd", "notrack", "rep", "repz", "repnz", "repe", "repne", "lock",
                      "data16", "data32", "addr32", "cs", "ds", "ss", "es", "fs", "gs", "rex",
                      "rex.w", "xacquire", "xrelease"))
OBJDUMP_HINT = ("install binutils (Debian/Ubuntu: 'apt-get install binutils'; Fedora: "
                "'dnf install binutils'), or set PROFDIFF_OBJDUMP to an objdump binary")
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]*)\t?(.*)$")
SRC_RE = re.compile(r"^(\S.*):(\d+)(?: \(discriminator \d+\))?$")
TARGET_RE = re.compile(r"^([0-9a-f]+)(?:\s+<([^>]*)>)?")
NUM_RE = re.compile(r"0x[0-9a-f]+|(?<![\w%.])-?\d+")
SYMTAB_RE = re.compile(r"^([0-9a-f]+) (.{7}) (\S+)\s+([0-9a-f]+)\s+(.*)$")


@dataclass(frozen=True)
class Instructions:
    """A function's instructions as parallel arrays (index = instruction number)."""

    symbol: str
    binary: Path
    start: int  # symbol address in the file (objdump's addresses)
    size: int  # symbol size in bytes (from the symbol table)
    address: np.ndarray  # int64
    length: np.ndarray  # int32 bytes
    text: np.ndarray  # object: objdump's text, whitespace collapsed
    norm: np.ndarray  # object: normalised form used for alignment
    kind: np.ndarray  # int8: OTHER..RET
    target: np.ndarray  # int64: instruction index a direct jump goes to inside, else -1
    source: np.ndarray  # object: "file:line" from debug info, "" without

    def __len__(self) -> int:
        return len(self.address)


def find_objdump() -> str | None:
    """The objdump binary: ``$PROFDIFF_OBJDUMP`` or ``objdump`` on PATH."""
    env = os.environ.get("PROFDIFF_OBJDUMP")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("objdump")


def _objdump(args: list[str], what: Path, timeout: float = 120) -> str:
    exe = find_objdump()
    if exe is None:
        raise ExternalToolError(f"{what}: disassembling needs the 'objdump' program: {OBJDUMP_HINT}")
    try:
        r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                           check=False, env=dict(os.environ, LC_ALL="C"))
    except subprocess.TimeoutExpired:
        raise ExternalToolError(f"{what}: objdump did not finish within {timeout:.0f} s") from None
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if ln.strip()), f"exit {r.returncode}")
        raise ProfdiffError(f"{what}: objdump failed: {first}")
    return r.stdout


def function_symbols(binary: Path) -> dict[str, list[tuple[int, int]]]:
    """Function symbol name (demangled, as perf shows it) -> [(address, size), ...] in
    symbol-table order (several for same-named static functions)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for flag in ("-t", "-T"):  # static symbol table, then the dynamic one (stripped files)
        for ln in _objdump([flag, "-C", str(binary)], binary).splitlines():
            m = SYMTAB_RE.match(ln)
            if not m or "F" not in m.group(2):
                continue
            name = m.group(5).strip()
            for hidden in (".hidden ", ".protected ", ".internal "):
                name = name.removeprefix(hidden)
            if flag == "-T":
                name = name.split(None, 1)[-1] if " " in name and name.split()[0].startswith(
                    ("GLIBC", "Base", "(")) else name
            size = int(m.group(4), 16)
            entry = (int(m.group(1), 16), size)
            if name and size and entry not in out.get(name, ()):
                out.setdefault(name, []).append(entry)
        if out:
            break
    return out


def disassemble(binary: Path, symbol: str, start: int, size: int,
                rules: Sequence = ()) -> Instructions:
    """Disassemble ``[start, start+size)`` of ``binary`` (the function ``symbol``)."""
    text = _objdump(["-d", "-l", "-C", "--insn-width=16", f"--start-address={start:#x}",
                     f"--stop-address={start + size:#x}", str(binary)], binary, timeout=300)
    addr: list[int] = []
    length: list[int] = []
    body: list[str] = []
    src: list[str] = []
    current = ""
    for ln in text.splitlines():
        m = INSN_RE.match(ln)
        if m:
            addr.append(int(m.group(1), 16))
            length.append(len(m.group(2).split()))
            body.append(" ".join(m.group(3).split()))
            src.append(current)
            continue
        s = SRC_RE.match(ln)
        if s and not ln.endswith(">:"):
            current = f"{s.group(1)}:{s.group(2)}"
    if not addr:
        raise ProfdiffError(f"{binary}: objdump printed no instructions for {symbol} "
                            f"at {start:#x} (+{size} bytes)")
    return _build(symbol, binary, start, size, addr, length, body, src, rules)


def _build(symbol: str, binary: Path, start: int, size: int, addr: list[int],
           length: list[int], body: list[str], src: list[str], rules: Sequence) -> Instructions:
    a = np.asarray(addr, dtype=np.int64)
    index_of = {x: i for i, x in enumerate(addr)}
    kind = np.zeros(len(addr), dtype=np.int8)
    target = np.full(len(addr), -1, dtype=np.int64)
    norm: list[str] = []
    module = binary.name
    for i, t in enumerate(body):
        mnem, ops = split_mnemonic(t)
        k = classify(mnem, ops)
        kind[i] = k
        tgt, callee = None, None
        if k in (JUMP, CJUMP, CALL):
            tm = TARGET_RE.match(ops)
            if tm:
                tgt = index_of.get(int(tm.group(1), 16))
                callee = tm.group(2)
        if tgt is not None and k != CALL:
            target[i] = tgt
        norm.append(normalise(mnem, ops, k, tgt is not None, callee, module, rules))
    return Instructions(symbol, binary, start, size, a, np.asarray(length, dtype=np.int32),
                        np.asarray(body, dtype=object), np.asarray(norm, dtype=object), kind,
                        target, np.asarray(src, dtype=object))


def split_mnemonic(text: str) -> tuple[str, str]:
    """(mnemonic, operands) with prefixes such as ``bnd``/``notrack``/``rep`` dropped."""
    parts = text.split(" ")
    i = 0
    while i < len(parts) - 1 and parts[i] in PREFIXES:
        i += 1
    return parts[i], " ".join(parts[i + 1:])


def classify(mnem: str, ops: str) -> int:
    """Kind of an AT&T x86 instruction (``*`` before the operand = indirect)."""
    if mnem in ("jmp", "jmpq", "ljmp"):
        return IJUMP if ops.startswith("*") else JUMP
    if mnem.startswith("j") or mnem.startswith("loop"):
        return CJUMP
    if mnem in ("call", "callq", "lcall"):
        return ICALL if ops.startswith("*") else CALL
    if mnem in ("ret", "retq", "retl", "lret", "iret", "iretq"):
        return RET
    return OTHER


def normalise(mnem: str, ops: str, kind: int, inside: bool, callee: str | None,
              module: str, rules: Sequence = ()) -> str:
    """The instruction with addresses/immediates abstracted and registers kept."""
    mnem = {"jmpq": "jmp", "callq": "call", "retq": "ret"}.get(mnem, mnem)
    if mnem.startswith("nop") or (mnem == "xchg" and ops == "%ax,%ax"):
        return "nop"  # alignment padding differs between builds
    if kind in (JUMP, CJUMP) and inside:
        return f"{mnem} <L>"
    if kind in (JUMP, CJUMP, CALL) and callee is not None:
        name = re.sub(r"\+0x[0-9a-f]+$", "", callee)
        return f"{mnem} <{rename(name, module, rules)}>"
    ops, _, comment = ops.partition("#")
    ref = TARGET_RE.match(comment.strip())  # "# 5060 <p.0>": keep which datum, not where
    where = ""
    if ref and ref.group(2):
        where = " <" + rename(re.sub(r"\+0x[0-9a-f]+$", "", ref.group(2)), module, rules) + ">"
    return f"{mnem} {NUM_RE.sub('N', ops.strip())}".strip() + where


def rename(name: str, module: str, rules: Sequence) -> str:
    """``name`` after the rename rules (which work on ``module<SEP>name`` keys)."""
    if not rules:
        return name
    keys = np.array([f"{module}{SEP}{name}"], dtype=object)
    for r in rules:
        keys = r(keys)
    return str(keys[0]).partition(SEP)[2]


def rename_all(names: Sequence[str], modules: Sequence[str], rules: Sequence) -> list[str]:
    """:func:`rename` over many names at once (each rule runs once, vectorised)."""
    if not rules or not names:
        return list(names)
    keys = np.array([f"{m}{SEP}{n}" for m, n in zip(modules, names, strict=True)], dtype=object)
    for r in rules:
        keys = r(keys)
    return [str(k).partition(SEP)[2] for k in keys.tolist()]
