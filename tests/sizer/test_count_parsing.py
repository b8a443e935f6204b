"""Counts as people write them: sizer.units.parse_count (the one parser of parameter counts)."""
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
