"""sizer.serving.ranking: the objective's sort keys, the one-8-bit-format rule and the largest batch
per count, alone and as the offline recommender uses them."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sizer.serving.ranking import (
    EIGHT_BIT,
    keeps_format,
    largest_batch_per_count,
    load_key,
    offline_key,
    preferred_eight_bit,
)
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference

costs = st.one_of(st.none(), st.floats(0.0, 1e6, allow_nan=False))
bases = st.sampled_from([None, "rent", "buy"])


def test_cost_ranks_rents_then_purchases_then_unpriced_whatever_the_cost():
    rent = offline_key("cost", 9.0, "rent", 1, 1.0, 1.0)
    buy = offline_key("cost", 0.1, "buy", 1, 1.0, 1.0)
    unpriced = offline_key("cost", None, None, 1, 1.0, 1.0)
    assert sorted([unpriced, buy, rent]) == [rent, buy, unpriced]


def test_cost_within_a_basis_is_cheapest_first_then_fewest_devices():
    assert offline_key("cost", 1.0, "rent", 8, 1.0, 1.0) < offline_key("cost", 2.0, "rent", 1, 1.0, 1.0)
    assert offline_key("cost", 1.0, "rent", 1, 1.0, 1.0) < offline_key("cost", 1.0, "rent", 2, 1.0, 1.0)


def test_latency_ranks_the_shorter_request_first():
    assert offline_key("latency", None, None, 8, 0.5, 1.0) < offline_key("latency", 0.1, "rent", 1, 0.6, 1e6)


def test_throughput_is_per_device():
    # 100 tokens/s on one device beats 150 tokens/s on two (75 per device)
    assert offline_key("throughput", None, None, 1, 9.0, 100.0) < offline_key("throughput", None, None, 2, 1.0, 150.0)


@given(costs, bases, costs, bases)
def test_an_unpriced_deployment_never_ranks_before_a_priced_one(a, basis_a, b, basis_b):
    keys = [load_key("cost", 1.0 if a is not None else None, 1, 1, a, 1.0, 1.0, basis_a if a is not None else None),
            load_key("cost", 1.0 if b is not None else None, 1, 1, b, 1.0, 1.0, basis_b if b is not None else None)]
    first, second = sorted(keys)
    assert not (first[0] and not second[0])  # first[0]: no cost known


def test_load_key_counts_every_replica_and_rates_per_device():
    # same cost: fewer devices in all (2 x 2 = 4 before 1 x 8)
    assert load_key("cost", 2.0, 2, 2, 1.0, 1.0, 1.0, "rent") < load_key("cost", 2.0, 1, 8, 1.0, 1.0, 1.0, "rent")
    # a known cost with no hourly price cannot arise, but an unknown hourly price ranks after a known one on a tie
    assert load_key("cost", 2.0, 1, 1, 1.0, 1.0, 1.0, "rent") < load_key("cost", None, 1, 1, 1.0, 1.0, 1.0, "rent")
    # throughput: 3 requests/s per replica of 2 devices (1.5 per device) after 2 on one device
    assert load_key("throughput", None, 1, 1, None, 1.0, 2.0) < load_key("throughput", None, 2, 1, None, 1.0, 3.0)
    assert load_key("latency", None, 4, 4, None, 100.0, 1.0) < load_key("latency", None, 1, 1, None, 200.0, 1.0)


def test_fp8_is_preferred_to_int8_and_one_8_bit_format_is_kept():
    assert EIGHT_BIT == ("fp8", "w8a8")
    assert preferred_eight_bit(["bf16", "w8a8", "fp8"]) == "fp8"
    assert preferred_eight_bit(iter(["w8a8", "awq-int4-g128"])) == "w8a8"
    assert preferred_eight_bit(["bf16"]) is None
    kept = [name for name in ("bf16", "fp8", "w8a8", "awq-int4-g128") if keeps_format(name, "fp8")]
    assert kept == ["bf16", "fp8", "awq-int4-g128"]
    assert [n for n in ("bf16", "fp8", "w8a8") if keeps_format(n, None)] == ["bf16"]


def test_largest_batch_per_count_keeps_the_first_of_equal_batches_in_order_of_counts():
    counts = np.array([2.0, 1.0, 2.0, 1.0, 2.0])
    batches = np.array([8.0, 4.0, 16.0, 4.0, 16.0])
    assert largest_batch_per_count(np.array([0, 1, 2, 3, 4]), counts, batches) == [2, 1]
    assert largest_batch_per_count([3, 0], counts, batches) == [3, 0]
    assert largest_batch_per_count([], counts, batches) == []


def test_the_offline_ranking_follows_the_objective():
    # throughput: output tokens/s per device never rises down the ranking
    ranked = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="fp16", kv_cache="fp16",
                                                           kinds=["gpu"], objective="throughput")).ranked
    per_device = [row.total_tokens_per_s.expected / row.count for row in ranked]
    assert len(per_device) > 3 and per_device == sorted(per_device, reverse=True)
    # cost: rents by cost, and rows without a price last
    ranked = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="fp16", kv_cache="fp16",
                                                           kinds=["gpu"])).ranked
    priced = [row.cost_per_million_tokens is not None for row in ranked]
    assert priced == sorted(priced, reverse=True) and any(priced)
    rents = [row.cost_per_million_tokens.expected for row in ranked if row.price_basis == "rent"]
    assert rents == sorted(rents)
