"""Catalog devices as arrays of SI magnitudes, converted once per (catalog, precision).

A :class:`DeviceTable` holds, per device, the rates the roofline needs at one training
precision (``mixed`` resolves per device: bf16 where the device has it, else fp16, else fp32),
the memory, the link inside a node and the network between nodes.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from sizer.choices import DeviceKind, Precision
from sizer.diskcache import cached, file_stamp, key_of
from sizer.engine import constants
from sizer.engine.constants import (
    DATACENTRE_NETWORK,
    FALLBACK_LINK,
    FRAMEWORK_OVERHEAD_BYTES,
    OFFICE_NETWORK,
    Efficiencies,
    LinkSpeed,
    device_efficiencies,
)
from sizer.formulas.peaks import device_peak, stated_peak, supported_precisions
from sizer.hardware.nodes import bridge_link, device_link, node_layout  # noqa: F401  (the one node model, re-exported)
from sizer.hardware.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, SCALED_PRECISIONS, weight_bytes
from sizer.hardware.schema import Device
from sizer.memo import registered_cache

if TYPE_CHECKING:  # a node type is only read here
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.hardware.networks import Topology

NO_MATRIX_UNITS = ("Kepler", "Maxwell", "Pascal")  # GPU generations without tensor cores
MIXED_ORDER = (Precision.BF16, Precision.FP16, Precision.FP32)  # what `mixed` takes, in order of preference


def resolve_precision(device: Device, precision: Precision) -> Precision | None:
    """The precision a device trains at for a requested one.

    ``mixed`` picks bf16 where the device has it, else fp16, else fp32.

    Parameters
    ----------
    device : Device
        A catalog device.
    precision : Precision
        The requested precision.

    Returns
    -------
    Precision or None
        The precision used on this device; None where it has no peak for it.

    References
    ----------
    [spec-3.1], [micikevicius]
    """
    has = supported_precisions(device)
    if precision is Precision.MIXED:
        return next((p for p in MIXED_ORDER if p in has), None)
    return precision if precision in has else None


class DeviceRates(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """One device's rates at one precision, as plain floats (FLOP/s, B/s)."""

    precision: Precision
    matrix_peak: float
    matrix_unit: str  # "tensor", "tf32" or "fp32"
    conv_peak: float
    conv_unit: str
    vector_peak: float
    bandwidth: float
    notes: tuple[str, ...] = ()


def device_rates(device: Device, precision: Precision) -> DeviceRates:
    """Peaks and memory bandwidth of a device at a supported precision (not ``mixed``).

    FP32 training on a device with TF32 tensor cores runs convolutions in TF32: cuDNN's
    ``torch.backends.cudnn.allow_tf32`` defaults to True in PyTorch, matmuls' to False.

    Parameters
    ----------
    device : Device
        A catalog device.
    precision : Precision
        A precision the device has a peak for.

    Returns
    -------
    DeviceRates
        Matrix, convolution and vector peaks [FLOP/s], the unit each runs on, memory bandwidth
        [B/s] and notes.

    References
    ----------
    [spec-3.1], [seed-004-eq1]
    """
    matrix, _ = device_peak(device, precision)
    has_fp32 = Precision.FP32 in supported_precisions(device)
    fp32 = device_peak(device, Precision.FP32)[0] if has_fp32 else matrix
    has_matrix_units = device.kind is not DeviceKind.CPU and not any(a in device.architecture for a in NO_MATRIX_UNITS)
    unit = "fp32" if precision is Precision.FP32 or not has_matrix_units else \
        ("tf32" if precision is Precision.TF32 else "tensor")
    conv, conv_unit = matrix, unit
    notes: tuple[str, ...] = ()
    tf32 = stated_peak(device, Precision.TF32)
    if precision is Precision.FP32 and tf32 is not None and has_matrix_units:
        conv, conv_unit = tf32, "tf32"
        notes = ("FP32 convolutions on TF32 tensor cores (PyTorch's cuDNN default)",)
    bandwidth = device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]")  # B/s
    return DeviceRates(precision=precision, matrix_peak=float(matrix.to("FLOP/s").magnitude), matrix_unit=unit,
                       conv_peak=float(conv.to("FLOP/s").magnitude), conv_unit=conv_unit,
                       vector_peak=float(fp32.to("FLOP/s").magnitude),
                       bandwidth=bandwidth, notes=notes)


def unit_efficiency(efficiency: Efficiencies, unit: str) -> float:
    """The efficiency of one matrix unit.

    Parameters
    ----------
    efficiency : Efficiencies
        The device's efficiencies.
    unit : str
        ``"tensor"``, ``"tf32"`` or ``"fp32"``.

    Returns
    -------
    float
        Achieved fraction of the unit's peak [1].
    """
    return {"tensor": efficiency.matrix, "tf32": efficiency.tf32, "fp32": efficiency.fp32_matrix}[unit]


# eq and repr left out: arrays have no truth value to compare by, nor a readable repr (and each generated
# method costs start-up: Python 3.11 compiles them one by one)
@dataclass(frozen=True, eq=False, repr=False)
class DeviceTable:
    """Per device (axis 0), at one requested precision. NaN rates where the precision is unsupported."""

    devices: tuple[Device, ...]
    precisions: tuple[str | None, ...]  # resolved per device (a Precision; serving's int8 table: "int8"); None: unsupported
    rates: npt.NDArray[np.float64]  # [device, unit]: achieved FLOP/s of the matrix, conv, vector and attention units (layers.py)
    matrix_half: npt.NDArray[np.float64]  # [device, unit]: FLOP per kernel at half the unit's rate (0: no size dependence)
    peak: npt.NDArray[np.float64]  # dense peak at the resolved precision (matrix units)
    # [device, unit]: the datasheet peak of the unit each layer's FLOP run on (matrix, conv, vector, attention): the
    # physical limit is each unit's FLOP at its own peak (under fp32 the matmuls at the FP32 peak, convolutions at
    # TF32's where cuDNN runs them there; elementwise work at the fastest unit's, which half2 may reach: column 2 is
    # the fastest unit's peak)
    unit_peaks: npt.NDArray[np.float64]
    bandwidth: npt.NDArray[np.float64]  # achieved B/s of device memory
    launch: npt.NDArray[np.float64]  # s per kernel
    step_overhead: npt.NDArray[np.float64]  # s per optimizer step
    memory: npt.NDArray[np.float64]  # B
    framework_overhead: npt.NDArray[np.float64]  # B
    weight_bytes: npt.NDArray[np.float64]  # B per weight / gradient copy
    master_bytes: npt.NDArray[np.float64]  # B per FP32 master weight (mixed precision), else 0
    storage_scale: npt.NDArray[np.float64]  # activation bytes relative to FP32
    link: npt.NDArray[np.float64]  # B/s inside a node
    link_latency: npt.NDArray[np.float64]  # s
    bridge: npt.NDArray[np.float64]  # B/s among the cards an NVLink bridge joins (H100 NVL pairs); 0: none
    bridge_devices: npt.NDArray[np.float64]  # cards one bridge joins; 1: none
    devices_per_node: npt.NDArray[np.float64]
    network: npt.NDArray[np.float64]  # B/s per device between nodes
    network_latency: npt.NDArray[np.float64]
    efficiencies: tuple[Efficiencies, ...]
    notes: tuple[tuple[str, ...], ...]

    @property
    def supported(self) -> npt.NDArray[np.bool_]:
        """Which devices have a peak at the requested precision.

        Returns
        -------
        numpy.ndarray of bool
            One per device.
        """
        return ~np.isnan(self.peak)

    def index(self, device_id: str) -> int:
        """The row of a device in the table.

        Parameters
        ----------
        device_id : str
            A catalog id.

        Returns
        -------
        int
            Its index on axis 0.
        """
        return next(i for i, d in enumerate(self.devices) if d.id == device_id)


def topology_links(topology: Topology) -> tuple[int, LinkSpeed, LinkSpeed]:
    """Devices per node and the two links of a catalog node type.

    Parameters
    ----------
    topology : Topology
        A node type (:meth:`sizer.hardware.networks.Networks.topology`).

    Returns
    -------
    devices_per_node : int
        Devices in one node [1].
    inside : LinkSpeed
        The link inside a node [B/s per direction].
    between : LinkSpeed
        The network between nodes [B/s per device]; Ethernet where the node type has none.

    References
    ----------
    [dgx-h100], [ethernet]
    """
    inside = LinkSpeed(topology.intra_node, float(topology.intra_node_bandwidth.to("B/s").magnitude), FALLBACK_LINK.latency,
                  f"catalog node type {topology.system}")
    if topology.inter_node is None or topology.inter_node_bandwidth is None:  # both come from one catalog link
        return topology.devices_per_node, inside, OFFICE_NETWORK
    latency = topology.inter_node_latency.to("s").magnitude if topology.inter_node_latency is not None \
        else DATACENTRE_NETWORK.latency
    between = LinkSpeed(topology.inter_node, float(topology.inter_node_bandwidth.to("B/s").magnitude), float(latency),
                   f"catalog node type {topology.system}")
    return topology.devices_per_node, inside, between


def build_device_table(devices: tuple[Device, ...], precision: Precision,
                       efficiencies: tuple[Efficiencies | None, ...] | None = None,
                       topology: Topology | None = None) -> DeviceTable:
    r"""Convert each device's figures to SI arrays once, at one precision.

    Achieved rates are peaks times the efficiency of the unit each layer kind runs on.

    .. math::

        R_{achieved} = R_{peak} \cdot \eta_{unit}, \qquad \beta_{achieved} = \beta \cdot \eta_{memory}

    Parameters
    ----------
    devices : tuple of Device
        Catalog devices.
    precision : Precision
        The requested training precision.
    efficiencies : tuple of Efficiencies or None, optional
        Per device, overriding the defaults of its kind.
    topology : Topology, optional
        A catalog node type that sets the devices per node and the links of every device.

    Returns
    -------
    DeviceTable
        Rates [FLOP/s], bandwidths [B/s], memory [B], launch and overhead [s], bytes per weight
        [B] and links, one row per device; NaN rates where the precision is unsupported.

    References
    ----------
    [roofline], [spec-3.1], [spec-3.3]
    """
    columns: dict[str, list[Any]] = {name: [] for name in DeviceTable.__dataclass_fields__ if name != "devices"}
    for i, device in enumerate(devices):
        eff = (efficiencies[i] if efficiencies else None) or device_efficiencies(device)
        resolved = resolve_precision(device, precision)
        if topology is not None:  # a node type names its links: no bridge beside them
            per_node, link, network = topology_links(topology)
            bridge, bridged = 0.0, 1
        else:
            per_node, network = node_layout(device)
            link = device_link(device)
            bridge, bridged = bridge_link(device)
        memory = device.memory.si("memory", "[information]")  # B
        notes: tuple[str, ...] = ()
        if resolved is None:
            rates, peak, bandwidth = [np.nan] * 4, np.nan, np.nan
            unit_peaks = [np.nan] * 4
            half = [0.0] * 4
            copy, master = np.nan, np.nan
        else:
            r = device_rates(device, resolved)
            rates = [r.matrix_peak * unit_efficiency(eff, r.matrix_unit), r.conv_peak * unit_efficiency(eff, r.conv_unit),
                     r.vector_peak * eff.vector]
            # GEMMs at the FP8/FP4 peak, each with its casts and scales: training's fitted overhead unless the
            # efficiencies name their own (serving: static scales, none; constants.py). Training's recipe
            # (Transformer Engine) also keeps attention at the 16-bit peak; served FP8 attention stays FP8.
            recipe = eff.fp8_scaling is None
            fp8_scaling = constants.FP8_SCALING_OVERHEAD if eff.fp8_scaling is None else eff.fp8_scaling
            served_fp4 = not recipe and resolved is Precision.FP4 and stated_peak(device, Precision.FP8) is not None
            if resolved in SCALED_PRECISIONS:
                scaling = 1.0 + fp8_scaling
                attention = rates[0] / scaling
                if served_fp4:  # NVFP4 serving: its own quantisation overhead, attention at the FP8 rate
                    scaling = 1.0 + constants.SERVING_FP4_OVERHEAD
                    attention = device_rates(device, Precision.FP8).matrix_peak * unit_efficiency(eff, "tensor")
                if recipe:
                    sixteen = resolve_precision(device, Precision.MIXED)
                    assert sixteen is not None  # a device with an 8- or 4-bit peak has a 16-bit one
                    attention = device_rates(device, sixteen).matrix_peak * unit_efficiency(eff, "tensor")
                rates = [rates[0] / scaling, rates[1] / scaling, rates[2], attention]
            else:
                rates = [*rates, rates[0]]
            # the size dependence is fitted on 16/8-bit tensor-core GEMMs only (benchmarks/llm_training.py); for
            # profiled networks trained eager, on every matrix unit (benchmarks/single_device_accuracy.py)
            matrix_half, conv_half = (eff.matrix_half if unit == "tensor" or eff.half_every_unit else 0.0
                                      for unit in (r.matrix_unit, r.conv_unit))
            half = [matrix_half, conv_half, 0.0, matrix_half]
            peak, best = r.matrix_peak, max(r.matrix_peak, r.conv_peak, r.vector_peak)
            unit_peaks = [r.matrix_peak, r.conv_peak, best,
                          device_rates(device, Precision.FP8).matrix_peak if served_fp4 else r.matrix_peak]
            bandwidth, notes = r.bandwidth * eff.memory, r.notes
            notes = _precision_notes(precision, resolved, recipe=recipe, served_fp4=served_fp4, fp8_scaling=fp8_scaling,
                                     efficiency_source=eff.source, notes=notes)
            copy = float(weight_bytes(resolved))
            master = float(MASTER_WEIGHT_BYTES if resolved in MIXED_PRECISIONS else 0)
        for name, value in (("precisions", resolved), ("rates", rates), ("matrix_half", half), ("peak", peak), ("unit_peaks", unit_peaks),
                            ("bandwidth", bandwidth), ("launch", eff.launch), ("step_overhead", eff.step_overhead),
                            ("memory", memory),
                            ("framework_overhead", 0.0 if device.kind is DeviceKind.CPU else FRAMEWORK_OVERHEAD_BYTES),
                            ("weight_bytes", copy), ("master_bytes", master), ("storage_scale", copy / 4.0),
                            ("link", link.bandwidth), ("link_latency", link.latency), ("bridge", bridge),
                            ("bridge_devices", bridged), ("devices_per_node", per_node),
                            ("network", network.bandwidth), ("network_latency", network.latency),
                            ("efficiencies", eff), ("notes", notes)):
            columns[name].append(value)
    def floats(name: str) -> npt.NDArray[np.float64]:
        return np.asarray(columns[name], dtype=float)

    return DeviceTable(devices=tuple(devices), precisions=tuple(columns["precisions"]), rates=floats("rates"),
                       matrix_half=floats("matrix_half"), peak=floats("peak"),
                       unit_peaks=floats("unit_peaks"),
                       bandwidth=floats("bandwidth"), launch=floats("launch"), step_overhead=floats("step_overhead"),
                       memory=floats("memory"), framework_overhead=floats("framework_overhead"),
                       weight_bytes=floats("weight_bytes"), master_bytes=floats("master_bytes"),
                       storage_scale=floats("storage_scale"), link=floats("link"), link_latency=floats("link_latency"),
                       bridge=floats("bridge"), bridge_devices=floats("bridge_devices"),
                       devices_per_node=floats("devices_per_node"), network=floats("network"),
                       network_latency=floats("network_latency"), efficiencies=tuple(columns["efficiencies"]),
                       notes=tuple(columns["notes"]))


def _precision_notes(precision: Precision, resolved: Precision, *, recipe: bool, served_fp4: bool, fp8_scaling: float,
                     efficiency_source: str, notes: tuple[str, ...]) -> tuple[str, ...]:
    """The device row's notes on the precision it runs: mixed precision resolved, and an 8- or 4-bit peak's scaling
    (training's recipe, NVFP4 serving, FP8 serving with static scales, or the efficiencies' own)."""
    if precision is Precision.MIXED:
        notes = (f"mixed precision: {resolved} on this device", *notes)
    if resolved in SCALED_PRECISIONS and recipe:
        fp4 = constants.FP4_TRAINING_NOTE if resolved == "fp4" else ""
        notes = (f"{resolved.upper()} GEMMs at the {resolved.upper()} peak with a scaling overhead of "
                 f"{fp8_scaling:.0%} of their time ({constants.FP8_SCALING_SOURCE}){fp4}; attention "
                 f"scores at the 16-bit peak ({constants.FP8_ATTENTION_SOURCE}); 16-bit weight/gradient copies, "
                 f"FP32 master weights and optimizer states ({constants.FP8_STATES_SOURCE})", *notes)
    elif resolved in SCALED_PRECISIONS and served_fp4:
        notes = (constants.SERVING_FP4_SOURCE, *notes)
    elif resolved in SCALED_PRECISIONS and fp8_scaling == 0:
        notes = (f"{resolved.upper()} GEMMs at the {resolved.upper()} peak without a scaling overhead "
                 f"({constants.SERVING_FP8_SOURCE})", *notes)
    elif resolved in SCALED_PRECISIONS:
        notes = (f"{resolved.upper()} GEMMs at the {resolved.upper()} peak with a scaling overhead of "
                 f"{fp8_scaling:.0%} of their time ({efficiency_source})", *notes)
    return notes


@registered_cache(key=lambda devices, precision, transformer=False: (
    tuple(d.key for d in devices), precision.value, transformer))
def cached_device_table(devices: tuple[Device, ...], precision: Precision,
                        transformer: bool = False) -> DeviceTable:
    """The default-efficiency table of these devices, built once.

    Keyed by the devices' content (:attr:`~sizer.hardware.schema.Device.key`).

    Parameters
    ----------
    devices : tuple of Device
        Catalog devices.
    precision : Precision
        The requested training precision.
    transformer : bool, default False
        With the defaults of a generated transformer's layer graph
        (:func:`~sizer.engine.constants.device_efficiencies`).

    Returns
    -------
    DeviceTable
        As :func:`build_device_table` gives it.
    """
    def build() -> DeviceTable:
        efficiencies = tuple(device_efficiencies(d, transformer) for d in devices)
        return dataclasses.replace(build_device_table(devices, precision, efficiencies), devices=())

    # Building the whole catalog's table is ~40 ms of a command's start-up (142 devices' peaks through
    # pint); kept on disk (sizer.diskcache) under the devices' content and the code that builds it
    try:
        key = key_of([file_stamp(path) for path in _TABLE_CODE], contents_digest(devices), precision.value, transformer)
    except OSError:
        return build_device_table(devices, precision, tuple(device_efficiencies(d, transformer) for d in devices))
    return dataclasses.replace(cached("device-table", key, build), devices=tuple(devices))



def contents_digest(devices: tuple[Device, ...]) -> str:
    """A digest of the devices' content (:attr:`~sizer.hardware.schema.Device.key`), in their order: what a disk
    entry is keyed by. Each key is hashed as it is, not through ``repr`` (the catalog's are some 780 kB of text,
    which ``repr`` escapes: ~8 ms of a worker's first search against ~1 ms).

    Parameters
    ----------
    devices : tuple of Device
        Catalog devices.

    Returns
    -------
    str
        SHA-256 in hexadecimal digits.
    """
    digest = hashlib.sha256()
    for device in devices:
        digest.update(device.key.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")  # a key is JSON: no NUL inside one, so the boundaries are unambiguous
    return digest.hexdigest()


# The code a device table is built by: a change to any of it gives its disk entries a new key.
_TABLE_CODE = tuple(Path(__file__).parent.parent / name for name in (
    "engine/devices.py", "engine/constants.py", "engine/stacks.py", "engine/single_device_fit.yaml", "formulas/peaks.py", "hardware/nodes.py", "hardware/precision.py",
    "hardware/schema.py", "units.py"))
