"""Where a prediction's efficiencies come from: datasheet defaults, a calibration, or a reference run.

Three modes, each with its own range (spec §3.11):

- ``datasheet``: the device's catalog figures and the default efficiencies;
- ``calibrated``: efficiencies and per-step overhead fitted to the user's own runs
  (``sizer calibrate``, :mod:`sizer.engine.calibration`);
- ``reference``: one measured throughput on one device sets how well this workload uses
  hardware, and that carries over to the target device (Habitat's idea, ATC'21).

>>> parse_reference_throughput("833/s"), parse_reference_throughput("1,200 images/s")
(833.0, 1200.0)
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sizer.choices import Mode, Optimizer, Precision
from sizer.engine.constants import Efficiencies, device_efficiencies
from sizer.engine.devices import build_device_table
from sizer.engine.evaluate import evaluate
from sizer.engine.job import Job, job_from_profile
from sizer.errors import InputError
from sizer.hardware.schema import Device
from sizer.results import Assumption, unit_factor
from sizer.units import Quantity
from sizer.workloads.profile import Profile

if TYPE_CHECKING:  # the catalog is only looked up here
    pass


class CalibrationEntry(Protocol):
    """What a calibration entry gives this module (:class:`sizer.schemas.calibration_file.DeviceCalibration`
    has it): described here, not imported, since calibration.py imports this module."""

    @property
    def device_name(self) -> str:
        """The device the entry was fitted on."""

    @property
    def efficiency_scale(self) -> float:
        """Kernels take this many times the default-efficiency time [1]."""

    @property
    def step_overhead_s(self) -> float:
        """Fitted overhead per step [s]."""

    @property
    def runs(self) -> int:
        """Runs the entry was fitted on [1]."""


class CalibrationFile(Protocol):
    """What a calibration gives this module (:class:`sizer.schemas.calibration_file.Calibration` has it): described
    here, not imported, since calibration.py imports this module."""

    @property
    def created(self) -> str:
        """When it was fitted."""

    @property
    def source(self) -> str:
        """What it was fitted on."""

    @property
    def devices(self) -> Sequence[CalibrationEntry]:
        """One entry per fitted device."""

    def for_device(self, device: Device) -> CalibrationEntry | None:
        """The entry of a device.

        Parameters
        ----------
        device : Device
            A catalog device.

        Returns
        -------
        CalibrationEntry or None
            Its fit; None where the calibration has none for it.
        """


# How much of a reference run's deviation from the datasheet model carries over to another
# device. Part of that deviation belongs to the workload (it carries over), part to the
# reference device itself (it does not); with the two about equal, the best linear combination
# weighs them by half. Out of sample (defaults fitted on ResNet rows, BERT predicted, and the
# reverse; benchmarks/accuracy.py) 0.5 beat carrying all of it over: median 14-16 % against
# 16 %, p90 33-39 % against 44-45 %.
REFERENCE_WEIGHT = 0.5

_THROUGHPUT_RE = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,3})?)\s*(?:[a-z]+)?\s*(?:/|per)\s*"
                            r"(s|sec|second|min|minute|h|hour)\s*$", re.IGNORECASE)


def job_step_seconds(job: Job, device: Device, efficiency: Efficiencies | None = None, count: int = 1) -> float:
    """Expected seconds per step of a job, each device running its whole share at once (as a measured run did).

    Parameters
    ----------
    job : Job
        The workload.
    device : Device
        A catalog device.
    efficiency : Efficiencies, optional
        Overrides the defaults of the device's kind.
    count : int, default 1
        Data-parallel devices [1].

    Returns
    -------
    float
        Seconds per step [s].

    Raises
    ------
    InputError
        A precision the device has no peak for.

    References
    ----------
    [spec-3.3]
    """
    table = build_device_table((device,), job.precision, (efficiency,))
    if not table.supported[0]:
        raise InputError("precision", job.precision.value, f"a precision {device.name} supports")
    ev = evaluate(job, table, np.zeros(1, dtype=np.int64), np.asarray([count]), np.zeros(1, dtype=np.int64))
    return float(ev.parts.step[0])


def profile_step_seconds(profile: Profile, device: Device, precision: Precision, batch_size: float, optimizer: Optimizer,
                         efficiency: Efficiencies | None = None, count: int = 1) -> float:
    """:func:`job_step_seconds` for a profiled run of ``batch_size`` samples over ``count`` devices.

    Parameters
    ----------
    profile : Profile
        Per-layer profile of the workload.
    device : Device
        A catalog device.
    precision : Precision
        Training precision.
    batch_size : float
        Samples per step, all devices [sample].
    optimizer : Optimizer
        The optimizer.
    efficiency : Efficiencies, optional
        Overrides the defaults of the device's kind.
    count : int, default 1
        Data-parallel devices [1].

    Returns
    -------
    float
        Seconds per step [s].

    References
    ----------
    [spec-3.3], [spec-7]
    """
    job = job_from_profile(profile, batch_size, precision, optimizer, micro_batch=batch_size / count)
    return job_step_seconds(job, device, efficiency, count)


def parse_reference_throughput(text: str) -> float:
    """Samples per second from a measured throughput as text.

    Parameters
    ----------
    text : str
        ``'833/s'``, ``'833 images/s'``, ``'50000 per hour'`` (at most 64 characters).

    Returns
    -------
    float
        Throughput [sample/s].

    Raises
    ------
    InputError
        Text of another form, or a throughput that is not positive.
    """
    match = _THROUGHPUT_RE.match(text) if isinstance(text, str) and len(text) <= 64 else None
    if not match:
        raise InputError("reference", text, "DEVICE=THROUGHPUT/s, e.g. 'V100 SXM2 16GB=833/s'")
    value = float(match.group(1).replace(",", ""))
    per = Quantity(1, {"sec": "s", "min": "minute", "h": "hour"}.get(match.group(2).lower(), match.group(2).lower()))
    rate = (value / per).to("1/s").magnitude
    if not 0 < rate < 1e12:
        raise InputError("reference", text, "a positive measured throughput")
    return float(rate)


def reference_efficiencies(job: Job, device: Device, measured_throughput: float,
                           base: Efficiencies) -> tuple[Efficiencies, float]:
    r"""Efficiencies scaled so that the engine reproduces one measured throughput.

    The per-step overhead is kept; the kernel part is scaled by one factor f, found by bisection
    on the monotone step-time function:

    .. math::

        t_{step}(f) = \frac{B}{X_{measured}}

    Parameters
    ----------
    job : Job
        The workload as the reference run ran it.
    device : Device
        The reference device.
    measured_throughput : float
        Measured throughput X [sample/s].
    base : Efficiencies
        The efficiencies to scale.

    Returns
    -------
    efficiencies : Efficiencies
        The scaled efficiencies.
    factor : float
        How many times the model's time the run took, f [1].

    Raises
    ------
    InputError
        A throughput outside what any factor from 1e-3 to 1e3 explains.

    References
    ----------
    [habitat]
    """
    if not math.isfinite(measured_throughput) or measured_throughput <= 0:
        raise InputError("reference", measured_throughput, "a positive measured throughput")
    measured_step = job.batch_size / measured_throughput

    def step(factor: float) -> float:
        return job_step_seconds(job, device, base.scaled(factor, ""))

    low, high = 1e-3, 1e3
    if step(high) < measured_step or step(low) > measured_step:
        raise InputError("reference", measured_throughput,
                         f"a throughput the model can explain on {device.name} "
                         f"(between {job.batch_size / step(high):.4g} and {job.batch_size / step(low):.4g} per second)")
    for _ in range(60):
        middle = math.sqrt(low * high)
        if step(middle) < measured_step:
            low = middle
        else:
            high = middle
    factor = math.sqrt(low * high)
    return base.scaled(factor, f"scaled by {factor:.3g} to match the reference measurement"), factor


def calibrated_efficiencies(device: Device, entry: CalibrationEntry) -> Efficiencies:
    """The device kind's default efficiencies scaled by a calibration entry, with its fitted step overhead.

    Parameters
    ----------
    device : Device
        The catalog device; its kind picks the defaults.
    entry : CalibrationEntry
        The fit for this device (a :class:`~sizer.schemas.calibration_file.DeviceCalibration`):
        ``efficiency_scale`` [1] (kernels take this many times the
        default-efficiency time) and ``step_overhead_s`` [s].

    Returns
    -------
    Efficiencies
        The calibrated efficiencies, their source naming the runs.

    References
    ----------
    [spec-3.11]
    """
    base = device_efficiencies(device)
    scaled = base.scaled(entry.efficiency_scale, f"calibrated from {entry.runs} measured runs on {entry.device_name}")
    return Efficiencies(**{**scaled.__dict__, "step_overhead": entry.step_overhead_s})


def carried_over(target_base: Efficiencies, factor: float, source: str) -> Efficiencies:
    r"""The target's efficiencies moved by the part of a reference factor that carries over.

    .. math::

        \eta_{target} = \eta_{default} / f^{w}, \qquad w = 0.5

    Parameters
    ----------
    target_base : Efficiencies
        Default efficiencies of the target device.
    factor : float
        Reference factor f [1] from :func:`reference_efficiencies`.
    source : str
        What to say the efficiencies come from.

    Returns
    -------
    Efficiencies
        The target's scaled efficiencies.

    References
    ----------
    [habitat]
    """
    return target_base.scaled(factor ** REFERENCE_WEIGHT, source)


def choose_efficiencies(job: Job, device: Device, *, reference: tuple[Device, str] | None = None,
                        reference_batch_size: float | None = None,
                        calibration: CalibrationFile | None = None) -> tuple[Efficiencies, Mode, list[Assumption]]:
    """The efficiencies for a device, the mode they come from, and what to tell the user.

    A reference measurement first (its factor carried over), else the device's calibration,
    else the datasheet defaults.

    Parameters
    ----------
    job : Job
        The workload.
    device : Device
        The target device.
    reference : tuple of (Device, str), optional
        A reference measurement: its device (found in the catalog, :func:`sizer.asked.on_catalog`) and the text
        ``'DEVICE=THROUGHPUT/s'`` it came from.
    reference_batch_size : float, optional
        Batch of the reference run [sample] (the job's by default).
    calibration : Calibration, optional
        Fitted devices.

    Returns
    -------
    efficiencies : Efficiencies
        The efficiencies to predict with.
    mode : Mode
        ``datasheet``, ``calibrated`` or ``reference``.
    assumptions : list of Assumption
        What the answer must say about them.

    References
    ----------
    [habitat], [spec-3.11]
    """
    if reference is not None:
        reference_device, text = reference
        throughput = parse_reference_throughput(text.rpartition("=")[2])
        batch = reference_batch_size or job.batch_size
        reference_job = job_from_profile_like(job, batch)
        _, factor = reference_efficiencies(reference_job, reference_device, throughput,
                                           device_efficiencies(reference_device))
        efficiency = carried_over(device_efficiencies(device, job.arch is not None), factor,
                                  f"default efficiencies scaled by {factor:.3g}^{REFERENCE_WEIGHT:g}: {throughput:.4g}/s measured "
                                  f"on {reference_device.name} at batch {batch:g} ran {factor:.3g}x the model's time")
        note = Assumption(name="reference", value=f"{throughput:.4g} {job.sample_word}/s on {reference_device.name}, batch {batch:g}",
                          source="given; the workload's efficiency on it carries over to the target (cf. Habitat, ATC'21)")
        return efficiency, Mode.REFERENCE, [note]
    if calibration is not None:
        entry = calibration.for_device(device)
        if entry is not None:
            note = Assumption(name="calibration", value=f"kernels x {entry.efficiency_scale:.3g}, "
                                                        f"{entry.step_overhead_s * unit_factor('s', 'ms'):.3g} ms per step, from {entry.runs} runs",
                              source=f"calibration of {calibration.created} ({calibration.source})")
            return calibrated_efficiencies(device, entry), Mode.CALIBRATED, [note]
        note = Assumption(name="calibration", value=f"none for {device.name}; datasheet defaults used",
                          source=f"calibration of {calibration.created} covers {', '.join(d.device_name for d in calibration.devices)}")
        return device_efficiencies(device, job.arch is not None), Mode.DATASHEET, [note]
    return device_efficiencies(device, job.arch is not None), Mode.DATASHEET, []


def job_from_profile_like(job: Job, batch_size: float) -> Job:
    """The same layers at another batch, each device running its whole share (a measured reference run).

    Parameters
    ----------
    job : Job
        The workload.
    batch_size : float
        Samples per step [sample].

    Returns
    -------
    Job
        A copy with the batch and micro-batch set to ``batch_size``.
    """
    from dataclasses import replace

    return replace(job, batch_size=float(batch_size), micro_batch=float(batch_size), batch_given=True)
