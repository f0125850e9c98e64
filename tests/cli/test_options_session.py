"""One set of options for the app and ``profdiff diff``; the Session behind both.

Regression tests for issue 16's bugs: the app rejected ``--lenient`` (and other reading
and matching options), and without a display ``profdiff --base A1 A2 --new B1`` printed
nothing.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profdiff.viewer.cli import build_parser, main
from profdiff.viewer.options import (
    WINDOW_ONLY,
    build_app_parser,
    spec_from_args,
    view_from_args,
)
from profdiff.viewer.qt import app
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.units import format_value

ROOT = Path(__file__).parents[2]
HS = ROOT / "tests/data/hs-ad"
V1, V2 = HS / "v1/ad.prof", HS / "v2/ad.prof"
RUNS = [HS / f"noise-v1/run{i}/ad.prof" for i in (1, 2, 3)]


@pytest.fixture
def no_display(monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")


def _diff_out(capsys, argv: list[str]) -> tuple[int, str]:
    code = main(["diff", *argv])
    return code, capsys.readouterr().out


def test_app_accepts_reading_and_matching_options(no_display, capsys, tmp_path):
    """``profdiff a.prof b.prof --lenient ...`` used to fail with an argparse error."""
    rules = tmp_path / "rules.toml"
    # v2 renamed AD.Dual.sigmoidD to logisticD: the rule matches them again
    rules.write_text('[rename]\nnames = { "sigmoidD" = "logisticD" }\n', encoding="utf-8")
    argv = [str(V1), str(V2), "--lenient", "--format", "ghc-prof", "--rules", str(rules),
            "--metrics", "entries,time_pct", "--filter", "Dual.sigmoidD"]
    code = app.main(argv)
    out = capsys.readouterr().out
    assert code == 0
    rows = [line.split() for line in out.splitlines() if "sigmoidD" in line]
    # matched and, within the rounding of its printed percentages, unchanged
    # matched by the rule: the row shows both names
    assert rows[0][:6] == ["1", "sigmoidD", "→", "logisticD", "AD.Dual", "same"]
    rows[0] = [*rows[0][:1], "sigmoidD", *rows[0][4:]]
    assert rows == [["1", "sigmoidD", "AD.Dual", "same", *rows[0][4:]],
                    ["2", "sigmoidD.s", "AD.Dual", "removed", *rows[1][4:]]]
    assert rows[0].count("12,928") == 2  # entries in both runs: matched by the rule
    # and the terminal shows exactly what `profdiff diff` shows for the same options
    assert _diff_out(capsys, argv) == (0, out)


def test_no_display_groups_print_the_group_comparison(no_display, capsys):
    """``profdiff --base A1 A2 --new B1`` without a display printed nothing (exit 0)."""
    argv = ["--base", str(RUNS[0]), str(RUNS[1]), "--new", str(V2)]
    code = app.main(argv)
    cap = capsys.readouterr()
    assert code == 0 and "no display found" in cap.err
    assert "addGrad" in cap.out and "total alloc" in cap.out
    # group means: the baseline's total ticks are the mean of the two runs' totals
    ticks = [Session.open(SessionSpec(files=(str(p),))).runs[0].totals["total_ticks"]
             for p in RUNS[:2]]
    line = next(x for x in cap.out.splitlines() if x.startswith("total ticks"))
    assert format_value((ticks[0] + ticks[1]) / 2, "ticks") == line.split()[2]
    assert _diff_out(capsys, argv) == (0, cap.out)


def _option_actions(p: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in p._actions if a.option_strings and a.dest != "help"}


def _diff_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["diff"]


def _sample_argv(a: argparse.Action, tmp_path: Path) -> list[str]:
    """A command-line use of the option that parses (and is not its default)."""
    flag = a.option_strings[-1]
    if a.nargs == 0:
        return [flag]
    special = {"rules": str(tmp_path / "rules.toml"), "rename": "addGrad=addGradient",
               "rename_module": "AD.Eval=AD.E", "rename_regex": "^add=plus",
               "normalize": "ghc", "format": "ghc-prof", "metrics": "entries,time_pct",
               "filter": "Eval", "base": str(V1), "new": str(V2), "alloc_sample_rate": "1"}
    if a.dest in special:
        return [flag, special[a.dest]]
    if a.choices:
        return [flag, list(a.choices)[-1]]
    if a.type in (int, float):
        return [flag, "1"]
    return [flag, "x"]


def test_every_app_option_is_a_diff_option_meaning_the_same(tmp_path):
    (tmp_path / "rules.toml").write_text('[rename]\nnames = { "a" = "b" }\n',
                                         encoding="utf-8")
    app_opts, diff_opts = _option_actions(build_app_parser()), _option_actions(_diff_parser())
    shared = [d for d in app_opts if d not in WINDOW_ONLY]
    assert len(shared) >= 20  # reading, matching, groups, transforms, display
    for dest in shared:
        a, d = app_opts[dest], diff_opts.get(dest)
        assert d is not None, f"profdiff diff lacks the app's {a.option_strings}"
        assert (a.option_strings, a.nargs, a.const, a.default, a.type, a.choices) == (
            d.option_strings, d.nargs, d.const, d.default, d.type, d.choices), dest
        argv = _sample_argv(a, tmp_path)
        if dest in ("base", "new"):  # they only make sense together
            argv = ["--base", str(V1), "--new", str(V2)]
        elif dest not in ("bottom_up", "by_type"):
            argv = [str(V1), str(V2), *argv]
        if dest == "mode":  # the group's other flag
            argv = [str(V1), str(V2), "--tree"]
        ns_app = build_app_parser().parse_args(argv)
        ns_diff = _diff_parser().parse_args(argv)
        assert spec_from_args(ns_app) == spec_from_args(ns_diff), dest
        assert view_from_args(ns_app) == view_from_args(ns_diff), dest
        changed = (spec_from_args(ns_app) != spec_from_args(_diff_parser().parse_args(
            [str(V1), str(V2)])) or view_from_args(ns_app) != view_from_args(
            _diff_parser().parse_args([str(V1), str(V2)])))
        assert changed or dest == "no_rules_file", f"{dest} changes nothing"  # no file here


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included),
    relative imports resolved against the file's package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = ".".join(["profdiff", *path.relative_to(ROOT).with_suffix("").parts[:-1]])
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def test_qt_free_modules_never_import_cli_or_qt():
    launchers = {ROOT / "viewer/cli.py", ROOT / "viewer/package/__main__.py"}  # python -m
    files = [*ROOT.glob("parsers/**/*.py"),
             *(p for p in ROOT.glob("viewer/**/*.py") if "qt" not in p.relative_to(ROOT).parts)]
    assert len(files) > 30
    for f in files:
        if f in launchers:
            continue
        bad = {m for m in _imports(f) if m == "profdiff.viewer.cli" or m.startswith(("profdiff.viewer.qt",
                                                                           "PySide6"))}
        if f.is_relative_to(ROOT / "parsers"):
            bad |= {m for m in _imports(f) if m.startswith("profdiff.viewer")}
        assert not bad, f"{f.relative_to(ROOT)} imports {sorted(bad)}"


def test_help_imports_nothing_heavy():
    """``profdiff --help`` must not import numpy/pandas/Qt (issue 23's start-up target)."""
    code = ("import sys; from profdiff.viewer.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'PySide6') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_subcommand_registry_lists_every_command():
    from profdiff.viewer.cli import COMMANDS

    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [name for name, _m, _h in COMMANDS]
    for name, _m, _h in COMMANDS:
        assert sub.choices[name].get_default("func") is not None, name


def _program(*args: str, **kw) -> subprocess.CompletedProcess:
    """``python -m profdiff.viewer.cli ARGS``: the program, which ends with exit_now."""
    return subprocess.run([sys.executable, "-m", "profdiff.viewer.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, **kw)


def test_program_exit_keeps_every_line_and_the_exit_code(capsys):
    """The program ends with os._exit after flushing: its output is main([...])'s, line
    for line, and its exit codes are the command's (0, 1 for a crossed gate, 2 for a
    bad file), with no traceback."""
    pair = [str(ROOT / "samples/hs-ad-v1.prof"), str(ROOT / "samples/hs-ad-v2.prof")]
    prog = _program("diff", *pair, "--top", "1000")
    assert prog.returncode == 0, prog.stderr
    assert main(["diff", *pair, "--top", "1000"]) == 0
    assert prog.stdout == capsys.readouterr().out and prog.stdout.count("\n") > 100
    gate = _program("diff", *pair, "--fail-if", "total.total_alloc_bytes>+1%")
    assert gate.returncode == 1
    bad = _program("show", str(ROOT / "no-such.prof"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("profdiff: error:")


@pytest.mark.parametrize("command", ["show", "diff"])
def test_program_exit_when_the_reader_left(command):
    """``profdiff ... | true``: the reader is gone before anything is written (all of it
    still buffered when the command returns, or more than a pipe holds); the program
    ends quietly, with the command's exit code."""
    if command == "show":
        args = ["show", str(ROOT / "samples/hs-ad-v1.prof")]  # ~3 KB: flushed at the exit
    else:
        data = ROOT / "tests/data/ghc-prof"
        args = ["diff", str(data / "ghc-7.x-cfd-large-2015-06-15-0843.prof"),
                str(data / "ghc-7.x-cfd-large-2015-06-15-1603.prof"), "--top", "100000"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered
    proc = subprocess.Popen([sys.executable, "-m", "profdiff.viewer.cli", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # long before the interpreter has started
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception" not in err


def test_program_under_a_profiler_exits_as_usual(tmp_path):
    """cProfile writes its results at the exit: the program does not skip it."""
    out = tmp_path / "show.prof"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m",
                           "profdiff.viewer.cli", "show", str(ROOT / "samples/hs-ad-v1.prof")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "hs-ad-v1.prof" in done.stdout and out.stat().st_size > 1000


def test_a_terminal_without_unicode_gets_question_marks_not_an_internal_error():
    """An ASCII stdout (a non-UTF-8 locale, or ``PYTHONUTF8=0``): the table's Δ and † print
    as ``?`` and the command succeeds; before, it ended in "internal error:
    UnicodeEncodeError"."""
    rts = ROOT / "tests" / "data" / "ghc-rts"
    env = {**os.environ, "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii"}
    out = _program("diff", str(rts / "hs-ad-v1.stats.txt"), str(rts / "hs-ad-v2.stats.txt"),
                   env=env)
    assert out.returncode == 0, out.stderr
    assert "internal error" not in out.stderr
    assert "MUT CPU ?" in out.stdout and "Δ" not in out.stdout
