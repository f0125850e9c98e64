"""``profdiff calls``: callers/callees of a callgrind function, against callgrind_annotate's
call-edge listing (its ``--tree=caller`` / ``--tree=calling`` output)."""

from __future__ import annotations

import io
import json
import re
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from tool_requirements import require_tool

from viewer.cli import main

DATA = Path(__file__).resolve().parent.parent / "data" / "callgrind"
MALLOC = DATA / "malloc-KGuzikowski-mdriver-xterm.callgrind.out"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_callers_and_callees_json() -> None:
    rc, out, _ = _run("calls", str(MALLOC), "mm_malloc", "--json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["function"] == "mdriver.mm_malloc"
    assert doc["self"] == {"self_Ir": 1491339} and doc["inclusive"] == {"self_Ir": 1608573}
    callers = {r["function"]: (r["calls"], r["self_Ir"]) for r in doc["callers"]}
    assert callers == {"mdriver.main": (16658, 1072382), "mdriver.eval_mm_speed": (8329, 536191)}
    assert sum(c for c, _ in callers.values()) == doc["calls"]
    assert sum(v for _, v in callers.values()) == doc["inclusive"]["self_Ir"]
    assert [(r["function"], r["calls"], r["self_Ir"]) for r in doc["callees"]] == [
        ("mdriver.mem_sbrk", 13029, 117234)]


_TREE_ROW = re.compile(r"^\s*([\d,]+|\.)\s+(?:\([\s\d.]+%\)\s+)?([<*])\s+(\S+?):(.+?)"
                       r"(?: \(([\d,]+)x\))?(?: \[[^\]]*\])?$")


def _annotate_callers(tool: str, f: Path) -> dict[str, set[tuple[str, int, int]]]:
    """function name -> {(caller name, calls, inclusive cost)} from --tree=caller."""
    text = subprocess.run([tool, "--tree=caller", "--threshold=100", "--auto=no", str(f)],
                          capture_output=True, text=True, check=True, cwd=f.parent).stdout
    out: dict[str, set] = {}
    pending: set = set()
    for line in text.splitlines():
        m = _TREE_ROW.match(line)
        if not m:
            pending = set() if not line.strip() else pending
            continue
        cost = 0 if m[1] == "." else int(m[1].replace(",", ""))
        if m[2] == "<":
            pending.add((m[4], int(m[5].replace(",", "")), cost))
        else:
            out[m[4]] = pending
            pending = set()
    return out


@pytest.mark.parametrize("function", ["mm_malloc", "mm_free", "mem_sbrk", "main"])
def test_callers_equal_callgrind_annotate_tree(tmp_path: Path, function: str) -> None:
    tool = require_tool("callgrind_annotate", "apt-get install valgrind")
    f = tmp_path / MALLOC.name
    f.write_bytes(MALLOC.read_bytes())
    theirs = _annotate_callers(tool, f)[function]
    rc, out, _ = _run("calls", str(f), function, "--callers", "--top", "0", "--json")
    assert rc == 0
    ours = {(r["name"], r["calls"], r["self_Ir"])
            for r in json.loads(out)["callers"]}
    assert ours == theirs and ours


@pytest.mark.parametrize(("argv", "message"), [
    (["calls", str(MALLOC), "mm"], "4 functions match"),
    (["calls", str(MALLOC), "nothing_like_it"], "no function matching"),
    (["calls", str(DATA.parent / "speedscope" / "speedscope-0.6.0-two-sampled.speedscope.json"),
      "a"], "records no caller -> callee edges"),
])
def test_errors_are_one_line(argv: list[str], message: str) -> None:
    rc, _, err = _run(*argv)
    assert rc == 2 and message in err and "Traceback" not in err


def test_text_output() -> None:
    rc, out, _ = _run("calls", str(MALLOC), "mem_sbrk")
    assert rc == 0
    assert "callers" in out and "13,029x  mdriver.mm_malloc" in out
