"""An answer with its launch field: plan's fastest layout, no field without emit, refusals before the answer."""
import pytest

from sizer import facade
from sizer.errors import InputError


def test_plan_launches_its_fastest_layout():
    result = facade.plan(facade.PlanRequest(model="llama-2-7b", device="H100 SXM", count=16, tokens=1e10,
                                            emit="megatron"))
    best = result.layouts[0]
    options = result.launch.options
    assert options["--tensor-model-parallel-size"] == best.tp and options["--pipeline-model-parallel-size"] == best.pp
    assert options["--micro-batch-size"] == best.micro_batch and options["--global-batch-size"] == best.batch_size


def test_no_emit_no_launch():
    result = facade.estimate_inference(facade.InferenceRequest(model="llama-3.1-8b", device="H100 SXM"))
    assert result.launch is None


def test_a_tool_for_another_question_is_refused_before_the_answer(monkeypatch):
    import sizer.training.estimates as estimates

    def never(*_, **__):
        raise AssertionError("the answer was computed before the refusal")

    monkeypatch.setattr(estimates, "time_estimate", never)
    with pytest.raises(InputError) as caught:
        facade.estimate_time(facade.TimeRequest(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10,
                                                emit="vllm"))
    assert caught.value.field == "emit" and "megatron" in str(caught.value)


def test_emit_with_have_is_refused():
    with pytest.raises(InputError) as caught:
        facade.answer_owned(facade.TimeRequest(model="llama-2-7b", tokens=1e10, have=["8x H100 SXM"],
                                               emit="megatron"))
    assert caught.value.field == "emit"


def test_an_unknown_tool_is_refused_where_the_request_is_built():
    from pydantic import ValidationError

    with pytest.raises((InputError, ValidationError)) as caught:
        facade.MemoryRequest(model="llama-3.1-8b", method="lora", emit="tortchtune")
    assert "emit" in str(caught.value) and "torchtune" in str(caught.value)


@pytest.mark.parametrize("name", ["ollama", "llama.cpp"])
def test_llama_cpp_by_any_of_its_names_launches_llama_server(name):
    # the local runtime's identity, not its name as typed, decides the tool (issue 41: no name compared as a string)
    result = facade.estimate_inference(facade.InferenceRequest(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m",
                                                               runtime=name, emit="llama.cpp"))
    assert result.launch.tool == "llama.cpp" and result.launch.command.startswith("llama-server")


def test_a_local_answer_under_mlx_has_no_llama_cpp_launch():
    with pytest.raises(InputError) as caught:
        facade.estimate_inference(facade.InferenceRequest(model="llama-3.1-8b", device="M2 Ultra", weights="mlx-q4",
                                                          emit="llama.cpp"))
    assert caught.value.field == "emit" and "no tool yet for mlx" in str(caught.value)
