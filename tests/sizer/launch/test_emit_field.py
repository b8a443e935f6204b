"""The emit field of a request: any spelling of a tool, kept as given; an unknown name refused naming emit."""
import pytest
from pydantic import ValidationError

from sizer import facade
from sizer.errors import InputError


def test_a_spelling_is_kept_as_given():
    assert facade.InferenceRequest(model="llama-3.1-8b", device="H100 SXM", emit="TensorRT-LLM").emit == "TensorRT-LLM"


def test_an_unknown_tool_is_refused_with_the_tools():
    with pytest.raises((InputError, ValidationError)) as caught:
        facade.TimeRequest(model="llama-2-7b", tokens=1e9, emit="megatorn")
    assert "emit" in str(caught.value) and "megatron" in str(caught.value)
