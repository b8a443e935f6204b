"""api/routers/recommend.py: the HTTP body takes what the command line takes (issue 42: HTTP needed
``"task": "inference"`` where the CLI takes ``--inference``), and money as sizer prints it."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SERVE = {"model": "llama-3.1-8b", "kinds": ["gpu"]}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def test_inference_true_is_the_serving_question_as_task_inference_is(client):
    by_task = client.post("/v1/recommend", json={**SERVE, "task": "inference"})
    by_flag = client.post("/v1/recommend", json={**SERVE, "inference": True})
    assert by_task.status_code == by_flag.status_code == 200
    assert by_flag.json() == by_task.json()
    assert by_flag.json()["task"] == "inference" and by_flag.json()["model"] == "llama-3.1-8b"  # a serving answer


def test_a_task_as_people_name_it_and_hyphenated_options(client):
    serve = client.post("/v1/recommend", json={**SERVE, "task": "serve"})
    assert serve.status_code == 200 and serve.json() == client.post("/v1/recommend", json={**SERVE, "task": "inference"}).json()
    training = {"params": 7e9, "tokens": 2e10, "max-devices": 16}
    trained = client.post("/v1/recommend", json={**training, "task": "training"})
    assert trained.status_code == 200
    assert trained.json() == client.post("/v1/recommend", json={"params": 7e9, "tokens": 2e10, "max_devices": 16}).json()
    assert all(row["count"] <= 16 for row in trained.json()["ranked"])


@pytest.mark.parametrize("body, field", [({**SERVE, "inference": "yes"}, "inference"),
                                         ({**SERVE, "inference": True, "task": "training"}, "inference"),
                                         ({"params": 7e9, "tokens": 2e10, "max-devices": 8, "max_devices": 16}, "max_devices")])
def test_a_spelling_that_contradicts_itself_is_refused_naming_the_field(client, body, field):
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 422
    assert field in response.text


def test_budget_as_sizer_prints_money(client):
    # issue 42: --budget "2,000,000 USD" was refused in the CLI and on the page
    question = {"params": 7e9, "tokens": 2e12, "objective": "cost"}
    for written in ("2,000,000 USD", "$2M", "2M USD", "2 million USD"):
        answer = client.post("/v1/recommend", json={**question, "budget": written})
        assert answer.status_code == 200, (written, answer.text)
        assert answer.json()["budget"]["value"] == pytest.approx(2e6)
