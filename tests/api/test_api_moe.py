"""The issue-17 contract over HTTP: `ep` in the bodies of /v1/time, /v1/plan and /v1/memory, layouts with
"ep", and 422 naming the field for a bad expert-parallel size or FP8 on a device without it."""
import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_time_plan_memory_take_ep(client):
    body = {"model": "mixtral-8x7b", "tokens": 1e9, "device": "H100 SXM", "count": 16}
    timed = client.post("/v1/time", json={**body, "ep": 8, "zero": 1})
    assert timed.status_code == 200, timed.text
    assert timed.json()["layout"]["ep"] == 8 and timed.json()["expert_parallel_per_step"]["value"] > 0
    planned = client.post("/v1/plan", json={**body, "ep": 4, "shown": 3})
    assert planned.status_code == 200 and all(layout["ep"] == 4 for layout in planned.json()["layouts"])
    memory = client.post("/v1/memory", json={**body, "ep": 8})
    assert memory.status_code == 200, memory.text


@pytest.mark.parametrize("path, extra, field", [
    ("/v1/time", {"model": "mixtral-8x7b", "ep": 3}, "ep"),
    ("/v1/time", {"model": "llama-2-7b", "ep": 2}, "ep"),
    ("/v1/memory", {"model": "mixtral-8x7b", "ep": 32}, "ep"),
    ("/v1/time", {"model": "qwen3-30b-a3b", "precision": "fp8", "device": "A100 80GB SXM"}, "precision"),
])
def test_bad_ep_or_fp8_is_422_naming_the_field(client, path, extra, field):
    body = {"tokens": 1e9, "device": "H100 SXM", "count": 16, **extra}
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert field in str(response.json()["detail"])
