"""What `sizer recommend --inference` searches over, offline and under load alike: the catalog's
devices of the kinds asked, and devices per replica in powers of two.

>>> device_counts(8).tolist()
[1.0, 2.0, 4.0, 8.0]
>>> device_counts(6, limit=2).tolist()  # at most 6, and no more than a limit such as the model's heads
[1.0, 2.0]
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from sizer.errors import InputError
from sizer.hardware.schema import Device, DeviceKind
from sizer.passes.moe_decode import MoeLayout, runtime_layouts
from sizer.runtimes.runtime import Runtime
from sizer.workloads.architecture import Architecture


def devices_of_kinds(catalog: Iterable[Device], kinds: Sequence[DeviceKind]) -> tuple[Device, ...]:
    """The catalog's devices of the kinds asked, in catalog order.

    Parameters
    ----------
    catalog : iterable of Device
        The catalog (:class:`sizer.hardware.catalog.Catalog`).
    kinds : sequence of DeviceKind
        Device kinds to search: ``gpu``, ``accelerator``, ``cpu``.

    Returns
    -------
    tuple of Device

    Raises
    ------
    InputError
        Naming ``kinds`` where the catalog has no device of them.
    """
    devices = tuple(d for d in catalog if d.kind in kinds)
    if not devices:
        raise InputError("kinds", kinds, "kinds of device the catalog has")
    return devices


def device_counts(max_devices: int, limit: float = np.inf) -> npt.NDArray[np.float64]:
    """Devices per replica searched: 1, 2, 4 ... up to ``max_devices`` and no more than ``limit``.

    Parameters
    ----------
    max_devices : int
        The largest tensor-parallel group (or layer split) asked [1].
    limit : float
        A bound the model sets, such as its attention heads or its layers [1].

    Returns
    -------
    ndarray
        Powers of two as floats [1].
    """
    counts = np.exp2(np.arange(int(np.log2(max_devices)) + 1))
    return counts[counts <= limit]


def moe_layouts(arch: Architecture, count: int, runtime: Runtime) -> tuple[MoeLayout, ...]:
    """The expert and attention splits searched for ``arch`` on ``count`` devices under ``runtime``: tensor parallel,
    and for a mixture the runtime's expert parallelism over the replica (``count`` dividing the experts) and its
    data-parallel attention (SGLang and vLLM; :func:`sizer.passes.moe_decode.runtime_layouts`).

    Parameters
    ----------
    arch : Architecture
        The model.
    count : int
        Devices per replica [1].
    runtime : Runtime
        The serving runtime (its profile's ``parallelism``).

    Returns
    -------
    tuple of MoeLayout
        Tensor parallel first.
    """
    parallelism = runtime.profile.parallelism if runtime.profile is not None else frozenset({"tensor"})
    return runtime_layouts(arch, count, parallelism)
