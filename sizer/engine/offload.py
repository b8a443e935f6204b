"""Host memory for ZeRO-Offload: the optimizer states and FP32 master weights that leave the devices
must fit in the RAM of the host they sit in (Ren et al. 2021, docs/references.md [zero-offload]).

The host's RAM is, in this order: the figure given (``--host-memory``), the catalog node type's
(``--system``, where a public document states it), or an assumed floor: as much RAM as the memory
of the devices the host holds (servers built for training carry more: a DGX H100 has 2 TB for
640 GB of HBM), said as an assumption so that a user with more gives the figure.
"""
from __future__ import annotations

from dataclasses import dataclass

from sizer.results import Assumption, unit_factor


@dataclass(frozen=True)
class HostMemory:
    """One host's offloaded bytes against its RAM."""

    devices: int  # devices on the host [1]
    needed: float  # offloaded bytes of those devices [B]
    capacity: float  # RAM of the host [B]
    basis: str  # where the capacity comes from

    @property
    def fits(self) -> bool:
        """Whether the host holds what its devices offload.

        Returns
        -------
        bool
            ``needed <= capacity``.
        """
        return self.needed <= self.capacity

    def warning(self) -> str:
        """The sentence that says the host cannot hold the offloaded states.

        Returns
        -------
        str
            Needed and available host memory [GB], and what to give.
        """
        gb = unit_factor("B", "GB")
        return (f"does not fit in host memory: ZeRO-Offload puts {self.needed * gb:.3g} GB of optimizer states and "
                f"master weights on a host of {self.devices} device(s), which has {self.capacity * gb:.3g} GB "
                f"({self.basis}); give --host-memory if it has more")

    def assumption(self) -> Assumption:
        """The host-memory check, as an assumption of the answer.

        Returns
        -------
        Assumption
            Needed and available host memory and the basis of the latter.
        """
        gb = unit_factor("B", "GB")
        return Assumption(name="host memory", value=f"{self.needed * gb:.3g} GB offloaded by {self.devices} device(s) per "
                          f"host, of {self.capacity * gb:.3g} GB ({self.basis})",
                          source="Ren et al. 2021 (docs/references.md [zero-offload]): states and master weights in host "
                                 "RAM", verified=self.basis.startswith("given"))


def host_memory(offloaded_per_device: float, count: int, devices_per_node: int, device_memory: float,
                given: float | None = None, node: tuple[float, str] | None = None) -> HostMemory:
    """Offloaded bytes per host against the host's RAM (module docstring).

    Parameters
    ----------
    offloaded_per_device : float
        Optimizer states and master weights each device offloads [B].
    count : int
        Devices of the job [1].
    devices_per_node : int
        Devices a host holds [1].
    device_memory : float
        Memory of one device [B].
    given : float, optional
        RAM of a host, as the user gave it [B].
    node : tuple of (float, str), optional
        RAM of the catalog node type's host [B] and its source.

    Returns
    -------
    HostMemory
        Devices per host, bytes needed and available [B], and the basis of the latter.

    References
    ----------
    [zero-offload]
    """
    devices = max(1, min(int(count), int(devices_per_node)))
    needed = offloaded_per_device * devices
    if given is not None:
        return HostMemory(devices, needed, given, "given")
    if node is not None:
        return HostMemory(devices, needed, node[0], f"the node type's: {node[1]}")
    return HostMemory(devices, needed, device_memory * devices,
                      "assumed: as much as the memory of its devices, a floor for a training host")
