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
    # from the catalog entry of this CPU where its model name names one, else assumed (and said so)
    assert ("catalog" if detected.catalog_id else "assumed") in device.memory_bandwidth.source
    assert any("catalog" in note for note in detected.notes)  # how the catalog lookup went, either way
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


@pytest.mark.parametrize("model, catalog_id", [
    ("AMD EPYC 7763 64-Core Processor", "epyc-7763"),  # /proc/cpuinfo wording of AMD and Intel parts
    ("Intel(R) Xeon(R) Platinum 8480+", "xeon-platinum-8480plus"),
    ("Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz", "xeon-silver-4114"),
    ("AMD Ryzen 7 2700 Eight-Core Processor", "ryzen-7-2700"),
])
def test_cpu_model_names_find_their_catalog_entry(model, catalog_id):
    # issue 18 item 9: the CPU's figures come from its catalog entry, not from one VM's assumptions
    from validation.detect import match_cpu

    entry, note = match_cpu(model, load_catalog())
    assert entry is not None and entry.id == catalog_id, note


def test_a_family_name_alone_takes_no_entry_and_says_so():
    from validation.detect import match_cpu

    entry, note = match_cpu("AMD EPYC", load_catalog())  # what this project's 2-core VM reports
    assert entry is None and "epyc-7763" in note and "none taken" in note


def test_catalog_figures_are_shared_by_the_usable_cores():
    pytest.importorskip("psutil")
    from validation.detect import describe_cpu, with_catalog_figures

    entry = load_catalog().find("epyc-7763")
    shared = with_catalog_figures(describe_cpu().device, entry, cores=2)
    whole = entry.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]")
    # AMD's datasheet bandwidth of the 64-core part, 2/64 of it for 2 usable cores
    assert shared.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]").to("GB/s").magnitude == \
        pytest.approx((whole * 2 / 64).to("GB/s").magnitude, rel=1e-3)
    assert shared.vector == entry.vector and "epyc-7763" in shared.memory_bandwidth.source
