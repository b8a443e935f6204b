"""sizer/simulator/arrivals.py: an open stream hands each request out once, in order of arrival; a closed loop
keeps at most one request per user in flight and sends the next a think time after an answer."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sizer.simulator.arrivals import ClosedLoopArrivals, OpenArrivals, arrivals_for, open_arrival_times
from sizer.simulator.traffic import Lengths, Load


def test_an_open_stream_hands_each_request_out_once_in_order_of_arrival():
    times = np.random.default_rng(1).uniform(0, 10, 200).tolist()
    stream = OpenArrivals(times)
    handed: list[int] = []
    for now in np.linspace(0, 10, 37):
        due = stream.due(float(now))
        assert all(times[r] <= now for r in due)
        assert stream.next_time() > now
        handed += due
    assert sorted(handed) == list(range(200))
    assert [times[r] for r in handed] == sorted(times)
    assert stream.next_time() == math.inf and stream.due(1e9) == []


def test_poisson_gaps_average_one_over_the_rate():
    rate = 4.0
    times = open_arrival_times(Load(rate=rate), Lengths(100, 10), 20_000, np.random.default_rng(0))
    gaps = np.diff([0.0, *times])
    # exponential gaps of mean 1/rate; 20,000 of them: the mean is within ~3 standard errors (1/rate/sqrt(n) = 0.7 %)
    assert np.mean(gaps) == pytest.approx(1 / rate, rel=0.025) and np.all(gaps >= 0)


def test_a_replayed_trace_keeps_its_pattern_at_the_rate_asked():
    # (a trace's arrivals reach the simulation only where the request asked for them: trace_arrivals)
    arrivals = np.array([0.0, 0.5, 0.5, 3.0])  # its own rate: 3 gaps over 3 s, 1 request/s
    trace = Lengths(trace=(np.array([10, 20, 30, 40]), np.array([1, 2, 3, 4]), arrivals))
    assert open_arrival_times(Load(rate=1.0), trace, 4, np.random.default_rng(0)) == [0.0, 0.5, 0.5, 3.0]
    assert open_arrival_times(Load(rate=1.0), trace, 3, np.random.default_rng(0)) == [0.0, 0.5, 0.5]
    # at twice its rate every gap is halved, never the rate replaced by the trace's own (issue 43)
    assert open_arrival_times(Load(rate=2.0), trace, 4, np.random.default_rng(0)) == [0.0, 0.25, 0.25, 1.5]
    # more requests than rows: the trace again, one mean gap after its last arrival
    assert open_arrival_times(Load(rate=1.0), trace, 6, np.random.default_rng(0)) == [0.0, 0.5, 0.5, 3.0, 4.0, 4.5]


def test_a_closed_loop_starts_one_request_per_user_and_sends_the_next_after_the_think_time():
    users = ClosedLoopArrivals(users=3, requests=5, think_time=2.0)
    assert users.due(0.0) == [0, 1, 2] and users.next_time() == math.inf
    assert users.times == [0.0, 0.0, 0.0, math.inf, math.inf]
    users.on_finished(1.0)
    users.on_finished(1.5)
    assert users.due(2.9) == [] and users.next_time() == 3.0
    assert users.due(3.2) == [3] and users.due(3.5) == [4]
    users.on_finished(4.0)  # every request was sent: no more
    assert users.next_time() == math.inf and users.times == [0.0, 0.0, 0.0, 3.0, 3.5]


def test_more_users_than_requests_send_every_request_at_once():
    users = ClosedLoopArrivals(users=10, requests=4, think_time=0.0)
    assert users.due(0.0) == [0, 1, 2, 3] and users.times == [0.0] * 4


def test_the_load_picks_the_kind_of_arrivals():
    rng = np.random.default_rng(0)
    assert isinstance(arrivals_for(Load(rate=2.0), Lengths(10, 10), 10, rng), OpenArrivals)
    closed = arrivals_for(Load(users=2, think_time=1.0), Lengths(10, 10), 10, rng)
    assert isinstance(closed, ClosedLoopArrivals) and closed.due(0.0) == [0, 1]
