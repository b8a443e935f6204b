"""Training-state recipes (sizer.engine.recipe) and the memory terms they change in the one memory model."""
from __future__ import annotations

import pytest

from sizer.choices import Optimizer, Precision
from sizer.engine.recipe import Recipe, resolve_recipe
from sizer.errors import InputError
from sizer.facade import MemoryRequest, estimate_memory

GB = 1e9


@pytest.mark.parametrize("state, optimizer, expected", [
    # ZeRO paper §3 (Rajbhandari et al. 2020): mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes per parameter
    (Precision.MIXED, Optimizer.ADAMW, {"weights": 2, "gradients": 2, "master_weights": 4, "optimizer_states": 8}),
    # torchtune dtype bf16: both Adam moments in bf16, no master copy: 2 + 2 + 4
    (Precision.BF16, Optimizer.ADAMW, {"weights": 2, "gradients": 2, "master_weights": 0, "optimizer_states": 4}),
    # Lion keeps one momentum (Chen et al. 2023, Algorithm 2); SGD none; momentum one
    (Precision.MIXED, Optimizer.LION, {"weights": 2, "gradients": 2, "master_weights": 4, "optimizer_states": 4}),
    (Precision.MIXED, Optimizer.SGD, {"weights": 2, "gradients": 2, "master_weights": 4, "optimizer_states": 0}),
    (Precision.BF16, Optimizer.MOMENTUM, {"weights": 2, "gradients": 2, "master_weights": 0, "optimizer_states": 2}),
])
def test_bytes_per_param_against_sources(state, optimizer, expected):
    assert Recipe(state_precision=state, optimizer=optimizer).bytes_per_param(2.0, 4.0) == pytest.approx(expected)


def test_eight_bit_states_stay_eight_bit_in_pure_bf16():
    # Dettmers et al. 2022 §2: 1 byte per state value + one FP32 absmax per 2048 values, two states
    per_param = Recipe(state_precision=Precision.BF16, optimizer=Optimizer.ADAMW_8BIT).state_bytes()
    assert per_param == pytest.approx(2 * (1 + 4 / 2048))


def test_adafactor_is_factored():
    # Shazeer & Stern 2018 §3: n + m values for an n x m matrix, far below one FP32 copy
    assert 0 < Recipe(optimizer=Optimizer.ADAFACTOR).state_bytes() < 0.01


@pytest.mark.parametrize("fields, field", [
    ({"state_precision": Precision.BF16, "optimizer": Optimizer.ADAMW, "precision": Precision.FP32}, "state_precision"),
    ({"state_precision": Precision.FP8, "optimizer": Optimizer.ADAMW, "precision": Precision.MIXED}, "state_precision"),
    ({"state_precision": Precision.MIXED, "optimizer": Optimizer.PAGED_ADAMW_8BIT, "precision": Precision.MIXED, "offload": True}, "optimizer"),
    ({"state_precision": Precision.MIXED, "optimizer": Optimizer.ADAMW, "precision": Precision.MIXED, "optimizer_in_backward": True,
      "offload_params": True}, "optimizer_in_backward"),
])
def test_combinations_refused_naming_the_field(fields, field):
    with pytest.raises(InputError) as error:
        resolve_recipe(**fields)
    assert error.value.field == field


def _memory(**fields):
    return estimate_memory(MemoryRequest(**fields), suggest=False)


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_logits_never_divided_by_blocks(recompute):
    # 8192 tokens x 4 sequences x 128,256 vocabulary x 4 bytes = 16.8 GB of FP32 logits (Korthikanti et al. 2022
    # §4.1: 4sbv), as much of their softmax gradient and the bf16 logits they came from (2 bytes), under every
    # recomputation policy
    result = _memory(model="llama-3-8b", method="qlora", device="RTX 4090", seq_len=8192, micro_batch=4, recompute=recompute)
    assert result.logits.value * GB == pytest.approx(8192 * 4 * 128256 * (4 + 4 + 2), rel=1e-6)
    assert result.fits is False  # one term alone (the logits) is larger than the 24 GB device


def test_chunked_and_fused_loss_hold_less():
    standard, chunked, fused = (_memory(model="llama-3-8b", method="qlora", seq_len=8192, micro_batch=1, loss=loss).logits.value
                                for loss in ("standard", "chunked", "fused"))
    assert fused < chunked < standard
    assert chunked == pytest.approx(standard * 3 / 10)  # torchtune: 16-bit logits + one of 8 FP32 chunks


def test_full_fine_tune_of_8b_fits_a_4090_with_torchtune_recipe():
    # torchtune's Llama 3.1 8B single-device full fine-tune is published at about 19 GiB on an RTX 4090
    result = _memory(model="llama-3.1-8b", method="full", device="RTX 4090", seq_len=2048, state_precision="bf16",
                     optimizer="paged-adamw-8bit", optimizer_in_backward=True, recompute="full")
    assert result.fits
    assert 15 * 2**30 < result.active.value * GB < 23 * 2**30
    assert result.gradients.value < result.weights.value / 10  # one tensor's gradient, not all
    assert result.host_memory.value > 10  # the paged 8-bit states: ~16 GB in unified memory
    assert "paged adamw 8-bit" in result.recipe and "checkpointing on" in result.recipe


def test_mixed_adamw_full_fine_tune_does_not_fit_a_4090():
    assert not _memory(model="llama-3.1-8b", method="full", device="RTX 4090", seq_len=2048, recompute="full").fits


def test_offloads_move_memory_to_host():
    base = _memory(model="llama-3.1-8b", method="full", seq_len=2048, recompute="full")
    params = _memory(model="llama-3.1-8b", method="full", seq_len=2048, recompute="full", offload_params=True)
    activations = _memory(model="llama-3.1-8b", method="full", seq_len=2048, recompute="full", offload_activations=True)
    assert params.weights.value < base.weights.value / 10 and params.host_memory.value > base.model_states.value * 0.9
    assert activations.activations.value < base.activations.value


def test_the_default_method_said_aloud_changes_nothing_and_adapters_get_a_fine_tuning_batch():
    # issue 43: --method full, the documented default, switched to the fine-tuning batch (up to 4.2x the time)
    from sizer.engine.job import FINETUNE_BATCH, resolve_job
    from sizer.schemas.base import WorkloadRequest

    said = resolve_job(WorkloadRequest(model="llama-3.1-8b", method="full", tokens=5e7))
    unsaid = resolve_job(WorkloadRequest(model="llama-3.1-8b", tokens=5e7))
    assert said.batch_size == unsaid.batch_size and said.tokens_per_sample == unsaid.tokens_per_sample
    assert [a.value for a in said.assumptions] == [a.value for a in unsaid.assumptions]
    lora = resolve_job(WorkloadRequest(model="llama-3.1-8b", method="lora", tokens=5e7))
    assert lora.batch_size == FINETUNE_BATCH  # sequences, not a pre-training batch
    batch = [a.value for a in lora.assumptions if a.name == "batch size"]
    assert batch and "fine-tuning batch" in batch[0]


def _step(**fields):
    from sizer.facade import TimeRequest, estimate_time

    return estimate_time(TimeRequest(**fields), suggest=False).step_time.expected


def test_paged_states_that_do_not_stay_on_the_device_cost_pcie_time():
    # 8B x 2 bytes of 8-bit states (16 GB) cannot stay beside 21 GB on a 24 GB card: they cross PCIe each step
    base = dict(model="llama-3.1-8b", method="full", tokens=1e7, device="RTX 4090", seq_len=2048, micro_batch=1,
                state_precision="bf16", optimizer_in_backward=True, recompute="full")
    paged, plain = _step(**base, optimizer="paged-adamw-8bit"), _step(**{**base, "device": "H100 SXM"}, optimizer="paged-adamw-8bit")
    assert paged > 2 * 16e9 * 0.8 / 31.5e9  # at least most of the spilled states twice over PCIe 4.0 x16
    assert plain < paged  # on an 80 GB card they stay on the device


def test_qlora_dequantisation_is_in_series():
    # bitsandbytes dequantises each 4-bit weight before every matmul: QLoRA is slower than LoRA on the same base
    base = dict(model="llama-2-7b", tokens=1e6, device="A100 40GB", seq_len=256, micro_batch=1, batch_size=256,
                lora_rank=8, lora_targets="q,v", recompute="none")
    assert _step(**base, method="qlora") > 1.3 * _step(**base, method="lora")  # litgpt: 0.22 against 0.14 s/it


def test_offload_without_a_layout_shards_and_checkpoints():
    # the case: Llama 3.1 70B on 8 x A100 with --offload picked plain data parallel and did not fit; the
    # published recipes (FSDP CPUOffload with FULL_SHARD) shard over the replicas and checkpoint the blocks
    from sizer.facade import TimeRequest, estimate_time

    result = estimate_time(TimeRequest(model="llama-3.1-70b", method="full", tokens=5e7, seq_len=2048,
                                       device="A100 80GB SXM", count=8, offload=True, host_memory="2 TB"), suggest=False)
    assert result.layout.zero == 3 and result.layout.recompute == "full"
    assert result.fits and result.memory_per_device.value < 80
    assert any(a.name == "offload layout" for a in result.assumptions)


def test_padded_samples_cost_the_padding():
    # samples of 512 real tokens padded to 2,048 compute 2,048 tokens each: 4x the sequences for the same data,
    # real tokens per second a quarter; packed (the default) computes only data
    from sizer.facade import TimeRequest, estimate_time

    base = dict(model="llama-3.1-8b", method="lora", tokens=1e7, device="H100 SXM", seq_len=2048)
    packed = estimate_time(TimeRequest(**base), suggest=False)
    padded = estimate_time(TimeRequest(**base, sample_tokens=512), suggest=False)
    assert padded.steps == pytest.approx(4 * packed.steps, rel=0.02)
    assert padded.throughput.expected == pytest.approx(packed.throughput.expected / 4, rel=0.02)
    with pytest.raises(InputError) as error:
        estimate_time(TimeRequest(**base, sample_tokens=4096), suggest=False)
    assert error.value.field == "sample_tokens"
