"""A cooperative time limit for estimates: set by the caller, checked by the core's loops.

A thread cannot be stopped from outside, so an HTTP request that has been answered 503
would otherwise go on computing. Instead the caller sets a deadline in a context variable
(copied into the worker thread that runs the estimate) and every loop of the core calls
:func:`check_deadline`, which raises :class:`~sizer.errors.EstimateTimeout` once it has passed.
With no deadline set (the command line), the check costs one context-variable read.

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
from typing import Iterator

from sizer.errors import EstimateTimeout

# (monotonic time at which the estimate must stop [s], the limit it came from [s])
_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("sizer_deadline", default=None)


def set_deadline(seconds: float):
    """Start a limit of ``seconds`` [s] from now in the current context; returns the token for :func:`clear_deadline`."""
    return _DEADLINE.set((time.monotonic() + seconds, seconds))


def clear_deadline(token) -> None:
    """Undo :func:`set_deadline`."""
    _DEADLINE.reset(token)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Run the body with a deadline ``seconds`` [s] from now."""
    token = set_deadline(seconds)
    try:
        yield
    finally:
        clear_deadline(token)


def check_deadline() -> None:
    """Raise :class:`~sizer.errors.EstimateTimeout` if the current deadline has passed; call it in every loop."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() >= deadline[0]:
        raise EstimateTimeout(deadline[1])
