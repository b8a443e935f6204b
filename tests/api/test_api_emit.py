"""emit over HTTP: the body takes it as the CLI takes --emit, and the answer carries the same launch field
as the Python facade; a tool that does not fit is a 422 naming emit."""
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer import facade

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("path, body, request_model, answer", [
    ("/v1/inference", {"model": "llama-3.1-70b", "device": "H100 SXM", "count": 4, "runtime": "vllm",
                       "weights": "fp8", "emit": "vllm"}, "InferenceRequest", "estimate_inference"),
    ("/v1/time", {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12, "emit": "nemo"},
     "TimeRequest", "estimate_time"),
    ("/v1/memory", {"model": "llama-3.1-8b", "method": "qlora", "device": "RTX 4090", "emit": "axolotl"},
     "MemoryRequest", "estimate_memory"),
    ("/v1/plan", {"model": "llama-2-7b", "device": "H100 SXM", "count": 16, "tokens": 1e10, "emit": "torchtitan"},
     "PlanRequest", "plan"),
])
def test_http_carries_the_same_launch(client, path, body, request_model, answer):
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    expected = getattr(facade, answer)(getattr(facade, request_model)(**body)).launch
    assert response.json()["launch"] == expected.model_dump(mode="json")


def test_a_tool_that_does_not_fit_is_a_422_naming_emit(client):
    response = client.post("/v1/time", json={"model": "llama-2-7b", "device": "H100 SXM", "count": 8, "tokens": 1e10,
                                             "emit": "sglang"})
    assert response.status_code == 422 and "emit" in response.text


def test_a_serving_ranking_over_http_carries_its_first_rows_launch(client):
    body = {"task": "inference", "model": "llama-3.1-70b", "weights": "fp8", "tokens_per_s_per_user": 30, "emit": "vllm"}
    answer = client.post("/v1/recommend", json=body).json()
    assert answer["launch"]["options"]["--tensor-parallel-size"] == answer["ranked"][0]["count"]
    unknown = client.post("/v1/recommend", json={**body, "emit": "nosuchtool"})
    assert unknown.status_code == 422 and "emit" in unknown.text
