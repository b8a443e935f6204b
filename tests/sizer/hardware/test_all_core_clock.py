"""A CPU's FP32 peak at the clock all its cores hold, where the catalog has it; Apple variants by GPU cores."""
import pytest

from sizer.formulas.peaks import derived_fp32_peak
from sizer.hardware.catalog import load_catalog


def test_peak_uses_the_all_core_clock():
    d = load_catalog().find("epyc-9654")
    # AMD's export (felixsteinke/cpu-spec-dataset): all-core boost 3.55 GHz, single-core 3.7; 96 cores x 32 FLOP/cycle
    assert derived_fp32_peak(d).to("TFLOPS").magnitude == pytest.approx(96 * 3.55e9 * 32 / 1e12)
    assert d.all_core_clock is not None and d.boost_clock.value == "3.7 GHz"


def test_without_an_all_core_clock_the_boost_stays():
    d = load_catalog().find("ryzen-9-7950x")
    assert d.all_core_clock is None
    assert derived_fp32_peak(d).to("TFLOPS").magnitude == pytest.approx(16 * 5.7e9 * 32 / 1e12)


@pytest.mark.parametrize("chip,cores", [("M1 Pro", (14, 16)), ("M2 Max", (30, 38)), ("M3 Max", (30, 40)),
                                        ("M3 Ultra", (60, 80)), ("M4", (8, 10)), ("M4 Pro", (16, 20)), ("M4 Max", (32, 40))])
def test_every_apple_chip_has_its_gpu_core_variants(chip, cores):
    names = [d.name for d in load_catalog().devices.values() if d.vendor == "Apple"]
    for n in cores:
        assert any(name.startswith(f"Apple {chip} (") and f"{n}-core GPU" in name for name in names), (chip, n)
