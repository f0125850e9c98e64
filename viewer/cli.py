"""``profdiff`` command line: the launcher of the app and of every subcommand.

    profdiff [FILES...] [--screenshot OUT.png ...]   the desktop app (viewer.qt.app)
    profdiff show FILE [--json]                      one run: header facts, top of the tree
    profdiff diff BASE NEW [MORE...] [...]           ranked comparison, --json, --fail-if
    profdiff export BASE [NEW...] -o OUT.json        speedscope export (viewer.export)
    profdiff report BASE NEW -o OUT.html             one-file HTML (or Markdown) report
    profdiff watch DIR --no-gui                      one line per landed run (viewer.watch)
    profdiff calls FILE FUNCTION                     callers / callees (callgrind edges)

Exit codes: 0 success, 1 a ``--fail-if`` gate was crossed, 2 usage or input error.
Errors are one readable line naming the file and line; never a traceback (set
``PROFDIFF_DEBUG=1`` to get one).

Adding a subcommand: one line in :data:`COMMANDS` ``(name, module, one-line help)``.
The module provides ``add_arguments(parser)`` (use the shared groups of
:mod:`viewer.options`), ``run(args) -> int`` and optionally ``DESCRIPTION``.  Only the
module of the command being run is imported, and modules import heavy libraries
(numpy, pandas, Qt) inside ``run``, so ``profdiff --help`` stays fast.  (A module with
the older ``add_parser(subparsers) -> parser`` hook instead of ``add_arguments`` works
too.)

This is the one Qt-free module that starts the Qt app (:func:`_run_gui`); nothing
imports it except the ``profdiff`` entry point and ``python -m viewer.cli``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    import argparse

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("show", "profdiff.viewer.show_cli", "one run: header facts and the top of the tree"),
    ("diff", "profdiff.viewer.diff_cli", "compare runs: ranked table, --json, --fail-if"),
    ("export", "profdiff.viewer.export.cli",
     "write a speedscope flame-graph file (runs, grew, shrank) and/or a CSV table"),
    ("watch", "profdiff.viewer.watch_cli", "follow a folder: every new profile is compared as it lands"),
    ("report", "profdiff.viewer.report_cli",
     "the comparison as one self-contained HTML page (or Markdown) for CI and review"),
    ("annotate", "profdiff.viewer.annotate_cli",
     "one function's instructions in two perf.data runs, aligned: which got hot"),
    ("calls", "profdiff.viewer.calls_cli", "callers and callees of a function (callgrind call edges)"),
)
"""Subcommands: (name, module, help).  See the module docstring."""

SUBCOMMANDS = tuple(name for name, _m, _h in COMMANDS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``profdiff COMMAND`` parser; ``only``: fill in just that command's options
    (the others are listed with their help line, their modules not imported); ``""``:
    none (``profdiff --help``); None: all."""
    import argparse  # here: ``profdiff show X.perf.data`` starts perf before it

    p = argparse.ArgumentParser(
        prog="profdiff",
        description="Compare profiler runs (GHC .prof/-pj/ticky/.hp/RTS stats, perf, pprof, "
        "Julia .mem) side by side. Without a subcommand, opens the desktop app "
        "(profdiff FILE... --help for its options).",
    )
    p.add_argument("--version", action="version", version=f"profdiff {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname, help_ in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name, help=help_)
            continue
        mod = importlib.import_module(modname)
        if hasattr(mod, "add_arguments"):
            sp = sub.add_parser(name, help=help_, conflict_handler="resolve",
                                description=getattr(mod, "DESCRIPTION", help_))
            mod.add_arguments(sp)
        else:  # the older hook: the module adds its own subparser
            sp = mod.add_parser(sub)
        sp.set_defaults(func=mod.run)
    return p


def tolerant_stdout() -> None:
    """Let the tables print on a terminal that cannot show their symbols (Δ, ≈, −, †):
    those become ``?`` instead of an "internal error: UnicodeEncodeError".

    Why: Python writes UTF-8 in the C locale, but a non-UTF-8 locale (ISO-8859-1) or
    ``PYTHONUTF8=0`` gives a strict ASCII or Latin-1 stdout, and every ``diff`` failed.
    A UTF-8 stdout is left as it is."""
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if enc != "utf8" and hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(errors="replace")
        except (ValueError, OSError):  # a closed or detached stream: nothing to print to
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """The ``profdiff`` program (``argv`` None: ``sys.argv``; the process then ends as
    soon as the command or the window is done, :func:`viewer.options.exit_now`) or one
    command line (a list: returns its exit code)."""
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    early = program and _start_perf_early(argv)  # first: perf needs none of what follows
    if program:
        from .program_start import set_up_program

        set_up_program()
        tolerant_stdout()
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        code = _run_gui(argv)
    elif early:
        from profdiff.parsers import perf_early

        try:
            code = _command(argv)
        finally:
            perf_early.discard()
    else:
        code = _command(argv)
    if program:
        from .options import exit_now

        exit_now(code)
    return code


def _command(argv: list[str]) -> int:
    _hint_path_named_like(argv)
    parser = build_parser(only=argv[0] if argv[0] in SUBCOMMANDS else "")
    from .options import auto_match_value

    args = parser.parse_args(auto_match_value(argv))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from .options import run_guarded

    result = run_guarded(args.func, args)
    if isinstance(result, int):
        return result
    return _run_gui(result)


def _start_perf_early(argv: list[str]) -> bool:
    """``profdiff show X`` of a perf.data: start perf now, before the command's imports
    (:mod:`parsers.perf_early`); True if it was started.  Only for the program itself:
    ``main([...])`` in a test reads as it always did."""
    if argv[:1] != ["show"]:
        return False
    import os

    files = [a for a in argv[1:] if not a.startswith("-") and os.path.isfile(a)]
    if len(files) != 1:
        return False
    from profdiff.parsers import perf_early

    return perf_early.looks_like_perf_data(files[0]) and perf_early.start(files[0])


def _hint_path_named_like(argv: list[str]) -> None:
    """A subcommand name is always the subcommand (a command line means the same in every
    folder); when a file or folder of that name is in the working directory and not
    named again later, say how to open it instead (``profdiff ./watch``)."""
    import os

    name = argv[0]
    if not os.path.exists(name):
        return
    named = [os.path.normpath(a) for a in argv[1:] if not a.startswith("-")]
    if any(a == name or a.startswith(name + os.sep) for a in named):
        return  # profdiff show show/x.prof: the path is used, as the subcommand's argument
    kind = "folder" if os.path.isdir(name) else "file"
    print(f"profdiff: note: '{name}' is the {name} subcommand; to open the {kind} ./{name} "
          f"type: profdiff ./{name}", file=sys.stderr)


def _run_gui(request) -> int:
    """The desktop app: ``request`` is the app's argv, or an :class:`OpenApp` from a
    command (the only place Qt-free code reaches viewer.qt)."""
    try:
        app = importlib.import_module("profdiff.viewer.qt.app")
    except ImportError as e:
        print(f"profdiff: the desktop app is not available ({e}); use 'profdiff diff A B' "
              "(or 'profdiff watch DIR --no-gui')", file=sys.stderr)
        return 2
    if isinstance(request, list):
        return int(app.main(request) or 0)
    return int(app.open_app(request) or 0)


if __name__ == "__main__":
    sys.exit(main())
