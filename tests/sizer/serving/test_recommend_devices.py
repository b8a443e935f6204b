"""sizer.serving.recommend_devices: the offline ranking of devices for serving, and the combinations it refuses."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference


def _ask(catalog, **fields):
    base = {"model": "llama-3-8b", "kinds": ["accelerator"], "max_devices": 2}
    return recommend_inference(InferenceRecommendRequest(**{**base, **fields}), catalog)


def test_context_length_sets_the_prompt_and_a_pinned_format_is_kept(catalog):
    r = _ask(catalog, context_length=4096, output_len=512, weights="fp16")
    assert (r.prompt_len, r.output_len) == (4096 - 512, 512)
    assert r.weights == "fp16" and r.ranked and all(row.weights == "fp16" for row in r.ranked)
    assert [row.rank for row in r.ranked] == list(range(1, len(r.ranked) + 1))


def test_rows_meet_the_targets_they_were_given(catalog):
    r = _ask(catalog, tokens_per_s_per_user=20, time_to_first_token="2 s")
    assert r.ranked
    for row in r.ranked:
        # the expected figures meet the targets (the range's ends may not)
        assert row.decode_tokens_per_s.expected >= 20
        assert row.time_to_first_token.expected <= 2000  # ms


def test_priced_rows_come_first_cheapest_first(catalog):
    r = _ask(catalog)
    costs = [row.cost_per_million_tokens.value for row in r.ranked if row.cost_per_million_tokens is not None]
    assert costs == sorted(costs)


@pytest.mark.parametrize("fields, field", [
    ({"context_length": 100, "output_len": 100}, "context_length"),  # no prompt token left
    ({"disaggregated": True}, "disaggregated"),  # pools are sized for a rate
    ({"users": 4, "gpu_layers": 10}, "gpu_layers"),  # offload is sized for a static batch
    ({"host_cpu": "ryzen-9-7950x"}, "host_cpu"),  # a host without offloaded layers
])
def test_combinations_that_cannot_run_are_refused_naming_the_field(catalog, fields, field):
    with pytest.raises(InputError) as refused:
        _ask(catalog, **fields)
    assert refused.value.field == field


def _offline_70b(catalog, **fields):
    return recommend_inference(InferenceRecommendRequest(model="llama-3-70b", kinds=["gpu"], **fields), catalog)


def test_offline_picks_are_deployable_no_4_bit_integer_kernels_before_turing(catalog):
    # vLLM's quantization table: AWQ/GPTQ int4 GEMMs (Marlin, AWQ GEMM) need sm_75 or newer; a V100 is sm_70
    r = _offline_70b(catalog, max_devices=8)
    old = {"Kepler", "Maxwell", "Pascal", "Volta"}
    for row in r.ranked:
        generation = catalog.find(row.device).architecture.split()[0]
        assert not (row.weights.startswith(("awq-int4", "gptq-int4", "int4")) and generation in old), row


def test_offline_rows_below_8_bits_carry_a_quality_note(catalog):
    r = _offline_70b(catalog, max_devices=8)
    four = [row for row in r.ranked if row.weights.startswith("awq-int4")]
    assert four and all(row.quality and "accuracy" in row.quality for row in four)
    assert all(row.quality is None for row in r.ranked if row.weights in ("bf16", "fp8", "w8a8"))


def test_offline_tensor_parallelism_stays_within_a_node(catalog):
    # the search under load keeps a replica's tensor-parallel group inside one node; offline does the same
    r = _offline_70b(catalog, max_devices=64)
    per_node = {"tesla-p40": 4, "rtx-4090": 4}
    for row in r.ranked:
        assert row.count <= per_node.get(row.device, 72), row
    p40 = next(x for x in r.rejected if x.device == "tesla-p40")
    assert "within one node of 4" in p40.reason


def test_offline_ranking_under_a_named_runtime_skips_devices_it_cannot_run_on_and_states_it(catalog):
    r = recommend_inference(InferenceRecommendRequest(model="llama-3-8b", runtime="tensorrt-llm"), catalog)
    assert r.ranked and all(catalog.find(row.device).vendor == "NVIDIA" and "apple" not in row.device
                            for row in r.ranked)
    mi300x = next(x for x in r.rejected if x.device == "mi300x")
    assert "tensorrt-llm does not run on AMD" in mi300x.reason
    assert next(a for a in r.assumptions if a.name == "runtime").value.startswith("tensorrt-llm")
