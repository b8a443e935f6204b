"""The price of a serving question under load (sizer.serving.load_price): its laws, and the refusal over a budget."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.errors import InputErrors
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.load_price import recommend_serving_iterations, refuse_over_budget, serving_iterations, simulation_iterations
from sizer.simulator.simulate import MAX_ITERATIONS, MAX_REQUESTS

BASE = {"model": "llama-3.1-8b", "device": "H100 SXM"}


def _price(**fields) -> float:
    return serving_iterations(InferenceRequest(**BASE, **fields))


def test_no_load_no_simulation_no_price():
    assert _price() == 0.0


def test_one_simulation_is_its_tokens_over_the_budget_plus_its_answers_over_the_slots():
    # 100 requests of 1,000 prompt and 100 output tokens, 2,000 tokens an iteration, 50 running:
    # 100 x (1100 / 2000 + 100 / 50) = 255 iterations (the module's equation, worked by hand)
    assert simulation_iterations(100, 1000, 100, 0.0, 2000, 50) == pytest.approx(255.0)
    assert simulation_iterations(1e9, 1000, 100, 0.0, 64, 1) == MAX_ITERATIONS  # the simulator's own bound


@settings(max_examples=40, deadline=None)
@given(users=st.integers(1, 100_000), more=st.integers(0, 100_000), budget=st.sampled_from([64, 256, 2048, 8192]),
       running=st.sampled_from([1, 16, 256, 4096]))
def test_more_users_never_cost_less_and_a_larger_token_budget_never_costs_more(users, more, budget, running):
    fewer = _price(users=users, slo_e2e="5 s", token_budget=budget, max_running=running)
    assert _price(users=min(users + more, 100_000), slo_e2e="5 s", token_budget=budget, max_running=running) >= fewer
    assert _price(users=users, slo_e2e="5 s", token_budget=min(budget * 2, 65536), max_running=running) <= fewer


def test_a_latency_limit_costs_a_capacity_search():
    assert _price(rate=10, slo_ttft="1 s") > _price(rate=10)


def test_over_the_budget_the_refusal_names_each_field_that_lowers_the_price():
    request = InferenceRequest(model="deepseek-v3", device="H200", count=8, users=100000, slo_e2e="1 ms",
                               max_running=4096, token_budget=64)
    price = serving_iterations(request)
    with pytest.raises(InputErrors) as refused:
        refuse_over_budget(request, price, 2e6)
    assert {e.field for e in refused.value.errors} >= {"users", "max_running", "token_budget", "slo_e2e"}
    refuse_over_budget(request, price, price)  # at the budget: not refused


def test_a_simulation_counts_between_10_and_max_requests_requests():
    # fewer than 10 requests are priced as 10, more than the simulator's MAX_REQUESTS as MAX_REQUESTS
    assert simulation_iterations(1, 100, 10, 0.0, 100, 10) == simulation_iterations(10, 100, 10, 0.0, 100, 10)
    assert (simulation_iterations(10 * MAX_REQUESTS, 1, 1, 0.0, 1000, 1000)
            == simulation_iterations(MAX_REQUESTS, 1, 1, 0.0, 1000, 1000))


def test_a_prefix_cache_hit_takes_its_share_of_the_prompt_off():
    # 100 x ((1000 x 0.5 + 100) / 2000 + 100 / 50) = 230 iterations, by hand
    assert simulation_iterations(100, 1000, 100, 0.5, 2000, 50) == pytest.approx(230.0)


def test_ranking_more_devices_costs_more_and_no_load_costs_nothing():
    request = InferenceRequest(**BASE, rate=5)
    assert 0 < recommend_serving_iterations(request, 2) < recommend_serving_iterations(request, 20)
    assert recommend_serving_iterations(InferenceRequest(**BASE), 40) == 0.0


def test_fields_at_their_defaults_are_not_named_and_fixed_lengths_are():
    request = InferenceRequest(**BASE, users=500)
    with pytest.raises(InputErrors) as refused:
        refuse_over_budget(request, 2.0, 1.0)
    fields = {e.field for e in refused.value.errors}
    # vLLM's default budget and slots: raising them lowers nothing; fixed lengths: shorter requests do
    assert fields == {"users", "prompt_len", "output_len"}
