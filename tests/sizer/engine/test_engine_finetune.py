"""sizer/engine: what a frozen base with trained adapter rows changes in the one engine."""
import numpy as np
import pytest

from sizer.choices import Precision
from sizer.engine.devices import cached_device_table
from sizer.engine.layers import layer_table, with_trained_rows
from sizer.engine.model_states import model_state_bytes
from sizer.engine.roofline import Configs, layer_pass, step_seconds
from sizer.engine.step_inputs import FROZEN, TRAINING
from sizer.workloads.profile import Layer, Profile


def _table(name: str, flops: float, params: float):
    layer = Layer(name=name, kind="matmul", forward_flops=flops, bytes=1e6, params=params, activation_bytes=1e6, kernels=1)
    return layer_table(Profile(name=name, description=name, sample="sequence", generated_by="test", layers=[layer]))


def test_trained_rows_take_the_training_factors_and_frozen_rows_the_frozen_ones():
    layers = with_trained_rows(_table("base", 1e12, 1e9), _table("adapter", 1e9, 1e6))
    factors = layer_pass(layers, FROZEN)
    assert list(factors.flops) == [FROZEN.flops, TRAINING.flops]
    assert list(factors.weight_reads) == [FROZEN.weight_reads, TRAINING.weight_reads]
    assert list(layers.trained_rows) == [False, True] and layers.total_params == 1e9 + 1e6
    # without a frozen part every row takes the pass's own factors
    assert list(layer_pass(_table("base", 1e12, 1e9), TRAINING).flops) == [TRAINING.flops]


def test_a_frozen_base_has_weights_but_no_gradients_or_optimizer_states():
    # 1e6 trained parameters (mixed-precision Adam: 2 + 2 + 4 + 8 bytes) over a 10 GB frozen base
    parts = model_state_bytes(1e6, np.array([2.0]), np.array([4.0]), 8.0, np.array([4.0]), np.array([0, 2, 3]),
                              frozen_bytes=10e9)
    assert parts.gradients[0] == 2e6 and parts.optimizer_states[0] == 8e6 and parts.master_weights[0] == 4e6
    assert list(parts.weights) == [10e9 + 2e6, 10e9 + 2e6, (10e9 + 2e6) / 4]  # sharded at stage 3 only


def test_a_frozen_pass_costs_two_thirds_of_training_and_updates_only_the_trained_parameters(catalog):
    table = cached_device_table((catalog.find("H100 SXM"),), Precision.BF16)
    configs = Configs.of(0, 8, 8, 1, 0)
    base = _table("base", 1e13, 1e9)
    adapters = with_trained_rows(base, _table("adapter", 1e9, 1e6))
    full = step_seconds(base, table, configs, optimizer_state_bytes=8.0)
    lora = step_seconds(adapters, table, configs, optimizer_state_bytes=8.0, kind=FROZEN, trainable_params=1e6)
    assert float(lora.kernels[0]) < float(full.kernels[0])
    assert float(lora.model_flops[0]) == pytest.approx((2 * 1e13 + 3 * 1e9) * 8 / 1)
    assert float(lora.optimizer[0]) == pytest.approx(float(full.optimizer[0]) * 1e-3)
    assert float(lora.data_parallel[0]) < float(full.data_parallel[0]) / 100
