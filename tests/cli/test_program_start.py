"""The profdiff program sets itself up (one BLAS thread, memory settings) when run as the
program, and only then: a call with arguments, as a library or a test makes, leaves the
process's threads and allocator alone (viewer/program_start.py)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest

from profdiff.viewer import blas_threads, cli, memory_settings, program_start
from profdiff.viewer.qt import app as qt_app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "ghc-prof" / "ghc-6.12-ann-run-0134-2010-07-02.prof"


def test_set_up_program_asks_for_every_setting(monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(blas_threads, "one_blas_thread", lambda: asked.append("blas") or True)
    monkeypatch.setattr(memory_settings, "tune_malloc", lambda: asked.append("malloc") or True)
    monkeypatch.setattr(memory_settings, "small_pages", lambda: asked.append("pages") or True)
    program_start.set_up_program()
    assert asked == ["blas", "malloc", "pages"]


class _Ended(Exception):
    pass


@pytest.mark.parametrize("entry", ["cli", "app"])
def test_the_program_entry_points_set_up_and_a_call_with_arguments_does_not(monkeypatch, entry):
    calls: list[str] = []
    monkeypatch.setattr(program_start, "set_up_program", lambda: calls.append("set up"))

    def ended(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr("profdiff.viewer.options.exit_now", ended)
    monkeypatch.setattr(qt_app, "exit_now", ended)
    args = ["show", str(SMALL)] if entry == "cli" else [str(SMALL), "--no-such-option"]
    main = cli.main if entry == "cli" else qt_app.main
    monkeypatch.setattr(sys, "argv", ["profdiff", *args])
    with pytest.raises((_Ended, SystemExit)):
        main()
    assert calls == ["set up"]
    calls.clear()
    with pytest.raises(SystemExit) if entry == "app" else contextlib.nullcontext():
        main(args)
    assert calls == []
