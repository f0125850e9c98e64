"""The live window faults in the heap memory its alignment and first paint will use on
the core its waiting GUI thread leaves idle (viewer/heap_prefault.py): after it, arrays
of that size reuse pages already there instead of faulting each one in."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fresh_process import fresh_output

from profdiff.viewer import heap_prefault
from profdiff.viewer.memory_settings import glibc_version
from profdiff.viewer.qt import loader as loader_mod
from profdiff.viewer.session import SessionSpec, Slot

HS_AD = Path(__file__).resolve().parents[1] / "data" / "hs-ad"

PROBE = """
import resource, sys
from profdiff.viewer.program_start import set_up_program
set_up_program()
import numpy as np
from profdiff.viewer import heap_prefault

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

n = 64 << 20
done = heap_prefault.populate(n) if {populate} else None
before = faults()
arrays = [np.ones(n // 8 // 2), np.ones(n // 8 // 4)]  # 48 MB written
print(done, faults() - before, sum(a.nbytes for a in arrays) // 4096)
"""


def _faults(populate: bool) -> tuple[str, int, int]:
    done, faults, pages = fresh_output(PROBE.format(populate=populate),
                                       lambda k: k.startswith("MALLOC_")).split()
    return done, int(faults), int(pages)


@pytest.mark.skipif(not glibc_version(), reason="the kept heap is glibc's")
def test_arrays_made_after_it_reuse_the_pages_it_faulted_in():
    _, cold, pages = _faults(populate=False)
    assert cold > pages // 2  # without it, nearly every page of the arrays faults
    done, warm, pages = _faults(populate=True)
    if done != "True":
        pytest.skip("this kernel has no MADV_POPULATE_WRITE (Linux < 5.14)")
    assert warm < pages // 10


def test_how_much_follows_the_rows_within_bounds():
    assert heap_prefault.bytes_for(0) == 0
    assert heap_prefault.bytes_for(1_000) == 0  # a small comparison: not worth a thread
    assert heap_prefault.bytes_for(650_000) == 650_000 * heap_prefault.BYTES_PER_ROW
    assert heap_prefault.bytes_for(10**8) == heap_prefault.MAX_BYTES
    # freed, the block and the heap's top pad stay under the trim threshold
    assert heap_prefault.MAX_BYTES + (64 << 20) <= 256 << 20


def test_nothing_starts_without_a_kept_heap_or_bytes(monkeypatch):
    monkeypatch.setattr(heap_prefault, "heap_is_kept", lambda: False)
    assert heap_prefault.start(64 << 20) is None
    monkeypatch.setattr(heap_prefault, "heap_is_kept", lambda: True)
    assert heap_prefault.start(0) is None
    t = heap_prefault.start(1 << 20)
    assert isinstance(t, threading.Thread) and t.daemon
    t.join(10)
    assert not t.is_alive()


def test_the_live_windows_load_starts_it_before_aligning(monkeypatch):
    """``prefault=True`` (the window's loading task) asks for the largest run's share,
    before the alignment; a plain load does not ask."""
    asked: list[int] = []
    aligned: list[bool] = []
    monkeypatch.setattr(heap_prefault, "start", lambda n: asked.append(n) or None)
    real_tree = loader_mod.Session.tree

    def tree(self):
        aligned.append(bool(asked))
        return real_tree.fget(self)

    monkeypatch.setattr(loader_mod.Session, "tree", property(tree))
    slots = [Slot(str(HS_AD / "v1" / "ad.P.prof")), Slot(str(HS_AD / "v2" / "ad.P.prof"))]
    res = loader_mod.load_and_align(slots, SessionSpec(files=[s.path for s in slots]),
                                    prefault=True)
    nodes = max(p.n_nodes for p in res.runs)
    assert asked == [heap_prefault.bytes_for(nodes)] and aligned[0] is True
    asked.clear()
    loader_mod.load_and_align(slots, SessionSpec(files=[s.path for s in slots]))
    assert asked == []
