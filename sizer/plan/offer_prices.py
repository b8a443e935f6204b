"""A recommendation's price figures per device and count, kept on disk as plain numbers.

Choosing each device's cheapest cloud offer for every count and rendering its price is ~25 ms of
``sizer recommend``'s start-up over the whole catalog (pint quantities per offer,
``benchmarks/startup.py``); the figures a recommendation scales are floats (USD, kWh per device-hour),
so they are kept in the disk cache (:mod:`sizer.diskcache`, entry kind ``offer-prices``), keyed by
the devices' catalog key, the provider, counts and terms, and every core file's stamp (the cost
formulas and their defaults are code). The offers chosen for the rows shown are worked out again
for those rows only (``sizer.plan.recommend._row_price``).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from sizer.diskcache import cached, key_of
from sizer.plan.layout_basis import core_stamps

if TYPE_CHECKING:
    from sizer.hardware.schema import Device

Cell = TypeVar("Cell")

PriceFloats = dict[str, npt.NDArray[np.float64]]


def kept_price_floats(devices_key: tuple[Hashable, ...], provider: str | None, counts: tuple[int, ...],
                      terms: tuple[str, ...], build: Callable[[], PriceFloats]) -> PriceFloats:
    """``build()``'s price arrays, read from the disk cache where a process left them.

    Parameters
    ----------
    devices_key : tuple
        What names the devices by content: their catalog's key and kinds (never an identity).
    provider : str or None
        The cloud provider asked for, or None for any.
    counts : tuple of int
        The device counts priced [1].
    terms : tuple of str
        The offer terms allowed (on-demand, spot, reserved).
    build : callable
        Works the arrays out (devices x counts for the rent, per device for the others).

    Returns
    -------
    dict
        ``build()``'s arrays, by name [USD or kWh per device-hour; USD per device for the purchase].
    """
    try:
        key = key_of(core_stamps(), repr(devices_key), provider, counts, terms)
    except OSError:  # a core file unreadable: no stamp to key by, so nothing is kept
        return build()
    return cached("offer-prices", key, build)


class OfferRows(Generic[Cell]):
    """Per device (by index) and count (by index), the offer chosen, worked out when a row first asks and then kept.

    Part of a kept price answer, shared by every caller: a cell asked by two threads at once may be worked
    out twice, to the same value (a pure function of the device, the count and the terms the answer was built for).

    Parameters
    ----------
    devices : tuple of Device
        The devices, in the price arrays' order.
    counts : tuple of int
        The device counts, in the price arrays' order [1].
    cell_of : callable
        The offer for a device at a count.
    """

    def __init__(self, devices: tuple[Device, ...], counts: tuple[int, ...],
                 cell_of: Callable[[Device, int], Cell]) -> None:
        self._devices = devices
        self._counts = counts
        self._cell_of = cell_of
        self._cells: dict[tuple[int, int], Cell] = {}

    def __getitem__(self, device: int) -> _DeviceOffers[Cell]:
        return _DeviceOffers(self, device)

    def __len__(self) -> int:
        return len(self._devices)

    def cell(self, device: int, count: int) -> Cell:
        """The offer for one device at one count, worked out on first asking.

        Parameters
        ----------
        device : int
            The device's index in ``devices`` [1].
        count : int
            The count's index in ``counts`` [1].

        Returns
        -------
        object
            What ``cell_of`` gives for them (a :class:`~sizer.formulas.tco.RentPrice` in a recommendation).
        """
        found = self._cells.get((device, count))
        if found is None:
            found = self._cells[device, count] = self._cell_of(self._devices[device], self._counts[count])
        return found


class _DeviceOffers(Generic[Cell]):  # a plain class: a dataclass is ~0.5 ms of a process's start-up to create
    """One device's offers of an :class:`OfferRows`, by count index."""

    __slots__ = ("rows", "device")

    def __init__(self, rows: OfferRows[Cell], device: int) -> None:
        self.rows = rows
        self.device = device

    def __getitem__(self, count: int) -> Cell:
        return self.rows.cell(self.device, count)
