"""Nodes: which devices share a node, the link between them, and the network between nodes.

The one node model of the time model and of pricing (an offer can run a job only over at least
the network the time model assumed, :func:`sizer.formulas.tco.offer_runs`): kept with the hardware
so that both the engine and the cost formulas can ask it without importing each other.
"""
from __future__ import annotations

from typing import NamedTuple

from sizer.choices import DeviceKind
from sizer.hardware.schema import Device


class LinkSpeed(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """A path between devices: name, bandwidth per device in one direction [B/s], latency [s], source."""

    name: str
    bandwidth: float
    latency: float
    source: str


# Where the catalog entry names no interconnect.
FALLBACK_LINK = LinkSpeed("PCIe 4.0 x16 (assumed: no interconnect in the catalog entry)", 31.5e9, 5e-6,
                     "PCI-SIG PCIe 4.0 x16: 31.5 GB/s per direction (docs/references.md [pcie])")
# Between hosts: one 400 Gb/s NDR InfiniBand NIC per GPU in data-centre nodes (DGX H100: 8 x
# ConnectX-7 for 8 GPUs); one 100 Gb/s Ethernet port per host elsewhere.
DATACENTRE_NETWORK = LinkSpeed("InfiniBand NDR, 400 Gb/s per device (assumed)", 50e9, 5e-6,
                          "DGX H100 user guide: 8 x 400 Gb/s ConnectX-7 for 8 GPUs (docs/references.md [dgx-h100])")
OFFICE_NETWORK = LinkSpeed("100 Gb/s Ethernet per host (assumed)", 12.5e9, 20e-6,
                      "IEEE 802.3 100GBASE: 12.5 GB/s per direction per host (docs/references.md [ethernet])")

DATACENTRE_DEVICES_PER_NODE = 8  # DGX/HGX nodes (docs/references.md [dgx-h100])
WORKSTATION_DEVICES_PER_NODE = 4  # a 4-GPU PCIe workstation


def device_link(device: Device) -> LinkSpeed:
    """The link between devices of one node, from the catalog entry.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    LinkSpeed
        Name, bandwidth per direction [B/s], latency [s] and source; PCIe 4.0 x16 where the
        entry names no interconnect.

    References
    ----------
    [pcie]
    """
    if device.interconnect is None:
        return FALLBACK_LINK
    bandwidth = device.interconnect.bandwidth.si("interconnect.bandwidth", "[information]/[time]")  # B/s
    return LinkSpeed(device.interconnect.name, bandwidth, FALLBACK_LINK.latency,
                device.interconnect.bandwidth.source)


def bridge_link(device: Device) -> tuple[float, int]:
    """The NVLink bridge joining a few of these PCIe cards (H100 NVL: pairs), where the catalog names one.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    bandwidth : float
        Per device, one direction, among the bridged cards [B/s]; 0 without a bridge.
    devices : int
        Cards one bridge joins [1]; 1 without a bridge.
    """
    link = device.interconnect
    if link is None or link.bridge is None:
        return 0.0, 1
    return link.bridge.si("interconnect.bridge", "[information]/[time]"), link.bridge_devices


def node_layout(device: Device) -> tuple[int, LinkSpeed]:
    """Devices per node (the scale-up domain) and the network between nodes.

    Data-centre parts with a scale-up fabric (NVLink, Infinity Fabric, ICI) sit 8 to a node with a
    400 Gb/s NIC each, or as many as the catalog's ``interconnect.domain`` says share the fabric
    (GB200 NVL72: 72 GPUs on one NVLink switch domain); other GPUs 4 to a workstation on 100 Gb/s
    Ethernet; a CPU is its own node.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    devices_per_node : int
        Devices in one node (one scale-up domain) [1].
    network : LinkSpeed
        The network between nodes, bandwidth per device [B/s] and latency [s].

    References
    ----------
    [dgx-h100], [ethernet]
    """
    link = device_link(device)
    if device.kind is DeviceKind.CPU:
        return 1, OFFICE_NETWORK
    if not link.name.lower().startswith("pcie"):
        domain = device.interconnect.domain if device.interconnect is not None else None
        if domain is not None:
            return int(domain.value), DATACENTRE_NETWORK
        return DATACENTRE_DEVICES_PER_NODE, DATACENTRE_NETWORK
    return WORKSTATION_DEVICES_PER_NODE, OFFICE_NETWORK
