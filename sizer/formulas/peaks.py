"""Peak and sustained floating-point throughput (spec §3.1; seed 004 eq. 1 and §3.3.1).

>>> from sizer.units import Quantity
>>> gpu_peak_flops(3840, Quantity(1.531, "GHz")).to("TFLOPS")
<Quantity(11.75808, 'teraFLOPS')>
"""
from __future__ import annotations

from dataclasses import dataclass

import pint

from sizer.hardware.schema import Device, Sourced
from sizer.errors import InputError
from sizer.hardware.precision import PRECISION_BYTES, check_precision
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
        return cls(value, value, value, source)


DEFAULT_DERATING = Derating()


def gpu_peak_flops(fp32_cores: float, boost_clock: pint.Quantity) -> pint.Quantity:
    """FP32 CUDA-core peak ``R = 2 · N · C`` (seed 004 eq. 1).

    Parameters: ``fp32_cores`` N [count], ``boost_clock`` C [frequency]. Returns [FLOP/s].
    Worked example (seed 004 eq. 2): Tesla P40, N = 3840, C = 1.531 GHz -> 1.176e13 FLOP/s.
    """
    return (FLOP_PER_FMA * fp32_cores * boost_clock * Quantity(1, "FLOP")).to("FLOP/s")


def cpu_peak_flops(cores: float, clock: pint.Quantity, lanes_per_fma: int, fma_units_per_core: int) -> pint.Quantity:
    """CPU peak ``R = cores · C · 2 · lanes · FMA units`` (spec §3.1, after seed 004 eq. 1).

    Parameters: ``cores`` [count], ``clock`` [frequency], ``lanes_per_fma`` SIMD lanes of the
    data type per FMA unit (AVX-512 FP32: 16), ``fma_units_per_core``. Returns [FLOP/s].

    >>> from sizer.units import Quantity
    >>> cpu_peak_flops(28, Quantity(2.5, "GHz"), 16, 2).to("TFLOPS")
    <Quantity(4.48, 'teraFLOPS')>
    """
    return (cores * clock * FLOP_PER_FMA * lanes_per_fma * fma_units_per_core * Quantity(1, "FLOP")).to("FLOP/s")


def sustained_flops(peak: pint.Quantity, derating: Derating = DEFAULT_DERATING) -> Estimate:
    """Sustained rate ``R_s = R · (1 − d)`` (seed 004 §3.3.1); low uses the largest d.

    >>> from sizer.units import Quantity
    >>> sustained_flops(Quantity(100, "TFLOPS")).expected
    <Quantity(80.0, 'teraFLOPS')>
    """
    return Estimate(peak * (1 - derating.high), peak * (1 - derating.expected), peak * (1 - derating.low))


def stated_peak(device: Device, precision: str) -> pint.Quantity | None:
    sourced = device.peaks.get(precision)
    return None if sourced is None else sourced.quantity(f"peaks.{precision}", "[computation]/[time]").to("FLOP/s")


def derived_fp32_peak(device: Device) -> pint.Quantity | None:
    """2NC for a GPU, the FMA/SIMD formula for a CPU, from the catalog entry; None if it lacks the figures."""
    clock = device.boost_clock.quantity("boost_clock", "[frequency]") if device.boost_clock else None
    if device.kind == "cpu" and device.cores and device.vector and clock is not None:
        cores = float(device.cores.quantity("cores", "", "").magnitude)
        return cpu_peak_flops(cores, clock, device.vector.fp32_lanes_per_fma, device.vector.fma_units_per_core)
    if device.fp32_cores is not None and clock is not None:
        return gpu_peak_flops(float(device.fp32_cores.quantity("fp32_cores", "", "").magnitude), clock)
    return None


_SUPPORTED: dict[int, tuple[Device, tuple[str, ...]]] = {}


def supported_precisions(device: Device) -> list[str]:
    """The precisions a device has a peak for (FP32 also where 2NC gives one); worked out once per device
    object (catalog devices are immutable; the entry holds the device, so its identity is not reused)."""
    kept = _SUPPORTED.get(id(device))
    if kept is None or kept[0] is not device:
        found = set(device.peaks)
        if derived_fp32_peak(device) is not None:
            found.add("fp32")
        if len(_SUPPORTED) > 4096:
            _SUPPORTED.clear()
        kept = _SUPPORTED[id(device)] = (device, tuple(p for p in PRECISION_BYTES if p in found))
    return list(kept[1])


def device_peak(device: Device, precision: str = "fp32") -> tuple[pint.Quantity, str]:
    """The peak of a catalog device for a precision, and how it was obtained.

    FP32 is ``2NC`` (or the CPU formula) when the entry has cores and clock, since that is the
    seed's method; the stated figure where there is no core count, or where the entry documents
    why 2NC misses it (dual-issue FP32, a different rated clock). Other precisions are the catalog's dense
    tensor peaks: no core-count formula gives them (spec §3.1).
    """
    precision = check_precision(precision)
    if precision == "fp32" and not (device.fp32_peak_discrepancy and "fp32" in device.peaks):
        derived = derived_fp32_peak(device)
        if derived is not None:
            formula = "cores x clock x 2 x SIMD lanes x FMA units (spec §3.1)" if device.kind == "cpu" \
                else "R = 2NC, FP32 cores x boost clock x 2 (seed 004 eq. 1)"
            return derived, formula
    peak = stated_peak(device, precision)
    if peak is None:
        raise InputError("precision", precision,
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


def _core_count(raw) -> float:
    """A core count: a whole number of at least one (``1e-20`` cores once gave a peak in pFLOP/s)."""
    count = parse_count("cores", raw, integer=True)
    if count < 1:
        raise InputError("cores", raw, "a whole number of cores, at least 1")
    return count


def estimate_peak(device: Device | None = None, precision: str = "fp32", *, cores: float | None = None,
                  clock: object = None, derating: Derating = DEFAULT_DERATING) -> PeakResult:
    """Peak and sustained throughput for a catalog device, or for a core count and clock.

    With ``cores`` and ``clock`` (and no device) the GPU formula 2NC is used; with a device,
    ``clock`` overrides its boost clock.

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
        if precision != "fp32":
            raise InputError("precision", precision, "fp32: only the FP32 peak follows from cores and clock")
        peak, basis = gpu_peak_flops(core_count, clock_q), "R = 2NC from the given cores and clock (seed 004 eq. 1)"
        name = None
    else:
        if clock is not None:
            given = parse_quantity("clock", clock, "[frequency]")
            device = device.model_copy(update={"boost_clock": Sourced(value=f"{given:~}", source="given by the user")})
        if cores is not None:
            field = "cores" if device.kind == "cpu" else "fp32_cores"
            device = device.model_copy(update={field: Sourced(value=_core_count(cores), source="given by the user")})
        peak, basis = device_peak(device, precision)
        name = device.name
        if precision == "fp32":
            stated = stated_peak(device, "fp32")
    return PeakResult(device=name, precision=precision, peak=QuantityOut.of(peak, "FLOP/s"),
                      sustained=sustained_flops(peak, derating).out("FLOP/s"), basis=basis,
                      stated_fp32_peak=QuantityOut.of(stated, "FLOP/s") if stated is not None else None,
                      assumptions=assumptions)

