"""sizer/runtimes/serving_runtimes.py: vLLM, SGLang and TensorRT-LLM as named parts of a serving answer: each
refuses what it cannot run with the reason, the default is stated, and capacity under an SLO never beats the
runtime's own saturated throughput for the same lengths."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.runtimes import Purpose, runtime, runtimes_for
from sizer.runtimes.formats import weight_format
from sizer.runtimes.serving_runtimes import DEFAULT_SERVING_RUNTIME, ServingProfile, format_refusal
from sizer.serving.capacity import Slo, max_rate
from sizer.simulator.simulate import batching_table, runtime_replica
from sizer.simulator.traffic import Lengths
from sizer.workloads.registry import find_model

SHAREGPT_8B = dict(model="llama-3-8b", device="H100 SXM", weights="bf16", prompt_len=202, output_len=179, rate=20,
                   slo_ttft="2 s", slo_tpot="50 ms")


def test_three_serving_runtimes_with_frozen_profiles():
    names = {r.name for r in runtimes_for(Purpose.SERVING)}
    assert {"vllm", "sglang", "tensorrt-llm"} <= names
    for name in ("vllm", "sglang", "tensorrt-llm"):
        entry = runtime(name)
        assert isinstance(entry.profile, ServingProfile) and entry.profile.fitted_on
        with pytest.raises(AttributeError):
            entry.profile.max_running = 1  # frozen
    assert runtime("trtllm") is runtime("tensorrt-llm")
    # vLLM's EngineArgs default gpu_memory_utilization; TensorRT-LLM's KvCacheConfig free_gpu_memory_fraction
    assert runtime("vllm").profile.memory_share == 0.9 and runtime("tensorrt-llm").profile.kv_free_share == 0.9


def test_awq_int4_on_volta_is_refused_with_the_reason(catalog):
    # vLLM's quantization support table: AWQ/GPTQ int4 GEMMs need Turing (sm_75) or newer
    v100 = catalog.find("tesla-v100-sxm2-16gb")
    why = format_refusal(runtime("vllm"), "awq-int4-g128", v100.architecture)
    assert why and "Turing" in why
    assert format_refusal(runtime("vllm"), "awq-int4-g128", catalog.find("H100 SXM").architecture) is None
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-2-7b", device="tesla-v100-sxm2-16gb", weights="awq-int4-g128",
                                            rate=2))
    assert error.value.field == "weights" and "Turing" in str(error.value)


def test_an_unknown_runtime_names_the_field_and_the_known_ones():
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as error:  # refused where the request is built
        InferenceRequest(model="llama-2-7b", device="H100 SXM", rate=2, runtime="triton-magic")
    assert error.value.errors()[0]["loc"] == ("runtime",) and "vllm" in str(error.value)


def test_the_default_runtime_is_stated_and_another_changes_the_answer():
    default = estimate_inference(InferenceRequest(**SHAREGPT_8B))
    note = next(a for a in default.assumptions if a.name == "runtime")
    assert note.value.startswith(DEFAULT_SERVING_RUNTIME) and "default" in note.value
    trt = estimate_inference(InferenceRequest(**SHAREGPT_8B, runtime="tensorrt-llm"))
    assert next(a for a in trt.assumptions if a.name == "runtime").value.startswith("tensorrt-llm")
    assert trt.capacity.max_request_rate.value != default.capacity.max_request_rate.value


def test_8b_on_one_h100_is_sized_below_the_measured_maximum():
    # vLLM v0.6.0 perf blog (serving-under-load.csv): vLLM 37, SGLang 33.5 requests/s with every request queued at once
    # (read off a bar plot, +/- 1): capacity under p99 TTFT 2 s and TPOT 50 ms cannot exceed it (10 % for the plot)
    for name, measured in (("vllm", 37.0), ("sglang", 33.5)):
        answer = estimate_inference(InferenceRequest(**SHAREGPT_8B, runtime=name))
        assert answer.capacity.max_request_rate.value <= measured * 1.1, name


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(("vllm", "sglang", "tensorrt-llm")), prompt=st.integers(16, 3000),
       output=st.integers(2, 800), ttft=st.floats(0.05, 10.0), tpot=st.floats(0.005, 0.5))
def test_capacity_under_an_slo_never_beats_the_saturated_throughput(catalog, name, prompt, output, ttft, tpot):
    fmt = weight_format("bf16")
    replica = runtime_replica(runtime(name), find_model("llama-2-7b"), fmt, 2.0,
                              batching_table((catalog.find("H100 SXM"),), fmt), 0, 1)
    rate, full = max_rate(replica, Lengths(prompt, output), Slo(ttft=ttft, tpot=tpot), requests=200, steps=5)
    assert rate <= full.steady_request_rate


@pytest.mark.parametrize(("runtime_name", "device", "why"), [
    # TensorRT-LLM builds CUDA engines: NVIDIA GPUs only (its support matrix)
    ("tensorrt-llm", "mi300x", "AMD"), ("tensorrt-llm", "Apple M2 Max", "Apple silicon"),
    # vLLM and SGLang have no Metal backend: Apple GPUs are llama.cpp's and MLX's
    ("vllm", "Apple M2 Max", "Apple silicon"), ("sglang", "Apple M4 Max", "Apple silicon")])
def test_a_serving_runtime_refuses_a_device_it_cannot_run_on_with_or_without_load(runtime_name, device, why):
    for load in ({"rate": 1}, {}):
        with pytest.raises(InputError) as error:
            estimate_inference(InferenceRequest(model="llama-3-8b", device=device, runtime=runtime_name, **load))
        assert error.value.field == "device" and why in str(error.value), (load, str(error.value))


def test_the_default_serving_runtime_under_load_refuses_apple_silicon_and_says_what_runs_there():
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-3-8b", device="Apple M2 Max", rate=1))
    assert error.value.field == "device" and "llama.cpp" in str(error.value)


def test_tensorrt_llm_still_runs_on_nvidia_gpus():
    answer = estimate_inference(InferenceRequest(model="llama-3-8b", device="H100 SXM", runtime="tensorrt-llm"))
    assert answer.fits


def test_a_layer_split_is_refused_of_a_runtime_without_pipeline_parallelism():
    # a layer split is pipeline parallelism to a serving engine: vLLM and TensorRT-LLM have it, SGLang 0.3 not
    from sizer.facade import InferenceRecommendRequest, recommend_inference

    asked = dict(model="llama-3-70b", device="RTX 4090", count=4, split="layer")
    for load in ({"rate": 1}, {}):
        with pytest.raises(InputError) as error:
            estimate_inference(InferenceRequest(**asked, runtime="sglang", **load))
        assert error.value.field == "split" and "pipeline" in str(error.value)
    with pytest.raises(InputError) as error:
        recommend_inference(InferenceRecommendRequest(model="llama-3-70b", split="layer", runtime="sglang", rate=1))
    assert error.value.field == "split"
    assert estimate_inference(InferenceRequest(**asked, runtime="vllm", rate=1)).split == "layer"


@pytest.mark.parametrize("device", ["tpu v5e", "Gaudi 2"])
def test_sglang_0_3_runs_on_nvidia_and_amd_only(device):
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model="llama-3-8b", device=device, runtime="sglang", rate=1))
    assert error.value.field == "device" and "NVIDIA" in str(error.value) and "AMD" in str(error.value)
    assert estimate_inference(InferenceRequest(model="llama-3-8b", device=device, runtime="vllm", rate=1)).capacity


# Leave one source out (benchmarks/serving_accuracy.py --by-source, 2026-12-06, with the tuned-harness mechanism):
# vLLM's and SGLang's CPU time per running request chosen without the source scored. The vLLM v0.6.0 blog's own
# offline rows (read off plots) at (matrix 0.55, vLLM 140 us, SGLang 140 us: no other SGLang source, vLLM's taken)
# 18.5 %; vLLM's 2026-04-22 fixed-concurrency post at (0.55, 140 us) 15.5 % (10.5 % before the fixed time per routed
# expert of issue 38 slowed its gpt-oss-20b rows from -1..-6 % to -11..-14 %; benchmarks/ACCURACY.md, "MoE and MLA
# decode"). Guards: those plus 3 points.
RUNTIME_FOLDS = {"2024/09/05/perf-update": ((0.55, 140, 140, 0.9), 4, 0.185 + 0.03),
                 "2026-04-22-fp8-kvcache": ((0.55, 140, 80, 0.9), 5, 0.155 + 0.03)}


def test_runtime_cpu_time_transfers_between_sources(catalog):
    import statistics
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import serving_accuracy as bench

    for key, (fold, n, limit) in RUNTIME_FOLDS.items():
        own = [c for c in bench.cases() if key in c.source_key]
        errors = [abs(bench.predict_at(c, catalog, fold, tuned=True) / c.measured - 1) for c in own]
        assert len(errors) == n and statistics.median(errors) <= limit, (key, errors, limit)
