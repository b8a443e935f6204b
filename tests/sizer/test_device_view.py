"""sizer/device_view.py: a catalog device shown with every figure's unit and source.

Reference figures: ../shared/data/gpu-specs.csv (NVIDIA A100 80GB SXM4 row) and cpu-specs.csv
(Intel Xeon Silver 4114 row); the catalog cites the same sources.
"""
import pytest

from sizer.device_view import DISPLAY_UNITS, describe_device, summarize_device


@pytest.fixture(scope="module")
def a100(catalog):
    return catalog.find("A100 80GB SXM")


def test_a100_figures_in_display_units(a100):
    # gpu-specs.csv: 6912 CUDA cores, 1410 MHz boost, 80 GB, 2039 GB/s, 400 W, 312 TFLOPS dense BF16
    view = describe_device(a100)
    shown = {name: (getattr(view, name).value, getattr(view, name).unit)
             for name in ("memory", "memory_bandwidth", "boost_clock", "tdp", "fp32_cores")}
    shown["bf16"] = (view.peaks["bf16"].value, view.peaks["bf16"].unit)
    sheet = {"memory": (80, "GB"), "memory_bandwidth": (2039, "GB/s"), "boost_clock": (1410, "MHz"), "tdp": (400, "W"),
             "fp32_cores": (6912, ""), "bf16": (312, "TFLOPS")}
    for name, (value, unit) in sheet.items():
        # rtol 1e-12: unit conversion in floating point, the figures themselves are the datasheet's
        assert shown[name] == (pytest.approx(value, rel=1e-12), unit), name
    # every figure keeps its source text
    assert view.memory.source == a100.memory.source


def test_the_derived_peak_is_2nc_beside_the_stated_one(a100):
    # seed 004 eq. 1: 2 x 6912 x 1.41 GHz = 19.49 TFLOPS against the datasheet's 19.5 (gpu-specs.csv);
    # exact arithmetic for the derived value, the datasheet's three figures for the stated one
    view = describe_device(a100)
    assert view.derived_fp32_peak.value == pytest.approx(2 * 6912 * 1.41e9 / 1e12, rel=1e-12)
    assert view.fp32_peak.value == pytest.approx(19.5)
    assert "2NC" in view.derived_fp32_peak.source
    assert view.derived_fp32_peak.verified == (a100.fp32_cores.verified and a100.boost_clock.verified)


def test_a_cpu_shows_its_vector_units(catalog):
    # cpu-specs.csv, Xeon Silver 4114: AVX-512, 1 FMA unit, 16 FP32 lanes, 10 cores at 3.0 GHz
    view = describe_device(catalog.find("Xeon Silver 4114"))
    assert view.vector.endswith("1 FMA unit(s) x 16 FP32 lanes") and "AVX-512" in view.vector
    assert view.cores.value == 10 and view.boost_clock.value == 3000
    assert view.derived_fp32_peak.value == pytest.approx(10 * 3.0 * 32 / 1000, rel=1e-12)  # 0.96 TFLOPS
    assert view.fp32_peak is None  # no stated figure: only the formula's


def test_unverified_lists_exactly_the_unverified_figures(catalog):
    for name in ("A100 80GB SXM", "Xeon Silver 4114", "H100 SXM", "B200"):
        device = catalog.find(name)
        view = describe_device(device)
        expected = {path for path, s in device.sourced_fields().items() if not s.verified}
        if device.vector is not None and not device.vector.verified:
            expected.add("vector")
        assert set(view.unverified) == expected, name
        for path, shown in (("memory", view.memory), ("tdp", view.tdp)):
            if shown is not None:
                assert shown.verified == (path not in expected)


def test_the_cloud_price_shown_is_the_cheapest_listed(a100):
    view = describe_device(a100)
    assert view.cloud_price is not None and view.cloud_price.unit == "USD/hour"
    whole = [p.value for p in view.cloud_prices]
    assert min(whole) <= view.cloud_price.value <= max(whole)
    assert len(view.cloud_prices) == len(a100.cloud_prices)


def test_the_summary_is_the_detail_without_the_detail(a100):
    summary, detail = summarize_device(a100), describe_device(a100)
    for field in type(summary).model_fields:
        assert getattr(summary, field) == getattr(detail, field), field
    assert summary.precisions == ["fp32", "tf32", "fp16", "bf16"]  # A100 has no FP8 (gpu-specs.csv: unsupported fp8)
    assert summary.sources == sorted(set(summary.sources))


def test_display_units_cover_every_dimensioned_figure_but_counts():
    from sizer.hardware.schema import FIELD_DIMENSIONS

    dimensioned = {field for field, (dimension, _) in FIELD_DIMENSIONS.items() if dimension and field != "int8_peak"}
    assert dimensioned == set(DISPLAY_UNITS)
