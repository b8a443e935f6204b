"""sizer/hardware/server_share.py: a price of the device alone gets a server share; a machine's share does not.

Issue 42: buy against rent was not like for like: the catalog priced an H100 SXM alone (30,000 USD) and an
H100 NVL as one eighth of a Lenovo server (833,806 USD, about 104,000 USD a GPU), and the buy side added no
server to the first.
"""
import csv

import pytest

from sizer.formulas.tco import CostAssumptions, estimate_tco
from sizer.hardware.schema import Price
from sizer.hardware.server_share import NOT_PRICED, catalog_server_share, derive_server_share, owned_price
from sizer.results import Estimate
from sizer.units import Quantity
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA  # ../shared/data beside the checkout (tests/conftest.py)


def test_a_price_says_whether_it_is_of_the_device_alone_or_a_share_of_a_machine(catalog):
    # cluster-and-purchase-prices.csv: aiinframap "H100 ≈ $30,000 ... per GPU" (single GPU); the Lenovo SR675 V3
    # with 8x H100 NVL at 833,806 USD "total system cost" (8-GPU node)
    assert catalog.find("h100-sxm5-80gb").purchase_price.scope == "gpu"
    nvl = catalog.find("h100-nvl-94gb").purchase_price
    assert nvl.scope == "system-share" and nvl.devices_in_system == 8
    # a Mac is a whole machine; Gaudi 3's eight-accelerator kit is a baseboard without its host
    assert catalog.find("apple-m4-max-40c-gpu").purchase_price.scope == "system-share"
    assert catalog.find("gaudi3").purchase_price.scope == "gpu"
    assert catalog.find("dgx-spark-gb10").purchase_price.scope == "system-share"


def test_scope_follows_the_system_unless_written():
    assert Price(value="1000 USD", date="2024", source="s").scope == "gpu"
    assert Price(value="8000 USD", date="2024", source="s", devices_in_system=8, system="node").scope == "system-share"
    assert Price(value="8000 USD", date="2024", source="s", devices_in_system=8, system="kit", scope="gpu").scope == "gpu"
    with pytest.raises(ValueError):
        Price(value="1 USD", date="2024", source="s", scope="rack")


def _row(hardware: str, source_start: str) -> float:
    with open(DATA / "cluster-and-purchase-prices.csv", newline="", encoding="utf-8") as rows:
        row = next(r for r in csv.DictReader(rows) if r["hardware"].startswith(hardware) and r["source"].startswith(source_start))
    return float(row["price"])


def test_the_share_is_derived_from_the_devices_priced_both_ways(catalog):
    share = catalog_server_share()
    assert share is not None and not share.verified
    pairs = {p.device: p for p in share.pairs}
    # DGX A100: 'su precio parte de los 200 000 dólares' for 8 (cluster-and-purchase-prices.csv), over the
    # A100 40GB's own price in the catalog
    dgx_a100 = _row("NVIDIA DGX A100", "geektopia")
    a100 = pairs["a100-40gb-sxm4"]
    alone = float(catalog.find("a100-40gb-sxm4").purchase_price.value.split()[0])
    assert a100.per_device == pytest.approx(dgx_a100 / 8) and a100.alone == pytest.approx(alone)
    assert a100.fraction == pytest.approx(dgx_a100 / 8 / alone - 1)
    # DGX B200 '$515K' for 8 over the B200's own price
    assert pairs["b200"].per_device == pytest.approx(_row("NVIDIA DGX B200", "vengineer") / 8)
    fractions = sorted(p.fraction for p in share.pairs)
    assert fractions[0] <= share.fraction <= fractions[-1]
    assert "verified: false" in share.source and "b200" in share.source


def test_no_pair_no_share():
    assert derive_server_share([]) is None


def test_h100_sxm_and_h100_nvl_are_bought_like_for_like(catalog):
    """The 30,000 USD H100 SXM gets the server share; the 104,000 USD H100 NVL share of a server does not."""
    sxm, nvl = catalog.find("h100-sxm5-80gb"), catalog.find("h100-nvl-94gb")
    share = catalog_server_share().fraction
    bought_sxm = owned_price(sxm, sxm.purchase_price)
    assert bought_sxm.scope == "gpu" and bought_sxm.per_device == pytest.approx(30000 * (1 + share))
    assert bought_sxm.share == pytest.approx(30000 * share)
    bought_nvl = owned_price(nvl, nvl.purchase_price)
    assert bought_nvl.scope == "system-share" and bought_nvl.share == 0
    assert bought_nvl.per_device == pytest.approx(_row("Lenovo ThinkSystem SR675 V3", "alpha-one-index") / 8)


def test_tco_buy_side_carries_the_share_its_sources_and_what_is_left_out(catalog):
    sxm = catalog.find("h100-sxm5-80gb")
    week = Estimate.exact(Quantity(168, "hour"))
    result = estimate_tco(sxm, 8, week)
    share = catalog_server_share().fraction
    assert result.buy.price_scope == "gpu"
    assert result.buy.capital.value == pytest.approx(8 * 30000 * (1 + share))
    assert result.buy.server_share.value == pytest.approx(8 * 30000 * share)
    named = {a.name: a for a in result.assumptions}
    assert "derived (verified: false)" in named["server share"].source and "DGX" in named["server share"].source
    assert named["not in the buy side"].source == NOT_PRICED and "network between nodes" in NOT_PRICED
    # the user's own host capital replaces the derived share, and a given price is taken whole
    own = estimate_tco(sxm, 8, week, costs=CostAssumptions.given(host_share="50000 USD"))
    assert own.buy.capital.value == pytest.approx(8 * 30000 + 50000) and own.buy.server_share is None
    given = estimate_tco(sxm, 8, week, purchase_price="30000 USD")
    assert given.buy.price_scope == "given" and given.buy.capital.value == pytest.approx(8 * 30000)
    nvl = estimate_tco(catalog.find("h100-nvl-94gb"), 8, week)
    assert nvl.buy.price_scope == "system-share" and nvl.buy.server_share is None
    assert nvl.buy.capital.value == pytest.approx(_row("Lenovo ThinkSystem SR675 V3", "alpha-one-index"))


def test_a_cpu_is_its_own_host(catalog):
    cpu = next(d for d in catalog if d.kind == "cpu" and d.purchase_price is not None and d.purchase_price.scope == "gpu")
    assert owned_price(cpu, cpu.purchase_price).share == 0
