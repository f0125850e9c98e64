"""perf started by the command line before its imports (:mod:`parsers.perf_early`): the
read takes the running perf and gives the same profile; a run nobody takes is killed and
its folder removed; and nothing starts where the read itself would fail or differ."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_perf_dlfilter import (
    CVM,
    TABLES,
    _own_cache,  # noqa: F401 (the cache fixture, autouse)
    _same,
)
from tool_requirements import require_tool

from profdiff.parsers import perf_data, perf_early
from profdiff.parsers.errors import ExternalToolError, ParseError
from profdiff.viewer import cli

pytestmark = pytest.mark.perf
DATA = Path(__file__).resolve().parent.parent / "data"
DEFAULT = perf_data.DEFAULT_TIMEOUT_S


@pytest.fixture
def perf() -> str:
    return require_tool("perf", "apt-get install linux-perf")


@pytest.fixture(autouse=True)
def _nothing_left() -> Iterator[None]:
    """A test's early runs never outlive it."""
    yield
    perf_early.discard()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every Tables that perf_data.start_tables returns, and the workspaces it got."""
    seen: list = []
    real = perf_data.start_tables

    def spy(ws, p, cores, timeout):
        out = real(ws, p, cores, timeout)
        seen.append((ws, out))
        return out

    monkeypatch.setattr(perf_data, "start_tables", spy)
    return seen


def test_the_read_takes_the_early_run_and_gives_the_same_profile(perf: str, started: list):
    path = CVM[1]
    plain = perf_data.read(path)
    assert len(started) == 1  # the plain read started its own
    assert perf_early.start(path)
    assert len(started) == 2
    early = perf_data.read(path)
    assert len(started) == 2  # taken, not started again
    assert early.meta["perf_reader"] == TABLES
    _same(plain, early)
    ws, _tables = started[1]
    assert not Path(ws.tmpdir.name).exists()  # the read removed the early folder
    assert perf_early.take(path, None, DEFAULT) is None


def test_a_run_nobody_takes_is_killed_and_its_folder_removed(perf: str, started: list):
    assert perf_early.start(CVM[0])
    ws, tables = started[0]
    assert Path(ws.tmpdir.name).is_dir()
    perf_early.discard()
    assert all(q.returncode is not None for q in tables.running.group.procs)
    assert not Path(ws.tmpdir.name).exists()
    assert perf_early.take(CVM[0], None, DEFAULT) is None


def test_a_read_with_other_options_starts_its_own(perf: str, started: list):
    assert perf_early.start(CVM[1], cores=1)
    prof = perf_data.read(CVM[1], timeout=DEFAULT)  # cores None: not the early run's
    assert len(started) == 2 and prof.meta["perf_reader"] == TABLES
    assert perf_early.take(CVM[1], None, DEFAULT) is None
    ws = perf_early.take(CVM[1], 1, DEFAULT)
    assert ws is not None and ws.tables is not None  # still there, for discard()
    from profdiff.parsers.perf_dlfilter import discard_parts

    discard_parts(ws.tables.running)
    ws.tmpdir.cleanup()


def _cut(tmp_path: Path) -> Path:
    p = tmp_path / "cut.perf.data"
    p.write_bytes(CVM[0].read_bytes()[:50])
    return p


@pytest.mark.parametrize("case", ["not perf.data", "cut header", "no perf"])
def test_nothing_starts_where_the_read_fails(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list):
    path = {"not perf.data": DATA / "hs-ad" / "v1" / "ad.P.prof",
            "cut header": _cut(tmp_path)}.get(case, CVM[0])
    if case == "no perf":
        monkeypatch.setenv("PROFDIFF_PERF", str(tmp_path / "no-such-perf"))
    assert not perf_early.start(path)
    assert not perf_early.pending() and started == []
    assert perf_early.take(path, None, DEFAULT) is None
    with pytest.raises((ParseError, ExternalToolError)):
        perf_data.read(path)


def test_the_text_path_takes_the_early_workspace_alone(
        perf: str, monkeypatch: pytest.MonkeyPatch, started: list):
    """perf's text is read (here: asked for): nothing runs early, but the read uses the
    HOME set up early (no second perf buildid-cache) and removes it."""
    monkeypatch.setenv("PROFDIFF_PERF_TEXT", "1")
    made = []
    real = perf_data.open_workspace
    monkeypatch.setattr(perf_data, "open_workspace", lambda p: made.append(real(p)) or made[-1])
    assert perf_early.start(CVM[0])
    assert not perf_early.pending()  # kept, but no perf runs
    prof = perf_data.read(CVM[0])
    assert len(made) == 1 and prof.meta["perf_reader"].startswith("perf script text")
    assert [out for _ws, out in started] == ["PROFDIFF_PERF_TEXT is set"] * 2
    assert not Path(made[0].tmpdir.name).exists()
    assert perf_early.take(CVM[0], None, DEFAULT) is None


@pytest.mark.parametrize("argv,expected", [
    (["show", "{perf}"], True),
    (["show", "--top", "5", "{perf}", "--json"], True),
    (["show", "{prof}"], False),
    (["diff", "{perf}", "{perf}"], False),
    (["show", "{missing}"], False),
])
def test_the_command_line_starts_perf_for_show_of_a_perf_data(
        argv: list[str], expected: bool, perf: str, tmp_path: Path):
    names = {"{perf}": str(CVM[0]), "{prof}": str(DATA / "hs-ad" / "v1" / "ad.P.prof"),
             "{missing}": str(tmp_path / "none.perf.data")}
    assert cli._start_perf_early([names.get(a, a) for a in argv]) is expected
    perf_early.discard()


def test_the_program_prints_what_a_call_prints_and_leaves_no_folder(
        perf: str, tmp_path: Path, capsys: pytest.CaptureFixture):
    """``python -m profdiff.viewer.cli show`` (the program: perf starts early) against
    ``cli.main([...])`` (a call: it does not)."""
    assert cli.main(["show", str(CVM[1]), "--top", "15"]) == 0
    called = capsys.readouterr().out
    tmp = tmp_path / "t"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    run = subprocess.run([sys.executable, "-m", "profdiff.viewer.cli", "show", str(CVM[1]),
                          "--top", "15"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == called
    assert list(tmp.iterdir()) == []
