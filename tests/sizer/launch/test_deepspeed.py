"""A ds_config.json from a data-parallel layout: the keys DeepSpeed's config page defines, the layout's values."""
import json

import pytest

from sizer.errors import InputError
from sizer.launch import deepspeed


def test_the_config_is_the_layout(train):
    result = train(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10, tp=1, pp=1, cp=1, zero=2,
                   emit="deepspeed")
    layout, launch = result.layout, result.launch
    config = json.loads(launch.config)
    assert set(launch.options) <= deepspeed.OPTIONS
    assert config["zero_optimization"]["stage"] == 2 == layout.zero
    assert config["train_micro_batch_size_per_gpu"] == layout.micro_batch
    assert config["gradient_accumulation_steps"] == layout.accumulation
    assert config["train_batch_size"] == result.batch_size == layout.micro_batch * layout.accumulation * layout.dp
    assert config["bf16"] == {"enabled": True}


def test_offload_is_written(train):
    config = json.loads(train(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10, tp=1, pp=1, cp=1, zero=2,
                              offload=True, emit="deepspeed").launch.config)
    assert config["zero_optimization"]["offload_optimizer"] == {"device": "cpu"}


def test_tensor_or_pipeline_parallelism_is_refused_with_the_reason(train):
    with pytest.raises(InputError) as caught:
        train(model="llama-2-7b", device="H100 SXM", count=16, tokens=1e10, tp=2, pp=2, emit="deepspeed")
    assert caught.value.field == "emit" and "megatron" in str(caught.value)
