"""recommend_json writes the fields the core built without validating them into models again (the
HTTP path, issue 18 item 8); it must say exactly what recommend() says."""
from __future__ import annotations

import json

import pytest

from sizer.errors import SizerError
from sizer.plan.recommend import recommend, recommend_json
from sizer.schemas.recommendation import RecommendRequest


@pytest.mark.parametrize("question", [
    dict(params=7e9, tokens=2e10, top=3),
    dict(params=1e8, samples=1e6, batch_size=1000, features=100, deadline="2 d", pricing="any"),
    dict(model="llama-2-7b", tokens=1e9, method="qlora", budget="500 USD"),
    dict(),
    dict(model="llama-2-70b", tokens=1e9, max_devices=8, top=2),  # rejected devices with suggestions
])
def test_the_json_is_the_models_json(catalog, question):
    request = RecommendRequest(**question)
    assert json.loads(recommend_json(request, catalog)) == json.loads(recommend(request, catalog).model_dump_json())


def test_a_non_finite_field_is_refused_by_name():
    from sizer.results import finite_json

    with pytest.raises(SizerError, match=r"ranked\[0\]\.mfu"):
        finite_json({"ranked": [{"mfu": float("inf")}]})
    assert finite_json({"name": "a,NaN,b", "x": 1.0}) == b'{"name":"a,NaN,b","x":1.0}'  # letters in a string are no number


@pytest.mark.parametrize("question", [dict(params=7e9, tokens=2e10), dict(params=1e8, samples=1e6, batch_size=1000,
                                                                           features=100, pricing="any")])
def test_models_sit_only_where_recommend_json_makes_them_plain(catalog, question):
    """recommend_json skips the walk that turns models into data (a model would write inf as null
    unseen): every model in the fields must be under one of MODEL_FIELDS."""
    from pydantic import BaseModel

    from sizer.plan.recommend import MODEL_FIELDS, _recommend

    fields = _recommend(RecommendRequest(**question), catalog)
    found = []

    def walk(value, path):
        if isinstance(value, BaseModel):
            found.append(path)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, path + (key,))
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, path)

    walk(fields, ())
    assert found and {path[0] for path in found} <= set(MODEL_FIELDS)
