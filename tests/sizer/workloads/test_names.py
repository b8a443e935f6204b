"""The one name key models are looked up by (sizer/workloads/names.py)."""
import pytest

from sizer.workloads.names import name_key


@pytest.mark.parametrize("a, b", [
    ("Qwen/Qwen3-32B", "qwen3-32b"),  # a hub id and its short name
    ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),  # the organisation and -hf dropped
    ("Llama 3.3 70B", "llama-3.3-70b"),  # spaces, hyphens and case do not matter
])
def test_spellings_of_one_model_share_a_key(a, b):
    assert name_key(a) == name_key(b)


def test_dots_keep_distinct_sizes_apart():
    # GPT-3 1.3B and GPT-3 13B (Brown et al. 2020, Table 2.1) are two models
    assert name_key("gpt3-1.3b") != name_key("gpt3-13b")
