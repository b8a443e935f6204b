"""sizer/runtimes/serving_mechanisms.py: engine generations by runtime and version, their scheduling policy and fitted
costs, and what runtime_replica does with a stated version."""
from __future__ import annotations

import pytest

from sizer.datafile import load_yaml
from sizer.runtimes import runtime
from sizer.runtimes.formats import weight_format
from sizer.runtimes.serving_mechanisms import (
    MECHANISMS_FILE,
    fitted_settings,
    generation,
    generation_name,
    generations,
    policy_settings,
)
from sizer.simulator.simulate import batching_table, runtime_replica
from sizer.workloads.registry import find_model


@pytest.mark.parametrize("engine,version,expected", [
    ("vllm", "0.7.3 (runner nvidia_vllm_47f5d58e)", "vllm-v0"),  # serving-tails.csv's AccelMark rows
    ("vllm", "0.6", "vllm-v0"), ("vllm", "0.8.0", "vllm-v1"), ("vllm", "v0.11.0", "vllm-v1"),
    ("vllm", "0.20.1+transformers-5.8.1", "vllm-v1"), ("vllm", None, "vllm-v1"), ("vllm", "unknown", "vllm-v1"),
    ("sglang", "0.5.6", "sglang"), ("tensorrt-llm", "1.2.0rc1", "tensorrt-llm"), ("llama.cpp", "b4000", "llama.cpp"),
])
def test_a_version_names_its_generation(engine, version, expected):
    assert generation_name(engine, version) == expected


def test_every_generation_states_its_source_and_whether_it_is_verified():
    raw = load_yaml(MECHANISMS_FILE, "serving_mechanisms")["generations"]
    assert {g.name for g in generations()} == set(raw) >= {"vllm-v0", "vllm-v1", "sglang", "tensorrt-llm"}
    for name, g in raw.items():
        assert g["policy"]["source"] and isinstance(g["policy"]["verified"], bool), name
        assert g["fitted"]["fitted_on"], name
        assert runtime(g["runtime"]).name == g["runtime"]


def test_v0_chunks_prefill_only_above_32k_of_context():
    # vllm/engine/arg_utils.py (v0.6-0.7): chunked prefill on by default only for max_model_len > 32768; without it
    # the budget is max(max_model_len, 2048)
    assert policy_settings("vllm-v0", memory_gb=40, device="a100-40gb-sxm4", max_model_len=2048) == {
        "mixed_batches": False, "token_budget": 2048}
    assert policy_settings("vllm-v0", memory_gb=40, device="a100-40gb-sxm4", max_model_len=1024)["token_budget"] == 2048
    assert policy_settings("vllm-v0", memory_gb=80, device="h100-sxm5-80gb", max_model_len=65536) == {}


def test_v1_takes_larger_defaults_on_large_gpus_but_not_on_a100s():
    big = policy_settings("vllm-v1", memory_gb=80, device="h100-sxm5-80gb", max_model_len=None)
    assert big == {"max_batch": 1024, "token_budget": 8192}
    assert policy_settings("vllm-v1", memory_gb=80, device="a100-80gb-sxm4", max_model_len=None) == {}
    assert policy_settings("vllm-v1", memory_gb=48, device="rtx-6000-ada", max_model_len=None) == {}


def test_sglang_keeps_prefill_apart_and_admits_what_its_pools_hold():
    got = policy_settings("sglang", memory_gb=80, device="h100-sxm5-80gb", max_model_len=None)
    assert got["mixed_batches"] is False and got["max_batch"] > runtime("sglang").profile.max_running


def test_the_fitted_settings_carry_the_policy_only_where_the_fit_kept_it():
    for g in generations():
        got = fitted_settings(g.name, memory_gb=80, device="h100-sxm5-80gb", max_model_len=4096)
        assert got["sequence_overhead"] == g.sequence_overhead and got["request_latency"] == g.request_latency
        policy = policy_settings(g.name, memory_gb=80, device="h100-sxm5-80gb", max_model_len=4096)
        assert all(got.get(k) == v for k, v in policy.items()) == g.policy_on or not policy
    assert generation("no-such-engine") is None and fitted_settings("no-such-engine", memory_gb=1, device="x",
                                                                    max_model_len=None) == {}


def test_a_stated_version_applies_its_generation_and_none_keeps_the_profile(catalog):
    fmt = weight_format("bf16")
    table = batching_table((catalog.find("h100-sxm5-80gb"),), fmt)
    engine, arch = runtime("vllm"), find_model("llama-3-8b")
    plain = runtime_replica(engine, arch, fmt, 2.0, table, 0, 1)
    assert (plain.max_batch, plain.token_budget, plain.mixed_batches) == (engine.profile.max_running,
                                                                           engine.profile.token_budget, True)
    v1 = runtime_replica(engine, arch, fmt, 2.0, table, 0, 1, version="0.11.0")
    expected = fitted_settings("vllm-v1", memory_gb=80, device="h100-sxm5-80gb", max_model_len=None)
    assert all(getattr(v1, k) == v for k, v in expected.items())
    # what the caller sets wins over the generation's defaults
    assert runtime_replica(engine, arch, fmt, 2.0, table, 0, 1, version="0.11.0", max_running=64).max_batch == 64
    v0 = runtime_replica(engine, arch, fmt, 2.0, table, 0, 1, version="0.7.3", max_model_len=4096)
    assert v0.mixed_batches is not generation("vllm-v0").policy_on
