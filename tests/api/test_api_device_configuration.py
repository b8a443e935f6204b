"""A chip named without its GPU cores: the HTTP answer states the configuration assumed, as the facade's does."""
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_statement_reaches_http_answers():
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app()) as client:
        answer = client.post("/v1/peak", json={"device": "M3 Max"}).json()
    assert any("30 or 40 GPU cores" in a["value"] for a in answer["assumptions"])
