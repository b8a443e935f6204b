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
from sizer.workloads.shipped import shipped_configs

# Hybrid layers (Mamba, linear attention) the engine cannot express: refused, never answered as a plain decoder.
HYBRID = {
    "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-397B-A17B", "nvidia/Qwen3.6-27B-NVFP4", "nvidia/Qwen3.6-35B-A3B-NVFP4",
    "nvidia/Nemotron-H-56B-Base-8K", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "moonshotai/Kimi-K3",  # kimi_linear
}
# No reader for their model_type on this branch (refused naming model.model_type); the h-models branch adds
# readers for most. Each must answer or be refused naming a model field: at merge, move the ones that answer
# out of this set, so that they are held to answering.
NO_READER_YET = {
    "LGAI-EXAONE/EXAONE-4.0-32B", "MiniMaxAI/MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.7", "MiniMaxAI/MiniMax-M3",
    "Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "Qwen/Qwen3-32B", "Qwen/Qwen3-32B-FP8",
    "Qwen/Qwen3-VL-32B-Instruct", "Qwen/Qwen3-VL-32B-Thinking", "XiaomiMiMo/MiMo-7B-Base", "XiaomiMiMo/MiMo-V2-Flash",
    "allenai/Olmo-3.1-32B-Instruct", "deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V4-Flash",
    "deepseek-ai/DeepSeek-V4-Pro", "google/gemma-4-26B-A4B", "meta-llama/Llama-3.2-90B-Vision-Instruct",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct", "microsoft/Phi-mini-MoE-instruct",
    "mistralai/Devstral-2-123B-Instruct-2512", "mistralai/Devstral-Small-2-24B-Instruct-2512",
    "moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2.5", "nvidia/Gemma-4-31B-IT-NVFP4", "nvidia/Kimi-K2.6-NVFP4",
    "nvidia/Llama-3_3-Nemotron-Super-49B-v1", "openai/clip-vit-base-patch32", "zai-org/GLM-5", "zai-org/GLM-5.1",
    "zai-org/GLM-5.2",
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
    assert name in HYBRID or name in NO_READER_YET, f"{name} is refused: {error.message}"


def test_the_refusal_lists_name_shipped_configs_only():
    hub_ids = {c.hub_id for c in shipped_configs()}
    assert HYBRID <= hub_ids and NO_READER_YET <= hub_ids and not HYBRID & NO_READER_YET


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
