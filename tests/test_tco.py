"""sizer/tco.py: rent against buy, checked against a hand computation."""
import pytest

from sizer.errors import InputError
from sizer.results import Estimate
from sizer.tco import CostAssumptions, amortised_capital, energy_cost, estimate_tco, rent_cost
from sizer.units import Quantity


def test_hand_computed_tco(catalog):
    """8 devices for 100 h: rent 8 x 100 h x 2 USD/h = 1600 USD.
    Buy at 10,000 USD each: 80,000 USD capital; amortised over 3 years of 24/7 use
    (26,298 h) that is 80,000 x 100 / 26,298 = 304.21 USD; energy 300 W x 8 x 100 h x 1.5 PUE
    x 0.15 USD/kWh = 54 USD; total 358.21 USD."""
    device = catalog.find("T4").model_copy(update={"tdp": catalog.find("T4").tdp.model_copy(update={"value": "300 W"})})
    result = estimate_tco(device, 8, Estimate.exact(Quantity(100, "hour")), rent_price="2 USD/hour",
                          purchase_price="10000 USD", costs=CostAssumptions())
    assert result.rent.expected == pytest.approx(1600)
    assert result.buy.capital.value == pytest.approx(80000)
    assert result.buy.amortised_capital.expected == pytest.approx(80000 * 100 / (3 * 365.25 * 24))
    assert result.buy.energy.expected == pytest.approx(54)
    assert result.buy.total.expected == pytest.approx(80000 * 100 / 26298 + 54, rel=1e-4)
    names = {a.name for a in result.assumptions}
    assert {"rent price", "purchase price", "lifetime", "PUE", "electricity price"} <= names


def test_formulas():
    assert rent_cost(Quantity(2, "USD/hour"), 8, Quantity(100, "hour")).magnitude == pytest.approx(1600)
    assert amortised_capital(Quantity(30000, "USD"), Quantity(1, "year"), Quantity(3, "year")).magnitude == pytest.approx(10000)
    assert energy_cost(Quantity(1, "kW"), 1, Quantity(1, "hour"), 1.0, 1.0, Quantity(0.1, "USD/kWh")).magnitude == pytest.approx(0.1)


def test_catalog_prices_are_used_and_cited(catalog):
    t4 = catalog.find("T4")
    result = estimate_tco(t4, 1, Estimate(Quantity(1, "hour"), Quantity(2, "hour"), Quantity(3, "hour")))
    assert result.rent is not None and result.rent.low < result.rent.expected < result.rent.high
    assert any(a.name == "rent price" and a.value != "unknown" for a in result.assumptions)


def test_unknown_prices_are_said_not_guessed(catalog):
    device = catalog.find("Tesla P40").model_copy(update={"purchase_price": None, "cloud_prices": []})
    result = estimate_tco(device, 1, Estimate.exact(Quantity(1, "hour")))
    assert result.rent is None and result.buy is None
    assert all(a.value == "unknown" for a in result.assumptions if a.name in ("rent price", "purchase price"))


def test_bad_cost_inputs():
    with pytest.raises(InputError):
        CostAssumptions(pue=0.5)
    with pytest.raises(InputError):
        CostAssumptions(utilisation=0)
