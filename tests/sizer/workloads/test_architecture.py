"""sizer/workloads/architecture.py: a transformer's shape, its parameter counts and its KV cache per token."""
import dataclasses

import pytest

from sizer.errors import InputError
from sizer.workloads.architecture import MAX_BLOCKS, Architecture
from sizer.workloads.registry import find_model


def small(**changes):
    """A 4-block decoder small enough to count by hand."""
    fields = dict(name="small", family="decoder", layers=4, hidden=64, heads=4, kv_heads=4, ffn_hidden=256,
                  ffn_type="swiglu", vocab=100, max_context=512, tied_embeddings=True, norm="rmsnorm",
                  position="rotary", source="test")
    return Architecture(**{**fields, **changes})


def test_llama_2_7b_parameter_count_is_the_published_one():
    # Hugging Face meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters (safetensors metadata); a dense model's
    # active count is its total
    arch = find_model("llama-2-7b")
    assert arch.params_total() == 6_738_415_616
    assert arch.params_active() == arch.params_total() and not arch.moe


def test_a_small_decoder_counted_by_hand():
    # attention 4 h^2 = 16384; SwiGLU FFN 3 h f = 49152; two RMSNorms 2 h = 128: 65664 per block;
    # 4 blocks, tied embeddings V h = 6400, final norm h = 64
    arch = small()
    assert arch.attention_params() == 4 * 64 * 64
    assert arch.expert_params() == 3 * 64 * 256
    assert arch.block_params() == 4 * 64 * 64 + 3 * 64 * 256 + 2 * 64
    assert arch.params_total() == 4 * 65664 + 100 * 64 + 64


def test_a_gelu_ffn_has_two_matrices_and_a_gated_one_three():
    # Shazeer 2020 (GLU variants): a gated FFN adds the gate matrix h x f
    assert small(ffn_type="gelu").expert_params() == 2 * 64 * 256
    assert small(ffn_type="geglu").expert_params() == 3 * 64 * 256


def test_untied_embeddings_add_the_output_head():
    assert small(tied_embeddings=False).params_total() - small().params_total() == 100 * 64


def test_head_sizes_default_to_hidden_over_heads():
    assert small().head_size == 16 and small(head_dim=32).head_size == 32
    assert small().value_size == 16 and small(v_head_dim=8).value_size == 8


@pytest.mark.parametrize("tensor_parallel, values", [(1, 2 * 8 * 128), (4, 2 * 2 * 128), (16, 2 * 1 * 128)])
def test_kv_values_per_token_split_the_kv_heads_over_ranks(tensor_parallel, values):
    # Llama 3 8B: 8 KV heads of 128 (grouped-query); beyond 8 ranks each rank still keeps one head whole
    assert find_model("llama-3-8b").kv_values_per_token(tensor_parallel) == values


def test_moe_blocks_follow_dense_layers_and_interleave():
    # dense_layers=1, moe_every=2: blocks 0 (dense), then 2 (index - 1 + 1 even) of 1..3 are mixtures
    arch = small(experts=4, experts_per_token=2, dense_layers=1, moe_every=2)
    assert [arch.is_moe_block(i) for i in range(4)] == [False, False, True, False]
    assert arch.moe_blocks == 1
    assert not small().is_moe_block(0) and small().moe_blocks == 0


def test_active_parameters_count_only_the_routed_experts():
    # 4 experts, 2 per token, one mixture block of 4: active is total less 2 experts of 3 h f each, per block
    arch = small(experts=4, experts_per_token=2)
    assert arch.params_total() - arch.params_active() == 4 * 2 * 3 * 64 * 256


def test_sliding_blocks_keep_only_their_window():
    # every other block slides over 128 tokens and every second is global (gpt-oss's pattern): at 1024 tokens,
    # 2 full blocks + 2 sliding x 128/1024 = 2.25 blocks' worth of KV cache per token
    arch = small(sliding_window=128, global_every=2)
    assert [arch.window(i) for i in range(4)] == [128, None, 128, None]
    assert arch.sliding_blocks == 2
    assert arch.kv_blocks(1024) == pytest.approx(2.25)
    assert arch.kv_blocks(100) == 4.0  # the context fits the window: every block keeps every token
    assert small().kv_blocks(1024) == 4.0


@pytest.mark.parametrize("changes, field", [
    (dict(experts_per_token=3, experts=2), "experts_per_token"),
    (dict(dense_layers=5), "dense_layers"),
    (dict(sliding_window=-1), "sliding_window"),
    (dict(layers=MAX_BLOCKS + 1), "model.layers"),
])
def test_an_impossible_shape_is_refused_naming_the_field(changes, field):
    with pytest.raises(InputError) as error:
        small(**changes)
    assert error.value.field == field


def test_an_architecture_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        small().layers = 5
