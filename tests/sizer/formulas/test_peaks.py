"""sizer/formulas/peaks.py against datasheets: R = 2NC for catalog GPUs, the vector formula for a
catalog CPU, the stated peak where 2NC is documented to miss, user overrides of clock and cores.

tests/sizer/formulas/test_throughput.py holds the seed 004 worked example (Tesla P40), the
derating bounds and the GHz/MHz law; this file covers what it does not.
"""
import csv
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.choices import Precision
from sizer.errors import InputError
from sizer.formulas.peaks import (
    FLOP_PER_FMA,
    Derating,
    cpu_peak_flops,
    derived_fp32_peak,
    device_peak,
    estimate_peak,
    gpu_peak_flops,
    stated_peak,
    supported_precisions,
    sustained_flops,
)
from sizer.hardware.precision import PRECISION_BYTES
from sizer.units import Quantity

SHARED = next(p for p in (Path(__file__).resolve().parents[4] / "shared" / "data", Path("/work/shared/data")) if p.is_dir())


def _gpu_sheet(model: str) -> dict:
    with open(SHARED / "gpu-specs.csv", newline="", encoding="utf-8") as handle:
        return next(row for row in csv.DictReader(handle) if row["model"] == model)


@pytest.mark.parametrize("catalog_name, sheet_model", [
    ("V100 SXM2 16GB", "NVIDIA Tesla V100 SXM2 16GB"),
    ("A100 80GB SXM", "NVIDIA A100 80GB SXM4"),
])
def test_2nc_of_a_catalog_gpu_matches_its_datasheet_fp32(catalog, catalog_name, sheet_model):
    # ../shared/data/gpu-specs.csv: cuda_cores x boost_clock_mhz x 2 against NVIDIA's fp32_tflops
    # (V100 SXM2 5120 x 1530 MHz -> 15.67 vs 15.7; A100 6912 x 1410 MHz -> 19.49 vs 19.5).
    # rtol 0.5 %: the datasheet rounds to three significant figures.
    sheet = _gpu_sheet(sheet_model)
    by_hand = 2 * int(sheet["cuda_cores"]) * float(sheet["boost_clock_mhz"]) * 1e6
    peak, basis = device_peak(catalog.find(catalog_name), Precision.FP32)
    assert peak.to("FLOP/s").magnitude == pytest.approx(by_hand, rel=1e-12)
    assert peak.to("TFLOPS").magnitude == pytest.approx(float(sheet["fp32_tflops"]), rel=5e-3)
    assert "2NC" in basis


def test_stated_peak_wins_where_the_catalog_documents_why_2nc_misses(catalog):
    # H100 SXM5: 2NC at NVIDIA's 1830 MHz compute clock = 61.8 TFLOPS, but the datasheet FP32 is 67
    # (gpu-specs.csv; it corresponds to 1980 MHz). The entry documents the discrepancy, so the stated
    # figure is used; rtol 1 % for the datasheet's two significant figures.
    h100 = catalog.find("H100 SXM")
    assert h100.fp32_peak_discrepancy
    peak, basis = device_peak(h100, Precision.FP32)
    assert peak.to("TFLOPS").magnitude == pytest.approx(float(_gpu_sheet("NVIDIA H100 SXM5 80GB")["fp32_tflops"]), rel=0.01)
    assert "catalog" in basis
    # ... while 2NC itself is still what the formula gives from the entry
    assert derived_fp32_peak(h100).to("TFLOPS").magnitude == pytest.approx(2 * 16896 * 1.83e9 / 1e12, rel=1e-9)


def test_catalog_cpu_peak_is_cores_clock_and_vector_units(catalog):
    # ../shared/data/cpu-specs.csv, Xeon Silver 4114: 10 cores, 3.0 GHz boost, 32 FP32 FLOP/cycle/core
    # (1 AVX-512 FMA unit x 16 lanes x 2) -> 960 GFLOP/s; exact arithmetic, so a tight rtol.
    peak, basis = device_peak(catalog.find("Xeon Silver 4114"), Precision.FP32)
    assert peak.to("GFLOPS").magnitude == pytest.approx(10 * 3.0 * 32, rel=1e-12)
    assert "SIMD" in basis


def _unseen_copy(device, why: str):
    """The entry with its notes changed: content (so a content key) that no cache has seen yet."""
    return type(device).model_validate({**device.model_dump(), "notes": f"a copy for {why}"})


def test_clock_override_replaces_the_catalog_boost_clock(catalog):
    # Tesla P40 at its 1303 MHz base clock (gpu-specs.csv notes): 2 x 3840 x 1.303e9 = 1.0007e13 FLOP/s
    p40 = _unseen_copy(catalog.find("Tesla P40"), "the clock override")
    result = estimate_peak(p40, clock="1303 MHz")
    assert result.peak.value == pytest.approx(2 * 3840 * 1.303e9, rel=1e-12)
    # the stated FP32 figure is reported beside it, unchanged by the override (11.76 TFLOPS, gpu-specs.csv)
    assert result.stated_fp32_peak is not None
    assert result.stated_fp32_peak.value == pytest.approx(11.76e12, rel=5e-3)


def test_cores_override_of_a_cpu_changes_its_core_count(catalog):
    # Xeon Silver 4114 (10 cores, 960 GFLOP/s, cpu-specs.csv) given 20 cores: the vector formula doubles
    xeon = _unseen_copy(catalog.find("Xeon Silver 4114"), "the cores override")
    assert estimate_peak(xeon, cores=20).peak.value == pytest.approx(2 * 960e9, rel=1e-12)


def test_overrides_hold_after_the_entry_has_been_seen_once(catalog):
    p40 = _unseen_copy(catalog.find("Tesla P40"), "the override-after-use bug")
    try:
        # 2NC at the boost clock, then at the 1303 MHz base clock (gpu-specs.csv): exact arithmetic
        assert estimate_peak(p40).peak.value == pytest.approx(2 * 3840 * 1.531e9, rel=1e-12)
        assert estimate_peak(p40, clock="1303 MHz").peak.value == pytest.approx(2 * 3840 * 1.303e9, rel=1e-12)
    finally:
        derived_fp32_peak.cache_clear()


@pytest.mark.parametrize("cores", [0, 0.5, 1e-20, -4])
def test_fewer_than_one_whole_core_is_refused_naming_cores(cores):
    with pytest.raises(InputError, match="cores"):
        estimate_peak(cores=cores, clock="1 GHz")


def test_a_tensor_precision_needs_a_device():
    # only FP32 follows from cores and clock (seed 004 eq. 1 counts CUDA cores)
    with pytest.raises(InputError, match="precision"):
        estimate_peak(cores=3840, clock="1.531 GHz", precision=Precision.BF16)


def test_a_precision_outside_the_vocabulary_names_the_field(catalog):
    from pydantic import ValidationError

    from sizer.facade import PeakRequest

    with pytest.raises(ValidationError, match="precision"):  # refused where the request is built
        PeakRequest(device="A100 80GB SXM", precision="fp12")
    with pytest.raises(InputError, match="precision: got 'mixed'"):  # resolved per device, no peak of its own
        device_peak(catalog.find("A100 80GB SXM"), Precision.MIXED)


def test_supported_precisions_follow_the_vocabulary_order_and_match_stated_peaks(catalog):
    h100 = catalog.find("H100 SXM")
    supported = supported_precisions(h100)
    order = list(PRECISION_BYTES)
    assert supported == sorted(supported, key=order.index)
    for precision in supported:
        if precision != "fp32":
            assert stated_peak(h100, precision) is not None
    # H100 SXM5 has FP8 tensor cores (gpu-specs.csv: 1979 TFLOPS dense FP8); A100 has none (unsupported: fp8)
    assert "fp8" in supported and "fp8" not in supported_precisions(catalog.find("A100 80GB SXM"))


def test_single_derating_gives_one_sustained_value():
    sustained = sustained_flops(Quantity(100, "TFLOPS"), Derating.single(0.3))
    assert sustained.low == sustained.expected == sustained.high
    assert sustained.expected.to("TFLOPS").magnitude == pytest.approx(70)


def test_a_derating_of_one_or_more_is_refused_naming_the_field():
    # a derating of 1 would leave no throughput at all: a quiet zero
    with pytest.raises(InputError, match="derating"):
        Derating(0.1, 0.5, 1.0)


@given(st.integers(1, 100_000), st.integers(1, 100_000), st.floats(0.1, 5.0))
def test_more_cores_never_give_a_lower_peak(a, b, ghz):
    low, high = sorted((a, b))
    clock = Quantity(ghz, "GHz")
    assert gpu_peak_flops(low, clock) <= gpu_peak_flops(high, clock)


@given(st.integers(1, 256), st.floats(0.1, 6.0), st.sampled_from([4, 8, 16]), st.integers(1, 2))
def test_cpu_formula_is_the_gpu_formula_times_lanes_and_units(cores, ghz, lanes, units):
    # with one lane and one FMA unit per core the CPU formula is 2NC: the two agree by construction
    clock = Quantity(ghz, "GHz")
    cpu = cpu_peak_flops(cores, clock, lanes, units).to("FLOP/s").magnitude
    gpu = gpu_peak_flops(cores, clock).to("FLOP/s").magnitude
    assert cpu == pytest.approx(gpu * lanes * units, rel=1e-12)
    assert FLOP_PER_FMA == 2


def test_amx_cpu_bf16_peak_is_cores_clock_and_tile_work(catalog):
    # Xeon Platinum 8480+: 56 cores (cpu-specs.csv); the catalog has no all-core clock for it, so the
    # tiles run at its 2.0 GHz base clock (heavy AMX work runs under a lower frequency licence than the
    # 3.8 GHz boost); 1024 BF16 FLOP/cycle/core on AMX (Intel optimization manual, recalled: the catalog
    # marks it unverified). Exact arithmetic, so a tight rtol.
    xeon = catalog.find("Xeon Platinum 8480+")
    peak, basis = device_peak(xeon, Precision.BF16)
    assert peak.to("FLOP/s").magnitude == pytest.approx(56 * 2.0e9 * 1024, rel=1e-12)
    assert "AMX" in basis and "2 GHz" in basis and "unverified" in basis
    assert xeon.matrix_tiles.verified is False
    # FP32 stays on the AVX-512 units: 56 x 3.8 GHz x 2 FMA units x 16 lanes x 2
    assert device_peak(xeon, Precision.FP32)[0].to("FLOP/s").magnitude == pytest.approx(56 * 3.8e9 * 64, rel=1e-12)
    assert "bf16" in supported_precisions(xeon)


def test_amx_peak_uses_the_all_core_clock_where_the_catalog_has_one(catalog):
    # Xeon 6 6980P: 128 cores, all-core turbo 3.2 GHz (hardwareluxx 6900P review, cpu-specs.csv)
    peak, basis = device_peak(catalog.find("Xeon 6 6980P"), Precision.BF16)
    assert peak.to("FLOP/s").magnitude == pytest.approx(128 * 3.2e9 * 1024, rel=1e-12)
    assert "3.2 GHz" in basis


def test_amx_int8_peak_is_twice_bf16(catalog):
    # 2048 INT8 OPS vs 1024 BF16 FLOP per cycle per core (Intel optimization manual, recalled)
    from sizer.formulas.peaks import int8_matrix_peak
    xeon = catalog.find("Xeon Platinum 8480+")
    assert int8_matrix_peak(xeon) / device_peak(xeon, Precision.BF16)[0] == pytest.approx(2.0, rel=1e-12)


def test_avx512_only_cpu_has_no_tile_peak(catalog):
    # EPYC 9654 (Zen 4): AVX-512 on 256-bit pipes, no AMX: FP32 only, unchanged
    # (96 cores x 3.55 GHz all-core x 2 FMA pipes x 8 lanes x 2, cpu-specs.csv / catalog)
    epyc = catalog.find("EPYC 9654")
    assert epyc.matrix_tiles is None
    assert supported_precisions(epyc) == ["fp32"]
    assert device_peak(epyc, Precision.FP32)[0].to("FLOP/s").magnitude == pytest.approx(96 * 3.55e9 * 32, rel=1e-12)
    with pytest.raises(InputError, match="precision"):
        device_peak(epyc, Precision.BF16)


def test_tiles_belong_to_cpus_only(catalog):
    h100 = catalog.find("H100 SXM")
    tiles = catalog.find("Xeon Platinum 8480+").matrix_tiles.model_dump()
    with pytest.raises(ValueError, match="matrix_tiles"):
        type(h100).model_validate({**h100.model_dump(), "matrix_tiles": tiles})
