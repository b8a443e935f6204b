"""sizer/simulator/metrics.py: the latencies and rates of a run, checked on runs written out by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sizer.simulator.metrics import (
    WARMUP_SHARE,
    RunTotals,
    empty_result,
    measured_requests,
    steady_rates,
    summarize,
    window_rates,
)


def _totals(finished: int, now: float = 100.0, busy: float = 50.0) -> RunTotals:
    return RunTotals(finished=finished, preemptions=2, busy_seconds=busy, simulated_seconds=now, iterations=7,
                     kv_capacity=4096)


def test_the_warm_up_and_the_unfinished_are_not_measured():
    arrival = np.arange(20.0)[::-1]  # the last index arrived first
    done = arrival + 1.0
    done[5] = math.nan  # never ended
    done[6] = math.inf  # never servable
    measured = measured_requests(arrival, done)
    warmup = int(20 * WARMUP_SHARE)  # the first two by arrival: requests 19 and 18
    assert set(measured) == set(range(20 - warmup)) - {5, 6}
    assert list(arrival[measured]) == sorted(arrival[measured])  # in order of arrival


def test_a_run_written_out_by_hand():
    # 10 requests arriving 1 s apart, each of 100 prompt and 11 output tokens: first token 0.5 s after arrival,
    # then 10 tokens 0.1 s apart, so TTFT 0.5 s, TPOT 0.1 s, E2E 1.5 s; the first (the warm-up tenth) is not measured
    arrivals = [float(i) for i in range(10)]
    first = [a + 0.5 for a in arrivals]
    done = [a + 1.5 for a in arrivals]
    prompts, outputs = np.full(10, 100), np.full(10, 11)
    run = summarize(arrivals, first, done, prompts, outputs, _totals(finished=10))
    assert len(run.ttft) == 9 and np.allclose(run.ttft, 0.5) and np.allclose(run.e2e, 1.5)
    assert np.allclose(run.tpot, 0.1)
    # the window: from the first measured arrival (1 s) to the last end (10.5 s)
    assert run.output_tokens_per_s == pytest.approx(9 * 11 / 9.5)
    assert run.total_tokens_per_s == pytest.approx(9 * 111 / 9.5)
    assert run.request_rate == pytest.approx(9 / 9.5)
    assert run.complete and run.busy == 0.5 and run.preemptions == 2 and run.iterations == 7 and run.kv_capacity == 4096


def test_one_token_answers_have_no_time_per_output_token():
    run = summarize([0.0] * 10, [1.0] * 10, [1.0] * 10, np.full(10, 5), np.ones(10, dtype=int), _totals(10))
    assert len(run.tpot) == 0 and len(run.ttft) == 9


def test_a_run_with_a_request_not_ended_is_not_complete():
    done = [2.0] * 9 + [math.nan]
    run = summarize([0.0] * 10, [1.0] * 10, done, np.full(10, 5), np.full(10, 3), _totals(9))
    assert not run.complete and run.percentile("ttft", 50) == math.inf
    assert len(run.e2e) == 8  # the warm-up one and the unfinished one left out


def test_busy_is_a_share_of_the_simulated_time():
    run = summarize([0.0] * 10, [1.0] * 10, [2.0] * 10, np.full(10, 5), np.full(10, 3), _totals(10, now=10.0, busy=12.0))
    assert run.busy == 1.0


def test_steady_rates_over_the_middle_of_the_completions():
    # 100 completions 0.5 s apart, 40 tokens each: 2 requests/s and 80 tokens/s between the 20th and 80th percentile
    done = np.arange(100) * 0.5
    assert steady_rates(done, np.full(100, 40)) == pytest.approx((80.0, 2.0))
    assert steady_rates(np.arange(9.0), np.full(9, 40)) == (0.0, 0.0)  # too few completions
    assert steady_rates(np.zeros(20), np.full(20, 40)) == (0.0, 0.0)  # all at once: no span


def test_nothing_measured_is_zero_rates_and_nothing_served_is_an_empty_result():
    assert window_rates(np.zeros(3), np.zeros(3), np.ones(3), np.ones(3), np.array([], dtype=int)) == (0.0, 0.0, 0.0)
    empty = empty_result(1234)
    assert not empty.complete and empty.kv_capacity == 1234 and len(empty.ttft) == 0
    assert empty.percentile("e2e", 99) == math.inf
