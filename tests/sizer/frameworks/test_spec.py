"""A framework's layouts and recipes (sizer.frameworks.spec)."""
from __future__ import annotations

from sizer.choices import Method
from sizer.frameworks import framework
from sizer.frameworks.spec import Layouts


def test_default_layouts_refuse_only_zero_3_with_pipeline_stages():
    rule = Layouts()
    assert rule.refusal(tp=8, pp=4, cp=2, ep=1, zero=1) is None
    assert rule.refusal(tp=1, pp=4, cp=1, ep=1, zero=2) is None  # torchtitan: FSDP without resharding under a pipeline
    assert rule.refusal(tp=1, pp=4, cp=1, ep=1, zero=3) is not None


def test_deepspeed_pipelines_take_zero_1_at_most_and_unsloth_no_tensor_parallelism():
    # DeepSpeed pipeline tutorial: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism
    assert framework("deepspeed").layouts.refusal(tp=None, pp=2, cp=None, ep=None, zero=2) is not None
    assert framework("deepspeed").layouts.refusal(tp=None, pp=2, cp=None, ep=None, zero=1) is None
    assert "tensor parallelism" in framework("unsloth").layouts.refusal(tp=2, pp=None, cp=None, ep=None, zero=None)


def test_single_device_and_distributed_recipes_differ():
    spec = framework("torchtune")
    single, several = spec.recipe(Method.FULL, 1), spec.recipe(Method.FULL, 8)
    assert single is not None and several is not None and single.name != several.name
    assert single.applies(Method.FULL, 1) and not single.applies(Method.FULL, 2)
    assert single.knobs["optimizer_in_backward"] is True and several.knobs["zero"] == 3
