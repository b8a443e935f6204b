"""sizer/engine/model_states.py: model states per device under each ZeRO stage, and the micro-batch that fits.

Reference figures are the ZeRO paper's (Rajbhandari et al. 2020, §5 and Figure 1): 7.5B parameters,
64 data-parallel devices, mixed-precision Adam (2 + 2 bytes of 16-bit weights and gradients, K = 12
bytes of FP32 master weights, momentum and variance). tests/sizer/engine/test_engine.py checks the
totals; here each component and where its sharding starts.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.engine.model_states import StateParts, largest_micro_batch, model_state_bytes

PSI = 7.5e9  # ZeRO paper Figure 1
N = 64.0
GB = 1e9


def _zero_paper(stage, frozen=0.0):
    # K = 12 split as the engine splits it: 4 B FP32 master weight + 8 B of Adam's two FP32 moments
    return model_state_bytes(PSI, np.array([2.0]), np.array([4.0]), 8.0, np.array([N]), np.array([stage]),
                             frozen_bytes=frozen)


@pytest.mark.parametrize("stage, weights, gradients, master, optimizer", [
    # ZeRO paper §5: P_os shards K Ψ, P_os+g also the gradients, P_os+g+p also the weights
    (0, 2 * PSI, 2 * PSI, 4 * PSI, 8 * PSI),
    (1, 2 * PSI, 2 * PSI, 4 * PSI / N, 8 * PSI / N),
    (2, 2 * PSI, 2 * PSI / N, 4 * PSI / N, 8 * PSI / N),
    (3, 2 * PSI / N, 2 * PSI / N, 4 * PSI / N, 8 * PSI / N),
])
def test_each_stage_shards_one_more_component(stage, weights, gradients, master, optimizer):
    parts = _zero_paper(stage)
    # exact arithmetic on floats of the same products: a tight tolerance
    assert parts.weights[0] == pytest.approx(weights, rel=1e-12)
    assert parts.gradients[0] == pytest.approx(gradients, rel=1e-12)
    assert parts.master_weights[0] == pytest.approx(master, rel=1e-12)
    assert parts.optimizer_states[0] == pytest.approx(optimizer, rel=1e-12)


def test_stage_zero_is_sixteen_bytes_per_parameter():
    # ZeRO paper §3.1: (2 + 2 + K) Ψ = 16 Ψ with K = 12: 120 GB for 7.5B parameters
    assert _zero_paper(0).total[0] / GB == pytest.approx(120.0, rel=1e-12)


def test_a_frozen_base_is_held_once_and_sharded_only_at_stage_three():
    frozen = 4e9  # bytes of weights stored but not trained (a LoRA base)
    for stage in (0, 1, 2):
        with_base, without = _zero_paper(stage, frozen), _zero_paper(stage)
        assert with_base.weights[0] - without.weights[0] == pytest.approx(frozen)
        # no gradients, master weights or optimizer states for frozen weights
        assert with_base.gradients[0] == without.gradients[0]
        assert with_base.optimizer_states[0] == without.optimizer_states[0]
    assert _zero_paper(3, frozen).weights[0] - _zero_paper(3).weights[0] == pytest.approx(frozen / N)


def test_a_single_device_shards_nothing_at_any_stage():
    parts = model_state_bytes(PSI, np.full(4, 2.0), np.full(4, 4.0), 8.0, np.ones(4), np.arange(4))
    assert np.allclose(parts.total, 16 * PSI)


def test_stages_are_evaluated_elementwise_over_configurations():
    parts = model_state_bytes(PSI, np.full(4, 2.0), np.full(4, 4.0), 8.0, np.full(4, N), np.arange(4))
    assert np.all(np.diff(parts.total) < 0)  # each stage holds less than the one before
    assert parts.total[3] == pytest.approx(16 * PSI / N)


def test_parts_add_componentwise():
    a = _zero_paper(1)
    b = _zero_paper(3)
    both = a + b
    for name in ("weights", "gradients", "master_weights", "optimizer_states"):
        assert getattr(both, name)[0] == getattr(a, name)[0] + getattr(b, name)[0]
    assert isinstance(both, StateParts) and both.total[0] == pytest.approx(a.total[0] + b.total[0])


def test_largest_micro_batch_counts_whole_samples():
    free = np.array([10.0, 9.99, 0.0, -5.0, 7.0, -1.0])
    per_sample = np.array([2.5, 2.5, 2.5, 2.5, 0.0, 0.0])
    fit = largest_micro_batch(free, per_sample)
    # 10 / 2.5 = 4; just under 10 B leaves 3 whole samples; no room or negative room: none;
    # without activations any non-negative room holds any micro-batch, negative room none
    assert fit.tolist() == [4.0, 3.0, 0.0, 0.0, np.inf, 0.0]


@settings(max_examples=50, deadline=None)
@given(free=st.floats(0.0, 1e12), per_sample=st.floats(1.0, 1e10))
def test_the_micro_batch_that_fits_fits_and_one_more_does_not(free, per_sample):
    m = float(largest_micro_batch(np.array([free]), np.array([per_sample]))[0])
    assert m * per_sample <= free * (1 + 1e-12)
    assert (m + 1) * per_sample > free
