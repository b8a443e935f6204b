"""sizer/simulator/kv_cache.py: admission under both policies at the cache's edge, the bookkeeping of held and
promised tokens, and the invariants it refuses to break."""
from __future__ import annotations

import pytest

from sizer.simulator.invariants import SimulationInvariantError
from sizer.simulator.kv_cache import KvCache


def test_a_reserving_cache_admits_while_the_promises_fit_exactly():
    cache = KvCache(capacity=1000, reserving=True)
    cache.admit(whole=600, held=101)
    assert cache.admits(need=0, whole=400, decoding=0)  # 600 + 400 = 1000: fits to the token
    assert not cache.admits(need=0, whole=401, decoding=0)
    # what is held does not matter to a reserving cache, only what was promised
    cache.grow(800)
    assert cache.admits(need=500, whole=400, decoding=50)


def test_a_non_reserving_cache_admits_the_prompt_its_first_token_and_this_iterations_answers():
    cache = KvCache(capacity=1000, reserving=False)
    cache.admit(whole=10_000, held=500)  # a promise far over the cache: only what is held counts
    # 500 held + 99 answer tokens this iteration + a 400-token prompt + its first token = 1000
    assert cache.admits(need=400, whole=10_000, decoding=99)
    assert not cache.admits(need=400, whole=10_000, decoding=100)


def test_held_and_promised_tokens_come_back_to_zero():
    cache = KvCache(capacity=1000, reserving=True)
    cache.admit(whole=300, held=201)  # a 200-token prompt with its first token's slot, 100 answer tokens promised
    for _ in range(99):
        cache.grow(1)
    assert (cache.used, cache.reserved) == (300, 300)
    cache.free(300)
    cache.release(300)
    assert (cache.used, cache.reserved) == (0, 0)
    cache.check()


def test_overfull_and_the_decode_steps_left():
    cache = KvCache(capacity=100, reserving=False)
    cache.grow(90)
    assert not cache.overfull(10) and cache.overfull(11)
    assert cache.decode_steps_left(3) == 3  # 10 free tokens: three more tokens for each of 3 answers


@pytest.mark.parametrize("used, reserved, reserving", [(101, 0, False), (-1, 0, False), (0, -1, False), (0, 101, True)])
def test_a_count_outside_the_cache_is_refused(used, reserved, reserving):
    cache = KvCache(capacity=100, reserving=reserving)
    cache.used, cache.reserved = used, reserved
    with pytest.raises(SimulationInvariantError, match="of a cache of 100"):
        cache.check()


def test_promises_over_the_cache_are_allowed_when_not_reserving():
    cache = KvCache(capacity=100, reserving=False)
    cache.admit(whole=500, held=50)  # vLLM admits on the prompt; the answers may outgrow the cache later
    cache.check()


def test_conservation_at_the_end():
    cache = KvCache(capacity=1000, reserving=True)
    cache.admit(whole=300, held=201)
    cache.check_conserved(held=201, promised=300)
    with pytest.raises(SimulationInvariantError, match="hold 200"):
        cache.check_conserved(held=200, promised=300)
    with pytest.raises(SimulationInvariantError, match="promised 299"):
        cache.check_conserved(held=201, promised=299)
    # a non-reserving cache's promises are not an invariant
    loose = KvCache(capacity=1000, reserving=False)
    loose.admit(whole=300, held=201)
    loose.check_conserved(held=201, promised=0)
