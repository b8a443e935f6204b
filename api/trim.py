"""Freed memory handed back to the system after a burst, so that the service's size follows its load.

A burst of requests (thousands of connections opened and hung up on within seconds) leaves the
allocator's heaps with free pages between live objects: CPython and glibc keep them for reuse, so a
process that served a burst stays at its high-water mark (+28 % after a 20 s fire-and-forget burst
measured with ``benchmarks/holds_load.py``). glibc's ``malloc_trim`` returns the free pages of every
heap to the system; it is called every ``interval_s`` in a thread of its own (it holds each heap's
lock for its pass, not the event loop), and only where glibc provides it.

>>> trimmer = MemoryTrimmer(0)
>>> trimmer.interval_s
0
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import logging
from typing import Callable

log = logging.getLogger("sizer.api")


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
    return function


def _collect_and_trim(trim: Callable[[int], int]) -> None:
    """Collect the garbage cycles first (a cancelled request's error holds its frames in a cycle, which only a full
    collection frees, and a burst of hang-ups makes thousands), then return the free pages."""
    gc.collect()
    trim(0)


class MemoryTrimmer:
    """Every ``interval_s`` [s] (0: never), return the heaps' free pages to the system (see the module)."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.task: asyncio.Task[None] | None = None
        self.trim = _malloc_trim() if interval_s > 0 else None

    def start(self) -> None:
        if self.trim is not None and self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run(), name="sizer-memory-trim")

    async def _run(self) -> None:
        trim = self.trim
        assert trim is not None
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await asyncio.to_thread(_collect_and_trim, trim)
            except Exception:  # noqa: BLE001 - a failed trim costs memory, never an answer
                log.debug("malloc_trim failed", exc_info=True)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
