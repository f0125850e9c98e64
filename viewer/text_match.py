"""Case-insensitive substring or regular-expression tests over distinct labels (Qt-free):
the one rule the tree filter and the flame graph's search share."""

from __future__ import annotations

import re
import warnings

import numpy as np


def contains(strings: list[str], upper: list[str], text: str, regex: bool) -> np.ndarray:
    """``pandas.Series(strings).str.contains(text, case=False, regex=regex)`` without its
    per-call overhead: the same tests (``re.search`` with IGNORECASE; substring of the
    upper-cased strings), on strings already upper-cased once by the caller.  An invalid
    pattern raises ``re.error``."""
    if regex:
        with warnings.catch_warnings():  # e.g. "possible nested set": harmless here
            warnings.simplefilter("ignore")
            search = re.compile(text, flags=re.IGNORECASE).search
        return np.fromiter((search(x) is not None for x in strings), dtype=bool,
                           count=len(strings))
    t = text.upper()
    return np.fromiter((t in x for x in upper), dtype=bool, count=len(upper))
