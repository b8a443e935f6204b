"""Every model `sizer models` lists, and every shipped config, asked end to end through the facade's
inference, memory and time entries with small questions: each answers with a positive finite range, or
is refused with an InputError that names a ``model`` field. The refusals are listed here by reason, so a
model that stops answering (or a hybrid that starts being answered as a plain decoder) fails."""
from __future__ import annotations

import math

import pytest

from sizer.errors import InputError
from sizer.facade import (
    InferenceRequest,
    MemoryRequest,
    TimeRequest,
    estimate_inference,
    find_model,
    list_models,
    memory_estimate,
    time_estimate,
    unsupported_models,
)
from sizer.workloads.refused import refused_models
from sizer.workloads.shipped import shipped_configs

# Hybrid layers (Mamba, linear attention) the engine cannot express: refused, never answered as a plain decoder.
HYBRID = {
    "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-397B-A17B", "nvidia/Qwen3.6-27B-NVFP4", "nvidia/Qwen3.6-35B-A3B-NVFP4",
    "nvidia/Nemotron-H-56B-Base-8K", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "moonshotai/Kimi-K3",  # kimi_linear
}
# Other mechanisms the engine does not model (sizer/workloads/hf_config.py refuses each naming its key): compressed
# sparse attention (DeepSeek-V4), global blocks with their own head size (Gemma 4), cross-attention to image tokens
# (Llama 3.2 Vision), sliding blocks with their own KV heads (MiMo-V2-Flash), block-sparse attention (MiniMax-M3),
# a different shape per block (Nemotron NAS), two towers and no language-model head (CLIP).
OTHER_MECHANISM = {
    "deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-V4-Pro", "google/gemma-4-26B-A4B",
    "nvidia/Gemma-4-31B-IT-NVFP4", "meta-llama/Llama-3.2-90B-Vision-Instruct", "XiaomiMiMo/MiMo-V2-Flash",
    "MiniMaxAI/MiniMax-M3", "nvidia/Llama-3_3-Nemotron-Super-49B-v1", "openai/clip-vit-base-patch32",
}
# Models refused by name (catalog/model_presets/not-supported.yaml): rows of model-shapes-2026-12.csv that are no preset,
# for short convolutions (LFM2), per-layer embeddings (Gemma 3n, Gemma 4 E-models), linear attention (Qwen3.5),
# cross-attention to image tokens (Llama 3.2 11B Vision), sliding blocks with their own heads (Step-3.7-Flash), or an
# expert width no source states (MiniCPM-MoE).
NAMED = {
    "LiquidAI/LFM2-1.2B", "google/gemma-3n-E4B-it", "google/gemma-3n-E2B-it", "google/gemma-4-E4B-it", "google/gemma-4-E2B-it",
    "Qwen/Qwen3.5-0.8B", "Qwen/Qwen3.5-2B", "Qwen/Qwen3.5-4B", "meta-llama/Llama-3.2-11B-Vision-Instruct",
    "meta-llama/Llama-3.2-11B-Vision", "stepfun-ai/Step-3.7-Flash", "openbmb/MiniCPM-MoE-8x2B",
}
SMALL = dict(prompt_len=64, output_len=8)  # short questions: the test runs on CI's two cores
H200_MEMORY = 141e9  # bytes per device (catalog): a model of more 16-bit bytes than ~100 GB is asked on up to 8


def _names() -> list[str]:
    listed = [m.name for m in list_models()]
    return sorted({*listed, *(m.name for m in unsupported_models()), *(c.hub_id for c in shipped_configs())})


def _positive(r) -> None:
    assert 0 < r.low <= r.expected <= r.high and math.isfinite(r.high), r


def _tensor_count(name: str) -> int:
    """1 device, or for a model too large for one H200 the most of 2, 4, 8 its heads divide (tensor parallelism)."""
    arch = find_model(name)
    if arch.params_total() * 2 < 100e9:
        return 1
    return max(c for c in (1, 2, 4, 8) if arch.heads % c == 0 and (arch.kv_heads % c == 0 or c % arch.kv_heads == 0))


def _refused(name: str, error: InputError) -> None:
    assert error.field is not None and error.field.split(".")[0] == "model", (name, error.message)
    assert name in HYBRID or name in OTHER_MECHANISM or name in NAMED, f"{name} is refused: {error.message}"


def test_the_refusal_lists_name_shipped_configs_only():
    hub_ids = {c.hub_id for c in shipped_configs()}
    assert HYBRID <= hub_ids and OTHER_MECHANISM <= hub_ids and not HYBRID & OTHER_MECHANISM


def test_the_models_refused_by_name_are_the_table_s_and_listed():
    assert {entry.name for entry in refused_models()} == NAMED
    assert NAMED <= {m.name for m in unsupported_models()} and not NAMED & {c.hub_id for c in shipped_configs()}


@pytest.mark.parametrize("name", _names())
def test_every_model_answers_or_is_refused_naming_a_model_field(name):
    try:
        arch = find_model(name)
    except InputError as error:
        return _refused(name, error)
    assert name not in HYBRID, f"{name} has hybrid layers but was read as {arch.family}"
    if arch.family == "decoder":
        served = estimate_inference(InferenceRequest(model=name, device="H200", count=_tensor_count(name), **SMALL))
        _positive(served.decode_tokens_per_s)
        _positive(served.time_to_first_token)
        assert served.weights_memory.value > 0
    else:  # encoders are not served token by token: refused naming the model
        with pytest.raises(InputError) as error:
            estimate_inference(InferenceRequest(model=name, device="H200", **SMALL))
        assert error.value.field == "model"
    memory = memory_estimate(MemoryRequest(model=name, device="H100 SXM", seq_len=128, tokens=1e6))
    assert memory.model_states.value > 0 and math.isfinite(memory.total.value)
    timed = time_estimate(TimeRequest(model=name, device="H100 SXM", seq_len=128, tokens=1e6))
    _positive(timed.step_time)
