"""Watch a folder for profiles as they land (Qt-free; used by ``profdiff watch`` and the app).

A :class:`FolderWatcher` runs a real ``watchdog`` observer (recursive, optional glob) and
one worker thread.  File-system events only mark a path *pending*; the worker decides when
a pending file is ready:

* **debounce** - the file's ``(size, mtime_ns)`` must stay unchanged for ``settle``
  seconds, so a profile written in several chunks (GHC writes ``.prof`` at exit, ``-s``
  logs line by line, ``.hp`` grows during the run) is read once, after the last chunk;
* **completeness** - readers mark a truncated file ``Profile.incomplete`` (a ``.prof``
  whose tree does not account for its header totals, a ``-s`` summary without its
  ``Productivity`` line, a ``.hp`` without a final ``END_SAMPLE``, a cut gzip stream).
  Such a version is reported as *writing* (``Landed.writing``): listed, never compared,
  and re-read as soon as the file changes again; a version already read is never re-read.
  A file whose mtime is younger than ``settle`` is not read either (an event may have
  been missed while it was written);
* **growth** - each landed version carries the first :data:`HEAD_SIZE` bytes it had, so
  the runs table can tell a file that grew (``.hp`` during a run, an appended perf
  script: the old bytes are still its start) from a new run overwriting the old one.

The start-up scan happens in the worker too (never in the caller's thread): existing files
are listed, ordered by mtime (oldest first, so "newest vs previous" holds after the scan),
sniffed with :func:`parsers.detect.detect` (64 KiB head, cheap) and loaded one by one.
Events that arrive meanwhile are served between two loads, so thousands of old files do
not block a new one for long.  Files no reader recognises are skipped quietly (a folder
holds stdout logs and sources, too) until they change.

Callbacks run **in the worker thread**; the Qt side (:mod:`viewer.qt.watch_bridge`)
re-emits them as signals, the CLI passes them through a queue.
"""

from __future__ import annotations

import fnmatch
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parsers.detect import detect
from parsers.errors import ProfdiffError, UnknownFormatError
from parsers.model import Profile

DEFAULT_SETTLE = 1.0
"""Seconds a file's size and mtime must stay unchanged before it is read."""

IGNORED_SUFFIXES = (".swp", ".swx", ".tmp", ".part", ".crdownload", "~")
"""Editor and downloader temporaries: their final rename lands the real file."""

Signature = tuple[int, int]  # (size, mtime_ns)

HEAD_SIZE = 4096
"""Bytes of each version kept to recognise a file that grew rather than was rewritten."""


@dataclass(frozen=True)
class Landed:
    """One version of one file, read after it settled.

    ``profile`` is None when reading failed (``error`` says why; the file is retried when
    it changes).  ``incomplete`` mirrors ``Profile.incomplete`` (retried on change too).
    ``initial`` marks files found by the start-up scan rather than by an event.
    """

    path: str
    format: str
    mtime: float
    size: int
    profile: Profile | None
    incomplete: bool = False
    reason: str = ""
    error: str | None = None
    initial: bool = False
    seq: int = 0
    head: bytes = b""

    @property
    def ok(self) -> bool:
        return self.profile is not None

    @property
    def writing(self) -> bool:
        """Read but incomplete: still being written (or cut for good); never compared."""
        return self.profile is not None and self.incomplete

    def grew_from(self, old: Landed) -> bool:
        """This version is ``old`` with bytes appended (same path, old bytes as start)."""
        if self.path != old.path or self.size < old.size or not old.head:
            return False
        n = min(len(old.head), old.size)
        return self.head[:n] == old.head[:n] and (self.size, self.mtime) != (old.size,
                                                                             old.mtime)

    @property
    def signature(self) -> Signature:
        return (self.size, int(self.mtime * 1e9))


@dataclass
class _Pending:
    sig: Signature | None
    changed_at: float  # monotonic time the signature last changed
    initial: bool


def _signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return (st.st_size, st.st_mtime_ns)


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(HEAD_SIZE)
    except OSError:
        return b""


class FolderWatcher:
    """Watch ``folder`` and report every new or rewritten profile once it is complete.

    Args:
        folder: the folder to watch (recursively unless ``recursive=False``).
        glob: optional pattern; a file qualifies when its name or its path relative to
            ``folder`` matches (``*.prof``, ``run*/ad.stats.txt``).
        settle: debounce interval in seconds (short in tests).
        poll: how often pending files are re-checked, in seconds.
        on_landed: ``f(Landed)`` for every version read (complete, incomplete or failed).
        on_removed: ``f(path)`` when a file that was reported disappears (deleted or
            renamed away; a rename also reports the new name as landed).
        on_scan_done: ``f(n_files)`` once every file found at start-up was handled.
        loader: ``f(path, format=...) -> Profile`` (default :func:`parsers.load` with
            ``lenient`` and ``load_options``).
        scan: read the files already present at start.
        observe: start the watchdog observer (False for a one-shot scan, ``--once``).
    """

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        glob: str | None = None,
        recursive: bool = True,
        settle: float = DEFAULT_SETTLE,
        poll: float | None = None,
        on_landed: Callable[[Landed], None] | None = None,
        on_removed: Callable[[str], None] | None = None,
        on_scan_done: Callable[[int], None] | None = None,
        loader: Callable[..., Profile] | None = None,
        lenient: bool = False,
        load_options: dict[str, Any] | None = None,
        scan: bool = True,
        observe: bool = True,
    ) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise ProfdiffError(f"{folder}: not a folder")
        self.glob = glob or None
        self.recursive = recursive
        self.settle = max(0.0, float(settle))
        self.poll = float(poll) if poll is not None else max(0.02, min(0.25, self.settle / 4))
        self.on_landed = on_landed
        self.on_removed = on_removed
        self.on_scan_done = on_scan_done
        self._loader = loader
        self._lenient = lenient
        self._load_options = dict(load_options or {})
        self._scan = scan
        self._observe = observe

        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pending: dict[str, _Pending] = {}
        self._scan_dirs: list[Path] = []  # folders to list (start-up, created or moved-in)
        self._removed: list[str] = []
        self._done: dict[str, Signature] = {}  # version of each file already handled
        self._reported: set[str] = set()  # files reported as landed (for on_removed)
        self._scan_left: int | None = None  # initial files not handled yet (None: not listed)
        self._scan_reported = False
        self._seq = 0
        self._observer = None
        self._thread: threading.Thread | None = None
        self._busy = False
        self.errors: list[str] = []  # callback failures (never raised into the worker)

    # ----- lifecycle ----------------------------------------------------------------------
    def start(self) -> FolderWatcher:
        if self._thread is not None:
            return self
        if self._observe:
            from watchdog.observers import Observer

            self._observer = Observer()
            self._observer.daemon = True
            self._observer.schedule(_Handler(self), str(self.folder), recursive=self.recursive)
            self._observer.start()
        if self._scan:
            with self._lock:
                self._scan_dirs.append(self.folder)
        else:
            self._scan_left = 0
        self._thread = threading.Thread(target=self._run, name="profdiff-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the observer and the worker (a load in progress finishes first)."""
        self._stop.set()
        self._wake.set()
        obs, self._observer = self._observer, None
        if obs is not None:
            try:
                obs.stop()
                obs.join(timeout)
            except RuntimeError:  # never started
                pass
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def __enter__(self) -> FolderWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def idle(self) -> bool:
        """True when the start-up scan is done and nothing is pending or being read."""
        with self._lock:
            return (self._scan_left == 0 and not self._pending and not self._scan_dirs
                    and not self._removed and not self._busy)

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.idle():
                return True
            time.sleep(min(self.poll, 0.05))
        return self.idle()

    # ----- filtering ----------------------------------------------------------------------
    def wants(self, path: str) -> bool:
        name = os.path.basename(path)
        if not name or name.startswith(".") or name.endswith(IGNORED_SUFFIXES):
            return False
        if self.glob is None:
            return True
        try:
            rel = Path(path).resolve().relative_to(self.folder).as_posix()
        except ValueError:
            rel = name
        return fnmatch.fnmatch(name, self.glob) or fnmatch.fnmatch(rel, self.glob)

    # ----- event intake (observer thread) -------------------------------------------------
    def touch(self, path: str) -> None:
        """Mark ``path`` as changed (called by the observer; usable to force a re-check)."""
        if not self.wants(path):
            return
        with self._lock:
            old = self._pending.get(path)
            self._pending[path] = _Pending(None, time.monotonic(), bool(old and old.initial))
        self._wake.set()

    def gone(self, path: str) -> None:
        with self._lock:
            self._pending.pop(path, None)
            under = path.rstrip(os.sep) + os.sep
            for p in [p for p in self._pending if p.startswith(under)]:
                del self._pending[p]
            self._removed.append(path)
        self._wake.set()

    def rescan(self, folder: str) -> None:
        with self._lock:
            self._scan_dirs.append(Path(folder))
        self._wake.set()

    # ----- worker ---------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self._handle_removed()
                self._handle_scans()
                self._handle_pending()
            except Exception as e:  # noqa: BLE001 - a watcher thread must survive anything
                self.errors.append(f"{type(e).__name__}: {e}")

    def _handle_removed(self) -> None:
        with self._lock:
            removed, self._removed = self._removed, []
        for path in removed:
            under = path.rstrip(os.sep) + os.sep
            hits = [p for p in self._reported if p == path or p.startswith(under)]
            for p in sorted(hits):
                self._reported.discard(p)
                self._done.pop(p, None)
                self._call(self.on_removed, p)
            for p in [p for p in self._done if p == path or p.startswith(under)]:
                del self._done[p]

    def _handle_scans(self) -> None:
        with self._lock:
            dirs, self._scan_dirs = self._scan_dirs, []
        if not dirs:
            return
        found: list[tuple[int, str]] = []
        for d in dirs:
            found += self._list(d)
        found.sort()
        now = time.monotonic()
        wall = time.time()
        first = self._scan_left is None
        added = 0
        with self._lock:
            for mtime_ns, path in found:
                if path in self._pending:
                    continue
                age = wall - mtime_ns / 1e9
                # Old files are settled already; fresh ones wait like any event would.
                changed_at = now - self.settle if age >= self.settle else now
                self._pending[path] = _Pending(_signature(path), changed_at, first)
                added += 1
            if first:
                self._scan_left = added
        if first:
            self._count_initial(_Pending(None, now, False))  # an empty folder is done at once

    def _list(self, folder: Path) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        if self.recursive:
            walker = os.walk(folder)
        else:
            try:
                walker = iter([(str(folder), [], os.listdir(folder))])
            except OSError:
                return out
        for root, dirnames, files in walker:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in files:
                p = os.path.join(root, f)
                if not self.wants(p):
                    continue
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out.append((st.st_mtime_ns, p))
        return out

    def _handle_pending(self) -> None:
        now = time.monotonic()
        ready: list[tuple[int, str, _Pending]] = []
        with self._lock:
            items = list(self._pending.items())
        for path, pend in items:
            sig = _signature(path)
            if sig is None:  # vanished before it settled
                self._drop(path, pend)
                continue
            if sig != pend.sig:
                with self._lock:
                    if self._pending.get(path) is pend:
                        pend.sig = sig
                        pend.changed_at = now
                continue
            if now - pend.changed_at >= self.settle:
                ready.append((sig[1], path, pend))
        ready.sort()
        for _mtime, path, pend in ready:
            if self._stop.is_set():
                return
            with self._lock:
                if self._pending.get(path) is not pend:
                    continue  # changed again meanwhile: wait for it to settle anew
                self._busy = True
            try:
                self._process(path, pend)
            finally:
                with self._lock:
                    if self._pending.get(path) is pend:
                        del self._pending[path]
                    self._busy = False
                self._count_initial(pend)
            # serve new events between two loads of a long backlog
            if self._wake.is_set():
                self._handle_removed()

    def _drop(self, path: str, pend: _Pending) -> None:
        with self._lock:
            if self._pending.get(path) is pend:
                del self._pending[path]
        self._count_initial(pend)

    def _count_initial(self, pend: _Pending) -> None:
        report = None
        with self._lock:
            if pend.initial and self._scan_left:
                self._scan_left -= 1
            if self._scan_left == 0 and not self._scan_reported and not any(
                    p.initial for p in self._pending.values()):
                self._scan_reported = True
                report = self._seq
        if report is not None:
            self._call(self.on_scan_done, report)

    def _process(self, path: str, pend: _Pending) -> None:
        sig = pend.sig
        if sig is None or self._done.get(path) == sig:
            return  # this very version was handled already (duplicate events)
        if time.time() - sig[1] / 1e9 < self.settle:
            self.touch(path)  # modified within the settle interval: not settled yet
            return
        try:
            mod = detect(path)
        except UnknownFormatError:
            self._done[path] = sig  # not a profile (yet): look again when it changes
            return
        except (ProfdiffError, OSError):
            return  # vanished or unreadable right now; a later event retries
        except Exception as e:  # noqa: BLE001 - a broken sniffer: report, retry on change
            self._finish(path, pend, sig, "unknown", None,
                         f"{path}: cannot detect the format: {type(e).__name__}: {e}")
            return
        if getattr(mod, "ACCEPTS_DIRECTORY", False) and os.path.isdir(path):
            return
        profile: Profile | None = None
        error: str | None = None
        head = _head(path)
        try:
            profile = self._load(path, mod.FORMAT)
        except ProfdiffError as e:
            error = str(e)
        except OSError as e:
            if not os.path.exists(path):
                return
            error = f"{path}: cannot read ({e.strerror or e})"
        except Exception as e:  # noqa: BLE001 - a reader bug must not kill the watcher
            error = f"{path}: unexpected error: {type(e).__name__}: {e}"
        after = _signature(path)
        if after != sig:
            # Written to while we read it: what we read is a mix; the new event re-queues it.
            if after is not None:
                self.touch(path)
            return
        self._finish(path, pend, sig, mod.FORMAT, profile, error, head)

    def _finish(self, path: str, pend: _Pending, sig: Signature, fmt: str,
                profile: Profile | None, error: str | None, head: bytes = b"") -> None:
        self._done[path] = sig
        self._seq += 1
        landed = Landed(
            path=path, format=fmt, mtime=sig[1] / 1e9, size=sig[0], profile=profile,
            incomplete=bool(profile is not None and profile.incomplete),
            reason=(profile.incomplete_reason if profile is not None else "") or "",
            error=error, initial=pend.initial, seq=self._seq, head=head,
        )
        self._reported.add(path)
        self._call(self.on_landed, landed)

    def _load(self, path: str, fmt: str) -> Profile:
        if self._loader is not None:
            return self._loader(path, format=fmt)
        from parsers import load

        return load(path, format=fmt, lenient=self._lenient, **self._load_options)

    def _call(self, cb: Callable | None, *args: object) -> None:
        if cb is None:
            return
        try:
            cb(*args)
        except Exception as e:  # noqa: BLE001 - a listener's bug must not stop watching
            self.errors.append(f"callback {getattr(cb, '__name__', cb)}: "
                               f"{type(e).__name__}: {e}")


class _Handler:
    """watchdog event handler: turns events into pending paths (no reading here)."""

    def __init__(self, w: FolderWatcher) -> None:
        self.w = w

    def dispatch(self, event: Any) -> None:
        kind = event.event_type
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        if kind in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if kind == "created":
                self.w.rescan(src)
            elif kind == "deleted":
                self.w.gone(src)
            elif kind == "moved":
                self.w.gone(src)
                if dest and self._inside(dest):
                    self.w.rescan(dest)
            return
        if kind == "deleted":
            self.w.gone(src)
        elif kind == "moved":
            self.w.gone(src)
            if dest and self._inside(dest):
                self.w.touch(dest)
        else:  # created, modified, closed
            self.w.touch(src)

    def _inside(self, p: str) -> bool:
        try:
            Path(p).resolve().relative_to(self.w.folder)
            return True
        except ValueError:
            return False
