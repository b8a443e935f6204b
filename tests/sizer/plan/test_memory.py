"""sizer/plan/memory_report.py: training memory per device and the fit decision, from the engine's memory model."""
import pytest

from sizer.engine.job import resolve_job
from sizer.plan.memory_report import training_memory
from sizer.workloads.request import WorkloadRequest


def _job(**fields):
    return resolve_job(WorkloadRequest(**fields), need_samples=False)


def test_adam_takes_16_bytes_per_parameter_in_fp32_and_mixed_precision():
    # ZeRO (Rajbhandari et al. 2020) §3: mixed-precision Adam = 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter
    assert training_memory(_job(params=1e9, precision="bf16", optimizer="adam")).model_states.value == pytest.approx(16)
    assert training_memory(_job(params=1e9, precision="fp32", optimizer="adam")).model_states.value == pytest.approx(16)
    assert training_memory(_job(params=1e9, precision="fp32", optimizer="sgd")).model_states.value == pytest.approx(8)
    assert training_memory(_job(params=1e9, precision="fp16", optimizer="sgd")).master_weights.value == pytest.approx(4)


@pytest.mark.parametrize("optimizer, copies", [("sgd", 0), ("momentum", 1), ("adam", 2), ("adamw", 2), ("adagrad", 1), ("rmsprop", 1)])
def test_optimizer_state_copies(optimizer, copies):
    result = training_memory(_job(params=1e9, precision="fp32", optimizer=optimizer))
    assert result.optimizer_states.value == pytest.approx(4 * copies)


def test_mixed_precision_without_a_device_is_counted_as_bf16():
    result = training_memory(_job(params=1e9))
    assert result.precision == "bf16" and result.weights.value == pytest.approx(2)


def test_7b_adamw_does_not_fit_one_80gb_gpu_but_fits_sharded(catalog):
    job = _job(params=7e9, samples=1e6, precision="bf16", optimizer="adamw")
    h100 = catalog.find("H100 SXM")
    one = training_memory(job, h100, 1)
    assert one.total.value > 112 and one.fits is False  # 7e9 x 16 B = 112 GB of state alone
    sharded = training_memory(job, h100, 8, zero=3)
    assert sharded.fits is True
    assert sharded.optimizer_states.value == pytest.approx(7e9 * 8 / 8 / 1e9)


def test_headroom_reserves_30_percent(catalog):
    job = _job(params=1e8, samples=1e6, activation_memory_per_sample="1 MB", micro_batch=16)
    plain = training_memory(job, catalog.find("T4"))
    reserved = training_memory(job, catalog.find("T4"), headroom=True)
    assert reserved.required_with_headroom.value == pytest.approx(plain.total.value * 1.3)
    assert reserved.largest_micro_batch < plain.largest_micro_batch


def test_largest_micro_batch_fills_the_memory(catalog):
    fields = dict(params=1e8, samples=1e6, activation_memory_per_sample="10 MB", batch_size=4096, precision="fp32")
    t4 = catalog.find("T4")
    largest = training_memory(_job(**fields), t4).largest_micro_batch
    assert training_memory(_job(**fields, micro_batch=largest), t4).fits
    assert not training_memory(_job(**fields, micro_batch=largest + 1), t4).fits


def test_the_default_micro_batch_is_the_largest_that_fits(catalog):
    # a 4096-sample batch does not fit a 16 GB T4 at 10 MB per sample: the engine takes a power of two that does
    result = training_memory(_job(params=1e8, samples=1e6, activation_memory_per_sample="10 MB", batch_size=4096,
                                  precision="fp32"), catalog.find("T4"))
    assert result.fits and result.micro_batch == 1024


def test_more_batch_never_needs_less_memory():
    small = _job(params=1e8, samples=1e6, activation_memory_per_sample="1 MB", batch_size=16)
    large = _job(params=1e8, samples=1e6, activation_memory_per_sample="1 MB", batch_size=64)
    assert training_memory(large).total.value > training_memory(small).total.value


def test_zero_adds_its_communication_buckets_and_says_they_are_unverified():
    # DeepSpeed's reduce and all-gather buckets (5e8 elements each by default, at most the parameters a
    # device holds), 16-bit: 2 x 5e8 x 2 B = 2 GB; none without ZeRO. Recalled defaults: unverified.
    sharded = training_memory(_job(params=7.5e9, precision="fp16", optimizer="adam"), None, 64, zero=2)
    plain = training_memory(_job(params=7.5e9, precision="fp16", optimizer="adam"), None, 64, zero=0)
    assert sharded.buffers.value == pytest.approx(2.0) and plain.buffers.value == 0
    assert any(a.name == "ZeRO buckets" and a.verified is False for a in sharded.assumptions)
    small = training_memory(_job(params=1e8, precision="fp16", optimizer="adam"), None, 8, zero=1)
    assert small.buffers.value == pytest.approx(2 * 1e8 * 2 / 1e9)  # capped at the parameters held
