"""The shared GC pause: readers running at once in the window's thread pool must leave
the collector as they found it, whatever order they finish in."""

from __future__ import annotations

import gc
import threading

from profdiff.parsers.gc_pause import gc_paused


def _overlapping(first_to_finish: str) -> None:
    """Reader A pauses, B pauses while A is inside, then they end in the given order."""
    a_in, b_in, a_go, b_go = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def reader(name: str, entered: threading.Event, go: threading.Event) -> None:
        with gc_paused():
            entered.set()
            go.wait(5)
            seen[name] = gc.isenabled()

    ta = threading.Thread(target=reader, args=("a", a_in, a_go))
    tb = threading.Thread(target=reader, args=("b", b_in, b_go))
    ta.start()
    a_in.wait(5)
    tb.start()
    b_in.wait(5)
    first, second = (a_go, b_go) if first_to_finish == "a" else (b_go, a_go)
    first.set()
    (ta if first_to_finish == "a" else tb).join(5)
    assert not gc.isenabled(), "collector came back while another reader was still inside"
    second.set()
    ta.join(5)
    tb.join(5)
    assert seen == {"a": False, "b": False}


def test_overlapping_pauses_restore_the_collector_in_either_order() -> None:
    assert gc.isenabled()
    _overlapping("a")
    assert gc.isenabled()
    _overlapping("b")
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_app_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_exception_inside_still_restores_the_collector() -> None:
    try:
        with gc_paused():
            raise ValueError("bad input")
    except ValueError:
        pass
    assert gc.isenabled()
