"""Total cost of ownership of a training run, buy against rent (spec §3.4; seed 004 §3.3.4).

The seed asks for "a reasonable range and order of magnitude" of capital plus operational
cost; every assumption below is shown in the result and can be overridden.

>>> from sizer.units import Quantity
>>> energy_cost(Quantity(300, "W"), 8, Quantity(100, "hour"), 1.0, 1.5, Quantity(0.15, "USD/kWh")).to("USD")
<Quantity(54.0, 'USD')>
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

import pint

from sizer.hardware.schema import CloudPrice, Device
from sizer.errors import InputError
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.units import Quantity, parse_quantity


@dataclass(frozen=True)
class CostAssumptions:
    """Defaults for the buy side; each is shown with its source and can be overridden.

    Sources: lifetime spec §3.4; PUE docs/references.md [uptime-2023]; electricity price
    docs/references.md [eia-2024].
    """

    lifetime: pint.Quantity = Quantity(3, "year")
    utilisation: float = 1.0
    pue: float = 1.5
    electricity_price: pint.Quantity = Quantity(0.15, "USD/kWh")
    host_share: pint.Quantity = Quantity(0, "USD")
    lifetime_source: str = "spec §3.4 default: 3 years of 24/7 use"
    utilisation_source: str = "assumed: training keeps devices at their TDP"
    pue_source: str = "assumed 1.5, near the Uptime Institute 2023 survey's industry average of 1.58"
    electricity_source: str = "assumed 0.15 USD/kWh, about the 2024 US commercial average (EIA)"

    def __post_init__(self) -> None:
        if not 0 < self.utilisation <= 1:
            raise InputError("utilisation", self.utilisation, "a fraction of TDP above 0 and at most 1")
        if not 1 <= self.pue <= 5:
            raise InputError("pue", self.pue, "a power usage effectiveness from 1 to 5")


def rent_cost(hourly_price_per_device: pint.Quantity, count: int, duration: pint.Quantity) -> pint.Quantity:
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
    return (hourly_price_per_device * count * duration).to("USD")


def amortised_capital(capital: pint.Quantity, duration: pint.Quantity, lifetime: pint.Quantity) -> pint.Quantity:
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
    return (capital * (duration / lifetime).to("")).to("USD")


def energy_cost(tdp: pint.Quantity, count: int, duration: pint.Quantity, utilisation: float, pue: float,
                electricity_price: pint.Quantity) -> pint.Quantity:
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
    return (tdp * utilisation * count * duration * pue * electricity_price).to("USD")


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


def check_provider(provider: str | None, devices: Iterable[Device], field: str = "cloud") -> str | None:
    """The catalog's spelling of a cloud provider, matched without regard to case.

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
    wanted = provider.strip().lower() if isinstance(provider, str) else ""
    for name in known:
        if name.lower() == wanted:
            return name
    raise InputError(field, provider, f"a cloud provider of the catalog: {', '.join(known)}")


def _hourly(price: CloudPrice) -> pint.Quantity:
    return parse_quantity("cloud_prices", price.value, "[currency]/[time]")


def cheapest_cloud_price(device: Device, provider: str | None = None) -> CloudPrice | None:
    """The cheapest current on-demand price of one device.

    Whole-instance shares are preferred: a GPU-only charge leaves out the host VM the GPU cannot
    run without. Of each provider only its latest-dated prices count: an older price list is
    superseded.

    Parameters
    ----------
    device : Device
        A catalog device.
    provider : str, optional
        Only this provider's prices (matched without regard to case).

    Returns
    -------
    CloudPrice or None
        The cheapest price [USD/h per device] with its provider, instance, date and source;
        None where the catalog has none.

    References
    ----------
    [spec-3.4]
    """
    prices = [p for p in device.cloud_prices if provider is None or p.provider.lower() == provider.lower()]
    whole = [p for p in prices if p.scope == "full instance share"]
    prices = whole or prices
    latest: dict[str, tuple[int, ...]] = {}
    for price in prices:
        latest[price.provider] = max(latest.get(price.provider, ()), _date_key(price.date))
    current = [p for p in prices if _date_key(p.date) == latest[p.provider]]
    if not current:
        return None
    return min(current, key=lambda p: _hourly(p).to("USD/hour").magnitude)


def _date_key(date: str) -> tuple[int, ...]:
    """'2025' < '2025-06' < '2026-09-25', so that a full date supersedes a year estimate of the same year."""
    return tuple(int(part) for part in date.split("-"))


RentBasis = Literal["given", "cloud", "amortised purchase", "unknown"]


@dataclass(frozen=True)
class RentPrice:
    """What one device costs per hour of use, where that figure comes from, and how to say so."""

    hourly: pint.Quantity | None  # per device, [currency]/[time]; None when unknown
    basis: RentBasis
    label: str
    source: str


def amortised_hourly_cost(capital: pint.Quantity, lifetime: pint.Quantity, power: pint.Quantity | None,
                          pue: float, electricity_price: pint.Quantity) -> pint.Quantity:
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
    hourly = (capital / lifetime).to("USD/hour")
    if power is not None:
        hourly = hourly + (power * pue * electricity_price).to("USD/hour")
    return hourly


def hourly_price(device: Device, provider: str | None = None, *, given: object = None,
               costs: CostAssumptions | None = None) -> RentPrice:
    """The hourly price of one device, where it comes from, and its label.

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

    Returns
    -------
    RentPrice
        Price per device-hour [USD/h] (None when unknown), its basis, label and source.

    References
    ----------
    [spec-3.4]

    Examples
    --------
    >>> from sizer.hardware.catalog import load_catalog
    >>> hourly_price(load_catalog().find("T4"), "AWS").basis
    'cloud'
    """
    costs = costs or CostAssumptions()
    if given is not None:
        hourly = parse_quantity("rent_price", given, "[currency]/[time]")
        return RentPrice(hourly, "given", f"{hourly.to('USD/hour'):.4g~P} per device", "given")
    cloud = cheapest_cloud_price(device, provider)
    if cloud is not None:
        hourly = _hourly(cloud)
        scope = "" if cloud.scope == "full instance share" else " (GPU only: host VM not included)"
        return RentPrice(hourly, "cloud",
                         f"{hourly.to('USD/hour'):.4g~P} per device, {cloud.provider} {cloud.instance} on demand{scope}",
                         f"{cloud.source} (price of {cloud.date})")
    missing = f"no {provider} price" if provider else "no rent price"
    if device.purchase_price is not None:
        capital = parse_quantity("purchase_price", device.purchase_price.value, "[currency]")
        power = device.tdp.quantity("tdp", "[power]") * costs.utilisation if device.tdp is not None else None
        hourly = amortised_hourly_cost(capital, costs.lifetime, power, costs.pue, costs.electricity_price)
        energy = f" plus energy at {costs.pue:g} PUE and {costs.electricity_price:~P}" if power is not None else " (no TDP: energy not counted)"
        return RentPrice(hourly, "amortised purchase",
                         f"amortised purchase cost, not a rent: {hourly.to('USD/hour'):.4g~P} per device "
                         f"({capital.to('USD'):.6g~P} over {costs.lifetime.to('year').magnitude:g} years{energy}); {missing} in the catalog",
                         f"{device.purchase_price.source} (price of {device.purchase_price.date})")
    where = f"; known providers for this device: {', '.join(cloud_providers([device]))}" if provider and device.cloud_prices else ""
    return RentPrice(None, "unknown", "unknown", f"{missing} and no purchase price in the catalog{where}; give --rent-price")


class BuyCost(Model):
    capital: QuantityOut
    amortised_capital: RangeOut
    energy: RangeOut
    total: RangeOut
    energy_used: RangeOut


class TcoResult(Model):
    device: str
    count: int
    training_time: RangeOut
    rent: RangeOut | None
    rent_price: QuantityOut | None
    rent_basis: RentBasis = "unknown"  # "amortised purchase" where no rent price exists
    rent_label: str = "unknown"
    buy: BuyCost | None
    assumptions: list[Assumption]


def estimate_tco(device: Device, count: int, duration: Estimate, *, rent_price: object = None,
                 purchase_price: object = None, costs: CostAssumptions = CostAssumptions(),
                 cloud: str | None = None) -> TcoResult:
    r"""Rent and buy cost of running ``count`` devices for a range of durations.

    Rent uses ``rent_price`` or the cheapest on-demand price in the catalog (of the provider
    ``cloud``, if named); where there is none, the amortised purchase cost per hour stands in and
    ``rent_basis`` and the assumptions say so (see :func:`hourly_price`). Buy uses
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

    Returns
    -------
    TcoResult
        Rent [USD] and buy (capital, amortised capital, energy [USD], energy used [kWh]) as
        ranges, the price used and its basis, and the assumptions.

    References
    ----------
    [spec-3.4], [seed-004-3.3.4], [uptime-2023], [eia-2024]
    """
    assumptions: list[Assumption] = []
    chosen = hourly_price(device, cloud, given=rent_price, costs=costs)
    hourly = chosen.hourly
    assumptions.append(Assumption(name="rent price", value=chosen.label, source=chosen.source))
    rent = duration.map(lambda t: rent_cost(hourly, count, t)) if hourly is not None else None

    price = None
    if purchase_price is not None:
        price = parse_quantity("purchase_price", purchase_price, "[currency]")
        assumptions.append(Assumption(name="purchase price", value=f"{price.to('USD'):.6g~P} per device", source="given"))
    elif device.purchase_price is not None:
        price = parse_quantity("purchase_price", device.purchase_price.value, "[currency]")
        assumptions.append(Assumption(name="purchase price", value=f"{price.to('USD'):.6g~P} per device",
                                      source=f"{device.purchase_price.source} (price of {device.purchase_price.date})"))
    else:
        assumptions.append(Assumption(name="purchase price", value="unknown", source="no price in the catalog; give --purchase-price"))
    buy = None
    if price is not None and device.tdp is None:
        assumptions.append(Assumption(name="energy", value="unknown", source="no TDP in the catalog: the buy side needs one"))
    elif price is not None:
        tdp = device.tdp.quantity("tdp", "[power]")
        capital = price * count + costs.host_share
        amortised = duration.map(lambda t: amortised_capital(capital, t, costs.lifetime))
        energy = duration.map(lambda t: energy_cost(tdp, count, t, costs.utilisation, costs.pue, costs.electricity_price))
        energy_used = duration.map(lambda t: (tdp * costs.utilisation * count * t * costs.pue).to("kWh"))
        buy = BuyCost(capital=QuantityOut.of(capital, "USD"), amortised_capital=amortised.out("USD"),
                      energy=energy.out("USD"), total=(amortised + energy).out("USD"), energy_used=energy_used.out("kWh"))
        assumptions += [
            Assumption(name="lifetime", value=f"{costs.lifetime:P}", source=costs.lifetime_source),
            Assumption(name="utilisation", value=f"{costs.utilisation:.0%} of TDP ({tdp:~P})", source=costs.utilisation_source),
            Assumption(name="PUE", value=f"{costs.pue:g}", source=costs.pue_source),
            Assumption(name="electricity price", value=f"{costs.electricity_price:~P}", source=costs.electricity_source),
        ]
        if costs.host_share.magnitude:
            assumptions.append(Assumption(name="host share", value=f"{costs.host_share:~P}", source="given"))
    unit = "hour"
    return TcoResult(device=device.name, count=count, training_time=duration.out(unit),
                     rent=rent.out("USD") if rent is not None else None,
                     rent_price=QuantityOut.of(hourly, "USD/hour") if hourly is not None else None,
                     rent_basis=chosen.basis, rent_label=chosen.label, buy=buy, assumptions=assumptions)
