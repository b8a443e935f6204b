"""sizer/simulator/requests.py: each request's prefill to compute, its promise, and one end each."""
from __future__ import annotations

import math

import pytest

from sizer.simulator.invariants import SimulationInvariantError
from sizer.simulator.requests import RequestLedger


def test_the_prefix_cache_leaves_at_least_one_token_to_compute():
    ledger = RequestLedger([1000, 3, 7], [10, 1, 2], prefix_hit=0.9)
    assert ledger.todo == [100, 1, 1]  # round(1000 x 0.1); a whole hit still computes the last token
    assert RequestLedger([1000], [1], prefix_hit=1.0).todo == [1]
    assert RequestLedger([1000], [1], prefix_hit=0.0).todo == [1000]


def test_a_request_starts_unstarted():
    ledger = RequestLedger([5, 6], [7, 8], prefix_hit=0.0)
    assert all(math.isnan(t) for t in ledger.first + ledger.done)
    assert ledger.held == [0, 0] and ledger.alive == [False, False] and ledger.finished == 0
    assert ledger.whole(1) == 14


def test_an_unservable_request_ends_at_the_start_as_a_failure():
    ledger = RequestLedger([5, 6], [7, 8], prefix_hit=0.0)
    ledger.refuse(0)
    assert ledger.unservable == [True, False] and ledger.done[0] == math.inf and ledger.finished == 1


def test_a_request_ends_once():
    ledger = RequestLedger([5, 6], [7, 8], prefix_hit=0.0)
    ledger.finish(1, 3.0)
    assert ledger.done[1] == 3.0 and ledger.finished == 1
    with pytest.raises(SimulationInvariantError, match="request 1 finished twice"):
        ledger.finish(1, 4.0)
    ledger.refuse(0)
    with pytest.raises(SimulationInvariantError, match="request 0 finished twice"):
        ledger.finish(0, 4.0)
