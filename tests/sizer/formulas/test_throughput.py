"""sizer/formulas/peaks.py: R = 2NC, the CPU formula, derating, catalog peaks."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.choices import Precision
from sizer.errors import InputError
from sizer.formulas.peaks import (
    Derating,
    cpu_peak_flops,
    device_peak,
    estimate_peak,
    gpu_peak_flops,
    supported_precisions,
    sustained_flops,
)
from sizer.units import Quantity


def test_p40_worked_example():
    # seed 004 eq. 2: N = 3840, C = 1.531 GHz -> 1.176e13 FLOP/s (NVIDIA states ~12 TFLOPS); rtol from the 4 digits printed
    assert gpu_peak_flops(3840, Quantity(1.531, "GHz")).to("FLOP/s").magnitude == pytest.approx(1.176e13, rel=5e-4)


def test_p40_from_catalog_and_its_sustained_range(catalog):
    result = estimate_peak(catalog.find("Tesla P40"))
    assert result.peak.value == pytest.approx(1.175808e13)
    # seed 004 §3.3.1: 15-25 % below peak
    assert result.sustained.low == pytest.approx(0.75 * result.peak.value)
    assert result.sustained.high == pytest.approx(0.85 * result.peak.value)
    assert result.sustained.expected == pytest.approx(0.80 * result.peak.value)


def test_cpu_formula_xeon_8180():
    # 28 cores x 2.5 GHz x 2 (FMA) x 16 FP32 lanes (AVX-512) x 2 FMA units = 4.48 TFLOPS
    assert cpu_peak_flops(28, Quantity(2.5, "GHz"), 16, 2).to("TFLOPS").magnitude == pytest.approx(4.48)


def test_cpu_peak_from_catalog_uses_the_formula(catalog):
    peak, basis = device_peak(catalog.find("Xeon Platinum 8180"), Precision.FP32)
    assert "SIMD" in basis and peak.to("TFLOPS").magnitude > 1


def test_tensor_precision_uses_catalog_dense_peak(catalog):
    peak, basis = device_peak(catalog.find("A100 80GB SXM"), Precision.BF16)
    assert peak.to("TFLOPS").magnitude == pytest.approx(312, rel=0.01)  # NVIDIA A100 datasheet, dense
    assert "dense" in basis


def test_unsupported_precision_lists_what_is_supported(catalog):
    with pytest.raises(InputError, match="fp32"):
        device_peak(catalog.find("Tesla P40"), Precision.BF16)
    assert supported_precisions(catalog.find("Tesla P40")) == ["fp32"]


def test_cores_and_clock_without_device():
    assert estimate_peak(cores=3840, clock="1531 MHz").peak.value == pytest.approx(1.175808e13)
    with pytest.raises(InputError, match="clock"):
        estimate_peak(cores=3840, clock="5 m")
    with pytest.raises(InputError, match="device"):
        estimate_peak(cores=3840)


def test_derating_is_checked():
    with pytest.raises(InputError):
        Derating(0.3, 0.2, 0.1)
    with pytest.raises(InputError):
        Derating.single(1.5)


@given(st.integers(min_value=1, max_value=50000), st.floats(min_value=0.1, max_value=5.0))
def test_ghz_and_mhz_give_identical_peaks(cores, ghz):
    a = estimate_peak(cores=cores, clock=f"{ghz!r} GHz").peak.value
    b = estimate_peak(cores=cores, clock={"value": ghz * 1000, "unit": "MHz"}).peak.value
    assert a == pytest.approx(b, rel=1e-12)


@given(st.floats(min_value=1, max_value=1e18), st.floats(0, 0.9), st.floats(0, 0.9), st.floats(0, 0.9))
def test_sustained_never_exceeds_peak(peak, a, b, c):
    low, mid, high = sorted((a, b, c))
    sustained = sustained_flops(Quantity(peak, "FLOP/s"), Derating(low, mid, high))
    assert sustained.low <= sustained.expected <= sustained.high <= Quantity(peak, "FLOP/s")
