"""The command line's first file read in a forked child while the window is built.

Why: the desktop app opening ``profdiff A B`` spends ~0.4 s importing Qt and its own
modules and building the window before its loader starts; that start-up runs on one
core and holds the interpreter's lock, so a reading thread would only share that lock.
A child forked before Qt is imported has a lock of its own and the idle core: it reads
the first file (on one core, leaving the other to the start-up) while the window is
built, and hands the profile over through a memfd (pickle protocol 5: its arrays are
mapped, not copied) to the window's loader, which meanwhile reads the other files.

The hand-over is an optimisation only.  The loader adopts the child's profile when it
reads that file with the same reading options (:meth:`HeadStart.slot_of`); anything
else (another spec, a failed or killed child, a platform without ``fork`` or
``memfd_create``) and it reads the file itself, as it always did, so every error is
reported by the window's own read.
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import signal
import struct
import threading
from collections.abc import Callable, Sequence

from profdiff.parsers.model import Profile

from .session import Cancelled, SessionSpec, Slot, load_run

_HEADER = struct.Struct("<I")
_PROGRESS_STEP = 0.02  # progress sent when it moved this much (each one wakes the parent)


class HeadStart:
    """A child process reading ``path`` with ``spec``'s reading options."""

    def __init__(self, spec: SessionSpec, path: str, pid: int, pipe: int,
                 memfd: int) -> None:
        self.spec = spec
        self.path = path
        self.pid = pid
        self.pipe = pipe
        self.memfd = memfd
        self.lock = threading.Lock()
        self.closed = False

    @classmethod
    def begin(cls, spec: SessionSpec, path: str) -> HeadStart | None:
        """Fork the child (None where this platform cannot, or the fork failed)."""
        if not (hasattr(os, "fork") and hasattr(os, "memfd_create")):
            return None
        try:
            memfd = os.memfd_create("profdiff-head-start", getattr(os, "MFD_CLOEXEC", 0))
            r, w = os.pipe()
        except OSError:
            return None
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            for fd in (memfd, r, w):
                os.close(fd)
            return None
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            _child(spec, path, parent, r, w, memfd)  # never returns
        os.close(w)
        return cls(spec, path, pid, r, memfd)

    def slot_of(self, spec: SessionSpec, slots: Sequence[Slot]) -> int | None:
        """The index of the slot this child reads, when the load reads it with the same
        options (None: it does not)."""
        if self.closed or _reading_key(spec) != _reading_key(self.spec):
            return None
        for i, s in enumerate(slots):
            if s.path == self.path and s.previous is None:
                return i
        return None

    def adopt(self, progress: Callable[[float], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> Profile | None:
        """Wait for the child's profile (None: it failed or died; the caller reads the
        file itself).  ``progress`` gets the child's 0..1; ``cancelled()`` true kills
        the child and raises :class:`Cancelled`."""
        with self.lock:
            if self.closed:
                return None
            try:
                return self._receive(progress, cancelled)
            finally:
                self.close()

    def close(self) -> None:
        """Kill the child if it still runs, close the descriptors, and reap it (in a
        thread of its own: a child ending by itself unmaps its memory for ~20 ms, which
        nobody needs to wait for)."""
        if self.closed:
            return
        self.closed = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        threading.Thread(target=_reap, args=(self.pid,), name="profdiff-reap",
                         daemon=True).start()
        for fd in (self.pipe, self.memfd):
            try:
                os.close(fd)
            except OSError:
                pass

    def _receive(self, progress, cancelled) -> Profile | None:
        messages = _Messages(self.pipe)
        while True:
            if cancelled is not None and cancelled():
                raise Cancelled()
            msg = messages.next(timeout=0.1)
            if msg is None:
                continue
            if msg == ():
                return None  # the child died before its result
            kind, *rest = msg
            if kind == "progress":
                if progress is not None:
                    progress(rest[0])
            elif kind == "done":
                got = _load(self.memfd, *rest)
                return got if isinstance(got, Profile) else None
            else:
                return None


class _Messages:
    """Length-prefixed pickles read from the child's pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.poll = select.poll()  # not select(): no limit on the descriptor's number
        self.poll.register(fd, select.POLLIN)

    def next(self, timeout: float):
        """The next message, None when none came within ``timeout``, () at end of file."""
        while True:
            got = self._take()
            if got is not None:
                return got
            if not self.poll.poll(timeout * 1000):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return ()
            self.buf += chunk

    def _take(self):
        if len(self.buf) < _HEADER.size:
            return None
        (n,) = _HEADER.unpack_from(self.buf)
        if len(self.buf) < _HEADER.size + n:
            return None
        body = bytes(self.buf[_HEADER.size:_HEADER.size + n])
        del self.buf[:_HEADER.size + n]
        return pickle.loads(body)


def only_thread() -> bool:
    """Whether this process runs a single thread (Linux's ``/proc/self/task``; False
    where that cannot be read): the only process it is safe to fork and go on running
    Python in."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


def _reading_key(spec: SessionSpec) -> tuple:
    """What a file's read depends on."""
    return (spec.format, spec.lenient, spec.reader_options)


def _die_with(parent: int) -> None:
    """Ask Linux to kill this child when the window's process ends
    (``PR_SET_PDEATHSIG``): a window closed, or killed, while the child reads ends
    without waiting for its loader to cancel, and must not leave the child reading."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - no ctypes or no prctl: the loader's cancel still kills it
        return
    if os.getppid() != parent:  # it ended before the request
        os._exit(1)


def _child(spec: SessionSpec, path: str, parent: int, unused: int, pipe: int,
           memfd: int) -> None:
    """Read on one core, write the profile to the memfd, say so on the pipe, and end
    without running the parent's exit handlers: whatever happens, this process never
    returns into the code that forked it (it would go on as a second window)."""
    code = 0
    try:
        os.close(unused)  # the pipe's read end: the parent's
        _die_with(parent)
        last = [-1.0]

        def progress(f: float) -> None:
            if f - last[0] >= _PROGRESS_STEP:
                last[0] = f
                _send(pipe, ("progress", f))

        profile = load_run(spec, path, progress, cores=1)
        meta, sizes = _dump(profile, memfd)
        _send(pipe, ("done", meta, sizes))
    except BaseException:  # noqa: BLE001 - the window reads the file itself
        code = 1
    finally:
        os._exit(code)


def _send(pipe: int, msg: tuple) -> None:
    body = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(pipe, memoryview(_HEADER.pack(len(body)) + body))


def _write_all(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view):]


def _dump(obj: object, memfd: int) -> tuple[bytes, list[int]]:
    """Pickle ``obj`` (protocol 5): its buffers written to the memfd one after the
    other, the rest returned.  An object that does not pickle raises here, in the
    child, and the window reads the file itself."""
    buffers: list[pickle.PickleBuffer] = []
    meta = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    sizes = []
    for b in buffers:
        view = b.raw()
        sizes.append(view.nbytes)
        _write_all(memfd, view)
    return meta, sizes


def _load(memfd: int, meta: bytes, sizes: list[int]) -> object:
    """What :func:`_dump` wrote (None when the memfd holds less: a page mapped past its
    end would kill this process when read)."""
    total = sum(sizes)
    if os.fstat(memfd).st_size < total:
        return None
    mapped = memoryview(mmap.mmap(memfd, total)) if total else memoryview(b"")
    views, off = [], 0
    for n in sizes:
        views.append(mapped[off:off + n])
        off += n
    return pickle.loads(meta, buffers=views)
