"""sizer/schemas/serving.py: the answers of `sizer inference` and `sizer recommend --inference`."""
import pytest
from pydantic import ValidationError

from sizer.schemas.serving import InferenceRecommendResult, InferenceResult, RangedQuantityOut, ServingCostOut


def test_a_serving_cost_says_whether_it_is_rent_or_purchase():
    cost = ServingCostOut(low=1.0, expected=1.5, high=2.0, value=1.5, unit="USD", price_basis="buy")
    assert cost.price_basis == "buy"
    with pytest.raises(ValidationError):
        ServingCostOut(low=1.0, expected=1.5, high=2.0, value=1.5, unit="USD", price_basis="lease")


def test_a_ranged_figure_may_have_no_range():
    figure = RangedQuantityOut(value=10.0, unit="token/s")
    assert figure.low is None and figure.high is None


def test_the_answers_carry_load_capacity_and_launch():
    assert {"load", "latency", "capacity", "launch", "rescaled"} <= set(InferenceResult.model_json_schema()["properties"])
    assert {"ranked", "rejected", "launch"} <= set(InferenceRecommendResult.model_json_schema()["properties"])
