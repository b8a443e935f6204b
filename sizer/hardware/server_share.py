"""The server share of a device bought alone, so that buying is priced like for like with renting.

A rented GPU-hour includes the server it sits in (CPUs, memory, chassis, the node's network cards) and
its power; a catalog purchase price is either the device alone (an H100 SXM at about 30,000 USD, a card
or module: ``scope: gpu``) or a device's share of a whole machine (a Lenovo server of eight H100 NVL at
833,806 USD, about 104,000 USD a GPU: ``scope: system-share``). To compare the two, the buy side adds a
server share to a price of the device alone.

No document in ``../shared/data`` prices a server without its GPUs, so the share is derived from the
catalog's own pairs: a device priced both alone and inside a machine of several devices (a DGX A100 at
200,000 USD for eight A100 40GB, each about 20,000 USD alone) gives the fraction the machine adds,
``per-device system price / price alone - 1``. Each pair cites the two quotes it is made of; the share
is their median, ``verified: false`` (derived by a rule, from quotes of different dates and sources).

What stays out, and is said so wherever the share is used: the network between nodes (switches,
cables; no price for them in ``../shared/data``) and the host's own power beyond the device's TDP (no
figure either); a site's cooling and distribution overhead is the PUE the energy already counts.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from sizer.choices import DeviceKind
from sizer.memo import registered_cache

if TYPE_CHECKING:
    from sizer.hardware.schema import Device, Price

NOT_PRICED = ("network between nodes (switches, cables) not priced: ../shared/data has no price for it, so a "
              "bought cluster of several nodes costs at least this; the host's own power beyond the devices' TDP is "
              "not counted either (no figure), PUE covers the site's overhead")
"""What the buy side leaves out, in words, beside the server share it adds."""


def purchase_per_device(price: Price) -> float:
    """A purchase price per device: a system's price (an HGX node, an NVL72 rack) over its devices.

    Parameters
    ----------
    price : Price
        A catalog purchase price, of one device or of a system of ``devices_in_system``.

    Returns
    -------
    float
        The price of one device [USD].

    Examples
    --------
    >>> from sizer.hardware.schema import Price
    >>> purchase_per_device(Price(value="515000 USD", date="2025", source="s", devices_in_system=8))
    64375.0
    """
    return price.si("purchase_price", "[currency]") / price.devices_in_system


@dataclass(frozen=True)
class SharePair:
    """One device priced alone and inside a machine of several: the fraction the machine adds.

    ``per_device`` and ``alone`` are in USD; ``fraction`` = per_device / alone - 1.
    """

    device: str
    system: str
    per_device: float
    alone: float
    fraction: float
    source: str

    def words(self) -> str:
        """The pair in words, e.g. "a100-40gb-sxm4: DGX A100 ... 25,000 USD a device over 20,000 USD alone (+25%)".

        Returns
        -------
        str
            The device, the system, both prices per device [USD], the share and the source.
        """
        return (f"{self.device}: {self.system} at {self.per_device:,.0f} USD a device over {self.alone:,.0f} USD alone "
                f"(+{self.fraction:.0%}; {self.source})")

    def brief(self) -> str:
        """The pair in a few words; `sizer catalog show DEVICE` cites each quote.

        Returns
        -------
        str
            The device, the system and both prices per device [USD] with the share.
        """
        return f"{self.device}: {self.system} {self.per_device:,.0f} USD a device / {self.alone:,.0f} USD alone = +{self.fraction:.0%}"


@dataclass(frozen=True)
class ServerShare:
    """The server share as a fraction of a device's price alone, with the pairs it is the median of."""

    fraction: float
    pairs: tuple[SharePair, ...]
    verified: bool = False  # derived by a rule from quotes of different dates and sources

    @property
    def source(self) -> str:
        """Where the fraction comes from: the rule and each pair with its two quotes."""
        return ("derived (verified: false): the median of the catalog's devices priced both alone and as a share of a "
                "machine of several (docs/prices.md, 'Server share'; sizer catalog show DEVICE cites each quote): "
                + "; ".join(p.brief() for p in self.pairs))


def _pair(device: Device, alone: Price, system: Price) -> SharePair | None:

    per_device, single = purchase_per_device(system), purchase_per_device(alone)
    if single <= 0 or per_device <= single:
        return None
    return SharePair(device=device.id, system=system.system or "system", per_device=per_device, alone=single,
                     fraction=per_device / single - 1,
                     source=f"{system.source} ({system.date}) over {alone.source} ({alone.date})")  # full citations


def derive_server_share(devices: Iterable[Device]) -> ServerShare | None:
    """The server share from every device priced both alone and as a share of a machine of several devices.

    Parameters
    ----------
    devices : iterable of Device
        Catalog devices with their purchase quotes.

    Returns
    -------
    ServerShare or None
        The median fraction [1] a machine adds over a device's price alone, with its pairs; None where no
        device is priced both ways.

    Notes
    -----
    A pair is a device whose costing price (``purchase_price``) is of the device alone (``scope: gpu``, one
    device) and one of its quotes is of a machine of several that holds its host (``scope: system-share``).
    A machine of one device (a Mac) has no device-alone price to pair with.
    """
    pairs = []
    for device in devices:
        alone = device.purchase_price
        if alone is None or alone.scope != "gpu" or alone.devices_in_system != 1:
            continue
        for quote in (device.purchase_price, *device.purchase_prices):
            if quote is not None and quote.scope == "system-share" and quote.devices_in_system > 1:
                pair = _pair(device, alone, quote)
                if pair is not None:
                    pairs.append(pair)
    if not pairs:
        return None
    return ServerShare(fraction=statistics.median(p.fraction for p in pairs), pairs=tuple(pairs))


@registered_cache()
def catalog_server_share() -> ServerShare | None:
    """:func:`derive_server_share` of the built-in catalog (worked out once a process).

    Returns
    -------
    ServerShare or None
        The median share of the catalog's devices priced both alone and as a share of a system; None
        where no device is priced both ways.
    """
    from sizer.hardware.catalog import load_catalog

    return derive_server_share(load_catalog())


@dataclass(frozen=True)
class OwnedPrice:
    """What owning one device costs up front: its price [USD], the server share added [USD] and why."""

    per_device: float  # price per device plus the server share [USD]
    share: float  # the server share added [USD]; 0 where the price holds its host or none is added
    scope: str  # the quote's scope: "gpu", "system-share", or "given"
    note: str  # the share in words, with its source


def owned_price(device: Device, price: Price, *, host_given: bool = False,
                share: ServerShare | None = None) -> OwnedPrice:
    """A device's purchase price per device with the server share added where the price is of the device alone.

    Parameters
    ----------
    device : Device
        The catalog device.
    price : Price
        Its purchase quote.
    host_given : bool, default False
        Whether the user gave the capital for hosts (``--host-share``): then no share is derived.
    share : ServerShare, optional
        The server share; default :func:`catalog_server_share`.

    Returns
    -------
    OwnedPrice
        Price per device [USD] with the share [USD] added to a ``gpu``-scope price of a GPU or accelerator
        (not a CPU: a server CPU is the host), and the share in words with its source.

    """
    alone = purchase_per_device(price)
    if price.scope == "system-share":
        return OwnedPrice(alone, 0.0, "system-share", f"a share of {price.system or 'a whole machine'}: its host is in the price")
    if host_given:
        return OwnedPrice(alone, 0.0, "gpu", "the device alone; the host capital given (--host-share) stands for its server")
    if device.kind is DeviceKind.CPU:
        return OwnedPrice(alone, 0.0, "gpu", "a CPU: it is the host; no server share added")
    share = share if share is not None else catalog_server_share()
    if share is None:
        return OwnedPrice(alone, 0.0, "gpu", "the device alone; no server share known (no device priced both ways)")
    added = alone * share.fraction
    return OwnedPrice(alone + added, added, "gpu",
                      f"the device alone: a server share of {share.fraction:.0%} ({added:,.0f} USD) added; "
                      f"{share.source}")
