"""Device classes local-inference accuracy is reported by (issue 40): consumer and data-centre NVIDIA, AMD,
Apple, Intel GPUs, and CPUs.

A local runtime's kernels are fitted per device family (:func:`sizer.runtimes.local_runtimes.device_family`);
the class splits NVIDIA further, because llama.cpp's kernels are tuned on GeForce cards and data-centre
cards differ in the ways that matter to them: HBM instead of GDDR (several times the bandwidth per SM), lower
clocks, ECC on by default. A card is data-centre NVIDIA when its memory is HBM or its name is one of the
data-centre lines with GDDR memory (Tesla, A10/A10G/A16/A2/A30/A40, L4/L20/L40/L40S, the RTX PRO 6000 Server
Edition); every other NVIDIA GPU, workstation RTX cards and the DGX Spark's GB10 included, is consumer.

>>> from sizer.hardware.catalog import load_catalog
>>> [device_class(load_catalog().find(d)) for d in ("rtx-4090", "l40s", "a100-80gb-sxm4", "ryzen-9-7950x")]
['nvidia-consumer', 'nvidia-datacentre', 'nvidia-datacentre', 'cpu']
"""
from __future__ import annotations

import re

from sizer.hardware.schema import Device
from sizer.runtimes.local_runtimes import device_family

CLASSES = ("nvidia-consumer", "nvidia-datacentre", "amd", "apple", "intel", "cpu", "other")
# classes no local-runtime run of ../shared/data/local-inference-measurements.csv is on (benchmarks/
# local_inference_run_sources.csv; tests/sizer/runtimes/test_device_class.py checks it): an answer there says its
# kernels are its family's, not scored on the class
UNMEASURED_CLASSES = frozenset({"nvidia-datacentre", "intel", "other"})
# the data-centre NVIDIA lines whose memory is GDDR (the HBM ones are found by their memory type)
_DATACENTRE_GDDR = re.compile(r"\b(tesla|a10g?|a16|a2|a30|a40|l4|l20|l40s?)\b|server edition")


def device_class(device: Device) -> str:
    """The class a device's local-inference accuracy is reported in.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    str
        One of :data:`CLASSES`.
    """
    family = device_family(device)  # the vendor, as the kernels are fitted; NVIDIA split further here
    if family != "nvidia":
        return family
    hbm = device.memory_type.upper().startswith("HBM")
    return "nvidia-datacentre" if hbm or _DATACENTRE_GDDR.search(device.name.lower()) else "nvidia-consumer"
