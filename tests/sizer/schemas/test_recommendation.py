"""sizer/schemas/recommendation.py: the request of `sizer recommend` (training)."""

import pytest

from sizer.choices import CATALOG_KINDS
from sizer.errors import InputError
from sizer.schemas.recommendation import HTTP_TOP, RecommendRequest


def test_every_device_kind_is_searched_unless_limited():
    assert set(RecommendRequest().kinds) == set(CATALOG_KINDS)


def test_the_compact_http_answer_is_a_top_the_request_may_ask():
    top = RecommendRequest.model_fields["top"]
    assert RecommendRequest(top=HTTP_TOP).top == HTTP_TOP
    assert any(getattr(m, "ge", None) is not None and m.ge <= HTTP_TOP for m in top.metadata)


def test_a_bad_objective_is_refused_naming_it():
    with pytest.raises(InputError) as refused:
        RecommendRequest(objective="fastest")
    assert refused.value.field == "objective"
