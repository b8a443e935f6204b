"""Device detection (validation.detect): this machine's CPU, and GPU names mapped to the catalog."""
from __future__ import annotations

import pytest

from sizer.choices import Precision
from sizer.formulas.peaks import device_peak
from sizer.hardware.catalog import load_catalog
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
    peak, basis = device_peak(device, Precision.FP32)
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


# --- efficiencies from the catalog entry of the detected CPU (issue 18 item 9) ------------------

CPUINFO_7763 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n" \
               "cpu MHz\t\t: 2445.406\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\n"
MEASURED = {"fp32_matrix": 0.55, "vector": 0.35, "memory": 0.6, "step_overhead_s": 0.004, "source": "my-report"}


def _fake_cpuinfo(monkeypatch, tmp_path, text: str) -> None:
    import validation.detect

    path = tmp_path / "cpuinfo"
    path.write_text(text)
    monkeypatch.setattr(validation.detect, "CPUINFO", path)


def _catalog_with_measured_7763(monkeypatch, tmp_path) -> None:
    """A user catalog (SIZER_CATALOG) whose EPYC 7763 entry carries efficiencies measured on it."""
    import yaml

    from sizer.hardware.catalog import builtin_catalog_dir

    raw = yaml.safe_load((builtin_catalog_dir() / "cpus.yaml").read_text())
    entry = next(d for d in raw["devices"] if d["id"] == "epyc-7763")
    sources = {**raw["sources"], "my-report": "validation/reports/cpu-quick-on-an-epyc-7763.md (a measured run)"}
    path = tmp_path / "measured.yaml"
    path.write_text(yaml.safe_dump({"sources": sources, "devices": [{**entry, "efficiency": MEASURED}]}))
    monkeypatch.setenv("SIZER_CATALOG", str(path))


def test_a_detected_cpu_takes_the_efficiencies_measured_on_its_catalog_entry(monkeypatch, tmp_path):
    pytest.importorskip("psutil")
    from sizer.engine.constants import CPU_EFFICIENCIES, device_efficiencies
    from validation.detect import describe_cpu

    _fake_cpuinfo(monkeypatch, tmp_path, CPUINFO_7763)
    _catalog_with_measured_7763(monkeypatch, tmp_path)
    detected = describe_cpu()
    assert detected.catalog_id == "epyc-7763"
    used = device_efficiencies(detected.device)
    assert (used.fp32_matrix, used.vector, used.memory, used.step_overhead) == (0.55, 0.35, 0.6, 0.004)
    assert used != CPU_EFFICIENCIES and "measured on" in used.source and "epyc-7763" in used.source
    assert not any(note.startswith("warning:") for note in detected.notes), detected.notes
    assert any("efficiencies measured on" in note for note in detected.notes)


def test_the_measured_efficiencies_drive_the_prediction(monkeypatch, tmp_path):
    pytest.importorskip("psutil")
    from sizer.engine.job import resolve_job
    from sizer.engine.modes import job_step_seconds
    from sizer.schemas.base import WorkloadRequest
    from validation.detect import describe_cpu

    _fake_cpuinfo(monkeypatch, tmp_path, CPUINFO_7763)
    _catalog_with_measured_7763(monkeypatch, tmp_path)
    measured = describe_cpu().device
    generic = measured.model_copy(update={"efficiency": None})
    job = resolve_job(WorkloadRequest(params=1e6, samples=1e4, batch_size=512, precision="fp32", optimizer="sgd",
                                      forward_flops_per_sample=2e6))
    # every rate at 0.35-0.6 of peak against the generic 0.7-0.85: the same step takes longer
    assert job_step_seconds(job, measured) > 1.2 * job_step_seconds(job, generic)


@pytest.mark.parametrize("model_name", ["AMD EPYC", "AMD EPYC 7763 64-Core Processor", "Some Future CPU 9000"])
def test_without_measured_efficiencies_the_generic_defaults_are_used_and_said(monkeypatch, tmp_path, model_name):
    # a family name (no entry), an entry without measured efficiencies (every built-in one today), no entry at all
    pytest.importorskip("psutil")
    from sizer.engine.constants import CPU_EFFICIENCIES, device_efficiencies
    from validation.detect import describe_cpu

    _fake_cpuinfo(monkeypatch, tmp_path, CPUINFO_7763.replace("AMD EPYC 7763 64-Core Processor", model_name))
    detected = describe_cpu()
    assert device_efficiencies(detected.device) is CPU_EFFICIENCIES
    warnings = [note for note in detected.notes if note.startswith("warning:")]
    assert len(warnings) == 1 and "generic CPU defaults" in warnings[0] and "one 2-core AMD EPYC VM" in warnings[0]
    assert model_name in detected.device.name


def test_measured_efficiencies_in_a_catalog_file_need_a_source_and_fractions_of_peak(tmp_path):
    import yaml

    from sizer.errors import CatalogError
    from sizer.hardware.catalog import builtin_catalog_dir

    raw = yaml.safe_load((builtin_catalog_dir() / "cpus.yaml").read_text())
    entry = next(d for d in raw["devices"] if d["id"] == "epyc-7763")
    for efficiency, field in (({**MEASURED, "source": "nowhere"}, "efficiency"), ({**MEASURED, "vector": 1.5}, "vector")):
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump({"sources": raw["sources"] | {"my-report": "x"},
                                        "devices": [{**entry, "efficiency": efficiency}]}))
        with pytest.raises(CatalogError, match=field):
            load_catalog(path)
