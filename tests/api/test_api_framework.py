"""The ``framework`` field of the training bodies (issue 39): the answer names the recipe; an unknown name is a
422 naming the field."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_memory_body_takes_the_framework(client):
    answer = client.post("/v1/memory", json={"model": "llama-3.1-8b", "device": "RTX 4090", "seq_len": 2048,
                                             "framework": "torchtune"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["recipe"].startswith("torchtune full_finetune_single_device") and answer.json()["fits"]


def test_an_unknown_framework_is_refused_naming_the_field(client):
    answer = client.post("/v1/time", json={"model": "llama-3.1-8b", "tokens": 1e7, "device": "H100 SXM",
                                           "framework": "colossalai"})
    assert answer.status_code == 422 and "framework" in answer.text
