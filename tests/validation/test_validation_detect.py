"""Device detection (validation.detect): this machine's CPU, and GPU names mapped to the catalog."""
from __future__ import annotations

import pytest

from sizer.hardware.catalog import load_catalog
from sizer.formulas.peaks import device_peak
from sizer.units import Quantity
from validation.detect import cuda_name_candidates, match_cuda_device, parse_cpuinfo, simd_from_flags


def test_simd_widths_from_flags():
    assert (simd_from_flags({"avx512f", "avx2", "fma"}, "GenuineIntel").fp32_lanes_per_fma,
            simd_from_flags({"avx512f", "avx2", "fma"}, "GenuineIntel").fma_units_per_core) == (16, 2)
    # Zen 4 runs AVX-512 on 256-bit datapaths: no more FP32 lanes per cycle than AVX2
    zen4 = simd_from_flags({"avx512f", "avx2", "fma"}, "AuthenticAMD")
    assert zen4.fp32_lanes_per_fma * zen4.fma_units_per_core == 16
    assert simd_from_flags({"avx2", "fma", "avx"}).fp32_lanes_per_fma == 8
    assert simd_from_flags({"sse2"}, "GenuineIntel").fp32_lanes_per_fma == 4


def test_parse_cpuinfo_first_block():
    text = "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2400.0\n\nprocessor\t: 1\nmodel name\t: Other\n"
    info = parse_cpuinfo(text)
    assert info["model name"] == "Test CPU" and info["cpu mhz"] == "2400.0"


@pytest.mark.parametrize(("driver_name", "memory_gb", "catalog_id"), [
    ("NVIDIA H100 80GB HBM3", 85.0, "h100-sxm5-80gb"),  # the SXM part reports its memory type
    ("NVIDIA H100 PCIe", 85.0, "h100-pcie-80gb"),
    ("NVIDIA A100-SXM4-80GB", 85.1, "a100-80gb-sxm4"),
    ("NVIDIA A100-PCIE-40GB", 42.3, "a100-40gb-pcie"),
    ("Tesla V100-SXM2-16GB", 16.9, "tesla-v100-sxm2-16gb"),
    ("Tesla T4", 15.8, "tesla-t4"),
    ("NVIDIA GeForce RTX 3060", 12.6, "rtx-3060-12gb"),
    ("NVIDIA L4", 23.7, "l4"),
    ("NVIDIA H200", 150.0, "h200-sxm-141gb"),
])
def test_cuda_names_map_to_catalog(driver_name, memory_gb, catalog_id):
    device, note = match_cuda_device(driver_name, Quantity(memory_gb, "GB").to("B").magnitude, load_catalog())
    assert device is not None, note
    assert device.id == catalog_id


def test_unknown_gpu_is_reported():
    device, note = match_cuda_device("NVIDIA GeForce GTX 1650", 4.3e9, load_catalog())
    assert device is None
    assert "no catalog entry" in note


def test_name_candidates_drop_trailing_words():
    assert cuda_name_candidates("NVIDIA H100 80GB HBM3")[-1] == "NVIDIA H100"


def test_this_machines_cpu_has_a_prediction():
    pytest.importorskip("psutil")
    pytest.importorskip("torch")
    from validation.detect import detect_device

    detected = detect_device("cpu")
    device = detected.device
    assert detected.kind == "cpu" and device.kind == "cpu"
    assert int(device.cores.value) >= 1
    assert device.memory.quantity("memory", "[information]") > Quantity(0.1, "GB")
    assert "assumed" in device.memory_bandwidth.source
    peak, basis = device_peak(device, "fp32")
    # R = cores x clock x 2 x lanes x FMA units (spec §3.1): at least one 4-lane SSE unit at 0.5 GHz
    assert peak >= Quantity(int(device.cores.value) * 0.5e9 * 2 * 4, "FLOP/s")
    assert "SIMD" in basis


def test_cuda_request_without_cuda_is_an_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    from validation.detect import detect_device

    with pytest.raises(ValueError, match="no CUDA device"):
        detect_device("cuda")


@pytest.mark.skipif(not __import__("importlib").util.find_spec("torch") or not __import__("torch").cuda.is_available(),
                    reason="CUDA only: needs a GPU")
def test_cuda_device_detected():
    from validation.detect import detect_device

    detected = detect_device("cuda")
    assert detected.kind == "cuda"
    assert device_peak(detected.device, "fp32")[0] > Quantity(1, "TFLOPS")
