"""Reference mode's held-out error (benchmarks/reference_mode.py) on a small, fast subset: Lambda's single-device
rows of measured-benchmarks.csv, each predicted from every other device of the same workload. The committed
figure is 12.5 % median, 31.4 % p90 (benchmarks/results/reference_mode.json); the bounds are a little looser."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import reference_mode  # noqa: E402


@pytest.fixture(scope="module")
def lambda_pairs():
    from sizer.hardware.catalog import load_catalog

    runs = [r for r in reference_mode.published_runs(load_catalog()) if r.source == "lambdal/deeplearning-benchmark"]
    return reference_mode.pair_errors(runs)["lambdal/deeplearning-benchmark"]


def test_lambda_pairs_stay_within_the_reported_error(lambda_pairs):
    s = reference_mode.summarize(lambda_pairs)
    assert s["pairs"] == 264
    assert s["median_abs_error"] <= 0.14 and s["p90_abs_error"] <= 0.35


def test_the_results_file_covers_every_set():
    import json

    data = json.loads((ROOT / "benchmarks" / "results" / "reference_mode.json").read_text())
    assert set(data["by_set"]) == {"single-device-training", "measured-benchmarks", "local-inference"}
    assert all(s["pairs"] > 0 for sources in data["by_set"].values() for s in sources.values())
