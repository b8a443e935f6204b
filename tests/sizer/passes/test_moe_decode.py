"""MoE and MLA decode as serving runtimes run them (sizer/passes/moe_decode.py, issue 38 item 5)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.passes import moe_decode
from sizer.passes.arithmetic import kv_cache_bytes_per_token
from sizer.passes.moe_decode import (
    EXPERT_DP_ATTENTION,
    EXPERT_PARALLEL,
    TENSOR_PARALLEL,
    busiest_rank_factor,
    runtime_layouts,
)
from sizer.runtimes import runtime
from sizer.workloads.registry import find_model
from sizer.workloads.shipped import configs_dir

# sgl-project/sglang#2643 as issue 38 quotes it: DeepSeek-V3 on 8 x H200 under SGLang v0.4.1, output tokens/s at
# batch 1 / 8 / 32 (benchmarks/moe_decode_points.csv). Never fitted on (the fixed time per MoE layer is fitted on
# serving-tails.csv and vLLM's gpt-oss blog rows). The 15 % target is NOT reached at batch 1 and 8; the bound
# reached is asserted: +38 / +39 / +15 % today (sizer answered 180 / 852 / 1,823: +499 / +318 / +142 % before),
# guarded a little looser.
SGLANG_2643 = {1: (30.0, 1.45), 8: (206.0, 1.45), 32: (761.0, 1.22)}


def _deepseek(batch: int, **fields) -> float:
    r = estimate_inference(InferenceRequest(model="deepseek-v3", device="H200", count=8, runtime="sglang", batch=batch,
                                            **fields))
    return r.decode_tokens_per_s.expected * batch


@pytest.mark.parametrize("batch", sorted(SGLANG_2643))
def test_deepseek_v3_on_8_h200_is_within_the_bound_reached_on_the_held_out_sglang_figures(batch):
    measured, bound = SGLANG_2643[batch]
    ratio = _deepseek(batch) / measured
    assert 0.85 <= ratio <= bound


def test_deepseek_v3_batch_1_is_no_longer_six_times_the_published_figure():
    # the issue: 180 tokens/s answered against 30 published; no release is 6 x faster at batch 1
    assert _deepseek(1) < 2.0 * SGLANG_2643[1][0]


def test_deepseek_throughput_grows_with_the_batch():
    speeds = [_deepseek(b) for b in (1, 8, 32)]
    assert speeds[0] < speeds[1] < speeds[2]


def test_the_fixed_time_per_local_expert_is_what_brings_batch_1_down():
    arch = find_model("deepseek-v3")
    saved = moe_decode.MOE_EXPERT_SECONDS
    from sizer.memo import clear_all
    try:
        moe_decode.MOE_EXPERT_SECONDS = 0.0
        clear_all()
        without = _deepseek(1)
    finally:
        moe_decode.MOE_EXPERT_SECONDS = saved
        clear_all()
    with_fixed = _deepseek(1)
    # one decode step longer by the 58 MoE layers' fixed time over their 256 routed experts
    # (1 / tokens/s is the step at batch 1)
    assert 1 / with_fixed - 1 / without == pytest.approx(arch.moe_blocks * arch.experts * saved, rel=0.05)


def test_mla_kv_bytes_per_token_are_the_configs_latent_and_rotary_key():
    config = json.loads((configs_dir() / "deepseek-ai--DeepSeek-V3.json").read_text())
    expected = config["num_hidden_layers"] * (config["kv_lora_rank"] + config["qk_rope_head_dim"]) * 2.0  # fp16
    arch = find_model("deepseek-v3")
    assert kv_cache_bytes_per_token(arch, 2.0) == expected == 61 * 576 * 2
    # one latent serves every head: a tensor rank keeps all of it (no head split)
    assert kv_cache_bytes_per_token(arch, 2.0, tensor_parallel=8) == expected


def test_dp_attention_keeps_each_sequences_latent_once_and_holds_more_sequences():
    tp = estimate_inference(InferenceRequest(model="deepseek-v3", device="H200", count=8, runtime="sglang", batch=64))
    dp = estimate_inference(InferenceRequest(model="deepseek-v3", device="H200", count=8, runtime="sglang", batch=64,
                                             dp_attention=True))
    assert dp.kv_cache_memory.value == pytest.approx(tp.kv_cache_memory.value / 8, rel=1e-6)
    assert dp.weights_memory.value > tp.weights_memory.value  # attention whole on every device
    assert dp.max_batch > 4 * tp.max_batch


def test_expert_parallel_waits_for_the_busiest_rank_at_small_batches():
    # 8 experts of 256 over 8 ranks: the busiest holds about 3 of them; thousands of tokens balance it out
    factor = busiest_rank_factor(256, 8, 8, np.asarray([1.0, 4096.0]))
    assert factor[0] > 2.5 and factor[1] == pytest.approx(moe_decode.EP_LOAD_IMBALANCE)
    assert _deepseek(1, expert_parallel=True) < _deepseek(1)


def test_layouts_only_where_the_runtime_runs_them():
    deepseek, dense = find_model("deepseek-v3"), find_model("llama-3-8b")
    sglang, trtllm = runtime("sglang").profile.parallelism, runtime("tensorrt-llm").profile.parallelism
    assert runtime_layouts(deepseek, 8, sglang) == (TENSOR_PARALLEL, EXPERT_PARALLEL, EXPERT_DP_ATTENTION)
    assert runtime_layouts(deepseek, 8, trtllm) == (TENSOR_PARALLEL, EXPERT_PARALLEL)  # no DP attention
    assert runtime_layouts(dense, 8, sglang) == (TENSOR_PARALLEL,)  # no experts
    assert runtime_layouts(deepseek, 3, sglang) == (TENSOR_PARALLEL,)  # 3 does not divide the 256 experts
    assert runtime_layouts(deepseek, 1, sglang) == (TENSOR_PARALLEL,)


@pytest.mark.parametrize(("fields", "field"), [
    (dict(model="deepseek-v3", device="H200", count=8, runtime="tensorrt-llm", dp_attention=True), "dp_attention"),
    (dict(model="llama-3-8b", device="H100 SXM", count=2, expert_parallel=True), "expert_parallel"),
    (dict(model="qwen3-30b-a3b", device="RTX 4090", count=1, runtime="llama.cpp", weights="q4_k_m",
          expert_parallel=True), "expert_parallel"),
])
def test_a_layout_the_runtime_or_model_cannot_run_is_refused_naming_the_field(fields, field):
    with pytest.raises(InputError) as caught:
        estimate_inference(InferenceRequest(**fields))
    assert caught.value.field == field


def test_the_answer_states_the_runtimes_moe_path():
    r = estimate_inference(InferenceRequest(model="deepseek-v3", device="H200", count=8, runtime="sglang",
                                            expert_parallel=True))
    note = next(a for a in r.assumptions if a.name == "MoE and MLA under the runtime")
    assert "EP 8" in note.value and "serving-tails" in note.source and note.verified is False


def test_mla_decode_counts_absorbed_attention_over_the_latent():
    arch = find_model("deepseek-v3")
    # 2 x heads x (2 x kv_lora_rank + rope): scores over 576 values and sums over the 512 latent values, per head
    assert moe_decode.mla_decode_flops_per_kv_token(arch) == 2 * 128 * (2 * 512 + 64)
