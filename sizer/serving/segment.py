"""The market segment a device is sold for: the data centre, a workstation, or a consumer's desk.

A production serving ranking (`sizer recommend --inference`) searches data-centre devices by default; the
segment says which those are, from the vendor's own product line as the device's name gives it:

- **data-centre**: accelerators (TPU, Gaudi); NVIDIA's data-centre lines (the class
  :func:`sizer.runtimes.device_class.device_class` calls ``nvidia-datacentre``: HBM parts, Tesla, A10/A16/A2/A30/A40,
  L4/L20/L40/L40S, the RTX PRO 6000 Server Edition) except the TITAN cards; AMD Instinct; server CPUs (Xeon, EPYC,
  Grace, Graviton, Altra).
- **workstation**: NVIDIA's professional desk-side boards (Quadro, RTX Axxxx, RTX ... Ada Generation, RTX PRO
  Workstation Edition, the DGX Spark), AMD Radeon PRO, Intel Arc Pro, Threadripper and Xeon W CPUs.
- **consumer**: everything else: GeForce and TITAN (NVIDIA's GeForce driver licence does not permit
  data-centre deployment: "No Datacenter Deployment", NVIDIA GeForce Software License Agreement), Radeon,
  Arc, Apple silicon, laptop and desktop CPUs.

>>> from sizer.hardware.catalog import load_catalog
>>> [segment(load_catalog().find(d)) for d in ("h100-sxm5-80gb", "rtx-6000-ada", "rtx-3090", "mi300x", "titan-v")]
['data-centre', 'workstation', 'consumer', 'data-centre', 'consumer']
"""
from __future__ import annotations

import re
from typing import Literal

from sizer.choices import DeviceKind
from sizer.hardware.schema import Device
from sizer.runtimes.device_class import device_class

Segment = Literal["data-centre", "workstation", "consumer"]
SEGMENTS: tuple[Segment, ...] = ("data-centre", "workstation", "consumer")

# Why a production ranking leaves each segment out (said in the answer)
LEFT_OUT_REASON: dict[Segment, str] = {
    "workstation": "desk-side professional boards (Quadro, RTX A/Ada/PRO Workstation, Radeon PRO, Arc Pro), sold for "
                   "one workstation; the vendors sell data-centre lines for servers",
    "consumer": "consumer cards and machines (GeForce, TITAN, Radeon, Arc, Apple, desktop CPUs); NVIDIA's GeForce "
                "driver licence does not permit data-centre deployment (GeForce Software License Agreement, "
                "'No Datacenter Deployment')",
}
SOURCE = ("the vendor's product line as the device's name gives it (sizer/serving/segment.py); NVIDIA GeForce "
          "Software License Agreement ('No Datacenter Deployment')")

_NVIDIA_WORKSTATION = re.compile(r"\bquadro\b|\brtx a\d{4}\b|\brtx \d{4} ada\b|workstation edition|dgx spark")
_SERVER_CPU = re.compile(r"\b(xeon|epyc|grace|graviton|altra)\b")
_WORKSTATION_CPU = re.compile(r"\bthreadripper\b|\bxeon w\d")


def segment(device: Device) -> Segment:
    """The segment ``device`` is sold for (module docstring).

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    str
        ``data-centre``, ``workstation`` or ``consumer``.
    """
    name = device.name.lower()
    if device.kind is DeviceKind.ACCELERATOR:
        return "data-centre"
    if device.kind is DeviceKind.CPU:
        if _WORKSTATION_CPU.search(name):
            return "workstation"
        return "data-centre" if _SERVER_CPU.search(name) else "consumer"
    family = device_class(device)
    if family == "nvidia-datacentre":
        return "consumer" if "titan" in name else "data-centre"
    if family == "nvidia-consumer":
        return "workstation" if _NVIDIA_WORKSTATION.search(name) else "consumer"
    if family == "amd":
        return "data-centre" if "instinct" in name else "workstation" if "radeon pro" in name else "consumer"
    if family == "intel":
        return "data-centre" if "data center" in name else "workstation" if "arc pro" in name else "consumer"
    return "consumer"
