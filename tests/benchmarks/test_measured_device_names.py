"""Every Apple chip, CPU and DGX Spark a measurement file of ../shared/data names resolves to its catalog entry, or is
left out with a reason (benchmarks/measured_device_names.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import measured_device_names  # noqa: E402


@pytest.fixture(scope="module")
def outcomes(catalog):
    if not measured_device_names.DATA.is_dir():
        pytest.skip(f"{measured_device_names.DATA} is not beside this checkout")
    return measured_device_names.check(catalog, measured_device_names.measured_names())


def test_every_measured_apple_cpu_and_spark_device_resolves_or_says_why_not(outcomes):
    unresolved = [(text, outcome, detail) for text, outcome, detail in outcomes if outcome not in ("resolved", "left out")]
    assert not unresolved, unresolved
    # the files name 51 such devices (2026-12); the M5 family, the 4-vCPU slices and n1-standard-16 are left out
    assert sum(o[1] == "resolved" for o in outcomes) >= 44


def test_the_scope_is_apple_cpus_and_spark_not_a_gpu_runs_host(outcomes):
    texts = {text for text, _, _ in outcomes}
    assert "Apple M1 Max (32-core GPU, 32GB)" in texts and any(t.startswith("NVIDIA GB10") for t in texts)
    # the RTX 2080 row names its host CPU (i9-10900X); the CPU is not what the run measures
    assert not any(t.startswith("NVIDIA GeForce") for t in texts)


def test_a_name_that_leaves_the_configuration_open_is_resolved_with_a_statement(outcomes):
    by_text = {text: detail for text, _, detail in outcomes}
    assert "stated:" in by_text["Apple M2 Ultra (memory/GPU cores not stated)"]
    assert "stated:" not in by_text["Apple M1 Max (32-core GPU, 32GB)"]
