"""sizer/schemas/measurement.py: the --measured field, typed once at the edge."""
import pytest

from sizer.errors import InputError
from sizer.schemas.measurement import MeasuredKind, parse_measured
from sizer.schemas.time_and_memory import TimeRequest


def test_a_measurement_keeps_its_text_for_json():
    request = TimeRequest(params=1e9, tokens=1e9, device="H100 SXM", measured="TTFT 350 ms")
    assert request.model_dump(mode="json")["measured"] == "TTFT 350 ms"
    assert request.measured.kind is MeasuredKind.TTFT and request.measured.value == pytest.approx(0.35)


def test_a_label_and_a_unit_that_disagree_are_refused():
    with pytest.raises(InputError) as refused:
        parse_measured("peak memory 3 s")
    assert refused.value.field == "measured"
