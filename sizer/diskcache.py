"""A small on-disk cache of parsed data, so that a command does not re-parse what has not changed.

Four things are cached: pint's parsed unit definitions (see :mod:`sizer.units`), the parsed,
validated built-in catalog (see :mod:`sizer.hardware.catalog`), the whole catalog's device table
(:func:`sizer.engine.devices.cached_device_table`) and a recommendation's layout search
(:mod:`sizer.plan.layout_basis`); the last two measured at 40 and 55 ms of a command's start-up.
At most :data:`MAX_ENTRIES_PER_NAME` entries of each kind are kept, the oldest removed first. Each entry is a pickle named after a
key that covers everything it was built from (file contents or their sizes and modification
times, and the versions of the code that built it), so a stale entry is never read: a change
gives a new key.

Reading a pickle runs code, so an entry is read only where nobody but the user could have put
it: the folder and the entry must both be owned by the user and writable by no one else (group
and others have no write permission), the entry must be a regular file and not a symbolic link.
Anything else (a shared or world-writable folder, an entry another user planted) is ignored:
the value is built as if there were no cache, and nothing is stored there either. A folder the
cache creates is made private (mode 0700). On systems without POSIX user ids the cache is off.

Each kind is declared, with its measured saving, in :mod:`sizer.memo` (the caching policy).
The cache is an optimisation only. It lives in ``$SIZER_CACHE_DIR``, else
``$XDG_CACHE_HOME/sizer``, else ``~/.cache/sizer``; ``SIZER_CACHE_DIR=off`` turns it off.
Every failure (an unwritable folder, a truncated or foreign file) falls back silently to
parsing, and entries are written to a temporary file and renamed, so that a reader never sees
half an entry. A write killed before its rename leaves its temporary file behind; the first use of
the folder in a process removes such leftovers (by the name this module gives them, and only those
older than :data:`TEMPORARY_MAX_AGE_S`, so that another process's write in progress is kept).
"""
from __future__ import annotations

import hashlib
import os
import pickle
import re
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TypeVar, cast

from sizer.memo import is_off

Value = TypeVar("Value")

CACHE_ENV = "SIZER_CACHE_DIR"
FORMAT = 1  # bump to abandon every entry written by an older layout
_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off.

    Returns
    -------
    Path or None
        ``$SIZER_CACHE_DIR``, else ``$XDG_CACHE_HOME/sizer``, else ``~/.cache/sizer``; None for ``off``.
    """
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sizer"


def key_of(*parts: object) -> str:
    """A short stable digest of the parts (file stamps, versions, text).

    Parameters
    ----------
    *parts : object
        What the entry was built from; their ``repr`` is digested.

    Returns
    -------
    str
        24 hexadecimal digits of SHA-256.
    """
    digest = hashlib.sha256(repr((FORMAT, sys.version_info[:2], parts)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def file_stamp(path: Path) -> tuple[str, int, int]:
    """Name, size and modification time of a file: enough to notice an edit.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    tuple
        Its path, size [B] and modification time [ns].
    """
    stat_result = path.stat()
    return (str(path), stat_result.st_size, stat_result.st_mtime_ns)


def is_private(stat_result: os.stat_result) -> bool:
    """Owned by the current user and writable by no one else (no group or other write bit).

    Parameters
    ----------
    stat_result : os.stat_result
        The folder's or entry's status.

    Returns
    -------
    bool
        True where only the current user can have written it.
    """
    return stat_result.st_uid == os.getuid() and not stat_result.st_mode & _SHARED_WRITE


def cached(name: str, key: str, build: Callable[[], Value]) -> Value:
    """``build()``'s result, read from the cache entry ``name-key`` when one exists in a private folder.

    Any problem with the cache is ignored: the value is then built and, where possible, stored.
    ``name`` is declared as ``disk:name`` in :data:`sizer.memo.POLICIES` (the house's caching policy).

    Parameters
    ----------
    name : str
        The kind of entry (``catalog``, ``layout-basis`` ...).
    key : str
        A digest of everything the value was built from (:func:`key_of`).
    build : callable
        Builds the value when no entry can be read.

    Returns
    -------
    object
        The value, read or built.
    """
    if is_off(f"disk:{name}"):
        return build()
    folder = cache_dir() if hasattr(os, "getuid") else None
    entry = f"{name}-{key}.pickle"
    directory = _open_private_folder(folder) if folder is not None else None
    if directory is not None and folder is not None and str(folder) not in _SWEPT:
        _SWEPT.add(str(folder))
        _prune_temporary(directory)
    try:
        if directory is not None:
            try:
                return cast(Value, _read(directory, entry))  # an entry is the pickle of a built value
            except Exception:  # missing, truncated, not private, or written by other code: rebuild
                pass
        value = build()
        if directory is not None and folder is not None:
            _store(directory, folder, entry, value)
            _prune(directory, name)
        return value
    finally:
        if directory is not None:
            os.close(directory)


def _open_private_folder(folder: Path) -> int | None:
    """A descriptor of the folder (created private when missing), or None when it is not private.

    The checks are made on the open descriptor, and entries are opened relative to it, so the
    folder cannot be swapped for another between the check and the read.
    """
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        found = os.fstat(directory)
        if stat.S_ISDIR(found.st_mode) and is_private(found):
            return directory
    except OSError:
        pass
    os.close(directory)
    return None


def _read(directory: int, entry: str) -> Any:
    # O_NONBLOCK: a FIFO planted here must not make the open wait for a writer
    handle = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=directory)
    with os.fdopen(handle, "rb") as source:
        found = os.fstat(source.fileno())
        if not (stat.S_ISREG(found.st_mode) and is_private(found)):
            raise PermissionError(f"cache entry {entry} is not a private regular file")
        return pickle.load(source)


MAX_ENTRIES_PER_NAME = 32  # kept of each kind: a service asked many new questions must not fill the disk


def _prune(directory: int, name: str, keep: int = MAX_ENTRIES_PER_NAME) -> None:
    """Remove the oldest entries of ``name`` beyond ``keep``: the cache stays bounded whatever is asked."""
    try:
        entries = [(os.stat(entry, dir_fd=directory, follow_symlinks=False).st_mtime_ns, entry)
                   for entry in os.listdir(directory) if entry.startswith(f"{name}-") and entry.endswith(".pickle")]
        for _, entry in sorted(entries)[:-keep] if len(entries) > keep else ():
            os.unlink(entry, dir_fd=directory)
    except Exception:  # a listing or removal that fails leaves the entries: the next write tries again
        pass


TEMPORARY_MAX_AGE_S = 3600.0  # a write takes milliseconds; a temporary file this old was left by a killed one
# the temporary names _store gives: the entry's name, mkstemp's eight characters, ".tmp"
_TEMPORARY = re.compile(r"[A-Za-z0-9_.-]+-[A-Za-z0-9_]+\.pickle[a-z0-9_]{8}\.tmp")
_SWEPT: set[str] = set()  # folders whose leftovers this process has removed


def _prune_temporary(directory: int, max_age_s: float = TEMPORARY_MAX_AGE_S) -> None:
    """Remove the temporary files that writes killed before their rename left in the cache folder:
    only names :func:`_store` gives, only regular files, only those older than ``max_age_s`` [s]."""
    try:
        oldest = time.time() - max_age_s
        for entry in os.listdir(directory):
            if _TEMPORARY.fullmatch(entry):
                found = os.stat(entry, dir_fd=directory, follow_symlinks=False)
                if stat.S_ISREG(found.st_mode) and found.st_mtime < oldest:
                    os.unlink(entry, dir_fd=directory)
    except Exception:  # a listing or removal that fails leaves the files: the next process tries again
        pass


def _store(directory: int, folder: Path, entry: str, value: Any) -> None:
    try:
        # mkstemp makes the file with mode 0600; the folder was checked through its descriptor.
        handle, temporary = tempfile.mkstemp(prefix=entry, suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(os.path.basename(temporary), entry, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            os.unlink(temporary)
            raise
    except Exception:  # read-only home, full disk, unpicklable value: carry on uncached
        pass
