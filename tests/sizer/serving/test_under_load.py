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
from sizer.runtimes.formats import weight_format
from sizer.runtimes.gguf import GGUF_MIXES
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference
from sizer.serving.under_load import default_split

ROOT = Path(__file__).resolve().parents[3]
BASE = ("inference", "--model", "llama-2-70b", "--device", "H100 SXM", "--count", "4", "--weights", "fp16",
        "--prompt-len", "1024", "--output-len", "256")
# Leave one source out over shared/data/serving-under-load.csv (benchmarks/serving_accuracy.py --by-source,
# 2026-12-06; 6 sources: TensorRT-LLM's perf overview, MLPerf Inference v4.0 and v4.1, three vLLM blog posts). Each
# source is scored at the constants chosen on the other five: (matrix fraction, vLLM and SGLang CPU time per running
# request [us], the tuned harness's matrix fraction). Choosing them simulates every row over the whole grid (minutes
# on two cores), so the choices are listed here and only the scoring is recomputed; the choice itself is tested on a
# synthetic grid below. "default": one matrix fraction for every harness (what sizer answers); "tuned": NVIDIA's
# MLPerf harness rows at their own fraction (the mechanism, a flag on the benchmark point).
FOLDS = {"tuned": {"perf-overview.md": (0.55, 140, 80, 0.9), "inference_results_v4.0": (0.55, 140, 80, 0.9),
                   "inference_results_v4.1": (0.5, 120, 80, 0.9), "2024/09/05/perf-update": (0.55, 140, 140, 0.9),
                   "2024/10/23/vllm-serving-amd": (0.55, 60, 80, 0.9), "2026-04-22-fp8-kvcache": (0.55, 140, 80, 0.9)},
         "default": {"perf-overview.md": (0.9, 140, 100, 0.9), "inference_results_v4.0": (0.55, 140, 80, 0.55),
                     "inference_results_v4.1": (0.65, 140, 90, 0.65), "2024/09/05/perf-update": (0.606, 140, 140, 0.606),
                     "2024/10/23/vllm-serving-amd": (0.65, 70, 90, 0.65), "2026-04-22-fp8-kvcache": (0.606, 140, 90, 0.606)}}
# (Re-chosen after issue 38's merge on 2026-12-06: two default folds moved, the tuned ones did not.)
# Guards: the 2026-12-06 figures plus 2-3 points, fixed here rather than read from a results file the benchmark
# rewrites; targets of issue 38: throughput 15 %, largest rate 20 % and never above the measured maximum, MLPerf 20 %.
BY_SOURCE_GUARDS = {("tuned", "throughput"): (115, 0.087 + 0.02), ("tuned", "max rate"): (8, 0.039 + 0.03),
                    ("tuned", "MLPerf"): (16, 0.067 + 0.03), ("default", "max rate"): (8, 0.371 + 0.03),
                    ("default", "MLPerf"): (16, 0.323 + 0.03)}


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


def _serving_bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import serving_accuracy as bench

    return bench


def _loso_records(mode: str, keep) -> list[dict]:
    bench = _serving_bench()
    from sizer.hardware.catalog import load_catalog

    catalog, out = load_catalog(), []
    for c in (c for c in bench.cases() if keep(c)):
        fold = next(f for key, f in FOLDS[mode].items() if key in c.source_key)
        predicted = bench.predict_at(c, catalog, fold, tuned=mode == "tuned")
        record = {"family": c.source, "kind": c.kind, "harness": c.harness, "error": predicted / c.measured - 1.0,
                  "confidence": c.confidence}
        if c.kind == "max rate":
            record["above"] = predicted > bench._measured(c.path.replace("/Server/", "/Offline/"))["requests_per_s"]
        out.append(record)
    return out


def test_serving_by_source_accuracy_is_no_worse_than_its_guards():
    _serving_bench()
    import serving_loso as loso

    not_overview = lambda c: c.source != "TensorRT-LLM perf overview"  # noqa: E731 - its 100 rows: one mode only
    records = {"tuned": _loso_records("tuned", lambda c: True), "default": _loso_records("default", not_overview)}
    sets = {"throughput": lambda r: r["kind"] == "throughput" and r["confidence"] != "low",
            "max rate": lambda r: r["kind"] == "max rate", "MLPerf": lambda r: r["family"].startswith("MLPerf")}
    for (mode, name), (n, limit) in BY_SOURCE_GUARDS.items():
        f = loso.figures([r["error"] for r in records[mode] if sets[name](r)])
        assert f["n"] == n and f["median_abs_error"] <= limit, (mode, name, f, limit)
    assert not any(r.get("above") for r in records["tuned"])  # never above the measured maximum (with the mechanism)


def test_serving_folds_never_choose_on_the_held_out_source():
    # a synthetic grid (no simulation): each case's prediction a fixed function of the constants; skewing one source's
    # measurements 10 x leaves the constants it is scored at unchanged
    from dataclasses import replace

    bench = _serving_bench()
    cases = bench.cases()
    cache = {(i, m): ({us: c.measured * m / 0.606 * (1 - us * 1e-3) for us in bench.LOSO_SEQUENCE_US}
                      if bench._fitted_runtime(c) else {-1.0: c.measured * m / (0.75 if c.harness == "tuned" else 0.606)})
             for i, c in enumerate(cases) for m in bench.LOSO_MATRIX}
    held = next(c.source_key for c in cases if "inference_results_v4.0" in c.source_key)
    before = bench.by_source(cases, cache, tuned=True)
    skewed = [replace(c, measured=c.measured * 10) if c.source_key == held else c for c in cases]
    after = bench.by_source(skewed, cache, tuned=True)
    assert after["chosen"][held] == before["chosen"][held]
    assert before["chosen"][held]["tuned_matrix"] == 0.75 and before["all_sources_fit"]["matrix"] == 0.606


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


@pytest.mark.parametrize("mix", [m.lower() for m in GGUF_MIXES])
def test_every_gguf_mix_splits_by_layers_unless_asked(mix):
    # issue 41: the default split knew 3 of the GGUF mixes (q4_0, q4_k_m, q8_0); every mix that
    # sizer.runtimes.gguf models is a GGUF file, which llama.cpp splits by layers (--split-mode layer, its default)
    request = InferenceRequest(model="llama-2-13b", device="RTX 4090", count=2, weights=mix)
    assert default_split(request, weight_format(mix)) == "layer"
    assert default_split(request.model_copy(update={"split": "tensor"}), weight_format(mix)) == "tensor"


def test_a_q5_k_m_pair_of_cards_gets_the_layer_split_llama_cpp_runs():
    # issue 41's wrong answer: Llama-2-13B q5_k_m on 2 x RTX 4090 answered 112.5 tokens/s by tensor parallelism,
    # which llama.cpp does not run by default; the layer split it runs gives 66.1 (the same request with split=layer)
    asked = dict(model="llama-2-13b", device="RTX 4090", count=2, weights="q5_k_m")
    default = estimate_inference(InferenceRequest(**asked))
    layer = estimate_inference(InferenceRequest(**asked, split="layer"))
    assert default.split == "layer"
    assert default.decode_tokens_per_s.expected == pytest.approx(layer.decode_tokens_per_s.expected)
