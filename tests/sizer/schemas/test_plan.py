"""sizer/schemas/plan.py: the request and answer of `sizer plan`."""
import pytest

from sizer.errors import InputError
from sizer.schemas.plan import DEFAULT_SHOWN, PlanRequest, PlanResult


def test_the_layouts_shown_default_and_bound():
    assert PlanRequest(params=1e9, tokens=1e9, device="H100 SXM").shown == DEFAULT_SHOWN
    with pytest.raises(InputError) as refused:
        PlanRequest(params=1e9, tokens=1e9, device="H100 SXM", shown=0)
    assert refused.value.field == "shown"


def test_the_answer_lists_layout_options():
    schema = PlanResult.model_json_schema()
    assert "LayoutOption" in schema["$defs"]
