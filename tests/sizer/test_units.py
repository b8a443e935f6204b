"""sizer/units.py: one registry, bounded parsing, dimension checks."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


# --- money as people write it (issue 12 item 13: the page refused "$5000" and "5k USD") ---------------

@pytest.mark.parametrize(("text", "usd"), [("$5000", 5000), ("5k USD", 5000), ("$5k", 5000), ("5K usd", 5000),
                                           ("1.2M USD", 1.2e6), ("$1.5bn", 1.5e9), ("2B USD", 2e9),
                                           ("$5000 USD", 5000), ("50000 USD", 50000), ("5000 dollars", 5000),
                                           # issue 42: as sizer prints money, and in words
                                           ("2,000,000 USD", 2e6), ("$1,500.50", 1500.5), ("2 million USD", 2e6),
                                           ("$2 million", 2e6), ("3 thousand dollars", 3e3), ("$1.5 billion", 1.5e9)])
def test_money_is_read_as_people_write_it(text, usd):
    # k, M, B are thousand, million, billion: exact decimal scalings, so only float rounding remains.
    assert parse_quantity("budget", text, "[currency]").to("USD").magnitude == pytest.approx(usd, rel=1e-12)


def test_a_dollar_price_per_time_keeps_its_time_unit():
    assert parse_quantity("price", "$2.5/h", "[currency] / [time]").to("USD/hour").magnitude == pytest.approx(2.5)


@pytest.mark.parametrize("text", ["5m USD", "$", "$5 GHz", "-$5", "$-5", "$nan", "5kk USD", "$5e40",
                                  # a comma that groups no thousands (a decimal comma?) stays refused
                                  "1,5 USD", "2,00 USD", "2,00", "5 GHz"])
def test_money_that_is_not_money_is_still_refused(text):
    # "5m USD" stays refused: m is milli to pint, and a budget of 5 milli-dollars is no one's intent.
    with pytest.raises(InputError, match="budget"):
        parse_quantity("budget", text, "[currency]")


@given(st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False))
def test_dollar_sign_and_thousands_agree_with_the_plain_form(amount):
    text = f"{amount:.6g}"
    plain = parse_quantity("budget", f"{text} USD", "[currency]").to("USD").magnitude
    assert parse_quantity("budget", f"${text}", "[currency]").to("USD").magnitude == pytest.approx(plain, rel=1e-12)
    assert parse_quantity("budget", f"{text}k USD", "[currency]").to("USD").magnitude == pytest.approx(1000 * plain,
                                                                                                       rel=1e-12)


@pytest.mark.parametrize("written", ["2 million", "2,000,000", "2000000", "2M", "2000k"])
def test_an_amount_without_its_currency_is_in_usd(written):
    # issue 42 lists "2 million" among money as people write it; USD is the only currency of any price sizer knows
    assert parse_quantity("budget", written, "[currency]").to("USD").magnitude == pytest.approx(2e6)
    assert parse_quantity("budget", f"{written} USD", "[currency]").to("USD").magnitude == pytest.approx(2e6)
