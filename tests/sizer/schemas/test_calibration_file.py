"""sizer/schemas/calibration_file.py: a `sizer calibrate` file as a request field."""
import pytest
from pydantic import ValidationError

from sizer.hardware.catalog import load_catalog
from sizer.schemas.calibration_file import Calibration, DeviceCalibration


def _entry(device_id: str, name: str) -> DeviceCalibration:
    return DeviceCalibration(device_id=device_id, device_name=name, efficiency_scale=1.2, step_overhead_s=0.01, runs=3,
                             median_abs_error=0.05)


def test_an_entry_is_found_by_the_device_id_or_name():
    h100 = load_catalog().find("H100 SXM")
    by_id = Calibration(created="2026-12-06", source="test", devices=[_entry(h100.id, "other")])
    by_name = Calibration(created="2026-12-06", source="test", devices=[_entry("other", h100.name)])
    neither = Calibration(created="2026-12-06", source="test", devices=[_entry("other", "other")])
    assert by_id.for_device(h100) is not None and by_name.for_device(h100) is not None
    assert neither.for_device(h100) is None


def test_a_scale_of_zero_is_refused():
    with pytest.raises(ValidationError):
        DeviceCalibration(device_id="x", device_name="x", efficiency_scale=0, step_overhead_s=0, runs=1, median_abs_error=0)
