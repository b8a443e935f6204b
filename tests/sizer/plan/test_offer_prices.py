"""sizer.plan.offer_prices: a recommendation's price floats and the offers of its rows, kept on disk."""
from __future__ import annotations

import math

import numpy as np

from sizer.formulas.tco import hourly_price, price_used
from sizer.plan import recommend
from sizer.plan.offer_prices import kept_price_floats


def test_the_floats_are_built_once_and_read_back_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    built = []

    def build():
        built.append(1)
        return {"rent": np.array([[1.5, math.nan]]), "buy": np.array([2.0])}

    first = kept_price_floats(("catalog-key", ("gpu",)), None, (1, 2), ("on-demand",), build)
    again = kept_price_floats(("catalog-key", ("gpu",)), None, (1, 2), ("on-demand",), build)
    assert len(built) == 1  # the second came from the disk entry
    np.testing.assert_array_equal(again["rent"], first["rent"])
    kept_price_floats(("catalog-key", ("gpu",)), "aws", (1, 2), ("on-demand",), build)
    kept_price_floats(("other-catalog", ("gpu",)), None, (1, 2), ("on-demand",), build)
    assert len(built) == 3  # another provider, another catalog: their own entries


def test_a_kept_offer_is_the_one_a_row_priced_alone_would_show(catalog):
    # every device and count of the built-in catalog, with the terms a user may add: the offer kept for a cell
    # is hourly_price's for that count alone (one per instance or a cluster that runs it), label and date
    # included; for a device with no offer of the terms at all, its one reason (no price shown)
    counts = recommend._counts(1024)
    devices = tuple(catalog)
    for terms in (("on-demand",), ("spot", "on-demand")):
        prices = recommend._price_arrays(devices, (catalog.key, "every kind"), None, counts, terms)
        for index, device in enumerate(devices):
            alone = [price_used(hourly_price(device, None, pricing="rent", count=c, terms=terms)) for c in counts]
            assert list(prices["rent_offer"][index]) == alone, device.name


def test_a_rows_offer_is_its_own_copy(catalog):
    devices = tuple(catalog)
    counts = recommend._counts(64)
    prices = recommend._price_arrays(devices, (catalog.key, "every kind"), None, counts)
    index = next(i for i, row in enumerate(prices["rent_offer"]) if row[0] is not None)
    shown = recommend._row_price(prices, devices[index], index, 0, "rent")
    assert shown == prices["rent_offer"][index][0] and shown is not prices["rent_offer"][index][0]
    shown["label"] = "changed by a caller"
    assert recommend._row_price(prices, devices[index], index, 0, "rent")["label"] != "changed by a caller"


def test_the_kept_rent_is_the_rows_offer_per_device_hour(catalog):
    # the float kept on disk and the offer a shown row names are the same price
    devices = tuple(catalog)
    counts = recommend._counts(64)
    prices = recommend._price_arrays(devices, (catalog.key, "every kind"), None, counts)
    for index in range(len(devices)):
        for column in range(len(counts)):
            offer = prices["rent_offer"][index][column]
            expected = math.nan if offer is None else offer["per_device_hour"]
            assert prices["rent"][index, column] == expected or (math.isnan(expected)
                                                                 and math.isnan(prices["rent"][index, column]))
