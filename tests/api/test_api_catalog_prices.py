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
    # two low-confidence rack estimates (fetchlogic.net ~3.1 M USD, 2026; nextfin.ai 5 M USD, 2026-02-17): the
    # costing rule (docs/prices.md) takes the newest of equal rank and confidence
    assert gb200["value"] == pytest.approx(5_000_000 / 72) and gb200["date"] == "2026-02-17"


def test_a_machine_price_names_the_machine_and_its_basis(devices):
    """Apple sells Macs, not chips: the price is the cheapest Mac's with that chip (../shared/data/prices-2026-12.csv)."""
    m1 = devices["apple-m1-gpu"]["purchase_price"]
    assert m1["basis"] == "list" and m1["date"] == "2020-11-10" and "Mac mini" in m1["system"]
    assert m1["devices_in_system"] == 1 and m1["value"] == 699  # Mac mini (M1, 2020), iphonelife.com / imore.com


def test_a_device_without_prices_says_none(devices):
    """GH200 144GB is sold only in servers: no price in ../shared/data (README-2026-12 §1)."""
    assert devices["gh200-144gb"]["cloud_price"] is None and devices["gh200-144gb"]["purchase_price"] is None


def test_every_shown_purchase_price_says_its_basis_and_date(devices):
    bases = {"list", "street", "price-history median", "analyst estimate", "second-hand"}
    shown = [d["purchase_price"] for d in devices.values() if d["purchase_price"]]
    assert shown and all(p["basis"] in bases and p["date"] for p in shown)


def test_tco_json_carries_the_purchase_basis_and_date():
    answer = TestClient(create_app()).post("/v1/tco", json={"device": "rtx-3070", "training_time": "10 h",
                                                           "pricing": "any"}).json()
    # Tom's Hardware's new retail price beside the eBay figure, October 2023 (../shared/data/prices-2026-12.csv):
    # the newest list or street price of the new card
    assert answer["buy"]["purchase_basis"] == "street" and answer["buy"]["price_date"] == "2023-10"
    # the card alone (scope gpu), with the server share a card needs to run added beside it (issue 42)
    assert answer["buy"]["price_scope"] == "gpu"
    assert answer["buy"]["capital"]["value"] - answer["buy"]["server_share"]["value"] == pytest.approx(365)
    assert answer["rent_price_kind"] == "on-demand" and answer["rent_price_date"] == "2026-10-01"
