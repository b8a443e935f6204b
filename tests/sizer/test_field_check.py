"""Every bad field of a request at once (sizer.field_check)."""
from __future__ import annotations

import pytest

from sizer.errors import InputErrors
from sizer.field_check import TEXT_FIELDS, every_bad_field, text_field_errors
from sizer.inference.deployments import InferenceRecommendRequest
from sizer.plan.recommend import RecommendRequest


def test_text_fields_report_each_bad_one_in_order():
    errors = text_field_errors({"params": "seven", "tokens": "2e10", "batch_size": "lots", "deadline": "5 GHz",
                                "budget": "$5000", "host_memory": "lots"})
    assert [e.field for e in errors] == ["params", "batch_size", "deadline", "host_memory"]


def test_fields_already_reported_are_skipped():
    assert text_field_errors({"params": "seven"}, frozenset({"params"})) == []


def test_schema_and_text_errors_come_together():
    # a bound the model checks (max_devices >= 1) and a text the core reads (params): both, model's first
    with pytest.raises(InputErrors) as error:
        every_bad_field(RecommendRequest, {"max_devices": 0, "params": "seven", "deadline": "5 GHz"})
    assert [e.field for e in error.value.errors] == ["max_devices", "params", "deadline"]
    assert all(e.message.startswith(f"{e.field}: ") for e in error.value.errors)


def test_a_serving_form_with_two_bad_fields_reports_both():
    fields = {"model": "llama-2-7b", "prompt_len": "many", "time_to_first_token": "3 GHz"}
    with pytest.raises(InputErrors) as error:
        every_bad_field(InferenceRecommendRequest, fields)
    assert [e.field for e in error.value.errors] == ["prompt_len", "time_to_first_token"]


def test_a_good_request_is_returned_validated():
    request = every_bad_field(RecommendRequest, {"params": "7B", "tokens": "2e10", "batch_size": "1536 sequences"})
    assert request.params == "7B"


@pytest.mark.parametrize("field", sorted(TEXT_FIELDS))
def test_every_text_field_is_a_field_of_some_request_model(field):
    from sizer.inference.estimate import InferenceRequest

    assert any(field in model.model_fields for model in (RecommendRequest, InferenceRecommendRequest, InferenceRequest))
