"""The range of a time estimate: the low and high factors of the expected time per mode and kind of workload,
fitted on held-out rows (``error_spread.yaml``, written by benchmarks/accuracy.py)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sizer.choices import DeviceKind, Mode
from sizer.datafile import load_yaml
from sizer.diskcache import cached, file_stamp, key_of
from sizer.hardware.schema import Device
from sizer.memo import registered_cache

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.engine.job import Job

SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")


@registered_cache()
def error_spread() -> dict[str, dict[str, Any]]:
    """The spread of the time range per mode, from ``error_spread.yaml``.

    Returns
    -------
    dict
        Per mode: ``low`` and ``high`` factors of the expected time [1] and their ``source``; a
        mode's ``by_workload`` holds the same per kind of workload and device (``transformer-gpu``).

    References
    ----------
    [spec-3.3]
    """
    def parse() -> dict[str, dict[str, Any]]:
        modes: dict[str, dict[str, Any]] = load_yaml(SPREAD_FILE, "error_spread")["modes"]
        return modes

    # kept on disk (sizer.diskcache) under the file's stamp: PyYAML's import and the parse are ~25 ms of
    # `sizer recommend`, which needs only a source text from it (benchmarks/startup.py)
    try:
        key = key_of(file_stamp(SPREAD_FILE))
    except OSError:
        return parse()  # unreadable: load_yaml says why
    return cached("error-spread", key, parse)


def range_factors(mode: Mode, workload: str | None = None) -> tuple[float, float, str]:
    """The factors of the expected time that bound the range of a mode.

    Parameters
    ----------
    mode : Mode
        Where the efficiencies come from.
    workload : str, optional
        The workload kind (``transformer-gpu``); its factors where the spread file has them,
        else the mode's.

    Returns
    -------
    low : float
        Factor of the expected time at the low end [1].
    high : float
        Factor at the high end [1].
    source : str
        Where the factors come from (held-out errors).

    References
    ----------
    [spec-3.3]
    """
    spread = error_spread()[mode.value]
    entry = spread.get("by_workload", {}).get(workload, spread) if workload else spread
    return entry["low"], entry["high"], entry["source"]


def range_arrays(mode: Mode, job: Job, devices: Sequence[Device]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per device, the low and high factors of the expected time, by the job's workload kind on it.

    Parameters
    ----------
    mode : Mode
        Where the efficiencies come from.
    job : Job
        The workload.
    devices : sequence of Device
        The devices evaluated.

    Returns
    -------
    low, high : numpy.ndarray
        Factors per device [1].
    """
    by_kind = {kind: range_factors(mode, workload_kind(job, kind))[:2] for kind in {device.kind for device in devices}}
    factors = np.asarray([by_kind[device.kind] for device in devices], dtype=float).reshape(-1, 2)
    return factors[:, 0], factors[:, 1]


def workload_kind(job: Job, device_kind: DeviceKind) -> str:
    """The kind a range is looked up by.

    Parameters
    ----------
    job : Job
        The workload.
    device_kind : DeviceKind
        The device's catalog kind.

    Returns
    -------
    str
        ``transformer-<kind>`` for a generated transformer, else ``profile-<kind>`` (a profiled network: on a
        GPU, the cross-source spread of benchmarks/single_device_accuracy.py); a kind the spread file lacks
        takes the mode's range.
    """
    return f"transformer-{device_kind.value}" if job.arch is not None else f"profile-{device_kind.value}"


