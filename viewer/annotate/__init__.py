"""Instruction-level comparison of one function between two perf recordings.

Qt-free core of ``profdiff annotate`` and the Disassembly tab: :func:`compare_function`
returns both runs' instructions with their samples, the alignment and the summaries;
:func:`comparison_json` is the ``--json`` document.
"""

from .binaries import BinaryError
from .compare import (
    FunctionComparison,
    FunctionRun,
    SymbolNotFound,
    compare_function,
    comparison_json,
)

__all__ = ["BinaryError", "FunctionComparison", "FunctionRun", "SymbolNotFound",
           "compare_function", "comparison_json"]
