"""`"have"` over HTTP on /v1/time, /v1/memory, /v1/plan, /v1/inference and /v1/recommend."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
LLAMA = {"model": "llama-3-8b", "tokens": 1e8}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("path", ["/v1/time", "/v1/memory", "/v1/plan", "/v1/recommend"])
def test_have_over_http(client, path):
    response = client.post(path, json={**LLAMA, "method": "full", "have": ["8x A100 80GB SXM", "1x RTX 4090"]})
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert [o["count"] for o in options] == [8, 1] and options[0]["fits"] and not options[1]["fits"]
    assert all(s["fits"] for s in options[1]["suggestions"])
    assert {o["method"] for o in options} == {"full"}  # the method given is kept


@pytest.mark.parametrize("path", ["/v1/time", "/v1/recommend"])
def test_have_without_a_method_answers_with_one_that_fits(client, path):
    response = client.post(path, json={**LLAMA, "have": ["1x RTX 4090"]})
    assert response.status_code == 200, response.text
    answer = response.json()
    (option,) = answer["options"]
    assert option["fits"] and option["method"] in ("lora", "qlora")
    assert any(a["name"] == "method and precision" for a in answer["assumptions"])


def test_have_serving_over_http(client):
    for path, extra in (("/v1/inference", {}), ("/v1/recommend", {"task": "inference"})):
        response = client.post(path, json={"model": "llama-2-13b", "have": ["1x RTX 4090"], **extra})
        assert response.status_code == 200, response.text
        assert response.json()["task"] == "inference"


@pytest.mark.parametrize("have", [["0x T4"], ["x"] * 9, "8x A100"])
def test_bad_have_is_422_naming_the_field(client, have):
    response = client.post("/v1/time", json={**LLAMA, "have": have})
    assert response.status_code == 422, response.text
    assert "have" in response.text


def test_host_memory_over_http_checks_offload_and_a_bad_one_is_422_naming_it(client):
    body = {"params": 3e9, "tokens": 1e8, "seq_len": 1024, "micro_batch": 1, "method": "full", "precision": "bf16",
            "device": "RTX 4090", "offload": True}
    small, large = (client.post("/v1/time", json={**body, "host_memory": gb}) for gb in ("32 GB", "64 GB"))
    assert small.status_code == large.status_code == 200, small.text
    assert not small.json()["fits"] and large.json()["fits"]  # 12 B x 3e9 = 36 GB of states on the host
    bad = client.post("/v1/time", json={**body, "host_memory": "lots"})
    assert bad.status_code == 422 and "host_memory" in bad.text


def test_recommend_over_http_carries_suggestions_for_rejected_devices(client):
    response = client.post("/v1/recommend", json={"model": "llama-2-70b", "tokens": 1e9, "max_devices": 8, "suggest": 1})
    assert response.status_code == 200, response.text
    helped = [r for r in response.json()["rejected"] if r["suggestions"]]
    assert len(helped) == 1 and all(s["fits"] for s in helped[0]["suggestions"])


def test_recommend_over_http_is_compact_unless_suggestions_are_asked(client):
    # each suggestion runs the engine again: where devices serve, the default answer says why the others
    # are rejected (cause, shortfall) and leaves the changes to a body that asks for them
    response = client.post("/v1/recommend", json={"model": "llama-2-70b", "tokens": 1e9, "max_devices": 8})
    assert response.status_code == 200
    rejected = response.json()["rejected"]
    assert any(r["cause"] == "memory" and r["shortfall"] > 1 for r in rejected)
    assert not any(r["suggestions"] for r in rejected)


def test_recommend_suggests_unasked_where_no_device_serves(client):
    # full training of a 70B model on one device fits nowhere: the answer says what would make the nearest work
    response = client.post("/v1/recommend", json={"model": "llama-2-70b", "tokens": 1e9, "max_devices": 1})
    assert response.status_code == 200
    body = response.json()
    assert not body["ranked"] and not body["unpriced"]
    helped = [r for r in body["rejected"] if r["suggestions"]]
    assert len(helped) == 3 and all(s["fits"] for r in helped for s in r["suggestions"])
    assert all(r["cause"] == "memory" for r in helped)
