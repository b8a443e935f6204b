"""sizer/engine/stacks.py: a profiled network on a GPU gets the fitted unit shares times its kernel library's
factor; CPUs, other accelerators and generated transformers keep their own defaults."""
from __future__ import annotations

import pytest

from sizer.choices import DeviceKind
from sizer.engine.constants import (
    CPU_EFFICIENCIES,
    TRANSFORMER_GPU_EFFICIENCIES,
    default_efficiencies,
    device_efficiencies,
    stack_efficiencies,
)
from sizer.engine.stacks import StackFit, kernel_library, stack_fit
from sizer.hardware.catalog import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_each_vendor_trains_through_its_library(catalog):
    assert kernel_library(catalog.find("rtx-3090")) == "cudnn"
    assert kernel_library(catalog.find("rx-6800")) == "miopen"
    assert kernel_library(catalog.find("apple-m1-max-gpu")) == "mps"
    assert kernel_library(catalog.find("apple-m1-max-cpu")) == "cpu"


def test_a_library_factor_scales_every_compute_rate_not_memory_or_launch(catalog):
    fit = StackFit(matrix=0.5, tf32=0.5, fp32_matrix=0.8, memory=0.6, launch=3e-5, library={"miopen": 0.5})
    base = default_efficiencies(DeviceKind.GPU)
    amd = stack_efficiencies(catalog.find("rx-6800"), base, fit)
    nvidia = stack_efficiencies(catalog.find("rtx-3090"), base, fit)
    assert (amd.matrix, amd.fp32_matrix, amd.vector) == pytest.approx((0.25, 0.4, base.vector * 0.5))
    assert (nvidia.matrix, nvidia.fp32_matrix, nvidia.vector) == pytest.approx((0.5, 0.8, base.vector))
    assert (amd.memory, amd.launch) == (nvidia.memory, nvidia.launch) == (0.6, 3e-5)
    assert "miopen x 0.5" in amd.source


def test_a_library_without_fitted_runs_keeps_cudnns_and_says_so(catalog):
    fit = StackFit(matrix=0.5, tf32=0.5, fp32_matrix=0.8, memory=0.6, launch=3e-5, library={})
    apple = stack_efficiencies(catalog.find("apple-m1-max-gpu"), default_efficiencies(DeviceKind.GPU), fit)
    assert apple.fp32_matrix == 0.8
    assert "unverified" in apple.source


def test_the_engine_uses_the_committed_fit_for_profiled_gpus_only(catalog):
    fit = stack_fit()
    assert "single_device_accuracy.py" in fit.source
    gpu = device_efficiencies(catalog.find("rtx-3090"))
    assert (gpu.matrix, gpu.tf32, gpu.fp32_matrix, gpu.memory, gpu.launch) == \
        (fit.matrix, fit.tf32, fit.fp32_matrix, fit.memory, fit.launch)
    assert device_efficiencies(catalog.find("xeon-e5-2686-v4")) == CPU_EFFICIENCIES
    assert device_efficiencies(catalog.find("rtx-3090"), transformer=True) == TRANSFORMER_GPU_EFFICIENCIES
