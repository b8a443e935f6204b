"""api/heap.py: what start-up built is kept out of the garbage collector's scans, in `sizer serve` only."""
from __future__ import annotations

import gc

from api.heap import freeze_start_up
from api.settings import Settings


def test_start_up_is_frozen_and_its_garbage_collected_first():
    class Cycle:
        pass

    garbage = Cycle()
    garbage.me = garbage  # start-up's garbage in a cycle: collected, not kept for good
    collected_before = gc.get_stats()[2]["collected"]
    del garbage
    try:
        freeze_start_up()
        assert gc.get_freeze_count() > 0
        assert gc.get_stats()[2]["collected"] > collected_before
    finally:
        gc.unfreeze()  # the test process's heap goes back to the collector


def test_only_the_served_process_freezes(monkeypatch):
    monkeypatch.delenv("SIZER_API_GC_FREEZE", raising=False)
    assert Settings().gc_freeze is False  # an app built by a program or a test is left as Python leaves it
    monkeypatch.setenv("SIZER_API_GC_FREEZE", "true")  # as `sizer serve` sets it
    assert Settings().gc_freeze is True
