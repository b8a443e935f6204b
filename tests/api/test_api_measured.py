"""HTTP bodies take the CLI's names (`measured`, `measured_on`, `mfu`, `efficiency`) and give the Python answer;
a wrong kind or an out-of-range value is a 422 naming the field."""
import pytest

from sizer import facade

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
TIME = {"model": "llama-2-7b", "device": "H100 SXM", "count": 8, "tokens": 1e10}


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app()) as c:
        yield c


def test_http_gives_the_python_answer(client):
    body = {**TIME, "measured": "20000 tokens/s"}
    answer = client.post("/v1/time", json=body).json()
    python = facade.estimate_time(facade.TimeRequest(**body))
    assert answer["training_time"]["expected"] == pytest.approx(python.training_time.expected)
    assert answer["rescaled"]["statement"] == python.rescaled.statement


def test_mfu_in_the_body(client):
    answer = client.post("/v1/time", json={**TIME, "mfu": 0.4}).json()
    assert answer["mfu"] == 0.4


@pytest.mark.parametrize(("body", "field"), [({**TIME, "measured": "TTFT 350 ms"}, "measured"),
                                             ({**TIME, "mfu": 1.5}, "mfu")])
def test_a_bad_value_is_422_naming_the_field(client, body, field):
    response = client.post("/v1/time", json=body)
    assert response.status_code == 422 and field in response.text


def test_efficiency_in_an_inference_body(client):
    body = {"model": "llama-3.1-8b", "device": "RTX 4090", "weights": "q4_k_m", "efficiency": 0.6}
    answer = client.post("/v1/inference", json=body).json()
    assert answer["rescaled"]["basis"] == "efficiency"
