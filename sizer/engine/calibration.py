"""Calibration from the user's own measured runs (spec §3.11).

A validation report (``sizer validate``) holds, for each run, the device, the workload's
per-layer profile, its batch size and the measured step time. Per device, two numbers are
fitted: one factor by which the kernels run slower than the default efficiencies predict, and
the fixed per-step overhead. They are written to a calibration file; ``--calibration FILE`` on
``time`` and ``recommend`` uses them for that device, and the answer says so.

>>> fit_scale_and_overhead([1.0, 2.0, 4.0], [1.5, 2.5, 4.5])
(1.0, 0.5)
"""
from __future__ import annotations

import datetime
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sizer.choices import Optimizer, Precision, parse_choice
from sizer.datafile import load_yaml, write_text
from sizer.engine.constants import Efficiencies, device_efficiencies
from sizer.errors import InputError
from sizer.hardware.precision import check_precision
from sizer.hardware.schema import Device
from sizer.schemas.calibration_file import Calibration, DeviceCalibration
from sizer.workloads.profile import Profile


@dataclass(frozen=True)
class CalibrationRun:
    """One measured run: what ran where, and how long a step took."""

    run_id: str
    device: Device
    profile: Profile
    batch_size: float
    precision: Precision
    optimizer: Optimizer
    measured_step: float  # seconds


def fit_scale_and_overhead(kernel_seconds: list[float], measured_seconds: list[float]) -> tuple[float, float]:
    r"""Fit one efficiency scale and one per-step overhead to measured step times.

    Least squares on relative errors, which is linear in (overhead, scale); the overhead is held
    at zero when the free fit makes it negative.

    .. math::

        t_{measured} \approx t_0 + s \, t_{kernel}, \qquad
        \min_{t_0, s} \sum_j \left( \frac{t_0 + s \, t_{kernel,j}}{t_{measured,j}} - 1 \right)^2

    Parameters
    ----------
    kernel_seconds : list of float
        Predicted kernel time of each run at the default efficiencies, without overhead [s].
    measured_seconds : list of float
        Measured step time of each run [s].

    Returns
    -------
    scale : float
        How many times the default-efficiency kernel time the kernels take, s [1].
    overhead : float
        Per-step overhead t_0 [s].

    Raises
    ------
    InputError
        Times that are not finite and positive, or measurements that do not grow with the work.

    References
    ----------
    [spec-3.11], [seed-001]
    """
    if not all(math.isfinite(k) and k > 0 for k in kernel_seconds):
        raise InputError("report", kernel_seconds, "runs whose profile does some work per step (predicted kernel "
                         "times finite and above zero)")
    if not all(math.isfinite(m) and m > 0 for m in measured_seconds):
        raise InputError("report", measured_seconds, "measured step times that are finite and above zero")
    weights = [1 / m ** 2 for m in measured_seconds]
    sw = sum(weights)
    sk = sum(w * k for w, k in zip(weights, kernel_seconds, strict=True))
    skk = sum(w * k * k for w, k in zip(weights, kernel_seconds, strict=True))
    sm = sum(w * m for w, m in zip(weights, measured_seconds, strict=True))
    skm = sum(w * k * m for w, k, m in zip(weights, kernel_seconds, measured_seconds, strict=True))
    determinant = sw * skk - sk * sk
    if len(kernel_seconds) >= 2 and determinant > 1e-12 * sw * skk:
        scale = (sw * skm - sk * sm) / determinant
        overhead = (sm - scale * sk) / sw
        if overhead >= 0 and scale > 0:
            return round(scale, 6), round(overhead, 9)
    scale = skm / skk  # overhead fixed at zero
    if not (math.isfinite(scale) and scale > 0):
        raise InputError("report", measured_seconds, "measured step times that grow with the work per step")
    return round(scale, 6), 0.0


def _kernel_seconds(run: CalibrationRun, base: Efficiencies) -> float:
    from sizer.engine.modes import profile_step_seconds  # here, not at the top: modes imports this module

    without_overhead = Efficiencies(**{**base.__dict__, "step_overhead": 0.0})
    return profile_step_seconds(run.profile, run.device, run.precision, run.batch_size, run.optimizer, without_overhead)


def calibrate_runs(runs: list[CalibrationRun], source: str = "measured runs") -> Calibration:
    """Fit one efficiency scale and one per-step overhead per device over its measured runs.

    Parameters
    ----------
    runs : list of CalibrationRun
        Measured runs (device, profile, batch, precision, optimizer, step time [s]).
    source : str, default ``"measured runs"``
        Where the runs come from, recorded in the calibration.

    Returns
    -------
    Calibration
        One entry per device: scale [1], overhead [s], run count and the median absolute
        relative error of the fitted runs [1].

    Raises
    ------
    InputError
        No runs, or runs that admit no fit (see :func:`fit_scale_and_overhead`).

    References
    ----------
    [spec-3.11]
    """
    if not runs:
        raise InputError("report", source, "at least one run with a workload profile to calibrate on")
    by_device: dict[str, list[CalibrationRun]] = {}
    for run in runs:
        by_device.setdefault(run.device.id, []).append(run)
    devices = []
    for device_runs in by_device.values():
        device = device_runs[0].device
        base = device_efficiencies(device)
        kernels = [_kernel_seconds(run, base) for run in device_runs]
        measured = [run.measured_step for run in device_runs]
        scale, overhead = fit_scale_and_overhead(kernels, measured)
        errors = [abs((overhead + scale * k) / m - 1) for k, m in zip(kernels, measured, strict=True)]
        devices.append(DeviceCalibration(device_id=device.id, device_name=device.name, efficiency_scale=scale,
                                         step_overhead_s=overhead, runs=len(device_runs),
                                         median_abs_error=statistics.median(errors)))
    return Calibration(created=datetime.date.today().isoformat(), source=source, devices=devices)


def predict_run(run: CalibrationRun, calibration: Calibration) -> float:
    """Expected step time of a run with the calibration of its device.

    Parameters
    ----------
    run : CalibrationRun
        The run to predict.
    calibration : Calibration
        Fitted devices; a device without an entry uses the default efficiencies.

    Returns
    -------
    float
        Expected seconds per step [s].

    References
    ----------
    [spec-3.11]
    """
    from sizer.engine.modes import calibrated_efficiencies, profile_step_seconds

    entry = calibration.for_device(run.device)
    efficiency = calibrated_efficiencies(run.device, entry) if entry else device_efficiencies(run.device)
    return profile_step_seconds(run.profile, run.device, run.precision, run.batch_size, run.optimizer, efficiency)


MAX_OTHER_CPU_PERCENT = 10.0  # a run measured beside other busy processes says little about the device
# A measured training step outside these bounds is a unit mistake or a broken report, not a measurement:
# below a microsecond no kernel launch completes, above a day no validation run waits for one step.
STEP_SECONDS = (1e-6, 86_400.0)
MAX_BATCH_SIZE = 10_000_000


def runs_from_report(report: dict[str, Any], source: str = "report.json") -> list[CalibrationRun]:
    """The runs of a validation report that calibration can use.

    Single-device runs that carry a workload profile and were measured without other processes
    competing for the CPU (at most ``MAX_OTHER_CPU_PERCENT``).

    Parameters
    ----------
    report : dict
        A report as ``sizer validate`` writes it (JSON).
    source : str, default ``"report.json"``
        The report's name, for error messages.

    Returns
    -------
    list of CalibrationRun
        The usable runs, measured step times in [s].

    Raises
    ------
    InputError
        A report of another shape, or a field out of bounds; the message names it.

    References
    ----------
    [spec-7], [spec-3.11]
    """
    try:
        device = Device.model_validate(report["device"]["model"])
        out = []
        for run in report["runs"]:
            if not run.get("profile"):
                continue
            profile = Profile.model_validate(run["profile"])
            count = int(run["config"].get("processes", 1))
            if count != 1:
                continue  # data-parallel runs measure the all-reduce too; calibrate on single devices
            contention = run["measured"].get("loads", {}).get("other_processes_cpu_percent", {}).get("mean", 0.0)
            if contention > MAX_OTHER_CPU_PERCENT:
                continue
            run_id = str(run["id"])
            batch_size = _number_in(run["config"]["batch_size"], f"runs[{run_id}].config.batch_size", 1, MAX_BATCH_SIZE,
                                    "a batch size from 1 to 10,000,000 samples")
            measured = _number_in(run["measured"]["step_time"]["value"], f"runs[{run_id}].measured.step_time.value",
                                  *STEP_SECONDS, "a measured step time from 1 µs to 1 day, in seconds")
            precision = check_precision(run["config"].get("precision", "fp32"), f"runs[{run_id}].config.precision")
            out.append(CalibrationRun(run_id=run_id, device=device, profile=profile, batch_size=batch_size,
                                      precision=precision, optimizer=_core_optimizer(run["config"].get("optimizer", "adam")),
                                      measured_step=measured))
        return out
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, ValidationError) as error:
        raise InputError("report", source,
                         f"a validation report written by sizer validate ({_describe(error)})") from None


def _number_in(value: object, field: str, low: float, high: float, expected: str) -> float:
    """A JSON number between ``low`` and ``high``; booleans and text are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, value, expected)
    number = float(value)
    if not (math.isfinite(number) and low <= number <= high):
        raise InputError(field, value, expected)
    return number


def _describe(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        return f"field {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    if isinstance(error, KeyError):
        return f"missing field {error}"
    return " ".join(str(error).split())[:160]


def _core_optimizer(name: str) -> Optimizer:
    """A report's optimizer where the core models it, else Adam (the validation suite's others are Adam-like)."""
    try:
        return parse_choice(Optimizer, name, "optimizer")
    except InputError:
        return Optimizer.ADAM


MAX_CALIBRATION_BYTES = 1_000_000  # a calibration holds a few lines per device


def load_calibration(path: str | Path) -> Calibration:
    """Read and validate a calibration file written by ``sizer calibrate``.

    Parameters
    ----------
    path : str or Path
        The YAML file.

    Returns
    -------
    Calibration
        The validated calibration.

    Raises
    ------
    InputError
        A missing file, one over ``MAX_CALIBRATION_BYTES``, or content that does not validate.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("calibration", str(path), "an existing calibration file (sizer calibrate ... --out FILE)")
    try:
        return Calibration.model_validate(load_yaml(path, "calibration", MAX_CALIBRATION_BYTES))
    except ValidationError as error:
        # the field and what it expected, on one line: pydantic's own text quotes the whole input it refused
        raise InputError("calibration", str(path), f"a calibration file written by sizer calibrate ({_describe(error)})") from None


def save_calibration(calibration: Calibration, path: str | Path) -> None:
    """Write a calibration file atomically, with a header saying what wrote it.

    Parameters
    ----------
    calibration : Calibration
        The calibration to write.
    path : str or Path
        The YAML file.
    """
    import yaml  # here: PyYAML's import is ~20 ms of every command that reads the engine (benchmarks/startup.py)

    header = "# Written by sizer calibrate: per-device efficiency scale and per-step overhead.\n"
    write_text(path, header + yaml.safe_dump(calibration.model_dump(), sort_keys=False))
