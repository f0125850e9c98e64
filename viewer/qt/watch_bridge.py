"""Bridge from the Qt-free :class:`viewer.watch.FolderWatcher` to GUI-thread signals.

The watcher calls back from its own thread; Qt widgets may only be touched from the GUI
thread.  The bridge re-emits every callback through a *queued* connection, so slots
connected to :attr:`WatchBridge.landed` etc. always run in the thread the bridge lives in
(the GUI thread), whatever kind of callable they are.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot

from profdiff.viewer.watch import DEFAULT_SETTLE, FolderWatcher, Landed


class WatchBridge(QObject):
    """Owns a FolderWatcher; ``landed(Landed)``, ``removed(str)``, ``scanDone(int)``."""

    landed = Signal(object)
    removed = Signal(str)
    scanDone = Signal(int)

    # emitted from the watcher thread, delivered queued to the slots below
    _landed_raw = Signal(object)
    _removed_raw = Signal(str)
    _scan_raw = Signal(int)

    def __init__(self, folder: str, *, glob: str | None = None, settle: float = DEFAULT_SETTLE,
                 recursive: bool = True, parent: QObject | None = None, **watch_options) -> None:
        super().__init__(parent)
        queued = Qt.ConnectionType.QueuedConnection
        self._landed_raw.connect(self._on_landed, queued)
        self._removed_raw.connect(self._on_removed, queued)
        self._scan_raw.connect(self._on_scan, queued)
        self.watcher = FolderWatcher(
            folder, glob=glob, settle=settle, recursive=recursive,
            on_landed=self._landed_raw.emit, on_removed=self._removed_raw.emit,
            on_scan_done=self._scan_raw.emit, **watch_options)
        self._stopped = False

    @property
    def folder(self) -> str:
        return str(self.watcher.folder)

    def start(self) -> None:
        self.watcher.start()

    def stop(self) -> None:
        """Stop observer and worker; callbacks still queued are dropped."""
        self._stopped = True
        self.watcher.stop()

    @property
    def running(self) -> bool:
        return self.watcher.running

    @Slot(object)
    def _on_landed(self, x: Landed) -> None:
        if not self._stopped:
            self.landed.emit(x)

    @Slot(str)
    def _on_removed(self, path: str) -> None:
        if not self._stopped:
            self.removed.emit(path)

    @Slot(int)
    def _on_scan(self, n: int) -> None:
        if not self._stopped:
            self.scanDone.emit(n)
