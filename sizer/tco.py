"""Total cost of ownership of a training run, buy against rent (spec §3.4; seed 004 §3.3.4).

The seed asks for "a reasonable range and order of magnitude" of capital plus operational
cost; every assumption below is shown in the result and can be overridden.

>>> from sizer.units import Quantity
>>> energy_cost(Quantity(300, "W"), 8, Quantity(100, "hour"), 1.0, 1.5, Quantity(0.15, "USD/kWh")).to("USD")
<Quantity(54.0, 'USD')>
"""
from __future__ import annotations

from dataclasses import dataclass

import pint

from sizer.catalog_schema import CloudPrice, Device
from sizer.errors import InputError
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.units import Quantity, parse_quantity


@dataclass(frozen=True)
class CostAssumptions:
    """Defaults for the buy side; each is shown with its source and can be overridden."""

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
    """Rent = cloud hourly price × devices × hours (spec §3.4)."""
    return (hourly_price_per_device * count * duration).to("USD")


def amortised_capital(capital: pint.Quantity, duration: pint.Quantity, lifetime: pint.Quantity) -> pint.Quantity:
    """The share of the capital a run of ``duration`` uses out of a 24/7 ``lifetime`` (spec §3.4).

    >>> amortised_capital(Quantity(30000, "USD"), Quantity(1, "year"), Quantity(3, "year")).to("USD")
    <Quantity(10000.0, 'USD')>
    """
    return (capital * (duration / lifetime).to("")).to("USD")


def energy_cost(tdp: pint.Quantity, count: int, duration: pint.Quantity, utilisation: float, pue: float,
                electricity_price: pint.Quantity) -> pint.Quantity:
    """Energy = TDP × utilisation × devices × hours × PUE × price (spec §3.4)."""
    return (tdp * utilisation * count * duration * pue * electricity_price).to("USD")


def cheapest_cloud_price(device: Device) -> CloudPrice | None:
    """The cheapest on-demand price per device, preferring whole-instance shares: a GPU-only
    charge leaves out the host VM the GPU cannot run without."""
    if not device.cloud_prices:
        return None
    whole = [p for p in device.cloud_prices if p.scope == "full instance share"]
    return min(whole or device.cloud_prices,
               key=lambda p: parse_quantity("cloud_prices", p.value, "[currency]/[time]").to("USD/hour").magnitude)


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
    buy: BuyCost | None
    assumptions: list[Assumption]


def estimate_tco(device: Device, count: int, duration: Estimate, *, rent_price: object = None,
                 purchase_price: object = None, costs: CostAssumptions = CostAssumptions()) -> TcoResult:
    """Rent and buy cost of running ``count`` devices for ``duration`` (a time range).

    Rent uses ``rent_price`` (per device per hour) or the cheapest on-demand price in the
    catalog; buy uses ``purchase_price`` (per device) or the catalog's price. Either side is
    ``None`` when no price is known, and the assumptions say so.
    """
    assumptions: list[Assumption] = []
    hourly = None
    if rent_price is not None:
        hourly = parse_quantity("rent_price", rent_price, "[currency]/[time]")
        assumptions.append(Assumption(name="rent price", value=f"{hourly.to('USD/hour'):.4g~P} per device", source="given"))
    elif (cloud := cheapest_cloud_price(device)) is not None:
        hourly = parse_quantity("cloud_prices", cloud.value, "[currency]/[time]")
        scope = "" if cloud.scope == "full instance share" else " (GPU only: host VM not included)"
        assumptions.append(Assumption(name="rent price", value=f"{hourly.to('USD/hour'):.4g~P} per device, {cloud.provider} {cloud.instance} on demand{scope}",
                                      source=f"{cloud.source} (price of {cloud.date})"))
    else:
        assumptions.append(Assumption(name="rent price", value="unknown", source="no cloud price in the catalog; give --rent-price"))
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
    if price is not None:
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
                     buy=buy, assumptions=assumptions)
