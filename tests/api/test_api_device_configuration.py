"""A chip named without its GPU cores: the HTTP answer states the configuration assumed, as the facade's does."""
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_statement_reaches_http_answers():
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app()) as client:
        answer = client.post("/v1/peak", json={"device": "M3 Max"}).json()
    assert any("30 or 40 GPU cores" in a["value"] for a in answer["assumptions"])


def test_the_catalog_detail_states_it_too():
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app()) as client:
        detail = client.get("/v1/catalog/M1 Ultra").json()
        exact = client.get("/v1/catalog/apple-m1-ultra-gpu").json()
    assert detail["id"] == "apple-m1-ultra-48c-64gb-gpu" and "48 or 64 GPU cores" in detail["assumed"]
    assert exact["assumed"] is None
