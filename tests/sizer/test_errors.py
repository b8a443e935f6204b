"""sizer/errors.py: every error a user can cause names the field and says what to give."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import CatalogError, DeviceLookupError, EstimateTimeout, InputError, InputErrors, SizerError, require_device


def test_every_user_error_is_a_value_error():
    # style guide: user errors subclass ValueError (pvlib, pint)
    for kind in (InputError, InputErrors, CatalogError, DeviceLookupError, EstimateTimeout):
        assert issubclass(kind, SizerError) and issubclass(kind, ValueError)


def test_an_input_error_names_the_field_the_value_and_what_to_give():
    error = InputError("batch_size", -4, "a positive number of sequences")
    assert str(error) == "batch_size: got -4; expected a positive number of sequences"
    assert (error.field, error.value, error.expected) == ("batch_size", -4, "a positive number of sequences")


def test_a_missing_value_reads_not_given_never_none():
    assert str(InputError("device", None, "a device name")) == "device: not given; expected a device name"


def test_a_long_value_is_cut():
    message = InputError("model", "x" * 500, "a model name").message
    # 60 characters of the value's repr at most: the quote and 56 letters, then an ellipsis
    assert len(message) < 120 and "'" + "x" * 56 + "...'" in message and "x" * 57 not in message


def test_several_errors_keep_each_field_and_one_line_each():
    errors = [InputError("precision", "fp12", "one of fp32, bf16"), InputError("devices", 0, "at least 1")]
    both = InputErrors(errors)
    assert both.field == "precision" and [e.field for e in both.errors] == ["precision", "devices"]
    assert str(both).splitlines() == [e.message for e in errors]


def test_several_errors_take_a_model_check_beside_a_parse_error():
    # a request model's own refusal (a bound) is a SizerError, not an InputError: both go in one answer
    errors = [SizerError("max_devices: Input should be greater than or equal to 1", "max_devices"),
              InputError("params", "seven", "a number such as 7e9")]
    both = InputErrors(errors)
    assert [e.field for e in both.errors] == ["max_devices", "params"]
    assert str(both).splitlines() == [e.message for e in errors]


def test_a_lookup_error_carries_its_candidates():
    error = DeviceLookupError("'A100' matches several devices", ["A100 40GB", "A100 80GB"])
    assert error.field == "device" and error.candidates == ["A100 40GB", "A100 80GB"]


def test_a_timeout_says_what_to_do():
    error = EstimateTimeout(2.5)
    assert "2.5 s" in error.message and "max_devices" in error.message and error.seconds == 2.5


def test_require_device_names_the_field_and_an_example():
    class Request:
        device = None

    with pytest.raises(SizerError, match="device: give a device") as error:
        require_device(Request())
    assert error.value.field == "device" and "--have" in error.value.message
    Request.device = "H100 SXM"
    assert require_device(Request()) == "H100 SXM"


@given(st.text(min_size=1, max_size=30).filter(str.isidentifier), st.one_of(st.integers(), st.text(max_size=200),
                                                                            st.floats(allow_nan=False)))
def test_the_message_always_starts_with_the_field(field, value):
    error = InputError(field, value, "something else")
    assert error.message.startswith(f"{field}: ") and error.message.endswith("; expected something else")
    assert "\n" not in error.message.replace(repr(value)[:57], "")  # one line, the value aside


def test_an_entry_written_by_its_name_is_quoted_by_it():
    from sizer.errors import InputError, WrittenByName
    from sizer.runtimes.formats import weight_format

    class Entry(WrittenByName):
        def __init__(self, name: str) -> None:
            self.name = name

    assert InputError("runtime", Entry("llama.cpp"), "a runtime").message == "runtime: got 'llama.cpp'; expected a runtime"
    assert isinstance(weight_format("Q4-K-M"), WrittenByName) and weight_format("Q4-K-M").as_written() == "q4_k_m"
