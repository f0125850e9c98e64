"""``profdiff watch DIR``: follow a folder as profiles land (a :mod:`viewer.cli` command).

    profdiff watch DIR                     the desktop app in watch mode (runs list + views)
    profdiff watch DIR --no-gui            one line per landed run: its key totals and its
                                           top changes against the previous run of its format
    profdiff watch DIR --json              the same as JSON lines (one object per event)
    profdiff watch DIR --once              handle the files already there, then exit (CI)

``--baseline FILE`` compares every run with FILE instead of the previous run;
``--timeout S`` stops after S seconds; Ctrl+C stops cleanly (exit code 0).
"""

from __future__ import annotations

import argparse
import json
import math
import queue
import sys
import time
from pathlib import Path
from typing import TextIO

from profdiff.parsers.errors import ProfdiffError
from profdiff.parsers.model import Profile, Unit

from .memory_settings import give_back_freed
from .options import (
    OpenApp,
    UsageError,
    add_matching_options,
    add_reading_options,
    reader_options,
    spec_from_args,
)
from .runs import KEY_TOTALS, RunsTable, top_changes
from .session import Session, load_run
from .units import format_value, human_bytes
from .watch import DEFAULT_SETTLE, FolderWatcher, Landed

SUMMARY_TOTALS = ("total_time_s", "total_alloc_bytes", "bytes_allocated", "max_residency_bytes",
                  "productivity_pct", "peak_bytes")
"""Totals printed on a run's line (the first three present)."""


DESCRIPTION = ("Watch DIR (recursively) for new or rewritten profiles. Each file is read "
               "once its size and mtime have settled and it is complete; truncated files are "
               "marked and re-read when they change. Without --no-gui/--json the desktop app "
               "opens in watch mode.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", metavar="DIR", help="folder to watch")
    p.add_argument("--glob", metavar="PATTERN",
                   help="only files whose name (or path below DIR) matches, e.g. '*.prof'")
    p.add_argument("--no-recursive", dest="recursive", action="store_false",
                   help="do not look into sub-folders")
    p.add_argument("--no-gui", action="store_true",
                   help="print one line per landed run instead of opening the app")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per event (JSON lines; implies --no-gui)")
    p.add_argument("--once", action="store_true",
                   help="handle the files already in DIR, then exit")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="stop after SECONDS (exit code 0)")
    p.add_argument("--settle", type=float, default=DEFAULT_SETTLE, metavar="SECONDS",
                   help=f"how long a file must stay unchanged before it is read "
                   f"(default {DEFAULT_SETTLE})")
    p.add_argument("--top", type=int, default=3, metavar="N",
                   help="changes named per run (default 3)")
    add_reading_options(p)
    add_matching_options(p, baseline=False)
    p.add_argument("--baseline", metavar="FILE", default=None,
                   help="compare every run with FILE (default: the previous run of its format)")


def run(args: argparse.Namespace) -> int | OpenApp:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"{args.folder}: not a folder (watch needs a directory)")
    if args.timeout is not None and args.timeout < 0:
        raise UsageError("--timeout must be >= 0")
    if args.no_gui or args.json or args.once:
        return watch_headless(args)
    # the launcher (viewer.cli) opens the desktop app: Qt-free code never imports viewer.qt
    return OpenApp("watch", {"folder": str(folder), "glob": args.glob, "settle": args.settle,
                             "recursive": args.recursive, "timeout": args.timeout,
                             "lenient": args.lenient, "reader_options": reader_options(args)})


# ------------------------------------------------------------------------------------------
# headless
# ------------------------------------------------------------------------------------------
class _Printer:
    """Turns landed files into lines; keeps the previous complete run of each format."""

    def __init__(self, args: argparse.Namespace, folder: Path, out: TextIO) -> None:
        self.args = args
        self.out = out
        self.table = RunsTable(folder, keep_profiles=8)
        ns = argparse.Namespace(**vars(args))
        ns.baseline, ns.files = 0, [str(folder)]  # rules: .profdiff.toml in DIR
        self.spec = spec_from_args(ns, "flat")
        self.baseline: Profile | None = None
        self.baseline_label = ""
        if args.baseline:
            self.baseline = load_run(self.spec, args.baseline)
            self.baseline_label = str(args.baseline)
        # format -> the last two complete runs as (run id, profile, label): a file that
        # grew replaces its own run, and must be compared with the run before it
        self.last: dict[str, list[tuple[int, Profile, str]]] = {}

    def landed(self, landed: Landed) -> None:
        run, action = self.table.add(landed)
        label = self.table.label(run) if run.path == landed.path else _rel(landed.path,
                                                                           self.table.folder)
        p = landed.profile
        ref: tuple[Profile, str] | None = None
        if p is not None and not landed.incomplete:
            if self.baseline is not None:
                ref = (self.baseline, self.baseline_label)
            else:
                older = [x for x in self.last.get(landed.format, []) if x[0] != run.id]
                ref = (older[-1][1], older[-1][2]) if older else None
        changes: list[str] = []
        total_changes: dict[str, dict] = {}
        note = ""
        if ref is not None and p is not None:
            if ref[0].format != p.format:
                note = f"baseline is {ref[0].format}, not comparable"
            else:
                try:
                    cmp = Session(self.spec, [ref[0], p]).main
                    changes = top_changes(cmp, self.args.top)
                    total_changes = _total_changes(ref[0], p)
                except ProfdiffError as e:
                    note = f"cannot compare: {e}"
        if p is not None and not landed.incomplete and landed.error is None:
            hist = [x for x in self.last.get(landed.format, []) if x[0] != run.id]
            self.last[landed.format] = [*hist[-1:], (run.id, p, label)]
        if self.args.json:
            doc = {
                "event": "run", "seq": landed.seq, "run": run.id, "action": action,
                "time": _iso(landed.mtime), "path": landed.path, "file": label,
                "format": landed.format,
                "status": "error" if landed.error else ("writing" if landed.incomplete
                                                        else "ok"),
                "incomplete": landed.incomplete, "reason": landed.reason or None,
                "error": landed.error, "initial": landed.initial,
                "totals": _json_totals(p.totals) if p is not None and not landed.incomplete
                else {},
                "compared_with": ref[1] if ref is not None else None,
                "top_changes": changes, "total_changes": total_changes,
            }
            if note:
                doc["note"] = note
            self._emit(json.dumps(doc, ensure_ascii=False))
            return
        head = f"{time.strftime('%H:%M:%S', time.localtime(landed.mtime))}  {label}  " \
               f"[{landed.format}]"
        if landed.error:
            self._emit(f"{head}  ERROR: {landed.error} (re-read when it changes)")
            return
        line = head
        if landed.incomplete:  # no numbers: they are a part of the run, not the run
            self._emit(f"{line}  WRITING: {landed.reason or 'file cut short'} (not compared; "
                       "re-read when it changes)")
            return
        summary = _summary(p) if p is not None else ""
        if summary:
            line += f"  {summary}"
        if note:
            line += f"  ({note})"
        elif ref is None:
            line += "  (first run)"
        else:
            line += f"  vs {ref[1]}: " + ("; ".join(changes) if changes else "no change")
        self._emit(line)

    def removed(self, path: str) -> None:
        self.table.remove_path(path)
        label = _rel(path, self.table.folder)
        if self.args.json:
            self._emit(json.dumps({"event": "removed", "path": path, "file": label}))
        else:
            self._emit(f"{time.strftime('%H:%M:%S')}  removed {label}")

    def _emit(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def _rel(path: str, folder: str | None) -> str:
    if folder:
        try:
            return Path(path).relative_to(folder).as_posix()
        except ValueError:
            pass
    return Path(path).name


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


def _json_totals(totals) -> dict:
    return {k: (float(v) if math.isfinite(float(v)) else None) for k, v in totals.items()}


def _summary(p: Profile) -> str:
    parts = []
    for k in SUMMARY_TOTALS:
        v = p.totals.get(k)
        if v is None:
            continue
        m = p.total_metrics.get(k)
        unit = m.unit if m else (Unit.BYTES if k.endswith("_bytes") else Unit.COUNT)
        txt = human_bytes(float(v)) if unit is Unit.BYTES else format_value(float(v), unit)
        parts.append(f"{k}={txt}")
        if len(parts) == 3:
            break
    return " ".join(parts)


def _total_changes(base: Profile, new: Profile) -> dict[str, dict]:
    out = {}
    for k in KEY_TOTALS:
        b, v = base.totals.get(k), new.totals.get(k)
        if b is None or v is None:
            continue
        b, v = float(b), float(v)
        out[k] = {"base": b, "new": v, "delta": v - b,
                  "rel": ((v - b) / abs(b)) if b else None}
    return out


def watch_headless(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print one line (or JSON object) per landed run until --once/--timeout/Ctrl+C."""
    out = out or sys.stdout
    folder = Path(args.folder).resolve()
    printer = _Printer(args, folder, out)
    events: queue.Queue = queue.Queue()
    watcher = FolderWatcher(
        folder, glob=args.glob, recursive=args.recursive, settle=args.settle,
        on_landed=lambda x: events.put(("landed", x)),
        on_removed=lambda p: events.put(("removed", p)),
        lenient=printer.spec.lenient, load_options=dict(printer.spec.reader_options),
        observe=not args.once,
    )
    deadline = time.monotonic() + args.timeout if args.timeout is not None else None
    if not args.json:
        what = f"{folder}" + (f" ({args.glob})" if args.glob else "")
        print(f"profdiff: {'reading' if args.once else 'watching'} {what}"
              + ("" if args.once else " - Ctrl+C to stop"), file=sys.stderr, flush=True)
    try:
        watcher.start()
        while True:
            wait = 0.1
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                kind, x = events.get(timeout=wait)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                if args.once and watcher.idle() and events.empty():
                    break
                continue
            if kind == "landed":
                printer.landed(x)
            else:
                printer.removed(x)
            if events.empty():  # idle: what this run's comparison freed goes back
                give_back_freed()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
    return 0
