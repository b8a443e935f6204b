"""A timed-out estimate stops computing (issue 12 item 1): the cooperative deadline of
``sizer.deadline``, checked by the core's loops, and the service's 503 that sets it."""
from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

import sizer.plan.layout_basis
import sizer.plan.recommend
from api.app import create_app
from api.settings import Settings
from sizer.deadline import check_deadline, time_limit
from sizer.errors import EstimateTimeout, SizerError
from sizer.plan.recommend import RecommendRequest, recommend

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# The issue's request: 84 bytes that cost seconds of CPU, every device missing a 1 s deadline
# at every count from 1 to 65,536.
ISSUE_REQUEST = {"params": 1e3, "samples": 1e30, "batch_size": 1e30, "max_devices": 65536, "deadline": "1 s"}
# A request that must try most counts on most devices (about a CPU-second, more on a loaded machine).
COSTLY = {"params": 1e3, "samples": 1e13, "batch_size": 1e13, "max_devices": 65536, "deadline": "1 s"}


def test_an_unreachable_deadline_is_answered_by_one_engine_call(monkeypatch, catalog):
    # C = 6e33 FLOP cannot be done in 1 s on 65,536 of any device. Every count of every device used to be
    # sized and timed one by one (seconds of CPU); the engine evaluates them all in one call.
    calls = []
    _forget_kept_answers()
    search = sizer.plan.layout_basis.search
    monkeypatch.setattr(sizer.plan.layout_basis, "search", lambda *a, **k: calls.append(1) or search(*a, **k))
    result = recommend(RecommendRequest(**ISSUE_REQUEST), catalog)
    assert not result.ranked and len(calls) == 1
    assert all("misses deadline" in r.reason or "support" in r.reason for r in result.rejected)


def _forget_kept_answers():
    """The engine is to be called: no answer or layout search kept from an earlier test."""
    sizer.plan.recommend._answer.cache_clear()
    sizer.plan.layout_basis._kept.cache_clear()


def test_no_deadline_no_error():
    check_deadline()  # the command line sets none
    with time_limit(60):
        check_deadline()


def test_a_passed_deadline_stops_a_recommendation(catalog):
    with time_limit(0), pytest.raises(EstimateTimeout, match="longer than 0 s"):
        recommend(RecommendRequest(params=7e9, tokens=2e10), catalog)
    assert issubclass(EstimateTimeout, SizerError)  # the CLI's one message, exit 2


def test_the_deadline_ends_with_its_block(catalog):
    with time_limit(0), pytest.raises(EstimateTimeout):
        check_deadline()
    assert recommend(RecommendRequest(params=7e9, tokens=2e10), catalog).ranked


def test_a_timed_out_request_stops_computing(monkeypatch, catalog):
    # The engine call is made slow (0.3 s) so that the 0.1 s limit passes inside it; the ranking loop
    # that follows checks the deadline per device and must stop at once, not rank every device.
    devices = len(catalog)
    calls = []
    _forget_kept_answers()
    search, choose = sizer.plan.layout_basis.search, sizer.plan.recommend._choose

    def slow_search(*args, **kwargs):
        time.sleep(0.3)
        return search(*args, **kwargs)

    def counted(*args, **kwargs):
        calls.append(time.monotonic())
        return choose(*args, **kwargs)

    monkeypatch.setattr(sizer.plan.layout_basis, "search", slow_search)
    monkeypatch.setattr(sizer.plan.recommend, "_choose", counted)
    client = TestClient(create_app(Settings(timeout_s=0.1)), raise_server_exceptions=False)
    response = client.post("/v1/recommend", json=COSTLY)
    assert response.status_code == 503, response.text[:300]
    assert "longer than 0.1 s" in response.json()["detail"]
    # Wait (bounded) until the worker thread has stopped calling the core.
    seen = -1
    for _ in range(100):
        time.sleep(0.1)
        if len(calls) == seen:
            break
        seen = len(calls)
    assert len(calls) < devices, f"{len(calls)} of {devices} devices ranked after the time-out"
    assert client.post("/v1/peak", json={"device": "Tesla P40"}).status_code == 200  # the service goes on
