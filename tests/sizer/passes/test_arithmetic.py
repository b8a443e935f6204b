"""sizer.passes.arithmetic: the KV cache, the tensor-parallel head split, the expert and throughput
formulas, and the evaluation's memory and fit, each against a value worked by hand."""
from __future__ import annotations

import numpy as np
import pytest

from sizer.errors import InputError
from sizer.passes.arithmetic import (
    ServingCase,
    check_tensor_ranks,
    compute_bound_batch,
    evaluate_serving,
    head_splitting_ranks,
    host_share,
    kv_cache_bytes_per_token,
    serving_table,
    splits_heads,
    stored_weight_bytes,
    table_row,
    tensor_replicas,
    total_tokens_per_second,
    touched_experts,
)
from sizer.runtimes.formats import KV_CACHE_BYTES, weight_format
from sizer.workloads.registry import find_model

LLAMA_70B = find_model("llama-2-70b")  # 80 layers, 64 query heads, 8 key/value heads of 128 (its config.json)


def test_kv_cache_per_token_splits_key_value_heads_over_ranks():
    # 80 layers x 2 x 8 KV heads x 128 x 2 B = 327,680 B (cursor.so: 320 KB per token for Llama-2-70B)
    assert kv_cache_bytes_per_token(LLAMA_70B, 2.0) == 327_680.0
    # 8 ranks hold one head each; 16 ranks replicate the 8 heads, so each still holds one whole head
    assert kv_cache_bytes_per_token(LLAMA_70B, 2.0, tensor_parallel=8) == 327_680.0 / 8
    assert kv_cache_bytes_per_token(LLAMA_70B, 2.0, tensor_parallel=16) == 327_680.0 / 8
    assert kv_cache_bytes_per_token(LLAMA_70B, KV_CACHE_BYTES["fp8"]) == 327_680.0 / 2


@pytest.mark.parametrize("count, whole", [(1, True), (2, True), (8, True), (16, True), (3, False), (128, False)])
def test_ranks_get_whole_heads(count, whole):
    # 64 query heads and 8 KV heads: 16 divides 64 and is a multiple of 8; 128 does not divide 64
    assert splits_heads(count, LLAMA_70B) is whole


@pytest.mark.parametrize("count, layout", [(1, (1, 1)), (8, (1, 8)), (3, (3, 1)), (12, (3, 4)), (24, (3, 8)),
                                           (128, (2, 64))])
def test_a_count_that_splits_no_heads_is_replicas_of_its_largest_divisor_that_does(count, layout):
    # 64 query heads, 8 KV heads: 4 divides 12 and splits them (12 = 3 x 4); 64 divides 128 (128 = 2 x 64)
    assert tensor_replicas(count, LLAMA_70B) == layout
    replicas, tp = layout
    assert replicas * tp == count and splits_heads(tp, LLAMA_70B)


@pytest.mark.parametrize("count, node, layout", [(128, 8, (16, 8)), (24, 8, (3, 8)), (12, 8, (3, 4)), (128, 72, (2, 64)),
                                                 (3, 8, (3, 1))])
def test_a_replica_keeps_its_tensor_parallel_inside_a_node(count, node, layout):
    # 128 devices of 8 per node: 64 splits the heads but spans 8 nodes; 8 splits them within one (16 x 8). An NVL72
    # domain of 72 holds 64 (2 x 64)
    assert tensor_replicas(count, LLAMA_70B, node) == layout
    replicas, tp = layout
    assert replicas * tp == count and tp <= node and splits_heads(tp, LLAMA_70B)


@pytest.mark.parametrize("node", [None, 4, 8, 72])
def test_the_replicas_chosen_are_the_best_of_every_layout_of_the_count(node):
    # every way to run each count as whole replicas of one tensor-parallel size: the one chosen uses every device,
    # gives whole heads, keeps within a node, and no other such layout has a larger tensor-parallel size
    for count in range(1, 257):
        options = [(count // tp, tp) for tp in range(1, count + 1) if not count % tp and splits_heads(tp, LLAMA_70B)
                   and (node is None or tp <= node)]
        assert tensor_replicas(count, LLAMA_70B, node) == max(options, key=lambda layout: layout[1]), count


def test_the_sizes_that_split_the_heads_are_those_splits_heads_allows():
    # 64 query heads, 8 KV heads: 1, 2, 4, 8, 16, 32 and 64 (each divides 64 and 8 divides or is divided by it)
    assert head_splitting_ranks(LLAMA_70B, 100) == [1, 2, 4, 8, 16, 32, 64]
    assert head_splitting_ranks(LLAMA_70B, 12) == [1, 2, 4, 8] and head_splitting_ranks(LLAMA_70B, 0) == [1]


def test_a_rank_count_that_splits_a_head_is_refused_with_counts_that_fit():
    with pytest.raises(InputError, match="count") as refused:
        check_tensor_ranks(3, LLAMA_70B)
    assert "1, 2, 4, 8" in str(refused.value)
    check_tensor_ranks(8, LLAMA_70B)


def test_touched_experts_between_k_and_e():
    # E (1 - (1 - k/E)^B) with E = 8, k = 2: one token reads 2, a large batch all 8; B = 2: 8 (1 - 0.75^2) = 3.5
    touched = touched_experts(8, 2, np.asarray([1.0, 2.0, 1000.0]))
    assert touched == pytest.approx([2.0, 3.5, 8.0])


def test_total_tokens_per_second_counts_prefill_once():
    # B n / (t_prefill + (n - 1) t_decode): 8 x 100 / (0.5 + 99 x 0.01) = 536.9 tokens/s
    rate = total_tokens_per_second(np.asarray([8.0]), 100, np.asarray([0.5]), np.asarray([0.01]))
    assert rate[0] == pytest.approx(800 / 1.49)


def test_stored_bytes_keep_the_edges_at_16_bits_where_the_format_does():
    int4 = weight_format("int4")  # weights only, scales neglected: 0.5 B every parameter
    assert stored_weight_bytes(LLAMA_70B, int4) == 0.5
    gptq = weight_format("gptq-int4-g128")  # 4 + 20/128 bits, embeddings and head at 2 B: a little above
    assert (4 + 20 / 128) / 8 < stored_weight_bytes(LLAMA_70B, gptq) < 0.6


@pytest.fixture(scope="module")
def h100(catalog):
    return serving_table((catalog.find("H100 SXM"),), weight_format("fp16"))


def test_evaluation_memory_adds_up_and_kv_grows_with_the_batch(h100):
    case = ServingCase(find_model("llama-3-8b"), weight_format("fp16"), 2.0, 1024, 256)
    a = evaluate_serving(case, h100, [0, 0], [1, 1], [1.0, 4.0])
    assert a.memory == pytest.approx(a.weights + a.kv_cache + a.activations + a.reserve)
    assert a.kv_cache[1] == pytest.approx(4 * a.kv_cache[0])  # the same context per sequence
    # context = prompt + output = 1280 tokens of the per-token KV cache, one sequence
    assert a.kv_cache[0] == pytest.approx(kv_cache_bytes_per_token(case.arch, 2.0, 1, 1280) * 1280)
    assert a.fits.all() and a.max_batch[0] >= 4


def test_tensor_parallel_halves_the_weights_per_device(h100):
    case = ServingCase(LLAMA_70B, weight_format("fp16"), 2.0, 512, 128)
    a = evaluate_serving(case, h100, [0, 0], [2, 4], [1.0, 1.0])
    assert a.weights[0] == pytest.approx(2 * a.weights[1])
    assert a.decode_seconds[1] < a.decode_seconds[0]


def test_no_offload_keeps_nothing_on_the_host():
    case = ServingCase(LLAMA_70B, weight_format("q4_k_m"), 2.0, 512, 128)
    assert host_share(case) == (0.0, 0.0)
    half = ServingCase(LLAMA_70B, weight_format("q4_k_m"), 2.0, 512, 128, gpu_layers=40)
    weights, kv = host_share(half)
    assert weights == pytest.approx(LLAMA_70B.params_total() * stored_weight_bytes(LLAMA_70B, half.weights) / 2)
    assert kv == pytest.approx(kv_cache_bytes_per_token(LLAMA_70B, 2.0, context=640) * 640 / 2)


def test_decode_turns_compute_bound_at_a_larger_batch_for_a_longer_context(h100):
    # a longer context reads more KV per sequence, as many bytes more as FLOP more: it turns later or never
    short = compute_bound_batch(ServingCase(find_model("llama-3-8b"), weight_format("fp16"), 2.0, 128, 128), h100, 0, 1)
    long = compute_bound_batch(ServingCase(find_model("llama-3-8b"), weight_format("fp16"), 2.0, 8192, 128), h100, 0, 1)
    assert short is not None and (long is None or long > short)


def test_table_row_is_one_device_of_the_same_figures(catalog):
    table = serving_table((catalog.find("H100 SXM"), catalog.find("A100 80GB SXM")), weight_format("fp16"))
    row = table_row(table, 1)
    assert row.devices == (table.devices[1],) and row.memory[0] == table.memory[1]
    assert row.peak[0] == table.peak[1]
