"""Megatron-LM arguments from a training layout: each one arguments.py (core_r0.13.0) defines, each the layout's."""
import pytest
from launch_text import as_written, command_flags

from sizer.errors import InputError
from sizer.launch import megatron
from sizer.workloads.registry import find_model

BASE = dict(model="llama-2-70b", device="H100 SXM", count=256, tokens=2e12, emit="megatron")


def _checked(launch):
    flags = command_flags(launch.command, 6)  # torchrun --nproc_per_node N --nnodes M pretrain_gpt.py
    assert set(flags) <= megatron.OPTIONS and flags == {k: as_written(v) for k, v in launch.options.items()}
    return launch.options


def test_the_chosen_layout_is_written(train):
    result = train(**BASE)
    layout, options = result.layout, _checked(result.launch)
    assert options["--tensor-model-parallel-size"] == layout.tp and options["--pipeline-model-parallel-size"] == layout.pp
    assert options["--context-parallel-size"] == layout.cp
    assert options["--micro-batch-size"] == layout.micro_batch
    assert options["--global-batch-size"] == result.batch_size == layout.micro_batch * layout.accumulation * layout.dp
    layers = find_model("llama-2-70b").layers
    assert options["--num-layers"] == layers
    if layout.interleave > 1:  # virtual stages: layers / (pp x v) per stage
        assert options["--num-layers-per-virtual-pipeline-stage"] * layout.pp * layout.interleave == layers
    assert options.get("--sequence-parallel") is (True if layout.tp > 1 else None)
    assert options.get("--use-distributed-optimizer") is (True if layout.zero >= 1 else None)
    assert options["--bf16"] is True and result.precision == "bf16"
    assert f"--nproc_per_node 8 --nnodes {result.count // 8}" in result.launch.command


def test_full_recomputation_and_a_pinned_layout(train):
    result = train(model="llama-2-7b", device="H100 SXM", count=16, tokens=1e10, tp=2, pp=2, recompute="full",
                   zero=1, emit="megatron")
    options = _checked(result.launch)
    assert (options["--tensor-model-parallel-size"], options["--pipeline-model-parallel-size"]) == (2, 2)
    assert options["--recompute-granularity"] == "full" and options["--recompute-method"] == "uniform"
    assert options["--use-distributed-optimizer"] is True


def test_selective_recomputation(train):
    options = _checked(train(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10, recompute="selective",
                             emit="megatron").launch)
    assert options["--recompute-granularity"] == "selective" and "--recompute-method" not in options


def test_a_fine_tune_is_not_launched_by_megatron(train):
    with pytest.raises(InputError) as caught:
        train(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e8, method="lora", emit="megatron")
    assert caught.value.field == "emit" and "torchtune" in str(caught.value)
