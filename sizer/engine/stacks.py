"""What one device's kernels reach when it trains a profiled network: mechanisms fitted across sources.

A profiled workload (a torchvision CNN, BERT from ``catalog/workloads``) runs eager, one kernel per
operation, through its vendor's kernel library. Its per-layer times follow from the device's peaks
(:mod:`sizer.engine.devices` picks the unit: 16-bit tensor/matrix units, TF32 on Ampere and later,
FP32 vector units on Kepler/Maxwell/Pascal and wherever no matrix unit exists) and from these fitted
figures, none of them one constant per card or per source:

- the share of each kind of unit's peak that its large kernels reach (``matrix``: 16-bit tensor cores,
  AMD WMMA/matrix cores; ``tf32``; ``fp32_matrix``: SGEMM/convolutions on FP32 units), and how it falls
  with a kernel's size on every one of those units (``matrix_half``: a kernel of ``x`` FLOP reaches
  ``x / (x + matrix_half)`` of it; a batch-12 convolution fills few waves of the GPU), of memory
  bandwidth (``memory``), and the time each kernel costs its host (``launch``: eager dispatch; the
  floor that batch-12 runs on fast GPUs sit on);
- one factor per kernel library on every compute rate (``library``): cuDNN (NVIDIA) is 1 by
  definition, MIOpen/rocBLAS (AMD), MPS (Apple GPUs) and the CPU libraries (oneDNN/MKL, Accelerate)
  are fitted on the runs of their devices in the sources that have them.

The figures live in ``single_device_fit.yaml``, written by ``benchmarks/single_device_accuracy.py
--fit`` from every source of ``../shared/data`` (``measured-benchmarks.csv`` through
``benchmarks/published_measurements.csv``, and ``single-device-training.csv``); the same script scores
them leaving one source out, the fit redone without it (benchmarks/ACCURACY.md, "One-device training
across vendors"). Where a library has no fitted factor it is 1 (NVIDIA's), said unverified.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizer.choices import DeviceKind
from sizer.datafile import load_yaml
from sizer.hardware.schema import Device
from sizer.memo import registered_cache

FIT_FILE = Path(__file__).with_name("single_device_fit.yaml")
# the kernel library a device's vendor ships for eager training; "cudnn" is the reference
LIBRARIES = {"NVIDIA": "cudnn", "AMD": "miopen", "Apple": "mps"}
CPU_LIBRARY = "cpu"  # oneDNN/MKL on x86, Accelerate/NEON on Apple silicon: one CPU path
REFERENCE_LIBRARY = "cudnn"


def kernel_library(device: Device) -> str | None:
    """The kernel library a device trains through.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    str or None
        ``cudnn``, ``miopen``, ``mps`` or ``cpu``; None for other accelerators (TPU, Gaudi, ...).

    >>> from types import SimpleNamespace as D
    >>> kernel_library(D(kind=DeviceKind.GPU, vendor="AMD")), kernel_library(D(kind=DeviceKind.CPU, vendor="Apple"))
    ('miopen', 'cpu')
    """
    if device.kind is DeviceKind.CPU:
        return CPU_LIBRARY
    return LIBRARIES.get(device.vendor) if device.kind is DeviceKind.GPU else None


@dataclass(frozen=True)
class StackFit:
    """Fitted efficiencies of eager one-device training (fractions of peak [1], launch [s])."""

    matrix: float
    tf32: float
    fp32_matrix: float
    memory: float
    launch: float
    matrix_half: float = 0.0  # FLOP per kernel at half a matrix unit's ceiling, on every matrix unit
    library: dict[str, float] = field(default_factory=dict)  # factor on compute rates per kernel library [1]
    source: str = ""

    def factor(self, library: str | None) -> tuple[float, bool]:
        """The factor of a kernel library on every compute rate.

        Parameters
        ----------
        library : str or None
            A name of :func:`kernel_library`.

        Returns
        -------
        tuple of (float, bool)
            The factor [1] (1 for cuDNN, the reference, and for a library without fitted runs) and whether
            it rests on fitted runs (cuDNN: by definition).
        """
        if library is None or library == REFERENCE_LIBRARY:
            return 1.0, library == REFERENCE_LIBRARY
        found = self.library.get(library)
        return (1.0, False) if found is None else (found, True)

    def as_dict(self) -> dict[str, Any]:
        """The figures as written to the fit file.

        Returns
        -------
        dict
            Unit shares and memory [1], launch [s], ``matrix_half`` [FLOP], ``library`` factors [1].
        """
        return {"matrix": self.matrix, "tf32": self.tf32, "fp32_matrix": self.fp32_matrix, "memory": self.memory,
                "launch": self.launch, "matrix_half": self.matrix_half, "library": dict(self.library)}


@registered_cache()
def stack_fit() -> StackFit:
    """The committed fit (``single_device_fit.yaml``).

    Returns
    -------
    StackFit
        The fitted figures with their source.
    """
    data = load_yaml(FIT_FILE, "single_device_fit")
    fit = data["fit"]
    return StackFit(matrix=float(fit["matrix"]), tf32=float(fit["tf32"]), fp32_matrix=float(fit["fp32_matrix"]),
                    memory=float(fit["memory"]), launch=float(fit["launch"]),
                    matrix_half=float(fit.get("matrix_half", 0.0)), library={k: float(v) for k, v in fit.get("library", {}).items()}, source=str(data["source"]))
