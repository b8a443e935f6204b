"""sizer/passes and sizer/serving: formats, KV cache and weights memory against published facts, the serving
times as engine evaluations, their laws, the CLI and HTTP answers, and held-out accuracy."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from api.app import create_app
from sizer.errors import InputError
from sizer.passes.arithmetic import (
    ServingCase,
    evaluate_serving,
    kv_cache_bytes_per_token,
    serving_table,
    total_tokens_per_second,
    touched_experts,
)
from sizer.runtimes.formats import group_quantised_bits, kv_cache_bytes_per_value, weight_format
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference
from sizer.workloads.registry import find_model

GB, GIB = 1e9, 2.0 ** 30
ROOT = Path(__file__).resolve().parents[3]


# --- formats -------------------------------------------------------------------------------------

def test_fp8_serving_runs_at_the_fp8_peak_without_the_training_scaling_overhead(catalog):
    from dataclasses import replace

    from sizer.engine.constants import FP8_SCALING_OVERHEAD, SERVING_MATRIX_EFFICIENCY, serving_efficiencies
    device = catalog.find("H100 SXM")
    serve = serving_table((device,), weight_format("fp8"))
    # static scales calibrated offline: the matrix peak times the serving efficiency, nothing taken off
    assert serve.rates[0][0] == pytest.approx(1979e12 * SERVING_MATRIX_EFFICIENCY, rel=0.01)  # H100 SXM FP8 dense, datasheet
    training_like = serving_table((device,), weight_format("fp8"), (replace(serving_efficiencies(device.kind), fp8_scaling=None),))
    assert training_like.rates[0][0] == pytest.approx(serve.rates[0][0] / (1 + FP8_SCALING_OVERHEAD), rel=1e-9)


def test_gguf_and_gptq_bits_per_weight():
    # ggml-common.h: block_q4_0 = fp16 scale + 32 nibbles = 18 B per 32 weights = 4.5 bits;
    # block_q8_0 = fp16 scale + 32 int8 = 34 B per 32 = 8.5 bits. Exact by construction.
    assert weight_format("q4_0").bits == 4.5 and weight_format("Q8_0").bits == 8.5
    # GPTQ g128: 4 bits + (16-bit scale + 4-bit zero) / 128 = 4.15625
    assert weight_format("gptq").bits == group_quantised_bits(4, 128, 16, 4) == 4.15625
    assert weight_format("AWQ-int4-g64").bits == 4 + 20 / 64
    assert weight_format("int4").bytes_per_weight == 0.5 and kv_cache_bytes_per_value("FP8") == 1.0


@pytest.mark.parametrize("field, call", [("weights", lambda: weight_format("q5_zz")),
                                         ("kv_cache", lambda: kv_cache_bytes_per_value("int4"))])
def test_unknown_formats_name_the_field_and_the_choices(field, call):
    with pytest.raises(InputError, match=field) as error:
        call()
    assert "fp16" in str(error.value)


# --- memory facts of shared/data/inference-benchmarks.csv ----------------------------------------

def test_kv_cache_per_token_of_llama_2_70b():
    # cursor.so, 'Why GPT-3.5 is (mostly) cheaper than Llama 2' (2023): 320 KB per token in fp16,
    # = 2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B (KiB). Exact.
    assert kv_cache_bytes_per_token(find_model("llama-2-70b"), 2.0) == 327_680


@pytest.mark.parametrize("model, gib", [("llama-3.1-8b", 15.62), ("llama-3.1-70b", 39.06)])
def test_kv_cache_at_128k_tokens(model, gib):
    # Hugging Face blog llama31.md, KV-cache table (fp16, 128k tokens), in GiB; rel 1e-3: the
    # table rounds to two decimals.
    assert kv_cache_bytes_per_token(find_model(model), 2.0) * 128_000 / GIB == pytest.approx(gib, rel=1e-3)


def test_kv_cache_of_405b_matches_the_published_figure_for_the_checkpoint_it_describes():
    # Hugging Face blog llama31.md, KV-cache table: 123.05 GB (GiB) for 405B at 128k tokens in fp16
    # (shared/data/inference-benchmarks.csv, row marked low confidence). That is exactly the formula
    # with 16 KV heads: meta-llama/llama-models sku_list gives n_kv_heads 8 for Llama 3.1 405B and 16
    # only for its 'bf16-mp16' sharded variant (shared/data/model-configs.csv), so the table counted
    # the sharded checkpoint's heads. The released model (8 KV heads) holds half of it; rel 1e-3:
    # the table rounds to two decimals.
    import dataclasses

    released = find_model("llama-3.1-405b")
    assert released.kv_heads == 8
    sharded = dataclasses.replace(released, kv_heads=16)
    assert kv_cache_bytes_per_token(sharded, 2.0) * 128_000 / GIB == pytest.approx(123.05, rel=1e-3)
    assert kv_cache_bytes_per_token(released, 2.0) == kv_cache_bytes_per_token(sharded, 2.0) / 2


@pytest.mark.parametrize("model, weights, gigabytes", [
    ("llama-3.1-70b", "fp16", 140), ("llama-3.1-70b", "fp8", 70), ("llama-3.1-70b", "int4", 35),
    ("llama-3.1-405b", "fp16", 810), ("llama-3.1-405b", "fp8", 405), ("llama-3.1-405b", "int4", 203)])
def test_weights_memory_matches_hugging_face_table(model, weights, gigabytes):
    # Hugging Face blog llama31.md, 'Inference Memory Requirements'; rel 0.02: the table uses
    # the nominal 70B/405B, the models have 70.6e9 and 405.9e9 parameters.
    r = estimate_inference(InferenceRequest(model=model, device="H100 SXM", weights=weights, count=8))
    assert r.weights_memory.value * r.count == pytest.approx(gigabytes, rel=0.02)


def test_llama_2_70b_fp16_needs_two_a100_80gb():
    # cursor.so: '2 80-GB A100 GPUs ... the minimum required to fit Llama in memory (16-bit)'.
    one, two = (estimate_inference(InferenceRequest(model="llama-2-70b", device="A100 80GB SXM", count=n, weights="fp16",
                                                    prompt_len=512, output_len=256)) for n in (1, 2))
    assert not one.fits and one.max_batch == 0 and two.fits and two.max_batch >= 1
    # (TGI's 8 GPUs and Meta's MP=8 are serving recommendations and checkpoint shards, not minimums.)


def test_memory_parts_add_up_and_max_batch_is_the_edge(catalog):
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="RTX 4090", weights="q4_k_m", batch=4))
    parts = r.weights_memory.value + r.kv_cache_memory.value + r.activations_memory.value + r.reserve_memory.value
    assert r.memory_per_device.value == pytest.approx(parts)
    # Llama-2-7B (MHA): 2 x 32 x 32 x 128 x 2 B = 512 KiB per token, 1280 tokens, 4 sequences
    assert r.kv_cache_memory.value * GB == pytest.approx(4 * 1280 * 524_288)
    over = estimate_inference(InferenceRequest(model="llama-2-7b", device="RTX 4090", weights="q4_k_m", batch=r.max_batch + 1))
    at = estimate_inference(InferenceRequest(model="llama-2-7b", device="RTX 4090", weights="q4_k_m", batch=r.max_batch))
    assert at.fits and not over.fits


# --- times: engine evaluations -------------------------------------------------------------------

def _case(model="llama-2-7b", weights="fp16", prompt=128, output=128):
    return ServingCase(find_model(model), weight_format(weights), 2.0, prompt, output)


def test_single_stream_decode_is_weights_over_bandwidth(catalog):
    # At batch 1 a decode step reads every weight once: 13.5 GB / (2.039 TB/s x the fitted 0.9)
    # plus the KV cache and the fitted per-pass overhead; rel 2 %: small layers (norms) and the
    # KV cache of 192 tokens (0.1 GB) add to it.
    table = serving_table((catalog.find("A100 80GB SXM"),), weight_format("fp16"))
    a = evaluate_serving(_case(), table, 0, 1, 1.0)
    weights = find_model("llama-2-7b").params_total() * 2
    expected = (weights + 192 * 524_288) / table.bandwidth[0] + table.step_overhead[0]
    assert a.decode_seconds[0] == pytest.approx(expected, rel=0.02)
    assert a.decode_memory[0] > a.decode_compute[0]


def test_mixture_of_experts_reads_only_the_experts_a_batch_touches(catalog):
    # Mixtral 8x7B, top-2 of 8: one token reads 2 experts' weights, 64 tokens nearly all 8
    assert touched_experts(8, 2, np.asarray([1.0]))[0] == 2.0
    assert touched_experts(8, 2, np.asarray([64.0]))[0] == pytest.approx(8.0, rel=1e-6)
    table = serving_table((catalog.find("H100 SXM"),), weight_format("fp8"))
    arch = find_model("mixtral-8x7b")
    a = evaluate_serving(ServingCase(arch, weight_format("fp8"), 2.0, 128, 128), table, 0, 1, 1.0)
    active, total = arch.params_active(), arch.params_total()
    read = (a.decode_seconds[0] - table.step_overhead[0]) * table.bandwidth[0]
    assert active < read < 0.5 * total  # reads about the 12.9e9 active parameters, not all 46.7e9
    assert a.weights[0] == pytest.approx(total * 1.0)  # but holds every expert


def test_tensor_parallel_splits_weights_and_speeds_up_decode(catalog):
    table = serving_table((catalog.find("H100 SXM"),), weight_format("fp8"))
    a = evaluate_serving(_case("llama-2-70b", "fp8"), table, 0, np.asarray([2, 4]), 1.0)
    assert a.weights[1] == pytest.approx(a.weights[0] / 2) and a.decode_seconds[1] < a.decode_seconds[0]


def test_encoders_are_refused():
    with pytest.raises(InputError, match="model"):
        estimate_inference(InferenceRequest(model="bert-large", device="A100 80GB SXM"))


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4000), factor=st.integers(2, 8), prompt=st.integers(1, 8000),
       device=st.sampled_from(["A100 80GB SXM", "RTX 4090", "L40S", "H100 SXM", "EPYC 9654"]),
       weights=st.sampled_from(["fp16", "fp8", "q4_k_m", "int8"]))
def test_laws_of_serving(catalog, batch, factor, prompt, device, weights):
    table = serving_table((catalog.find(device),), weight_format(weights))
    assume(bool(table.supported[0]))  # fp8 (W8A8) runs only where the device has an FP8 peak
    case = _case(weights=weights, prompt=prompt)
    a = evaluate_serving(case, table, 0, 1, np.asarray([batch, batch * factor], dtype=float))
    # per-sequence decode speed never rises with the batch; total output tokens/s never falls
    assert a.decode_seconds[1] >= a.decode_seconds[0] * (1 - 1e-12)
    total = total_tokens_per_second(np.asarray([batch, batch * factor], dtype=float), 128, a.prefill_seconds, a.decode_seconds)
    assert total[1] >= total[0] * (1 - 1e-12)
    # memory grows with the context
    longer = evaluate_serving(_case(weights=weights, prompt=prompt * factor), table, 0, 1, float(batch))
    assert longer.memory[0] > a.memory[0] and longer.max_batch[0] <= a.max_batch[0]
    # never faster than the weights at the datasheet bandwidth
    datasheet = float(catalog.find(device).memory_bandwidth.quantity("b", "[information]/[time]").to("B/s").magnitude)
    assert a.decode_seconds[0] >= find_model("llama-2-7b").params_total() * weight_format(weights).bytes_per_weight / datasheet


# --- results, recommendation, CLI, HTTP ----------------------------------------------------------

CONTRACT = ("decode_tokens_per_s", "total_tokens_per_s", "prefill_tokens_per_s", "time_to_first_token")


def test_result_ranges_costs_and_energy():
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="A100 80GB SXM", weights="fp16", batch=16))
    for name in CONTRACT:
        span = getattr(r, name)
        assert span.low < span.expected < span.high
    assert r.cost_per_million_tokens.expected > 0 and r.energy_per_token.unit == "J"
    # cost = rent x count / total tokens/s: the rent assumption states the price used
    rent = next(a for a in r.assumptions if a.name == "rent price")
    assert "USD" in rent.value
    priced = estimate_inference(InferenceRequest(model="llama-2-7b", device="A100 80GB SXM", batch=16, rent_price="3.6 USD/hour"))
    # 3.6 USD/hour = 0.001 USD/s: 1e6 tokens cost 0.001 x 1e6 / (tokens/s) USD
    assert priced.cost_per_million_tokens.expected == pytest.approx(1e3 / priced.total_tokens_per_s.expected, rel=1e-9)


def test_a_device_without_rent_price_says_so(catalog):
    device = next(d for d in catalog if d.kind == "cpu" and not d.cloud_prices)
    r = estimate_inference(InferenceRequest(params="1B", device=device.id, weights="fp32"))
    assert r.cost_per_million_tokens is None
    assert "no rent price" in next(a for a in r.assumptions if a.name == "rent price").value


def test_recommend_inference_ranks_cheapest_first_and_explains_rejections():
    # issue 16: "cheapest first" is the cost per million output tokens, not the rent per hour
    # every segment (consumer): a 24 GB card that cannot hold 70B says so
    r = recommend_inference(InferenceRecommendRequest(model="llama-2-70b", weights="fp8", tokens_per_s_per_user=20,
                                                      total_tokens_per_s=1000, consumer=True))
    priced = [x.cost_per_million_tokens.value for x in r.ranked if x.cost_per_million_tokens is not None]
    assert priced == sorted(priced) and len(priced) > 3
    assert all(x.cost_per_million_tokens.price_basis == "rent" for x in r.ranked if x.cost_per_million_tokens)
    fastest = recommend_inference(InferenceRecommendRequest(model="llama-2-70b", weights="fp8", tokens_per_s_per_user=20,
                                                            total_tokens_per_s=1000, objective="throughput"))
    per_device = [x.total_tokens_per_s.expected / x.count for x in fastest.ranked]
    assert per_device == sorted(per_device, reverse=True) and fastest.objective == "throughput"
    assert all(x.decode_tokens_per_s.expected >= 20 and x.total_tokens_per_s.expected >= 1000 for x in r.ranked)
    assert any("does not fit" in x.reason or "too slow" in x.reason for x in r.rejected)
    small = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="q4_k_m", tokens_per_s_per_user=10,
                                                          consumer=True))
    assert {"gpu", "cpu"} <= {x.kind for x in small.ranked}  # consumer GPUs and CPUs serve a 4-bit 7B (when asked)


def test_cli_inference_json_contract(cli):
    result = cli("inference", "--model", "llama-2-7b", "--device", "RTX 4090", "--weights", "q4_k_m", "--batch", "4",
                 "--prompt-len", "512", "--output-len", "128", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for name in CONTRACT:
        assert set(data[name]) == {"low", "expected", "high", "unit"}
    for name in ("memory_per_device", "weights_memory", "kv_cache_memory"):
        assert set(data[name]) == {"value", "unit"}
    assert data["fits"] is True and isinstance(data["max_batch"], int) and data["assumptions"]


# 64 ranks split no head of llama-2-7b's 32: left to sizer they are 2 replicas of 32 (sizer.serving.replicas);
# a tensor split pinned over all 64 is what no runtime runs
@pytest.mark.parametrize("args, field", [(("--weights", "q9"), "weights"), (("--kv-cache", "int3"), "kv_cache"),
                                         (("--count", "64", "--split", "tensor"), "count")])
def test_cli_inference_bad_input_exits_2_naming_the_field(cli, args, field):
    result = cli("inference", "--model", "llama-2-7b", "--device", "RTX 4090", *args)
    assert result.exit_code == 2 and field in result.output and "Traceback" not in result.output


def test_cli_recommend_inference(cli):
    result = cli("recommend", "--inference", "--model", "llama-2-7b", "--weights", "int4", "--tokens-per-s-per-user", "30",
                 "--ttft", "1 s", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["task"] == "inference" and data["ranked"] and data["ranked"][0]["time_to_first_token"]["expected"] <= 1000
    bad = cli("recommend", "--inference", "--model", "llama-2-7b", "--ttft", "5 GB")
    assert bad.exit_code == 2 and "time_to_first_token" in bad.output


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_http_inference(client):
    response = client.post("/v1/inference", json={"model": "llama-2-70b", "device": "H100 SXM", "count": 2,
                                                  "weights": "fp8", "batch": 64})
    assert response.status_code == 200, response.text
    assert response.json()["fits"] is True and response.json()["kv_cache_memory"]["unit"] == "GB"


@pytest.mark.parametrize("body, field", [({"model": "llama-2-7b", "device": "H100 SXM", "weights": "fp6"}, "weights"),
                                         ({"model": "llama-2-7b", "device": "H100 SXM", "batch": 0}, "batch"),
                                         ({"model": "/etc/config.json", "device": "H100 SXM"}, "model"),
                                         ({"device": "H100 SXM"}, "model")])
def test_http_inference_bad_input_is_422_naming_the_field(client, body, field):
    response = client.post("/v1/inference", json=body)
    assert response.status_code == 422 and response.json()["detail"][0]["loc"][:2] == ["body", field], response.text


def test_http_recommend_takes_an_inference_body_and_still_a_training_one(client):
    serve = client.post("/v1/recommend", json={"task": "inference", "model": "llama-2-7b", "weights": "fp16",
                                               "tokens_per_s_per_user": 30})
    assert serve.status_code == 200 and serve.json()["task"] == "inference" and serve.json()["ranked"]
    bad = client.post("/v1/recommend", json={"task": "inference", "model": "llama-2-7b", "tokens_per_s_per_user": -1})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", "tokens_per_s_per_user"]
    train = client.post("/v1/recommend", json={"params": 1e9, "tokens": 1e10})
    assert train.status_code == 200 and "ranked" in train.json() and "task" not in train.json()


# --- accuracy on held-out rows -------------------------------------------------------------------

# Leave one source out (shared/data/inference-benchmarks.csv, 7 sources: TensorRT-LLM v0.6.1 performance.md, the
# v0.17 and v1.0 perf overviews, the H100-vs-A100, H200-launch and Falcon-180B/H200 blogs, FasterTransformer via
# kipply): the three serving constants chosen on every other source, the held-out source scored at them
# (benchmarks/inference_accuracy.py --by-source). Targets of benchmarks/ACCURACY.md: decode <= 20 %, batched
# throughput <= 30 %. Regression guards: the figures of 2026-12-06 (decode 2.2 % of 3, throughput 14.3 % of 17, all
# 14.4 % of 25, p90 34.3 %, signed -5.4 %) plus 3 points (5 for the p90: one row of 25 moves it), fixed here rather
# than read from a results file the benchmark rewrites.
BY_SOURCE_TARGETS = {"decode": 0.20, "throughput": 0.30}
BY_SOURCE_GUARDS = {"decode": 0.022 + 0.03, "throughput": 0.143 + 0.03, "all": 0.144 + 0.03}
BY_SOURCE_ROWS = {"decode": 3, "throughput": 17, "ttft": 5, "all": 25}


def _inference_bench():
    spec = importlib.util.spec_from_file_location("inference_accuracy", ROOT / "benchmarks" / "inference_accuracy.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    sys.path.insert(0, str(ROOT / "benchmarks"))  # serving_loso beside it
    spec.loader.exec_module(bench)
    return bench


def test_leave_one_source_out_accuracy_meets_targets_and_guards(catalog):
    bench = _inference_bench()
    rows, _ = bench.read_rows()
    result = bench.by_source(rows, catalog)
    figures = result["figures"]
    assert {k: f["n"] for k, f in figures.items()} == BY_SOURCE_ROWS
    assert len(result["per_source"]) == 7
    for key, limit in BY_SOURCE_TARGETS.items():
        assert figures[key]["median_abs_error"] <= limit, (key, figures[key])
    for key, limit in BY_SOURCE_GUARDS.items():
        assert figures[key]["median_abs_error"] <= limit, (key, figures[key], limit)
    assert figures["all"]["p90_abs_error"] <= 0.343 + 0.05 and abs(figures["all"]["signed_median"]) <= 0.10
    # the shipped constants are what all seven sources choose together (on the grid: matrix 0.6 for 0.606)
    assert result["all_sources_fit"]["memory"] == pytest.approx(bench.SERVING_MEMORY_EFFICIENCY)
    assert result["all_sources_fit"]["matrix"] == pytest.approx(bench.SERVING_MATRIX_EFFICIENCY, abs=0.0125)
    assert result["all_sources_fit"]["step_overhead_s"] == pytest.approx(bench.SERVING_STEP_OVERHEAD)


def test_a_held_out_source_never_chooses_its_own_constants(catalog, monkeypatch):
    # a source's measurements skewed 10 x never move the constants it is scored at
    bench = _inference_bench()
    rows, _ = bench.read_rows()
    monkeypatch.setattr(bench, "LOSO_MEMORY", (0.8, 0.9))
    monkeypatch.setattr(bench, "LOSO_MATRIX", (0.5, 0.6, 0.7))
    cache = bench.timing_cache(rows, catalog)
    held = next(r.source_key for r in rows if "H100vsA100" in r.source_key)
    before = bench.by_source(rows, catalog, cache)["chosen"][held]
    from dataclasses import replace

    skewed = [replace(r, measured=r.measured * (0.1 if r.is_time else 10.0)) if r.source_key == held else r for r in rows]
    after = bench.by_source(skewed, catalog, cache)
    assert after["chosen"][held] == before
    assert after["per_source"][held]["signed_median"] < -0.8  # scored against its skewed measurements
