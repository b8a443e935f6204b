"""The device classes local-inference accuracy is reported by (sizer/runtimes/device_class.py)."""
from __future__ import annotations

import pytest

from sizer.hardware.catalog import load_catalog
from sizer.runtimes.device_class import CLASSES, device_class


@pytest.mark.parametrize("device,expected", [
    ("RTX 4090", "nvidia-consumer"), ("RTX A6000", "nvidia-consumer"), ("dgx-spark-gb10", "nvidia-consumer"),
    ("a100-80gb-sxm4", "nvidia-datacentre"), ("h100-pcie-80gb", "nvidia-datacentre"),  # HBM
    ("l40s", "nvidia-datacentre"), ("tesla-t4", "nvidia-datacentre"), ("a10g", "nvidia-datacentre"),  # GDDR, data-centre lines
    ("radeon-rx-7900-xtx", "amd"), ("apple-m2-ultra-gpu", "apple"), ("ryzen-9-7950x", "cpu"),
])
def test_device_class(device, expected):
    assert device_class(load_catalog().find(device)) == expected


def test_every_catalog_device_has_a_class():
    assert {device_class(d) for d in load_catalog()} <= set(CLASSES)
