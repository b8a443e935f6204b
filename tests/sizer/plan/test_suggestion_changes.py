"""The candidate changes :mod:`sizer.plan.suggestions` tries, before any is evaluated: which are offered
for which request and in what order (the evaluation itself is tested in test_suggestions.py)."""
from __future__ import annotations

from typing import Any

import pytest

from sizer.choices import KvCache, Method
from sizer.hardware.catalog import Catalog
from sizer.plan.owned import Outcome, Owned
from sizer.plan.suggestions import (
    MAX_SUGGESTED_DEVICES,
    SHORTEST_SEQUENCE,
    _method_changes,
    _more_devices,
    _recompute_and_offload_changes,
    _sequence_changes,
    _serving_changes,
    _training_changes,
)
from sizer.runtimes import runtime
from sizer.schemas.serving_requests import InferenceRequest
from sizer.training.estimates import TimeRequest

# no answer to read a sequence length or a parameter count from: the changes that need none
NOTHING = Outcome(fits=False, memory_per_device=None, device_memory=None, result=None)  # type: ignore[arg-type]


def edits(changes: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [edit for _, edit in changes]


def trained(**fields: Any) -> TimeRequest:
    """A training question as the suggestions take it (typed, no hardware)."""
    return TimeRequest(**fields)


def served(**fields: Any) -> InferenceRequest:
    """A serving question as the suggestions take it (typed, its hardware replaced by the set tried)."""
    return InferenceRequest(**fields)


def test_sequences_are_halved_down_to_the_shortest() -> None:
    assert edits(_sequence_changes(trained(seq_len=4096), NOTHING)) == [{"seq_len": n} for n in (2048, 1024, 512, 256)]
    assert SHORTEST_SEQUENCE == 256
    assert _sequence_changes(trained(seq_len=300), NOTHING) == []  # 150 is below the shortest


def test_more_devices_stop_at_the_largest_count_and_drop_a_given_layout(catalog: Catalog) -> None:
    have = Owned(count=4096, device=catalog.find("H100 SXM"))
    found = edits(_more_devices(trained(zero=1, tp=2, params=7e9), have))
    assert [e["count"] for e in found] == [8192, 16384, 32768, 65536] and 65536 == MAX_SUGGESTED_DEVICES
    assert all(e["zero"] is None and e["tp"] is None and "params" not in e for e in found)


def test_adapters_are_offered_for_a_fine_tune_and_8_bit_states_for_a_full_one() -> None:
    lora = trained(model="llama-3-8b", method="lora")
    assert edits(_method_changes(lora, NOTHING, Method.LORA)) == [{"method": "qlora"}]
    memory_question = trained(model="llama-3-8b", optimizer="adamw")  # no tokens: read as a fine-tune
    assert edits(_method_changes(memory_question, NOTHING, Method.FULL)) == [
        {"method": "lora"}, {"method": "qlora"}, {"optimizer": "adamw-8bit"}]
    pretraining = trained(params=7e9, samples=1e6, optimizer="sgd")
    assert _method_changes(pretraining, NOTHING, Method.FULL) == []


def test_recomputation_only_where_the_search_would_not_try_it_and_offload_only_with_a_host_memory(catalog: Catalog) -> None:
    gpu = Owned(count=1, device=catalog.find("RTX 4090"))
    searched = trained(model="llama-3-8b", tokens=1e9)
    assert edits(_recompute_and_offload_changes(searched, gpu, Method.FULL, True, True)) == [{"offload": True}]
    pinned = trained(model="llama-3-8b", tokens=1e9, recompute="selective")
    assert edits(_recompute_and_offload_changes(pinned, gpu, Method.FULL, True, True)) == [
        {"recompute": "full"}, {"offload": True}]
    unified = Owned(count=1, device=catalog.find("apple-m2-max-gpu"))
    assert edits(_recompute_and_offload_changes(pinned, unified, Method.FULL, True, True)) == [{"recompute": "full"}]
    assert edits(_recompute_and_offload_changes(searched, gpu, Method.LORA, True, True)) == []  # adapters: no offload


@pytest.mark.parametrize("device, fp8", [("H100 SXM", True), ("Tesla P40", False)])
def test_a_missed_deadline_offers_fp8_where_the_device_has_it_and_no_memory_changes(catalog: Catalog, device: str, fp8: bool) -> None:
    have = Owned(count=2, device=catalog.find(device))
    found = edits(_training_changes(trained(model="llama-3-8b", tokens=1e9, seq_len=4096), have, NOTHING, True))
    assert ({"precision": "fp8"} in found) is fp8
    assert all("seq_len" not in e and "method" not in e for e in found)
    assert [e["count"] for e in found if "count" in e] == [4, 8, 16, 32, 64, 128]


def test_a_given_layout_is_first_released_then_memory_changes_then_more_devices(catalog: Catalog) -> None:
    have = Owned(count=1, device=catalog.find("RTX 4090"))
    found = edits(_training_changes(trained(model="llama-3-8b", tokens=1e9, zero=2, micro_batch=4),
                                    have, NOTHING, False))
    assert found[0] == {"zero": None, "micro_batch": None}
    assert {"micro_batch": 1} in found
    counts = [i for i, e in enumerate(found) if "count" in e]
    assert counts and counts == list(range(counts[0], len(found)))  # more devices last


def test_serving_changes_skip_the_format_already_used_and_offer_tensor_parallel_last(catalog: Catalog) -> None:
    have = Owned(count=1, device=catalog.find("H100 SXM"))
    found = edits(_serving_changes(served(weights="int8", kv_cache="fp8", prompt_len=2048), have, NOTHING))
    assert {"weights": "int8"} not in found and {"weights": "fp8"} in found
    assert {"kv_cache": "fp8"} not in found and {"kv_cache": "int8"} in found
    assert {"prompt_len": 1024} in found
    # more devices last, within a node of 8: alone, then the full node with each lighter weight format
    assert [e for e in found if set(e) == {"count"}] == [{"count": 2}, {"count": 4}, {"count": 8}]
    assert all("count" in e for e in found[found.index({"count": 2}):])
    assert {"count": 8, "weights": "awq-int4-g128"} in found and {"count": 8, "weights": "int8"} not in found


@pytest.mark.parametrize("name", ["llama.cpp", "ollama", "lm-studio", "llamacpp", "mlx", "vllm", "sglang"])
def test_a_named_runtime_is_offered_only_kv_caches_it_stores(catalog: Catalog, name: str) -> None:
    # issue 41's wrong answer: --runtime ollama (llama.cpp under another name) was offered FP8 and int8 KV caches,
    # which llama.cpp refuses (its --cache-type-k/-v: f32, f16, bf16, q8_0, q4_0); the runtime's own refusal decides
    device = "M2 Ultra" if name == "mlx" else "RTX 4090"
    have = Owned(count=1, device=catalog.find(device))
    found = edits(_serving_changes(served(weights="fp16", kv_cache="fp16", runtime=name), have, NOTHING))
    offered = [KvCache(e["kv_cache"]) for e in found if "kv_cache" in e]
    assert all(runtime(name).refusal(kv_cache=kv) is None for kv in offered), offered
    if runtime(name).name == "llama.cpp":  # its own blocks, narrower than the fp16 asked
        assert offered == [KvCache.Q8_0, KvCache.Q4_0]
    if runtime(name).name == "vllm":
        assert offered == [KvCache.FP8, KvCache.INT8]
