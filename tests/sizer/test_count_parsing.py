"""Counts as people write them: sizer.units.parse_count (the one parser of parameter counts)."""
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import InputError, SizerError
from sizer.units import COUNT_MULTIPLIERS, parse_count

finite = st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("text, value", [
    ("7B", 7e9), ("7b", 7e9), ("1.3e9", 1.3e9), ("70 billion", 70e9), ("175M", 175e6), ("125m", 125e6),
    ("1.5 trillion", 1.5e12), ("1.5T", 1.5e12), ("20k", 20e3), ("  13 B ", 13e9), ("2.6e10", 2.6e10),
    ("70 Billion", 70e9), ("3 bn", 3e9)])
def test_counts_with_multipliers(text, value):
    assert parse_count("params", text) == pytest.approx(value, rel=1e-15)


@given(finite, st.sampled_from(sorted(COUNT_MULTIPLIERS)))
def test_suffix_is_the_multiplier(x, suffix):
    # "{x}B" == x * 1e9, in either case and with or without a space
    for text in (f"{x!r}{suffix}", f"{x!r} {suffix.upper()}"):
        assert parse_count("params", text) == x * COUNT_MULTIPLIERS[suffix]


@pytest.mark.parametrize("bad", ["7 GB", "7 GiB", "7 Hz", "B", "7BB", "7 bazillion", "-7B", "0B", "nan B", "1e400B",
                                 "7" + "0" * 70 + "B"])
def test_bad_counts_are_input_errors(bad):
    with pytest.raises(SizerError):
        parse_count("params", bad)


def test_zero_with_multiplier_only_when_allowed():
    assert parse_count("tokens", "0B", allow_zero=True) == 0
    with pytest.raises(InputError):
        parse_count("tokens", "0B")


def test_whole_number_check_applies_to_multiplied_counts():
    assert parse_count("count", "2k", integer=True) == 2000
    with pytest.raises(InputError):
        parse_count("count", "1.5e-3k", integer=True)



def _answer(text, options):
    try:
        value = parse_count("params", text, **options)
        return type(value), value
    except InputError as error:
        return str(error)


@pytest.mark.parametrize("text", ["7e9", "2e10", "1", " 1536 ", "7E9", "7e+9", "7e-9", ".5", "7.", "007", "+5", "0.1",
                                  "1e30", "1e-30", "12345678901234567890", "0", "-0", "-5", "1e31", "1e-31", "1e-400",
                                  "1.5", "nan", "inf", "1e0400"])
@pytest.mark.parametrize("options", [{}, {"allow_zero": True}, {"integer": True}])
def test_plain_numbers_read_as_the_unit_parser_reads_them(text, options, monkeypatch):
    # the command line passes every count as text: a plain number is read by float() without pint, the same number
    # (a float) or the same error as the unit parser's path gives
    fast = _answer(text, options)
    monkeypatch.setattr("sizer.units._PLAIN_COUNT_RE", re.compile("(?!)"))  # no text takes the plain path
    assert fast == _answer(text, options)
