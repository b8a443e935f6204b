"""The framework names (sizer.frameworks.framework_name): one enum, parsed in any spelling, refused naming the field."""
from __future__ import annotations

import pytest

from sizer.choices import parse_choice
from sizer.errors import InputError
from sizer.facade import MemoryRequest
from sizer.frameworks.framework_name import Framework


def test_the_issues_eleven_frameworks_are_named():
    # issue 39, item 2: torchtune | unsloth | axolotl | llama-factory | hf-trainer | deepspeed | fsdp | megatron |
    # nemo | torchtitan | maxtext (and litgpt, the tool of the litgpt data)
    named = {"torchtune", "unsloth", "axolotl", "llama-factory", "hf-trainer", "deepspeed", "fsdp", "megatron", "nemo",
             "torchtitan", "maxtext"}
    assert named <= {f.value for f in Framework}


def test_any_spelling_and_a_bad_name_names_the_field():
    assert parse_choice(Framework, "HF_Trainer", "framework") is Framework.HF_TRAINER
    assert MemoryRequest(model="llama-3.1-8b", framework="LLaMA_Factory").framework is Framework.LLAMA_FACTORY
    with pytest.raises(InputError) as error:
        parse_choice(Framework, "colossalai", "framework")
    assert error.value.field == "framework"
    with pytest.raises(Exception) as raised:
        MemoryRequest(model="llama-3.1-8b", framework="colossalai")
    assert "framework" in str(raised.value)
