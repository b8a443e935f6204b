"""sizer/runtimes/precision_support.py: which serving engine runs which low precision on which NVIDIA generation,
and what an answer does with it (issue 38, item 4): NVFP4 at the FP4 rate on Blackwell, weight-only before it;
FP8 weight-only on Ampere under vLLM and refused under TensorRT-LLM; FP8 KV caches only where the engine stores them;
rankings that drop what the engine cannot run, with the reason."""
from __future__ import annotations

import pytest

from sizer.choices import KvCache
from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.runtimes import runtime
from sizer.runtimes.precision_support import (
    GENERATIONS,
    KV_CACHES,
    WEIGHTS,
    generation,
    kv_mode,
    no_engine_runs,
    weight_mode,
    weight_only_somewhere,
)
from sizer.runtimes.serving_runtimes import format_refusal, kv_refusal
from sizer.schemas.serving_requests import InferenceRecommendRequest
from sizer.serving.recommend_devices import recommend_inference

# a compute-bound prefill of a 70B model on one device (8 prompts of 2048 tokens)
PREFILL_70B = dict(model="llama-3.1-70b", batch=8, prompt_len=2048, output_len=16)


def _ttft(**fields: object) -> float:
    return estimate_inference(InferenceRequest(**{**PREFILL_70B, **fields})).time_to_first_token.expected


def test_every_cell_has_a_source_and_marks_what_is_recalled():
    for cells in (*WEIGHTS.values(), *KV_CACHES.values()):
        assert set(cells) == set(GENERATIONS)
        for cell in cells.values():
            assert cell.mode in ("native", "weight-only", "refused")
            assert cell.source and "verified: false" in cell.source  # read from docs as recalled, not a saved copy


def test_generations_are_read_from_the_catalog_names(catalog):
    assert generation(catalog.find("RTX 4090").architecture) == "ada"
    assert generation(catalog.find("b300").architecture) == "blackwell"
    assert generation(catalog.find("A100 80GB SXM").architecture) == "ampere"
    assert generation(catalog.find("MI300X").architecture) is None  # not in the matrix: the catalog's peaks decide


def test_the_matrix_cells_the_issue_names():
    # TensorRT-LLM support matrix: NVFP4 on Blackwell only, FP8 W8A8 and FP8 KV from Ada on
    assert weight_mode("tensorrt-llm", "nvfp4", "Blackwell").mode == "native"
    assert weight_mode("tensorrt-llm", "nvfp4", "Hopper").mode == "refused"
    assert weight_mode("tensorrt-llm", "fp8", "Ampere (GA100)").mode == "refused"
    assert kv_mode("tensorrt-llm", "fp8", "Ampere (GA100)").mode == "refused"
    assert kv_mode("tensorrt-llm", "fp8", "Hopper").mode == "native"
    # vLLM: FP8 Marlin (W8A16) on Ampere, FP4 Marlin before Blackwell, FP8 KV stored and computed in 16 bits on Ampere
    assert weight_mode("vllm", "fp8", "Ampere (GA102)").mode == "weight-only"
    assert weight_mode("vllm", "fp8", "Turing").mode == "refused"
    assert weight_mode("vllm", "nvfp4", "Hopper").mode == "weight-only"
    assert kv_mode("vllm", "fp8", "Ampere").mode == "weight-only"
    assert kv_mode("vllm", "int8", "Hopper").mode == "refused"  # vLLM's kv_cache_dtype names no int8
    assert weight_only_somewhere("fp8", "Ampere") and not weight_only_somewhere("fp8", "Volta")
    assert no_engine_runs("nvfp4", "Volta") and not no_engine_runs("nvfp4", "Hopper")


def test_refusals_name_the_engine_the_generation_and_the_source(catalog):
    a100 = catalog.find("A100 80GB SXM").architecture
    why = format_refusal(runtime("tensorrt-llm"), "fp8", a100)
    assert why and "tensorrt-llm" in why and "Ampere" in why and "Support Matrix" in why
    assert format_refusal(runtime("vllm"), "fp8", a100) is None
    kv = kv_refusal(runtime("tensorrt-llm"), KvCache.FP8, a100)
    assert kv and "int8 KV cache on Ampere instead" in kv
    assert kv_refusal(runtime("tensorrt-llm"), KvCache.INT8, a100) is None
    assert kv_refusal(runtime("vllm"), KvCache.FP8, a100) is None


def test_nvfp4_prefills_faster_than_fp8_on_b200_under_tensorrt_llm():
    # issue 38: "B200's NVFP4 is computed at the FP8 rate, so the FP4 systems come out at half"; the FP4 peak
    # (9,000 TFLOP/s dense, DGX B200 datasheet) is twice the FP8 one, less NVFP4's quantisation overhead
    fp4 = _ttft(device="B200", weights="nvfp4", runtime="tensorrt-llm")
    fp8 = _ttft(device="B200", weights="fp8", runtime="tensorrt-llm")
    assert fp4 < 0.9 * fp8


def test_nvfp4_on_hopper_is_weight_only_under_vllm_and_refused_under_tensorrt_llm():
    # vLLM's FP4 Marlin dequantises to 16 bits on an H100 (no FP4 tensor cores): the 16-bit prefill, 4.5-bit weights
    nvfp4 = estimate_inference(InferenceRequest(**PREFILL_70B, device="H100 SXM", weights="nvfp4", runtime="vllm"))
    bf16 = _ttft(device="H100 SXM", weights="bf16", runtime="vllm")
    assert nvfp4.time_to_first_token.expected == pytest.approx(bf16, rel=0.1)
    assert next(a for a in nvfp4.assumptions if a.name == "weights").value.endswith("matrix products at bf16")
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(**PREFILL_70B, device="H100 SXM", weights="nvfp4", runtime="tensorrt-llm"))
    assert error.value.field == "weights" and "Blackwell" in str(error.value)


def test_fp8_on_ampere_is_weight_only_under_vllm_and_refused_under_tensorrt_llm():
    # serving-tails.csv's FP8 points on A100 and RTX A6000 (vLLM) were unaskable: "the catalog has no fp8 peak"
    fp8 = estimate_inference(InferenceRequest(model="llama-3.1-8b", device="A100 80GB SXM", weights="fp8", runtime="vllm"))
    bf16 = estimate_inference(InferenceRequest(model="llama-3.1-8b", device="A100 80GB SXM", weights="bf16",
                                               runtime="vllm"))
    assert fp8.weights_memory.value == pytest.approx(bf16.weights_memory.value / 2, rel=0.05)  # 8-bit weights
    assert fp8.time_to_first_token.expected == pytest.approx(bf16.time_to_first_token.expected, rel=0.1)  # 16-bit rate
    assert any(a.name == "compute precision" and "dequantised" in a.value for a in fp8.assumptions)
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", device="A100 80GB SXM", weights="fp8",
                                            runtime="tensorrt-llm"))
    assert error.value.field == "weights" and "Ampere" in str(error.value)


def test_a_kv_cache_the_named_engine_does_not_store_is_refused_naming_the_field():
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", device="A100 80GB SXM", kv_cache="fp8",
                                            runtime="tensorrt-llm"))
    assert error.value.field == "kv_cache" and "int8" in str(error.value)
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", device="H100 SXM", kv_cache="int8", runtime="vllm"))
    assert error.value.field == "kv_cache"
    ok = estimate_inference(InferenceRequest(model="llama-3.1-8b", device="A100 80GB SXM", kv_cache="int8",
                                             runtime="tensorrt-llm"))
    assert ok.kv_cache == "int8"


def test_a_ranking_under_tensorrt_llm_offers_no_fp8_kv_cache_on_ampere(catalog):
    # issue 38's ranking no one would deploy: "FP8 KV cache on Ampere under TensorRT-LLM"
    searched = recommend_inference(InferenceRecommendRequest(model="llama-3-8b", runtime="tensorrt-llm"), catalog)
    ampere = [row for row in searched.ranked if generation(catalog.find(row.device).architecture) == "ampere"]
    assert ampere and all(row.kv_cache != "fp8" for row in ampere)
    assert all(row.weights != "fp8" for row in ampere)
    pinned = recommend_inference(InferenceRecommendRequest(model="llama-3-8b", runtime="tensorrt-llm", kv_cache="fp8"),
                                 catalog)
    assert not any(generation(catalog.find(row.device).architecture) == "ampere" for row in pinned.ranked)
    a100 = next(x for x in pinned.rejected if x.device == "a100-80gb-sxm4")
    assert "fp8 KV cache" in a100.reason and "Ampere" in a100.reason


def test_an_mlperf_style_fp4_system_is_not_computed_at_the_fp8_rate():
    # issue 38: MLPerf v5's Llama-2-70B on B200 (NVFP4, TensorRT-LLM) came out at half because NVFP4 ran at the FP8
    # rate; a replica of one B200 at MLPerf's mean lengths (628 in, 294 out; benchmarks/serving_accuracy.py) and a
    # large batch is compute-bound, so NVFP4 must serve it faster than FP8, by the FP4 rate over its overhead
    from sizer.engine.constants import SERVING_FP4_OVERHEAD

    def total(weights: str) -> float:
        r = estimate_inference(InferenceRequest(model="llama-2-70b", device="B200", weights=weights, batch=256,
                                                prompt_len=628, output_len=294, runtime="tensorrt-llm"))
        return r.total_tokens_per_s.expected

    gain = total("nvfp4") / total("fp8")
    assert 1.1 < gain <= 2 / (1 + SERVING_FP4_OVERHEAD) + 0.05


def test_an_engine_older_than_its_oldest_generation_is_refused_on_every_format():
    # vLLM's GPU requirements: compute capability 7.0 (Volta) or newer; a P100 ranked under vLLM is no candidate
    from sizer.runtimes import runtime
    from sizer.runtimes.serving_runtimes import format_refusal

    for weights in ("bf16", "fp16", "int8"):
        why = format_refusal(runtime("vllm"), weights, "Pascal")
        assert why is not None and "Volta and newer" in why
    assert format_refusal(runtime("vllm"), "fp16", "Volta") is None
    assert format_refusal(runtime("vllm"), "fp16", "CDNA 3") is None  # not NVIDIA: the catalog's peaks decide
