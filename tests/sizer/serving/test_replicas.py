"""sizer/serving/replicas.py (and the serve path in sizer/serving/estimate.py that uses it): a device count that does
not split the model's heads answered as data-parallel replicas of a tensor-parallel size that does.

microsoft/phi-4 has 40 attention heads and 10 key/value heads (its config.json, num_attention_heads 40,
num_key_value_heads 10): 8 devices do not split them; 2 does, so 8 H200s serve it as 4 replicas of tensor parallel 2
(vLLM --tensor-parallel-size 2 --data-parallel-size 4).
"""
from __future__ import annotations

import pytest

from sizer import facade
from sizer.errors import InputError
from sizer.formulas.tco import hourly_price
from sizer.serving.replicas import replica_batches

PHI4 = dict(model="phi-4", device="H200 SXM")


def _answer(catalog, **fields):
    return facade.estimate_inference(facade.InferenceRequest(**{**PHI4, **fields}), catalog, suggest=False)


def _note(result, name):
    return [a for a in result.assumptions if a.name == name]


@pytest.mark.parametrize("batch, replicas, shares", [(8, 4, {2: 4}), (6, 4, {2: 2, 1: 2}), (1, 4, {1: 1}),
                                                     (3, 3, {1: 3}), (7, 2, {4: 1, 3: 1})])
def test_a_batch_spreads_over_replicas_as_a_load_balancer_spreads_it(batch, replicas, shares):
    spread = replica_batches(batch, replicas)
    assert spread == shares
    assert sum(b * n for b, n in spread.items()) == batch and sum(spread.values()) <= replicas
    assert list(spread) == sorted(spread, reverse=True)  # the busiest first


def test_eight_devices_are_four_replicas_of_tensor_parallel_two(catalog):
    eight = _answer(catalog, count=8, batch=32)
    two = _answer(catalog, count=2, batch=8)  # one replica at the same per-replica batch
    assert eight.count == 8 and eight.batch == 32 and eight.split == "tensor"
    # figures over all sequences count the 4 replicas
    for field in ("total_tokens_per_s", "prefill_tokens_per_s"):
        mine, one = getattr(eight, field), getattr(two, field)
        assert (mine.low, mine.expected, mine.high) == pytest.approx((4 * one.low, 4 * one.expected, 4 * one.high))
    assert eight.max_batch == 4 * two.max_batch
    # per-sequence figures are one replica's
    for field in ("decode_tokens_per_s", "decode_latency", "time_to_first_token"):
        assert getattr(eight, field) == getattr(two, field)
    for field in ("memory_per_device", "weights_memory", "kv_cache_memory", "device_memory", "fits", "decode_bound"):
        assert getattr(eight, field) == getattr(two, field)
    # the cost of 8 devices at an 8-device offer's price over 4 x the tokens; the energy of 8 devices' power
    eight_price = hourly_price(catalog.find("H200 SXM"), pricing="rent", count=8).hourly.to("USD/hour").magnitude
    two_price = hourly_price(catalog.find("H200 SXM"), pricing="rent", count=2).hourly.to("USD/hour").magnitude
    assert eight.cost_per_million_tokens.expected == pytest.approx(two.cost_per_million_tokens.expected * eight_price / two_price)
    assert eight.energy_per_token.expected == pytest.approx(two.energy_per_token.expected)
    assert _note(eight, "energy")[0].value.endswith("x 8 devices over the total tokens/s")


def test_the_assumption_names_the_layout_and_why(catalog):
    eight = _answer(catalog, count=8, batch=32)
    [note] = _note(eight, "replicas")
    assert note.value.startswith("8 devices as 4 replicas of tensor parallel 2")
    assert "40 heads and 10 key/value heads" in note.value and "1/4 of the sequences" in note.value
    assert "vLLM" in note.source
    assert [a.name for a in eight.assumptions].index("replicas") == 1  # right after the model


def test_fewer_sequences_than_replicas_leave_replicas_idle(catalog):
    eight = _answer(catalog, count=8, batch=1)
    two = _answer(catalog, count=2, batch=1)
    # one sequence runs on one replica: the total is that replica's, the cost counts all 8 devices
    assert eight.total_tokens_per_s.expected == pytest.approx(two.total_tokens_per_s.expected)
    assert eight.decode_tokens_per_s == two.decode_tokens_per_s
    assert eight.cost_per_million_tokens.expected > 3 * two.cost_per_million_tokens.expected
    assert "3 idle" in _note(eight, "replicas")[0].value


def test_an_uneven_batch_adds_each_replicas_own_total(catalog):
    six = _answer(catalog, count=8, batch=6)  # 2 replicas carry 2 sequences, 2 carry 1
    busy, light = _answer(catalog, count=2, batch=2), _answer(catalog, count=2, batch=1)
    assert six.total_tokens_per_s.expected == pytest.approx(2 * busy.total_tokens_per_s.expected
                                                            + 2 * light.total_tokens_per_s.expected)
    assert six.time_to_first_token == busy.time_to_first_token  # the busiest replica's


def test_a_pinned_tensor_split_of_a_count_that_splits_no_heads_is_still_refused(catalog):
    with pytest.raises(InputError, match="count") as refused:
        _answer(catalog, count=8, split="tensor")
    assert "divides the 40 attention heads" in str(refused.value)


def test_under_load_the_replicas_are_counted_in_the_tensor_parallel_size(catalog):
    loaded = _answer(catalog, count=8, rate=20)
    assert loaded.scenario == "load" and loaded.count == 2 and loaded.capacity.replicas >= 1
    [note] = _note(loaded, "replicas")
    assert "8 devices = 4 replicas" in note.value
    given = _answer(catalog, count=8, rate=20, replicas=2)  # 2 deployments of 8 devices: 8 replicas of 2
    assert given.count == 2 and given.capacity.replicas == 8


def test_the_launch_command_runs_the_replicas(catalog):
    emitted = facade.estimate_inference(facade.InferenceRequest(**PHI4, count=8, batch=8, emit="vllm"), catalog)
    assert "--tensor-parallel-size 2" in emitted.launch.command and "--data-parallel-size 4" in emitted.launch.command
    assert "--max-num-seqs 2" in emitted.launch.command  # per replica


def test_replicas_keep_tensor_parallel_within_a_node(catalog):
    # llama-2-7b: 32 heads and 32 key/value heads; 64 H100s (8 to a node) do not split them. 32 would, across four
    # nodes; the replicas are of 8, on the NVLink inside one node, and the answer says why
    many = facade.estimate_inference(facade.InferenceRequest(model="llama-2-7b", device="H100 SXM", count=64, batch=64),
                                     catalog, suggest=False)
    eight = facade.estimate_inference(facade.InferenceRequest(model="llama-2-7b", device="H100 SXM", count=8, batch=8),
                                      catalog, suggest=False)
    note = _note(many, "replicas")[0].value
    assert note.startswith("64 devices as 8 replicas of tensor parallel 8") and "within a node of 8" in note
    assert many.memory_per_device.value == pytest.approx(eight.memory_per_device.value)
    assert many.total_tokens_per_s.expected == pytest.approx(8 * eight.total_tokens_per_s.expected)
    phi4 = _note(_answer(catalog, count=8), "replicas")[0].value
    assert "within a node" not in phi4  # tensor parallel 2 is the largest that splits phi-4's heads anyway
