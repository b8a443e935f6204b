"""sizer/engine/time_range.py: the low and high factors of a time estimate, read from error_spread.yaml (whose figures
benchmarks/accuracy.py writes from held-out rows), per mode and kind of workload."""
import numpy as np

from sizer.choices import DeviceKind, Mode
from sizer.engine.job import resolve_job
from sizer.engine.time_range import error_spread, range_arrays, range_factors, workload_kind
from sizer.hardware.catalog import load_catalog
from sizer.schemas.base import WorkloadRequest


def test_range_factors_bracket_the_expected_time_per_mode():
    for mode in Mode:
        low, high, source = range_factors(mode)
        assert 0 < low < 1 < high and source
    # a workload kind with its own spread takes it; an unknown kind falls back to the mode's
    spread = error_spread()["datasheet"]
    assert range_factors(Mode.DATASHEET, "transformer-gpu")[:2] == (spread["by_workload"]["transformer-gpu"]["low"],
                                                                    spread["by_workload"]["transformer-gpu"]["high"])
    assert range_factors(Mode.DATASHEET, "no-such-kind")[:2] == (spread["low"], spread["high"])


def test_a_generated_transformer_takes_its_kinds_spread_per_device():
    job = resolve_job(WorkloadRequest(params=7e9, tokens=2e10))
    assert workload_kind(job, DeviceKind.GPU) == "transformer-gpu"
    catalog = load_catalog()
    devices = [catalog.find("H100 SXM"), next(d for d in catalog if d.kind is DeviceKind.CPU)]
    lows, highs = range_arrays(Mode.DATASHEET, job, devices)
    expected = [range_factors(Mode.DATASHEET, workload_kind(job, d.kind))[:2] for d in devices]
    assert np.array_equal(np.stack([lows, highs], axis=1), np.asarray(expected))
    assert np.all(lows < 1) and np.all(highs > 1)
