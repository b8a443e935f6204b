"""Mixtures of experts and multi-head latent attention in the architecture and the layer graph
(sizer.workloads.architecture, sizer.workloads.layer_graph, catalog/models.yaml)."""
import pytest

from sizer.errors import InputError
from sizer.workloads.architecture import Architecture
from sizer.workloads.layer_graph import layer_graph
from sizer.workloads.registry import find_model


@pytest.mark.parametrize("name, total, active, rel", [
    # DeepSeek-V3 Technical Report (arXiv:2412.19437) §4.2: 671B total, 37B activated; the report's 37B is
    # rounded (our count 37.5B), hence 2 %
    ("deepseek-v3", 671e9, 37e9, 0.02),
    # DeepSeek-V2 (arXiv:2405.04434) §3.1.2: 236B total, 21B activated
    ("deepseek-v2", 236e9, 21e9, 0.02),
    # Qwen3 Technical Report (arXiv:2505.09388) Table 2: 30.5B / 3.3B and 235B / 22B
    ("qwen3-30b-a3b", 30.5e9, 3.3e9, 0.02), ("qwen3-235b-a22b", 235e9, 22e9, 0.02),
    # Qwen2 Technical Report Table 1: 57B / 14B
    ("qwen2-57b-a14b", 57e9, 14e9, 0.02),
    # OLMoE (arXiv:2409.02060) Table 1: 6.9B / 1.3B (rounded to 0.1B: 2 %)
    ("olmoe-1b-7b", 6.9e9, 1.3e9, 0.02),
    # Llama 4 model card: Maverick 400B / 17B, Scout 109B / 17B (the text model; rounded labels)
    ("llama-4-maverick", 400e9, 17e9, 0.02), ("llama-4-scout", 109e9, 17e9, 0.02),
])
def test_total_and_active_parameters_match_the_releases(name, total, active, rel):
    arch = find_model(name)
    assert arch.params_total() == pytest.approx(total, rel=rel)
    assert arch.params_active() == pytest.approx(active, rel=max(rel, 0.025))


def test_gpt_oss_counts_match_the_model_card_up_to_its_embedding_convention():
    # gpt-oss model card Table 1: 116.83B total, 5.13B active; its active count leaves out the
    # embedding table (201,088 x 2,880 = 0.579B), which we count
    arch = find_model("gpt-oss-120b")
    assert arch.params_total() == pytest.approx(116.83e9, rel=0.001)
    assert arch.params_active() - arch.vocab * arch.hidden == pytest.approx(5.13e9, rel=0.005)


def test_deepseek_v3_blocks_dense_then_mixture():
    arch = find_model("deepseek-v3")
    assert [arch.is_moe_block(i) for i in range(4)] == [False, False, False, True]
    assert arch.moe_blocks == 58
    maverick = find_model("llama-4-maverick")
    assert [maverick.is_moe_block(i) for i in range(4)] == [False, True, False, True]


def test_mla_kv_cache_is_the_latent():
    # DeepSeek-V2 §2.1.2 / Table 1: MLA caches (d_c + d_h^R) = 512 + 64 = 576 values per token and layer,
    # against 2 n_h d_h = 2 x 128 x 128 = 32,768 for multi-head attention; every TP rank keeps it whole
    arch = find_model("deepseek-v3")
    assert arch.kv_values_per_token() == 576
    assert arch.kv_values_per_token(8) == 576
    assert find_model("llama-2-70b").kv_values_per_token() == 2 * 8 * 128


def test_layer_graph_marks_routed_experts_and_counts_active_flops():
    arch = find_model("qwen3-30b-a3b")
    graph = layer_graph(arch, 4096)
    experts = sum(layer.params for layer in graph.layers if layer.expert)
    assert experts == pytest.approx(48 * 128 * 3 * 2048 * 768)
    # forward FLOP per token ~ 2 x active parameters plus attention (Kaplan et al. 2020 eq. 2.2 form)
    non_embedding_active = arch.params_active() - 2 * arch.vocab * arch.hidden
    attention = 4 * 4096 * arch.heads * arch.head_size * arch.layers
    expected = 2 * non_embedding_active + 2 * arch.vocab * arch.hidden + attention
    assert graph.forward_flops / 4096 == pytest.approx(expected, rel=0.01)


def test_capacity_factor_pads_expert_work():
    base = find_model("mixtral-8x7b")
    import dataclasses
    padded = dataclasses.replace(base, capacity_factor=1.25)
    work = lambda arch: sum(layer.forward_flops for layer in layer_graph(arch, 512).layers if layer.expert)  # noqa: E731
    assert work(padded) == pytest.approx(1.25 * work(base))


@pytest.mark.parametrize("field, value", [("experts_per_token", 9), ("experts_per_token", 0), ("experts", 0)])
def test_bad_expert_counts_are_refused_naming_the_field(field, value):
    fields = dict(name="x", family="decoder", layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=128,
                  ffn_type="swiglu", vocab=100, max_context=64, tied_embeddings=False, norm="rmsnorm",
                  position="rotary", source="test", experts=8, experts_per_token=2)
    fields[field] = value
    with pytest.raises(InputError, match=field):
        Architecture(**fields)
