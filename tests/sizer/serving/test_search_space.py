"""sizer.serving.search_space: the devices and devices-per-replica counts a recommendation searches."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.hardware.catalog import Catalog
from sizer.serving.search_space import device_counts, devices_of_kinds


def test_devices_of_kinds_keeps_catalog_order_and_only_those_kinds(catalog):
    chosen = devices_of_kinds(catalog, ["gpu", "cpu"])
    assert chosen == tuple(d for d in catalog if d.kind in ("gpu", "cpu"))
    assert {d.kind for d in chosen} == {"gpu", "cpu"}
    assert not any(d.kind == "accelerator" for d in chosen)


def test_no_device_of_the_kinds_names_the_field(catalog):
    gpus = Catalog({key: d for key, d in catalog.devices.items() if d.kind == "gpu"})
    with pytest.raises(InputError) as refused:
        devices_of_kinds(gpus, ["cpu"])
    assert refused.value.field == "kinds" and "kinds of device the catalog has" in str(refused.value)


@pytest.mark.parametrize("max_devices, limit, expected", [
    (1, float("inf"), [1]),
    (8, float("inf"), [1, 2, 4, 8]),
    (6, float("inf"), [1, 2, 4]),  # not a power of two: the powers below it
    (64, 8, [1, 2, 4, 8]),  # a model bound (heads, layers) caps the count
    (64, 3, [1, 2]),
])
def test_device_counts_are_powers_of_two_within_both_bounds(max_devices, limit, expected):
    assert device_counts(max_devices, limit).tolist() == expected
