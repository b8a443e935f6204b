"""The generated layer graph (sizer.workloads.layer_graph)."""
import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.workloads.decoder_shape import decoder_for_params
from sizer.workloads.layer_graph import korthikanti_block_bytes, layer_graph
from sizer.workloads.profile import MATRIX_KINDS, Profile, load_profile
from sizer.workloads.registry import builtin_entries, find_model

GPT2_SEQ = 1024


def _block(graph: Profile, prefix: str):
    return [layer for layer in graph.layers if layer.name.startswith(prefix + ".")]


def test_contract_sample_names_and_order():
    graph = layer_graph(find_model("llama-2-7b"), 4096)
    assert graph.sample == "sequence" and graph.seq_len == 4096 and graph.input_shape == [4096]
    names = [layer.name for layer in graph.layers]
    assert names[0] == "embed" and names[-3:] == ["norm_f", "head", "loss"]
    assert names[1:12] == ["block0.norm1", "block0.attn.qkv", "block0.attn.scores", "block0.attn.out",
                           "block0.attn.residual", "block0.norm2", "block0.mlp.up", "block0.mlp.act",
                           "block0.mlp.down", "block0.mlp.residual", "block1.norm1"]
    assert len(names) == 1 + 32 * 10 + 3
    kinds = {layer.name.split(".", 1)[-1]: layer.kind for layer in graph.layers}
    assert kinds["attn.scores"] == "attention" and kinds["mlp.act"] == "elementwise"
    assert kinds["attn.residual"] == "elementwise" and kinds["loss"] == "loss" and kinds["head"] == "matmul"
    assert "llama-2-7b" in graph.generated_by and "source" in graph.generated_by
    assert all(layer.kernels >= 1 for layer in graph.layers)


def test_moe_router_and_encoder_decoder_names():
    mixtral = [layer.name for layer in layer_graph(find_model("mixtral-8x7b"), 128).layers]
    assert mixtral[6:8] == ["block0.norm2", "block0.router"]
    t5 = [layer.name for layer in layer_graph(find_model("t5-base"), 128).layers]
    assert t5[1] == "enc0.norm1" and "enc.norm_f" in t5
    assert t5.index("enc.norm_f") < t5.index("block0.norm1") < t5.index("block0.xattn.scores")
    assert {"block0.xattn.norm", "block0.xattn.qkv", "block0.xattn.out", "block0.xattn.residual"} <= set(t5)
    pattern = re.compile(r"^(embed|norm_f|head|loss|enc\.norm_f|(block|enc)\d+\.[a-z_0-9.]+)$")
    for entry in builtin_entries():
        for layer in layer_graph(entry.architecture(), 64).layers:
            assert pattern.match(layer.name), (entry.name, layer.name)


@pytest.mark.parametrize("flash", [True, False])
def test_params_sum_to_the_architecture_exactly(flash):
    for entry in builtin_entries():
        arch = entry.architecture()
        assert layer_graph(arch, 256, flash_attention=flash).params == arch.params_total(), entry.name


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1e6, max_value=1e12), st.integers(min_value=1, max_value=8192))
def test_params_sum_for_generated_decoders(params, seq_len):
    arch, _ = decoder_for_params(params)
    assert layer_graph(arch, seq_len).params == arch.params_total()


def test_moe_lists_all_experts_but_counts_active_flops():
    mixtral = find_model("mixtral-8x7b")
    graph = layer_graph(mixtral, 4096)
    up = next(layer for layer in graph.layers if layer.name == "block0.mlp.up")
    assert up.params == 8 * 2 * 4096 * 14336  # all 8 experts' gate and up matrices
    assert up.forward_flops == 2 * 2 * 4096 * (2 * 14336) * 4096  # 2 experts per token
    dense = dataclasses.replace(mixtral, experts=1, experts_per_token=1)
    dense_up = next(layer for layer in layer_graph(dense, 4096).layers if layer.name == "block0.mlp.up")
    assert up.forward_flops == 2 * dense_up.forward_flops


def _megatron_forward(L, h, s, V):
    # Narayanan et al. 2021 eq. 3 without recomputation, forward third: 72 B s L h^2 (1 + s/6h + V/12hL) / 3
    return 24 * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))


def test_gpt3_forward_flops_are_megatron_formula():
    arch = find_model("gpt3-175b")
    s = 2048
    graph = layer_graph(arch, s)
    matrix = sum(layer.forward_flops for layer in graph.layers if layer.kind in MATRIX_KINDS)
    # matrices and attention exactly (biases and vector work are outside the formula)
    assert matrix == pytest.approx(_megatron_forward(96, 12288, s, arch.vocab), rel=1e-12)
    # everything, vector work included: within 1 %
    assert graph.forward_flops == pytest.approx(_megatron_forward(96, 12288, s, arch.vocab), rel=0.01)
    # and 2 P s + 4 L s^2 h: P without the learned positions (the tied table is used once, as the head)
    p_matrix = arch.params_total() - arch.max_context * arch.hidden
    assert matrix == pytest.approx(2 * p_matrix * s + 4 * 96 * s * s * 12288, rel=1e-3)


def test_llama2_7b_forward_flops_at_4096():
    arch = find_model("llama-2-7b")
    s = 4096
    graph = layer_graph(arch, s)
    matrix = sum(layer.forward_flops for layer in graph.layers if layer.kind in MATRIX_KINDS)
    p_matrix = arch.params_total() - arch.vocab * arch.hidden  # the input embedding is a gather, not a matmul
    assert matrix == pytest.approx(2 * p_matrix * s + 4 * arch.layers * s * s * arch.hidden, rel=1e-4)
    assert graph.forward_flops == pytest.approx(2 * arch.params_total() * s + 4 * 32 * s * s * 4096, rel=0.02)


def test_gpt3_block_keeps_korthikanti_34_exactly():
    arch = find_model("gpt3-175b")  # GPT-3 style: dropout, LayerNorm, MHA, FFN 4h
    s, h, a = 2048, 12288, 96
    for flash in (False, True):
        block = _block(layer_graph(arch, s, flash_attention=flash), "block5")
        kept = sum(layer.activation_bytes for layer in block)
        statistics = 0 if not flash else 4 * a * s  # flash: one FP32 log-sum-exp per row and head
        # 16-bit bytes s h (34 + 5 a s / h), doubled for the FP32-storage convention
        assert kept == 2 * korthikanti_block_bytes(s, h, a, flash_attention=flash) + statistics
    assert korthikanti_block_bytes(s, h, a) == s * h * 34 + 5 * a * s * s


def test_models_without_dropout_keep_no_masks():
    arch = find_model("llama-2-7b")  # no dropout, MHA, SwiGLU of 11008
    s, h, a, f = 4096, 4096, 32, 11008
    block = _block(layer_graph(arch, s, flash_attention=False), "block0")
    kept = sum(layer.activation_bytes for layer in block) / 2  # back to 16-bit bytes
    # Korthikanti's terms less the dropout masks (sh + sh) and the softmax mask and dropout output (3 a s^2);
    # the FFN terms widen to a gated 11008: up input 2sh, act input 2 * 2 s f, down input 2 s f
    expected = s * h * (2 + 2 + 6 + 2 + 2 + 2) + 2 * a * s * s + 2 * s * 2 * f + 2 * s * f
    assert kept == expected
    with_dropout = dataclasses.replace(arch, dropout=True)
    block = _block(layer_graph(with_dropout, s, flash_attention=False), "block0")
    assert sum(layer.activation_bytes for layer in block) / 2 == expected + 2 * s * h + 3 * a * s * s


def test_gpt2_close_to_the_torch_profile():
    # catalog/workloads/gpt2-small.yaml was profiled with torch from validation.model_zoo.gpt2_small: no
    # dropout, no loss, unfused attention. Compare like with like.
    profile = load_profile("gpt2-small")
    arch = dataclasses.replace(find_model("gpt2"), dropout=False)
    graph = layer_graph(arch, GPT2_SEQ, flash_attention=False)
    layers = [layer for layer in graph.layers if layer.name != "loss"]
    assert sum(layer.params for layer in layers) == profile.params  # 124,439,808 both
    # FLOPs: the profile counts matmuls only; ours adds vector work (0.14 %)
    assert sum(layer.forward_flops for layer in layers) == pytest.approx(profile.forward_flops, rel=0.005)
    matrix = sum(layer.forward_flops for layer in layers if layer.kind in MATRIX_KINDS)
    assert matrix == pytest.approx(profile.forward_flops, rel=1e-9)
    # Activations: the profiler counts each saved block of memory once (the softmax output that softmax
    # and the A·V matmul both save is one tensor), as Korthikanti does; it once counted it twice and
    # the boolean causal masks, 34 % above this count. The masks stay: model_zoo makes one anew in each
    # block (s^2 booleans that masked_fill saves); with them the two agree within 0.1 %.
    ours = sum(layer.activation_bytes for layer in layers)
    masks = 12 * GPT2_SEQ**2
    assert ours + masks == pytest.approx(profile.activation_bytes, rel=0.001)


def test_flash_attention_keeps_less_and_moves_less():
    arch = find_model("llama-2-7b")
    flash, unfused = layer_graph(arch, 4096), layer_graph(arch, 4096, flash_attention=False)
    assert flash.forward_flops == unfused.forward_flops
    assert flash.activation_bytes < unfused.activation_bytes
    assert sum(layer.bytes for layer in flash.layers) < sum(layer.bytes for layer in unfused.layers)


def test_bad_sequence_lengths():
    for bad in (0, -1, 1.5, True, "1024", 10**9):
        with pytest.raises(InputError):
            layer_graph(find_model("gpt2"), bad)


def test_the_graph_is_a_valid_profile_the_engine_can_read():
    graph = layer_graph(find_model("bert-large"), 512)
    again = Profile.model_validate(graph.model_dump())
    assert again == graph
    names = [layer.name for layer in graph.layers]
    assert names[1:6] == ["block0.attn.qkv", "block0.attn.scores", "block0.attn.out", "block0.attn.residual",
                          "block0.norm1"]  # post-norm encoder
    assert "norm_f" not in names and names[-2:] == ["head", "loss"]


def test_the_deadline_holds_inside_graph_building():
    # issue 18: building a layer graph ignored the request's deadline (503 at 20 s, the worker went on)
    from sizer.deadline import time_limit
    from sizer.errors import EstimateTimeout

    with time_limit(0), pytest.raises(EstimateTimeout):
        layer_graph(find_model("llama-2-70b"), 4096)


def test_a_graph_deeper_than_the_work_bound_is_refused_before_it_is_built():
    # issue 18: a shape of 1e8 blocks (config.json) or 56,000 (1e19 parameters) was built layer by layer
    from sizer.workloads.architecture import MAX_BLOCKS

    llama = find_model("llama-2-7b")
    with pytest.raises(InputError, match="model.layers"):
        dataclasses.replace(llama, layers=MAX_BLOCKS + 1)
    assert dataclasses.replace(llama, layers=MAX_BLOCKS).layers == MAX_BLOCKS  # the bound itself is allowed
    t5 = find_model("t5-base")
    with pytest.raises(InputError, match="encoder and decoder together"):
        dataclasses.replace(t5, layers=MAX_BLOCKS // 2 + 1, encoder_layers=MAX_BLOCKS // 2)
    with pytest.raises(InputError, match="experts"):
        dataclasses.replace(llama, experts=100_000, experts_per_token=2)
