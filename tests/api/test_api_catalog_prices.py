"""GET /v1/catalog carries each device's cheapest on-demand rent and purchase price with their dates (the
fields the catalog page reads: cloud_price and purchase_price, each with value, unit, date, source)."""
import pytest
from fastapi.testclient import TestClient

from api.app import create_app


@pytest.fixture(scope="module")
def devices():
    response = TestClient(create_app()).get("/v1/catalog")
    assert response.status_code == 200
    return {d["id"]: d for d in response.json()["devices"]}


def test_catalog_list_carries_rent_and_purchase_with_dates(devices):
    b200 = devices["b200"]
    assert b200["cloud_price"]["unit"] == "USD/hour" and b200["cloud_price"]["date"]
    assert b200["cloud_price"]["term"] == "on-demand" and b200["cloud_price"]["source"]
    assert b200["purchase_price"]["unit"] == "USD" and b200["purchase_price"]["basis"] == "street"
    # aiinframap.com mid-2026 street figure, 40,000 USD per B200 (../shared/data/cluster-and-purchase-prices.csv)
    assert b200["purchase_price"]["value"] == 40000 and b200["purchase_price"]["date"] == "2026"


def test_a_system_price_is_shown_per_device_with_its_system(devices):
    gb200 = devices["gb200-per-gpu"]["purchase_price"]
    assert gb200["devices_in_system"] == 72 and "NVL72" in gb200["system"]
    assert gb200["value"] == pytest.approx(3_100_000 / 72)  # fetchlogic.net: about 3.1 M USD per rack


def test_a_device_without_prices_says_none(devices):
    assert devices["apple-m1-gpu"]["cloud_price"] is None and devices["apple-m1-gpu"]["purchase_price"] is None
