"""check_emit: the tool fits the command before the answer is computed; have and unknown names refused."""
import pytest

from sizer import facade
from sizer.errors import InputError
from sizer.launch.dispatch import check_emit


def test_no_emit_is_none():
    assert check_emit(facade.TimeRequest(model="llama-2-7b", tokens=1e9, device="H100 SXM")) is None


@pytest.mark.parametrize("request_model, fields, tool", [
    ("InferenceRequest", {"model": "llama-3.1-8b", "device": "H100 SXM"}, "sglang"),
    ("InferenceRequest", {"model": "llama-3.1-8b", "device": "RTX 4090"}, "llama.cpp"),
    ("TimeRequest", {"model": "llama-2-7b", "tokens": 1e9, "device": "H100 SXM"}, "torchtitan"),
    ("PlanRequest", {"model": "llama-2-7b", "tokens": 1e9, "device": "H100 SXM"}, "nemo"),
    ("MemoryRequest", {"model": "llama-2-7b", "method": "lora"}, "unsloth"),
])
def test_a_fitting_tool_is_returned(request_model, fields, tool):
    assert check_emit(getattr(facade, request_model)(**fields, emit=tool)).name == tool


@pytest.mark.parametrize("request_model, fields, tool", [
    ("InferenceRequest", {"model": "llama-3.1-8b", "device": "H100 SXM"}, "megatron"),
    ("TimeRequest", {"model": "llama-2-7b", "tokens": 1e9, "device": "H100 SXM"}, "vllm"),
    ("MemoryRequest", {"model": "llama-2-7b", "method": "lora"}, "megatron"),
])
def test_a_tool_of_another_question_is_refused(request_model, fields, tool):
    with pytest.raises(InputError) as caught:
        check_emit(getattr(facade, request_model)(**fields, emit=tool))
    assert caught.value.field == "emit"


def test_have_is_refused():
    with pytest.raises(InputError) as caught:
        check_emit(facade.InferenceRequest(model="llama-3.1-8b", have=["1x RTX 4090"], emit="vllm"))
    assert caught.value.field == "emit" and "have" in str(caught.value)
