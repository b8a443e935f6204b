"""Sliding-window attention: which blocks slide, their attention FLOP, and the KV cache they keep."""
import json

import pytest

from sizer.errors import InputError
from sizer.passes.arithmetic import attended, decode_profile, kv_cache_bytes_per_token, prefill_profile
from sizer.workloads.hf_config import architecture_from_config, read_hf_config
from sizer.workloads.layer_graph import attention_flops, layer_graph, windowed_attention_flops
from sizer.workloads.registry import find_model

GPT_OSS_20B = {"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
               "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "vocab_size": 201088,
               "num_local_experts": 32, "num_experts_per_tok": 4, "max_position_embeddings": 131072,
               "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 12}


def _scores(graph):
    return [layer for layer in graph.layers if layer.kind == "attention"]


def test_gpt_oss_alternates_from_a_sliding_block():
    arch = find_model("gpt-oss-20b")
    assert [arch.window(i) for i in range(4)] == [128, None, 128, None]
    assert arch.sliding_blocks == 12
    assert arch.kv_blocks(100) == 24  # within the window every block keeps every token
    assert arch.kv_blocks(12_800) == pytest.approx(12 + 12 * 128 / 12_800)


def test_a_model_without_a_window_is_unchanged():
    arch = find_model("llama-3.1-8b")
    assert arch.sliding_blocks == 0 and arch.kv_blocks(100_000) == arch.layers
    assert all(arch.window(i) is None for i in range(arch.layers))


def test_windowed_attention_counts_twice_the_causal_band():
    s, w = 4096, 128
    band = sum(min(i + 1, w) for i in range(s))  # scores a causal sliding window computes, query by query
    assert windowed_attention_flops(s, 1, 1, w) == pytest.approx(2 * 2 * 2 * band, rel=2e-3)
    assert windowed_attention_flops(100, 8, 64, 128) == attention_flops(100, 8, 64)  # the sequence fits the window
    assert windowed_attention_flops(s, 8, 64, None) == attention_flops(s, 8, 64)


def test_serving_graphs_give_sliding_blocks_their_band_training_graphs_the_square():
    served = layer_graph(find_model("gpt-oss-20b"), 8192, windows=True)
    by_block = {layer.name.split(".")[0]: layer.forward_flops for layer in _scores(served)}
    assert by_block["block0"] == pytest.approx(windowed_attention_flops(8192, 64, 64, 128))
    assert by_block["block1"] == pytest.approx(attention_flops(8192, 64, 64))
    assert by_block["block0"] < by_block["block1"] / 30
    prefill = {layer.name.split(".")[0]: layer.forward_flops for layer in _scores(prefill_profile(find_model("gpt-oss-20b"), 8192))}
    assert prefill["block0"] == pytest.approx(by_block["block0"] / 2)  # causal: half the counted band
    trained = layer_graph(find_model("gpt-oss-20b"), 8192)
    assert all(layer.forward_flops == attention_flops(8192, 64, 64) for layer in _scores(trained))


def test_a_training_estimate_says_how_it_counts_the_window():
    from sizer.facade import TimeRequest, estimate_time

    r = estimate_time(TimeRequest(model="gpt-oss-20b", device="H100 SXM", count=8, tokens=1e9, seq_len=4096))
    note = next(a for a in r.assumptions if a.name == "sliding window")
    assert "12 of 24 blocks" in note.value and "full attention" in note.value


def test_decode_attends_over_at_most_the_window():
    arch = find_model("gpt-oss-20b")
    profile = decode_profile(arch, 20_000)
    flops = {layer.name.split(".")[0]: layer.forward_flops for layer in _scores(profile)}
    per_token = attention_flops(1, arch.heads, arch.score_size)
    assert flops["block0"] == pytest.approx(per_token * 128) and flops["block1"] == pytest.approx(per_token * 20_000)
    assert attended(arch, 0, 50) == 50 and attended(arch, 1, 50) == 50


def test_kv_cache_per_token_counts_only_the_window_of_sliding_blocks():
    arch = find_model("gpt-oss-20b")
    every = kv_cache_bytes_per_token(arch, 2.0)
    at_long = kv_cache_bytes_per_token(arch, 2.0, context=21_000)
    assert every == 24 * 2 * 8 * 64 * 2
    assert at_long == pytest.approx(every * (12 + 12 * 128 / 21_000) / 24)
    assert kv_cache_bytes_per_token(arch, 2.0, context=64) == every


def test_hf_config_reads_layer_types_and_window(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT_OSS_20B))
    arch = read_hf_config(path)
    assert (arch.sliding_window, arch.global_every) == (128, 2)
    assert arch.params_total() == find_model("gpt-oss-20b").params_total()


@pytest.mark.parametrize("extra, expected", [
    ({"sliding_window": 4096}, (4096, 0)),  # Mistral 7B v0.1: every block slides
    ({"sliding_window": None}, (0, 0)),  # Mistral 7B v0.2
    ({"sliding_window": 131072, "use_sliding_window": False}, (0, 0)),  # as Qwen2 ships it
    ({"sliding_window": 1024, "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 4}, (1024, 6)),
    ({"sliding_window": 512, "layer_types": ["full_attention"] * 24}, (0, 0)),
])
def test_hf_sliding_window_patterns(extra, expected):
    base = {key: value for key, value in GPT_OSS_20B.items() if key not in ("sliding_window", "layer_types")}
    arch = architecture_from_config({**base, "model_type": "mistral", **extra})
    assert (arch.sliding_window, arch.global_every) == expected


def test_gemma2_config_alternates_without_layer_types():
    config = {"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16, "num_key_value_heads": 8,
              "head_dim": 256, "num_hidden_layers": 42, "intermediate_size": 14336, "vocab_size": 256000,
              "max_position_embeddings": 8192, "sliding_window": 4096}
    arch = architecture_from_config(config)
    builtin = find_model("gemma-2-9b")
    assert (arch.sliding_window, arch.global_every) == (builtin.sliding_window, builtin.global_every) == (4096, 2)


def test_an_irregular_layer_pattern_is_refused_naming_the_field():
    types = ["full_attention", "sliding_attention", "sliding_attention"] * 8
    with pytest.raises(InputError) as error:
        architecture_from_config({**GPT_OSS_20B, "layer_types": types})
    assert error.value.field == "model.layer_types"


def test_a_serving_estimate_says_what_the_window_keeps():
    from sizer.schemas.serving_requests import InferenceRequest
    from sizer.serving.estimate import estimate_inference

    r = estimate_inference(InferenceRequest(model="gpt-oss-20b", device="H100 SXM", prompt_len=20_000, output_len=2000))
    note = next(a for a in r.assumptions if a.name == "sliding window")
    assert "12 of 24 blocks" in note.value and "12.1 blocks' worth" in note.value
    full = estimate_inference(InferenceRequest(model="gpt-oss-20b", device="H100 SXM", prompt_len=64, output_len=32))
    assert "24 blocks' worth" in next(a for a in full.assumptions if a.name == "sliding window").value
