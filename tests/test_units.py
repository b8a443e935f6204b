"""sizer/units.py: one registry, bounded parsing, dimension checks."""
import math

import pytest
from hypothesis import given, strategies as st

from sizer.errors import InputError, SizerError
from sizer.units import Quantity, parse_count, parse_quantity, quantity_json, ureg


def test_custom_units_have_their_own_dimensions():
    assert Quantity(1, "TFLOPS").to("FLOP/s").magnitude == 1e12
    assert Quantity(1, "GiB").to("B").magnitude == 2**30
    assert Quantity(1, "GB").to("B").magnitude == 1e9
    assert not Quantity(1, "GB").dimensionless  # a memory size can never pass for a count
    assert Quantity(1, "FLOP").dimensionality != Quantity(1, "Hz").dimensionality * Quantity(1, "s").dimensionality
    assert Quantity(2, "USD/hour").to("USD/day").magnitude == pytest.approx(48)


@pytest.mark.parametrize("text", ["10**10**10 Hz", "1e400 GHz", "nan GHz", "inf GHz", "-1.5 GHz", "5 m", "x" * 5000,
                                  "", "   ", "GHz GHz", "1.5 GHz; import os", "1e5000", "1 GHz**99", "__import__('os')"])
def test_bad_clock_strings_are_refused_with_the_field_named(text):
    with pytest.raises(InputError) as error:
        parse_quantity("clock", text, "[frequency]")
    assert error.value.field == "clock"
    assert "clock" in str(error.value)


def test_wrong_dimension_names_field_value_and_expectation():
    with pytest.raises(InputError, match=r"clock: got '5 m'; expected a frequency"):
        parse_quantity("clock", "5 m", "[frequency]")


def test_quantity_forms_agree():
    as_text = parse_quantity("clock", "1.531 GHz", "[frequency]")
    as_dict = parse_quantity("clock", {"value": 1531, "unit": "MHz"}, "[frequency]")
    as_quantity = parse_quantity("clock", Quantity(1.531e9, "Hz"), "[frequency]")
    assert as_text.to("Hz").magnitude == pytest.approx(as_dict.to("Hz").magnitude) == pytest.approx(as_quantity.to("Hz").magnitude)


def test_counts_accept_numbers_and_refuse_units_nan_and_negatives():
    assert parse_count("params", "175e9") == 175e9
    assert parse_count("params", 12) == 12
    for bad in ("24 GB", float("nan"), -3, 0, True, None, [1]):
        with pytest.raises(SizerError):
            parse_count("params", bad)
    assert parse_count("outputs", 0, allow_zero=True) == 0


def test_errors_are_value_errors():
    assert issubclass(InputError, ValueError)


def test_quantity_json():
    assert quantity_json(Quantity(1.5, "TFLOPS"), "FLOP/s") == {"value": 1.5e12, "unit": "FLOP / s"}


@given(st.text(max_size=80))
def test_any_text_gives_a_quantity_or_the_projects_error(text):
    try:
        value = parse_quantity("clock", text, "[frequency]")
    except SizerError:
        return
    assert math.isfinite(value.magnitude) and value.magnitude > 0
    assert value.dimensionality == ureg.get_dimensionality("[frequency]")


@given(st.floats(min_value=1e-3, max_value=1e6))
def test_ghz_and_mhz_are_the_same_clock(ghz):
    a = parse_quantity("clock", f"{ghz!r} GHz", "[frequency]")
    b = parse_quantity("clock", {"value": ghz * 1000, "unit": "MHz"}, "[frequency]")
    assert a.to("Hz").magnitude == pytest.approx(b.to("Hz").magnitude, rel=1e-12)
