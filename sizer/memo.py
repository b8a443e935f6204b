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

    Thread-safe; an exception is never cached. The decorated function has ``cache_info()`` and
    ``cache_clear()`` as ``functools.lru_cache`` has.
    """
    if maxsize < 1:
        raise ValueError("maxsize must be at least 1")

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        kept: OrderedDict[Hashable, Any] = OrderedDict()
        lock = threading.Lock()
        counts = {"hits": 0, "misses": 0}

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Result:
            k = key(*args, **kwargs)
            with lock:
                if k in kept:
                    kept.move_to_end(k)
                    counts["hits"] += 1
                    return kept[k]
                counts["misses"] += 1
            value = function(*args, **kwargs)  # outside the lock: a slow answer does not block others
            with lock:
                kept[k] = value
                kept.move_to_end(k)
                while len(kept) > maxsize:
                    kept.popitem(last=False)
            return value

        def cache_info() -> CacheInfo:
            with lock:
                return CacheInfo(counts["hits"], counts["misses"], len(kept), maxsize)

        def cache_clear() -> None:
            with lock:
                kept.clear()

        cached.cache_info = cache_info  # type: ignore[attr-defined]
        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        return cached

    return decorate
