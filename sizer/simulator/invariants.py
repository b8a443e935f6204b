"""The serving simulation's refusal: what it raises when one of its own invariants breaks.

The continuous-batching simulation (:mod:`sizer.simulator.simulate`) checks as it runs that the KV
tokens it counts are conserved and stay within the cache, that each request finishes once, and that
time moves forward. A broken invariant is a bug, not a user's mistake, but the answer it would give
is wrong: the simulation refuses it with a :class:`~sizer.errors.SizerError` (one line on the command
line, HTTP 422), never a traceback and never a quiet figure.
"""
from __future__ import annotations

from typing import NoReturn

from sizer.errors import SizerError


class SimulationInvariantError(SizerError):
    """The simulation broke one of its own invariants (KV tokens conserved and within the cache, each
    request finished once, time moving forward): the answer is refused rather than given wrong."""

    def __init__(self, what: str):
        super().__init__(f"the serving simulation broke an invariant ({what}); no answer is given rather than a "
                         "wrong one: please report the request that caused it")


def broken(what: str) -> NoReturn:
    """Refuse the run: raise :class:`SimulationInvariantError`.

    Parameters
    ----------
    what : str
        The invariant that broke and the figures that broke it, in words.

    Returns
    -------
    NoReturn
        Never: it always raises.

    Raises
    ------
    SimulationInvariantError
        Always.

    >>> broken("request 3 finished twice")
    Traceback (most recent call last):
    ...
    sizer.simulator.invariants.SimulationInvariantError: the serving simulation broke an invariant (request 3 finished twice)...
    """
    raise SimulationInvariantError(what)
