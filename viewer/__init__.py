"""profdiff application: comparison engine, exporters, watcher, CLI (Qt-free) and viewer.qt."""

__version__ = "0.1.0"
