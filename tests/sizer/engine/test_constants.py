"""sizer/engine/constants.py: the engine's constants against their sources, and the efficiency model's rules."""
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.choices import DeviceKind, Optimizer
from sizer.engine import constants as k
from sizer.engine.constants import (
    CPU_EFFICIENCIES,
    GPU_EFFICIENCIES,
    TRANSFORMER_GPU_EFFICIENCIES,
    Efficiencies,
    default_efficiencies,
    device_efficiencies,
    optimizer_state_bytes,
    serving_efficiencies,
)
from sizer.errors import InputError
from sizer.hardware import nodes
from sizer.hardware.schema import MeasuredEfficiency


@pytest.mark.parametrize("optimizer, state_bytes", [
    # ZeRO (Rajbhandari et al. 2020) §3: Adam keeps momentum and variance, FP32 each (K = 12 with the
    # 4-byte master copy, counted apart here); momentum SGD one FP32 buffer; plain SGD none
    ("adam", 8), ("adamw", 8), ("momentum", 4), ("sgd", 0), ("adagrad", 4), ("rmsprop", 4),
    ("paged-adamw", 8),  # paging moves states, not their size (QLoRA §2)
])
def test_optimizer_state_bytes_per_parameter(optimizer, state_bytes):
    assert optimizer_state_bytes(Optimizer(optimizer)) == state_bytes


def test_8bit_adam_keeps_a_byte_per_state_and_an_fp32_absmax_per_2048():
    # Dettmers et al. 2022 §2: block-wise quantisation, blocks of 2048, one FP32 maximum each
    assert optimizer_state_bytes(Optimizer.ADAM_8BIT) == pytest.approx(2 * (1 + 4 / 2048), rel=1e-12)
    assert optimizer_state_bytes(Optimizer.PAGED_ADAMW_8BIT) == optimizer_state_bytes(Optimizer.ADAMW_8BIT)


def test_every_optimizer_has_its_state_count():
    assert set(k.OPTIMIZER_STATES) == set(Optimizer)
    from pydantic import ValidationError

    from sizer.schemas.base import WorkloadRequest

    with pytest.raises(ValidationError, match="optimizer"):  # refused where the request is built
        WorkloadRequest(params=1e9, optimizer="lamb")


def test_links_are_their_standards_line_rates():
    # PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 encoding / 8 bit = 31.5 GB/s per direction (PCI-SIG);
    # rtol 1e-3 for the 31.5 the standard rounds to
    assert k.FALLBACK_LINK.bandwidth == pytest.approx(16e9 * 16 * 128 / 130 / 8, rel=1e-3)
    # InfiniBand NDR 400 Gb/s and 100 Gb/s Ethernet, bits to bytes
    assert k.DATACENTRE_NETWORK.bandwidth == 400e9 / 8
    assert k.OFFICE_NETWORK.bandwidth == 100e9 / 8
    # DGX H100: 8 GPUs to a node (NVIDIA DGX H100 user guide)
    assert nodes.DATACENTRE_DEVICES_PER_NODE == 8  # the node model's home (not re-exported by constants)


def test_sizes_are_in_bytes_as_their_comments_say():
    assert k.FRAMEWORK_OVERHEAD_BYTES == 1024 ** 3  # 1 GiB
    assert k.FP32_STORAGE_BYTES == 4
    assert k.FULL_SHARDING_TRAFFIC == 1.5  # ZeRO §7: stage 3 moves 1.5 x the data-parallel volume


@pytest.mark.parametrize("field, value", [("matrix", 0.0), ("memory", 1.2), ("vector", -0.1), ("matrix_half", -1.0),
                                          ("fp8_scaling", -0.1)])
def test_efficiencies_outside_their_range_are_refused_naming_the_field(field, value):
    with pytest.raises(InputError, match=f"^efficiency.{field}: "):
        replace(GPU_EFFICIENCIES, **{field: value})


def test_a_negative_time_is_refused():
    with pytest.raises(InputError, match="^efficiency"):
        replace(GPU_EFFICIENCIES, step_overhead=-1.0)


def test_a_negative_launch_time_names_its_field():
    with pytest.raises(InputError, match="^efficiency.launch"):
        replace(GPU_EFFICIENCIES, launch=-1e-6)


def test_scaling_slows_every_rate_and_stretches_launches():
    slower = GPU_EFFICIENCIES.scaled(2.0, "twice as slow")
    assert slower.matrix == GPU_EFFICIENCIES.matrix / 2 and slower.memory == GPU_EFFICIENCIES.memory / 2
    assert slower.launch == GPU_EFFICIENCIES.launch * 2 and slower.source == "twice as slow"
    # a faster device cannot exceed its peak: capped at 1
    assert GPU_EFFICIENCIES.scaled(0.1, "faster").fp32_matrix == 1.0


@given(st.floats(0.01, 100))
def test_scaled_efficiencies_stay_fractions_and_order_with_the_factor(factor):
    scaled = GPU_EFFICIENCIES.scaled(factor, "x")
    for name in Efficiencies.RATES:
        assert 0 < getattr(scaled, name) <= 1
        if factor >= 1:
            assert getattr(scaled, name) <= getattr(GPU_EFFICIENCIES, name)


def test_as_dict_names_every_figure_with_its_unit():
    figures = CPU_EFFICIENCIES.as_dict()
    assert set(figures) == set(Efficiencies.RATES) | {"launch_s", "step_overhead_s", "matrix_half_flop"}
    assert figures["step_overhead_s"] == CPU_EFFICIENCIES.step_overhead


def test_defaults_by_kind():
    assert default_efficiencies(DeviceKind.CPU) is CPU_EFFICIENCIES
    # a transformer on a CPU: the compute efficiencies at the share a large network reached on a CPU (issue 39)
    cpu_transformer = default_efficiencies(DeviceKind.CPU, True)
    assert cpu_transformer.matrix == pytest.approx(CPU_EFFICIENCIES.matrix * 20.8 / 47.8)
    assert cpu_transformer.memory == CPU_EFFICIENCIES.memory
    assert default_efficiencies(DeviceKind.GPU) is GPU_EFFICIENCIES
    assert default_efficiencies(DeviceKind.ACCELERATOR, transformer=True) is TRANSFORMER_GPU_EFFICIENCIES
    # generated transformers: the GEMM-size curve is on (fitted half-point), profiled workloads: off
    assert TRANSFORMER_GPU_EFFICIENCIES.matrix_half > 0 and GPU_EFFICIENCIES.matrix_half == 0


def test_a_device_with_measured_efficiencies_uses_them_and_says_so(catalog):
    xeon = catalog.find("Xeon Silver 4114")
    measured = MeasuredEfficiency(fp32_matrix=0.5, vector=0.4, memory=0.6, step_overhead_s=0.003, source="a report")
    device = type(xeon).model_validate({**xeon.model_dump(), "efficiency": measured.model_dump()})
    eff = device_efficiencies(device)
    assert (eff.fp32_matrix, eff.vector, eff.memory, eff.step_overhead) == (0.5, 0.4, 0.6, 0.003)
    assert "xeon-silver-4114" in eff.source and "a report" in eff.source
    assert device_efficiencies(xeon) is CPU_EFFICIENCIES


def test_serving_folds_launches_into_the_per_pass_overhead():
    gpu, cpu = serving_efficiencies(DeviceKind.GPU), serving_efficiencies(DeviceKind.CPU)
    assert gpu.launch == 0 and cpu.launch == 0
    assert gpu.step_overhead == cpu.step_overhead == k.SERVING_STEP_OVERHEAD
    assert gpu.fp8_scaling == 0  # static scales: no training recipe's casts
    assert serving_efficiencies(DeviceKind.GPU, memory=0.5).memory == 0.5
