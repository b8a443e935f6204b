"""`GET /v1/models`: the names the web page's model picker offers, each one the API accepts."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def models():
    with TestClient(create_app()) as client:
        response = client.get("/v1/models")
        assert response.status_code == 200, response.text
        return response.json()["models"]


def test_lists_the_registry_sorted_by_name(models):
    names = [m["name"] for m in models]
    assert names == sorted(names) and len(names) == len(set(names)) >= 10
    assert {"llama-2-7b", "llama-2-70b", "mixtral-8x7b", "bert-large"} <= set(names)


def test_parameter_counts_are_the_architectures(models):
    by_name = {m["name"]: m for m in models}
    # Llama 2 7B: 6,738,415,616, the count of its config.json shape (sizer.workloads.registry.find_model's
    # doctest); exact, as the endpoint only carries the registry's integer through
    assert by_name["llama-2-7b"]["params_total"] == 6_738_415_616
    assert by_name["llama-2-7b"]["params_active"] == 6_738_415_616
    # Mixtral 8x7B: 46.7 B in total, 12.9 B active per token (the published counts catalog/models.yaml cites);
    # compared at the 0.1 B they are stated to
    mixtral = by_name["mixtral-8x7b"]
    assert round(mixtral["params_total"] / 1e9, 1) == 46.7 and round(mixtral["params_active"] / 1e9, 1) == 12.9
    assert all(0 < m["params_active"] <= m["params_total"] for m in models)


def test_every_listed_name_is_accepted_by_inference(models):
    with TestClient(create_app()) as client:
        for name in ("llama-2-7b", models[0]["name"], models[-1]["name"]):
            family = next(m["family"] for m in models if m["name"] == name)
            if family != "decoder":
                continue
            answer = client.post("/v1/inference", json={"model": name, "device": "H100 SXM", "weights": "int4"})
            assert answer.status_code == 200, (name, answer.text)
            assert answer.json()["model"] == name


def test_each_model_carries_its_context_and_source(models):
    """issue 19 item 4: the picker shows context and source. Llama 2 was trained at 4,096 tokens and GPT-2 at
    1,024 (their config.json max_position_embeddings / n_positions, as catalog/models.yaml cites them)."""
    by_name = {m["name"]: m for m in models}
    assert by_name["llama-2-7b"]["context"] == 4096 and by_name["gpt2"]["context"] == 1024
    assert all(m["source"] and m["context"] > 0 for m in models)
    assert len(models) >= 50
