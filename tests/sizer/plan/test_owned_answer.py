"""sizer/plan/owned_answer.py: the shape of an answer for hardware the user has (``--have``): one option
per hardware set with its verdict, the layout, and the assumptions said once.

The engine's figures behind each option are checked against ``sizer time`` in
tests/sizer/plan/test_owned.py; this file checks what this module adds.
"""
from __future__ import annotations

import pytest

from sizer import facade
from sizer.asked import on_catalog
from sizer.plan.owned_answer import answer_inference, answer_training

# Llama 2 7B has 32 attention heads and 32 key-value heads (Touvron et al. 2023, Table 1 / its
# config.json): tensor ranks that divide 32 split them whole.
LLAMA_2_7B_SERVED = dict(model="llama-2-7b")


@pytest.mark.parametrize("count, tp, replicas", [(1, 1, None), (2, 2, None), (3, 1, 3), (6, 2, 3), (8, 8, None)])
def test_every_device_serves_as_replicas_of_a_tensor_parallel_size_that_splits_the_heads(catalog, count, tp, replicas):
    result = answer_inference(on_catalog(facade.InferenceRequest(**LLAMA_2_7B_SERVED, have=[f"{count}x H100 SXM"]), catalog))
    (option,) = result.options
    assert option.layout["tp"] == tp and option.layout.get("replicas") == replicas and "idle_devices" not in option.layout


def test_a_count_that_does_not_split_the_heads_serves_as_replicas_on_every_device(catalog):
    result = answer_inference(on_catalog(facade.InferenceRequest(**LLAMA_2_7B_SERVED, have=["3x RTX 4090"]), catalog))
    (option,) = result.options
    # 3 does not divide 32 heads: 3 replicas of one card each (sizer.passes.arithmetic.tensor_replicas)
    assert option.count == 3 and option.layout["tp"] == 1 and option.layout["replicas"] == 3
    # 7e9 bf16 weights = 14 GB on one 24 GB card: it serves
    assert option.fits and option.verdict == "fits" and option.decode_tokens_per_s.expected > 0
    assert result.task == "inference" and result.workload.startswith("serving llama-2-7b")
    # no training layout search to state; the serving engine bf16 on a GPU is sized for is
    assert [a.name for a in result.assumptions] == ["hardware", "cost", "runtime"]
    assert "3 x " in result.assumptions[0].value and "answered for these only" in result.assumptions[0].value


def test_a_set_answers_as_the_same_question_with_its_count_does(catalog):
    # the have path and sizer inference use one rule: phi-4 (40 heads, 10 KV heads) on 8 H200 is 4 replicas of 2
    (option,) = answer_inference(on_catalog(facade.InferenceRequest(model="phi-4", have=["8x H200 SXM"]), catalog)).options
    direct = facade.estimate_inference(facade.InferenceRequest(model="phi-4", device="H200 SXM", count=8), catalog)
    assert option.layout["tp"] == 2 and option.layout["replicas"] == 4
    assert option.decode_tokens_per_s == direct.decode_tokens_per_s and option.memory_per_device == direct.memory_per_device
    assert option.cost.expected == direct.cost_per_million_tokens.expected


def test_a_pinned_tensor_split_on_a_set_still_serves_on_every_device(catalog):
    request = facade.InferenceRequest(model="phi-4", split="tensor", have=["8x H200 SXM"])
    (option,) = answer_inference(on_catalog(request, catalog)).options
    assert option.fits and option.layout["tp"] == 2 and option.layout["replicas"] == 4


def test_the_memory_question_has_no_time_cost_or_layout_search(catalog):
    result = answer_training(on_catalog(facade.MemoryRequest(model="llama-3-8b", method="qlora", have=["1x RTX 4090"]), catalog))
    (option,) = result.options
    assert result.task == "memory" and result.workload == "training memory"
    assert option.fits and option.verdict == "fits" and option.training_time is None and option.cost is None
    assert set(option.layout) == {"zero", "recompute", "micro_batch"}  # the memory model's layout, not a search's
    names = [a.name for a in result.assumptions]
    assert "hardware" in names and "cost" not in names and "layout" not in names


def test_a_training_answer_states_the_workload_once_and_the_layout_search(catalog):
    request = facade.RecommendRequest(model="llama-3-8b", tokens=1e9, method="lora", precision="bf16",
                                      have=["1x H100 SXM", "2x H100 SXM"])
    result = answer_training(on_catalog(request, catalog))
    assert result.task == "training" and len(result.options) == 2
    names = [a.name for a in result.assumptions]
    assert names[:3] == ["hardware", "cost", "layout"]
    assert names.count("sequence length") == 1 and names.count("batch size") == 1  # from the first estimate only
    assert all(o.layout["dp"] * o.layout["tp"] * o.layout["pp"] * o.layout["cp"] == o.count for o in result.options)


def test_a_deadline_missed_is_the_verdict_and_a_deadline_met_is_said(catalog):
    # LoRA of Llama-3-8B on 1e9 tokens takes hours on one H100: at least 4 N T FLOP (forward and the
    # activations' backward; no gradients of the frozen weights) at the bf16 dense peak of 989e12 FLOP/s
    # (NVIDIA H100 datasheet) is 4 x 8e9 x 1e9 / 989e12 = 3.2e4 s. A minute is missed, 100 days met.
    fields = dict(model="llama-3-8b", tokens=1e9, method="lora", precision="bf16", have=["1x H100 SXM"])
    (late,) = answer_training(on_catalog(facade.RecommendRequest(**fields, deadline="1 min"), catalog)).options
    assert late.fits and late.meets_deadline is False and late.verdict.startswith("misses the deadline")
    (early,) = answer_training(on_catalog(facade.RecommendRequest(**fields, deadline="100 d"), catalog)).options
    assert early.meets_deadline is True and early.verdict == "fits and meets the deadline"
    assert early.suggestions == [] and early.recipe  # the recipe as a line for a trainer's configuration


def test_what_sizer_chose_is_listed_apart_from_what_was_given(catalog):
    # no method given for a fine-tune (1e8 tokens for 8e9 parameters): sizer chooses one on the hardware
    (option,) = answer_training(on_catalog(facade.TimeRequest(model="llama-3-8b", tokens=1e8, have=["1x RTX 4090"]), catalog)).options
    assert option.chosen.get("method") == option.method and option.method in ("lora", "qlora")
    (given,) = answer_training(on_catalog(facade.TimeRequest(model="llama-3-8b", tokens=1e8, method="qlora",
                                                             precision="bf16", have=["1x RTX 4090"]), catalog)).options
    assert "method" not in given.chosen and "precision" not in given.chosen


def test_what_sizer_chose_is_listed_in_the_request_models_field_order(catalog):
    # the chosen fields came from a set, so `recommend --have --json` wrote them in an order that changed with
    # PYTHONHASHSEED: the same question gave different bytes from one process to the next
    (option,) = answer_training(on_catalog(facade.TimeRequest(model="llama-3-8b", tokens=1e8, have=["1x RTX 4090"]),
                                           catalog)).options
    fields = list(facade.TimeRequest.model_fields)
    assert len(option.chosen) >= 2
    assert list(option.chosen) == sorted(option.chosen, key=fields.index)


def test_the_chosen_fields_are_the_same_bytes_under_any_hash_seed():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]  # the checkout: `python -m sizer` runs its cli/
    command = [sys.executable, "-m", "sizer", "time", "--model", "llama-3-8b", "--tokens", "1e8", "--have", "1x RTX 4090", "--json"]
    outputs = {subprocess.run(command, capture_output=True, timeout=300, check=True, cwd=root,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(outputs) == 1


def test_gguf_on_cards_you_have_is_llama_cpps_layer_split_and_says_its_runtime(catalog, cli):
    # 70B at Q4_K_M on two RTX 3090s runs under llama.cpp, each card holding half the layers: the layout said "tp 2"
    # and the answer named no runtime at all
    result = answer_inference(on_catalog(facade.InferenceRequest(model="llama-3-70b", weights="q4_k_m",
                                                                 have=["2x RTX 3090"]), catalog))
    (option,) = result.options
    assert option.fits and option.layout["layer_split"] == 2 and "tp" not in option.layout
    runtime = next(a for a in result.assumptions if a.name == "runtime")
    assert runtime.value.startswith("llama.cpp, not given")
    from cli.owned_output import _layout

    assert _layout(option.layout).startswith("layer split over 2, q4_k_m")  # the table's layout cell
    shown = cli("inference", "--model", "llama-3-70b", "--weights", "q4_k_m", "--have", "2x RTX 3090")
    assert shown.exit_code == 0 and "tp 2" not in shown.output, shown.output
    one = answer_inference(on_catalog(facade.InferenceRequest(model="llama-3-8b", weights="q4_k_m", have=["1x RTX 3090"]), catalog))
    assert "layer_split" not in one.options[0].layout  # one card splits nothing ("layer split over 1")
    # a data-centre format keeps its tensor parallel and states the serving engine it is sized for
    served = answer_inference(on_catalog(facade.InferenceRequest(model="llama-3-8b", have=["2x H100 SXM"]), catalog))
    assert served.options[0].layout["tp"] == 2
    assert next(a for a in served.assumptions if a.name == "runtime").value.startswith("vllm, not given")
