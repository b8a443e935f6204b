"""`recommend --inference` under load searches weight x KV formats with device x TP x replicas (issue 16):
each row says its formats, a given format pins its dimension, 8-bit weight-and-activation formats only
where the device has the peak, and the leading rows meet the SLOs at the asked load."""
from __future__ import annotations

import json

import pytest

from sizer.hardware.catalog import load_catalog
from sizer.runtimes.precision_support import weight_only_somewhere
from sizer.serving.load_search import SEARCH_KV, SEARCH_WEIGHTS
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference

LOAD = dict(model="llama-2-70b", rate=5, prompt_len=1024, output_len=256, slo_ttft="2 s", slo_tpot="100 ms",
            max_devices=8, kinds=["gpu"])


@pytest.fixture(scope="module")
def searched():
    return recommend_inference(InferenceRecommendRequest(**LOAD))


def test_rows_say_their_formats_and_stay_within_the_search(searched):
    assert searched.ranked and searched.weights.startswith("searched")
    catalog = load_catalog()
    for row in searched.ranked:
        assert row.weights in SEARCH_WEIGHTS and row.kv_cache in SEARCH_KV
        device = catalog.find(row.device)
        if row.weights == "fp8":  # at the FP8 peak, or weight-only where vLLM runs it so (FP8 Marlin on Ampere)
            assert "fp8" in device.peaks or weight_only_somewhere("fp8", device.architecture)
        if row.weights == "w8a8":  # int8 only where there is no FP8 peak but an int8 one
            assert "fp8" not in device.peaks and device.int8_peak is not None


def test_search_is_ranked_by_cost_and_meets_the_slos(searched):
    costs = [x.cost_per_million_tokens.value for x in searched.ranked if x.cost_per_million_tokens is not None]
    lead = costs[:3]
    assert lead == sorted(lead) and min(costs) == costs[0]
    for x in searched.ranked:
        assert x.latency.ttft.p99 <= 2000 and x.latency.tpot.p99 <= 100
        assert x.max_request_rate.value * x.replicas >= 5 * 0.999
        assert x.prompt_and_output_tokens_per_s.value > x.output_tokens_per_s.value
    assert all(x.capacity_searched for x in searched.ranked[:3])


def test_a_rate_that_is_kept_up_with_is_delivered_whole(searched):
    # 5 requests/s of 256-token answers: 1,280 tokens/s whatever the replicas (a short simulation's window,
    # stretched by its last answers, used to understate it and overstate the cost per token)
    for x in searched.ranked:
        assert x.output_tokens_per_s.value == pytest.approx(5 * 256)
        assert x.prompt_and_output_tokens_per_s.value == pytest.approx(5 * (1024 + 256))
        if x.cost_per_million_tokens is not None:
            hourly = x.price_per_hour.value * x.devices_total
            assert x.cost_per_million_tokens.value == pytest.approx(hourly / 3600 / (5 * 256) * 1e6)


def test_searching_formats_is_never_dearer_than_a_pinned_format(searched):
    pinned = recommend_inference(InferenceRecommendRequest(**LOAD, weights="bf16", kv_cache="fp16"))
    assert all(x.weights == "bf16" and x.kv_cache == "fp16" for x in pinned.ranked)
    assert searched.ranked[0].cost_per_million_tokens.value <= pinned.ranked[0].cost_per_million_tokens.value * 1.02


def test_a_given_kv_format_pins_only_that_dimension():
    r = recommend_inference(InferenceRecommendRequest(**{**LOAD, "kinds": ["accelerator"]}, kv_cache="fp8"))
    assert r.ranked and all(x.kv_cache == "fp8" for x in r.ranked)


def test_pinned_fp8_rejects_devices_without_the_peak():
    # a Volta has neither the FP8 peak nor an engine's weight-only FP8 kernel; an A100 runs it weight-only (vLLM)
    r = recommend_inference(InferenceRecommendRequest(**LOAD, weights="fp8"))
    v100 = next(x for x in r.rejected if x.device == "tesla-v100-sxm2-32gb")
    assert "fp8 peak" in v100.reason
    assert not any(x.device == "a100-80gb-sxm4" and "fp8 peak" in x.reason for x in r.rejected)


def test_cli_rows_carry_formats(cli):
    result = cli("recommend", "--inference", "--model", "llama-2-7b", "--rate", "4", "--slo-ttft", "1 s", "--kind",
                 "accelerator", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["ranked"]
    assert rows and all({"weights", "kv_cache", "replicas", "tp", "cost_per_million_tokens", "latency"} <= set(r) for r in rows)
