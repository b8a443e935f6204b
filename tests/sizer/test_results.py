"""sizer/results.py: quantities and ranges keep their units on the way out; nothing non-finite
leaves the core."""
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import SizerError
from sizer.results import Estimate, QuantityOut, RangeOut, ensure_finite, finite_json, non_finite_path, time_unit, unit_factor
from sizer.units import Quantity

finite = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("seconds, unit", [
    (599, "s"), (600, "minute"),  # from ten minutes
    (2 * 3600 - 1, "minute"), (2 * 3600, "hour"),  # from two hours
    (3 * 86400 - 1, "hour"), (3 * 86400, "day"),  # from three days
])
def test_time_unit_thresholds(seconds, unit):
    assert time_unit(seconds) == unit


def test_unit_factors_are_the_si_definitions():
    # SI brochure: 1 h = 3600 s, 1 day = 86400 s; GB is 1e9 B, GiB 2**30 B (IEC 80000-13)
    assert unit_factor("hour", "s") == 3600 and unit_factor("day", "s") == 86400
    assert unit_factor("GiB", "B") == 2**30 and unit_factor("GB", "B") == 1e9


def test_a_quantity_out_converts_and_comes_back():
    out = QuantityOut.of(Quantity(1.5, "hour"), "s")
    assert (out.value, out.unit) == (5400, "s")
    assert out.quantity() == Quantity(90, "minute")
    assert QuantityOut.convert(2.5e9, "B", "GB") == QuantityOut(value=2.5, unit="GB")


def test_a_range_from_seconds_is_ordered_and_converted():
    out = RangeOut.of_seconds((3600.0, 7200.0, 10800.0), "hour")
    assert (out.low, out.expected, out.high, out.unit) == (1, 2, 3, "hour")


def test_an_estimate_must_be_ordered():
    with pytest.raises(AssertionError):
        Estimate(Quantity(2, "s"), Quantity(1, "s"), Quantity(3, "s"))


@given(finite, finite, finite, finite)
def test_estimate_arithmetic_keeps_the_order(a, b, c, factor):
    low, mid, high = sorted((a, b, c))
    e = Estimate(Quantity(low, "s"), Quantity(mid, "s"), Quantity(high, "s"))
    for combined in (e + e, e * factor, factor * e, e + Quantity(factor, "s"), e * e):
        assert combined.low <= combined.expected <= combined.high
    hours = e.to("hour").out("hour")
    assert hours.low == pytest.approx(low / 3600) and hours.high == pytest.approx(high / 3600)


def test_estimate_exact_is_one_value_three_times():
    e = Estimate.exact(Quantity(4, "GB"))
    assert e.low == e.expected == e.high == Quantity(4e9, "B")


def test_non_finite_path_names_the_number():
    result = {"ranked": [{"time": {"low": 1.0, "high": 2.0}}, {"time": {"low": 1.0, "high": math.nan}}]}
    assert non_finite_path(result) == "ranked[1].time.high"
    assert non_finite_path({"x": [1.0, 2.0], "name": "inf"}) is None
    assert non_finite_path(float("-inf")) == "result"
    assert non_finite_path(RangeOut.model_construct(low=0.0, expected=1.0, high=math.inf, unit="s")) == "high"


def test_ensure_finite_refuses_with_the_path_and_passes_finite_results():
    good = RangeOut(low=1.0, expected=2.0, high=3.0, unit="s")
    assert ensure_finite(good) is good
    with pytest.raises(SizerError, match=r"\(cost\.expected\)"):
        ensure_finite({"cost": {"low": 1.0, "expected": math.inf}})


@given(st.dictionaries(st.sampled_from("abcde"), st.floats(allow_nan=False, allow_infinity=False), max_size=5),
       st.text(max_size=20))
def test_finite_json_is_the_standard_json_of_finite_data(data, text):
    payload = {"numbers": data, "label": text}
    assert json.loads(finite_json(payload, plain=True)) == payload


@given(st.sampled_from([math.inf, -math.inf, math.nan]))
def test_finite_json_never_writes_a_non_finite_number(bad):
    with pytest.raises(SizerError, match="numbers.b"):
        finite_json({"numbers": {"a": 1.0, "b": bad}})
