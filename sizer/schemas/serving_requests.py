"""The requests of the serving questions: ``sizer inference`` (:class:`InferenceRequest`), ``sizer recommend
--inference`` (:class:`InferenceRecommendRequest`), what both serve (:class:`ServedModel`) and the load they serve it
under (:class:`LoadFields`).

Beside the other questions' requests in :mod:`sizer.schemas`, one tier higher than the rest of the package
(``tests/sizer/test_core_imports.py``): their ``runtime``, ``weights`` and ``lengths`` fields hold the runtime
registry's entry, the weight format and the length set (:mod:`sizer.runtimes`, :mod:`sizer.simulator.traffic`),
found where the request is built, so this module sits above those registries and below the serving room that
answers these requests.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from sizer.choices import CATALOG_KINDS, CatalogKindName, KvCache, KvCacheName, ServingObjective, Split
from sizer.formulas.tco import Pricing
from sizer.launch.emit_field import EmitName
from sizer.runtimes import RuntimeName
from sizer.runtimes.formats import KV_CACHE_BYTES, WeightsName, ggml_kv_refusal
from sizer.schemas.base import RequestModel
from sizer.schemas.measurement import Measured
from sizer.simulator.simulate import DEFAULT_MAX_BATCH, DEFAULT_TOKEN_BUDGET
from sizer.simulator.traffic import LengthsName
from sizer.units import Count, Duration, Memory, MoneyPerTime, Seconds, SecondsOrZero
from sizer.workloads.source import Source

LONGEST = 86_400.0  # s: the longest think time or latency limit taken (a day)


# A time as the user gives it: a number of seconds, a quantity's text ('2 s') or its JSON ({"value": 2, "unit": "s"})
TimeField = Seconds | None


class LoadFields(BaseModel):
    """Request fields of serving under traffic (all optional: without rate or users, the offline answer)."""

    rate: float | None = Field(None, gt=0, le=1e6, description="requests per second, Poisson arrivals")
    users: int | None = Field(None, ge=1, le=100_000, description="concurrent users in a closed loop")
    think_time: SecondsOrZero | None = Field(None, description="a user's pause between answer and next request, e.g. '5 s'")
    lengths: LengthsName | None = Field(None, description="named length set: sharegpt-vllm-sample, "
                                "sharegpt-multiturn-8k, azure-conv, azure-code, arxiv-summarization, mlperf-openorca "
                                "(default: fixed lengths)")
    trace: str | None = Field(None, max_length=4_000_000, description="CSV rows prompt_len,output_len[,arrival_s] "
                                                                       "(the CLI reads --trace FILE into this)")
    trace_arrivals: bool = Field(False, description="replay the trace's arrival_s column, its gaps scaled to the rate "
                                                    "(default: Poisson arrivals at the rate; the column is not used)")
    slo_ttft: TimeField = Field(None, description="time to first token at the percentile, e.g. '2 s'")
    slo_tpot: TimeField = Field(None, description="time per output token at the percentile, e.g. '100 ms'")
    slo_e2e: TimeField = Field(None, description="end-to-end latency at the percentile, e.g. '30 s'")
    slo_percentile: float = Field(99.0, ge=50, le=99.9, description="percentile the SLOs hold at [%]")
    split: Split | None = Field(None, description="tensor parallel, or a llama.cpp layer "
                                                                               "split (default: layer for GGUF formats); "
                                                                               "row (-sm row) is refused with the reason")
    max_running: int | None = Field(None, ge=1, le=4096, description=f"scheduler's most running requests "
                                                                       f"(default {DEFAULT_MAX_BATCH}, vLLM's)")
    token_budget: int | None = Field(None, ge=64, le=65536, description=f"tokens per iteration, chunked prefill "
                                                                          f"(default {DEFAULT_TOKEN_BUDGET}, vLLM's)")
    prefix_cache_hit: float = Field(0.0, ge=0, le=0.95, description="share of prompt tokens found in the prefix cache")
    replicas: int | None = Field(None, ge=1, le=100_000, description="spread the load over this many replicas "
                                                                      "(default: as many as the SLOs need)")
    max_utilisation: float | None = Field(None, gt=0, le=1, description="most share of the replicas' capacity within the "
                                          "SLOs the load may use when replicas are sized (default 0.7: 30 % headroom)")
    prompts: int | None = Field(None, ge=1, le=20_000, description="a finite benchmark of this many prompts (vLLM's "
                                "benchmark_serving --num-prompts, 1000 by default there) on the replicas given "
                                "(default one): a rate above capacity queues over them, and the answer says by how much")
    burst: int | None = Field(None, ge=1, le=20_000, description="a burst: this many prompts all sent at t = 0 "
                                                                 "(a benchmark at request rate inf), instead of rate or users")
    range_ratio: float | None = Field(None, ge=0, lt=1, description="vLLM's random dataset (--random-range-ratio): "
                                      "prompt and output lengths uniform within +-range_ratio of prompt_len and output_len "
                                      "(default: every request at them)")
    runtime: RuntimeName | None = Field(None, description="the runtime: under load a serving engine, vllm "
                                "(default), sglang or tensorrt-llm (its scheduler defaults, memory share and fitted CPU "
                                "time); offline also llama.cpp (default for GGUF weights, CPUs and unified memory)")
    runtime_version: str | None = Field(None, max_length=20, pattern=r"^v?\d+\.\d+(\.\d+)?$",
                                        description="the serving runtime's version, e.g. '0.11.0': its generation's "
                                        "scheduling policy and fitted CPU costs apply (vLLM V0 before 0.8, V1 from 0.8; "
                                        "sizer/runtimes/serving_mechanisms.yaml); default: the profile's own, stated")


MAX_TOKENS = 10_000_000


class ServedModel(LoadFields, RequestModel):
    """What is served and how it is stored: shared by inference and its recommendation."""

    model: Source | None = Field(None, description="architecture by name (a preset, or a shipped config's hub id or short "
                                                   "name), or a config.json path (CLI)")
    params: Count | None = Field(None, description="parameter count, for a generated Llama-style decoder")
    weights: WeightsName | None = Field(None, description="fp32, bf16, fp16, fp8, int8, int4, q4_0, q4_k_m, q8_0, "
                                "gptq-int4-g128, awq-int4-g128, nvfp4, mxfp4 ... (default: the format the model's published "
                                "checkpoint is stored in, as its config's quantization_config states it: bf16, fp8 "
                                "for DeepSeek-V3/R1, mxfp4 for gpt-oss)")
    prompt_len: int = Field(1024, ge=1, le=MAX_TOKENS, description="prompt tokens per sequence")
    output_len: int = Field(256, ge=1, le=MAX_TOKENS, description="generated tokens per sequence")
    gpu_layers: int | None = Field(None, ge=0, le=10_000, description="layers on the devices, the rest offloaded to the "
                                                                        "host CPU (llama.cpp --n-gpu-layers; default: all)")
    host_cpu: str | None = Field(None, max_length=100, description="the catalog CPU that runs offloaded layers "
                                                                   "(default: Ryzen 9 7950X, a DDR5 desktop)")
    host_memory: Memory | None = Field(None, description="with gpu_layers: RAM of the host, e.g. '128 GB', checked "
                                                             "against the offloaded layers' weights and KV cache "
                                                             "(default: the host CPU's in the catalog)")


class InferenceRequest(ServedModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-70b", "device": "H100 SXM", "count": 2, "weights": "fp8", "batch": 64},
        {"params": "7B", "device": "RTX 4090", "weights": "q4_k_m", "batch": 1}]})

    device: str | None = Field(None, max_length=100, description="the device (or give have)")
    # here, not on ServedModel: a recommendation's kv_cache may be None (searched), an estimate's is a format
    kv_cache: KvCacheName = Field(KvCache.FP16, description=f"KV-cache storage: {', '.join(KV_CACHE_BYTES)}")
    count: int = Field(1, ge=1, le=1024, description="devices: tensor parallel, or a layer split for GGUF weights (split)")
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only")
    batch: int = Field(1, ge=1, le=1_000_000, description="concurrent sequences")
    devices: list[str] | None = Field(None, min_length=2, max_length=16, description="unequal devices of one machine "
                                      "(e.g. ['RTX 3090', 'RTX 4090']): layers split over them in proportion to their "
                                      "memory, as llama.cpp does; instead of device and count")
    tensor_split: list[float] | None = Field(None, min_length=2, max_length=16, description="with devices: llama.cpp "
                                             "-ts ratios, one per device (e.g. [3, 1]); default: in proportion to memory")
    runtime: RuntimeName | None = Field(None, description="the runtime: llama.cpp (default for GGUF weights, "
                                "CPUs and unified memory) or a serving engine; default: by device and format, stated")
    tuned: bool | None = Field(None, description="under load, a TensorRT-LLM engine built and tuned for this system as "
                               "NVIDIA's MLPerf harness builds it: batched iterations at 0.9 of the matrix peak instead "
                               "of a default engine's 0.6 (chosen on MLPerf rows by source; not verified)")
    expert_parallel: bool = Field(False, description="a mixture's experts split whole over the devices (SGLang --ep-size, "
                                  "vLLM --enable-expert-parallel); default: split by tensor parallelism")
    dp_attention: bool = Field(False, description="data-parallel attention with expert parallelism: each device runs "
                               "attention for its own sequences and keeps their KV cache (SGLang --enable-dp-attention, "
                               "vLLM --data-parallel-size)")
    depth: int = Field(0, ge=0, le=MAX_TOKENS, description="tokens already in the KV cache before the prompt (a "
                                                           "conversation's earlier turns; llama-bench -d)")
    flash_attention: bool | None = Field(None, description="a local runtime's fused attention on or off (llama.cpp -fa; "
                                         "default: the runtime's, stated); refused where the runtime has no such switch")
    ubatch: int | None = Field(None, ge=1, le=MAX_TOKENS, description="prompt tokens per pass of a local runtime (llama.cpp "
                               "-ub, default 512; mlx-lm prefill step, default 2048); not the batch of sequences")
    threads: int | None = Field(None, ge=1, le=1024, description="CPU threads of a CPU-only llama.cpp run or of the host "
                                "CPU running layers kept off the GPU (gpu_layers) (-t; default: the CPU's physical cores)")
    rent_price: MoneyPerTime | None = Field(None, description="per device, e.g. '2.5 USD/hour' (default: the catalog's)")
    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the chosen setup's launch command "
                                                                 "or configuration for (sizer.launch: vllm, sglang, trtllm, llama.cpp)")
    pricing: Pricing = Field("rent", description="rent (a cloud offer that runs count devices), buy (amortised purchase "
                             "plus energy) or any (rent, else buy); the cost says its price_basis")
    measured: Measured | None = Field(None, description="your measurement of this setup ('2900 tokens/s', 'TTFT 350 ms', "
                                                       "'25 ms/token'): the answer is rescaled to it (sizer.measured)")
    measured_on: str | None = Field(None, max_length=100, description="the device the measurement was taken on: "
                                    "carried over to the device asked (reference mode)")
    efficiency: float | None = Field(None, gt=0, le=1, description="a what-if fraction (0-1] of the bandwidth and "
                                     "compute roofline in place of the fitted efficiencies")


class InferenceRecommendRequest(ServedModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"task": "inference", "model": "llama-2-70b", "weights": "fp8", "tokens_per_s_per_user": 30,
         "total_tokens_per_s": 2000, "time_to_first_token": "2 s"}]})

    task: Literal["inference"] = Field("inference", description="'inference' selects this body on /v1/recommend")
    weights: WeightsName | None = Field(None, description="pin the weight format (default: searched over bf16, "
                                                                  "fp8 or w8a8 where the device has the peak, awq-int4-g128)")
    kv_cache: KvCacheName | None = Field(None, description="pin the KV-cache format (default: searched over fp16 "
                                                                  "and fp8)")
    batch: int | None = Field(None, ge=1, le=1_000_000, description="concurrent sequences (default: the largest that serves)")
    tokens_per_s_per_user: float | None = Field(None, gt=0, le=1e7, description="decode tokens/s each sequence needs")
    total_tokens_per_s: float | None = Field(None, gt=0, le=1e12, description="output tokens/s over all sequences")
    time_to_first_token: Duration | None = Field(None, description="longest acceptable, e.g. '500 ms'")
    context_length: int | None = Field(None, ge=2, le=10_000_000, description="tokens a sequence must hold; the prompt is "
                                                                               "this less the output")
    max_devices: int = Field(8, ge=1, le=1024, description="largest tensor-parallel group (or layer split)")
    max_replicas: int = Field(64, ge=1, le=100_000, description="most replicas of one deployment (under load)")
    disaggregated: bool = Field(False, description="under a rate: also size disaggregated prefill and decode pools "
                                                   "(DistServe/Splitwise) for the leading rows, as rows of their own")
    objective: ServingObjective = Field(ServingObjective.COST, description="rank by cost per million output "
                                                                "tokens, latency, or throughput per device")
    kinds: list[CatalogKindName] = Field(default_factory=lambda: list(CATALOG_KINDS))  # every kind, in this order
    consumer: bool = Field(False, description="also rank consumer and workstation devices (GeForce, Radeon, Apple, "
                                              "RTX A6000 ...); default: data-centre devices only")
    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the first row's launch command for "
                                                                  "(sizer.launch: vllm, sglang, trtllm, llama.cpp)")
    pricing: Pricing = Field("rent", description="rent (cloud offers that run one replica; devices without one come "
                             "last), buy (amortised purchase plus energy) or any (rent, else buy; a ranking by cost "
                             "puts rents first); each row says its price_basis")

    @field_validator("kv_cache")
    @classmethod
    def _data_centre_kv(cls, value: KvCache | None) -> KvCache | None:
        """The devices recommend ranks run data-centre engines, which store none of llama.cpp's ggml blocks."""
        if value is None:
            return value
        expected = ggml_kv_refusal(KvCache(value))
        if expected is not None:
            raise PydanticCustomError("choice", "got {given}; expected {expected}",
                                      {"given": KvCache(value).value, "expected": expected})
        return value
