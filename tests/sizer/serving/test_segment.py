"""The market segment a device is sold for (sizer/serving/segment.py): what a production ranking searches."""
from __future__ import annotations

import pytest

from sizer.hardware.catalog import load_catalog
from sizer.serving.segment import SEGMENTS, segment


@pytest.mark.parametrize("device, expected", [
    # the vendors' data-centre lines: HBM parts, the GDDR ones by name, AMD Instinct, accelerators, server CPUs
    ("h100-sxm5-80gb", "data-centre"), ("l40s", "data-centre"), ("a10g", "data-centre"), ("mi300x", "data-centre"),
    ("gaudi2", "data-centre"), ("tpu-v5e", "data-centre"), ("rtx-pro-6000-server", "data-centre"),
    ("epyc-9654", "data-centre"), ("xeon-platinum-8480plus", "data-centre"),
    # desk-side professional boards
    ("rtx-6000-ada", "workstation"), ("rtx-a6000", "workstation"), ("quadro-rtx-8000", "workstation"),
    ("rtx-pro-6000-blackwell", "workstation"), ("radeon-pro-w7900", "workstation"), ("arc-pro-b60", "workstation"),
    ("threadripper-pro-7995wx", "workstation"), ("xeon-w9-3495x", "workstation"),
    # GeForce and TITAN (HBM or not: the Titan V is a GeForce-driver card), Radeon with HBM, Apple, desktop CPUs
    ("rtx-3090", "consumer"), ("rtx-5090", "consumer"), ("titan-v", "consumer"), ("radeon-vii", "consumer"),
    ("apple-m2-ultra-gpu", "consumer"), ("ryzen-9-7950x", "consumer"), ("arc-a770", "consumer"),
])
def test_segment_of_named_devices(device, expected):
    assert segment(load_catalog().find(device)) == expected


def test_every_catalog_device_has_a_segment_and_no_geforce_is_data_centre():
    catalog = load_catalog()
    segments = {d.id: segment(d) for d in catalog}
    assert set(segments.values()) <= set(SEGMENTS)
    geforce = [d.id for d in catalog if "geforce" in d.name.lower() or "titan" in d.name.lower()]
    assert geforce and all(segments[i] == "consumer" for i in geforce)
    assert sum(s == "data-centre" for s in segments.values()) >= 30  # H100/H200/B200/MI300X/Gaudi/TPU ... all there
