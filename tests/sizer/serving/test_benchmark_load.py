"""A finite benchmark on the deployment as given (sizer/serving/benchmark_load.py, issue 38): a rate above capacity
queues over the benchmark's prompts and is said to be saturated; a burst sends every prompt at t = 0."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.hardware.catalog import load_catalog
from sizer.runtimes import runtime
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format
from sizer.serving.benchmark_load import benchmark_notes, serve_benchmark
from sizer.serving.capacity import Slo
from sizer.simulator.simulate import batching_table, runtime_replica
from sizer.simulator.traffic import Lengths, Load
from sizer.workloads.registry import resolve_model

# AccelMark RTX 3090 suite A (shared/data/serving-tails.csv): Llama-3-8B under vLLM, 300 ShareGPT prompts (input p50 280,
# mean about 500; outputs up to 512) at 5 requests/s: p50 / p99 TTFT 7.6 s / 29.7 s; its max rate under a 500 ms p99 TTFT: 0
LENGTHS = Lengths(502, 200)


@pytest.fixture(scope="module")
def replica():
    fmt = weight_format("bf16")
    table = batching_table((load_catalog().find("rtx-3090"),), fmt)
    return runtime_replica(runtime("vllm"), resolve_model("llama-3-8b"), fmt, kv_cache_bytes_per_value("fp16"), table, 0, 1)


def test_a_rate_above_capacity_queues_and_is_said_saturated(replica):
    short = serve_benchmark(replica, Load(rate=5.0), LENGTHS, Slo(), prompts=150)
    long = serve_benchmark(replica, Load(rate=5.0), LENGTHS, Slo(), prompts=600)
    assert short.replicas == 1 and short.utilisation > 1.2  # one replica, as the benchmark ran it
    # the queue grows with the benchmark: a longer run waits longer, seconds not the few hundred ms of a steady state
    assert long.run.percentile("ttft", 99) > 1.5 * short.run.percentile("ttft", 99) > 3.0
    # throughput is capped at the capacity, not the rate times the output length
    assert long.run.output_tokens_per_s < 0.8 * 5.0 * 200
    assert long.run.output_tokens_per_s < 1.2 * long.saturated_output_tokens_per_s
    (bench, sat) = benchmark_notes(Load(rate=5.0), long, 600)
    assert bench.name == "benchmark" and "600 prompts" in bench.value
    assert sat.name == "saturated" and f"{long.utilisation:.2f} x the capacity" in sat.value


def test_a_rate_within_capacity_is_not_saturated(replica):
    answer = serve_benchmark(replica, Load(rate=1.0), LENGTHS, Slo(), prompts=200)
    assert answer.utilisation < 1.0
    assert answer.run.percentile("ttft", 99) < 2.0
    assert [n.name for n in benchmark_notes(Load(rate=1.0), answer, 200)] == ["benchmark"]


def test_a_burst_queues_behind_the_running_slots(replica):
    burst = Load(users=400, burst=True)
    assert burst.label == "a burst of 400 prompts at t = 0"
    answer = serve_benchmark(replica, burst, LENGTHS, Slo(), prompts=400)
    assert len(answer.run.ttft) == 400  # every prompt measured, none left out as warm-up
    # more prompts than running slots (256): the last wait for the first to finish, so the tail is far above the median
    assert answer.run.percentile("ttft", 99) > 1.5 * answer.run.percentile("ttft", 50)


def test_the_facade_answers_the_benchmark_on_one_replica():
    result = estimate_inference(InferenceRequest(model="llama-3-8b", device="rtx-3090", rate=5.0, prompt_len=502,
                                                 output_len=200, prompts=300))
    assert result.capacity.replicas == 1 and result.capacity.utilisation > 1.2
    assert result.latency.ttft.p99 > 5_000  # ms: measured 29.7 s at this load
    assert result.output_tokens_per_s.value < 0.8 * 5.0 * 200
    assert any(a.name == "saturated" for a in result.assumptions)


@pytest.mark.parametrize("fields,field", [
    (dict(burst=100, rate=2.0), "burst"), (dict(burst=100, users=4), "burst"),
    (dict(burst=100, prompts=50), "prompts"), (dict(prompts=100), "rate"),
])
def test_contradictory_benchmark_fields_are_refused_naming_the_field(fields, field):
    with pytest.raises(InputError) as err:
        estimate_inference(InferenceRequest(model="llama-3-8b", device="rtx-3090", **fields))
    assert err.value.field == field


@pytest.mark.parametrize("fields,field", [(dict(rate=2.0, prompts=100), "prompts"), (dict(burst=100), "burst")])
def test_a_recommendation_refuses_a_benchmark_rather_than_ignore_it(fields, field):
    from sizer.facade import InferenceRecommendRequest, recommend_inference

    with pytest.raises(InputError) as err:
        recommend_inference(InferenceRecommendRequest(model="llama-3-8b", **fields))
    assert err.value.field == field
