"""When the simulated requests arrive: an open stream, or a closed loop of users.

An open load (a Poisson ``rate``, or, where the request asks, a trace's arrival times scaled to the rate) fixes
every arrival before the run;
requests enter the queue in order of arrival. A closed loop of ``users`` starts with one request per
user at time 0; each user sends its next request a think time after its last answer ended, so
arrivals are known only as the run goes (:meth:`ClosedLoopArrivals.on_finished`).

Both keep ``times``, the arrival of every request [s] (inf: not sent), from which the latencies are
measured (:mod:`sizer.simulator.metrics`).
"""
from __future__ import annotations

import heapq
import math
from typing import Protocol

import numpy as np

from sizer.simulator.traffic import Lengths, Load, poisson_arrivals, trace_rate


class Arrivals(Protocol):
    """What the simulation asks of its arrivals."""

    times: list[float]  # arrival of every request [s]; inf: not (yet) sent

    def due(self, now: float) -> list[int]:
        """The requests arrived by ``now`` and not yet handed out, in order of arrival.

        Parameters
        ----------
        now : float
            Simulated time [s].

        Returns
        -------
        list of int
            Their indices [1].
        """

    def next_time(self) -> float:
        """The next arrival not yet handed out.

        Returns
        -------
        float
            Its time [s]; inf when none is known.
        """

    def on_finished(self, now: float) -> None:
        """A request ended (a closed loop's user sends its next).

        Parameters
        ----------
        now : float
            Simulated time of the end [s].
        """


def replayed_arrivals(arrivals: np.ndarray, rate: float, requests: int) -> np.ndarray:
    """A trace's arrival times for ``requests`` requests at ``rate``: the trace repeated as often as needed (one mean
    gap between the repeats), every gap scaled by its own rate over ``rate``, so that the pattern (bursts, lulls) is
    the trace's and the mean rate the one asked (the capacity search and each replica's share keep their meaning).

    Parameters
    ----------
    arrivals : numpy.ndarray
        The trace's arrival times [s], not decreasing.
    rate : float
        The mean rate asked [1/s].
    requests : int
        Arrivals wanted [1].

    Returns
    -------
    numpy.ndarray
        Arrival times [s], from 0, not decreasing.

    >>> replayed_arrivals(np.array([5.0, 6.0, 8.0]), 3.0, 5).round(3).tolist()
    [0.0, 0.222, 0.667, 1.0, 1.222]
    """
    own = trace_rate(arrivals)
    start = arrivals - arrivals[0]
    if own == math.inf:  # all at once, repeated at the rate asked
        return np.repeat(np.arange(math.ceil(requests / len(arrivals))) * len(arrivals) / rate, len(arrivals))[:requests]
    period = len(arrivals) / own  # the span and one mean gap
    idx = np.arange(requests)
    times: np.ndarray = (start[idx % len(arrivals)] + (idx // len(arrivals)) * period) * (own / rate)
    return times


def open_arrival_times(load: Load, lengths: Lengths, requests: int, rng: np.random.Generator) -> list[float]:
    """Arrival times of an open load: a trace's own where the request asked to replay them (scaled to the rate:
    :func:`replayed_arrivals`), else Poisson at the rate.

    Parameters
    ----------
    load : Load
        The open load (its ``rate`` [1/s] is set).
    lengths : Lengths
        Where the lengths come from; a trace may carry arrival times [s].
    requests : int
        Requests simulated [1].
    rng : numpy.random.Generator
        Draws the Poisson gaps (after the lengths were drawn from it).

    Returns
    -------
    list of float
        Arrival of each request [s].
    """
    trace = lengths.trace
    assert load.rate is not None, "an open load has a rate"
    if trace is not None and trace[2] is not None:  # (kept by the request only when it asked to replay them)
        times = replayed_arrivals(trace[2], load.rate, requests)
    else:
        times = poisson_arrivals(load.rate, requests, rng)
    return [float(t) for t in times.tolist()]


class OpenArrivals:
    """Requests that arrive at times fixed before the run.

    >>> stream = OpenArrivals([0.5, 0.1, 2.0])
    >>> stream.due(0.6), stream.next_time(), stream.due(1.0)
    ([1, 0], 2.0, [])
    """

    def __init__(self, times: list[float]) -> None:
        self.times = times
        self._order: list[int] = np.argsort(times, kind="stable").tolist()
        self._next = 0  # into _order

    def due(self, now: float) -> list[int]:
        """The requests arrived by ``now`` and not yet handed out, in order of arrival.

        Parameters
        ----------
        now : float
            Simulated time [s].

        Returns
        -------
        list of int
            Their indices [1].
        """
        order, times, n = self._order, self.times, len(self._order)
        arrived = []
        while self._next < n and times[order[self._next]] <= now:
            arrived.append(order[self._next])
            self._next += 1
        return arrived

    def next_time(self) -> float:
        """The next arrival not yet handed out [s]; inf after the last.

        Returns
        -------
        float
            Its time [s].
        """
        return self.times[self._order[self._next]] if self._next < len(self._order) else math.inf

    def on_finished(self, now: float) -> None:
        """Nothing: an open stream does not wait for answers.

        Parameters
        ----------
        now : float
            Simulated time of the end [s].
        """


class ClosedLoopArrivals:
    """``users`` users, each sending its next request ``think_time`` after its last answer ended.

    >>> users = ClosedLoopArrivals(users=2, requests=3, think_time=1.0)
    >>> users.due(0.0), users.next_time()
    ([0, 1], inf)
    >>> users.on_finished(4.0); users.next_time(), users.times
    (5.0, [0.0, 0.0, 5.0])
    """

    def __init__(self, users: int, requests: int, think_time: float) -> None:
        first = min(users, requests)
        self.times: list[float] = [0.0] * first + [math.inf] * (requests - first)
        self._pending: list[tuple[float, int]] = [(0.0, r) for r in range(first)]  # a heap of (arrival [s], request)
        self._next_request = first  # the request a user sends next
        self._requests = requests
        self._think_time = think_time

    def due(self, now: float) -> list[int]:
        """The requests sent by ``now`` and not yet handed out, in order of arrival.

        Parameters
        ----------
        now : float
            Simulated time [s].

        Returns
        -------
        list of int
            Their indices [1].
        """
        pending = self._pending
        arrived = []
        while pending and pending[0][0] <= now:
            arrived.append(heapq.heappop(pending)[1])
        return arrived

    def next_time(self) -> float:
        """The next request a user has sent but not yet handed out [s]; inf when none.

        Returns
        -------
        float
            Its time [s].
        """
        return self._pending[0][0] if self._pending else math.inf

    def on_finished(self, now: float) -> None:
        """A user's answer ended: its next request is sent after the think time, while requests remain.

        Parameters
        ----------
        now : float
            Simulated time of the end [s].
        """
        if self._next_request < self._requests:
            arrival = now + self._think_time
            heapq.heappush(self._pending, (arrival, self._next_request))
            self.times[self._next_request] = arrival
            self._next_request += 1


def arrivals_for(load: Load, lengths: Lengths, requests: int, rng: np.random.Generator) -> OpenArrivals | ClosedLoopArrivals:
    """The arrivals of ``requests`` requests under ``load``.

    Parameters
    ----------
    load : Load
        A Poisson rate [1/s] (or a trace's times), or closed-loop users with a think time [s].
    lengths : Lengths
        Where the lengths come from (a trace may carry arrival times [s]).
    requests : int
        Requests simulated [1].
    rng : numpy.random.Generator
        Draws Poisson gaps.

    Returns
    -------
    OpenArrivals or ClosedLoopArrivals
        The open stream when the load has a rate, else the closed loop.
    """
    if load.rate is not None:
        return OpenArrivals(open_arrival_times(load, lengths, requests, rng))
    assert load.users is not None, "a closed load has users"
    return ClosedLoopArrivals(load.users, requests, load.think_time)
