"""Host-side needs: RAM for the data set and the storage read rate that feeds the devices
(spec §3.9; seed 003, sections on CPU, memory and storage).

>>> from sizer.units import Quantity
>>> required_read_rate(Quantity(2000, "sample/s"), Quantity(150, "kB")).to("MB/s")
<Quantity(300.0, 'megabyte / second')>
"""
from __future__ import annotations

from typing import Any

import pint

from sizer.errors import InputError
from sizer.results import Assumption, Model, QuantityOut
from sizer.units import Quantity

# Typical sequential read rates of one drive; seed 003 recommends a RAM disk or RAID 0/10.
STORAGE_READ_RATES: dict[str, tuple[pint.Quantity[Any], str]] = {
    "hdd": (Quantity(200, "MB/s"), "7200-15000 rpm drives read about 150-250 MB/s sequentially (vendor datasheets)"),
    "sata-ssd": (Quantity(550, "MB/s"), "SATA III carries 6 Gbit/s, about 550-600 MB/s of payload"),
    "nvme": (Quantity(3.5, "GB/s"), "PCIe 3.0 x4 NVMe drives read about 3.5 GB/s (PCIe 4.0: about 7)"),
    "ramdisk": (Quantity(10, "GB/s"), "assumed: a RAM disk reads at a fraction of DRAM bandwidth"),
}


def dataset_bytes(samples: float, sample_size: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""RAM that holds the whole data set.

    .. math::

        M = S \cdot b

    Parameters
    ----------
    samples : float
        Samples in the data set S [1].
    sample_size : pint.Quantity
        Bytes per sample b [B].

    Returns
    -------
    pint.Quantity
        The data set's size [GB].

    References
    ----------
    [spec-3.9], [seed-003]
    """
    size: pint.Quantity[Any] = (samples * sample_size).to("GB")
    return size


def required_read_rate(throughput: pint.Quantity[Any], sample_size: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""Storage read rate that keeps the devices fed.

    .. math::

        r = \text{throughput} \cdot b

    Parameters
    ----------
    throughput : pint.Quantity
        Training throughput [sample/s].
    sample_size : pint.Quantity
        Bytes per sample b [B].

    Returns
    -------
    pint.Quantity
        The read rate the storage must sustain [GB/s].

    References
    ----------
    [spec-3.9]
    """
    rate: pint.Quantity[Any] = (throughput * sample_size / Quantity(1, "sample")).to("GB/s")
    return rate


class HostResult(Model):
    dataset_memory: QuantityOut
    required_read_rate: QuantityOut
    storage: str
    storage_read_rate: QuantityOut
    storage_keeps_up: bool
    advice: str
    assumptions: list[Assumption]


def estimate_host(samples: float, sample_size: pint.Quantity[Any], throughput: pint.Quantity[Any],
                  storage: str = "nvme") -> HostResult:
    """Whether the host can hold the data set in RAM and read it fast enough from its storage.

    Parameters
    ----------
    samples : float
        Samples in the data set [1].
    sample_size : pint.Quantity
        Bytes per sample [B].
    throughput : pint.Quantity
        The fastest training throughput to feed [sample/s].
    storage : str, default ``"nvme"``
        Storage class: ``hdd``, ``sata-ssd``, ``nvme`` or ``ramdisk`` (typical read rates in
        ``STORAGE_READ_RATES``, each with its source).

    Returns
    -------
    HostResult
        The data set's size [GB], the needed and the available read rates [GB/s], whether the
        storage keeps up, advice and the assumptions.

    Raises
    ------
    InputError
        An unknown storage class.

    References
    ----------
    [spec-3.9], [seed-003]
    """
    if storage not in STORAGE_READ_RATES:
        raise InputError("storage", storage, f"one of {', '.join(STORAGE_READ_RATES)}")
    rate, source = STORAGE_READ_RATES[storage]
    needed = required_read_rate(throughput, sample_size)
    keeps_up = bool(needed <= rate)
    memory = dataset_bytes(samples, sample_size)
    advice = (f"{storage} keeps up" if keeps_up else
              f"{storage} is too slow: cache the {memory.to('GB'):.3g~P} data set in RAM, or use a faster class or RAID 0/10 (seed 003)")
    return HostResult(dataset_memory=QuantityOut.of(memory, "GB"), required_read_rate=QuantityOut.of(needed, "GB/s"),
                      storage=storage, storage_read_rate=QuantityOut.of(rate, "GB/s"), storage_keeps_up=keeps_up,
                      advice=advice, assumptions=[Assumption(name="storage read rate", value=f"{rate:~P}", source=source),
                                                  Assumption(name="throughput", value=f"{throughput.to('sample/s'):.4g~P}",
                                                             source="the time estimate's fastest (low-time) end")])
