"""callgrind / cachegrind files made here by valgrind, checked against callgrind_annotate,
and a regression pair: the function made slower must be the top row of ``profdiff diff``."""

from __future__ import annotations

import io
import json
import subprocess
from collections import defaultdict
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from callgrind_annotate import annotate, function_name
from tool_requirements import require_tool

import parsers
from parsers import callgrind
from viewer.cli import main as cli_main

PROGRAM = r"""
#include <stdio.h>
static long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
static long helper(long n) { long s = 1; for (long i = 0; i < n; i++) s = s * 3 % 1000003; return s; }
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) {
  long t = 0;
  for (int k = 0; k < 20; k++) t += work(1000 * WORK) + helper(500);
  t += fib(12);
  printf("%ld\n", t);
  return 0;
}
"""


def _build(tmp: Path, work: int) -> Path:
    """The program built into its own folder under one name, as two versions are."""
    gcc = require_tool("gcc", "apt-get install gcc")
    (tmp / f"v{work}").mkdir()
    src = tmp / f"v{work}" / "prog.c"
    src.write_text(PROGRAM)
    exe = src.parent / "prog"
    subprocess.run([gcc, "-O0", "-g", f"-DWORK={work}", "-o", str(exe), str(src)], check=True)
    return exe


def _valgrind(exe: Path, out: Path, *args: str) -> Path:
    vg = require_tool("valgrind", "apt-get install valgrind")
    subprocess.run([vg, *args, f"--{args[0].split('=')[1]}-out-file={out}", str(exe)],
                   check=True, capture_output=True, cwd=exe.parent)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("valgrind")
    v1, v2 = _build(tmp, 1), _build(tmp, 3)
    return {
        "v1": _valgrind(v1, tmp / "callgrind.out.v1", "--tool=callgrind"),
        "v2": _valgrind(v2, tmp / "callgrind.out.v2", "--tool=callgrind"),
        "sim": _valgrind(v1, tmp / "callgrind.out.sim", "--tool=callgrind", "--cache-sim=yes",
                         "--branch-sim=yes", "--collect-jumps=yes", "--dump-instr=yes"),
        "cachegrind": _valgrind(v1, tmp / "cachegrind.out.1", "--tool=cachegrind",
                                "--cache-sim=yes", "--branch-sim=yes"),
        "parts": _valgrind(v1, tmp / "callgrind.out.parts", "--tool=callgrind",
                           "--dump-every-bb=20000", "--combine-dumps=yes"),
    }


@pytest.mark.parametrize("which", ["v1", "sim", "cachegrind"])
def test_every_event_equals_callgrind_annotate(made: dict[str, Path], which: str) -> None:
    tool = require_tool("callgrind_annotate", "apt-get install valgrind")
    prof = parsers.load(made[which])
    events = prof.meta["events"]
    if which != "v1":
        assert len(events) == 13 and {"Ir", "D1mr", "Bcm", "Bim"} <= set(events)
    assert prof.meta["tool"] == ("cachegrind" if which == "cachegrind" else "callgrind")
    # cachegrind records no calls: no inclusive costs rather than inclusive = self
    assert prof.has_metric("total_Ir") == (which != "cachegrind")
    totals, rows = annotate(tool, made[which], events)
    objects = set(prof.extras["object_paths"].tolist())
    for j, e in enumerate(events):
        m = f"self_{callgrind._metric_base(e)}"
        assert prof.totals[m] == totals[j], e
        theirs: dict[str, int] = defaultdict(int)
        for row, costs in rows:
            theirs[function_name(row, objects)] += costs[j]
        ours: dict[str, int] = defaultdict(int)
        for n, v in zip(prof.frames.name.tolist(), prof.values[m].tolist(), strict=True):
            ours[n] += v
        assert {k: v for k, v in ours.items() if v} == {k: v for k, v in theirs.items() if v}, e


def test_recursion_counted_once(made: dict[str, Path]) -> None:
    prof = parsers.load(made["v1"])
    names = prof.frames.name.tolist()
    fib, fib2, main = names.index("fib"), names.index("fib'2"), names.index("main")
    g = prof.extras["call_graph"]
    # callgrind separates the first recursion level (fib -> fib'2), then fib'2 -> fib'2
    self_calls = [e for e in g.callees(fib2).tolist() if g.callee[e] == fib2]
    assert self_calls and g.calls[self_calls[0]] > 100  # fib(12) recursion was recorded
    assert prof.values["total_Ir"][fib2] < prof.values["total_Ir"][fib]
    incl = prof.values["total_Ir"]
    # fib's inclusive is the cost of main's call into it, not that plus the recursion
    into_fib = [e for e in g.callers(fib).tolist() if g.caller[e] == main]
    assert incl[fib] == g.cost["self_Ir"][into_fib[0]] <= incl[main] <= prof.totals["self_Ir"]
    assert incl[fib] >= prof.values["self_Ir"][fib]


def test_parts_are_summed(made: dict[str, Path]) -> None:
    prof = parsers.load(made["parts"])
    parts = prof.meta["parts"]
    assert len(parts) >= 2
    for pt in parts:  # valgrind's own totals: line of each part equals its cost lines
        assert pt["totals"] == pt["cost_lines_sum"]
    assert prof.totals["self_Ir"] == sum(pt["summary"][0] for pt in parts)
    assert int(prof.values["self_Ir"].sum()) == sum(pt["totals"][0] for pt in parts)
    assert not prof.warnings


def test_regression_is_top_row_of_diff(made: dict[str, Path]) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = cli_main(["diff", str(made["v1"]), str(made["v2"]), "--json", "--top", "0"])
    assert rc == 0
    doc = json.loads(out.getvalue())
    top = doc["rows"][0]
    assert top["name"] == "work"
    assert doc["sort"]["metric"] == "self_Ir"
    base, new = top["values"][0]["self_Ir"], top["values"][1]["self_Ir"]
    assert new > 2.5 * base  # 3x the loop iterations
    helper = next(r for r in doc["rows"] if r["name"] == "helper")
    assert helper["delta"]["self_Ir"] == 0  # exact counts: untouched code does not move


@pytest.mark.parametrize("which", ["v1", "sim", "cachegrind", "parts"])
def test_vectorised_pass_equals_sequential(made: dict[str, Path], which: str) -> None:
    a = callgrind.read(made[which])
    b = callgrind.read(made[which], sequential=True)
    assert a.frames.name.tolist() == b.frames.name.tolist()
    for m in a.metrics:
        assert (a.values[m.name] == b.values[m.name]).all(), m.name
    assert dict(a.totals) == dict(b.totals) and a.meta == b.meta
