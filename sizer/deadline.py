"""A cooperative time limit for estimates: set by the caller, checked by the core's loops.

A thread cannot be stopped from outside, so an HTTP request that has been answered 503
would otherwise go on computing. Instead the caller sets a deadline in a context variable
(copied into the worker thread that runs the estimate) and every loop of the core calls
:func:`check_deadline`, which raises :class:`~sizer.errors.EstimateTimeout` once it has passed.
With no deadline set (the command line), the check costs one context-variable read. A caller
that runs the estimate elsewhere (a worker process) may also hand over a cancel flag (any object
with ``is_set()``, e.g. :class:`threading.Event`): once set, the next check raises as well.

The deadline is read on a clock, :func:`time.monotonic` unless the caller hands another one (any
function returning seconds): a test moves its own clock, so that whether a limit has passed never
depends on how loaded the machine is. A limit set while another is in force reads the same clock.

>>> with time_limit(60):
...     check_deadline()  # well within the limit: nothing happens
>>> with time_limit(0):
...     check_deadline()
Traceback (most recent call last):
...
sizer.errors.EstimateTimeout: the estimate took longer than 0 s; try fewer devices (max_devices) or a smaller request
>>> now = [100.0]  # a clock the caller moves by hand
>>> with time_limit(5, clock=lambda: now[0]):
...     now[0] = 104.9
...     check_deadline()  # 4.9 s of 5: nothing happens
...     now[0] = 105.0
...     check_deadline()
Traceback (most recent call last):
...
sizer.errors.EstimateTimeout: the estimate took longer than 5 s; try fewer devices (max_devices) or a smaller request
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Callable, Iterator, Protocol

from sizer.errors import EstimateTimeout


class CancelFlag(Protocol):
    """What a cancel flag must offer: :class:`threading.Event` and :class:`multiprocessing.Event` do."""

    def is_set(self) -> bool:
        """Whether the caller has asked the estimate to stop.

        Returns
        -------
        bool
            True once the flag has been set.
        """
        ...


Clock = Callable[[], float]
"""A monotonic clock: a function returning the time now [s] (:func:`time.monotonic`, or a test's own)."""
Deadline = tuple[float, float, CancelFlag | None, Clock]
# (the clock's time at which the estimate must stop [s], the limit it came from [s], the cancel flag or None,
#  the clock)
_DEADLINE: ContextVar[Deadline | None] = ContextVar("sizer_deadline", default=None)


def set_deadline(seconds: float, cancel: CancelFlag | None = None, limit: float | None = None,
                 clock: Clock | None = None) -> Token[Deadline | None]:
    """Start a time limit in the current context.

    Parameters
    ----------
    seconds : float
        Time from now after which :func:`check_deadline` raises [s].
    cancel : CancelFlag or None
        A flag (``threading.Event``) that ends the limit early once ``cancel.is_set()``; None for none.
    limit : float or None
        The limit to name in the message when it passes [s]; default ``seconds``. A computation handed
        on elsewhere gets the time left of its caller's limit as ``seconds`` and the caller's limit here.
    clock : Clock or None
        The clock the limit is read on; default the clock of the limit in force, else :func:`time.monotonic`.

    Returns
    -------
    contextvars.Token
        The token that :func:`clear_deadline` takes to restore the context as it was.
    """
    if clock is None:
        outer = _DEADLINE.get()
        clock = time.monotonic if outer is None else outer[3]
    return _DEADLINE.set((clock() + seconds, seconds if limit is None else limit, cancel, clock))


def clear_deadline(token: Token[Deadline | None]) -> None:
    """Undo :func:`set_deadline`: the limit that was in force before (or none) applies again.

    Parameters
    ----------
    token : contextvars.Token
        What :func:`set_deadline` returned, in the same context.
    """
    _DEADLINE.reset(token)


@contextmanager
def time_limit(seconds: float, cancel: CancelFlag | None = None, limit: float | None = None,
               clock: Clock | None = None) -> Iterator[None]:
    """Run the body of a ``with`` block under a time limit, cleared when the block ends.

    Parameters
    ----------
    seconds : float
        Time from now after which :func:`check_deadline` raises [s].
    cancel : CancelFlag or None
        A flag that ends the limit early once set, as :func:`set_deadline` takes it.
    limit : float or None
        The limit to name in the message [s], as :func:`set_deadline` takes it.
    clock : Clock or None
        The clock the limit is read on, as :func:`set_deadline` takes it.

    Yields
    ------
    None
        Control to the body, with the deadline in force.
    """
    token = set_deadline(seconds, cancel, limit, clock)
    try:
        yield
    finally:
        clear_deadline(token)


def check_deadline() -> None:
    """Raise :class:`~sizer.errors.EstimateTimeout` if the current deadline has passed; call it in every loop."""
    deadline = _DEADLINE.get()
    if deadline is not None and (deadline[3]() >= deadline[0] or deadline[2] is not None and deadline[2].is_set()):
        raise EstimateTimeout(deadline[1])


def remaining_seconds() -> tuple[float, float] | None:
    """The time left before the current deadline, to hand on to a computation that runs elsewhere.

    Returns
    -------
    tuple of (float, float) or None
        Seconds left (at least 0) [s] and the limit they came from [s]; None when no deadline is set.
    """
    deadline = _DEADLINE.get()
    return None if deadline is None else (max(0.0, deadline[0] - deadline[3]()), deadline[1])
