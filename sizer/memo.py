"""The core's one in-memory cache: bounded, least recently used, keyed by values.

Every cache of the core goes through :func:`keyed_cache` (or plain ``functools.lru_cache`` where
the arguments themselves are hashable values). A key is built from what the answer depends on
(names, numbers, a catalog's :attr:`~sizer.hardware.catalog.Catalog.key`), never from ``id()``:
an identity can be reused once its object is freed, and keeping the object alive to prevent
that keeps everything it refers to alive as well.

>>> calls = []
>>> @keyed_cache(maxsize=2, key=lambda word, repeat: (word, repeat))
... def shout(word, repeat):
...     calls.append(word)
...     return word.upper() * repeat
>>> shout("a", 2), shout("a", 2), len(calls)
('AA', 'AA', 1)
>>> _ = shout("b", 1), shout("c", 1); shout.cache_info().size  # "a" evicted
2
"""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, TypeVar

Result = TypeVar("Result")


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    size: int
    maxsize: int


def keyed_cache(maxsize: int, key: Callable[..., Hashable]) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorate a function with an LRU cache of at most ``maxsize`` answers, looked up by
    ``key(*args, **kwargs)``: for arguments that are not hashable themselves (catalogs, profiles).

    Thread-safe; an exception is never cached. A key asked again while its answer is being computed
    waits for that answer instead of computing it a second time (a burst of one new question costs one
    evaluation). The decorated function has ``cache_info()`` and ``cache_clear()`` as
    ``functools.lru_cache`` has, and ``peek(*args)``: the kept answer or None, computing nothing.
    """
    if maxsize < 1:
        raise ValueError("maxsize must be at least 1")

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        kept: OrderedDict[Hashable, Any] = OrderedDict()
        running: dict[Hashable, threading.Event] = {}  # keys being computed now, and who waits for them
        lock = threading.Lock()
        counts = {"hits": 0, "misses": 0}

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Result:
            k = key(*args, **kwargs)
            while True:
                with lock:
                    if k in kept:
                        kept.move_to_end(k)
                        counts["hits"] += 1
                        return kept[k]
                    done = running.get(k)
                    if done is None:  # this thread computes it; others asking meanwhile wait for it
                        running[k] = done = threading.Event()
                        counts["misses"] += 1
                        break
                done.wait()  # the same question in flight: its answer, once (or, if it failed, try ourselves)
            try:
                value = function(*args, **kwargs)  # outside the lock: a slow answer does not block other keys
                with lock:
                    kept[k] = value
                    kept.move_to_end(k)
                    while len(kept) > maxsize:
                        kept.popitem(last=False)
                return value
            finally:
                with lock:
                    running.pop(k, None)
                done.set()

        def peek(*args: Any, **kwargs: Any) -> Result | None:
            """The answer kept for these arguments, or None; computes nothing (for a caller that
            decides how to run a question by whether its answer is at hand)."""
            k = key(*args, **kwargs)
            with lock:
                return kept.get(k)

        def cache_info() -> CacheInfo:
            with lock:
                return CacheInfo(counts["hits"], counts["misses"], len(kept), maxsize)

        def cache_clear() -> None:
            with lock:
                kept.clear()

        cached.cache_info = cache_info  # type: ignore[attr-defined]
        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        cached.peek = peek  # type: ignore[attr-defined]
        return cached

    return decorate
