"""torchtune's config folder and size from a model's name."""
import pytest

from sizer.launch.finetune_names import torchtune_model


@pytest.mark.parametrize("name, expected", [
    ("llama-3.1-8b", "llama3_1/8B"), ("llama-3.2-1b", "llama3_2/1B"), ("llama-3-70b", "llama3/70B"),
    ("meta-llama/Llama-2-13b-hf", "llama2/13B"), ("Qwen/Qwen2.5-7B-Instruct", "qwen2_5/7B"),
    ("qwen3-0.6b", "qwen3/0.6B"), ("mistral-7b", "mistral/7B"),
])
def test_known_families(name, expected):
    assert torchtune_model(name) == expected


@pytest.mark.parametrize("name", [None, "gpt2", "llama-3.1", "bert-large"])
def test_unknown_families_or_sizes(name):
    assert torchtune_model(name) is None
