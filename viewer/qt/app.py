"""Entry point of the desktop app: ``profdiff [FILES...] [--screenshot OUT.png ...]``.

With ``--screenshot`` the same window is built offscreen (``QT_QPA_PLATFORM=offscreen``
when there is no display), the files are loaded synchronously, the tree is expanded and
the window is grabbed to a PNG: the README's pictures and the GUI smoke tests use it.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.gc_pause import gc_paused
from profdiff.viewer.bundled import resource
from profdiff.viewer.options import (
    auto_match_value,
    build_app_parser,
    exit_now,
    spec_from_args,
    view_from_args,
)


def build_parser() -> argparse.ArgumentParser:
    """The app's options: the shared ones (:mod:`viewer.options`) plus the window's."""
    return build_app_parser()


def _size(spec: str) -> tuple[int, int]:
    try:
        w, h = spec.lower().split("x")
        return max(200, int(w)), max(150, int(h))
    except ValueError:
        raise SystemExit(
            f"profdiff: error: --size expects WxH, e.g. 1600x900, not {spec!r}") from None


def _stylesheet() -> str:
    """The bundled ``profdiff.qss`` ('' when it is missing or unreadable)."""
    qss = resource("profdiff.qss")
    if qss is None:
        return ""
    try:
        return qss.read_text(encoding="utf-8")
    except OSError:
        return ""


def main(argv: Sequence[str] | None = None) -> int:
    """The app (``argv`` None: ``sys.argv``, and the process ends as soon as the window
    has closed, :func:`viewer.options.exit_now`) or one command line (a list)."""
    if argv is None:
        from profdiff.viewer.program_start import set_up_program

        set_up_program()
    code = _main(argv)
    if argv is None:
        exit_now(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(auto_match_value(list(sys.argv[1:] if argv is None else argv)))
    try:
        spec = spec_from_args(args, "flat")
        view = view_from_args(args)
    except ProfdiffError as e:
        parser.error(str(e))
    if args.expand is not None and args.expand not in ("hot", "delta") \
            and not args.expand.isdigit():
        parser.error(f"--expand expects a number, 'hot' or 'delta', not {args.expand!r}")
    has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                       or os.environ.get("QT_QPA_PLATFORM") or sys.platform != "linux")
    if args.screenshot and not has_display:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif not has_display:
        return _no_display(args)
    # the child reads while the X11 libraries are checked (an ``ldd`` run, ~15 ms)
    head = _head_start(spec)
    if not args.screenshot and (missing := _missing_xcb_libraries()):
        if head is not None:
            head.close()
        return _no_display(args, missing)
    with start_up():
        app = _application(readers=bool(args.files or args.base))
        from .main_window import MainWindow

        if args.screenshot:
            # reproducible pictures: never the user's saved geometry, metrics or colours
            from PySide6.QtCore import QSettings

            tmp = tempfile.NamedTemporaryFile(suffix=".ini", delete=False)
            tmp.close()
            win = MainWindow(settings=QSettings(tmp.name, QSettings.Format.IniFormat),
                             synchronous=True)
        else:
            win = MainWindow()
        win.head_start = head
        dress(app)
    if args.screenshot:
        return _screenshot(app, win, args, spec, view, tmp.name)
    open_live(win, args, spec, view)
    return int(app.exec())


HEAD_START_BYTES = 16 << 20
"""The smallest first file read in a child at start-up (:func:`_head_start`)."""


def _head_start(spec):
    """The command line's first file read in a forked child while Qt is imported and
    the window built (:mod:`viewer.head_start`).  None:

    - for a watched folder, groups or one file (nothing to read beside it);
    - for a first file under :data:`HEAD_START_BYTES` (read in ~0.1 s or less: the fork
      and the hand-over cost ~0.1 s of CPU on the other core for no measurable gain);
    - in a process with threads already running (a library or a test calling
      :func:`_main`): a fork copies only the calling thread, and a lock another thread
      held would stay held in the child."""
    if len(spec.files) < 2 or spec.grouped:
        return None
    try:
        if os.path.getsize(spec.files[0]) < HEAD_START_BYTES:
            return None
    except OSError:
        return None  # the window's own read says what is wrong with it
    from profdiff.viewer.head_start import HeadStart, only_thread

    return HeadStart.begin(spec, spec.files[0]) if only_thread() else None


@contextmanager
def start_up() -> Iterator[None]:
    """Import, create the QApplication and build the window with the cyclic garbage
    collector paused, then freeze what they made (:func:`gc.freeze`).

    Why: start-up makes ~10^5 objects that live as long as the process (modules,
    classes, Qt wrappers), and with the collector on ~200 collections walked them again
    and again: 55 ms of the 0.55 s before the first file is read (the 100 MB hs-ad pair,
    8 runs each way).  Frozen, later collections skip them; the few hundred start-up
    objects that are garbage are collected with the second comparison's
    (``main_window._settle_gc``).

    Frozen before the collector is back on: the first allocation after that would
    otherwise start a young collection over everything start-up made (one pass over
    ~10^5 objects, 22 ms), only to move them all to the permanent generation."""
    with gc_paused():
        yield
        gc.freeze()


def open_live(win, args, spec, view) -> None:
    """The window the user gets: open what the command line says, show it, and apply
    the options that need a loaded comparison when it is in (:func:`show_requested`,
    shared with ``--screenshot``)."""
    if args.colorblind:
        win.act_palette.setChecked(True)
    from .runs_panel import is_watch_folder, open_watch

    _apply_options(win, args)  # before opening, as --screenshot: --view is known then
    if len(args.files) == 1 and is_watch_folder(args.files[0]):
        open_watch(win, args.files[0])  # profdiff DIR: watch it, runs compare themselves
    else:
        win.open_spec(spec, view)
    win.show()


def _application(readers: bool = True):
    """The QApplication (created once) and named; it is styled once the window is built
    (:func:`dress`).  The Qt-free modules the window needs are imported first
    (:mod:`viewer.qt.qt_free_first`: faster before Qt), with the readers when files are
    to be opened."""
    from .qt_free_first import import_qt_free_modules

    import_qt_free_modules(readers)
    from PySide6.QtWidgets import QApplication

    from .qt_messages import pass_on_qt_messages

    pass_on_qt_messages()
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else "profdiff"])
    app.setOrganizationName("profdiff")
    app.setApplicationName("profdiff")
    app.setApplicationDisplayName("profdiff")
    return app


def dress(app) -> None:
    """Give the application its style sheet (``profdiff.qss``), once the window is built.

    Why after the window: with the sheet already set, every widget of the window was
    polished through Qt's style-sheet style as it was made and again as it was put in
    its layout, and building the window took 65-85 ms instead of 40; set once the window
    is built, the sheet re-polishes it in ~10 ms.  Widgets made later (format tabs,
    dialogs) get it as they are made, as before.
    """
    app.setStyleSheet(_stylesheet())


def open_app(request) -> int:
    """Run an :class:`viewer.options.OpenApp` request of a command (``watch``)."""
    if request.entry != "watch":
        print(f"profdiff: unknown app request {request.entry!r}", file=sys.stderr)
        return 2
    return run_watch(**request.kwargs)


def run_watch(folder: str, glob: str | None = None, settle: float | None = None,
              recursive: bool = True, timeout: float | None = None, lenient: bool = False,
              reader_options: dict | None = None) -> int:
    """``profdiff watch DIR``: the window in watch mode (runs list + views), reading the
    runs with the command line's reading options (``--lenient``, ``--event``, ...)."""
    with start_up():
        app = _application()
        from .main_window import MainWindow
        from .runs_panel import open_watch

        win = MainWindow()
        win.spec = win.spec.replace(lenient=lenient,
                                    reader_options=tuple(sorted((reader_options or {}).items())))
        dress(app)
    options = {"settle": settle} if settle is not None else {}
    open_watch(win, folder, glob=glob, recursive=recursive, **options)
    win.show()
    if timeout is not None:
        from PySide6.QtCore import QTimer

        QTimer.singleShot(int(timeout * 1000), win.close)
    try:
        return int(app.exec() or 0)
    except KeyboardInterrupt:
        return 0


def _apply_options(win, args) -> None:
    """Options that act on a loaded comparison (the GUI applies them once it is in);
    called before the files are opened, so that the loader knows the tab shown first
    (``first_view``: what it aligns ahead)."""
    win.first_view = args.view
    def go(_cmp=None) -> None:
        if args.sig_column:
            win.act_sig.setChecked(True)
        if args.show_suggestions:
            win.suggestions_dock.show()
        if args.rules_editor:
            win.open_rules_editor()
        problem = show_requested(win, args)
        if problem:
            win.message_bar.show_message(problem, "warning")
        if args.show_suggestions and win.suggestions.suggestions:
            win.suggestions.select(0)  # reveals the pair in the diff tree

    if win.comparison is not None:
        go()
    elif args.files or args.base:
        def once(cmp) -> None:
            win.comparisonChanged.disconnect(once)
            go(cmp)

        win.comparisonChanged.connect(once)


def show_requested(win, args) -> str:
    """``--view`` and ``--expand`` on a loaded window: the one code path of the live
    window and ``--screenshot`` (a picture that shows another state than the window the
    user opens would be a wrong picture).  Without ``--expand`` the window stays as it
    opened (the diff tree open along the path to the top culprit, that row current).
    Returns "" or why an option cannot be honoured."""
    if win.comparison is None:
        return ""
    if args.view is not None and args.view not in (available := win.available_views()):
        return (f"--view {args.view}: this comparison has no such view; views: "
                f"{', '.join(available) or 'none'}")
    expand = args.expand is not None and (args.expand in ("hot", "delta")
                                          or str(args.expand).isdigit())
    if expand:  # first: the trees' opening expansion, replaced, is then never computed
        win.collapse_all()
    if args.view is not None:
        win.show_view(args.view)
    if args.expand is None:
        return ""
    if not expand:
        return f"--expand expects a number, 'hot' or 'delta', not {args.expand!r}"
    from .views import FIRST_LOOK_ROWS

    if args.expand in ("hot", "delta"):
        win.expand_to_depth(2, max_rows=FIRST_LOOK_ROWS)
        win.expand_hottest("value" if args.expand == "hot" else "delta")
    else:
        win.expand_to_depth(int(args.expand))
        for v in win.tree_views():
            v.fit_name_column()
    return ""


def _missing_xcb_libraries() -> list[str]:
    """System libraries Qt's X11 plugin needs but cannot find (Qt would abort with a vague
    'could not load the Qt platform plugin "xcb"'); empty when fine or not on X11."""
    if sys.platform != "linux" or not os.environ.get("DISPLAY") or os.environ.get(
            "WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM"):
        return []
    try:
        # found, not imported: importing PySide6 here (~70 ms) would also put its import
        # hook in front of every Qt-free module imported after it (qt_free_first)
        found = importlib.util.find_spec("PySide6")
        where = found.submodule_search_locations if found is not None else None
        if not where:
            return []
        plugin = Path(list(where)[0]) / "Qt/plugins/platforms/libqxcb.so"
        if not plugin.exists():
            return []
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=10)
    except (OSError, ValueError, ImportError, subprocess.SubprocessError):
        return []
    missing = [line.split()[0] for line in out.stdout.splitlines() if "not found" in line]
    if not _loads("libxcb-cursor.so.0"):  # Qt >= 6.5 loads it at run time: ldd omits it
        missing.append("libxcb-cursor.so.0")
    return missing


def _loads(soname: str) -> bool:
    """Whether the dynamic linker loads ``soname`` (as Qt does, by that name; asking
    ``ctypes.util.find_library`` ran ``ldconfig -p``, ~10 ms, for the same answer)."""
    import ctypes

    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def _debian_package(soname: str) -> str:
    """libxcb-icccm.so.4 -> libxcb-icccm4, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0."""
    base, _, ver = soname.partition(".so.")
    return f"{base}{'-' if base[-1:].isdigit() else ''}{ver.split('.')[0]}"


def _no_display(args, missing: list[str] | None = None) -> int:
    """No screen to open a window on (a server, CI, ssh without X), or Qt's X11 plugin
    cannot load: say so, and show the same comparison in the terminal instead of letting
    Qt abort."""
    if missing:
        pkgs = " ".join(sorted({_debian_package(m) for m in missing}))
        print(f"profdiff: Qt cannot open a window: missing system libraries "
              f"{', '.join(missing)}.\n  Debian/Ubuntu: sudo apt-get install {pkgs}\n"
              "Showing the comparison in the terminal instead.", file=sys.stderr)
    else:
        print("profdiff: no display found (DISPLAY/WAYLAND_DISPLAY unset); showing the "
              "comparison in the terminal. Use --screenshot OUT.png to render the window to a "
              "file.", file=sys.stderr)
    from profdiff.viewer.diff_cli import print_for_app

    return print_for_app(args)


def prepare_screenshot(app, win, args, spec, view) -> int:
    """Open ``spec`` in ``win`` as the live window does, then settle it; returns 0, or 2
    when nothing could be shown or ``--view`` names a view the comparison lacks."""
    w, h = _size(args.size)
    win.resize(w, h)
    if args.colorblind:
        win.act_palette.setChecked(True)
    if args.files or args.base:  # as open_live: applied the moment the comparison is in
        _apply_options(win, args)
    win.open_spec(spec, view)
    if (args.files or args.base) and not win.runs:
        print("profdiff: error: " + "; ".join(win.message_bar.messages), file=sys.stderr)
        return 2
    if args.view is not None and win.comparison is not None \
            and args.view not in win.available_views():
        print(f"profdiff: error: --view {args.view}: this comparison has no such view; "
              f"views: {', '.join(win.available_views()) or 'none'}", file=sys.stderr)
        return 2
    if not (args.files or args.base):
        _apply_options(win, args)
    # laid out and shown (show events, deferred tab work) but not painted until grab():
    # the picture is painted once, as the window the user opens is
    win.setUpdatesEnabled(False)
    win.show()
    app.processEvents()
    if win.comparison is not None:
        win.wait_for_noise()
    for _ in range(3):
        app.processEvents()
    if win.comparison is not None and args.show_suggestions and win.suggestions.suggestions:
        win.suggestions.select(0)  # found after the events above: as _apply_options does
    for _ in range(3):
        app.processEvents()
    return 0


PNG_QUALITY = 80
"""Qt's PNG quality (zlib effort, 100 = none): 80 writes a 1600x900 window in 27 ms
instead of the default's 40 ms, and its file is no bigger (197 kB against 203 kB)."""


def _screenshot(app, win, args, spec, view, settings_path: str) -> int:
    """``--screenshot``: the window as it opens, grabbed to a PNG.  An input that failed
    to read is said on stderr and makes the exit code 2 (the picture, with its error bar,
    is still written)."""
    rc = prepare_screenshot(app, win, args, spec, view)
    errors = list(win.load_errors)
    out = Path(args.screenshot)
    ok = False
    if rc == 0:
        out.parent.mkdir(parents=True, exist_ok=True)
        win.setUpdatesEnabled(True)
        ok = win.grab().save(str(out), "PNG", PNG_QUALITY)
    win.close()
    try:
        os.unlink(settings_path)
    except OSError:
        pass
    if rc:
        return rc
    if not ok:
        print(f"profdiff: error: cannot write {out}", file=sys.stderr)
        return 2
    print(str(out))
    for msg in errors:
        print(f"profdiff: error: {msg}", file=sys.stderr)
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
