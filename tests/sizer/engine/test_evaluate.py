"""sizer/engine/evaluate.py: whole batches, the memory of a layout and its step time, on many layouts at once.

The batching helpers are checked against numbers worked by hand; ``evaluate`` against its own
contract (the identities its docstring states: memory is the sum of its parts, the batch is
``dp x micro x accumulation``, the training time never beats the physical limit).
(The range factors: tests/sizer/engine/test_time_range.py.)
"""
import numpy as np
import pytest

from sizer.choices import Optimizer, Precision
from sizer.engine.constants import HEADROOM_HIGH, ZERO_GATHER_BUCKET, ZERO_REDUCE_BUCKET
from sizer.engine.devices import cached_device_table
from sizer.engine.evaluate import evaluate, in_flight_share, micro_batches, replica_share, zero_buckets
from sizer.engine.job import job_from_profile
from sizer.workloads.profile import load_profile


def test_micro_batches_are_whole_divisors_of_the_share():
    micro, accumulation = micro_batches(np.array([8.0, 12.0, 7.0, 5.0]), np.array([3.0, 5.0, 2.0, 0.0]))
    # 8 with at most 3 per pass: the next power of two of accumulation steps, 4 x 2;
    # 12 with at most 5: 3 steps of 4 divide it; 7 (prime) with at most 2: 7 x 1;
    # nothing fits: one sequence per pass (the layout then does not fit)
    assert micro.tolist() == [2.0, 4.0, 1.0, 1.0]
    assert accumulation.tolist() == [4.0, 3.0, 7.0, 5.0]
    assert np.all(micro * accumulation == [8.0, 12.0, 7.0, 5.0])


def test_micro_batches_take_the_whole_share_when_it_fits():
    micro, accumulation = micro_batches(np.array([64.0, 6.0]), np.array([1000.0, 6.0]))
    assert micro.tolist() == [64.0, 6.0] and accumulation.tolist() == [1.0, 1.0]


def test_replica_share_is_the_nearest_multiple_of_the_unit():
    # 100 / 8 = 12.5 rounds to 12 (half to even); in units of 4: 100 / 32 = 3.125 -> 3 x 4 = 12
    assert replica_share(100.0, np.array([8.0, 8.0]), np.array([1.0, 4.0])).tolist() == [12.0, 12.0]
    # more replicas than sequences: still one unit each
    assert replica_share(2.0, np.array([8.0]), np.array([1.0])).tolist() == [1.0]


def test_in_flight_share_follows_korthikanti():
    # 1F1B holds min(p, m) of p stages' micro-batches; interleaved (v chunks) 1 + (p - 1)/(p v) times that
    # (Korthikanti et al. 2022 §4.2.3): p = 4, v = 2 gives 1 + 3/8
    share = in_flight_share(np.array([1.0, 4.0, 4.0, 4.0]), np.array([8.0, 8.0, 2.0, 8.0]), np.array([1.0, 1.0, 1.0, 2.0]))
    assert share.tolist() == pytest.approx([1.0, 1.0, 0.5, 1.375])


def test_zero_buckets_only_with_zero_and_data_parallelism():
    params = np.array([1e10, 1e10, 1e10, 1e8])
    buckets = zero_buckets(params, np.full(4, 2.0), np.array([0, 1, 3, 1]), np.array([8.0, 1.0, 8.0, 8.0]))
    # DeepSpeed's default buckets (constants.py): reduce + gather, each at most the parameters held
    assert buckets[0] == 0.0 and buckets[1] == 0.0
    assert buckets[2] == pytest.approx((ZERO_REDUCE_BUCKET + ZERO_GATHER_BUCKET) * 2.0)
    assert buckets[3] == pytest.approx(2 * 1e8 * 2.0)


@pytest.fixture(scope="module")
def resnet():
    # ResNet-50's built-in profile, batch 256, 100 steps' worth of samples, on one A100 80GB row
    from sizer.hardware.catalog import load_catalog

    job = job_from_profile(load_profile("resnet50"), 256, Precision.MIXED, Optimizer.ADAM, samples=256 * 100)
    table = cached_device_table((load_catalog().find("A100 80GB SXM"),), Precision.MIXED)
    return job, table


def test_memory_is_the_sum_of_its_parts(resnet):
    job, table = resnet
    ev = evaluate(job, table, 0, np.array([1, 2, 8, 8]), np.array([0, 1, 2, 3]))
    assert np.allclose(ev.memory_needed, ev.states.total + ev.framework + ev.activations, rtol=1e-12)
    assert np.all(ev.fits == (ev.memory_needed <= table.memory[0]))
    # more devices and a higher stage never hold more per device
    assert np.all(np.diff(ev.memory_needed) < 0)


def test_headroom_scales_the_memory_by_its_reserve(resnet):
    job, table = resnet
    plain, reserved = evaluate(job, table, 0, 8, 0), evaluate(job, table, 0, 8, 0, headroom=True)
    assert reserved.configs.micro_batch[0] == plain.configs.micro_batch[0]  # the whole share fits either way
    assert reserved.memory_needed[0] == pytest.approx(plain.memory_needed[0] * (1 + HEADROOM_HIGH), rel=1e-12)


def test_the_batch_is_whole_and_says_when_it_is_not_the_one_asked(resnet):
    job, table = resnet
    ev = evaluate(job, table, 0, np.array([1, 2, 3, 8]), 0)
    dp = ev.configs.dp
    assert np.all(ev.batch == dp * ev.configs.micro_batch * ev.configs.accumulation)
    # 3 replicas cannot split 256 sequences: the nearest whole batch, 3 x 85 = 255, and exact says so
    assert ev.batch.tolist() == [256.0, 256.0, 255.0, 256.0]
    assert ev.exact.tolist() == [True, True, False, True]
    # 100 steps of 256; 25,600 samples at 255 a step take 101 steps (ceil)
    assert ev.steps.tolist() == [100.0, 100.0, 101.0, 100.0]


def test_training_time_is_steps_times_step_and_never_below_the_limit(resnet):
    job, table = resnet
    ev = evaluate(job, table, 0, np.array([1, 8, 64]), 0)
    assert np.all(ev.training_seconds >= ev.parts.physical_limit * ev.steps)
    assert np.allclose(ev.training_seconds, np.maximum(ev.parts.step, ev.parts.physical_limit) * ev.steps)


def test_a_candidate_micro_batch_that_does_not_divide_the_share_is_not_feasible(resnet):
    job, table = resnet
    # 8 replicas of 256: a share of 32, which a micro-batch of 5 does not divide and one of 8 does
    ev = evaluate(job, table, 0, np.array([8, 8]), 0, micro_batch=np.array([5.0, 8.0]))
    assert ev.feasible.tolist() == [False, True]
    assert ev.configs.accumulation[1] == 4.0


def test_a_layout_whose_parallel_degrees_do_not_divide_the_count_is_not_feasible(resnet):
    job, table = resnet
    ev = evaluate(job, table, 0, np.array([4, 6]), 0, tp=np.array([1.0, 4.0]))
    assert ev.feasible.tolist() == [True, False]  # 6 devices over tp 4: 1.5 replicas


def test_memory_parts_is_its_held_bytes_then_each_batching_of_them():
    """A search works a split's held bytes out once and each batching (micro-batch, interleaving) from them:
    the same figures as memory_parts of every batching, exactly."""
    from sizer.engine.evaluate import batched_memory, batching, held_bytes, memory_parts
    from sizer.engine.job import resolve_job
    from sizer.hardware.catalog import load_catalog
    from sizer.schemas.base import WorkloadRequest

    job = resolve_job(WorkloadRequest(model="llama-3-8b", tokens=1e11))
    table = cached_device_table((load_catalog().find("H100 SXM"),), job.precision, True)
    tp, pp, cp, zero, recompute = (np.array(v) for v in ([1, 2, 4, 8], [1, 4, 8, 2], [1, 1, 1, 2], [0, 1, 3, 2],
                                                         [0, 2, 0, 2]))
    dp = 64.0 / (tp * pp * cp)
    device = (table.weight_bytes, table.master_bytes, table.storage_scale, table.framework_overhead, table.memory)
    held = held_bytes(job, *(np.repeat(a, 4) for a in device), dp, zero, tp=tp, pp=pp, cp=cp, recompute=recompute,
                      headroom=True)
    for micro, interleave in ((None, np.ones(4)), (np.array([np.nan, 1.0, 2.0, 4.0]), np.array([1, 2, 4, 1]))):
        whole = memory_parts(job, *(np.repeat(a, 4) for a in device), dp, zero, tp=tp, pp=pp, cp=cp,
                             recompute=recompute, interleave=interleave, micro_batch=micro, headroom=True)
        parts = batched_memory(held, batching(job, held, dp, pp=pp, interleave=interleave, micro_batch=micro))
        # a batching of rows of held (a search's variants of one split) reads them there
        rows = np.array([3, 0, 0, 2, 1, 3])
        taken = batching(job, held, dp[rows], pp=pp[rows], interleave=np.broadcast_to(interleave, 4)[rows],
                         micro_batch=None if micro is None else micro[rows], rows=rows)
        assert np.array_equal(taken.needed, parts.needed[rows]) and np.array_equal(taken.micro, parts.micro[rows])
        for name in ("needed", "fits", "micro", "accumulation", "activations", "fit", "whole", "framework"):
            assert np.array_equal(getattr(parts, name), getattr(whole, name)), name


def test_an_evaluation_given_its_memory_is_the_one_that_works_it_out(resnet):
    """evaluate(memory=...) takes a search's memory of the same layouts instead of computing it again."""
    from sizer.engine.evaluate import memory_parts

    job, table = resnet
    count, zero = np.array([1, 2, 8, 8]), np.array([0, 1, 2, 3])
    alone = evaluate(job, table, 0, count, zero)
    index = np.zeros(4, dtype=np.int64)
    memory = memory_parts(job, table.weight_bytes[index], table.master_bytes[index], table.storage_scale[index],
                          table.framework_overhead[index], table.memory[index], count.astype(float), zero)
    given = evaluate(job, table, 0, count, zero, memory=memory)
    for name in ("memory_needed", "fits", "training_seconds", "batch", "steps", "largest_micro_batch"):
        assert np.array_equal(getattr(given, name), getattr(alone, name)), name
