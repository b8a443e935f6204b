"""sizer.schemas.serving_requests: the serving requests (`sizer recommend --inference`'s here), checked where they enter."""
from __future__ import annotations

import pydantic
import pytest

from sizer.choices import CATALOG_KINDS as ALL_KINDS
from sizer.schemas.serving_requests import InferenceRecommendRequest


def test_defaults_search_every_kind_and_every_kv_format():
    r = InferenceRecommendRequest(model="llama-3-8b")
    assert r.kinds == list(ALL_KINDS) == ["gpu", "accelerator", "cpu"]
    assert r.kv_cache is None and r.weights is None  # None: searched, not pinned
    assert (r.objective, r.pricing, r.max_devices) == ("cost", "rent", 8)


def test_the_default_kinds_are_a_fresh_list_each_time():
    first = InferenceRecommendRequest(model="llama-3-8b")
    first.kinds.append("gpu")
    assert InferenceRecommendRequest(model="llama-3-8b").kinds == list(ALL_KINDS)


@pytest.mark.parametrize("fields", [
    {"kinds": ["fpga"]},
    {"objective": "speed"},
    {"max_devices": 0},
    {"tokens_per_s_per_user": 0},
    {"unknown_field": 1},  # extra fields are refused, not ignored
])
def test_bad_fields_are_refused_where_they_enter(fields):
    with pytest.raises(pydantic.ValidationError) as refused:
        InferenceRecommendRequest(model="llama-3-8b", **fields)
    assert refused.value.errors()[0]["loc"][0] == next(iter(fields))
