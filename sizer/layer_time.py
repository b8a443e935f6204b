"""Per-layer roofline time of a training step (spec §3.3, issue: a time model that matches measurements).

Per layer and per device: the compute-bound time (FLOP at the precision's peak times an
efficiency: matrix units for matmul/conv/attention, vector units for the rest) against the
memory-bound time (bytes at the memory bandwidth times an efficiency), and against the time to
launch its kernels; the largest of the three. A step adds the optimizer update (memory-bound),
a fixed per-step overhead and, on several devices, the gradient all-reduce.

Internally everything is in seconds, FLOP and bytes as plain floats: units are converted once,
where device figures enter (:func:`device_rates`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from sizer.catalog_schema import Device
from sizer.deadline import check_deadline
from sizer.errors import InputError
from sizer.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, storage_scale, weight_bytes
from sizer.profile import MATRIX_KINDS, Profile
from sizer.throughput import device_peak, stated_peak
from sizer.workload import OPTIMIZER_STATES

BACKWARD_FLOP_FACTOR = 3.0  # forward + backward = 3 x forward (seed 004 eq. 3, O_b)
BACKWARD_BYTE_FACTOR = 3.0  # the backward pass reads activations and gradients and writes gradients
BACKWARD_KERNEL_FACTOR = 3.0
OPTIMIZER_STATE_BYTES = 4


@dataclass(frozen=True)
class Efficiencies:
    """Fractions of the datasheet rates that training kernels reach, and fixed costs.

    Matrix layers (matmul, conv, attention) reach a different fraction of peak on each kind of
    unit: ``matrix`` of the 16- and 8-bit tensor-core peak, ``tf32`` of the TF32 tensor-core
    peak, ``fp32_matrix`` of the FP32 vector peak (SGEMM on CUDA cores or CPU SIMD).
    ``vector``: of the FP32 vector peak, for every other layer; ``memory``: of the memory
    bandwidth; ``launch``: seconds per kernel (a GPU runs no faster than its launches);
    ``step_overhead``: seconds per optimizer step outside the kernels.
    """

    matrix: float
    tf32: float
    fp32_matrix: float
    vector: float
    memory: float
    launch: float
    step_overhead: float
    source: str

    def __post_init__(self) -> None:
        for name in ("matrix", "tf32", "fp32_matrix", "vector", "memory"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InputError(f"efficiency.{name}", value, "a fraction of peak above 0 and at most 1")
        if self.launch < 0 or self.step_overhead < 0:
            raise InputError("efficiency", (self.launch, self.step_overhead), "non-negative times")

    def scaled(self, factor: float, source: str) -> "Efficiencies":
        """Every rate efficiency divided by ``factor`` (factor > 1: slower), capped at 1."""
        rates = {name: min(1.0, getattr(self, name) / factor) for name in ("matrix", "tf32", "fp32_matrix", "vector", "memory")}
        return replace(self, **rates, launch=self.launch * factor, source=source)


# GPU defaults fitted once, by `benchmarks/accuracy.py --fit`, to the published measurements in
# benchmarks/published_measurements.csv (ResNet-50 and BERT on 11 NVIDIA GPUs; NVIDIA
# DeepLearningExamples and Lambda); see benchmarks/ACCURACY.md for the out-of-sample check.
GPU_EFFICIENCIES = Efficiencies(matrix=0.4, tf32=0.4, fp32_matrix=0.85, vector=0.6, memory=0.7, launch=2e-5,
                                step_overhead=1e-3,
                                source="defaults fitted to published GPU training measurements (benchmarks/ACCURACY.md)")
# CPU defaults from `sizer calibrate` on 24 quick-mode validation runs measured without competing
# load on a 2-core AMD EPYC (AVX2) VM, 2026-11-22: kernels at 0.70-0.71 of the time that
# 0.5/0.6 efficiencies give, 1.8-2.6 ms per step outside the kernels.
CPU_EFFICIENCIES = Efficiencies(matrix=0.7, tf32=0.7, fp32_matrix=0.7, vector=0.7, memory=0.85, launch=2e-6,
                                step_overhead=2e-3,
                                source="defaults calibrated on this project's CPU validation runs (sizer/layer_time.py)")


def default_efficiencies(device: Device) -> Efficiencies:
    return CPU_EFFICIENCIES if device.kind == "cpu" else GPU_EFFICIENCIES


Unit = str  # "tensor" (16/8-bit tensor cores), "tf32" (TF32 tensor cores) or "fp32" (vector units)
NO_MATRIX_UNITS = ("Kepler", "Maxwell", "Pascal")  # GPU generations without tensor cores


@dataclass(frozen=True)
class DeviceRates:
    """A device's rates in plain SI floats for one precision."""

    matrix_peak: float  # FLOP/s for matmul and attention at the training precision
    matrix_unit: Unit
    conv_peak: float  # FLOP/s for convolutions (TF32 where PyTorch uses it by default for FP32)
    conv_unit: Unit
    vector_peak: float  # FLOP/s of the FP32 vector units
    bandwidth: float  # B/s
    storage_scale: float  # activation bytes relative to FP32 storage
    notes: tuple[str, ...] = field(default_factory=tuple)


def device_rates(device: Device, precision: str) -> DeviceRates:
    """Peaks and bandwidth of ``device`` for ``precision``, as plain floats.

    FP32 training on a device with TF32 tensor cores runs convolutions in TF32: cuDNN's
    ``torch.backends.cudnn.allow_tf32`` defaults to True in PyTorch, matmuls' to False.
    """
    matrix, _ = device_peak(device, precision)
    fp32, _ = device_peak(device, "fp32") if "fp32" in device.peaks or device.fp32_cores or device.cores \
        else (matrix, "")
    notes = []
    has_matrix_units = device.kind != "cpu" and not any(a in device.architecture for a in NO_MATRIX_UNITS)
    unit = "fp32" if precision == "fp32" or not has_matrix_units else ("tf32" if precision == "tf32" else "tensor")
    conv, conv_unit = matrix, unit
    tf32 = stated_peak(device, "tf32")
    if precision == "fp32" and tf32 is not None and has_matrix_units:
        conv, conv_unit = tf32, "tf32"
        notes.append("FP32 convolutions on TF32 tensor cores (PyTorch's cuDNN default)")
    bandwidth = device.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]")
    scale = storage_scale(precision)
    return DeviceRates(matrix_peak=float(matrix.to("FLOP/s").magnitude), matrix_unit=unit,
                       conv_peak=float(conv.to("FLOP/s").magnitude), conv_unit=conv_unit,
                       vector_peak=float(fp32.to("FLOP/s").magnitude), bandwidth=float(bandwidth.to("B/s").magnitude),
                       storage_scale=scale, notes=tuple(notes))


@dataclass(frozen=True)
class LayerTime:
    name: str
    kind: str
    seconds: float
    bound: str  # compute | memory | launch


def layer_times(profile: Profile, rates: DeviceRates, efficiency: Efficiencies, micro_batch: float) -> list[LayerTime]:
    """Forward + backward time of every layer for ``micro_batch`` samples on one device."""
    unit_efficiency = {"tensor": efficiency.matrix, "tf32": efficiency.tf32, "fp32": efficiency.fp32_matrix}
    times = []
    for layer in profile.layers:
        check_deadline()
        flops = BACKWARD_FLOP_FACTOR * layer.forward_flops * micro_batch
        if layer.kind == "conv":
            compute = flops / (rates.conv_peak * unit_efficiency[rates.conv_unit])
        elif layer.kind in MATRIX_KINDS:
            compute = flops / (rates.matrix_peak * unit_efficiency[rates.matrix_unit])
        else:
            compute = flops / (rates.vector_peak * efficiency.vector)
        weights = layer.params * 4 * rates.storage_scale * BACKWARD_BYTE_FACTOR
        moved = BACKWARD_BYTE_FACTOR * layer.bytes * micro_batch * rates.storage_scale + weights
        memory = moved / (rates.bandwidth * efficiency.memory)
        launch = layer.kernels * BACKWARD_KERNEL_FACTOR * efficiency.launch
        seconds = max(compute, memory, launch)
        bound = "compute" if seconds == compute else ("memory" if seconds == memory else "launch")
        times.append(LayerTime(layer.name, layer.kind, seconds, bound))
    return times


def optimizer_seconds(params: float, precision: str, optimizer: str, bandwidth: float, efficiency: Efficiencies) -> float:
    """The optimizer update reads and writes weights, master weights and states once per step."""
    copy = weight_bytes(precision)
    master = MASTER_WEIGHT_BYTES if precision in MIXED_PRECISIONS else 0
    states = OPTIMIZER_STATES[optimizer] * OPTIMIZER_STATE_BYTES
    moved = params * (2 * copy + copy + 2 * master + 2 * states)
    return moved / (bandwidth * efficiency.memory)
