"""sizer/memory.py: training memory per device and the fit decision."""
import pytest

from sizer.memory import model_state_bytes, state_bytes, training_memory
from sizer.workload import WorkloadRequest, resolve_workload


def test_adam_takes_16_bytes_per_parameter_in_fp32_and_mixed_precision():
    # ZeRO (Rajbhandari et al. 2020) §3: mixed-precision Adam = 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter
    assert model_state_bytes(1e9, "bf16", "adam").to("B").magnitude == pytest.approx(16e9)
    assert model_state_bytes(1e9, "fp32", "adam").to("B").magnitude == pytest.approx(16e9)
    assert model_state_bytes(1e9, "fp32", "sgd").to("B").magnitude == pytest.approx(8e9)
    mixed = state_bytes(1e9, "fp16", "sgd")
    assert mixed.master_weights.to("B").magnitude == pytest.approx(4e9)


@pytest.mark.parametrize("optimizer, copies", [("sgd", 0), ("momentum", 1), ("adam", 2), ("adamw", 2), ("adagrad", 1), ("rmsprop", 1)])
def test_optimizer_state_copies(optimizer, copies):
    assert state_bytes(1e6, "fp32", optimizer).optimizer_states.to("B").magnitude == pytest.approx(4e6 * copies)


def test_7b_adamw_does_not_fit_one_80gb_gpu_but_fits_sharded(catalog):
    workload = resolve_workload(WorkloadRequest(params=7e9, tokens=2e10, precision="bf16", optimizer="adamw"))
    h100 = catalog.find("H100 SXM")
    one = training_memory(workload, h100, 1)
    assert one.total.value > 112 and one.fits is False  # 7e9 x 16 B = 112 GB of state alone
    sharded = training_memory(workload, h100, 8, sharding="full")
    assert sharded.fits is True
    assert sharded.optimizer_states.value == pytest.approx(7e9 * 8 / 8 / 1e9)


def test_headroom_reserves_30_percent(catalog):
    workload = resolve_workload(WorkloadRequest(params=1e8, samples=1e6, activation_memory_per_sample="1 MB"))
    plain = training_memory(workload, catalog.find("T4"))
    reserved = training_memory(workload, catalog.find("T4"), headroom=True)
    assert reserved.required_with_headroom.value == pytest.approx(plain.total.value * 1.3)
    assert reserved.largest_micro_batch < plain.largest_micro_batch


def test_largest_micro_batch_fills_the_memory(catalog):
    workload = resolve_workload(WorkloadRequest(params=1e8, samples=1e6, activation_memory_per_sample="10 MB", batch_size=64))
    t4 = catalog.find("T4")
    result = training_memory(workload, t4)
    at_limit = training_memory(workload, t4, micro_batch=result.largest_micro_batch)
    over = training_memory(workload, t4, micro_batch=result.largest_micro_batch + 1)
    assert at_limit.fits and not over.fits


def test_more_batch_never_needs_less_memory(catalog):
    small = resolve_workload(WorkloadRequest(params=1e8, samples=1e6, activation_memory_per_sample="1 MB", batch_size=16))
    large = resolve_workload(WorkloadRequest(params=1e8, samples=1e6, activation_memory_per_sample="1 MB", batch_size=64))
    assert training_memory(large).total.value > training_memory(small).total.value
