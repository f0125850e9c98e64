"""Fixtures for the Qt viewer tests: synthetic GHC-like profiles and the real hs-ad pair."""

from __future__ import annotations

import pytest
from synth_profiles import BASE_STACKS, NEW_STACKS, synth


@pytest.fixture
def pair():
    return synth(BASE_STACKS, "base.prof"), synth(NEW_STACKS, "new.prof")
