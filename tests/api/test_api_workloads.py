"""`GET /v1/workloads` and the workloads the HTTP service takes (built-in names and mlp: widths)."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.workloads.profile import builtin_profile_names

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as client:
        yield client


def test_lists_every_builtin_profile(client):
    response = client.get("/v1/workloads")
    assert response.status_code == 200, response.text
    assert [w["name"] for w in response.json()["workloads"]] == builtin_profile_names()


@pytest.mark.parametrize("workload, status", [("VGG-16", 200), ("mlp:784,512,10", 200), ("torchvision:vgg16", 200),
                                              ("timm:convnext_small", 422), ("mlp:784", 422), ("no-such-net", 422)])
def test_time_takes_builtin_names_and_mlp_widths(client, workload, status):
    body = {"workload": workload, "samples": 1e6, "device": "H100 SXM", "batch_size": 32}
    response = client.post("/v1/time", json=body)
    assert response.status_code == status, response.text
    if status == 422:
        assert "workload" in response.text
