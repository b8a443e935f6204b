"""One answer per load question (issue 38): the CLI (``--json``), HTTP and Python answer a rate, a finite benchmark
(``prompts``), a burst and a closed loop of users alike, the saturation statement included, and the issue's own
overload example is answered saturated, in seconds."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.facade import InferenceRequest, estimate_inference

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
BASE = {"model": "llama-3-8b", "device": "rtx-3090", "runtime": "vllm", "lengths": "sharegpt-vllm-sample"}
# (request fields, the CLI's options for them)
QUESTIONS = [
    ({"rate": 8, "prompts": 1000}, ["--rate", "8", "--prompts", "1000"]),
    ({"rate": 8}, ["--rate", "8"]),
    ({"burst": 300}, ["--burst", "300"]),
    ({"users": 8}, ["--users", "8"]),
]
STATEMENTS = ("saturated", "one replica", "benchmark")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def _said(assumptions) -> dict[str, str]:
    return {a["name"]: a["value"] for a in assumptions if a["name"] in STATEMENTS}


@pytest.mark.parametrize("fields,options", QUESTIONS, ids=["benchmark", "steady", "burst", "users"])
def test_cli_http_and_python_give_one_answer(cli, client, fields, options):
    python = estimate_inference(InferenceRequest(**BASE, **fields)).model_dump(mode="json")
    http = client.post("/v1/inference", json={**BASE, **fields})
    assert http.status_code == 200, http.text
    result = cli("inference", "-m", BASE["model"], "-d", BASE["device"], "--runtime", "vllm", "--lengths",
                 BASE["lengths"], *options, "--json")
    assert result.exit_code == 0, result.output
    for answer in (http.json(), json.loads(result.stdout)):
        assert answer["latency"]["ttft"] == python["latency"]["ttft"]
        assert answer["capacity"]["utilisation"] == python["capacity"]["utilisation"]
        assert answer["capacity"]["replicas"] == python["capacity"]["replicas"]
        assert answer["output_tokens_per_s"] == python["output_tokens_per_s"]
        assert _said(answer["assumptions"]) == _said(python["assumptions"])


def test_the_issues_overload_example_is_saturated_and_in_seconds():
    # issue 38: RTX 3090, Llama-3-8B, vLLM, Poisson 5 and 8 requests/s against a capacity of about 4.1: measured p99
    # TTFT 6.8-68 s; sizer had answered throughput = rate x output length and a p99 TTFT near 300 ms
    answers = {rate: estimate_inference(InferenceRequest(**BASE, rate=rate, prompts=1000)) for rate in (5.0, 8.0)}
    for rate, answer in answers.items():
        said = {a.name: a.value for a in answer.assumptions}
        assert answer.capacity.replicas == 1 and answer.capacity.utilisation > 1.0
        assert "saturated" in said and f"{answer.capacity.utilisation:.2f} x the capacity" in said["saturated"]
        assert answer.output_tokens_per_s.value < rate * 179  # capped near capacity, not rate x output length
    fast = answers[8.0]
    assert fast.output_tokens_per_s.value < 0.7 * 8.0 * 179
    assert 6.8 < fast.latency.ttft.p99 / 1e3 < 68 * 1.5  # seconds, within the measured span
    assert fast.latency.ttft.p99 > 10 * answers[5.0].latency.ttft.p99 / 2  # the queue grows with the overload


@pytest.mark.parametrize("rate", [5.0, 8.0])
def test_without_a_benchmark_one_replica_is_said_saturated(rate):
    answer = estimate_inference(InferenceRequest(**BASE, rate=rate))
    said = {a.name: a.value for a in answer.assumptions}
    assert answer.capacity.replicas >= 2
    assert "one replica" in said and "saturated" in said["one replica"]
    assert f"{rate / answer.capacity.max_request_rate.value:.2f} x the capacity of one replica" in said["one replica"]


def test_a_random_dataset_range_ratio_is_one_answer_and_spreads_the_lengths(cli, client):
    # vllm bench serve --dataset-name random --random-range-ratio 0.5 (serving-tails.csv MI100 rows: +-50 % lengths)
    fields = {"model": "llama-3-8b", "device": "h100", "users": 16, "prompt_len": 1024, "output_len": 256}
    python = estimate_inference(InferenceRequest(**fields, range_ratio=0.5))
    http = client.post("/v1/inference", json={**fields, "range_ratio": 0.5})
    assert http.status_code == 200, http.text
    result = cli("inference", "-m", "llama-3-8b", "-d", "h100", "--users", "16", "--prompt-len", "1024",
                 "--output-len", "256", "--range-ratio", "0.5", "--json")
    assert result.exit_code == 0, result.output
    assert http.json()["latency"] == json.loads(result.stdout)["latency"] == python.model_dump(mode="json")["latency"]
    assert "vLLM's random dataset" in python.load.prompt_len.distribution
    assert python.load.prompt_len.mean == pytest.approx(1024, rel=0.02)
    fixed = estimate_inference(InferenceRequest(**fields))
    # answers of 128-384 tokens end apart: the end-to-end spread is the lengths', where fixed lengths end together
    assert python.latency.e2e.p99 / python.latency.e2e.p50 > 1.1 * fixed.latency.e2e.p99 / fixed.latency.e2e.p50


@pytest.mark.parametrize("fields,field", [
    ({"lengths": "azure-conv", "rate": 2}, "range_ratio"),  # a named set brings its own spread
    ({"prompt_len": 512, "output_len": 64}, "rate"),  # without a load it would be ignored
])
def test_a_range_ratio_it_cannot_apply_is_refused_naming_the_field(client, fields, field):
    answer = client.post("/v1/inference", json={"model": "llama-3-8b", "device": "h100", "range_ratio": 0.5, **fields})
    assert answer.status_code == 422, answer.text
    assert field in answer.text


@pytest.mark.parametrize("fields,options", [
    ({"runtime_version": "0.7.3", "rate": 4, "prompts": 200}, ["--runtime-version", "0.7.3", "--rate", "4", "--prompts", "200"]),
    ({"runtime": "tensorrt-llm", "tuned": True, "burst": 300}, ["--runtime", "tensorrt-llm", "--tuned", "--burst", "300"]),
], ids=["runtime-version", "tuned"])
def test_the_engines_generation_and_tuning_are_one_answer(cli, client, fields, options):
    # issue 38 item 2's mechanisms as fields: the runtime's version (its generation) and a tuned engine
    base = {k: v for k, v in BASE.items() if k != "runtime" or "runtime" not in fields}
    ask = {**base, **fields, "device": "h100"}
    python = estimate_inference(InferenceRequest(**ask)).model_dump(mode="json")
    http = client.post("/v1/inference", json=ask)
    assert http.status_code == 200, http.text
    runtime = [] if "runtime" in fields else ["--runtime", "vllm"]
    result = cli("inference", "-m", ask["model"], "-d", "h100", *runtime, "--lengths", ask["lengths"], *options, "--json")
    assert result.exit_code == 0, result.output
    said = {a["name"]: a["value"] for a in python["assumptions"]}
    assert ("tuned engine" in said) == bool(fields.get("tuned"))
    assert "vllm-v0" in said["runtime"] if "runtime_version" in fields else True
    for answer in (http.json(), json.loads(result.stdout)):
        assert answer["latency"] == python["latency"]
        assert {a["name"]: a["value"] for a in answer["assumptions"]} == said


def test_a_tuned_ranking_is_refused_naming_the_field(client):
    response = client.post("/v1/recommend", json={"task": "inference", "model": "llama-3-8b", "rate": 2, "tuned": True})
    assert response.status_code == 422 and "tuned" in response.text
