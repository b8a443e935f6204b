"""sizer/simulator/simulate.py and capacity.py: continuous batching on the engine's iteration times.

Goldens are physical limits and published figures: a lone request's time to first token is its
own prefill (issue 16: about 0.25 s or less for 1024 tokens of Llama-2-70B on 4 x H100), a decode
step never beats the weights streamed at datasheet bandwidth, and conservation (what goes in comes
out) holds below capacity."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sizer.deadline import time_limit
from sizer.errors import EstimateTimeout
from sizer.passes.arithmetic import kv_cache_bytes_per_token, stored_weight_bytes
from sizer.runtimes.formats import weight_format
from sizer.serving.capacity import Slo, max_rate, saturated, serve_load
from sizer.simulator.simulate import Replica, batching_table, iteration_grid, simulate
from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS, Lengths, Load
from sizer.workloads.registry import find_model

FIXED = Lengths(1024, 256)


@pytest.fixture(scope="module")
def replica(catalog):
    fmt = weight_format("fp16")
    return Replica(find_model("llama-2-70b"), fmt, 2.0, batching_table((catalog.find("H100 SXM"),), fmt), 0, 4)


def test_a_lone_request_is_prefilled_alone(replica):
    run = simulate(replica, Load(rate=0.01), FIXED, requests=50)
    assert run.complete and run.preemptions == 0
    # 2 x 69e9 x 1024 FLOP over 4 x 989 TFLOP/s is 36 ms at the peak; the estimate is ~0.25 s
    assert 0.036 < np.median(run.ttft) < 0.3


def test_decode_never_beats_the_weights_streamed_at_datasheet_bandwidth(replica, catalog):
    run = simulate(replica, Load(rate=0.01), FIXED, requests=50)
    arch = find_model("llama-2-70b")
    bandwidth = 3.35e12  # H100 SXM5 datasheet, B/s per device
    floor = arch.params_total() * 2.0 / 4 / bandwidth
    assert np.min(run.tpot) >= floor
    assert np.median(run.tpot) < 3 * floor  # and a lone request is memory-bound, near it


def test_below_capacity_what_goes_in_comes_out(replica):
    run = simulate(replica, Load(rate=2.0), FIXED, requests=600)
    assert run.complete
    assert run.output_tokens_per_s == pytest.approx(2.0 * 256, rel=0.1)
    assert run.request_rate == pytest.approx(2.0, rel=0.1)


def test_latency_grows_with_the_rate_and_saturation_bounds_throughput(replica):
    low, high = (simulate(replica, Load(rate=r), FIXED, requests=600) for r in (1.0, 6.0))
    assert np.percentile(high.ttft, 99) >= np.percentile(low.ttft, 99)
    assert np.mean(high.tpot) > np.mean(low.tpot)
    full = saturated(replica, FIXED, 600)
    assert full.output_tokens_per_s >= high.output_tokens_per_s * 0.95 and full.busy > 0.99


def test_recompute_preemption_when_the_cache_runs_out(catalog):
    fmt = weight_format("fp16")
    small = Replica(find_model("llama-2-7b"), fmt, 2.0, batching_table((catalog.find("RTX 4090"),), fmt), 0, 1,
                    reserve_kv=False)
    run = simulate(small, Load(users=200), Lengths(1024, 1024), requests=300)
    assert run.preemptions > 0 and run.complete
    reserving = simulate(Replica(**{**small.__dict__, "reserve_kv": True}), Load(users=200), Lengths(1024, 1024), requests=300)
    assert reserving.preemptions == 0 and reserving.complete


def test_work_bound_and_deadline(replica):
    cut = simulate(replica, Load(rate=50.0), FIXED, requests=600, max_iterations=100)
    assert not cut.complete and not Slo(ttft=100.0).met(cut)
    with pytest.raises(EstimateTimeout), time_limit(0):
        simulate(replica, Load(rate=50.0), FIXED, requests=20_000)


def test_grid_is_the_engines_iteration_time(replica):
    grid = iteration_grid(replica, 1024 + 128)
    # at a grid node the interpolation returns the node
    assert grid.time(float(grid.tokens[5]), float(grid.kv_tokens[3])) == pytest.approx(grid.seconds[5, 3], rel=1e-12)
    # more tokens or more KV never take less time
    assert np.all(np.diff(grid.seconds, axis=0) >= -1e-12) and np.all(np.diff(grid.seconds, axis=1) >= -1e-12)


def test_capacity_meets_its_slo_and_replicas_cover_the_load(replica):
    slo = Slo(ttft=2.0, tpot=0.1)
    rate, _ = max_rate(replica, FIXED, slo, 400)
    assert rate > 0 and slo.met(simulate(replica, Load(rate=rate), FIXED, 400))
    answer = serve_load(replica, Load(rate=rate * 2.5), FIXED, slo, 400)
    assert answer.replicas == 3 and answer.slo_met and 0.7 < answer.utilisation <= 1.0
    hopeless = serve_load(replica, Load(rate=1.0), FIXED, Slo(tpot=0.001), 200)
    assert hopeless.replicas is None and not hopeless.slo_met


def test_closed_loop_users(replica):
    answer = serve_load(replica, Load(users=64, think_time=5.0), Lengths(distribution=LENGTH_DISTRIBUTIONS["azure-conv"]),
                        Slo(ttft=2.0, tpot=0.2), 300)
    assert answer.replicas >= 1 and answer.max_users >= 1 and answer.run.complete


def test_quantised_files_keep_embeddings_and_head_at_16_bits():
    arch = find_model("llama-2-7b")
    gptq = weight_format("gptq-int4-g128")
    # issue 16: the 16-bit embeddings and head are about 10 % of a 7B model's bytes at 4 bits
    share = (stored_weight_bytes(arch, gptq) - gptq.bytes_per_weight) * arch.params_total()
    assert 0.08 < share / (stored_weight_bytes(arch, gptq) * arch.params_total()) < 0.2
    assert stored_weight_bytes(arch, weight_format("fp8")) == 1.0  # fp8 checkpoints: no exception


def test_the_kv_cache_gets_the_runtimes_share_of_memory(replica):
    # vLLM gpu_memory_utilization 0.9: a tenth of each device's memory is not the cache's; TensorRT-LLM
    # free_gpu_memory_fraction 0.9: a tenth of what weights and activations leave
    whole = iteration_grid(Replica(**{**replica.__dict__, "memory_share": 1.0}), 1024 + 128)
    vllm = iteration_grid(replica, 1024 + 128)
    trtllm = iteration_grid(Replica(**{**replica.__dict__, "memory_share": 1.0, "kv_free_share": 0.9}), 1024 + 128)
    per_token = kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, replica.count)
    device_memory = float(replica.table.memory[0])
    assert (whole.kv_capacity - vllm.kv_capacity) * per_token == pytest.approx(0.1 * device_memory, rel=0.01)
    assert trtllm.kv_capacity == pytest.approx(0.9 * whole.kv_capacity, rel=0.01)


def test_the_api_servers_latency_adds_to_every_first_token_and_not_to_the_pace(replica):
    # a request's time outside the engine (serving_mechanisms.yaml request_latency_s) moves its first token and its
    # end by the same seconds: TTFT grows by it, TPOT does not
    load, lengths = Load(rate=2.0), Lengths(512, 64)
    plain = simulate(replica, load, lengths, 60)
    late = simulate(dataclasses.replace(replica, request_latency=0.05), load, lengths, 60)
    assert np.allclose(late.ttft, plain.ttft + 0.05) and np.allclose(late.tpot, plain.tpot)


def test_prompts_apart_from_the_answers_lengthen_the_answers_pace_under_load(replica):
    # vLLM V0's unchunked prefill-first scheduling: at a rate that keeps prompts arriving, the running answers wait
    # for every prefill pass, so their time per token grows; at one request at a time nothing changes
    load, lengths = Load(rate=6.0), Lengths(1024, 256)
    mixed = simulate(replica, load, lengths, 200)
    apart = simulate(dataclasses.replace(replica, mixed_batches=False, token_budget=4096), load, lengths, 200)
    assert apart.percentile("tpot", 50) > 1.05 * mixed.percentile("tpot", 50)
    one = Load(users=1)
    assert simulate(dataclasses.replace(replica, mixed_batches=False), one, lengths, 20).percentile("tpot", 50) == \
        pytest.approx(simulate(replica, one, lengths, 20).percentile("tpot", 50), rel=1e-9)
