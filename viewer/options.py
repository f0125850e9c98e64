"""The command-line options shared by the desktop app and every subcommand.

One definition of each option, so ``profdiff a.prof b.prof --lenient`` (the app) and
``profdiff diff a.prof b.prof --lenient`` (the terminal) accept the same words and mean
the same thing.  Options fall in groups:

* reading (:func:`add_reading_options`): ``--format --lenient --event ...``;
* matching (:func:`add_matching_options`): ``--flat/--tree --baseline --rename* --rules``;
* repeated runs (:func:`add_group_options`): ``--base ... --new ... --stat --alpha``;
* what runs become (:func:`add_transform_options`): ``--bottom-up --by-type``;
* what is shown (:func:`add_display_options`): ``--metrics --absolute --filter
  --changed-only --significant-only --threshold``.

:func:`spec_from_args` turns parsed options into a :class:`viewer.session.SessionSpec`
(what is compared) and :func:`view_from_args` into a :class:`viewer.view_state.ViewState`
(how it is looked at).  :func:`build_app_parser` is the desktop app's parser: the shared
groups plus the options that only make sense for a window (:data:`WINDOW_ONLY`).

This module imports nothing heavy at import time (argparse only): ``profdiff --help``
must not pay for numpy, pandas or Qt.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profdiff.parsers.errors import ProfdiffError

from .defaults import DEFAULT_ALPHA, DEFAULT_MATCH_THRESHOLD

if TYPE_CHECKING:
    from .session import SessionSpec
    from .view_state import ViewState


class UsageError(ProfdiffError):
    """A bad combination of options (exit code 2, one line, no traceback)."""


@dataclass
class OpenApp:
    """What a command's ``run(args)`` returns to have the launcher (:mod:`viewer.cli`)
    open the desktop app, e.g. ``profdiff watch DIR``: ``viewer.qt.app.open_app(request)``
    runs ``entry`` with ``kwargs``.  Keeps Qt-free commands from importing ``viewer.qt``."""

    entry: str
    kwargs: dict[str, Any] = field(default_factory=dict)


READER_OPTIONS = ("event", "sample_type", "group_by", "split_by", "demangle", "profile",
                  "alloc_sample_rate")
"""Reader keywords a reader accepts when it knows them (the others ignore them)."""

VIEWS = ("summary", "side", "diff", "flat", "flame", "heap", "rts", "ticky", "counters", "totals",
         "bottom-up", "types", "callers")
"""The desktop app's tabs, for ``--view``."""

WINDOW_ONLY = frozenset({
    "screenshot", "view", "size", "expand", "colorblind", "sig_column", "show_suggestions",
    "rules_editor",
})
"""Destinations of app options that only a window can honour (a picture, a tab, a size,
a panel); every other app option is shared with ``profdiff diff``."""


# ------------------------------------------------------------------------------------------
# option groups
# ------------------------------------------------------------------------------------------
def _sample_rate(text: str) -> float:
    """``--alloc-sample-rate``: a fraction in (0, 1]."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], not {text!r}") from None
    if not 0 < rate <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], not {text!r}")
    return rate


def add_reading_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reading")
    g.add_argument("--format", help="force a reader (skip detection), e.g. ghc-prof")
    g.add_argument("--lenient", action="store_true",
                   help="skip corrupt lines (each one is reported) instead of failing")
    g.add_argument("--event", help="perf: which event to read when a file has several")
    g.add_argument("--sample-type", dest="sample_type", help="pprof: which sample type")
    g.add_argument("--alloc-sample-rate", dest="alloc_sample_rate", type=_sample_rate,
                   metavar="RATE",
                   help="Julia allocation profiles (PProf.jl Allocs): the sample_rate they "
                   "were recorded at; 1 = every allocation, counts exact (default: unknown, "
                   "counts judged as samples)")
    g.add_argument("--group-by", dest="group_by", choices=("symbol+dso", "symbol"),
                   help="perf: frame identity (default symbol+dso; 'symbol' matches across "
                   "moved libraries)")
    g.add_argument("--split-by", dest="split_by", choices=("comm", "pid"),
                   help="perf: one subtree per command or process")
    g.add_argument("--demangle", action="store_true", default=None,
                   help="perf: demangle Rust/C++ symbols perf left mangled")
    g.add_argument("--profile", help="speedscope: which profile of the file (0-based index "
                   "or name; default: all profiles merged)")


def add_matching_options(p: argparse.ArgumentParser, *, baseline: bool = True,
                         mode: bool = True) -> None:
    """``baseline=False`` for ``watch`` (its ``--baseline`` is a file, not an index)."""
    g = p.add_argument_group("matching")
    if mode:
        m = g.add_mutually_exclusive_group()
        m.add_argument("--flat", dest="mode", action="store_const", const="flat",
                       help="aggregate every cost centre over its call sites (default)")
        m.add_argument("--tree", dest="mode", action="store_const", const="tree",
                       help="match nodes by their call path from the root")
    if baseline:
        g.add_argument("--baseline", type=int, default=0, metavar="I",
                       help="index of the baseline among the files (default 0, the first)")
    g.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="treat name OLD as NEW in every run (Module:OLD=NEW for one module)")
    g.add_argument("--rename-module", action="append", default=[], metavar="OLD=NEW",
                   help="rename a module (exact or dotted prefix)")
    g.add_argument("--rename-regex", action="append", default=[], metavar="PATTERN=REPL",
                   help="regular-expression rewrite of names before matching")
    g.add_argument("--normalize", action="append", default=[], metavar="PRESET",
                   help="built-in rewrites: 'ghc' ($w/$s prefixes, numbered binders, "
                   "GHC.Internal.) or 'perf' (.constprop.N, Rust hashes)")
    g.add_argument("--rules", metavar="FILE",
                   help="rules file (default: .profdiff.toml beside the runs, if any)")
    g.add_argument("--no-rules-file", action="store_true", help="ignore .profdiff.toml")
    g.add_argument("--auto-match", nargs="?", type=float, const=DEFAULT_MATCH_THRESHOLD,
                   metavar="THRESHOLD",
                   help="accept suggested matches for renamed nodes scoring >= THRESHOLD "
                   f"(default {DEFAULT_MATCH_THRESHOLD})")
    p.set_defaults(mode=None)


def auto_match_value(argv: Sequence[str]) -> list[str]:
    """``--auto-match`` takes an optional threshold: ``--auto-match A.prof B.prof`` must not
    read ``A.prof`` as that threshold (argparse would, then fail).  A bare flag followed by
    something that is not a number becomes ``--auto-match=DEFAULT``."""
    out = list(argv)
    for i, tok in enumerate(out):
        if tok == "--auto-match":
            nxt = out[i + 1] if i + 1 < len(out) else None
            try:
                float(nxt) if nxt is not None else None
            except ValueError:
                nxt = None
            if nxt is None:
                out[i] = f"--auto-match={DEFAULT_MATCH_THRESHOLD}"
    return out


def add_group_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("repeated runs (noise-aware comparison)")
    g.add_argument("--base", nargs="+", metavar="FILE", default=[],
                   help="several runs of the baseline build (with --new): compare group "
                   "means and tell real changes from noise")
    g.add_argument("--new", nargs="+", metavar="FILE", default=[],
                   help="several runs of the new build")
    g.add_argument("--stat", choices=("mean", "median"), default="mean",
                   help="how a group's runs are combined (default mean)")
    g.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                   help=f"false discovery rate for 'significant' (default {DEFAULT_ALPHA})")


def add_transform_options(p: argparse.ArgumentParser, by_type: bool = True) -> None:
    """``--bottom-up`` (and ``--by-type``): what each run is turned into before alignment."""
    g = p.add_argument_group("views")
    g.add_argument("--bottom-up", action="store_true",
                   help="invert each run's call tree first (perf report's caller view): "
                   "roots are the functions where cost was spent, children their callers; "
                   "compares trees (--tree is implied: per-function totals in --flat mode "
                   "are the same top-down and bottom-up)")
    if by_type:
        g.add_argument("--by-type", action="store_true",
                       help="pprof allocation profiles (Julia Profile.Allocs): compare the "
                       "allocated types (count and bytes per type) instead of the call tree")


def add_label_option(p: argparse.ArgumentParser) -> None:
    """``--label``: the name a run is shown by (tables, JSON, reports, the window)."""
    p.add_argument("--label", action="append", default=[], metavar="NAME[=PATH]",
                   help="name a run in every table, JSON document and window (default: the "
                   "shortest path suffix that tells the runs apart, e.g. v1/x.prof). "
                   "Repeat: the first --label NAME names the first run, the next the "
                   "second...; --label NAME=PATH names the run read from PATH")


def add_display_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what is shown")
    g.add_argument("--metrics", help="comma-separated metric columns")
    g.add_argument("--absolute", action="store_true",
                   help="absolute units (seconds, bytes) instead of percent of run")
    g.add_argument("--filter", metavar="TEXT", help="only rows whose name or module contains TEXT")
    g.add_argument("--regex", action="store_true", help="--filter is a regular expression")
    g.add_argument("--changed-only", action="store_true", help="hide rows that did not change")
    g.add_argument("--significant-only", action="store_true",
                   help="only rows whose change of the main metric is significant")
    g.add_argument("--threshold", type=float, default=0.0, metavar="PP",
                   help="hide rows whose change of every shown metric is below PP "
                   "percentage points of the run (with --absolute: below PP %% of the "
                   "baseline run's total)")


def add_session_options(p: argparse.ArgumentParser) -> None:
    """Everything that says what is compared and how it is shown: the app and ``diff``."""
    p.add_argument("files", nargs="*", metavar="FILE")
    add_label_option(p)
    add_group_options(p)
    add_matching_options(p)
    add_reading_options(p)
    add_transform_options(p)
    add_display_options(p)


def build_app_parser() -> argparse.ArgumentParser:
    """The desktop app: ``profdiff [FILES...] [options]``."""
    p = argparse.ArgumentParser(
        prog="profdiff",
        description="Open the profdiff desktop app. One file: view it; two or more: compare "
        "them (the first is the baseline). Subcommands show/diff/export/watch are the CLI.")
    add_session_options(p)
    w = p.add_argument_group("window")
    w.add_argument("--screenshot", metavar="OUT.png",
                   help="render the window offscreen to a PNG and exit")
    w.add_argument("--view", choices=VIEWS, default=None,
                   help="tab to show (default: the one the window opens on); a view the "
                   "runs' format does not have is an error that lists the views it has")
    w.add_argument("--size", default="1600x900", metavar="WxH", help="window size")
    w.add_argument("--expand", default=None, metavar="N|hot|delta",
                   help="expand N tree levels, 'hot' for the hottest path or 'delta' for the "
                   "path of the largest change (default: as the window opens, the diff tree "
                   "open along the path to the top culprit)")
    w.add_argument("--colorblind", action="store_true", help="colour-blind safe palette")
    w.add_argument("--sig-column", action="store_true",
                   help="show the significance column (on by default with --base/--new)")
    w.add_argument("--show-suggestions", action="store_true",
                   help="show the 'Unmatched' panel of suggested matches (the first one "
                   "selected, its rows revealed in the diff tree)")
    w.add_argument("--rules-editor", action="store_true", help="open the rename rules editor")
    return p


# ------------------------------------------------------------------------------------------
# running a command
# ------------------------------------------------------------------------------------------
def run_guarded(func, args: argparse.Namespace):
    """Run a command with the CLI's error contract: one line, exit code 2, no traceback.
    Returns the exit code, or the command's :class:`~viewer.options.OpenApp` request."""
    try:
        result = func(args)
        return result if isinstance(result, OpenApp) else int(result or 0)
    except ProfdiffError as e:
        print(f"profdiff: error: {e}{lenient_hint(e, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the CLI promises no tracebacks
        if os.environ.get("PROFDIFF_DEBUG"):
            raise
        print(f"profdiff: internal error: {type(e).__name__}: {e} "
              "(set PROFDIFF_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2


LENIENT_HINT_MAX_BYTES = 64 << 20
"""Files up to this size are read again with ``--lenient`` when they fail to read, to
say whether that option would read them (a second read of a bigger file on an error path
could take seconds)."""


def lenient_hint(e: ProfdiffError, args: argparse.Namespace) -> str:
    """:func:`lenient_hint_for` the file a read error names, when the command takes
    ``--lenient`` and it was not given; else ''."""
    from profdiff.parsers.errors import ParseError, UnreadableFileError

    if not isinstance(e, ParseError) or isinstance(e, UnreadableFileError) or \
            getattr(args, "lenient", True):
        return ""
    return lenient_hint_for(e.path, getattr(args, "format", None), reader_options(args))


def lenient_hint_for(path: str | os.PathLike[str], fmt: str | None,
                     options: dict[str, Any], how: str = "--lenient") -> str:
    """``; --lenient reads it, with N warnings`` when a lenient read of ``path`` (a file
    that failed to read strictly) succeeds, tried for files up to
    :data:`LENIENT_HINT_MAX_BYTES`; else ''.  ``how``: what the user sets to read so
    (the window names its dialog).

    Why tried, not just suggested: whether skipping helps depends on the reader and the
    damage (a bad line can be skipped, a missing header cannot); a hint that sends the
    user to an option that then fails the same way costs more than none."""
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size > LENIENT_HINT_MAX_BYTES:
            return ""
        from profdiff.parsers import load

        prof = load(p, format=fmt, lenient=True, **options)
    except Exception:  # noqa: BLE001 - no hint when the lenient read fails too
        return ""
    n = len(prof.warnings)
    return f"; {how} reads it, with {n} warning{'s' if n != 1 else ''}" if n else \
        f"; {how} reads it"


def exit_now(code: int) -> None:
    """End the program once a command or the window is done: output flushed, then
    ``os._exit``.

    Why: by then every file it wrote is closed (the window saved its settings when it
    closed) and its output is written; what is left is the interpreter's teardown,
    freeing numpy's arrays and every loaded module: 15-30 ms of a 0.25 s ``profdiff
    show``, ~0.1 s after diffing two 100 MB files.  Only for the program itself
    (``profdiff``, ``python -m profdiff.viewer.qt.app``); ``main([...])`` returns.  Under
    a profiler or a tracer (cProfile, coverage), which write their results at the exit,
    the program exits as usual."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that left (| head), a closed stream
        pass
    os._exit(code)


# ------------------------------------------------------------------------------------------
# parsed options -> SessionSpec / ViewState
# ------------------------------------------------------------------------------------------
def reader_options(args: argparse.Namespace) -> dict:
    """Reader keywords from the command line (readers ignore the ones they do not know)."""
    return {k: getattr(args, k) for k in READER_OPTIONS if getattr(args, k, None) is not None}


def resolve_mode(args: argparse.Namespace, default: str) -> str:
    """Alignment mode: ``--flat``/``--tree`` if given, else ``default``; ``--bottom-up``
    means tree and ``--by-type`` flat (a type list has no tree)."""
    mode = getattr(args, "mode", None)
    if getattr(args, "by_type", False):
        if mode == "tree":
            raise UsageError("--by-type compares a flat list of types; drop --tree")
        return "flat"
    if getattr(args, "bottom_up", False):
        if mode == "flat":
            raise UsageError("--bottom-up compares inverted call trees; in --flat mode "
                             "inversion changes nothing (a function's totals are the same "
                             "top-down and bottom-up): drop --flat")
        return "tree"
    return mode or default


def rules_from_args(args: argparse.Namespace, paths: list[str]) -> tuple[list, str | None]:
    """Rename rules from the rules file (first) and the command line (after it), and the
    rules file they came from (None when none was read).

    Without a rules file or a rule option, the rules module is not imported at all."""
    from pathlib import Path

    from .rules_file import find_rules_file

    source = None
    path = getattr(args, "rules", None)
    if path:
        source = Path(path)
    elif not getattr(args, "no_rules_file", False):
        source = find_rules_file(paths)
    if source is None and not explicit_rules(args):
        return [], None
    from .rules import (
        ModuleRename,
        load_rules_file,
        name_rule,
        parse_pair,
        preset_rules,
        regex_rule,
    )

    rules: list = load_rules_file(source) if source is not None else []
    rules += [ModuleRename(*parse_pair(t, "--rename-module"))
              for t in getattr(args, "rename_module", None) or []]
    rules += [name_rule(t) for t in getattr(args, "rename", None) or []]
    rules += [regex_rule(t) for t in getattr(args, "rename_regex", None) or []]
    rules += preset_rules(getattr(args, "normalize", None) or [])
    return rules, (str(source) if source is not None else None)


def explicit_rules(args: argparse.Namespace) -> bool:
    """Rules were given on the command line (the app then keeps them over a rules file
    found beside later runs)."""
    return bool(getattr(args, "rules", None) or any(
        getattr(args, k, None) for k in ("rename", "rename_module", "rename_regex",
                                         "normalize")))


def spec_from_args(args: argparse.Namespace, default_mode: str = "flat") -> SessionSpec:
    """What the parsed options ask to compare (files or groups, reading, matching)."""
    from .session import SessionSpec

    files = list(getattr(args, "files", None) or [])
    base = list(getattr(args, "base", None) or [])
    new = list(getattr(args, "new", None) or [])
    if base or new:
        if not (base and new):
            raise UsageError("--base and --new go together: --base A1 [A2...] --new B1 [B2...]")
        if files:
            raise UsageError("give either FILE... or --base/--new groups, not both")
    if getattr(args, "bottom_up", False) and getattr(args, "by_type", False):
        raise UsageError("--bottom-up and --by-type do not go together")
    mode = resolve_mode(args, default_mode)
    rules, source = rules_from_args(args, [*files, *base, *new])
    auto = getattr(args, "auto_match", None)
    from .run_labels import parse_label_options

    labels = parse_label_options(getattr(args, "label", None), [*files, *base, *new])
    return SessionSpec(
        files=tuple(files), base=tuple(base), new=tuple(new),
        format=getattr(args, "format", None), lenient=bool(getattr(args, "lenient", False)),
        reader_options=tuple(sorted(reader_options(args).items())),
        baseline=int(getattr(args, "baseline", 0) or 0), mode=mode,
        bottom_up=bool(getattr(args, "bottom_up", False)),
        by_type=bool(getattr(args, "by_type", False)),
        rules=tuple(rules), rules_source=source, explicit_rules=explicit_rules(args),
        rules_file=not getattr(args, "no_rules_file", False),
        stat=getattr(args, "stat", "mean"), alpha=float(getattr(args, "alpha", DEFAULT_ALPHA)),
        auto_match=auto, labels=labels,
    )


def view_from_args(args: argparse.Namespace) -> ViewState:
    """How the parsed options ask to look at the comparison."""
    from .view_state import ViewState

    metrics = [m.strip() for m in (getattr(args, "metrics", None) or "").split(",") if m.strip()]
    return ViewState(
        metrics=metrics, percent=not getattr(args, "absolute", False),
        filter_text=(getattr(args, "filter", None) or "").strip(),
        regex=bool(getattr(args, "regex", False)),
        changed_only=bool(getattr(args, "changed_only", False)),
        significant_only=bool(getattr(args, "significant_only", False)),
        threshold=float(getattr(args, "threshold", 0.0) or 0.0),
    )
