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
