"""sizer/simulator/scheduler.py: chunked prefill within the token budget, admission by batch slots and the KV
cache, first tokens and ends, and recompute preemption; the cache's totals balance request by request."""
from __future__ import annotations

import pytest

from sizer.simulator.invariants import SimulationInvariantError
from sizer.simulator.kv_cache import KvCache
from sizer.simulator.requests import RequestLedger
from sizer.simulator.scheduler import Scheduler


def _scheduler(prompts, outputs, capacity=100_000, reserving=True, max_batch=256, budget=2048, hit=0.0):
    ledger = RequestLedger(list(prompts), list(outputs), hit)
    return Scheduler(ledger, KvCache(capacity, reserving), max_batch, budget)


def test_a_long_prompt_is_prefilled_in_chunks_of_the_budget():
    s = _scheduler([100], [5], budget=32)
    s.enqueue([0])
    chunks = []
    for _ in range(4):
        chunked, completed = s.schedule()
        chunks.append((chunked, completed))
    assert chunks == [(32, []), (32, []), (32, []), (4, [0])]


def test_running_answers_take_their_tokens_before_prefill():
    s = _scheduler([10, 10, 500], [50, 50, 5], budget=64)
    s.enqueue([0, 1])
    _, completed = s.schedule()
    s.first_tokens(completed, now=1.0, it=0)
    assert s.decoding == 2
    s.enqueue([2])
    chunked, _ = s.schedule()
    assert chunked == 64 - 2 and s.ledger.todo[2] == 500 - 62


def test_admission_stops_at_the_batch_slots():
    s = _scheduler([4] * 10, [3] * 10, max_batch=3, budget=1000)
    s.enqueue(range(10))
    chunked, completed = s.schedule()
    assert chunked == 12 and completed == [0, 1, 2] and len(s.waiting) == 7


def test_a_reserving_cache_admits_only_what_it_can_promise_in_order():
    s = _scheduler([100, 100, 10], [100, 100, 10], capacity=420)
    s.enqueue([0, 1, 2])
    _, completed = s.schedule()
    # 200 + 200 + 20 = 420: all three promised, to the token
    assert completed == [0, 1, 2] and s.kv.reserved == 420
    s2 = _scheduler([100, 300, 10], [100, 100, 10], capacity=420)
    s2.enqueue([0, 1, 2])
    _, completed = s2.schedule()
    # the second (400) does not fit beside the first (200): it and everything behind it wait (first come, first served)
    assert completed == [0] and list(s2.waiting) == [1, 2]


def test_unservable_requests_never_queue():
    s = _scheduler([10, 10], [5, 5])
    s.ledger.refuse(1)
    s.enqueue([0, 1])
    assert list(s.waiting) == [0]


def _run_to_the_end(s: Scheduler, iterations: int) -> list[tuple[int, int]]:
    """Iterations as the simulation runs them (no time): (iteration, request) of each end."""
    ends = []
    for it in range(iterations):
        s.preempt_to_fit(it)
        _, completed = s.schedule()
        s.kv.grow(s.decoding)
        for r in s.end_answers(it) + s.first_tokens(completed, now=float(it), it=it):
            s.kv.release(s.ledger.whole(r))
            s.ledger.finish(r, float(it))
            ends.append((it, r))
        s.kv.check()
    return ends


def test_each_answer_ends_at_its_last_token_and_frees_the_cache():
    s = _scheduler([30, 10, 20], [1, 5, 3], budget=64)
    s.enqueue([0, 1, 2])
    ends = _run_to_the_end(s, 10)
    # all three prompts fit the first iteration's budget and give their first token at its end (iteration 0);
    # a one-token answer ends there, the others after 4 and 2 more decode iterations
    assert ends == [(0, 0), (2, 2), (4, 1)]
    assert (s.kv.used, s.kv.reserved, s.decoding) == (0, 0, 0)
    s.check_conserved(10)


def test_the_youngest_answer_is_preempted_and_recomputed_when_the_cache_runs_out():
    # vLLM's policy on a 120-token cache: two 40-token prompts with 60-token answers cannot both finish
    s = _scheduler([40, 40], [60, 60], capacity=120, reserving=False, budget=100)
    s.enqueue([0, 1])
    ends = _run_to_the_end(s, 200)
    assert s.preemptions >= 1
    assert sorted(r for _, r in ends) == [0, 1]  # both still end, once each
    first_end, second_end = sorted(ends)
    assert first_end[1] == 0 and s.ledger.made[0] == 1  # the older one kept running, never recomputed
    # the younger one was prefilled again with its answer so far (made before the recompute, then one token)
    assert s.ledger.made[1] > 1
    # and every answer has its 60 tokens: those made before the last prefill, then one per iteration to its end
    for end, r in ends:
        assert s.ledger.made[r] + end - s.ledger.start_iter[r] == 60
    assert (s.kv.used, s.decoding) == (0, 0)
    s.check_conserved(200)


def test_a_preempted_request_goes_back_to_the_front_of_the_queue():
    s = _scheduler([40, 40, 5], [60, 60, 5], capacity=120, reserving=False, budget=100, max_batch=2)
    s.enqueue([0, 1, 2])
    for it in range(30):
        s.preempt_to_fit(it)
        if s.preemptions:
            break
        _, completed = s.schedule()
        s.kv.grow(s.decoding)
        s.end_answers(it)
        s.first_tokens(completed, float(it), it)
    assert list(s.waiting)[:2] == [1, 2]  # before the request that arrived after it
    assert s.ledger.todo[1] == 40 + s.ledger.made[1] and s.ledger.held[1] == 0


def test_conservation_is_checked_request_by_request():
    s = _scheduler([30, 10], [20, 20], budget=64)
    s.enqueue([0, 1])
    _run_to_the_end(s, 5)
    s.check_conserved(5)
    s.kv.used += 1  # a token counted that no request holds
    with pytest.raises(SimulationInvariantError, match="counted held at the end"):
        s.check_conserved(5)
