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


def test_the_unmeasured_classes_are_those_no_mapped_run_is_on():
    import csv
    from pathlib import Path

    from sizer.runtimes.device_class import UNMEASURED_CLASSES
    runs = Path(__file__).resolve().parents[3] / "benchmarks" / "local_inference_runs.csv"
    with open(runs, newline="") as f:
        measured = {device_class(load_catalog().find(row["device"])) for row in csv.DictReader(f)}
    assert measured == set(CLASSES) - UNMEASURED_CLASSES


def test_a_data_centre_card_under_llama_cpp_says_its_kernels_are_not_scored_on_its_class():
    from sizer.facade import InferenceRequest, estimate_inference

    r = estimate_inference(InferenceRequest(model="llama-3-8b", weights="q4_k_m", device="A100 80GB SXM4"))
    note = next(a for a in r.assumptions if a.name == "runtime kernels")
    assert "no nvidia-datacentre run among the fitted runs" in note.value and not note.verified
    consumer = estimate_inference(InferenceRequest(model="llama-3-8b", weights="q4_k_m", device="RTX 4090"))
    assert "not scored" not in next(a for a in consumer.assumptions if a.name == "runtime kernels").value
