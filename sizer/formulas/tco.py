"""Total cost of ownership of a training run, buy against rent (spec §3.4; seed 004 §3.3.4).

The seed asks for "a reasonable range and order of magnitude" of capital plus operational
cost; every assumption below is shown in the result and can be overridden.

>>> from sizer.units import Quantity
>>> energy_cost(Quantity(300, "W"), 8, Quantity(100, "hour"), 1.0, 1.5, Quantity(0.15, "USD/kWh")).to("USD")
<Quantity(54.0, 'USD')>
"""
from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

import pint

from sizer.choices import PriceBasis as PriceBasis  # re-exported (sizer.results too): the one definition is sizer.choices
from sizer.choices import Pricing as Pricing
from sizer.errors import InputError
from sizer.hardware.schema import CloudPrice, Device, Price
from sizer.hardware.server_share import NOT_PRICED, owned_price, purchase_per_device
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.units import Quantity, parse_quantity


@dataclass(frozen=True)
class CostAssumptions:
    """The buy side's assumptions, each with its source: the one set of defaults (spec §3.4).

    The CLI and the HTTP service leave a value out to take its default here (see
    :meth:`given`), so a default lives in this class only and "given" is said exactly when
    the user gave a value.

    Sources: lifetime spec §3.4; PUE docs/references.md [uptime-2023]; electricity price
    docs/references.md [eia-2024].
    """

    lifetime: pint.Quantity[Any] = Quantity(3, "year")
    utilisation: float = 1.0
    pue: float = 1.5
    electricity_price: pint.Quantity[Any] = Quantity(0.15, "USD/kWh")
    host_share: pint.Quantity[Any] = Quantity(0, "USD")
    host_share_given: bool = False  # the user's host capital replaces the server share derived for a device alone
    lifetime_source: str = "spec §3.4 default: 3 years of 24/7 use"
    utilisation_source: str = "assumed: training keeps devices at their TDP"
    pue_source: str = "assumed 1.5, near the Uptime Institute 2023 survey's industry average of 1.58 (docs/references.md [uptime-2023])"
    electricity_source: str = "assumed 0.15 USD/kWh, about the 2024 US commercial average (EIA; docs/references.md [eia-2024])"

    def __post_init__(self) -> None:
        if not 0 < self.utilisation <= 1:
            raise InputError("utilisation", self.utilisation, "a fraction of TDP above 0 and at most 1")
        if not 1 <= self.pue <= 5:
            raise InputError("pue", self.pue, "a power usage effectiveness from 1 to 5")

    @classmethod
    def given(cls, *, lifetime: object = None, utilisation: float | None = None, pue: float | None = None,
              electricity_price: object = None, host_share: object = None) -> "CostAssumptions":
        """The defaults with the values a user gave parsed and marked "given".

        Parameters
        ----------
        lifetime : str or Quantity, optional
            Amortisation period [year]; ``None``: the default.
        utilisation : float, optional
            Average power as a fraction of TDP [1].
        pue : float, optional
            Power usage effectiveness of the site [1].
        electricity_price : str or Quantity, optional
            Energy price [USD/kWh].
        host_share : str or Quantity, optional
            Capital for hosts, network and racks [USD].

        Returns
        -------
        CostAssumptions
            :data:`COST_DEFAULTS` with the given values, each source "given".

        References
        ----------
        [spec-3.4], [uptime-2023], [eia-2024]
        """
        costs = COST_DEFAULTS
        if lifetime is not None:
            costs = dataclasses.replace(costs, lifetime=parse_quantity("lifetime", lifetime, "[time]"),
                                        lifetime_source="given")
        if utilisation is not None:
            costs = dataclasses.replace(costs, utilisation=utilisation, utilisation_source="given")
        if pue is not None:
            costs = dataclasses.replace(costs, pue=pue, pue_source="given")
        if electricity_price is not None:
            costs = dataclasses.replace(costs, electricity_price=parse_quantity(
                "electricity_price", electricity_price, "[currency]/[energy]"), electricity_source="given")
        if host_share is not None:
            costs = dataclasses.replace(costs, host_share=parse_quantity("host_share", host_share, "[currency]",
                                                                         allow_zero=True), host_share_given=True)
        return costs


COST_DEFAULTS = CostAssumptions()
"""The defaults every cost uses unless the user gives another value."""

# Which price a cost uses (sizer.choices: rent, buy or any), and the basis of one cost (rent or buy)
"""What a cost figure is: a cloud rent, or an amortised purchase (capital over the lifetime plus energy)."""


class CostRange(RangeOut):
    """A cost range with its basis beside it, so that rent and buy are never mixed unlabelled."""

    price_basis: PriceBasis


def rent_cost(hourly_price_per_device: pint.Quantity[Any], count: int, duration: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""Rent of a run: cloud hourly price × devices × hours.

    .. math::

        c_{rent} = p_h \, n \, T

    Parameters
    ----------
    hourly_price_per_device : pint.Quantity
        On-demand price of one device p_h [USD/h].
    count : int
        Devices n [1].
    duration : pint.Quantity
        Training time T [h].

    Returns
    -------
    pint.Quantity
        The rent [USD].

    References
    ----------
    [spec-3.4], [seed-004-3.3.4]
    """
    rent: pint.Quantity[Any] = (hourly_price_per_device * count * duration).to("USD")
    return rent


def amortised_capital(capital: pint.Quantity[Any], duration: pint.Quantity[Any], lifetime: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""The share of the capital a run of ``duration`` uses out of a 24/7 lifetime.

    .. math::

        c_{cap} = K \, T / L

    Parameters
    ----------
    capital : pint.Quantity
        Purchase price of all devices (and host share) K [USD].
    duration : pint.Quantity
        Training time T [h].
    lifetime : pint.Quantity
        Lifetime over which the capital is spread, L [year].

    Returns
    -------
    pint.Quantity
        The run's share of the capital [USD].

    References
    ----------
    [spec-3.4]

    Examples
    --------
    >>> amortised_capital(Quantity(30000, "USD"), Quantity(1, "year"), Quantity(3, "year")).to("USD")
    <Quantity(10000.0, 'USD')>
    """
    share: pint.Quantity[Any] = (capital * (duration / lifetime).to("")).to("USD")
    return share


def energy_cost(tdp: pint.Quantity[Any], count: int, duration: pint.Quantity[Any], utilisation: float, pue: float,
                electricity_price: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""Energy cost of a run.

    .. math::

        c_{energy} = W \, u \, n \, T \, PUE \, e

    Parameters
    ----------
    tdp : pint.Quantity
        Thermal design power of one device W [W].
    count : int
        Devices n [1].
    duration : pint.Quantity
        Training time T [h].
    utilisation : float
        Fraction of TDP drawn u [1].
    pue : float
        Power usage effectiveness of the data centre [1].
    electricity_price : pint.Quantity
        Price of energy e [USD/kWh].

    Returns
    -------
    pint.Quantity
        The energy cost [USD].

    References
    ----------
    [spec-3.4], [uptime-2023], [eia-2024]
    """
    energy: pint.Quantity[Any] = (tdp * utilisation * count * duration * pue * electricity_price).to("USD")
    return energy


def cloud_providers(devices: Iterable[Device]) -> list[str]:
    """Every provider with a price in the catalog, sorted without regard to case.

    Parameters
    ----------
    devices : iterable of Device
        Catalog devices.

    Returns
    -------
    list of str
        Provider names (AWS, Azure, GCP, Lambda, ...).
    """
    return sorted({price.provider for device in devices for price in device.cloud_prices}, key=str.lower)


def _provider_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def check_provider(provider: str | None, devices: Iterable[Device], field: str = "cloud") -> str | None:
    """The catalog's spelling of a cloud provider, matched without regard to case, spaces or
    punctuation ("vast" for "Vast.ai", "massedcompute" for "Massed Compute"; a unique prefix will do).

    Parameters
    ----------
    provider : str or None
        The provider a user named; None passes through.
    devices : iterable of Device
        Catalog devices whose prices name the known providers.
    field : str, default ``"cloud"``
        The request field to name in an error.

    Returns
    -------
    str or None
        The provider as the catalog spells it, or None.

    Raises
    ------
    InputError
        An unknown provider; the message lists the known ones.
    """
    if provider is None:
        return None
    known = cloud_providers(devices)
    wanted = _provider_key(provider) if isinstance(provider, str) else ""
    exact = [name for name in known if _provider_key(name) == wanted]
    starts = [name for name in known if wanted and _provider_key(name).startswith(wanted)]
    if exact or len(starts) == 1:
        return (exact or starts)[0]
    raise InputError(field, provider, f"a cloud provider of the catalog: {', '.join(known)}")


def _hourly(price: CloudPrice) -> pint.Quantity[Any]:
    return price.quantity("cloud_prices", "[currency]/[time]")  # read once, at load


def offer_runs(price: CloudPrice, count: int, network_needed: float) -> bool:
    """Whether an offer can run a job of ``count`` devices: inside one of its instances, or across the
    nodes of a cluster offer whose seller states a network of at least ``network_needed`` [B/s per
    device, one direction] (what the time model assumed between nodes) and no limit below ``count``.

    A single-GPU marketplace rental cannot run a 64-GPU job, nor can 8-GPU nodes whose network
    between nodes nobody states: the time model's all-reduce between nodes would be a guess.

    Parameters
    ----------
    price : CloudPrice
        An offer: devices in one instance, and the network between nodes where it is a cluster.
    count : int
        Devices the job needs [1].
    network_needed : float
        Bandwidth between nodes the time model assumed [B/s per device, one direction].

    Returns
    -------
    bool
        True where the offer can run the job.
    """
    if count <= price.devices_in_instance:
        return True
    network = price.network
    if network is None or (network.max_devices is not None and count > network.max_devices):
        return False
    return network.si("cloud_prices.network", "[information]/[time]") >= network_needed * (1 - 1e-9)


def network_between_nodes(device: Device) -> tuple[float, str]:
    """The network the time model assumes between this device's nodes (:func:`sizer.hardware.nodes.node_layout`).

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    bandwidth : float
        Per device, one direction [B/s].
    name : str
        The network as the engine names it.
    """
    from sizer.hardware.nodes import node_layout  # the one node model, the time model's too

    _, link = node_layout(device)
    return link.bandwidth, link.name


def cheapest_cloud_price(device: Device, provider: str | None = None, count: int = 1,
                         terms: tuple[str, ...] = ("on-demand",)) -> CloudPrice | None:
    """The cheapest current offer for one device that can run a job of ``count`` devices.

    Only offers of the given ``terms`` count (on-demand by default: spot is interruptible, a
    reservation a commitment) and only those that can run the job (:func:`offer_runs`).
    Whole-instance shares are preferred: a GPU-only charge leaves out the host VM the GPU cannot
    run without. Of each provider and term only the latest-dated prices count: an older price list
    is superseded.

    Parameters
    ----------
    device : Device
        A catalog device.
    provider : str, optional
        Only this provider's prices (matched without regard to case).
    count : int, default 1
        Devices the job needs [1].
    terms : tuple of str, default ``("on-demand",)``
        Offer terms that count.

    Returns
    -------
    CloudPrice or None
        The cheapest price [USD/h per device] with its provider, instance, term, network, date and
        source; None where the catalog has none that can run the job.

    References
    ----------
    [spec-3.4]
    """
    needed = network_between_nodes(device)[0] if count > 1 else 0.0
    prices = [p for p in device.cloud_prices if (provider is None or p.provider.lower() == provider.lower())
              and p.term in terms and offer_runs(p, count, needed)]
    whole = [p for p in prices if p.scope == "full instance share"]
    prices = whole or prices
    latest: dict[tuple[str, str], tuple[int, ...]] = {}  # per provider and term: a price list of its own
    for price in prices:
        latest[price.provider, price.term] = max(latest.get((price.provider, price.term), ()), _date_key(price.date))
    current = [p for p in prices if _date_key(p.date) == latest[p.provider, p.term]]
    if not current:
        return None
    return min(current, key=lambda p: p.si("cloud_prices", "[currency]/[time]"))  # USD/hour, read at load


def _date_key(date: str) -> tuple[int, ...]:
    """'2025' < '2025-06' < '2026-09-25', so that a full date supersedes a year estimate of the same year."""
    return tuple(int(part) for part in date.split("-"))


RentBasis = Literal["given", "cloud", "amortised purchase", "unknown"]


@dataclass(frozen=True)
class RentPrice:
    """What one device costs per hour of use, where that figure comes from, and how to say so.
    ``kind``: the offer's term (on-demand, spot, reserved) or the purchase's basis (list, street,
    analyst estimate); ``date``: when the price was quoted."""

    hourly: pint.Quantity[Any] | None  # per device, [currency]/[time]; None when unknown
    basis: RentBasis
    label: str
    source: str
    kind: str | None = None
    date: str | None = None

    @property
    def price_basis(self) -> PriceBasis | None:
        """"rent" for a given or cloud price, "buy" for an amortised purchase, None when unknown."""
        bases: dict[str, PriceBasis] = {"given": "rent", "cloud": "rent", "amortised purchase": "buy"}
        return bases.get(self.basis)

    @functools.cached_property
    def usd_per_hour(self) -> float | None:
        """:attr:`hourly` in USD per hour, converted once per price (a kept price is shown in many rankings' rows,
        and a conversion through pint each time was about a twentieth of a ranking's time).

        Returns
        -------
        float or None
            The price per device [USD/h]; None when unknown.
        """
        return None if self.hourly is None else float(self.hourly.to("USD/hour").magnitude)


def amortised_hourly_cost(capital: pint.Quantity[Any], lifetime: pint.Quantity[Any], power: pint.Quantity[Any] | None,
                          pue: float, electricity_price: pint.Quantity[Any]) -> pint.Quantity[Any]:
    r"""Owning cost of one device per hour of use: capital over a 24/7 lifetime plus that hour's energy.

    .. math::

        c = K / L + W \cdot PUE \cdot e

    Parameters
    ----------
    capital : pint.Quantity
        Purchase price of one device K [USD].
    lifetime : pint.Quantity
        Lifetime L [year].
    power : pint.Quantity or None
        Power drawn W [W]; None leaves energy out.
    pue : float
        Power usage effectiveness [1].
    electricity_price : pint.Quantity
        Price of energy e [USD/kWh].

    Returns
    -------
    pint.Quantity
        Cost per device-hour [USD/h].

    References
    ----------
    [spec-3.4]

    Examples
    --------
    >>> amortised_hourly_cost(Quantity(26298, "USD"), Quantity(3, "year"), Quantity(1, "kW"), 1.0,
    ...                       Quantity(0.1, "USD/kWh")).to("USD/hour")
    <Quantity(1.1, 'USD / hour')>
    """
    hourly: pint.Quantity[Any] = (capital / lifetime).to("USD/hour")
    if power is not None:
        hourly = hourly + (power * pue * electricity_price).to("USD/hour")
    return hourly


def offer_label(price: CloudPrice) -> str:
    """What an offer buys, in words: provider, instance, term, the network between nodes where stated.

    Parameters
    ----------
    price : CloudPrice
        A catalog offer.

    Returns
    -------
    str
        "Provider instance, term, N per instance[; between nodes ...], price of DATE".
    """
    size = f"{price.devices_in_instance} per instance" if price.devices_in_instance > 1 else "one per instance"
    network = (f"; between nodes {price.network.name} ({price.network.fabric}, {price.network.value} per device)"
               if price.network is not None else "")
    scope = "" if price.scope == "full instance share" else "; GPU only: host VM not included"
    return f"{price.provider} {price.instance}, {price.term}, {size}{network}{scope}, price of {price.date}"


def hourly_price(device: Device, provider: str | None = None, *, given: object = None,
                 costs: CostAssumptions | None = None, pricing: Pricing = "any", count: int = 1,
                 terms: tuple[str, ...] = ("on-demand",)) -> RentPrice:
    """The hourly price of one device, where it comes from, and its label, by ``pricing``.

    Every cost of the project is priced here, so rent and buy are chosen in one place:
    ``rent``: the given price, else the cheapest on-demand catalog price (of ``provider`` if
    named), else unknown; ``buy``: the amortised purchase cost per hour (capital over the
    lifetime plus energy), else unknown; ``any``, as follows.

    In order: the given price; the cheapest on-demand catalog price (of ``provider`` if named);
    where the catalog has no rent price, the amortised purchase cost per hour (capital over the
    lifetime plus energy), labelled as such; else unknown.

    Parameters
    ----------
    device : Device
        A catalog device.
    provider : str, optional
        Cloud provider whose prices count.
    given : quantity, optional
        A price per device-hour the user gave [USD/h].
    costs : CostAssumptions, optional
        Lifetime, PUE and electricity price for the amortised fallback.
    pricing : {"rent", "buy", "any"}, default ``"any"``
        Which basis the price may have.
    count : int, default 1
        Devices the job runs on [1]: only offers that can run that many count (:func:`offer_runs`).
    terms : tuple of str, default ``("on-demand",)``
        Offer terms a rent may have (add spot or reserved to count them).

    Returns
    -------
    RentPrice
        Price per device-hour [USD/h] (None when unknown), its basis and ``price_basis`` ("rent"
        or "buy"), label and source.

    References
    ----------
    [spec-3.4], [seed-004-3.3.4], [uptime-2023], [eia-2024]

    Examples
    --------
    >>> from sizer.hardware.catalog import load_catalog
    >>> hourly_price(load_catalog().find("T4"), "AWS").basis
    'cloud'
    >>> hourly_price(load_catalog().find("RTX 4090"), pricing="buy").price_basis
    'buy'
    """
    costs = costs or COST_DEFAULTS
    if given is not None and pricing != "buy":
        hourly = parse_quantity("rent_price", given, "[currency]/[time]")
        return RentPrice(hourly, "given", f"{hourly.to('USD/hour'):.4g~P} per device", "given")
    cloud = cheapest_cloud_price(device, provider, count, tuple(terms)) if pricing != "buy" else None
    if cloud is not None:
        hourly = _hourly(cloud)
        return RentPrice(hourly, "cloud", f"{hourly.to('USD/hour'):.4g~P} per device, {offer_label(cloud)}",
                         f"{cloud.source} (price of {cloud.date})", cloud.term, cloud.date)
    missing = f"no {provider} price" if provider else "no rent price"
    if count > 1 and any(p.term in terms for p in device.cloud_prices):
        missing = (f"no {' or '.join(terms)} {provider + ' ' if provider else ''}offer that runs {count} devices (one instance "
                   f"that large, or a cluster whose stated network between nodes matches the time model's "
                   f"{network_between_nodes(device)[1]})")
    if pricing == "rent":
        where = f"; providers with a price for it: {', '.join(cloud_providers([device]))}" if provider and device.cloud_prices else ""
        return RentPrice(None, "unknown", "unknown",
                         f"{missing} in the catalog{where}; give --rent-price, or --pricing buy or any")
    if device.purchase_price is not None:
        bought = device.purchase_price
        owned = owned_price(device, bought, host_given=costs.host_share_given)
        capital = Quantity(owned.per_device, "USD")
        server = f", a server share of {owned.share:,.0f} USD included" if owned.share else ""
        power = device.tdp.quantity("tdp", "[power]") * costs.utilisation if device.tdp is not None else None
        hourly = amortised_hourly_cost(capital, costs.lifetime, power, costs.pue, costs.electricity_price)
        energy = f" plus energy at {costs.pue:g} PUE and {costs.electricity_price:~P}" if power is not None else " (no TDP: energy not counted)"
        why = "" if pricing == "buy" else f"; {missing} in the catalog"
        return RentPrice(hourly, "amortised purchase",
                         f"amortised purchase cost, not a rent: {hourly.to('USD/hour'):.4g~P} per device "
                         f"({capital.to('USD'):.6g~P} {purchase_label(bought)}{server} over "
                         f"{costs.lifetime.to('year').magnitude:g} years{energy}){why}",
                         f"{bought.source} (price of {bought.date})", bought.basis, bought.date)
    if pricing == "buy":
        return RentPrice(None, "unknown", "unknown", "no purchase price in the catalog; give --purchase-price")
    where = f"; known providers for this device: {', '.join(cloud_providers([device]))}" if provider and device.cloud_prices else ""
    return RentPrice(None, "unknown", "unknown", f"{missing} and no purchase price in the catalog{where}; give --rent-price")


def purchase_label(price: Price) -> str:
    """A purchase price's basis in words (list, street, price-history median, analyst estimate, second-hand), its
    confidence, and the system it was quoted for (a share of a DGX node, or the Mac a chip is sold in).

    Parameters
    ----------
    price : Price
        A catalog purchase price.

    Returns
    -------
    str
        E.g. "street price, low confidence, of 2026".
    """
    if price.devices_in_system > 1:
        system = f", one of {price.devices_in_system} of a {price.system or 'system'}"
    else:  # the machine the chip is only sold in (a Mac): the price is that machine's
        system = f" of a {price.system}" if price.system else ""
    return f"{price.basis} price{system}, {price.confidence} confidence, of {price.date}"


class PriceUsed(Model):
    """The price behind one ranked row's cost: its basis, what it is, what it buys and when it was quoted."""

    price_basis: PriceBasis
    kind: str  # an offer's term (on-demand, spot, reserved) or a purchase's basis (list, street, analyst estimate ...)
    per_device_hour: float  # [USD/h]: the rent, or the amortised purchase plus energy
    label: str
    date: str | None
    source: str
    purchase_basis: str | None = None  # price_basis "buy": list, street, price-history median, analyst estimate, second-hand


def price_used(price: RentPrice) -> dict[str, object] | None:
    """:class:`PriceUsed`'s fields of a chosen price, as plain data for a ranked row.

    Parameters
    ----------
    price : RentPrice
        A price :func:`hourly_price` chose.

    Returns
    -------
    dict or None
        price_basis, kind, per_device_hour [USD/h], label, date, source and (bought) purchase_basis; None where
        the price is unknown.
    """
    if price.hourly is None or price.price_basis is None:
        return None
    return dict(price_basis=price.price_basis, kind=price.kind or price.basis,
                per_device_hour=price.usd_per_hour, label=price.label, date=price.date,
                source=price.source, purchase_basis=price.kind if price.price_basis == "buy" else None)


class BuyCost(Model):
    capital: QuantityOut
    amortised_capital: CostRange
    energy: CostRange
    total: CostRange
    energy_used: RangeOut
    # the purchase price behind it: its basis (list, street, price-history median, analyst estimate, second-hand;
    # "given" for --purchase-price), date, confidence and the system it was quoted for (a DGX node, a Mac)
    purchase_basis: str = "given"
    price_date: str | None = None
    price_confidence: str | None = None
    system: str | None = None
    # what the price buys: "gpu" (the device alone; a server share is added), "system-share" (a share of a whole
    # machine, host included), "given" (--purchase-price, taken as the whole cost of a device)
    price_scope: str = "given"
    server_share: QuantityOut | None = None  # the server share added for all the devices [USD]


class TcoResult(Model):
    device: str
    count: int
    pricing: Pricing = "rent"
    training_time: RangeOut
    rent: CostRange | None  # price_basis "buy" only with pricing "any" where no rent price exists
    rent_price: QuantityOut | None
    rent_basis: RentBasis = "unknown"  # "amortised purchase" where no rent price exists
    rent_label: str = "unknown"
    rent_price_kind: str | None = None  # the offer's term, or the purchase's basis where an amortised purchase stands in
    rent_price_date: str | None = None  # when the price was quoted (None: given, or unknown)
    buy: BuyCost | None
    assumptions: list[Assumption]


def cost_range(estimate: Estimate, basis: PriceBasis) -> CostRange:
    """A cost estimate in USD with its basis beside it.

    Parameters
    ----------
    estimate : Estimate
        Cost low / expected / high [USD].
    basis : {"rent", "buy"}
        Whether the cost is a cloud rent or an amortised purchase.

    Returns
    -------
    CostRange
        The range in USD with ``price_basis``.

    References
    ----------
    [spec-3.4]
    """
    return CostRange(**estimate.out("USD").model_dump(), price_basis=basis)



def lifetime_words(lifetime: Any) -> str:
    """A lifetime in the words people use ("3 years"), not pint's year symbol ("3 a").

    Parameters
    ----------
    lifetime : pint.Quantity
        A time [year, or any unit of time].

    Returns
    -------
    str
        The lifetime in years, "year" or "years" written out.

    >>> from sizer.units import ureg
    >>> lifetime_words(ureg.Quantity(3, "year")), lifetime_words(ureg.Quantity(12, "month"))
    ('3 years', '1 year')
    """
    years = float(lifetime.to("year").magnitude)
    return f"{years:g} year" + ("" if years == 1 else "s")

def estimate_tco(device: Device, count: int, duration: Estimate, *, rent_price: object = None,
                 purchase_price: object = None, costs: CostAssumptions = COST_DEFAULTS,
                 cloud: str | None = None, pricing: Pricing = "rent",
                 terms: tuple[str, ...] = ("on-demand",)) -> TcoResult:
    r"""Rent and buy cost of running ``count`` devices for a range of durations.

    Rent uses ``rent_price`` or the cheapest on-demand price in the catalog (of the provider
    ``cloud``, if named); with ``pricing="any"``, where there is none, the amortised purchase cost
    per hour stands in and ``rent.price_basis``, ``rent_basis`` and the assumptions say so (see
    :func:`hourly_price`); with ``pricing="buy"`` the rent side is left out. Buy uses
    ``purchase_price`` or the catalog's price. Either side is ``None`` when no price is known,
    and the assumptions say so.

    .. math::

        c_{rent} = p_h n T, \qquad c_{buy} = K n T / L + W u n T \, PUE \, e

    Parameters
    ----------
    device : Device
        A catalog device.
    count : int
        Devices n [1].
    duration : Estimate
        Training time low / expected / high [h].
    rent_price : quantity, optional
        Price per device-hour [USD/h].
    purchase_price : quantity, optional
        Price of one device [USD].
    costs : CostAssumptions, optional
        Lifetime, utilisation, PUE, electricity price and host share.
    cloud : str, optional
        Cloud provider whose prices count.
    pricing : {"rent", "buy", "any"}, default ``"rent"``
        Which price the rent side may use (see :func:`hourly_price`).
    terms : tuple of str, default ``("on-demand",)``
        Offer terms the rent may have.

    Returns
    -------
    TcoResult
        Rent [USD] and buy (capital, amortised capital, energy [USD], energy used [kWh]) as
        ranges, each cost with its ``price_basis``, the price used and its basis, and the
        assumptions.

    References
    ----------
    [spec-3.4], [seed-004-3.3.4], [uptime-2023], [eia-2024]
    """
    assumptions: list[Assumption] = []
    chosen = hourly_price(device, cloud, given=rent_price, costs=costs, pricing="any" if pricing == "any" else "rent",
                          count=count, terms=tuple(terms))
    if pricing == "buy":
        chosen = RentPrice(None, "unknown", "not asked for", "--pricing buy")
    hourly = chosen.hourly
    assumptions.append(Assumption(name="rent price", value=chosen.label, source=chosen.source))
    rent = duration.map(lambda t: rent_cost(hourly, count, t)) if hourly is not None else None

    price, quote, owned = None, None, None
    if purchase_price is not None:
        price = parse_quantity("purchase_price", purchase_price, "[currency]")
        assumptions.append(Assumption(name="purchase price", value=f"{price.to('USD'):.6g~P} per device",
                                      source="given, taken as a device's whole cost: no server share added (--host-share adds one)"))
    elif device.purchase_price is not None:
        quote = device.purchase_price
        owned = owned_price(device, quote, host_given=costs.host_share_given)
        price = Quantity(owned.per_device, "USD")
        assumptions.append(Assumption(name="purchase price", value=f"{purchase_per_device(quote):.6g} USD per device, "
                                      f"{purchase_label(device.purchase_price)}",
                                      source=f"{device.purchase_price.source} (price of {device.purchase_price.date})"))
        assumptions.append(Assumption(name="server share", value=f"{owned.share:,.0f} USD per device", source=owned.note))
    else:
        assumptions.append(Assumption(name="purchase price", value="unknown", source="no price in the catalog; give --purchase-price"))
    buy = None
    if price is not None and device.tdp is None:
        assumptions.append(Assumption(name="energy", value="unknown", source="no TDP in the catalog: the buy side needs one"))
    elif price is not None and device.tdp is not None:
        tdp = device.tdp.quantity("tdp", "[power]")
        capital = price * count + costs.host_share
        amortised = duration.map(lambda t: amortised_capital(capital, t, costs.lifetime))
        energy = duration.map(lambda t: energy_cost(tdp, count, t, costs.utilisation, costs.pue, costs.electricity_price))
        energy_used = duration.map(lambda t: (tdp * costs.utilisation * count * t * costs.pue).to("kWh"))
        buy = BuyCost(capital=QuantityOut.of(capital, "USD"), amortised_capital=cost_range(amortised, "buy"),
                      energy=cost_range(energy, "buy"), total=cost_range(amortised + energy, "buy"),
                      energy_used=energy_used.out("kWh"), purchase_basis=quote.basis if quote else "given",
                      price_date=quote.date if quote else None, price_confidence=quote.confidence if quote else None,
                      system=quote.system if quote else None, price_scope=owned.scope if owned else "given",
                      server_share=QuantityOut.of(Quantity(owned.share * count, "USD"), "USD") if owned and owned.share else None)
        assumptions += [
            Assumption(name="lifetime", value=lifetime_words(costs.lifetime), source=costs.lifetime_source),
            Assumption(name="utilisation", value=f"{costs.utilisation:.0%} of TDP ({tdp:~P})", source=costs.utilisation_source),
            Assumption(name="PUE", value=f"{costs.pue:g}", source=costs.pue_source),
            Assumption(name="electricity price", value=f"{costs.electricity_price:~P}", source=costs.electricity_source),
        ]
        if costs.host_share.magnitude:
            assumptions.append(Assumption(name="host share", value=f"{costs.host_share:~P}", source="given"))
        assumptions.append(Assumption(name="not in the buy side", value="network between nodes; host power", source=NOT_PRICED))
    unit = "hour"
    rent_basis = chosen.price_basis  # set wherever a rent is: an hourly price comes from a given, cloud or purchase basis
    return TcoResult(device=device.name, count=count, pricing=pricing, training_time=duration.out(unit),
                     rent=cost_range(rent, rent_basis) if rent is not None and rent_basis is not None else None,
                     rent_price=QuantityOut.of(hourly, "USD/hour") if hourly is not None else None,
                     rent_basis=chosen.basis, rent_label=chosen.label, rent_price_kind=chosen.kind if hourly is not None else None,
                     rent_price_date=chosen.date, buy=buy, assumptions=assumptions)
