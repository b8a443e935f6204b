"""sizer/training/memory_answer.py: training memory per device and the fit decision, from the engine's memory model."""
import pytest

from sizer.choices import Optimizer
from sizer.engine.job import resolve_job
from sizer.errors import InputError
from sizer.schemas.base import WorkloadRequest
from sizer.training.memory_answer import optimizer_assumption, training_memory


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


@pytest.mark.parametrize("zero, model_states_gb", [(0, 120.0), (1, 31.40625), (2, 16.640625), (3, 1.875)])
def test_zero_stages_shard_the_model_states_as_the_zero_paper_figure_1(zero, model_states_gb):
    # Rajbhandari et al. 2020, Figure 1: 7.5e9 parameters, mixed-precision Adam (K = 12), 64 devices:
    # 120 GB replicated, 31.4 GB (Pos), 16.6 GB (Pos+g), 1.9 GB (Pos+g+p); exact to the formula's float
    result = training_memory(_job(params=7.5e9, precision="fp16", optimizer="adam"), None, 64, zero=zero)
    assert result.model_states.value == pytest.approx(model_states_gb, rel=1e-12)
    assert result.sharding == ("full" if zero == 3 else "none")


def test_active_is_the_total_less_the_framework_overhead_and_offload_moves_states_to_the_host(catalog):
    job = _job(params=1e9, samples=1e6, precision="bf16", optimizer="adamw")
    h100 = catalog.find("H100 SXM")
    kept = training_memory(job, h100)
    assert kept.active.value == pytest.approx(kept.total.value - kept.framework_overhead.value)
    assert kept.host_memory.value == 0
    offloaded = training_memory(job, h100, offload=True)
    # ZeRO-Offload (Ren et al. 2021): FP32 master weights and the two Adam moments, 12 B per parameter, on the host
    assert offloaded.host_memory.value == pytest.approx(12.0, rel=1e-9)
    assert offloaded.total.value < kept.total.value


def test_recomputation_of_a_workload_without_blocks_is_refused():
    with pytest.raises(InputError) as raised:
        training_memory(_job(params=1e8, samples=1e6, activation_memory_per_sample="1 MB"), recompute=2)
    assert raised.value.field == "recompute"


def test_a_precision_the_device_lacks_is_refused_naming_the_field(catalog):
    # an A100 has no fp8 tensor-core peak (NVIDIA A100 datasheet), so fp8 training cannot be sized on it
    with pytest.raises(InputError) as raised:
        training_memory(_job(params=1e9, precision="fp8"), catalog.find("A100 80GB SXM"))
    assert raised.value.field == "precision"


@pytest.mark.parametrize("optimizer, words", [
    (Optimizer.ADAMW, "2 FP32 state copies"), (Optimizer.SGD, "0 FP32 state copies"),
    (Optimizer.ADAMW_8BIT, "2 state copies at 8 bits"), (Optimizer.ADAFACTOR, "factored second moment"),
    (Optimizer.LION, "1 FP32 state copy"),
])
def test_the_optimizer_assumption_says_what_it_keeps(optimizer, words):
    note = optimizer_assumption(optimizer)
    assert note.name == "optimizer" and words in note.value and note.source


def _resnet50(batch, precision):
    from sizer.choices import Precision
    from sizer.engine.job import job_from_profile
    from sizer.workloads.profile import load_profile

    return job_from_profile(load_profile("resnet50"), batch, Precision(precision), Optimizer.MOMENTUM, micro_batch=batch)


def test_resnet50_at_256_with_mixed_precision_fits_a_16gb_v100(catalog):
    # NVIDIA DeepLearningExamples trains ResNet-50 v1.5 at 256 per 16 GB V100 with AMP
    # (PyTorch/Classification/ConvNets/configs.yml; benchmarks/published_measurements.csv); sizer once said 18.2 GB
    result = training_memory(_resnet50(256, "fp16"), catalog.find("tesla-v100-sxm2-16gb"))
    assert result.fits is True and result.total.value < 16
    assert result.largest_micro_batch >= 256


def test_resnet50_at_512_with_amp_runs_in_one_pass_on_24gb(catalog):
    # issue 40: timm trains ResNet-50 at 512 per GPU (AMP, channels-last) in 24 GB; sizer once split it in two passes
    result = training_memory(_resnet50(512, "fp16"), catalog.find("rtx-3090"))
    assert result.fits is True and result.micro_batch == 512


def test_resnet50_fp32_at_256_does_not_fit_16gb(catalog):
    # FP32 keeps twice the bytes: 256 x 86.0 MB of saved tensors (counted with torch's saved-tensor hooks,
    # catalog/workloads/resnet50.yaml) = 22 GB > 16 GB; NVIDIA runs FP32 at 112 on that card
    result = training_memory(_resnet50(256, "fp32"), catalog.find("tesla-v100-sxm2-16gb"))
    assert result.fits is False and 112 <= result.largest_micro_batch < 256
