"""Every bad field of a request at once (sizer.workloads.field_check)."""
from __future__ import annotations

import pytest

from sizer.errors import InputErrors
from sizer.schemas.recommendation import RecommendRequest
from sizer.serving.recommend_devices import InferenceRecommendRequest
from sizer.workloads.field_check import every_bad_field


def test_bad_counts_and_quantities_are_each_reported_in_the_order_given():
    # each refused by its typed field where the request is built (no second reading of the text)
    with pytest.raises(InputErrors) as error:
        every_bad_field(RecommendRequest, {"params": "seven", "tokens": "2e10", "batch_size": "lots",
                                           "deadline": "5 GHz", "budget": "$5000"})
    assert [e.field for e in error.value.errors] == ["params", "batch_size", "deadline"]
    with pytest.raises(InputErrors) as error:
        every_bad_field(InferenceRecommendRequest, {"model": "llama-2-7b", "host_memory": "lots", "slo_ttft": "5 GHz",
                                                    "think_time": "-1 s"})
    assert [e.field for e in error.value.errors] == ["host_memory", "slo_ttft", "think_time"]


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
    # parsed once, where the request is built: the core reads typed values, never the text again
    assert request.params == 7e9 and request.tokens == 2e10
    assert (request.batch_size.count, request.batch_size.unit.value) == (1536, "sequence")


def _request_models() -> list[type]:
    from pydantic import BaseModel

    from sizer import facade

    names = [name for name in dir(facade) if name.endswith("Request")]
    return [model for model in (getattr(facade, name) for name in names)
            if isinstance(model, type) and issubclass(model, BaseModel)]


def test_every_request_model_refuses_a_field_it_lacks():
    # every bad field is pydantic's to report: a field a model lacks is refused there too, never read by name apart
    models = _request_models()
    assert len(models) >= 10
    assert [m.__name__ for m in models if m.model_config.get("extra") != "forbid"] == []
    with pytest.raises(InputErrors) as error:
        every_bad_field(RecommendRequest, {"params": "7B", "tokens": "2e10", "host_memory": "lots"})
    assert [e.field for e in error.value.errors] == ["host_memory"]


# --- issue 42: Python raised pydantic's ValidationError where the README documents sizer's InputError ---

@pytest.mark.parametrize("build, field", [
    (lambda f: f.TimeRequest(model="llama-3.1-8b", tokens="2e10", device="H100 SXM", optimizer="lionx"), "optimizer"),
    (lambda f: f.TcoRequest(device="H100 SXM", count=8, training_time="14 d", terms=["weekly"]), "terms"),
    (lambda f: f.RecommendRequest(params="7B", tokens="2e10", max_devices=0), "max_devices"),
    (lambda f: f.InferenceRecommendRequest(model="llama-3.1-8b", kv_cache="fp3"), "kv_cache"),
])
def test_the_facade_raises_input_error_naming_the_field(build, field):
    import pydantic

    from sizer import facade
    from sizer.errors import InputError

    with pytest.raises(InputError) as caught:
        build(facade)
    assert caught.value.field == field and caught.value.message.startswith(f"{field}:")
    assert isinstance(caught.value, pydantic.ValidationError)  # code that caught pydantic's error still does


def test_every_bad_field_of_a_python_request_is_in_the_message():
    from sizer.errors import InputError
    from sizer.facade import TimeRequest

    with pytest.raises(InputError) as caught:
        TimeRequest(params="seven", tokens="2e10", device="H100 SXM", count="abc")
    lines = caught.value.message.splitlines()
    assert caught.value.field == "count" and [line.split(":")[0] for line in lines] == ["count", "params"]
