"""sizer/engine/layers.py: a profile folded into rows with multiplicities, nothing lost or added."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.engine.layers import ATTENTION, CONV, MATRIX, VECTOR, fold_layers, layer_table, unit_of, with_trained_rows
from sizer.workloads.profile import Layer, Profile

KINDS = ["matmul", "conv", "attention", "norm", "elementwise", "embedding", "pool", "loss", "other"]


def _profile(layers, name="p", source="test"):
    return Profile(name=name, description=name, sample="sequence", seq_len=128, generated_by=source, layers=layers)


def _block(i: int = 0):
    # one transformer block of width h = 1024 at 128 tokens: QKV and output projections 4h^2 weights,
    # MLP 8h^2, FLOP 2 x tokens x weights (Kaplan et al. 2020 C = 2N per token)
    h, s = 1024, 128
    return [Layer(name=f"attn{i}", kind="matmul", forward_flops=2 * s * 4 * h * h, bytes=4 * s * h * 4, params=4 * h * h),
            Layer(name=f"scores{i}", kind="attention", forward_flops=2 * 2 * s * s * h, bytes=4 * s * s * 4),
            Layer(name=f"mlp{i}", kind="matmul", forward_flops=2 * s * 8 * h * h, bytes=4 * s * 5 * h * 4, params=8 * h * h),
            Layer(name=f"norm{i}", kind="norm", forward_flops=5 * s * h, bytes=2 * s * h * 4, params=2 * h)]


@pytest.mark.parametrize("kind, unit", [("conv", CONV), ("attention", ATTENTION), ("matmul", MATRIX), ("norm", VECTOR),
                                        ("elementwise", VECTOR), ("embedding", VECTOR), ("loss", VECTOR)])
def test_each_kind_runs_on_its_unit(kind, unit):
    assert unit_of(kind) == unit


def test_identical_blocks_fold_into_one_row_each():
    # 24 identical blocks: 4 distinct layers, each 24 times
    table = layer_table(_profile([layer for i in range(24) for layer in _block(i)]))
    assert len(table.unit) == 4 and list(table.multiplicity) == [24] * 4 and table.layer_count == 96
    h = 1024
    assert table.total_params == 24 * (12 * h * h + 2 * h)


@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 5), st.integers(0, 3), st.integers(0, 3)),
                min_size=1, max_size=30))
def test_folding_keeps_every_total(spec):
    layers = [Layer(name=f"l{i}", kind=kind, forward_flops=1e9 * f, bytes=1e6 * b, params=1e3 * p, activation_bytes=1e5 * b)
              for i, (kind, f, b, p) in enumerate(spec)]
    table = layer_table(_profile(layers))
    assert table.total_forward_flops == pytest.approx(sum(layer.forward_flops for layer in layers))
    assert table.total_params == pytest.approx(sum(layer.params for layer in layers))
    assert table.total_activation_bytes == pytest.approx(sum(layer.activation_bytes for layer in layers))
    assert table.multiplicity.sum() == len(layers) == table.layer_count
    assert len(set(zip(table.kinds, table.forward_flops, table.bytes, table.params, strict=True))) == len(table.unit)


def test_a_mark_keeps_otherwise_identical_layers_apart():
    layers = _block(0) + _block(1)
    table, marks = fold_layers(_profile(layers), mark=lambda layer: layer.name == "mlp1")
    assert len(table.unit) == 5 and marks.sum() == 1
    assert table.multiplicity[marks][0] == 1


def test_expert_layers_are_marked_and_their_parameters_counted():
    expert = Layer(name="expert", kind="matmul", forward_flops=1e9, bytes=1e6, params=5e6, expert=True)
    table = layer_table(_profile(_block() + [expert] * 8))
    assert table.expert_rows.sum() == 1 and table.expert_params == 8 * 5e6
    assert layer_table(_profile(_block())).expert is None and layer_table(_profile(_block())).expert_params == 0


def test_the_content_key_follows_the_figures_not_the_names():
    a = layer_table(_profile(_block(), name="a", source="one"))
    b = layer_table(_profile(_block(), name="b", source="two"))
    assert a.content_key == b.content_key
    changed = _block()
    changed[0] = changed[0].model_copy(update={"params": changed[0].params + 1})
    assert layer_table(_profile(changed)).content_key != a.content_key


def test_trained_rows_follow_the_frozen_ones():
    base = layer_table(_profile(_block()))
    adapter = layer_table(_profile([Layer(name="lora", kind="matmul", forward_flops=2 * 128 * 2 * 16 * 1024, bytes=1e4,
                                          params=2 * 16 * 1024)]))
    both = with_trained_rows(base, adapter)
    assert list(both.trained_rows) == [False] * 4 + [True]
    assert both.total_params == base.total_params + adapter.total_params
    assert both.layer_count == base.layer_count + 1 and both.expert is None
    assert np.array_equal(both.unit[:4], base.unit)
