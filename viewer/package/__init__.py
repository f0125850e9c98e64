"""profdiff: compare profiler runs (GHC, Julia, Linux perf) side by side.

Installed, every module lives under this one name, so profdiff never claims a generic
top-level name such as ``parsers`` or ``viewer``:

* :mod:`profdiff.parsers` - the readers and the columnar model (source folder ``parsers/``);
* :mod:`profdiff.viewer` - comparison, command line, exporters, watcher and the Qt app
  (``viewer/``);
* :mod:`profdiff.resources` - icons and the stylesheet (``resources/``);
* :mod:`profdiff.samples` - the bundled sample comparison (``samples/``).

The source folders stay at the top of the repository; ``[tool.setuptools.package-dir]``
in ``pyproject.toml`` maps them here, and this package's own folder is
``viewer/package/``.  ``python -m profdiff`` is the ``profdiff`` command.
"""

from profdiff.viewer import __version__

__all__ = ["__version__"]
