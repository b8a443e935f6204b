"""catalog/prices/recalled-launch-prices.yaml: launch list prices recalled, not read in ../shared/data, so each is
marked unverified and low-confidence and says so in its source; Apple prices name the Mac with that chip,
GPU-core count and memory."""
import re

import pytest

from sizer.hardware.catalog import builtin_catalog_dir
from sizer.hardware.prices import costing_rank, read_price_file

RECALLED = builtin_catalog_dir() / "prices" / "recalled-launch-prices.yaml"


@pytest.fixture(scope="module")
def recalled():
    return read_price_file(RECALLED)


def test_every_recalled_price_is_unverified_low_confidence_list_and_says_recalled(recalled):
    quotes = [q for prices in recalled.devices.values() for q in (*prices.purchase_prices, *filter(None, [prices.purchase_price]))]
    assert quotes
    assert all(q.verified is False and q.confidence == "low" and q.basis == "list" for q in quotes)
    assert all("recalled" in q.source and "not read in ../shared/data" in q.source for q in quotes)
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", q.date) for q in quotes)  # a launch date to the day
    assert not any(prices.cloud_prices for prices in recalled.devices.values())  # launch prices only, no offers


def test_recalled_apple_prices_name_the_mac_with_that_gpu_core_count_and_memory(recalled, catalog):
    """Issue 37: 'Apple prices are for the cheapest Mac with that chip, named': the system names the Mac, the
    chip, its GPU cores and the catalog entry's memory; the note shows how a build-to-order price is made up."""
    apple = {device_id: prices for device_id, prices in recalled.devices.items() if device_id.startswith("apple-")}
    assert len(apple) >= 20
    for device_id, prices in apple.items():
        device = catalog.find(device_id)
        quote = prices.purchase_prices[0]
        cores = re.search(r"\((\d+)-core GPU", device.name).group(1)
        memory = re.match(r"(\d+) GB", device.memory.value).group(1)
        assert quote.devices_in_system == 1 and re.search(r"Mac (Studio|mini)|MacBook (Air|Pro)", quote.system), device_id
        assert f"{cores}-core GPU" in quote.system and f"{memory} GB" in quote.system, device_id
        if "build-to-order" in quote.system:
            assert "upgrade" in quote.note and "USD" in quote.note, device_id


def test_the_china_only_rtx_4090_d_keeps_its_yuan_price_and_rate_in_the_note(recalled):
    """The catalog prices in USD, so the CNY list price is converted; the note must say from what and at what rate."""
    quote = recalled.devices["rtx-4090d"].purchase_prices[0]
    assert "12,999 CNY" in quote.note and "CNY per USD" in quote.note
    assert quote.si("purchase_prices", "[currency]") == pytest.approx(12_999 / 7.10, abs=1)


def test_a_recalled_price_prices_its_device_but_yields_to_any_read_list_price(catalog, recalled):
    """Each recalled quote is what its device's costs use (no read price exists for these devices), yet a
    read list price of medium confidence, even an older one, would be preferred (costing_rank)."""
    for device_id, prices in recalled.devices.items():
        quote = prices.purchase_prices[0]
        chosen = catalog.find(device_id).purchase_price
        assert chosen is not None and (chosen.value, chosen.date, chosen.source) == (quote.value, quote.date, quote.source), device_id
        read = quote.model_copy(update={"confidence": "medium", "verified": True, "date": "2000"})
        assert min([quote, read], key=costing_rank) is read, device_id
