"""sizer/hardware/prices.py and the catalog's prices: every price dated and sourced, purchase prices with
their basis and confidence, the GPUs people buy priced, coverage that does not fall back."""
from pathlib import Path

import pytest

from sizer.errors import CatalogError
from sizer.hardware.catalog import builtin_catalog_dir
from sizer.hardware.prices import costing_rank, price_files, read_price_file, unmatched_prices, with_prices
from sizer.hardware.schema import _DATE_RE, Price


def test_the_built_in_price_file_is_named_after_its_document_and_loads():
    files = price_files(builtin_catalog_dir())
    # ../shared/data/cloud-prices-more.csv (two rows missed in the device files), cluster-and-purchase-prices.csv,
    # device-specs-2026-11.csv and prices-2026-12.csv; then the hand-written recalled launch prices
    assert [f.name for f in files] == ["cloud-prices-more.yaml", "cluster-and-purchase-prices.yaml", "device-specs-2026-11.yaml",
                                       "prices-2026-12.yaml", "recalled-launch-prices.yaml"]
    parsed = read_price_file(builtin_catalog_dir() / "prices" / "cluster-and-purchase-prices.yaml")
    assert "h100-sxm5-80gb" in parsed.devices
    # sources are replaced by their full citations
    assert all(p.source.startswith(("api-evangelist", "AWS", "datareceipts", "dstack", "Modal"))
               for prices in parsed.devices.values() for p in prices.cloud_prices)


def test_every_price_says_its_date_and_source(catalog):
    for device in catalog:
        for price in (*device.cloud_prices, *device.purchase_prices, *filter(None, [device.purchase_price])):
            assert _DATE_RE.match(price.date) and price.source.strip(), device.id


def test_purchase_prices_say_basis_and_confidence(catalog):
    quotes = [q for d in catalog for q in (*d.purchase_prices, *filter(None, [d.purchase_price]))]
    assert {q.basis for q in quotes} == {"list", "street", "analyst estimate", "price-history median", "second-hand"}
    assert {q.confidence for q in quotes} >= {"low", "medium"}
    systems = {q.system for q in quotes if q.devices_in_system > 1}
    assert any("NVL72" in s for s in systems) and any("DGX" in s for s in systems)


@pytest.mark.parametrize("device", ["h100-sxm5-80gb", "h200-sxm-141gb", "b200", "a100-80gb-sxm4", "mi300x"])
def test_the_gpus_people_buy_have_a_purchase_price(catalog, device):
    """The issue: H100, H200, B200 and A100 80GB had none, so --pricing buy ranked MI250X first."""
    assert catalog.find(device).purchase_price is not None


def test_coverage_does_not_fall_back(catalog):
    """A dated rent price for 38 accelerators and a purchase price for 16 of the others with the data in
    ../shared/data (2026-11); the issue's goal is 80 % of each. A floor, so that coverage only grows."""
    accelerators = [d for d in catalog if d.kind != "cpu"]
    rented = [d for d in accelerators if d.cloud_prices]
    bought = [d for d in accelerators if not d.cloud_prices and d.purchase_price]
    assert len(rented) >= 38 and len(bought) >= 16


def test_a_price_for_an_unknown_device_is_an_error_naming_it(tmp_path: Path, catalog):
    path = tmp_path / "prices.yaml"
    path.write_text('sources: {s: "a page"}\ndevices:\n  no-such-gpu:\n    cloud_prices:\n'
                    '      - {value: 1 USD/hour, provider: P, instance: i, devices_in_instance: 1, date: "2026", source: s}\n')
    with pytest.raises(CatalogError, match="no-such-gpu"):
        with_prices(dict(catalog.devices), path)


def test_a_price_file_with_a_bad_term_or_unit_reports_each(tmp_path: Path, catalog):
    path = tmp_path / "prices.yaml"
    path.write_text('sources: {s: "a page"}\ndevices:\n  tesla-t4:\n    cloud_prices:\n'
                    '      - {value: 1 GB, provider: P, instance: i, devices_in_instance: 1, date: "2026", source: s, '
                    'term: forever}\n')
    with pytest.raises(CatalogError, match="term") as error:
        with_prices(dict(catalog.devices), path)
    assert "cloud_prices[0]" in str(error.value)


def test_an_awaited_id_is_passed_over_and_listed_not_an_error(tmp_path: Path, catalog):
    """A price for a device other work is adding (h-devices' MI350X) waits for it instead of failing the load."""
    path = tmp_path / "prices.yaml"
    path.write_text('sources: {s: "a page"}\nawaiting: [future-gpu]\ndevices:\n  future-gpu:\n    cloud_prices:\n'
                    '      - {value: 1 USD/hour, provider: P, instance: i, devices_in_instance: 1, date: "2026", source: s}\n'
                    '  tesla-t4:\n    cloud_prices:\n'
                    '      - {value: 0.01 USD/hour, provider: Q, instance: j, devices_in_instance: 1, date: "2026", source: s}\n')
    merged = with_prices(dict(catalog.devices), path)
    assert "future-gpu" not in merged and any(p.provider == "Q" for p in merged["tesla-t4"].cloud_prices)
    assert unmatched_prices(dict(catalog.devices), path) == ["future-gpu"]


def test_every_unmatched_price_id_is_awaited_and_listed(catalog):
    """The audit the lead joins at merge: ids priced in a price file that no device has yet, each named in its
    file's awaiting list (an id there is never silently dropped: this test names them all)."""
    unmatched = {path.name: unmatched_prices(dict(catalog.devices), path) for path in price_files(builtin_catalog_dir())}
    for name, ids in unmatched.items():
        awaiting = read_price_file(builtin_catalog_dir() / "prices" / name).awaiting
        assert set(ids) <= set(awaiting), (name, ids)
    print("price ids awaiting a device:", {name: ids for name, ids in unmatched.items() if ids})


def test_unassigned_rows_say_why_and_price_no_device(catalog):
    parsed = read_price_file(builtin_catalog_dir() / "prices" / "prices-2026-12.yaml")
    # the two P100 rows of ../shared/data/prices-2026-12.csv whose form (PCIe or SXM2) is not stated, and the
    # 60-core M2 Ultra's Mac filed under apple-m2-ultra-gpu, which is the 76-core variant in the catalog
    assert [u.hardware for u in parsed.unassigned] == [
        "Apple M2 Ultra, 60-core GPU, 64 GB (catalog_id apple-m2-ultra-gpu)",
        "NVIDIA Tesla P100 16GB (form not stated: PCIe or SXM2)"]
    assert all(u.reason and (u.cloud_prices or u.purchase_prices) for u in parsed.unassigned)
    m2_ultra_76 = catalog.find("apple-m2-ultra-gpu")
    assert all("60-core" not in (p.system or "") for p in [*m2_ultra_76.purchase_prices, m2_ultra_76.purchase_price]
               if p is not None), "the 76-core M2 Ultra carries no 60-core Mac's price"


def test_the_price_costs_use_is_the_best_ranked_quote(catalog):
    """docs/prices.md's rule: a new device's list or street price before a price-history median, an estimate,
    a second-hand price and a system share; medium/high confidence before low; then the newest."""
    for device in catalog:
        if device.purchase_price is not None:
            best = min([device.purchase_price, *device.purchase_prices], key=costing_rank)
            assert costing_rank(device.purchase_price) == costing_rank(best), device.id


def test_the_rule_prefers_a_new_price_then_confidence_then_the_newest():
    def quote(basis, date, confidence="medium", devices=1):
        return Price(value="1 USD", date=date, source="s", basis=basis, confidence=confidence, devices_in_system=devices)

    assert min([quote("second-hand", "2026"), quote("list", "2018")], key=costing_rank).basis == "list"
    assert min([quote("list", "2026", devices=8), quote("analyst estimate", "2020")], key=costing_rank).basis == "analyst estimate"
    assert min([quote("list", "2020", "high"), quote("street", "2023-10")], key=costing_rank).basis == "street"
    assert min([quote("street", "2026", "low"), quote("list", "2022")], key=costing_rank).date == "2022"
    assert min([quote("street", "2025"), quote("street", "2025-06")], key=costing_rank).date == "2025-06"


def test_apple_prices_name_the_mac_they_price(catalog):
    """Apple sells machines, not chips: the price of the cheapest Mac with that chip and GPU-core count
    (../shared/data/prices-2026-12.csv), naming the machine."""
    price = catalog.find("apple-m1-max-24c-gpu").purchase_price
    assert price is not None and price.devices_in_system == 1 and "Mac Studio" in (price.system or "")
    assert "M1 Max" in price.system and "24-core GPU" in price.system


PRICED_ACCELERATORS = 159  # measured: 159 of 176 (90.3 %) with ../shared/data and the recalled launch prices (2026-12)


def test_most_accelerators_have_a_dated_price(catalog):
    """Issue 37: a dated rent or purchase price for every accelerator people name. The 2026-12 data prices
    108 of 132; the recalled launch list prices (catalog/prices/recalled-launch-prices.yaml) bring it to 159 of
    176; catalog/README.md ("Devices without a price") lists the 17 left and why. A floor on the count, so that
    coverage only grows, and the issue's 90 % share, so that a device added without a price is noticed."""
    accelerators = [d for d in catalog if d.kind != "cpu"]
    priced = [d for d in accelerators if d.cloud_prices or d.purchase_price]
    assert all(_DATE_RE.match(p.date) for d in priced for p in (*d.cloud_prices, *filter(None, [d.purchase_price])))
    assert len(priced) >= PRICED_ACCELERATORS, f"{len(priced)} of {len(accelerators)} accelerators priced"
    assert len(priced) >= 0.9 * len(accelerators), f"{len(priced)} of {len(accelerators)} accelerators priced"


@pytest.mark.parametrize("device", ["rtx-4070-ti-super", "rtx-4060-ti-16gb"])
def test_the_cards_added_after_cloud_prices_more_was_transcribed_have_its_offers(catalog, device):
    """../shared/data/cloud-prices-more.csv has a Vast.ai offer for each (4-GPU instances); they were missed
    when the devices arrived, so catalog/prices/cloud-prices-more.yaml adds them."""
    offers = catalog.find(device).cloud_prices
    assert any(o.provider == "Vast.ai" and o.devices_in_instance == 4 for o in offers)
