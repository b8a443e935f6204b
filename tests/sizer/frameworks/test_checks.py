"""What a job takes of its framework (sizer.frameworks.checks): layouts, the recipe's name, refusals."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.facade import MemoryRequest, TimeRequest, estimate_time
from sizer.frameworks import DEFAULT_LAYOUTS, framework
from sizer.frameworks.checks import framework_of, runs_it


def test_no_framework_keeps_the_default_layouts():
    named = framework_of(MemoryRequest(model="llama-3.1-8b"))
    assert named.layouts == DEFAULT_LAYOUTS and named.recipe_name == "" and named.assumptions == ()


def test_the_recipe_is_named_and_cited():
    named = framework_of(MemoryRequest(model="llama-3.1-8b", framework="torchtune"))
    assert named.recipe_name == "torchtune full_finetune_single_device"
    assert named.layouts == framework("torchtune").layouts
    assert named.assumptions[0].source.endswith("8B_full_single_device.yaml") and named.assumptions[0].verified is False


@pytest.mark.parametrize("fields, field", [
    ({"framework": "unsloth", "tp": 2}, "tp"),
    ({"framework": "deepspeed", "pp": 2, "zero": 3}, "zero"),
    ({"framework": "fsdp", "pp": 2}, "pp"),
])
def test_a_given_layout_the_framework_does_not_run_is_refused_naming_the_field(fields, field):
    with pytest.raises(InputError) as error:
        estimate_time(TimeRequest(model="llama-3.1-8b", tokens=1e8, device="H100 SXM", count=8, **fields))
    assert error.value.field == field


def test_the_framework_that_runs_a_layout_is_said():
    assert "megatron runs this layout" in runs_it(tp=2, pp=8, cp=1, ep=1, zero=1).value
    assert "no framework runs ZeRO 3" in runs_it(tp=1, pp=4, cp=1, ep=1, zero=3).value
