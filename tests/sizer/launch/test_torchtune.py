"""tune run from a fine-tune: torchtune 0.6's recipes and config keys, the answer's micro-batch, recomputation,
precision and adapter rank."""
import shlex

import pytest

from sizer.errors import InputError
from sizer.launch import torchtune


def _overrides(command: str) -> dict[str, str]:
    words = shlex.split(command.replace("\\\n", " "))
    return dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))


def test_a_one_device_lora(tune):
    result = tune(model="llama-3.1-8b", method="lora", device="RTX 4090", seq_len=1024, emit="torchtune")
    launch = result.launch
    assert launch.options["recipe"] == "lora_finetune_single_device" in launch.command
    assert launch.options["--config"] == "llama3_1/8B_lora_single_device"
    assert set(launch.options) <= torchtune.OPTIONS | {"recipe"} and launch.options["recipe"] in torchtune.RECIPES
    written = _overrides(launch.command)
    assert written["batch_size"] == str(int(result.micro_batch))
    assert written["enable_activation_checkpointing"] == str(result.recompute != "none")
    assert written["dtype"] == result.precision == "bf16"
    assert written["model.lora_rank"] == "8" and written["tokenizer.max_seq_len"] == "1024"
    assert written["gradient_accumulation_steps"] == "1"  # a memory answer chooses none, and says so
    assert any("accumulation" in note for note in launch.notes)


def test_a_multi_device_qlora_with_recomputation(tune):
    result = tune(model="llama-3.1-8b", method="qlora", device="A100 80GB SXM", count=4, zero=3, recompute="full",
                  emit="torchtune")
    launch = result.launch
    assert launch.options["recipe"] == "lora_finetune_distributed" and launch.options["--nproc_per_node"] == 4
    assert launch.options["--config"] == "llama3_1/8B_qlora"
    assert _overrides(launch.command)["enable_activation_checkpointing"] == "True"


def test_a_time_answer_gives_its_accumulation(train):
    result = train(model="llama-3.1-8b", device="H100 SXM", count=8, tokens=1e8, method="lora", emit="torchtune")
    written = _overrides(result.launch.command)
    assert written["gradient_accumulation_steps"] == str(result.layout.accumulation)
    assert written["batch_size"] == str(result.layout.micro_batch)


def test_fp16_is_refused(tune):
    with pytest.raises(InputError) as caught:
        tune(model="llama-3.1-8b", method="lora", device="V100 SXM2 32GB", precision="fp16", emit="torchtune")
    assert caught.value.field == "emit" and "bf16" in str(caught.value)


def test_a_recipe_named_by_the_request_is_used():
    from dataclasses import replace

    from sizer.choices import Method, Optimizer, Recompute
    from sizer.launch.setups import TrainingSetup

    setup = TrainingSetup(model="llama-3.1-8b", tp=1, pp=1, cp=1, dp=1, ep=1, interleave=1, zero=0,
                          recompute=Recompute.NONE, micro_batch=2, accumulation=4, global_batch=8, seq_len=2048,
                          layers=32, precision="bf16", optimizer=Optimizer.ADAMW, method=Method.FULL, lora_rank=None,
                          lora_targets=(), offload=False, count=1, devices_per_node=1, device=None, fits=True)
    assert torchtune.launch(setup).options["recipe"] == "full_finetune_single_device"
    named = torchtune.launch(replace(setup, framework="full_finetune_distributed"))
    assert named.options["recipe"] == "full_finetune_distributed"
