"""recommend_json writes the fields the core built without validating them into models again (the
HTTP path, issue 18 item 8); it must say exactly what recommend() says."""
from __future__ import annotations

import json

import pytest

from sizer.errors import SizerError
from sizer.plan.recommend import RecommendRequest, recommend, recommend_json


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
