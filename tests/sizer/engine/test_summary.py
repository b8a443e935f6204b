"""sizer/engine/summary.py: the one range and utilisation of an evaluation, floored at the physical limit.

The engine's own step parts (sizer.engine.roofline.step_seconds) of a hand-computed GEMM are
summarised; ``summarise`` reads only the evaluation's step parts and step counts, so they are handed
to it as such. tests/sizer/engine/test_range_physical_limit.py checks the floor through every answer.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.engine.constants import Efficiencies
from sizer.engine.devices import build_device_table
from sizer.engine.layers import layer_table
from sizer.engine.roofline import Configs, step_seconds
from sizer.engine.step_inputs import INFERENCE
from sizer.engine.summary import summarise
from sizer.hardware.catalog import load_catalog
from sizer.workloads.profile import Layer, Profile

H100_BF16 = 989e12  # FLOP/s dense, ../shared/data/gpu-specs.csv
EFF = Efficiencies(matrix=0.5, tf32=0.5, fp32_matrix=0.5, vector=0.5, memory=0.8, launch=0.0, step_overhead=0.0,
                   source="test")


def _evaluation(sizes=(8192, 1024, 64), steps=(100.0, 100.0, 100.0)):
    """Per size n: one n x n x n GEMM per sample on one H100 at half its BF16 peak."""
    table = build_device_table((load_catalog().find("H100 SXM"),), "bf16", (EFF,))
    parts = []
    for n in sizes:
        layer = Layer(name="gemm", kind="matmul", forward_flops=2.0 * n ** 3, bytes=8.0 * n * n, params=float(n * n))
        layers = layer_table(Profile(name="g", description="g", generated_by="by hand", layers=[layer]))
        parts.append(step_seconds(layers, table, Configs.of(0, 1, 1, 1, 0), optimizer_state_bytes=0.0, kind=INFERENCE))
    joined = {name: np.concatenate([getattr(p, name) for p in parts])
              for name in ("step", "physical_limit", "model_flops", "hardware_flops")}
    return SimpleNamespace(parts=SimpleNamespace(**joined), steps=np.asarray(steps))


def test_a_compute_bound_gemm_at_half_peak_has_an_mfu_of_one_half():
    # the 8192^3 GEMM is compute-bound and runs at EFF.matrix = 0.5 of the peak it is measured against
    ev = _evaluation()
    s = summarise(ev, [0], 0.8, 1.3, H100_BF16)
    assert s.mfu[0] == pytest.approx(0.5, rel=1e-3)  # rtol: the catalog's 989.4 against the csv's 989
    assert s.hfu[0] == pytest.approx(s.mfu[0])  # inference: nothing recomputed
    assert s.step_expected[0] == pytest.approx(2.0 * 8192 ** 3 / (H100_BF16 * 0.5), rel=1e-3)
    assert s.step_low[0] == pytest.approx(0.8 * s.step_expected[0]) and s.step_high[0] == pytest.approx(1.3 * s.step_expected[0])
    assert s.training("expected")[0] == pytest.approx(100 * s.step_expected[0])


def test_the_range_is_floored_at_the_physical_limit():
    # a low factor of 0.1 would put the compute-bound GEMM at 5x its peak: the low end stops at the limit
    ev = _evaluation()
    s = summarise(ev, [0, 1, 2], 0.1, 2.0, H100_BF16)
    limit = ev.parts.physical_limit
    assert np.all(s.step_low >= limit) and s.step_low[0] == limit[0]
    assert np.all(s.step_low <= s.step_expected) and np.all(s.step_expected <= s.step_high)
    assert np.all(s.mfu <= 1 + 1e-12)


def test_rows_pick_configurations_and_factors_may_vary_per_row():
    ev = _evaluation()
    s = summarise(ev, np.asarray([2, 0]), np.asarray([0.9, 0.5]), np.asarray([1.1, 1.5]), H100_BF16)
    assert s.step_expected[0] == pytest.approx(max(ev.parts.step[2], ev.parts.physical_limit[2]))
    assert s.step_high[1] == pytest.approx(1.5 * ev.parts.step[0])


@pytest.fixture(scope="module")
def evaluation():
    return _evaluation()


@settings(deadline=None)
@given(st.floats(0.01, 1.0), st.floats(1.0, 10.0))
def test_no_end_of_the_range_beats_the_physical_limit(evaluation, low, high):
    ev = evaluation
    s = summarise(ev, [0, 1, 2], low, high, H100_BF16)
    for which in ("low", "expected", "high"):
        assert np.all(s.training(which) >= ev.parts.physical_limit * ev.steps * (1 - 1e-12))
    assert np.all(s.step_low <= s.step_expected) and np.all(s.step_expected <= s.step_high)
