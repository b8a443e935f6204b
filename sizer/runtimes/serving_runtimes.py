"""Data-centre serving engines (vLLM, SGLang, TensorRT-LLM): one :class:`~sizer.runtimes.Runtime` each.

Each entry's ``profile`` is a :class:`ServingProfile`: the parallelism and features the engine supports,
its memory fraction and scheduler defaults (read in its source at the version named), and its efficiency
profile, the CPU time its scheduler adds per running request and iteration (sampling, detokenisation,
bookkeeping), fitted by ``benchmarks/serving_accuracy.py --fit`` on the engine's own published rows and
scored on rows it was not fitted on (``benchmarks/ACCURACY.md``, "Serving runtimes").

>>> from sizer.runtimes import runtime
>>> runtime("vllm").profile.memory_share, runtime("trtllm").name
(0.9, 'tensorrt-llm')
"""
from __future__ import annotations

from dataclasses import dataclass

from sizer.choices import GGML_KV_CACHES, DeviceKind, KvCache
from sizer.runtimes.gguf import VLLM_MIXES
from sizer.runtimes.precision_support import generation_refusal, kv_mode, kv_words, refusal_words, weight_mode
from sizer.runtimes.runtime import Purpose, Runtime

# Weight formats a data-centre engine runs (names of sizer.runtimes.formats); GGUF is llama.cpp's.
_COMMON = frozenset({"fp32", "bf16", "fp16", "fp8", "w8a8", "int8", "int4", "gptq-int4-g32", "gptq-int4-g64",
                     "gptq-int4-g128", "awq-int4-g64", "awq-int4-g128", "mxfp4", "nvfp4"})
# GGUF files: vLLM loads them (experimental support; which mixes: sizer.runtimes.gguf)
_GGUF = VLLM_MIXES
# Device generations whose kernels a format needs. AWQ/GPTQ int4 GEMMs (Marlin, AWQ GEMM) use tensor-core
# instructions of Turing (sm_75) and newer: vLLM's quantization table lists no Volta or older support.
FOUR_BIT_KERNEL_GENERATIONS_MISSING = ("kepler", "maxwell", "pascal", "volta")
FOUR_BIT_INT = frozenset({"int4", "gptq-int4-g32", "gptq-int4-g64", "gptq-int4-g128", "awq-int4-g64", "awq-int4-g128"})


@dataclass(frozen=True)
class ServingProfile:
    """What a serving engine does with a deployment, and what it costs beyond the engine's iteration time.

    Parameters
    ----------
    version : str
        The version whose defaults and measurements are described.
    max_running : int
        Most running requests per replica (vLLM ``max_num_seqs``, TensorRT-LLM ``max_batch_size``) [1].
    token_budget : int
        Tokens per iteration under chunked prefill (``max_num_batched_tokens`` / ``max_num_tokens``) [1].
    memory_share : float
        Share of the device memory the engine takes for weights, activations and cache [1].
    kv_free_share : float
        Share of the memory left after weights and activations the KV cache takes [1].
    reserve_kv : bool
        Admit a request only when its prompt and whole answer fit (TensorRT-LLM GUARANTEED_NO_EVICT);
        False: when its prompt fits, preempting the youngest when answers outgrow the cache (vLLM, SGLang).
    sequence_overhead : float
        CPU time per running request per iteration on the scheduler's critical path [s] (fitted).
    parallelism : frozenset of str
        ``tensor``, ``pipeline``, ``expert``, ``data-attention`` (data-parallel attention).
    multi_node : bool
        Whether one replica may span nodes (pipeline parallelism or data-parallel attention across nodes).
    features : frozenset of str
        ``chunked-prefill``, ``prefix-caching``, ``speculative-decoding``, ``tuned-build`` (an engine built and tuned
        per system, whose measured matrix share sizer has: ``tuned``).
    fitted_on : str
        The rows the efficiency profile was fitted on (the rest of the engine's rows are scored).
    """

    version: str
    max_running: int
    token_budget: int
    memory_share: float
    kv_free_share: float
    reserve_kv: bool
    sequence_overhead: float
    parallelism: frozenset[str]
    multi_node: bool
    features: frozenset[str]
    fitted_on: str
    sources: str


def format_refusal(entry: Runtime, weights: str, architecture: str) -> str | None:
    """Why ``entry`` cannot run ``weights`` on a device of ``architecture``, or None when it can.

    Parameters
    ----------
    entry : Runtime
        A serving runtime.
    weights : str
        A weight format name.
    architecture : str
        The device's GPU architecture as the catalog names it (``"Turing"``, ``"Volta"`` ...).

    Returns
    -------
    str or None
        Why it cannot, in a sentence; None when it can.
    """
    if weights not in entry.weight_formats:
        return entry.refusal(weights=weights)
    too_old = generation_refusal(entry.name, architecture)  # an engine with no kernels at all for that generation
    if too_old is not None:
        return too_old
    generation = architecture.strip().lower()
    if weights in FOUR_BIT_INT and generation.startswith(FOUR_BIT_KERNEL_GENERATIONS_MISSING):
        return (f"{entry.name} has no {weights} kernels for {architecture} (4-bit integer GEMMs need Turing "
                "or newer)")
    cell = weight_mode(entry.name, weights, architecture)  # FP8, NVFP4, MXFP4 by generation (precision_support)
    return refusal_words(entry.name, f"run {weights} weights", cell, architecture) if cell.mode == "refused" else None


def kv_refusal(entry: Runtime, kv_cache: KvCache, architecture: str) -> str | None:
    """Why ``entry`` cannot store a ``kv_cache`` KV cache on a device of ``architecture``, or None when it can.

    Parameters
    ----------
    entry : Runtime
        A serving runtime.
    kv_cache : KvCache
        The KV-cache type asked.
    architecture : str
        The device's GPU architecture as the catalog names it.

    Returns
    -------
    str or None
        Why it cannot (TensorRT-LLM's FP8 KV cache before Ada; int8 under vLLM or SGLang), with the source; None
        when it can.
    """
    if (why := entry.refusal(kv_cache=kv_cache)) is not None:
        return why
    cell = kv_mode(entry.name, kv_cache.value, architecture)
    return refusal_words(entry.name, f"store {kv_words(kv_cache.value)}", cell, architecture) if cell.mode == "refused" else None

# The KV-cache types the data-centre engines store: floats, FP8 and int8 with scales, none of llama.cpp's ggml blocks
_SERVING_KV = frozenset(KvCache) - GGML_KV_CACHES

VLLM = Runtime(
    name="vllm", purpose=Purpose.SERVING,
    summary="vLLM: paged KV cache, continuous batching with chunked prefill, preemption by recompute",
    sources=("docs/references.md [kwon2023vllm]", "vllm/engine/arg_utils.py EngineArgs defaults (v0.6)"),
    weight_formats=_COMMON | _GGUF, device_kinds=frozenset({DeviceKind.GPU, DeviceKind.ACCELERATOR}), kv_caches=_SERVING_KV,
    profile=ServingProfile(
        version="0.6", max_running=256, token_budget=2048, memory_share=0.9, kv_free_share=1.0, reserve_kv=False,
        sequence_overhead=90e-6, parallelism=frozenset({"tensor", "pipeline", "expert", "data-attention"}),
        multi_node=True, features=frozenset({"chunked-prefill", "prefix-caching", "speculative-decoding"}),
        fitted_on="vLLM v0.6.0 perf blog offline ShareGPT rows (Llama-3 8B on 1 and 70B on 4 H100s)",
        sources="EngineArgs: max_num_seqs 256, max_num_batched_tokens 2048 (chunked prefill), "
                "gpu_memory_utilization 0.9"),
)

SGLANG = Runtime(
    name="sglang", purpose=Purpose.SERVING,
    summary="SGLang: radix-tree prefix cache, continuous batching with chunked prefill",
    sources=("sglang/srt/server_args.py ServerArgs defaults (v0.3)",),
    weight_formats=_COMMON, device_kinds=frozenset({DeviceKind.GPU, DeviceKind.ACCELERATOR}), kv_caches=_SERVING_KV,
    profile=ServingProfile(
        version="0.3", max_running=256, token_budget=8192, memory_share=0.88, kv_free_share=1.0, reserve_kv=False,
        sequence_overhead=110e-6, parallelism=frozenset({"tensor", "expert", "data-attention"}),
        multi_node=True, features=frozenset({"chunked-prefill", "prefix-caching", "speculative-decoding"}),
        fitted_on="vLLM v0.6.0 perf blog offline ShareGPT rows for SGLang v0.3 (Llama-3 8B on 1, 70B on 4 H100s)",
        sources="ServerArgs: mem_fraction_static about 0.88 on 80 GB cards, chunked_prefill_size 8192"),
    vendors=frozenset({"NVIDIA", "AMD"}),  # CUDA and ROCm builds at 0.3 (its README then; recalled): no TPU, Gaudi or XPU
)

TENSORRT_LLM = Runtime(
    name="tensorrt-llm", purpose=Purpose.SERVING,
    summary="TensorRT-LLM: in-flight batching, KV cache guaranteed for each admitted request",
    sources=("trtllm-build defaults (max_batch_size 2048, max_num_tokens 8192); KvCacheConfig "
             "free_gpu_memory_fraction 0.9",),
    weight_formats=_COMMON, device_kinds=frozenset({DeviceKind.GPU}), kv_caches=_SERVING_KV,
    profile=ServingProfile(
        version="0.17", max_running=2048, token_budget=8192, memory_share=1.0, kv_free_share=0.9, reserve_kv=True,
        sequence_overhead=0.0, parallelism=frozenset({"tensor", "pipeline", "expert"}),
        # tuned-build: an engine built per system, as NVIDIA's MLPerf harness builds it (`tuned`, issue 38)
        multi_node=True, features=frozenset({"chunked-prefill", "prefix-caching", "speculative-decoding", "tuned-build"}),
        fitted_on="TensorRT-LLM perf-overview offline rows (trtllm-bench, v0.17 and v1.0)",
        sources="trtllm-build: max_batch_size 2048, max_num_tokens 8192; KvCacheConfig.free_gpu_memory_fraction 0.9"),
    aliases=("trtllm", "trt-llm"),
    vendors=frozenset({"NVIDIA"}))  # CUDA kernels only (TensorRT-LLM support matrix: NVIDIA GPUs)

RUNTIMES: tuple[Runtime, ...] = (VLLM, SGLANG, TENSORRT_LLM)
DEFAULT_SERVING_RUNTIME = "vllm"
