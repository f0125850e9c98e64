"""File ▸ Reading options…: the command line's reader options, in the window.

Why: a user who dragged two files onto the window had no way to pick a perf event, a pprof
sample type or one speedscope profile, to match frames across moved libraries, to say that
a Julia allocation profile recorded every allocation, or to read a file with a corrupt line
(``--lenient``).  The dialog offers what the open runs have (:mod:`viewer.reading_choices`);
OK reads the runs again with the new options, and the runs stay as they were if a file
cannot be read with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from profdiff.viewer.reading_choices import GROUP_BY, SPLIT_BY, ReadingChoices

DEFAULT = "(default)"


class ReadingOptionsDialog(QDialog):
    """The reader options (``options``: :attr:`SessionSpec.reader_options` as a dict) and
    ``lenient``; :meth:`chosen` gives them back, ``applied(options, lenient)`` is called
    on OK."""

    def __init__(self, parent: QWidget | None, choices: ReadingChoices,
                 options: Mapping[str, Any], lenient: bool,
                 applied: Callable[[dict[str, Any], bool], None]) -> None:
        super().__init__(parent)
        self.setObjectName("readingOptions")
        self.setWindowTitle("Reading options")
        self._applied = applied
        lay = QVBoxLayout(self)
        intro = QLabel("How files are read. OK reads the open runs again with these "
                       "options; files opened later use them too." if choices.formats else
                       "How the files you open next are read.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.perf_box = self._perf(choices, options)
        self.pprof_box = self._pprof(choices, options)
        self.julia_box = self._julia(options)
        self.speedscope_box = self._speedscope(choices, options)
        for box, section in ((self.perf_box, "perf"), (self.pprof_box, "pprof"),
                             (self.julia_box, "julia"), (self.speedscope_box, "speedscope")):
            box.setVisible(choices.applies(section))
            lay.addWidget(box)
        self.lenient_box = QCheckBox("Skip corrupt lines (each one is reported) instead of "
                                     "refusing the file")
        self.lenient_box.setChecked(lenient)
        lay.addWidget(self.lenient_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    # ----- sections -------------------------------------------------------------------
    def _perf(self, choices: ReadingChoices, options: Mapping[str, Any]) -> QGroupBox:
        box = QGroupBox("perf (perf.data, perf script)")
        form = QFormLayout(box)
        self.event_box = _combo([(None, f"{DEFAULT} the event with most samples"),
                             *choices.events], options.get("event"))
        form.addRow("Event:", self.event_box)
        self.group_by = _combo([(g, g) for g in GROUP_BY], options.get("group_by")
                               or GROUP_BY[0])
        self.group_by.setToolTip("symbol: a function is the same function whichever "
                                 "library or path it was loaded from (runs whose binaries "
                                 "moved still match)")
        form.addRow("Frame identity:", self.group_by)
        self.split_by = _combo([(s, s or "no split") for s in SPLIT_BY],
                               options.get("split_by"))
        form.addRow("One subtree per:", self.split_by)
        self.demangle = QCheckBox("Demangle Rust/C++ symbols perf left mangled")
        self.demangle.setChecked(bool(options.get("demangle")))
        form.addRow(self.demangle)
        return box

    def _pprof(self, choices: ReadingChoices, options: Mapping[str, Any]) -> QGroupBox:
        box = QGroupBox("pprof")
        form = QFormLayout(box)
        self.sample_type = _combo([(None, f"{DEFAULT} the file's default sample type"),
                                   *choices.sample_types], options.get("sample_type"))
        self.sample_type.setToolTip("Every sample type is read; this one is shown first")
        form.addRow("Sample type:", self.sample_type)
        return box

    def _julia(self, options: Mapping[str, Any]) -> QGroupBox:
        box = QGroupBox("Julia allocation profiles (PProf.jl Allocs)")
        row = QHBoxLayout(box)
        rate = options.get("alloc_sample_rate")
        self.rate_known = QCheckBox("Recorded at sample_rate")
        self.rate_known.setChecked(rate is not None)
        self.rate_known.setToolTip(
            "Profile.Allocs records each allocation with probability sample_rate (0.1 by "
            "default) and PProf.jl does not write it into the file. Unknown: counts are "
            "judged as samples. 1 (every allocation recorded): counts are exact, and a "
            "single extra allocation is a change.")
        self.rate = QDoubleSpinBox()
        self.rate.setDecimals(4)
        self.rate.setRange(0.0001, 1.0)
        self.rate.setSingleStep(0.05)
        self.rate.setValue(float(rate) if rate is not None else 1.0)
        self.rate.setEnabled(rate is not None)
        self.rate_known.toggled.connect(self.rate.setEnabled)
        row.addWidget(self.rate_known)
        row.addWidget(self.rate)
        row.addStretch(1)
        return box

    def _speedscope(self, choices: ReadingChoices, options: Mapping[str, Any]) -> QGroupBox:
        box = QGroupBox("speedscope")
        form = QFormLayout(box)
        self.profile = _combo([(None, f"{DEFAULT} every profile merged"), *choices.profiles],
                              options.get("profile"))
        form.addRow("Profile:", self.profile)
        return box

    # ----- result ---------------------------------------------------------------------
    def chosen(self) -> tuple[dict[str, Any], bool]:
        """(reader options, lenient) as set in the dialog (unset options are None)."""
        group_by = self.group_by.currentData()
        return ({
            "event": self.event_box.currentData(),
            "group_by": None if group_by == GROUP_BY[0] else group_by,
            "split_by": self.split_by.currentData(),
            "demangle": self.demangle.isChecked() or None,
            "sample_type": self.sample_type.currentData(),
            "alloc_sample_rate": self.rate.value() if self.rate_known.isChecked() else None,
            "profile": self.profile.currentData(),
        }, self.lenient_box.isChecked())

    def accept(self) -> None:
        options, lenient = self.chosen()
        super().accept()
        self._applied(options, lenient)


def _combo(items: list[tuple[Any, str]], current: Any) -> QComboBox:
    """A combo box of (value, label) items set to ``current``; a value no run has (given
    on the command line) is kept as an item of its own, so OK does not drop it."""
    box = QComboBox()
    for value, label in items:
        box.addItem(label, value)
    if current is not None and box.findData(current) < 0:
        box.addItem(f"{current} (not in the open runs)", current)
    box.setCurrentIndex(max(0, box.findData(current)))
    return box
