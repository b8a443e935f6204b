"""Freed memory handed back after a burst (api.trim; issue 43: fire-and-forget clients grew the service from
86 MB to 1.15 GB, never returned)."""
from __future__ import annotations

import asyncio

from api.trim import MemoryTrimmer


def test_the_trimmer_hands_memory_back_every_interval():
    calls: list[int] = []

    async def scenario():
        trimmer = MemoryTrimmer(0.01)
        trimmer.trim = calls.append  # glibc's malloc_trim stands here: its argument is the padding kept
        trimmer.start()
        for _ in range(6000):  # each pass collects the garbage first: a shared machine may take a while (60 s at most)
            if len(calls) >= 2:
                break
            await asyncio.sleep(0.01)
        await trimmer.stop()
        return trimmer.task

    assert asyncio.run(scenario()) is None
    assert len(calls) >= 2 and set(calls) == {0}


def test_an_interval_of_zero_never_trims():
    async def scenario():
        trimmer = MemoryTrimmer(0)
        trimmer.start()
        return trimmer.task

    assert asyncio.run(scenario()) is None
