"""/v1/recommend answers compactly by default (issue 18 item 8): the first rows of the ranking, how
many there are in all, every rejected device; ``top`` asks for more, ``null`` for all."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.plan.recommend import recommend
from sizer.schemas.recommendation import HTTP_TOP, RecommendRequest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
QUESTION = {"params": 7e9, "tokens": 2e10}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def test_the_default_answer_is_the_top_of_the_full_one(client, catalog):
    compact = client.post("/v1/recommend", json=QUESTION).json()
    full = recommend(RecommendRequest(**QUESTION), catalog).model_dump(mode="json")
    assert full["ranked_total"] > HTTP_TOP  # the question has more devices than the compact answer shows
    assert compact["ranked"] == full["ranked"][:HTTP_TOP]
    assert compact["unpriced"] == full["unpriced"][:HTTP_TOP]
    assert (compact["ranked_total"], compact["unpriced_total"]) == (full["ranked_total"], full["unpriced_total"])
    assert compact["rejected"] == full["rejected"]


def test_top_asks_for_more_rows_and_null_for_all(client):
    three = client.post("/v1/recommend", json={**QUESTION, "top": 3}).json()
    every = client.post("/v1/recommend", json={**QUESTION, "top": None}).json()
    assert [r["device"] for r in three["ranked"]] == [r["device"] for r in every["ranked"][:3]]
    assert len(every["ranked"]) == every["ranked_total"] and len(every["unpriced"]) == every["unpriced_total"]


def test_a_bad_top_names_the_field(client):
    response = client.post("/v1/recommend", json={**QUESTION, "top": 0})
    assert response.status_code == 422
    assert any(item["loc"][-1] == "top" for item in response.json()["detail"])


def test_a_new_service_has_built_the_device_tables_before_its_first_question():
    """create_app warms what every recommendation reads: the first question builds no device table."""
    from sizer.engine.devices import cached_device_table

    cached_device_table.cache_clear()
    service = TestClient(create_app())
    built = cached_device_table.cache_info().misses
    assert built >= 1
    assert service.post("/v1/recommend", json={"params": 3.3e9, "tokens": 1e10}).status_code == 200
    assert cached_device_table.cache_info().misses == built
