"""A cooperative time limit for estimates: set by the caller, checked by the core's loops.

A thread cannot be stopped from outside, so an HTTP request that has been answered 503
would otherwise go on computing. Instead the caller sets a deadline in a context variable
(copied into the worker thread that runs the estimate) and every loop of the core calls
:func:`check_deadline`, which raises :class:`~sizer.errors.EstimateTimeout` once it has passed.
With no deadline set (the command line), the check costs one context-variable read. A caller
that runs the estimate elsewhere (a worker process) may also hand over a cancel flag (any object
with ``is_set()``, e.g. :class:`threading.Event`): once set, the next check raises as well.

>>> with time_limit(60):
...     check_deadline()  # well within the limit: nothing happens
>>> with time_limit(0):
...     check_deadline()
Traceback (most recent call last):
...
sizer.errors.EstimateTimeout: the estimate took longer than 0 s; try fewer devices (max_devices) or a smaller request
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from sizer.errors import EstimateTimeout

# (monotonic time at which the estimate must stop [s], the limit it came from [s], the cancel flag or None)
_DEADLINE: ContextVar[tuple[float, float, Any] | None] = ContextVar("sizer_deadline", default=None)


def set_deadline(seconds: float, cancel: Any = None, limit: float | None = None):
    """Start a limit of ``seconds`` [s] from now in the current context, ended early once ``cancel.is_set()``
    (if given); ``limit`` [s] is the limit to name when it passes (default ``seconds``: a computation handed on
    elsewhere gets the time left of its caller's limit). Returns the token for :func:`clear_deadline`."""
    return _DEADLINE.set((time.monotonic() + seconds, seconds if limit is None else limit, cancel))


def clear_deadline(token) -> None:
    """Undo :func:`set_deadline`."""
    _DEADLINE.reset(token)


@contextmanager
def time_limit(seconds: float, cancel: Any = None, limit: float | None = None) -> Iterator[None]:
    """Run the body with a deadline ``seconds`` [s] from now (and the cancel flag ``cancel`` and the named
    ``limit``, as :func:`set_deadline` takes them)."""
    token = set_deadline(seconds, cancel, limit)
    try:
        yield
    finally:
        clear_deadline(token)


def check_deadline() -> None:
    """Raise :class:`~sizer.errors.EstimateTimeout` if the current deadline has passed; call it in every loop."""
    deadline = _DEADLINE.get()
    if deadline is not None and (time.monotonic() >= deadline[0] or deadline[2] is not None and deadline[2].is_set()):
        raise EstimateTimeout(deadline[1])


def remaining_seconds() -> tuple[float, float] | None:
    """Seconds [s] left before the current deadline (at least 0) and the limit it came from [s], or None when
    none is set: what to hand on to a computation that runs elsewhere."""
    deadline = _DEADLINE.get()
    return None if deadline is None else (max(0.0, deadline[0] - time.monotonic()), deadline[1])
