"""sizer/schemas/time_and_memory.py: the requests and answers of `sizer time` and `sizer memory`."""
import pytest

from sizer.errors import InputError
from sizer.schemas.measurement import MeasuredKind
from sizer.schemas.time_and_memory import MemoryRequest, MemoryResult, TimeRequest, TimeResult


def test_a_measurement_is_typed_where_the_time_request_is_built():
    request = TimeRequest(params=1e9, tokens=1e9, device="H100 SXM", measured="1.2 s/step")
    assert request.measured is not None and request.measured.kind is MeasuredKind.STEP_TIME
    assert request.measured.value == pytest.approx(1.2)


def test_a_bad_layout_field_is_refused_naming_it():
    with pytest.raises(InputError) as refused:
        MemoryRequest(params=1e9, zero=4)
    assert refused.value.field == "zero"


def test_the_answers_carry_the_rescaling_and_the_launch_fields():
    # the two records the answers share with sizer.measured and sizer.launch, named by type in the JSON schema
    for result in (TimeResult, MemoryResult):
        properties = result.model_json_schema()["properties"]
        assert {"rescaled", "launch", "suggestions", "assumptions"} <= set(properties)
