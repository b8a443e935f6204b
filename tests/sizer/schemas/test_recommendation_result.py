"""sizer/schemas/recommendation_result.py: the answer of `sizer recommend` (training)."""
import pytest
from pydantic import ValidationError

from sizer.schemas.recommendation_result import RecommendResult, RejectedDevice


def test_the_answer_ranks_and_rejects_devices():
    assert {"ranked", "rejected", "unpriced", "limited_by"} <= set(RecommendResult.model_json_schema()["properties"])


def test_a_rejection_names_one_of_the_causes_the_ranking_knows():
    rejected = RejectedDevice(device="p600", name="NVIDIA Quadro P600", reason="does not fit", shortfall=1.7)
    assert rejected.cause == "memory" and rejected.suggestions == []
    with pytest.raises(ValidationError):
        RejectedDevice(device="p600", name="NVIDIA Quadro P600", reason="too slow", cause="speed")
