"""KV-cache storage is a runtime's: llama.cpp's q8_0/q4_0 blocks under llama.cpp only, FP8 nowhere on a desk."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from sizer.choices import KvCache, parse_choice
from sizer.errors import InputError
from sizer.facade import InferenceRecommendRequest, InferenceRequest, estimate_inference
from sizer.runtimes import runtime
from sizer.runtimes.formats import kv_cache_bytes_per_value

LOCAL = {"model": "llama-3.1-8b", "weights": "q4_k_m", "device": "rtx-4090", "prompt_len": 16384}


def _kv_bytes(kv: str) -> float:
    return estimate_inference(InferenceRequest(**LOCAL, kv_cache=kv)).kv_cache_memory.value


def test_ggml_block_bytes():
    # ggml-common.h via ../shared/data/gguf-quant-types.csv: q8_0 34 bytes and q4_0 18 bytes per 32 values
    assert kv_cache_bytes_per_value("q8_0") == pytest.approx(34 / 32)
    assert kv_cache_bytes_per_value("Q4-0") == pytest.approx(18 / 32)


def test_names_with_underscores_parse_in_any_spelling():
    assert parse_choice(KvCache, "Q8_0", "kv_cache") is KvCache.Q8_0
    assert parse_choice(KvCache, "q4-0", "kv_cache") is KvCache.Q4_0


def test_llama_cpp_quantised_cache_holds_its_blocks():
    fp16, q8, q4 = (_kv_bytes(kv) for kv in ("fp16", "q8_0", "q4_0"))
    assert q8 == pytest.approx(fp16 * (34 / 32) / 2, rel=1e-6)
    assert q4 == pytest.approx(fp16 * (18 / 32) / 2, rel=1e-6)


def test_a_smaller_cache_reads_faster_at_depth():
    def decode(kv: str) -> float:
        return estimate_inference(InferenceRequest(**LOCAL, kv_cache=kv)).decode_tokens_per_s.expected
    assert decode("fp16") < decode("q8_0") < decode("q4_0")


@pytest.mark.parametrize("kv", ["fp8", "int8"])
def test_llama_cpp_refuses_caches_it_has_not(kv):
    with pytest.raises(InputError) as err:
        estimate_inference(InferenceRequest(**LOCAL, kv_cache=kv))
    assert err.value.field == "kv_cache" and "q8_0" in str(err.value)


def test_quantised_v_cache_needs_flash_attention():
    with pytest.raises(InputError) as err:
        estimate_inference(InferenceRequest(**LOCAL, kv_cache="q8_0", flash_attention=False))
    assert err.value.field == "kv_cache" and "flash attention" in str(err.value)


def test_mlx_stores_the_model_dtype():
    with pytest.raises(InputError) as err:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", weights="mlx-q4", device="M2 Max", kv_cache="q8_0"))
    assert err.value.field == "kv_cache"


@pytest.mark.parametrize("extra", [{}, {"runtime": "vllm", "rate": 1.0}])
def test_data_centre_engines_refuse_ggml_blocks(extra):
    with pytest.raises(InputError) as err:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", weights="bf16", device="H100 SXM", kv_cache="q4_0",
                                            **extra))
    assert err.value.field == "kv_cache"


def test_recommend_refuses_ggml_blocks():
    with pytest.raises(ValidationError) as err:
        InferenceRecommendRequest(model="llama-3.1-8b", kv_cache="q8_0", total_tokens_per_s=1000)
    assert err.value.errors()[0]["loc"] == ("kv_cache",)


def test_runtime_refusal_names_what_it_stores():
    assert runtime("llama.cpp").refusal(kv_cache=KvCache.Q4_0) is None
    assert "fp8" in (runtime("vllm").refusal(kv_cache=KvCache.Q8_0) or "")
    assert runtime("tensorrt-llm").refusal(kv_cache=KvCache.INT8) is None


def test_every_kv_cache_type_has_its_bytes():
    from sizer.runtimes.formats import KV_CACHE_BYTES
    assert set(KV_CACHE_BYTES) == set(KvCache)
