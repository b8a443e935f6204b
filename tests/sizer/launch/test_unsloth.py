"""An Unsloth snippet from a one-GPU fine-tune: valid Python, the answer's values; several GPUs refused."""
import ast

import pytest

from sizer.errors import InputError
from sizer.launch import unsloth


def test_a_qlora_snippet(tune):
    result = tune(model="llama-3.1-8b", method="qlora", device="RTX 4090", seq_len=2048, recompute="full",
                  emit="unsloth")
    launch = result.launch
    ast.parse(launch.config)  # runs as Python
    assert set(launch.options) <= unsloth.OPTIONS
    assert launch.options["from_pretrained.load_in_4bit"] is True and launch.options["get_peft_model.r"] == 64
    assert launch.options["SFTConfig.per_device_train_batch_size"] == result.micro_batch
    assert launch.options["get_peft_model.use_gradient_checkpointing"] == "unsloth"
    assert "load_in_4bit=True" in launch.config and "max_seq_length=2048" in launch.config


def test_several_devices_are_refused(tune):
    with pytest.raises(InputError) as caught:
        tune(model="llama-3.1-8b", method="lora", device="H100 SXM", count=2, emit="unsloth")
    assert caught.value.field == "emit" and "one GPU" in str(caught.value)
