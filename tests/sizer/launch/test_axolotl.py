"""An Axolotl YAML from a fine-tune: the keys its config reference defines, the answer's values."""
import pytest
import yaml

from sizer.errors import InputError
from sizer.launch import axolotl


def test_a_qlora_on_four_devices(tune):
    result = tune(model="llama-3.1-8b", method="qlora", device="A100 80GB SXM", count=4, zero=3, recompute="full",
                  emit="axolotl")
    config = yaml.safe_load(result.launch.config)
    assert set(config) <= axolotl.OPTIONS and set(result.launch.options) == set(config)
    assert config["adapter"] == "qlora" and config["load_in_4bit"] is True and config["lora_r"] == 64
    assert config["micro_batch_size"] == result.micro_batch and config["gradient_checkpointing"] is True
    assert config["deepspeed"] == "deepspeed_configs/zero3.json" and config["bf16"] is True


def test_a_full_fine_tune_has_no_adapter(tune):
    config = yaml.safe_load(tune(model="llama-3.1-8b", method="full", device="H100 SXM", emit="axolotl").launch.config)
    assert "adapter" not in config and "lora_r" not in config and "deepspeed" not in config


def test_pipeline_parallelism_is_refused(train):
    with pytest.raises(InputError) as caught:
        train(model="llama-2-7b", device="H100 SXM", count=16, tokens=1e10, pp=2, emit="axolotl")
    assert caught.value.field == "emit" and "pp 2" in str(caught.value)
