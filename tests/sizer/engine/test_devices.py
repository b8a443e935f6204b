"""sizer/engine/devices.py: catalog devices as the engine's arrays, at one precision.

Reference figures: ../shared/data/gpu-specs.csv (NVIDIA datasheets via the sources it cites) and
../shared/data/interconnects.csv. FP8/FP4 rates are tested in test_low_precision.py.
"""
import math

import numpy as np
import pytest

from sizer.choices import Precision
from sizer.engine.constants import DATACENTRE_NETWORK, FALLBACK_LINK, OFFICE_NETWORK, Efficiencies
from sizer.engine.devices import (
    build_device_table,
    cached_device_table,
    contents_digest,
    device_link,
    device_rates,
    node_layout,
    resolve_precision,
    topology_links,
)
from sizer.engine.layers import ATTENTION, CONV, MATRIX, VECTOR
from sizer.hardware.networks import load_networks

# round numbers, so that every rate is a datasheet figure times a known fraction
EFF = Efficiencies(matrix=0.5, tf32=0.4, fp32_matrix=0.8, vector=0.6, memory=0.75, launch=1e-5, step_overhead=1e-3,
                   source="test")


@pytest.mark.parametrize("name, resolved", [
    ("A100 80GB SXM", "bf16"),  # BF16 tensor cores (Ampere)
    ("V100 SXM2 16GB", "fp16"),  # Volta: FP16 tensor cores, no BF16 (gpu-specs.csv: unsupported bf16)
    ("Tesla P40", "fp32"),  # Pascal: no tensor cores at all
])
def test_mixed_precision_takes_the_best_16_bit_format_the_device_has(catalog, name, resolved):
    assert resolve_precision(catalog.find(name), Precision.MIXED) == resolved


def test_an_unsupported_precision_resolves_to_none(catalog):
    assert resolve_precision(catalog.find("Tesla P40"), Precision.BF16) is None
    assert resolve_precision(catalog.find("A100 80GB SXM"), Precision.FP16) == Precision.FP16


@pytest.mark.parametrize("name, per_node, network", [
    ("H100 SXM", 8, DATACENTRE_NETWORK),  # NVLink: a DGX/HGX node of 8
    ("GB200", 72, DATACENTRE_NETWORK),  # NVL72: 72 GPUs on one NVLink switch domain (NVIDIA datasheet)
    ("RTX 4090", 4, OFFICE_NETWORK),  # a PCIe card: a 4-GPU workstation
    ("Xeon Silver 4114", 1, OFFICE_NETWORK),  # a CPU is its own node
])
def test_node_layout_by_interconnect(catalog, name, per_node, network):
    assert node_layout(catalog.find(name)) == (per_node, network)


def test_device_link_is_the_catalogs_interconnect_or_pcie(catalog):
    # interconnects.csv: NVLink 4.0 (H100) 450 GB/s per direction
    assert device_link(catalog.find("H100 SXM")).bandwidth == pytest.approx(450e9)
    assert device_link(catalog.find("Xeon Silver 4114")) is FALLBACK_LINK


def test_a100_fp32_runs_convolutions_on_tf32(catalog):
    # PyTorch's cuDNN allows TF32 by default; matmuls stay FP32. gpu-specs.csv: FP32 19.5, TF32 156 TFLOPS
    rates = device_rates(catalog.find("A100 80GB SXM"), Precision.FP32)
    assert (rates.matrix_unit, rates.conv_unit) == ("fp32", "tf32")
    assert rates.conv_peak == pytest.approx(156e12, rel=1e-3)
    assert rates.matrix_peak == pytest.approx(2 * 6912 * 1.41e9, rel=1e-12)  # 2NC
    assert rates.bandwidth == pytest.approx(2039e9)


def test_achieved_rates_are_peaks_times_unit_efficiencies(catalog):
    # A100 80GB SXM at bf16: 312 TFLOPS dense (gpu-specs.csv), FP32 19.49 (2NC), 2039 GB/s
    table = build_device_table((catalog.find("A100 80GB SXM"),), Precision.BF16, (EFF,))
    assert table.rates[0, MATRIX] == pytest.approx(312e12 * EFF.matrix, rel=1e-9)
    assert table.rates[0, CONV] == pytest.approx(312e12 * EFF.matrix, rel=1e-9)
    assert table.rates[0, ATTENTION] == table.rates[0, MATRIX]
    assert table.rates[0, VECTOR] == pytest.approx(2 * 6912 * 1.41e9 * EFF.vector, rel=1e-9)
    assert table.bandwidth[0] == pytest.approx(2039e9 * EFF.memory, rel=1e-9)
    assert table.peak[0] == pytest.approx(312e12) and table.unit_peaks[0, 2] == pytest.approx(312e12)
    assert table.memory[0] == pytest.approx(80e9)
    # mixed-precision storage: 2-byte copies, 4-byte FP32 masters (Micikevicius et al. 2018)
    assert (table.weight_bytes[0], table.master_bytes[0], table.storage_scale[0]) == (2, 4, 0.5)
    assert (table.launch[0], table.step_overhead[0]) == (EFF.launch, EFF.step_overhead)


def test_fp32_training_keeps_no_master_copy(catalog):
    table = build_device_table((catalog.find("A100 80GB SXM"),), Precision.FP32, (EFF,))
    assert (table.weight_bytes[0], table.master_bytes[0], table.storage_scale[0]) == (4, 0, 1)
    # unit_peaks[:, 2] is the fastest unit's: TF32 convolutions at 156 TFLOPS beat FP32's 19.5 (the physical limit takes
    # each unit at its own peak: tests/sizer/engine/test_physical_limit_per_unit.py)
    assert table.unit_peaks[0, 2] == pytest.approx(156e12, rel=1e-3)


def test_unsupported_rows_are_nan_and_not_supported(catalog):
    devices = (catalog.find("Tesla P40"), catalog.find("A100 80GB SXM"))
    table = build_device_table(devices, Precision.BF16, (EFF, EFF))
    assert list(table.supported) == [False, True]
    assert np.isnan(table.rates[0]).all() and table.precisions == (None, "bf16")
    assert table.memory[0] == pytest.approx(24e9)  # memory is known either way (P40: 24 GB)
    assert table.index("a100-80gb-sxm4") == 1


def test_a_catalog_node_type_sets_the_links(catalog):
    # interconnects.csv: DGX H100 NVSwitch 450 GB/s per GPU one way, 8 x NDR 400 Gb/s = 50 GB/s per GPU
    per_node, inside, between = topology_links(load_networks().topology("DGX H100"))
    assert (per_node, inside.bandwidth, between.bandwidth) == (8, pytest.approx(450e9), pytest.approx(50e9))
    table = build_device_table((catalog.find("H100 SXM"),), Precision.BF16, (EFF,), topology=load_networks().topology("DGX H100"))
    assert table.link[0] == pytest.approx(450e9) and table.network[0] == pytest.approx(50e9)


def test_the_cached_table_is_built_once_per_content(catalog):
    devices = (catalog.find("H100 SXM"),)
    assert cached_device_table(devices, Precision.BF16) is cached_device_table(devices, Precision.BF16)
    assert cached_device_table(devices, Precision.BF16) is not cached_device_table(devices, Precision.FP32)


def test_every_catalog_device_gives_finite_rates_where_supported(catalog):
    devices = tuple(catalog)
    table = cached_device_table(devices, Precision.MIXED)
    for i, device in enumerate(devices):
        if table.supported[i]:
            assert all(math.isfinite(r) and r > 0 for r in table.rates[i]), device.id
            assert table.unit_peaks[i, 2] >= table.peak[i], device.id


def test_the_disk_key_digests_every_devices_content_in_order(catalog):
    # the disk entry's key (cached_device_table): equal for the same content, whichever objects hold it; another
    # figure, another device or another order gives another
    h100, a100 = catalog.find("H100 SXM"), catalog.find("A100 80GB SXM")
    again = type(h100).model_validate(h100.model_dump())
    assert contents_digest((h100, a100)) == contents_digest((again, a100))
    assert contents_digest((h100, a100)) != contents_digest((a100, h100))
    assert contents_digest((h100,)) != contents_digest((h100, a100))
    changed = h100.model_copy(update={"name": h100.name + " (edited)"})
    assert contents_digest((changed, a100)) != contents_digest((h100, a100))
