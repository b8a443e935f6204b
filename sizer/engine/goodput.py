"""Training time with interruptions: what a run's wall-clock adds to its step time at scale.

A run of ``n`` devices fails at a rate proportional to ``n`` (the failure rate per device-hour of
a published cluster study); it writes a checkpoint every ``tau`` seconds (``delta`` seconds each,
the model states over the storage's bandwidth), and after each failure it restarts (``R``
seconds, the checkpoint read included) and redoes the work since the last checkpoint. The
checkpoint interval that minimises the expected wall-clock is Young's first-order one or Daly's
higher-order one; the expected wall-clock is Daly's.

Sources: Young 1974, Daly 2006 (the interval and the wall-clock); the Llama 3 report (419
unexpected interruptions of a 16,384-H100 run in 54 days; its checkpoint storage, 2 TB/s
sustained; more than 90 % effective training time), read in ../shared/data/reliability-at-scale.csv.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sizer.results import Assumption, QuantityOut, RangeOut, time_unit, unit_factor
from sizer.units import Quantity

if TYPE_CHECKING:  # for annotations only: the engine's job and device table import nothing of this module
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.engine.devices import DeviceTable
    from sizer.engine.job import Job
    from sizer.schemas.time_and_memory import InterruptedTime

    # One run (a float; numpy's float64 for a 0-d result) or many (an array): the functions below take and give either
    FloatOrArray = float | npt.NDArray[np.float64]


_HOUR = unit_factor("hour", "s")  # asked of pint once per process (sizer.results)

# Unexpected interruptions per device-hour: Llama 3 405B, 419 in 54 days on 16,384 H100s (Meta, Llama 3 report
# §3.3.4; ../shared/data/reliability-at-scale.csv, whose notes derive the same 1.97e-5). Hardware and the
# network caused most (78 %): a rate per device, so a run's rate grows with its devices.
LLAMA3_INTERRUPTIONS = 419
LLAMA3_DEVICES = 16384
LLAMA3_DAYS = 54
FAILURES_PER_DEVICE_HOUR = LLAMA3_INTERRUPTIONS / (LLAMA3_DEVICES * LLAMA3_DAYS * 24)  # [1 / (device h)]
FAILURE_SOURCE = ("Llama 3 report §3.3.4: 419 unexpected interruptions in 54 days on 16,384 H100s "
                  "(../shared/data/reliability-at-scale.csv)")
# Checkpoint storage bandwidth per device [B/s]: Llama 3's Tectonic sustained 2 TB/s for 16,384 GPUs (§3.2, same
# file), taken as storage that grows with the cluster (each device's share)
CHECKPOINT_BANDWIDTH_PER_DEVICE = 2 * unit_factor("TB", "B") / LLAMA3_DEVICES  # TB/s to B/s: per second on both sides
CHECKPOINT_SOURCE = "Llama 3 report §3.2: Tectonic, 2 TB/s sustained for 16,384 GPUs (../shared/data/reliability-at-scale.csv)"
# Restart after a failure [s] (detection, rescheduling, initialisation; the checkpoint read is added to it):
# fitted so that the Llama 3 run's own figures give its "more than 90 %" effective training time (fit_restart with
# Llama 3.1 405B's 14 bytes of states per parameter: 918 s; tests/sizer/engine/test_goodput.py refits it); that
# share is a lower bound, so this is an upper bound of the restart
RESTART_SECONDS = 918.0
RESTART_SOURCE = ("fitted to the Llama 3 run's more than 90 % effective training time with its failure rate and "
                  "Daly's checkpoint interval (sizer.engine.goodput.fit_restart): an upper bound")
# On by default from one expected interruption over the run: below it the line would mostly repeat the first
DEFAULT_FROM_INTERRUPTIONS = 1.0


def young_interval(write_seconds: FloatOrArray, mtbf_seconds: FloatOrArray) -> FloatOrArray:
    r"""Young's first-order optimal checkpoint interval.

    .. math::

        \tau = \sqrt{2 \delta M}

    Parameters
    ----------
    write_seconds : float or numpy.ndarray
        Time to write one checkpoint :math:`\delta` [s].
    mtbf_seconds : float or numpy.ndarray
        Mean time between failures of the whole run :math:`M` [s].

    Returns
    -------
    float or numpy.ndarray
        Compute time between checkpoints [s].

    Examples
    --------
    >>> float(young_interval(50.0, 3600.0))
    600.0

    References
    ----------
    [young]
    """
    interval: FloatOrArray = np.sqrt(2.0 * np.asarray(write_seconds, dtype=float) * np.asarray(mtbf_seconds, dtype=float))[()]
    return interval


def daly_interval(write_seconds: FloatOrArray, mtbf_seconds: FloatOrArray) -> FloatOrArray:
    r"""Daly's higher-order optimal checkpoint interval (Daly 2006, eq. 37).

    .. math::

        \tau = \begin{cases} \sqrt{2 \delta M} \left[1 + \frac{1}{3} \sqrt{\frac{\delta}{2M}}
               + \frac{1}{9} \frac{\delta}{2M}\right] - \delta & \delta < 2M \\ M & \delta \ge 2M \end{cases}

    Parameters
    ----------
    write_seconds : float or numpy.ndarray
        Time to write one checkpoint :math:`\delta` [s].
    mtbf_seconds : float or numpy.ndarray
        Mean time between failures :math:`M` [s].

    Returns
    -------
    float or numpy.ndarray
        Compute time between checkpoints [s].

    Examples
    --------
    >>> round(float(daly_interval(50.0, 3600.0)), 1)  # Young's 600 s, less the write, plus the higher orders
    567.1

    References
    ----------
    [daly]
    """
    delta = np.asarray(write_seconds, dtype=float)
    mtbf = np.asarray(mtbf_seconds, dtype=float)
    ratio = delta / (2.0 * mtbf)
    tau = np.sqrt(2.0 * delta * mtbf) * (1.0 + np.sqrt(ratio) / 3.0 + ratio / 9.0) - delta
    interval: FloatOrArray = np.where(delta < 2.0 * mtbf, tau, mtbf)[()]
    return interval


def expected_wall_clock(solve_seconds: FloatOrArray, interval: FloatOrArray, write_seconds: FloatOrArray,
                        restart_seconds: FloatOrArray, mtbf_seconds: FloatOrArray) -> FloatOrArray:
    r"""Expected wall-clock of a run with failures, checkpoints and restarts (Daly 2006, eq. 20).

    Failures arrive at random (exponential, mean :math:`M`); each costs a restart :math:`R` and the
    work since the last checkpoint:

    .. math::

        T_w = M \, e^{R/M} \left(e^{(\tau + \delta)/M} - 1\right) \frac{T_s}{\tau}

    Parameters
    ----------
    solve_seconds : float or numpy.ndarray
        Training time without interruptions :math:`T_s` [s].
    interval : float or numpy.ndarray
        Compute time between checkpoints :math:`\tau` [s].
    write_seconds : float or numpy.ndarray
        Time to write a checkpoint :math:`\delta` [s].
    restart_seconds : float or numpy.ndarray
        Time to restart after a failure, the checkpoint read included :math:`R` [s].
    mtbf_seconds : float or numpy.ndarray
        Mean time between failures of the run :math:`M` [s].

    Returns
    -------
    float or numpy.ndarray
        Expected wall-clock [s]; tends to :math:`T_s (1 + \delta/\tau)` as failures become rare.

    Examples
    --------
    >>> round(float(expected_wall_clock(36000.0, 600.0, 50.0, 300.0, 1e12)))  # no failures: the checkpoints alone
    39000

    References
    ----------
    [daly]
    """
    mtbf = np.asarray(mtbf_seconds, dtype=float)
    tau = np.asarray(interval, dtype=float)
    wall: FloatOrArray = (mtbf * np.exp(np.asarray(restart_seconds, dtype=float) / mtbf)
                          * np.expm1((tau + np.asarray(write_seconds, dtype=float)) / mtbf)
                          * np.asarray(solve_seconds) / tau)[()]
    return wall


class Interruptions(NamedTuple):  # a record, not a dataclass: a third of the start-up cost of one (Python 3.11)
    """Wall-clock with interruptions of one or many runs (arrays, or floats for one) [s unless said]."""

    wall_clock: FloatOrArray  # expected training time with interruptions [s]
    interruptions: FloatOrArray  # expected failures over the run [1]
    mtbf: FloatOrArray  # mean time between failures of the run [s]
    write: FloatOrArray  # one checkpoint written [s]
    restart: FloatOrArray  # one restart, the checkpoint read included [s]
    interval: FloatOrArray  # compute time between checkpoints (Daly) [s]
    factor: FloatOrArray  # wall-clock over the time without interruptions [1]

    @property
    def goodput(self) -> FloatOrArray:
        """Share of the wall-clock that trains and is kept [1]: the inverse of ``factor``."""
        return 1.0 / self.factor


def interruptions(solve_seconds: FloatOrArray, count: FloatOrArray, state_bytes: FloatOrArray, *,
                  failures_per_device_hour: float = FAILURES_PER_DEVICE_HOUR,
                  bandwidth_per_device: float = CHECKPOINT_BANDWIDTH_PER_DEVICE,
                  restart_seconds: float = RESTART_SECONDS, interval: float | None = None) -> Interruptions:
    r"""Expected wall-clock of training runs with failures, checkpoints at Daly's interval, restarts.

    .. math::

        M = \frac{1}{\lambda n}, \quad \delta = \frac{S}{n b}, \quad R = R_0 + \delta, \quad
        \tau = \tau_{Daly}(\delta, M), \quad T_w = T_w(T_s, \tau, \delta, R, M)

    with :math:`S` the model states checkpointed (weights, master weights, optimizer states), written
    and read by the ``n`` devices at :math:`b` each.

    Parameters
    ----------
    solve_seconds : float or numpy.ndarray
        Training time without interruptions [s].
    count : int or numpy.ndarray
        Devices [1].
    state_bytes : float or numpy.ndarray
        Model states checkpointed, all devices together [B].
    failures_per_device_hour : float
        Failure rate :math:`\lambda` [1 / (device h)], default Llama 3's.
    bandwidth_per_device : float
        Storage bandwidth per device :math:`b` [B/s], default Llama 3's share.
    restart_seconds : float
        Restart :math:`R_0` without the checkpoint read [s].
    interval : float, optional
        Training between checkpoints as given [s]; None: Daly's optimal interval.

    Returns
    -------
    Interruptions
        Wall-clock [s], expected failures [1], MTBF, checkpoint write, restart and interval [s].

    References
    ----------
    [young], [daly], [llama3]
    """
    n = np.asarray(count, dtype=float)
    solve = np.asarray(solve_seconds, dtype=float)
    mtbf = _HOUR / (failures_per_device_hour * n)
    write = np.asarray(state_bytes, dtype=float) / (n * bandwidth_per_device)
    restart = restart_seconds + write  # the read: the same bytes at the same bandwidth
    chosen = daly_interval(write, mtbf) if interval is None else np.full(np.shape(mtbf), float(interval))
    interval_s = np.minimum(chosen, np.maximum(solve, 1e-9))  # no checkpoint beyond the run's end
    wall = np.asarray(expected_wall_clock(solve, interval_s, write, restart, mtbf), dtype=float)
    return Interruptions(wall_clock=wall[()], interruptions=(wall / mtbf)[()], mtbf=mtbf[()], write=write[()],
                         restart=restart[()], interval=interval_s[()], factor=(wall / np.maximum(solve, 1e-300))[()])


def on_by_default(solve_seconds: FloatOrArray, count: FloatOrArray) -> bool | npt.NDArray[np.bool_]:
    """Whether a run shows its time with interruptions without being asked: one expected failure or more
    (:data:`DEFAULT_FROM_INTERRUPTIONS`, about 50,700 device-hours at Llama 3's rate).

    Parameters
    ----------
    solve_seconds : float or numpy.ndarray
        Training time without interruptions [s].
    count : int or numpy.ndarray
        Devices [1].

    Returns
    -------
    bool or numpy.ndarray
    """
    hours = np.asarray(solve_seconds, dtype=float) / _HOUR
    shown: bool | npt.NDArray[np.bool_] = (hours * np.asarray(count, dtype=float) * FAILURES_PER_DEVICE_HOUR >= DEFAULT_FROM_INTERRUPTIONS)[()]
    return shown


def assumptions(found: Interruptions, count: int) -> list[Assumption]:
    """What the time with interruptions assumes, one assumption per input.

    Parameters
    ----------
    found : Interruptions
        One run's figures (floats).
    count : int
        Devices [1].

    Returns
    -------
    list of Assumption
        Failures, checkpoints, restart.
    """
    hours = float(found.mtbf) / _HOUR
    return [
        Assumption(name="failures", value=f"{FAILURES_PER_DEVICE_HOUR:.3g} per device-hour: one every {hours:.3g} h on "
                   f"{count:,} devices, {float(found.interruptions):,.1f} over the run", source=FAILURE_SOURCE),
        Assumption(name="checkpoints", value=f"model states written in {float(found.write):.3g} s every "
                   f"{float(found.interval) / 60:.3g} min of training (Daly's optimal interval)",
                   source=f"{CHECKPOINT_SOURCE}; Young 1974, Daly 2006 (docs/references.md [young], [daly])"),
        Assumption(name="restart", value=f"{float(found.restart) / 60:.3g} min after each failure (the checkpoint read "
                   "included), then the work since the last checkpoint again", source=RESTART_SOURCE, verified=False),
    ]


def stated() -> Assumption:
    """One assumption naming the inputs of every time with interruptions of an answer (many runs).

    Returns
    -------
    Assumption
        The failure rate, checkpoint bandwidth, restart and when the line is shown.
    """
    return Assumption(name="training time with interruptions",
                      value=f"{FAILURES_PER_DEVICE_HOUR:.3g} failures per device-hour; checkpoints of the model states at "
                      f"{CHECKPOINT_BANDWIDTH_PER_DEVICE * unit_factor('B', 'MB'):.3g} MB/s per device, every Daly-optimal interval; "
                      f"{RESTART_SECONDS / 60:.3g} min per restart plus the checkpoint read; shown where asked, else "
                      "where a run expects at least one failure",
                      source=f"{FAILURE_SOURCE}; {CHECKPOINT_SOURCE}; Daly 2006 (docs/references.md [daly]); restart "
                      f"{RESTART_SOURCE}", verified=False)


def fit_restart(goodput: float = 0.9, state_bytes_per_device: float = 0.0) -> float:
    """The restart time [s] at which the Llama 3 run's failure rate and Daly checkpoints give ``goodput``.

    Parameters
    ----------
    goodput : float
        Effective training time share [1] (Llama 3: more than 0.9).
    state_bytes_per_device : float
        Model states per device [B] of the run.

    Returns
    -------
    float
        Restart without the checkpoint read [s].
    """
    mtbf = _HOUR / (FAILURES_PER_DEVICE_HOUR * LLAMA3_DEVICES)
    write = state_bytes_per_device / CHECKPOINT_BANDWIDTH_PER_DEVICE
    tau = float(daly_interval(write, mtbf))
    # T_w / T_s = M e^{R/M} (e^{(tau+delta)/M} - 1) / tau = 1 / goodput, solved for R
    total = mtbf * math.log(tau / (goodput * mtbf * math.expm1((tau + write) / mtbf)))
    return total - write


def checkpoint_bytes(job: Job, table: DeviceTable, index: int | npt.NDArray[np.int64] = 0) -> FloatOrArray:
    """Model states a checkpoint holds, all devices together [B]: the trained parameters' weights, FP32
    master weights and optimizer states (not gradients, not activations).

    Parameters
    ----------
    job : Job
        The workload (its trained parameters and optimizer).
    table : DeviceTable
        The devices at the job's precision (bytes per weight and master weight).
    index : int or numpy.ndarray
        The devices' rows [1].

    Returns
    -------
    float or numpy.ndarray
        Bytes [B].

    References
    ----------
    [zero]
    """
    from sizer.engine.constants import optimizer_state_bytes

    params = job.finetune.trainable_params if job.finetune else job.params
    per_param = (np.asarray(table.weight_bytes, dtype=float)[index] + np.asarray(table.master_bytes, dtype=float)[index]
                 + optimizer_state_bytes(job.optimizer))
    states: FloatOrArray = (float(params) * per_param)[()]
    return states


def wanted(asked: bool | None, solve_seconds: FloatOrArray, count: FloatOrArray) -> bool | npt.NDArray[np.bool_]:
    """Whether to show the time with interruptions.

    Parameters
    ----------
    asked : bool or None
        As asked; None: :func:`on_by_default`.
    solve_seconds : float or numpy.ndarray
        Training time without interruptions [s].
    count : int or numpy.ndarray
        Devices [1].

    Returns
    -------
    bool or numpy.ndarray
        Per run.
    """
    if asked is None:
        return on_by_default(solve_seconds, count)
    shown: bool | npt.NDArray[np.bool_] = np.full(np.shape(solve_seconds), bool(asked))[()]
    return shown


def interrupted_time(training: RangeOut, count: int, state_bytes: float, family: str | None = None,
                     interval: float | None = None) -> InterruptedTime:
    """:func:`interruptions` applied to each bound of a training-time range.

    Parameters
    ----------
    training : RangeOut
        Training time without interruptions.
    count : int
        Devices [1].
    state_bytes : float
        Model states checkpointed [B] (:func:`checkpoint_bytes`).
    family : str, optional
        The devices' family: the run as runs live it (:func:`lived`: its all-cause rate, restarts growing with
        the job, slowdown; the range from the spread of published rates); None: Llama 3's rate alone.
    interval : float, optional
        Training between checkpoints as given [s]; None: Daly's optimal interval.

    Returns
    -------
    InterruptedTime
        The range with interruptions (same unit), the expected run's figures and the assumptions.

    References
    ----------
    [young], [daly], [llama3]
    """
    # here, not at the top: a recommendation reads this module's arrays only, never the time answer's models
    # (their module is ~8 ms of `sizer recommend`'s start-up, benchmarks/startup.py)
    from sizer.schemas.time_and_memory import InterruptedTime

    to_s = unit_factor(training.unit, "s")
    solve = np.asarray([training.low, training.expected, training.high], dtype=float) * to_s
    if family is not None:
        runs = [lived(solve[k], count, state_bytes, family, scenario, interval)
                for k, scenario in enumerate(("low", "expected", "high"))]
        found = Interruptions(**{name: np.asarray([float(getattr(r, name)) for r in runs])
                                 for name in Interruptions._fields})
    else:
        found = interruptions(solve, count, state_bytes, interval=interval)
    expected = Interruptions(**{name: np.asarray(getattr(found, name))[1] if np.ndim(getattr(found, name)) else
                                getattr(found, name) for name in Interruptions._fields})
    wall = np.asarray(found.wall_clock, dtype=float)
    unit = time_unit(float(wall[1]))
    return InterruptedTime(
        training_time=RangeOut.of_seconds((float(wall[0]), float(wall[1]), float(wall[2])), unit),
        interruptions=float(expected.interruptions), goodput=float(expected.goodput),
        checkpoint_interval=QuantityOut.of(Quantity(float(expected.interval), "s"), "minute"),
        checkpoint_write=QuantityOut.of(Quantity(float(expected.write), "s"), "s"),
        restart=QuantityOut.of(Quantity(float(expected.restart), "s"), "minute"),
        assumptions=assumptions(expected, count) if family is None else lived_assumptions(expected, count, family,
                                                                                          given=interval is not None),
        causes=None if family is None else {name: float(expected.interruptions) * share
                                            for name, share in CAUSE_SHARES.items()})


# ---------------------------------------------------------------------------------------------------------------
# Wall-clock as runs live it (issue 39): all-cause interruption rates by device family, restarts that grow with the
# job, the slowdown between interruptions, and a range from the spread of published rates. Every figure is a row of
# ../shared/data/reliability-and-goodput.csv (its source named); rates per device-hour derived from them as said.
# ---------------------------------------------------------------------------------------------------------------

class RateSource(NamedTuple):  # a record, not a dataclass
    """One published all-cause interruption rate of a training job [1 / (device h)]."""

    family: str  # device family (sizer.engine.achieved.FAMILIES)
    rate: float  # interruptions per device-hour [1 / (device h)]
    source: str  # the row and how the rate was derived


RATE_SOURCES = (
    RateSource("nvidia-ampere", 1.0 / (7.9 * 1024), "Kokolis et al. 2024: MTTF 7.9 h of 1,024-GPU jobs (Meta RSC, A100)"),
    RateSource("nvidia-ampere", 1.0 / (7.5 * 992), "OPT-175B logbook as read by G. Lockwood: MTTI 7.5 h on 992 A100"),
    RateSource("nvidia-hopper", 466 / (16384 * 54 * 24.0), "Llama 3: 466 interruptions (419 unexpected, 47 planned) in "
                                                            "54 days on 16,384 H100"),
    RateSource("nvidia-hopper", 175 / (9600 * 91 * 24.0), "ByteRobust: 175 incidents in a 3-month dense job on 9,600 "
                                                           "Hopper GPUs"),
    RateSource("nvidia-hopper", 125 / (9600 * 30 * 24.0), "ByteRobust: 125 incidents in a 1-month MoE job on 9,600 "
                                                           "Hopper GPUs"),
    RateSource("nvidia-hopper", 28 / (1000 * 10 * 24.0), "ByteRobust: 28 restarts in 10 days of a 1,000-GPU job"),
    RateSource("nvidia-hopper", 2.3e-3 / (8 * 24.0), "Salpekar et al. (Meta): 2.3 interruptions per 1,000 servers "
                                                     "(8 H100) per day"),
    RateSource("nvidia-hopper", 1.0 / (100000 * 0.3), "Salpekar et al. (Meta): job MTBF 18 min at ~100K H100"),
    RateSource("nvidia-blackwell", 17 / (504 * 61 * 24.0), "Lablup: 17 hardware failures in about two months on 504 "
                                                           "B200 (hardware only: a lower bound)"),
)
# Causes of unexpected interruptions, Llama 3 Table 5 (419 in 54 days on 16,384 H100; reliability-at-scale.csv and
# reliability-and-goodput.csv): GPU 246 (faulty GPU 148, HBM3 72, SRAM 19, GPU processor 17 ... 58.7 %); network
# 42 (switch and cable 35, NIC 7); software and instability 63 (software bugs 54, NCCL watchdog 7, dependency 2);
# host and maintenance 46 (host maintenance 32, SSD, power, chassis, IO board, memory, CPU); the rest unattributed
CAUSE_SHARES = {"GPU hardware": 246 / 419, "network": 42 / 419, "software and instability restarts": 63 / 419,
                "host hardware and maintenance": 46 / 419, "unattributed": 22 / 419}
# Restart after an interruption [s]: detection (ByteRobust: about 60 s for explicit failures; the PyTorch distributed
# default timeout, 10 min, where nothing watches) plus requeueing the whole job, which grows with it (ByteRobust,
# L20 jobs: 454 s at 2,048 GPUs, 545 at 4,096, 635 at 8,192, 768 at 16,384: 104 s more per doubling)
DETECTION_SECONDS = 60.0
DETECTION_TIMEOUT_SECONDS = 600.0
REQUEUE_AT_2048 = 454.0
REQUEUE_PER_DOUBLING = (768.0 - 454.0) / 3.0
REQUEUE_FLOOR = 60.0  # a small job still waits for its scheduler (Lablup: 11 min median between automatic retries)
# Throughput lost between interruptions: the median of Llama 3's 1-2 % diurnal variation (1.5 %), BLOOM's 0.7 % of
# evaluation and 5 % from one slow node until it was found, MegaScale's 0.7 % from removing stragglers
SLOWDOWN = 0.011
LIVED_SOURCE = ("all-cause interruption rates of ../shared/data/reliability-and-goodput.csv by device family "
                "(Kokolis et al., OPT-175B, Llama 3, ByteRobust, Salpekar et al., Lablup); causes from Llama 3 Table 5; "
                "restart from ByteRobust's detection and requeue times; slowdown from Llama 3, BLOOM, MegaScale")


def family_rates(family: str) -> tuple[float, float, float]:
    """The all-cause interruption rate of a device family: median, and the 25th and 75th percentiles of every
    source's rate scaled to it, for the range [1 / (device h)].

    Parameters
    ----------
    family : str
        A device family (:func:`sizer.engine.achieved.family_of_name`).

    Returns
    -------
    tuple of float
        Expected, low and high rate [1 / (device h)]; a family without sources takes the median of all.
    """
    every = np.asarray([s.rate for s in RATE_SOURCES])
    own = np.asarray([s.rate for s in RATE_SOURCES if s.family == family])
    pooled = float(np.median(every))
    rate = float(np.median(own)) if len(own) else pooled
    low, high = (float(np.quantile(every, q)) for q in (0.25, 0.75))
    return rate, rate * low / pooled, rate * high / pooled


def restart_seconds(count: FloatOrArray, detection: float = DETECTION_SECONDS) -> FloatOrArray:
    """Detection plus requeueing a job of ``count`` devices [s] (without the checkpoint read).

    Parameters
    ----------
    count : float or numpy.ndarray
        Devices [1].
    detection : float
        Seconds until the failure is seen [s].

    Returns
    -------
    float or numpy.ndarray
        Seconds [s].
    """
    n = np.maximum(np.asarray(count, dtype=float), 1.0)
    requeue = np.maximum(REQUEUE_FLOOR, REQUEUE_AT_2048 + REQUEUE_PER_DOUBLING * np.log2(n / 2048.0))
    seconds: FloatOrArray = (detection + requeue)[()]
    return seconds


def lived(solve_seconds: FloatOrArray, count: FloatOrArray, state_bytes: FloatOrArray, family: str,
          scenario: str = "expected", interval: float | None = None) -> Interruptions:
    r"""Expected wall-clock of a run as runs live it: :func:`interruptions` at the device family's all-cause
    rate, a restart that grows with the job, and the slowdown between interruptions.

    .. math::

        T_w = T_w^{Daly}\left(T_s (1 + s), \lambda_g, R(n)\right)

    Parameters
    ----------
    solve_seconds : float or numpy.ndarray
        Training time without interruptions [s].
    count : float or numpy.ndarray
        Devices [1].
    state_bytes : float or numpy.ndarray
        Model states checkpointed [B].
    family : str
        Device family (its rate, :func:`family_rates`).
    scenario : str
        ``expected``; ``low`` (the 25th-percentile rate, no slowdown); ``high`` (the 75th-percentile rate,
        failures seen only at the 10-minute timeout).
    interval : float, optional
        Training between checkpoints as given [s]; None: Daly's optimal interval (Young's to first order).

    Returns
    -------
    Interruptions

    References
    ----------
    [young], [daly], [llama3]
    """
    expected, low, high = family_rates(family)
    rate = {"expected": expected, "low": low, "high": high}[scenario]
    slowdown = 0.0 if scenario == "low" else SLOWDOWN
    detection = DETECTION_TIMEOUT_SECONDS if scenario == "high" else DETECTION_SECONDS
    solve = np.asarray(solve_seconds, dtype=float) * (1.0 + slowdown)
    found = interruptions(solve, count, state_bytes, failures_per_device_hour=rate,
                          restart_seconds=float(restart_seconds(np.max(np.asarray(count, dtype=float)), detection)),
                          interval=interval)
    factor = np.asarray(found.wall_clock, dtype=float) / np.maximum(np.asarray(solve_seconds, dtype=float), 1e-300)
    return Interruptions(wall_clock=found.wall_clock, interruptions=found.interruptions, mtbf=found.mtbf,
                         write=found.write, restart=found.restart, interval=found.interval, factor=factor[()])


def lived_assumptions(found: Interruptions, count: int, family: str, given: bool = False) -> list[Assumption]:
    """What the lived wall-clock assumes: rate and causes, restart, checkpoints, slowdown.

    Parameters
    ----------
    found : Interruptions
        The expected run's figures (floats).
    count : int
        Devices [1].
    family : str
        Device family.
    given : bool
        Whether the checkpoint interval was given (else Daly's).

    Returns
    -------
    list of Assumption
    """
    rate = family_rates(family)[0]
    how = "as given" if given else "Daly's optimal interval"
    n = float(found.interruptions)
    causes = ", ".join(f"{name} {n * share:,.1f}" for name, share in CAUSE_SHARES.items())
    return [
        Assumption(name="interruptions", value=f"{rate:.3g} per device-hour ({family} runs, all causes): one every "
                   f"{float(found.mtbf) / _HOUR:.3g} h on {count:,} devices, {n:,.1f} over the run ({causes})",
                   source=LIVED_SOURCE, verified=False),
        Assumption(name="restart", value=f"{float(found.restart) / 60:.3g} min after each (detection, requeueing the "
                   "job, which grows with it, and the checkpoint read), then the work since the last checkpoint",
                   source=LIVED_SOURCE, verified=False),
        Assumption(name="checkpoints", value=f"model states written in {float(found.write):.3g} s every "
                   f"{float(found.interval) / 60:.3g} min of training ({how})",
                   source=f"{CHECKPOINT_SOURCE}; Young 1974, Daly 2006 (docs/references.md [young], [daly])"),
        Assumption(name="slowdown between interruptions", value=f"{SLOWDOWN:.1%} (stragglers, evaluation, diurnal "
                   "variation); the range: 25th-percentile rate without it to 75th-percentile rate with failures "
                   "seen at the 10-minute timeout", source=LIVED_SOURCE, verified=False),
    ]
