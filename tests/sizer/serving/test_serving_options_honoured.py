"""Every serving option honoured or refused (sizer/serving/under_load.py, capacity.py, estimate.py): traffic-only
fields without a load are refused naming rate; a deployment that does not fit gets no replica count; a replica
count that misses its own SLOs is not returned; the optimistic end of a speed range never beats the datasheet
bandwidth."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.units import parse_quantity
from sizer.workloads.registry import find_model


@pytest.mark.parametrize("field, value", [("lengths", "azure-conv"), ("trace", "100,20\n"), ("slo_ttft", "2 s"),
                                          ("max_running", 64), ("token_budget", 512), ("prefix_cache_hit", 0.5),
                                          ("replicas", 2)])
def test_traffic_options_without_a_load_name_rate(field, value):
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-2-7b", device="H100 SXM", **{field: value}))
    assert error.value.field == "rate" and field in str(error.value)


def test_a_serving_runtime_without_a_load_is_applied_not_ignored():
    # offline, the runtime's memory share sizes the largest batch (SGLang's mem_fraction_static 0.88, vLLM's 0.9)
    notes = {name: next(a.value for a in estimate_inference(InferenceRequest(
        model="llama-2-7b", device="H100 SXM", runtime=name)).assumptions if a.name == "runtime memory")
        for name in ("vllm", "sglang")}
    assert notes["vllm"].startswith("90%") and notes["sglang"].startswith("88%")


def test_a_deployment_that_does_not_fit_gets_no_replica_count():
    # the adversarial pass's 120-byte body: 13.5 GB of weights on a 12 GB card answered "1 replica"
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="rtx-3060", rate=1000, max_running=4096,
                                            lengths="azure-code", prefix_cache_hit=0.95))
    assert r.capacity.replicas is None and not r.capacity.slo_met and not r.fits
    assert r.cost_per_million_tokens is None


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rate=st.floats(0.5, 80.0), ttft=st.sampled_from(["300 ms", "1 s", "3 s"]), tpot=st.sampled_from(["20 ms", "60 ms"]))
def test_a_returned_replica_count_meets_its_own_slos(rate, ttft, tpot):
    r = estimate_inference(InferenceRequest(model="llama-3-8b", device="H100 SXM", prompt_len=512, output_len=128,
                                            rate=rate, slo_ttft=ttft, slo_tpot=tpot))
    if r.capacity.replicas is not None:
        assert r.capacity.slo_met


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["llama-2-7b", "llama-2-70b", "llama-3-8b"]),
       device=st.sampled_from(["MI300X", "H100 SXM", "A100 80GB", "RTX 4090", "L40S"]),
       count=st.sampled_from([1, 2, 4, 8]), weights=st.sampled_from(["bf16", "awq-int4-g128"]))
@example(model="llama-2-70b", device="MI300X", count=1, weights="bf16")
def test_the_optimistic_end_never_beats_the_bandwidth_limit(catalog, model, device, count, weights):
    # batch 1: every stored weight streams from memory once per token, at most at the datasheet bandwidth
    # (the case: 70B bf16 on one MI300X up to 40.3 tokens/s against a 37.6 limit)
    r = estimate_inference(InferenceRequest(model=model, device=device, count=count, weights=weights, batch=1,
                                            prompt_len=128, output_len=128))
    bandwidth = parse_quantity("bandwidth", catalog.find(device).memory_bandwidth.value, "[information]/[time]")
    arch = find_model(model)
    bits = {"bf16": 16.0, "awq-int4-g128": 4.0}[weights]  # lower than stored (scales, 16-bit edges): a looser limit
    limit = float(bandwidth.to("B/s").magnitude) * count / (arch.params_total() * bits / 8)
    assert r.decode_tokens_per_s.high <= limit * 1.0001
    assert r.decode_tokens_per_s.low <= r.decode_tokens_per_s.expected <= r.decode_tokens_per_s.high


def test_the_stated_percentile_interval_covers_the_true_p99_about_95_percent_of_the_time():
    # exponential latencies of mean 1: the true p99 is ln(100); with 667 requests (the p99 rule) the order-statistic
    # interval should hold it in about 95 % of 400 repetitions (binomial noise of 400 draws: +/- 2.5 points)
    import math

    import numpy as np

    from sizer.serving.capacity import percentile_interval, simulated_requests

    rng = np.random.default_rng(7)
    n = simulated_requests(99.0)
    hits = 0
    for _ in range(400):
        lo, hi = percentile_interval(rng.exponential(1.0, n), 99.0)
        hits += lo <= math.log(100) <= hi
    assert 0.90 <= hits / 400 <= 0.995


def test_recommended_rows_keep_the_bandwidth_limit_too(catalog):
    # the same limit on every row of recommend --inference (70B bf16, one sequence)
    from sizer.facade import InferenceRecommendRequest, recommend_inference

    r = recommend_inference(InferenceRecommendRequest(model="llama-2-70b", weights="bf16", batch=1, kinds=["gpu"]))
    params = find_model("llama-2-70b").params_total()
    for row in r.ranked:
        bandwidth = parse_quantity("bandwidth", catalog.find(row.device).memory_bandwidth.value, "[information]/[time]")
        limit = float(bandwidth.to("B/s").magnitude) * row.count / (params * 2.0)
        assert row.decode_tokens_per_s.high <= limit * 1.0001, row.name
