"""sizer.plan.offer_prices: a recommendation's price floats kept on disk, and the offers of the rows shown."""
from __future__ import annotations

import math

import numpy as np

from sizer.plan import recommend
from sizer.plan.offer_prices import OfferRows, kept_price_floats


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


def test_an_offer_is_worked_out_when_first_asked_and_once():
    asked = []

    def cell(device, count):
        asked.append((device, count))
        return f"{device} at {count}"

    rows = OfferRows(("a", "b"), (1, 8), cell)
    assert asked == [] and len(rows) == 2
    assert rows[1][1] == "b at 8" and rows[1][1] == "b at 8"
    assert asked == [("b", 8)]


def test_a_shown_rows_offer_is_the_one_the_whole_row_would_give(catalog):
    # every device and count of the built-in catalog, with the terms a user may add: the offer chosen for one
    # count alone (_rent_at) is the one chosen for the whole row (_rent_by_count), reason texts included
    counts = recommend._counts(1024)
    for terms in (("on-demand",), ("spot", "on-demand")):
        for device in catalog:
            whole = recommend._rent_by_count(device, None, counts, terms)
            assert [recommend._rent_at(device, None, c, terms) for c in counts] == whole, device.name


def test_the_kept_rent_is_the_rows_offer_per_device_hour(catalog):
    # the float kept on disk and the offer a shown row names are the same price
    devices = tuple(catalog)
    counts = recommend._counts(64)
    prices = recommend._price_arrays(devices, (catalog.key, "every kind"), None, counts)
    for index in range(len(devices)):
        for column in range(len(counts)):
            offer = prices["rent_price"][index][column]
            expected = math.nan if offer.hourly is None else offer.hourly.to("USD/hour").magnitude
            assert prices["rent"][index, column] == expected or (math.isnan(expected)
                                                                 and math.isnan(prices["rent"][index, column]))
