"""Default values shared by the options, the session and the engine.

A module of constants only (no imports), so the command-line parser can show them in
``--help`` without importing numpy or pandas.
"""

DEFAULT_ALPHA = 0.05
"""False discovery rate for calling a change 'significant' (Benjamini-Hochberg)."""

DEFAULT_MATCH_THRESHOLD = 0.75
"""Score from which a suggested match of renamed nodes is accepted by ``--auto-match``."""
