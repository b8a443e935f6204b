"""One answer per question for a production serving ranking (issue 38, item 7): `recommend --inference --consumer
--max-utilisation`, HTTP's ``consumer`` and ``max_utilisation`` and the Python facade rank the same deployments, at the
same replicas and utilisation; the text table shows each row's load and headroom."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.facade import InferenceRecommendRequest, recommend_inference
from sizer.hardware.catalog import load_catalog
from sizer.serving.segment import segment

BODY = {"task": "inference", "model": "llama-3.1-8b", "rate": 5, "prompt_len": 1000, "output_len": 200, "slo_ttft": "2 s",
        "max_utilisation": 0.6}
ARGS = ("recommend", "--inference", "--model", "llama-3.1-8b", "--rate", "5", "--prompt-len", "1000", "--output-len",
        "200", "--slo-ttft", "2 s", "--max-utilisation", "0.6")


def _rows(answer: dict) -> list[tuple]:
    return [(r["device"], r["count"], r["replicas"], r["weights"], r["kv_cache"], round(r["utilisation"], 9),
             round(r["headroom"], 9)) for r in answer["ranked"]]


def test_cli_http_and_python_give_one_production_ranking(cli):
    result = cli(*ARGS, "--json")
    assert result.exit_code == 0, result.output
    by_cli = json.loads(result.stdout)
    http = TestClient(create_app()).post("/v1/recommend", json=BODY)
    assert http.status_code == 200, http.text
    python = recommend_inference(InferenceRecommendRequest(**BODY)).model_dump(mode="json")
    assert _rows(by_cli) == _rows(http.json()) == _rows(python)
    assert by_cli["devices_searched"] == http.json()["devices_searched"] == python["devices_searched"]
    assert by_cli["max_utilisation"] == 0.6
    assert all(0 < r["utilisation"] <= 0.6 + 1e-9 for r in by_cli["ranked"])


def test_consumer_is_asked_the_same_way_on_every_surface(cli):
    args = ("recommend", "--inference", "--model", "llama-3.1-8b", "--weights", "fp8", "--tokens-per-s-per-user", "20")
    body = {"task": "inference", "model": "llama-3.1-8b", "weights": "fp8", "tokens_per_s_per_user": 20, "consumer": True}
    result = cli(*args, "--consumer", "--json")
    assert result.exit_code == 0, result.output
    by_cli = json.loads(result.stdout)
    http = TestClient(create_app()).post("/v1/recommend", json=body).json()
    python = recommend_inference(InferenceRecommendRequest(**body)).model_dump(mode="json")
    devices = [r["device"] for r in by_cli["ranked"]]
    assert devices == [r["device"] for r in http["ranked"]] == [r["device"] for r in python["ranked"]]
    consumer = [d for d in devices if segment(load_catalog().find(d)) != "data-centre"]
    assert consumer  # consumer and workstation cards, ranked only when asked
    default = json.loads(cli(*args, "--json").stdout)
    assert default["ranked"] and not set(consumer) & {r["device"] for r in default["ranked"]}


def test_the_text_table_shows_load_and_headroom(cli):
    result = cli(*ARGS, "--top", "3")
    assert result.exit_code == 0, result.output
    assert "headroom" in result.stdout and "data-centre devices only" in " ".join(result.stdout.split())


def test_consumer_is_refused_where_nothing_is_searched(cli):
    training = cli("recommend", "--model", "llama-3.1-8b", "--consumer")
    assert training.exit_code == 2 and "consumer" in training.output
    owned = cli("recommend", "--inference", "--model", "llama-3.1-8b", "--have", "1x RTX 4090", "--consumer")
    assert owned.exit_code == 2 and "consumer" in owned.output


def test_inference_rate_sizes_the_leading_deployment_with_the_same_headroom():
    # one question, one answer: `sizer inference --rate` on the deployment recommend ranks first gives its replicas
    from sizer.facade import InferenceRequest, estimate_inference

    body = {k: v for k, v in BODY.items() if k != "task"}
    top = recommend_inference(InferenceRecommendRequest(**BODY)).ranked[0]
    assert top.capacity_searched
    alone = estimate_inference(InferenceRequest(**body, device=top.device, count=top.count, weights=top.weights,
                                                kv_cache=top.kv_cache))
    assert alone.capacity is not None and alone.capacity.replicas == top.replicas
    assert alone.capacity.utilisation == pytest.approx(top.utilisation) and alone.capacity.utilisation <= 0.6
    assert any(a.name == "headroom" for a in alone.assumptions)
