"""A small on-disk cache of parsed data, so that a command does not re-parse what has not changed.

Two things are cached: pint's parsed unit definitions (see :mod:`sizer.units`) and the parsed,
validated built-in catalog (see :mod:`sizer.catalog`). Each entry is a pickle named after a
key that covers everything it was built from (file contents or their sizes and modification
times, and the versions of the code that built it), so a stale entry is never read: a change
gives a new key.

The cache is an optimisation only. It lives in ``$SIZER_CACHE_DIR``, else
``$XDG_CACHE_HOME/sizer``, else ``~/.cache/sizer``; ``SIZER_CACHE_DIR=off`` turns it off.
Every failure (an unwritable folder, a truncated or foreign file) falls back silently to
parsing, and entries are written to a temporary file and renamed, so that a reader never sees
half an entry.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

CACHE_ENV = "SIZER_CACHE_DIR"
FORMAT = 1  # bump to abandon every entry written by an older layout


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sizer"


def key_of(*parts: object) -> str:
    """A short stable digest of the parts (file stamps, versions, text)."""
    digest = hashlib.sha256(repr((FORMAT, sys.version_info[:2], parts)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def file_stamp(path: Path) -> tuple[str, int, int]:
    """Name, size and modification time of a file: enough to notice an edit."""
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns)


def cached(name: str, key: str, build: Callable[[], Any]) -> Any:
    """``build()``'s result, read from the cache entry ``name-key`` when one exists.

    Any problem with the cache is ignored: the value is then built and, where possible, stored.
    """
    folder = cache_dir()
    path = folder / f"{name}-{key}.pickle" if folder is not None else None
    if path is not None:
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except Exception:  # missing, truncated, unreadable, or written by other code: rebuild
            pass
    value = build()
    if path is not None:
        _store(path, value)
    return value


def _store(path: Path, value: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=path.stem, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except Exception:  # read-only home, full disk, unpicklable value: carry on uncached
        pass
