"""Over HTTP: a finite benchmark (``prompts``, ``burst``) answers as the CLI and Python do (issue 38), and its
contradictions are one 422 naming the field."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
# AccelMark RTX 3090 suite A (shared/data/serving-tails.csv): Llama-3-8B, 300 prompts at 5 requests/s, p99 TTFT 29.7 s
BODY = {"model": "llama-3-8b", "device": "rtx-3090", "rate": 5, "prompt_len": 502, "output_len": 200, "prompts": 300}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_a_rate_above_capacity_is_answered_saturated_on_one_replica(client):
    answer = client.post("/v1/inference", json=BODY)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["capacity"]["replicas"] == 1 and body["capacity"]["utilisation"] > 1.2
    assert body["latency"]["ttft"]["p99"] > 5_000
    assert any(a["name"] == "saturated" for a in body["assumptions"])


@pytest.mark.parametrize("extra,field", [({"burst": 100}, "burst"), ({"rate": None, "users": None, "burst": 50}, "prompts")])
def test_contradictions_are_one_422_naming_the_field(client, extra, field):
    answer = client.post("/v1/inference", json={**BODY, **extra})
    assert answer.status_code == 422, answer.text
    assert field in answer.text
