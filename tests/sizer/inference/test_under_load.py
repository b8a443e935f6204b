"""`sizer inference` / `/v1/inference` / `recommend --inference` under traffic (issue 16): the JSON
contract, bad input naming its field, the llama.cpp layer split, devices without a power figure,
and held-out accuracy against published measurements under load."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.inference.deployments import InferenceRecommendRequest, recommend_inference
from sizer.inference.estimate import InferenceRequest, estimate_inference

ROOT = Path(__file__).resolve().parents[3]
BASE = ("inference", "--model", "llama-2-70b", "--device", "H100 SXM", "--count", "4", "--weights", "fp16",
        "--prompt-len", "1024", "--output-len", "256")
# Held-out medians |error| of benchmarks/serving_accuracy.py (2026-11-26, runtime profiles fitted on their own
# rows: throughput at a stated rate or concurrency 12.3 % of 15 rows, largest rate under the MLPerf SLO 23.3 % of 8)
# plus 2-3 points, as the other accuracy guards: fixed here rather than read from a results file the benchmark
# rewrites. The throughput guard stays within the serving issue's 15 % target.
HELD_OUT_GUARDS = {"throughput": 0.123 + 0.02, "max rate": 0.233 + 0.03}
HELD_OUT_ROWS = {"throughput": 15, "max rate": 8}
TARGETS = {"throughput": 0.15, "max rate": 0.30}  # throughput within 15 %; the largest rate within 30 % (20 % is the
# serving engineers' target, not reached: the MLPerf Server rows of TensorRT-LLM's tuned harness are 22-36 % low)
# The 12 throughput rows scored before gpt-oss could be modelled (sliding windows, MXFP4): 25.5 % then, guarded apart
# so that the rows added later cannot hide a regression on these.
EARLIER_ROWS, EARLIER_GUARD = 12, 0.255 + 0.03


def test_cli_contract_under_load(cli):
    result = cli(*BASE, "--rate", "2", "--slo-ttft", "2 s", "--slo-tpot", "200 ms", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["scenario"] == "load" and data["load"]["request_rate"] == {"value": 2.0, "unit": "1/s"}
    for name in ("ttft", "tpot", "e2e"):
        p = data["latency"][name]
        assert p["p50"] <= p["p90"] <= p["p99"] and p["unit"]
    cap = data["capacity"]
    assert cap["max_request_rate"]["unit"] == "1/s" and cap["replicas"] >= 1 and cap["slo_met"] is True
    assert 0 < cap["utilisation"] <= 1
    cost = data["cost_per_million_tokens"]
    assert cost["value"] > 0 and cost["price_basis"] == "rent" and cost["low"] <= cost["value"] <= cost["high"]
    assert data["output_tokens_per_s"]["value"] == pytest.approx(2 * 256, rel=0.1)


@pytest.mark.parametrize("args, field", [(("--rate", "0"), "rate"), (("--rate", "-3"), "rate"), (("--rate", "1e9"), "rate"),
                                         (("--users", "0"), "users"), (("--rate", "1", "--slo-ttft", "5 GB"), "slo_ttft"),
                                         (("--rate", "1", "--slo-tpot", "1e9 s"), "slo_tpot"),
                                         (("--rate", "1", "--slo-percentile", "100"), "slo_percentile"),
                                         (("--rate", "1", "--users", "3"), "users"),
                                         (("--rate", "1", "--lengths", "tweets"), "lengths"),
                                         (("--rate", "1", "--trace", "/nonexistent.csv"), "trace"),
                                         (("--rate", "1", "--split", "diagonal"), "split"),
                                         (("--users", "2", "--think-time", "-1 s"), "think_time")])
def test_cli_bad_load_input_exits_2_naming_the_field(cli, args, field):
    result = cli(*BASE, *args)
    assert result.exit_code == 2 and field in result.output and "Traceback" not in result.output, result.output


def test_cli_trace_file(cli, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("prompt_len,output_len\n" + "".join(f"{200 + 50 * (i % 7)},{40 + 10 * (i % 5)}\n" for i in range(200)))
    result = cli(*BASE[:-4], "--rate", "1", "--trace", str(trace), "--json")  # a trace brings its own lengths
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["load"]["prompt_len"]["mean"] == pytest.approx(350, rel=0.05)


def test_lone_request_time_to_first_token_is_its_own_prefill():
    r = estimate_inference(InferenceRequest(model="llama-2-70b", device="H100 SXM", count=4, weights="fp16", rate=0.01))
    assert r.latency.ttft.p50 < 300  # ms: issue 16, ~0.25 s on 4 x H100, not the 51k-token batch prefill


def test_layer_split_stays_under_the_streaming_bound():
    # issue 16: 70B at q4 streams ~41 GB per token through two 1008 GB/s RTX 4090s in turn: at most ~24 tokens/s
    r = estimate_inference(InferenceRequest(model="llama-2-70b", device="RTX 4090", count=2, weights="q4_k_m",
                                            prompt_len=512, output_len=128))
    assert r.split == "layer" and r.fits
    assert r.decode_tokens_per_s.expected <= 1008e9 / (r.weights_memory.value * 2 * 1e9)
    tensor = estimate_inference(InferenceRequest(model="llama-2-70b", device="RTX 4090", count=2, weights="q4_k_m",
                                                 prompt_len=512, output_len=128, split="tensor"))
    assert tensor.split == "tensor" and tensor.decode_tokens_per_s.expected > r.decode_tokens_per_s.expected


@pytest.mark.parametrize("device", ["M2 Ultra", "TPU v5p", "A800"])
def test_devices_without_a_power_figure_answer(device):
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device=device, weights="fp16", prompt_len=512, output_len=128))
    assert r.decode_tokens_per_s.expected > 0
    if r.energy_per_token is None:
        assert "no power figure" in next(a for a in r.assumptions if a.name == "energy").value


def test_recommend_under_load_ranks_by_cost_per_million_tokens_with_replicas():
    r = recommend_inference(InferenceRecommendRequest(model="llama-2-70b", rate=5, prompt_len=1024, output_len=256,
                                                      slo_ttft="2 s", slo_tpot="100 ms", max_devices=8, kinds=["gpu"]))
    assert r.scenario == "load" and r.ranked and r.rejected
    costs = [x.cost_per_million_tokens.value for x in r.ranked if x.cost_per_million_tokens is not None]
    assert costs == sorted(costs)
    assert any("H100" in x.name or "H200" in x.name for x in r.ranked)
    for x in r.ranked:
        assert x.replicas >= 1 and x.tp * x.pp == x.count and x.latency.ttft.p99 <= 2000 and x.latency.tpot.p99 <= 100
        assert x.max_request_rate.value * x.replicas >= 5 * 0.999


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_http_under_load(client):
    body = {"model": "llama-2-70b", "device": "H100 SXM", "count": 4, "weights": "fp16", "users": 32, "think_time": "2 s",
            "slo_ttft": "2 s", "lengths": "azure-conv"}
    response = client.post("/v1/inference", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["load"]["users"] == 32 and data["capacity"]["max_users"] >= 1 and data["latency"]["ttft"]["unit"] == "ms"
    for field, value in (("rate", 0), ("users", -1), ("slo_percentile", 20), ("prefix_cache_hit", 2), ("trace", 5)):
        bad = client.post("/v1/inference", json={**body, "users": None, field: value})
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", field], (field, bad.text)


def test_serving_held_out_accuracy_is_no_worse_than_its_guards():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import serving_accuracy as bench

    from sizer.hardware.catalog import load_catalog
    from sizer.inference import simulate as sim

    held = [c for c in bench.cases() if c.group == "held-out"]
    rows = bench.score(held, load_catalog(), sim.SCHEDULER_OVERHEAD, sim.BATCHING_MATRIX_EFFICIENCY)
    for kind, limit in HELD_OUT_GUARDS.items():
        median, n = bench.median_abs(rows, "held-out", kind)
        assert n == HELD_OUT_ROWS[kind] and median <= limit and median <= TARGETS[kind], (kind, median, limit)
    earlier = [r for r in rows if "gpt-oss" not in r["case"]]
    median, n = bench.median_abs(earlier, "held-out", "throughput")
    assert n == EARLIER_ROWS and median <= EARLIER_GUARD, (median, EARLIER_GUARD)


def test_under_load_total_tokens_count_prompt_and_output():
    # contract item 3: output and total tokens/s; at a steady load each request brings its prompt and its answer
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="H100 SXM", weights="fp16", rate=2,
                                            prompt_len=1000, output_len=250))
    out, total = r.output_tokens_per_s.value, r.prompt_and_output_tokens_per_s.value
    assert total == pytest.approx(out * (1000 + 250) / 250, rel=0.02)
    assert total == pytest.approx(2 * (1000 + 250))  # a rate within capacity is delivered whole


def test_an_overloaded_replica_delivers_what_the_simulation_measured():
    # 40 requests/s forced onto one replica of a 70B model on one H100 pair: far past its capacity
    r = estimate_inference(InferenceRequest(model="llama-2-70b", device="H100 SXM", count=2, weights="fp8", rate=40,
                                            replicas=1, prompt_len=1000, output_len=250))
    assert r.capacity.utilisation > 1
    assert r.output_tokens_per_s.value < 40 * 250 * 0.9


def test_a_named_length_set_sizes_the_whole_answer_and_refuses_fixed_lengths_beside_it(client, cli):
    # the ShareGPT sample of the vLLM v0.6.0 blog: mean 202 in / 179 out (serving-under-load.csv); the one batch
    # of the answer is at those means, as recommend --inference states them, not at the unused defaults 1024 / 256
    body = {"model": "llama-3-8b", "device": "H100 SXM", "rate": 5, "lengths": "sharegpt-vllm-sample"}
    http = client.post("/v1/inference", json=body).json()
    ranked = recommend_inference(InferenceRecommendRequest(model="llama-3-8b", rate=5, lengths="sharegpt-vllm-sample",
                                                           kinds=["accelerator"], max_devices=1))
    assert (http["prompt_len"], http["output_len"]) == (ranked.prompt_len, ranked.output_len) == (202, 179)
    command = cli("inference", "--model", "llama-3-8b", "--device", "H100 SXM", "--rate", "5", "--lengths",
                  "sharegpt-vllm-sample", "--json")
    assert command.exit_code == 0, command.output
    assert json.loads(command.stdout)["prompt_len"] == 202
    for field in ("prompt_len", "output_len"):  # a fixed length beside a named set was silently ignored
        bad = client.post("/v1/inference", json={**body, field: 500})
        assert bad.status_code == 422 and field in bad.text, bad.text
    refused = cli("inference", "--model", "llama-3-8b", "--device", "H100 SXM", "--rate", "5", "--lengths",
                  "sharegpt-vllm-sample", "--prompt-len", "500")
    assert refused.exit_code == 2 and "prompt_len" in refused.output and "Traceback" not in refused.output
