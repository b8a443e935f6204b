"""sizer.serving.recommend_answer: the rows a serving recommendation answers with."""
from __future__ import annotations

import pydantic
import pytest

from sizer.runtimes.formats import weight_format
from sizer.schemas.serving import InferenceRecommendResult, RejectedOption
from sizer.serving.recommend_answer import unsupported_reason


def test_unsupported_reason_names_the_missing_peak_for_w8a8_formats():
    assert unsupported_reason(weight_format("fp8")) == "no fp8 peak in the catalog (fp8 quantises activations too)"
    assert unsupported_reason(weight_format("w8a8")).startswith("no int8 peak")
    assert unsupported_reason(weight_format("int4")) == "no usable precision in the catalog"  # weight-only


def test_a_result_is_frozen_and_round_trips_through_json():
    result = InferenceRecommendResult(task="inference", model="llama-3-8b", weights="fp16", prompt_len=1024,
                                      output_len=256, ranked=[], assumptions=[],
                                      rejected=[RejectedOption(device="rtx-3060-12gb", name="RTX 3060 12GB",
                                                               reason="does not fit")])
    again = InferenceRecommendResult.model_validate_json(result.model_dump_json())
    assert again == result and again.scenario == "offline" and again.objective == "cost"
    with pytest.raises(pydantic.ValidationError):
        result.model = "other"  # results are frozen: no step edits an answer after it is made
