"""Lengths as benchmarks draw them (sizer/simulator/benchmark_lengths.py, issue 38): quantiles against their sources,
the benchmark's filters, and the tails they give a fixed concurrency (p99 above p50 for the reasons it is)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sizer.hardware.catalog import load_catalog
from sizer.runtimes import runtime
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format
from sizer.simulator.benchmark_lengths import random_dataset, sharegpt_as_sampled
from sizer.simulator.simulate import batching_table, runtime_replica, simulate
from sizer.simulator.traffic import (
    SHAREGPT_PROMPT_SIGMA,
    SHAREGPT_REPLY_SIGMA,
    Z75,
    Z90,
    Lengths,
    Load,
    length_distribution,
)
from sizer.workloads.registry import resolve_model


def test_the_spread_is_the_sources_quantiles():
    # serving-tails.csv, AccelMark sharegpt_standard_v1: input p50 / p75 = 280 / 580 tokens
    assert math.exp(Z75 * SHAREGPT_PROMPT_SIGMA) == pytest.approx(580 / 280)
    # serving-under-load.csv, Sarathi-Serve ShareGPT4: output median / p90 = 415 / 834 tokens
    assert math.exp(Z90 * SHAREGPT_REPLY_SIGMA) == pytest.approx(834 / 415)


def test_the_vllm_sample_is_filtered_as_vllm_filters_it_and_keeps_the_runs_means():
    # GPUStack Qwen3-8B on H100 (serving-tails.csv): mean input 232.6, mean output 220.6 from the block totals
    d = sharegpt_as_sampled(232.6, 220.6)
    prompts, outputs = d.sample(np.random.default_rng(1), 50_000)
    assert prompts.mean() == pytest.approx(232.6, rel=0.02) and outputs.mean() == pytest.approx(220.6, rel=0.02)
    # vLLM's benchmark_dataset.py skips a prompt over 1,024 tokens, both over 2,048, either under 4
    assert prompts.max() <= 1024 and (prompts + outputs).max() <= 2048 and min(prompts.min(), outputs.min()) >= 4
    p50, p90, p99 = np.percentile(prompts, [50, 90, 99])
    assert p99 > 1.5 * p90 > 1.5 * 1.5 * p50  # a long right tail, cut at the filter
    assert p99 < 1024


def test_the_named_vllm_sample_is_the_one_solved_from_its_published_means():
    named = length_distribution("sharegpt-vllm-sample")
    solved = sharegpt_as_sampled(202.0, 179.0)
    assert named.prompt.median == pytest.approx(solved.prompt.median, rel=0.01)
    assert named.output.median == pytest.approx(solved.output.median, rel=0.01)


def test_means_beyond_the_filter_are_refused():
    with pytest.raises(ValueError):
        sharegpt_as_sampled(1500.0, 200.0)


@pytest.mark.parametrize("ratio", [0.0, 0.5])
def test_random_dataset_lengths_are_uniform_within_the_range_ratio(ratio):
    # serving-tails.csv MI100 rows: "random fixed lengths; +-50% (range_ratio 0.5)"
    prompts, outputs = random_dataset(2048, 512, ratio).sample(np.random.default_rng(2), 20_000)
    assert prompts.min() >= 2048 * (1 - ratio) and prompts.max() <= 2048 * (1 + ratio)
    assert prompts.mean() == pytest.approx(2048, rel=0.01) and outputs.mean() == pytest.approx(512, rel=0.01)
    if ratio:
        assert np.percentile(prompts, 90) == pytest.approx(2048 * (1 + 0.8 * ratio), rel=0.02)
    else:
        assert prompts.min() == prompts.max() == 2048


@pytest.fixture(scope="module")
def h100_qwen():
    fmt = weight_format("bf16")
    table = batching_table((load_catalog().find("h100-sxm5-80gb"),), fmt)
    return runtime_replica(runtime("vllm"), resolve_model("Qwen/Qwen3-8B"), fmt, kv_cache_bytes_per_value("fp16"), table, 0, 1)


def test_fixed_lengths_keep_a_closed_loop_in_lockstep(h100_qwen):
    # 8 prompts of 233 tokens fit one token budget: every user's request arrives, is prefilled and ends with the others,
    # p99 = p50 (serving-tails.csv MI100 rows, fixed random lengths on Qwen3-Coder-30B-A3B: p99 / p50 TTFT 1.1-1.2 at 4-16
    # users)
    run = simulate(h100_qwen, Load(users=8), Lengths(233, 221), 100, warmup=0.0)
    assert run.percentile("ttft", 99) == pytest.approx(run.percentile("ttft", 50), rel=0.05)


def test_sharegpt_lengths_break_the_lockstep_with_the_tail_above_the_median(h100_qwen):
    # GPUStack Qwen3-8B H100 vLLM, 100 ShareGPT prompts at max-concurrency 8: TTFT p50 60.8 ms, p99 204 ms
    lengths = Lengths(distribution=sharegpt_as_sampled(232.6, 220.6))
    run = simulate(h100_qwen, Load(users=8), lengths, 100, warmup=0.0)
    p50, p90, p99 = (run.percentile("ttft", q) for q in (50, 90, 99))
    assert p99 > p90 > p50 and p99 > 2.0 * p50
    # ends no longer coincide: requests arrive one at a time and wait for less than a whole wave's prefill
    fixed = simulate(h100_qwen, Load(users=8), Lengths(233, 221), 100, warmup=0.0)
    assert p50 < fixed.percentile("ttft", 50)


def test_more_users_make_a_longer_tail(h100_qwen):
    lengths = Lengths(distribution=sharegpt_as_sampled(232.6, 220.6))
    tails = [simulate(h100_qwen, Load(users=n), lengths, 100, warmup=0.0) for n in (1, 8)]
    excess = [run.percentile("ttft", 99) - run.percentile("ttft", 50) for run in tails]
    assert excess[1] > excess[0] > 0  # measured p99 - p50: 13 ms at one user, 143 ms at eight
