"""The software-stack factors of sizer/engine/constants.py are the ones benchmarks/vendor_efficiency.py fits on
the vendors' own MLPerf Training results, and a thin fit is not applied."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sizer.engine.constants import SOFTWARE_STACK_FACTORS, STACK_FIT_MIN_ROWS, device_efficiencies, stack_factor
from sizer.engine.stacks import stack_fit
from sizer.hardware.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import vendor_efficiency  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    if not vendor_efficiency.DATA.exists():
        pytest.skip(f"{vendor_efficiency.DATA} is not beside this checkout")
    return vendor_efficiency.fit(vendor_efficiency.rows())


def test_the_constants_are_the_fit(fitted):
    for vendor, (factor, rows, _) in SOFTWARE_STACK_FACTORS.items():
        assert fitted[vendor]["fit_rows"] == rows
        assert fitted[vendor]["factor"] == pytest.approx(factor, abs=0.001)  # the constants keep 3 decimals


def test_held_out_rows_exist_for_every_applied_stack(fitted):
    # scored, not fitted: AMD MI325X, Google v5e and Trillium (benchmarks/ACCURACY.md gives the errors)
    for vendor, (_, rows, _) in SOFTWARE_STACK_FACTORS.items():
        if rows >= STACK_FIT_MIN_ROWS:
            assert fitted[vendor]["held_out_rows"] >= 4


def test_mi300x_trains_below_h100s_share_of_peak_and_gaudi_is_unverified():
    catalog = load_catalog()
    h100, mi300x, gaudi = (device_efficiencies(catalog.find(n), True) for n in ("H100 SXM", "MI300X", "Gaudi 2"))
    assert mi300x.matrix < h100.matrix
    assert gaudi.matrix == h100.matrix  # one fit row: not applied
    factor, source, verified = stack_factor(catalog.find("Gaudi 2"))
    assert factor == 1.0 and not verified and "unverified" in source
    # profiled workloads (CNNs) take the kernel library's one-device factor (sizer/engine/stacks.py), not MLPerf's
    miopen, _ = stack_fit().factor("miopen")
    assert device_efficiencies(catalog.find("MI300X"), False).matrix == \
        pytest.approx(device_efficiencies(catalog.find("H100 SXM")).matrix * miopen)
