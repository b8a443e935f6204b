"""Peak and sustained floating-point throughput (spec §3.1; seed 004 eq. 1 and §3.3.1).

>>> from sizer.units import Quantity
>>> gpu_peak_flops(3840, Quantity(1.531, "GHz")).to("TFLOPS")
<Quantity(11.75808, 'teraFLOPS')>
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pint

from sizer.choices import DeviceKind, Precision
from sizer.errors import CatalogError, InputError
from sizer.hardware.precision import PRECISION_BYTES, stored_precision
from sizer.hardware.schema import Device, Sourced
from sizer.memo import registered_cache
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.units import Quantity, parse_count, parse_quantity

FLOP_PER_FMA = 2  # a fused multiply-add is one multiply and one add


@dataclass(frozen=True)
class Derating:
    """Fraction of peak lost to interfaces, bus speed and memory tiering (seed 004 §3.3.1).

    The seed observes a 15-25 % decrease; the expected value is the middle, 20 %.
    """

    low: float = 0.15
    expected: float = 0.20
    high: float = 0.25
    source: str = "seed 004 §3.3.1: 'a 15-25% performance decrease' from peak"

    def __post_init__(self) -> None:
        for name in ("low", "expected", "high"):
            value = getattr(self, name)
            if not 0 <= value < 1:
                raise InputError("derating", value, "a fraction between 0 and 1 (0.2 means 20 % below peak)")
        if not self.low <= self.expected <= self.high:
            raise InputError("derating", (self.low, self.expected, self.high), "low <= expected <= high")

    @classmethod
    def single(cls, value: float, source: str = "given by the user") -> "Derating":
        """A derating with one value for all three bounds.

        Parameters
        ----------
        value : float
            Fraction of peak lost, d [1].
        source : str, default ``"given by the user"``
            Where the value comes from.

        Returns
        -------
        Derating
            low = expected = high = ``value``.
        """
        return cls(value, value, value, source)


DEFAULT_DERATING = Derating()


def gpu_peak_flops(fp32_cores: float, boost_clock: pint.Quantity[Any]) -> pint.Quantity[Any]:
    """FP32 CUDA-core peak of a GPU.

    .. math::

        R = 2 N C

    Parameters
    ----------
    fp32_cores : float
        FP32 (CUDA) cores N [1].
    boost_clock : pint.Quantity
        Boost clock C [Hz].

    Returns
    -------
    pint.Quantity
        Peak R [FLOP/s].

    References
    ----------
    [seed-004-eq1], [seed-004-eq2], [spec-3.1]

    Examples
    --------
    Tesla P40, N = 3840, C = 1.531 GHz gives 1.176e13 FLOP/s (seed 004 eq. 2).
    """
    peak: pint.Quantity[Any] = (FLOP_PER_FMA * fp32_cores * boost_clock * Quantity(1, "FLOP")).to("FLOP/s")
    return peak


def cpu_peak_flops(cores: float, clock: pint.Quantity[Any], lanes_per_fma: int, fma_units_per_core: int) -> pint.Quantity[Any]:
    r"""Peak of a CPU from its cores, clock and vector units.

    .. math::

        R = n_{cores} \cdot C \cdot 2 \cdot l \cdot u

    Parameters
    ----------
    cores : float
        Physical cores n_cores [1].
    clock : pint.Quantity
        Clock C [Hz].
    lanes_per_fma : int
        SIMD lanes of the data type per FMA unit l [1] (AVX-512 FP32: 16).
    fma_units_per_core : int
        FMA units per core u [1].

    Returns
    -------
    pint.Quantity
        Peak R [FLOP/s].

    References
    ----------
    [spec-3.1], [seed-004-eq1]

    Examples
    --------
    >>> from sizer.units import Quantity
    >>> cpu_peak_flops(28, Quantity(2.5, "GHz"), 16, 2).to("TFLOPS")
    <Quantity(4.48, 'teraFLOPS')>
    """
    peak: pint.Quantity[Any] = (cores * clock * FLOP_PER_FMA * lanes_per_fma * fma_units_per_core
                                * Quantity(1, "FLOP")).to("FLOP/s")
    return peak


def cpu_tile_peak_flops(cores: float, clock: pint.Quantity[Any], work_per_cycle: int) -> pint.Quantity[Any]:
    r"""Peak of a CPU's matrix tiles (Intel AMX) from its cores, clock and work per core per cycle.

    .. math::

        R = n_{cores} \cdot C \cdot w

    Parameters
    ----------
    cores : float
        Physical cores n_cores [1].
    clock : pint.Quantity
        Clock C [Hz].
    work_per_cycle : int
        Multiply and add operations one core's tiles do per cycle w [FLOP/cycle] (AMX: 1024 BF16,
        2048 INT8, per Intel's optimization manual).

    Returns
    -------
    pint.Quantity
        Peak R [FLOP/s] (int8 operations counted as FLOP, as the engine does).

    Examples
    --------
    >>> from sizer.units import Quantity
    >>> cpu_tile_peak_flops(56, Quantity(2.0, "GHz"), 1024).to("TFLOPS")
    <Quantity(114.688, 'teraFLOPS')>
    """
    peak: pint.Quantity[Any] = (cores * clock * work_per_cycle * Quantity(1, "FLOP")).to("FLOP/s")
    return peak


def sustained_flops(peak: pint.Quantity[Any], derating: Derating = DEFAULT_DERATING) -> Estimate:
    """Sustained rate after derating; the low bound uses the largest loss.

    .. math::

        R_s = R (1 - d)

    Parameters
    ----------
    peak : pint.Quantity
        Peak R [FLOP/s].
    derating : Derating, optional
        Fraction lost d [1], low / expected / high; default 0.15 / 0.20 / 0.25.

    Returns
    -------
    Estimate
        Sustained rate low / expected / high [FLOP/s].

    References
    ----------
    [seed-004-3.3.1], [spec-3.1]

    Examples
    --------
    >>> from sizer.units import Quantity
    >>> sustained_flops(Quantity(100, "TFLOPS")).expected
    <Quantity(80.0, 'teraFLOPS')>
    """
    return Estimate(peak * (1 - derating.high), peak * (1 - derating.expected), peak * (1 - derating.low))


def stated_peak(device: Device, precision: Precision) -> pint.Quantity[Any] | None:
    """The catalog's stated dense peak of a device for a precision.

    Parameters
    ----------
    device : Device
        A catalog device.
    precision : Precision
        Precision key of ``device.peaks`` (``fp32``, ``bf16``, ...).

    Returns
    -------
    pint.Quantity or None
        The stated peak [FLOP/s], or None where the catalog has none.

    References
    ----------
    [spec-4]
    """
    sourced = device.peaks.get(precision)
    return None if sourced is None else sourced.quantity(f"peaks.{precision}", "[computation]/[time]").to("FLOP/s")


@registered_cache(key=lambda device: device.key)  # asked per precision of every device table: once per device
def derived_fp32_peak(device: Device) -> pint.Quantity[Any] | None:
    """The FP32 peak worked out from a catalog entry: 2NC for a GPU, the vector formula for a CPU.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    pint.Quantity or None
        The derived peak [FLOP/s]; None where the entry lacks cores or clock.

    References
    ----------
    [seed-004-eq1], [spec-3.1]
    """
    formula = _fp32_formula(device)
    if formula is None:
        return None
    if formula == "cpu":
        vector = device.vector
        assert vector is not None  # _fp32_formula says "cpu" only for an entry with vector units
        return cpu_peak_flops(_cpu_cores(device), cpu_clock(device), vector.fp32_lanes_per_fma,
                              vector.fma_units_per_core)
    boost_clock, fp32_cores = device.boost_clock, device.fp32_cores
    assert boost_clock is not None and fp32_cores is not None  # _fp32_formula says "gpu" only with both
    clock = boost_clock.quantity("boost_clock", "[frequency]")
    return gpu_peak_flops(float(fp32_cores.quantity("fp32_cores", "", "").magnitude), clock)


def _cpu_cores(device: Device) -> float:
    if device.cores is None:  # the schema asks every CPU for its cores; a GPU has fp32_cores instead
        raise CatalogError(f"{device.name}: no core count for a CPU peak; add cores to its catalog entry")
    return float(device.cores.quantity("cores", "", "").magnitude)


def cpu_clock(device: Device) -> pint.Quantity[Any]:
    """The clock a CPU's peaks use: every core busy at once, so the all-core clock where the catalog
    has it, else the boost clock (which overstates a peak reached on every core).

    Parameters
    ----------
    device : Device
        A catalog CPU.

    Returns
    -------
    pint.Quantity
        The clock [Hz].
    """
    return _every_core_clock(device, device.boost_clock, "boost_clock")


def tile_clock(device: Device) -> pint.Quantity[Any]:
    """The clock a CPU's matrix tiles (AMX) run at with every core busy: the all-core clock where the
    catalog has it, else the base clock, since heavy tile work runs under a lower frequency licence than
    the boost clock (Intel's optimization manual), so the boost would overstate the peak.

    Parameters
    ----------
    device : Device
        A catalog CPU.

    Returns
    -------
    pint.Quantity
        The clock [Hz].
    """
    return _every_core_clock(device, device.base_clock or device.boost_clock, "base_clock")


def _every_core_clock(device: Device, fallback: Sourced | None, field: str) -> pint.Quantity[Any]:
    """The catalog's all-core clock where it has one, else ``fallback`` (a clock figure named ``field``) [Hz]."""
    if device.all_core_clock is not None:
        return device.all_core_clock.quantity("all_core_clock", "[frequency]")
    if fallback is None:
        raise CatalogError(f"{device.name}: no all_core_clock, base_clock or boost_clock to run its cores at; "
                           "add one to its catalog entry")
    return fallback.quantity(field, "[frequency]")


def tile_peak(device: Device, precision: Precision | Literal["int8"]) -> pint.Quantity[Any] | None:
    """A CPU's matrix-tile peak (AMX) at bf16 or int8 (a serving format's compute, not a training
    precision). FP32 stays on the vector units (:func:`derived_fp32_peak`).

    Parameters
    ----------
    device : Device
        A catalog device.
    precision : Precision or "int8"
        ``Precision.BF16`` or ``"int8"``.

    Returns
    -------
    pint.Quantity or None
        Cores x clock (:func:`tile_clock`) x the tiles' work per cycle [FLOP/s]; None where the device has
        no tiles or they lack the precision.
    """
    tiles = device.matrix_tiles
    if tiles is None or device.kind is not DeviceKind.CPU:
        return None
    work = {"bf16": tiles.bf16_flop_per_cycle, "int8": tiles.int8_ops_per_cycle}.get(str(precision))
    return None if work is None else cpu_tile_peak_flops(_cpu_cores(device), tile_clock(device), work)


def int8_matrix_peak(device: Device) -> pint.Quantity[Any] | None:
    """The dense int8 matrix peak W8A8 serving runs at: the catalog's ``int8_peak``, else a CPU's AMX tiles.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    pint.Quantity or None
        The peak [FLOP/s]; None where neither exists.
    """
    if device.int8_peak is not None:
        return device.int8_peak.quantity("int8_peak", "[computation]/[time]").to("FLOP/s")
    return tile_peak(device, "int8")


def _fp32_formula(device: Device) -> str | None:
    """Which formula gives the entry's FP32 peak: ``"cpu"`` (cores, vector units, clock), ``"gpu"``
    (FP32 cores and clock: 2NC), or None where the entry lacks what either needs."""
    if not device.boost_clock:
        return None
    if device.kind is DeviceKind.CPU and device.cores and device.vector:
        return "cpu"
    return "gpu" if device.fp32_cores is not None else None


def supported_precisions(device: Device) -> list[Precision]:
    """The precisions a device has a peak for (FP32 also where 2NC gives one).

    Worked out once per device (keyed by its content, :mod:`sizer.memo`).

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    list of Precision
        In the order of ``PRECISION_BYTES``.
    """
    return list(_supported(device))


@registered_cache(key=lambda device: device.key)
def _supported(device: Device) -> tuple[Precision, ...]:
    found = set(device.peaks)
    if tile_peak(device, Precision.BF16) is not None:  # AMX
        found.add(Precision.BF16)
    if _fp32_formula(device) is not None:  # whether 2NC gives one, without working it out
        found.add(Precision.FP32)
    return tuple(p for p in PRECISION_BYTES if p in found)


def device_peak(device: Device, precision: Precision = Precision.FP32) -> tuple[pint.Quantity[Any], str]:
    """The peak of a catalog device for a precision, and how it was obtained.

    FP32 is ``2NC`` (or the CPU formula) when the entry has cores and clock, since that is the
    seed's method; the stated figure where there is no core count, or where the entry documents
    why 2NC misses it (dual-issue FP32, a different rated clock). Other precisions are the
    catalog's dense tensor peaks: no core-count formula gives them.

    Parameters
    ----------
    device : Device
        A catalog device.
    precision : Precision, default FP32
        The precision to train or serve in.

    Returns
    -------
    peak : pint.Quantity
        The peak [FLOP/s].
    basis : str
        How the peak was obtained, with its source.

    Raises
    ------
    InputError
        A precision the device has no peak for; the message lists those it has.

    References
    ----------
    [seed-004-eq1], [spec-3.1]
    """
    precision = stored_precision(precision)
    if precision is Precision.FP32 and not (device.fp32_peak_discrepancy and Precision.FP32 in device.peaks):
        derived = derived_fp32_peak(device)
        if derived is not None:
            formula = "cores x clock x 2 x SIMD lanes x FMA units (spec §3.1)" if device.kind is DeviceKind.CPU \
                else "R = 2NC, FP32 cores x boost clock x 2 (seed 004 eq. 1)"
            return derived, formula
    peak = stated_peak(device, precision)
    tiles = tile_peak(device, precision) if peak is None else None
    if tiles is not None:
        t = device.matrix_tiles
        assert t is not None  # tile_peak gives a peak only for an entry with matrix tiles
        return tiles, (f"cores x clock ({tile_clock(device).to('GHz'):.3g~P}) x {t.bf16_flop_per_cycle} FLOP/cycle "
                       f"on the {t.isa} tiles ({'' if t.verified else 'unverified: '}{t.source})")
    if peak is None:
        raise InputError("precision", precision.value,
                         f"a precision {device.name} supports: {', '.join(supported_precisions(device))}")
    return peak, f"dense {precision} peak from the catalog ({device.peaks[precision].source})"


class PeakResult(Model):
    device: str | None
    precision: str
    peak: QuantityOut
    sustained: RangeOut
    basis: str
    stated_fp32_peak: QuantityOut | None = None
    assumptions: list[Assumption]


def _core_count(raw: object) -> float:
    """A core count: a whole number of at least one (``1e-20`` cores once gave a peak in pFLOP/s)."""
    count = parse_count("cores", raw, integer=True)
    if count < 1:
        raise InputError("cores", raw, "a whole number of cores, at least 1")
    return count


def estimate_peak(device: Device | None = None, precision: Precision = Precision.FP32, *, cores: float | str | None = None,
                  clock: object = None, derating: Derating = DEFAULT_DERATING) -> PeakResult:
    r"""Peak and sustained throughput of a catalog device, or of a core count and clock.

    With ``cores`` and ``clock`` (and no device) the GPU formula 2NC is used; with a device,
    ``clock`` overrides its boost clock and ``cores`` its core count.

    .. math::

        R = 2 N C, \qquad R_s = R (1 - d)

    Parameters
    ----------
    device : Device, optional
        A catalog device.
    precision : Precision, default FP32
        Precision of the peak.
    cores : count, optional
        FP32 cores (GPU) or cores (CPU) [1].
    clock : quantity, optional
        Clock [Hz].
    derating : Derating, optional
        Fraction of peak lost [1].

    Returns
    -------
    PeakResult
        Peak [FLOP/s], sustained range [FLOP/s], basis, the stated FP32 peak where one exists,
        and the assumptions.

    Raises
    ------
    InputError
        Neither a device nor cores and clock; a precision other than FP32 without a device.

    References
    ----------
    [seed-004-eq1], [seed-004-3.3.1], [spec-3.1]

    Examples
    --------
    >>> estimate_peak(cores=3840, clock="1.531 GHz").peak.value
    11758080000000.0
    """
    assumptions = [Assumption(name="derating d", value=f"{derating.low:g}-{derating.high:g}, expected {derating.expected:g}",
                              source=derating.source)]
    stated = None
    if device is None:
        if cores is None or clock is None:
            raise InputError("device", None, "a device name, or both cores and clock")
        core_count = _core_count(cores)
        clock_q = parse_quantity("clock", clock, "[frequency]")
        if precision is not Precision.FP32:
            raise InputError("precision", precision.value, "fp32: only the FP32 peak follows from cores and clock")
        peak, basis = gpu_peak_flops(core_count, clock_q), "R = 2NC from the given cores and clock (seed 004 eq. 1)"
        name = None
    else:
        if clock is not None:
            given = parse_quantity("clock", clock, "[frequency]")
            device = device.model_copy(update={"boost_clock": Sourced(value=f"{given:~}", source="given by the user")})
        if cores is not None:
            field = "cores" if device.kind is DeviceKind.CPU else "fp32_cores"
            device = device.model_copy(update={field: Sourced(value=_core_count(cores), source="given by the user")})
        peak, basis = device_peak(device, precision)
        name = device.name
        if precision is Precision.FP32:
            stated = stated_peak(device, Precision.FP32)
    return PeakResult(device=name, precision=precision.value, peak=QuantityOut.of(peak, "FLOP/s"),
                      sustained=sustained_flops(peak, derating).out("FLOP/s"), basis=basis,
                      stated_fp32_peak=QuantityOut.of(stated, "FLOP/s") if stated is not None else None,
                      assumptions=assumptions)

