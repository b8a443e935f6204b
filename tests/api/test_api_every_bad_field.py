"""Over HTTP: every bad field of a body in one 422 (a form marks them all), a batch in sequences, the
deadline and budget echoed for the page's chart, and the catalog list's peaks and prices."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def _fields(response) -> list[str]:
    assert response.status_code == 422, response.text
    return [item["loc"][1] for item in response.json()["detail"]]


@pytest.mark.parametrize("path, body, fields", [
    # a bound the request model checks and texts the core reads: all three at once
    ("/v1/recommend", {"params": "seven", "tokens": "lots", "max_devices": 0}, ["max_devices", "params", "tokens"]),
    # the serve form: a type, a bound and a duration
    ("/v1/recommend", {"task": "inference", "model": "llama-2-7b", "prompt_len": "many", "tokens_per_s_per_user": -1,
                       "time_to_first_token": "3 GHz"}, ["prompt_len", "tokens_per_s_per_user", "time_to_first_token"]),
    ("/v1/recommend", {"task": "inference", "model": "llama-2-7b", "rate": "x", "slo_ttft": "3 GHz"}, ["rate", "slo_ttft"]),
    # on one's own hardware
    ("/v1/recommend", {"params": "7e9", "tokens": "x", "deadline": "5 GHz", "have": ["1x RTX 4090"]}, ["tokens", "deadline"]),
    # bodies FastAPI validates before the route: its refusals and the texts together
    ("/v1/time", {"params": "seven", "tokens": "x", "device": "H100 SXM"}, ["params", "tokens"]),
    ("/v1/time", {"params": "seven", "count": 0, "device": "H100 SXM"}, ["count", "params"]),
    ("/v1/memory", {"params": "seven", "batch_size": "x", "device": "H100 SXM"}, ["params", "batch_size"]),
])
def test_every_bad_field_is_named(client, path, body, fields):
    assert _fields(client.post(path, json=body)) == fields


def test_a_batch_in_sequences_is_the_batch_in_tokens(client):
    body = {"params": "7e9", "tokens": "2e10", "seq_len": 2048, "top": 3}
    sequences = client.post("/v1/recommend", json={**body, "batch_size": "2048 sequences"})
    tokens = client.post("/v1/recommend", json={**body, "batch_size": 2048 * 2048})
    assert sequences.status_code == tokens.status_code == 200, sequences.text
    times = lambda r: [row["training_time"]["expected"] for row in r.json()["ranked"]]  # noqa: E731
    assert times(sequences) == times(tokens)


def test_the_deadline_and_budget_come_back_as_read(client):
    answer = client.post("/v1/recommend", json={"params": "7e9", "tokens": "2e10", "deadline": "2 weeks",
                                                 "budget": "$50k", "top": 3}).json()
    unit = answer["ranked"][0]["training_time"]["unit"]
    assert answer["budget"] == {"value": 50000.0, "unit": "USD"}
    assert answer["deadline"]["unit"] == unit
    assert answer["deadline"]["value"] == pytest.approx({"day": 14, "hour": 336, "minute": 20160}[unit])
    assert client.post("/v1/recommend", json={"params": "7e9", "tokens": "2e10", "top": 3}).json()["deadline"] is None


def test_the_catalog_list_carries_peaks_and_prices(client):
    devices = {d["id"]: d for d in client.get("/v1/catalog").json()["devices"]}
    h100 = devices["h100-sxm5-80gb"]
    # NVIDIA H100 SXM datasheet: 989 TFLOPS dense BF16, 1,979 dense FP8 (half the sparsity figures)
    assert h100["peaks"]["bf16"]["value"] == pytest.approx(989, rel=0.01)
    assert h100["peaks"]["fp8"]["value"] == pytest.approx(1979, rel=0.01)
    assert h100["cloud_price"]["unit"] == "USD/hour" and h100["cloud_price"]["date"]
    assert any(d["purchase_price"] for d in devices.values())
