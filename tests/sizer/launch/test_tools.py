"""The registry of tools: names and aliases, a version and a documentation page each, refusals naming emit."""
import pytest

from sizer.errors import InputError
from sizer.launch.tool import Question
from sizer.launch.tools import check_fits, tool_named, tools, tools_for


def test_every_tool_has_a_version_a_page_and_options():
    assert [t.name for t in tools()] == ["vllm", "sglang", "trtllm", "llama.cpp", "megatron", "nemo", "torchtitan",
                                         "deepspeed", "torchtune", "axolotl", "unsloth"]
    for tool in tools():
        assert tool.version[0].isalpha() and any(c.isdigit() for c in tool.version)
        assert tool.documentation.startswith("https://") and tool.options


@pytest.mark.parametrize("spelling, name", [("vLLM", "vllm"), ("TensorRT-LLM", "trtllm"), ("llama_cpp", "llama.cpp"),
                                            ("Megatron-LM", "megatron"), (" Axolotl ", "axolotl")])
def test_spellings(spelling, name):
    assert tool_named(spelling).name == name


def test_an_unknown_tool_lists_the_tools():
    with pytest.raises(InputError) as caught:
        tool_named("vlm")
    assert caught.value.field == "emit" and "vllm" in str(caught.value)


def test_a_tool_for_another_question_names_those_that_fit():
    with pytest.raises(InputError) as caught:
        check_fits("vllm", frozenset({Question.TRAINING}), "a training layout")
    message = str(caught.value)
    assert caught.value.field == "emit" and all(t in message for t in tools_for(frozenset({Question.TRAINING})))
