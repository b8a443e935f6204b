"""The decoder shape of a bare parameter count (sizer.workloads.decoder_shape), against the published Llama shapes."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.workloads.decoder_shape import (
    DEPTH_COEFFICIENT,
    DEPTH_EXPONENT,
    DEPTH_FIT_MODELS,
    MAX_GENERATED_PARAMS,
    decoder_for_params,
)
from sizer.workloads.registry import find_model


def test_depth_rule_is_the_fit_to_llama():
    # The constants are the least-squares fit ln L = ln c + e ln P over DEPTH_FIT_MODELS
    xs = [math.log(find_model(n).params_total()) for n in DEPTH_FIT_MODELS]
    ys = [math.log(find_model(n).layers) for n in DEPTH_FIT_MODELS]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    assert slope == pytest.approx(DEPTH_EXPONENT, abs=5e-4)
    assert math.exp(my - slope * mx) == pytest.approx(DEPTH_COEFFICIENT, rel=5e-3)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e7, max_value=2e12))
def test_decoder_for_params_hits_the_count_with_shapes_people_train(params):
    # issue 15: within 3 % of the count, heads a multiple of 8 (so TP 2/4/8 divides them), layers a multiple
    # of 4 (so pipelines divide them), grouped-query attention with 8 KV heads from 3e10 up, as Llama 2/3
    arch, why = decoder_for_params(params)
    assert arch.params_total() == pytest.approx(params, rel=0.03)
    assert arch.heads * arch.head_size == arch.hidden
    assert arch.heads % 8 == 0 and arch.layers % 4 == 0
    assert arch.kv_heads == (8 if params >= 3e10 else arch.heads) and arch.heads % arch.kv_heads == 0
    if arch.hidden >= 4096:
        assert arch.head_size == 128
    assert arch.head_size in (128, 64) or arch.hidden < 512
    if arch.ffn_hidden >= 2048:
        assert arch.ffn_hidden % 256 == 0
    if params >= 2e8:  # below, the 32000-token embeddings (2/3 of 1e8) dominate and the FFN takes what is left
        assert 2.0 <= arch.ffn_hidden / arch.hidden <= 4.0
    assert arch.ffn_type == "swiglu" and arch.vocab == 32000 and not arch.tied_embeddings
    assert str(arch.layers) in why and str(arch.hidden) in why and f"{arch.heads} heads" in why


@pytest.mark.parametrize("params, heads", [(1.1e9, 16), (6.9e10, 64), (1.75e11, 88), (3.4e11, 112), (5.4e11, 128)])
def test_the_counts_the_issue_names_get_divisible_heads(params, heads):
    # issue 15 found 17, 69, 93, 115 and 133 heads for these counts: no tensor parallelism could split them
    arch, _ = decoder_for_params(params)
    assert arch.heads == heads and arch.heads % 8 == 0


@pytest.mark.parametrize("params, llama", [(7e9, "llama-2-7b"), (13e9, "llama-2-13b"), (70e9, "llama-2-70b")])
def test_decoder_for_params_is_close_to_llama_2(params, llama):
    arch, _ = decoder_for_params(params)
    reference = find_model(llama)
    # depth within 10 %, width within 10 % of Llama 2's (Touvron et al. 2023, Table 1 shapes)
    assert arch.layers == pytest.approx(reference.layers, rel=0.10)
    assert arch.hidden == pytest.approx(reference.hidden, rel=0.10)
    assert arch.head_size == 128
    assert arch.heads == reference.heads and arch.kv_heads == reference.kv_heads  # 70B: 64 heads, 8 KV heads
    assert arch.ffn_hidden % 256 == 0
    assert arch.ffn_hidden / arch.hidden == pytest.approx(reference.ffn_hidden / reference.hidden, rel=0.10)


def test_decoder_for_params_takes_counts_read_at_the_edge_and_refuses_tiny_ones():
    from sizer.units import parse_count

    # a count as written ("7B") is read once, where the request is built; the shape takes the number
    assert decoder_for_params(parse_count("params", "7B"))[0] == decoder_for_params(7e9)[0]
    for bad in (1e3, -1, 0, 1.1e13, 1e30):
        with pytest.raises(InputError):
            decoder_for_params(bad)


@pytest.mark.parametrize("params", [1e19, 1e30])  # text ("1e30") is read at the edge, not here
def test_parameter_counts_beyond_the_work_bound_are_refused_before_a_shape_is_built(params):
    # issue 18: 1e19 parameters generated a 56,000-block decoder (7 CPU-s, 700 MB per distinct value);
    # 1e30 built a graph until the worker held 5.8 GB
    with pytest.raises(InputError, match="params"):
        decoder_for_params(params)
    arch, _ = decoder_for_params(MAX_GENERATED_PARAMS)  # the bound itself is built
    assert arch.params_total() == pytest.approx(MAX_GENERATED_PARAMS, rel=0.02)
