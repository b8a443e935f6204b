"""The weight format a model is served in when none is given: its published checkpoint's (gpt-oss: MXFP4,
only the routed experts quantised), said as an assumption; MXFP4's bytes; the format search includes it."""
from __future__ import annotations

import json

import pytest

from sizer.passes.arithmetic import stored_weight_bytes
from sizer.runtimes.formats import weight_format
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.load_search import SEARCH_WEIGHTS, searched_weights
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference
from sizer.workloads.registry import checkpoint_weights, find_model


def test_mxfp4_is_4_25_bits_on_the_experts_and_16_on_the_rest():
    arch = find_model("gpt-oss-20b")
    fmt = weight_format("MXFP4")
    experts = arch.moe_blocks * arch.experts * arch.expert_params(arch.expert_width)
    stored = arch.params_total() * stored_weight_bytes(arch, fmt)
    assert fmt.bits == 4.25 and fmt.compute == "mixed"
    assert stored == pytest.approx(experts * 4.25 / 8 + (arch.params_total() - experts) * 2)
    assert 0.9 < experts / arch.params_total() < 0.95  # the experts are most of the model


def test_mxfp4_on_a_dense_model_keeps_only_embeddings_and_head_at_16_bits():
    arch = find_model("llama-2-7b")
    edges = arch.embedding_params()
    expected = ((arch.params_total() - edges) * 4.25 / 8 + edges * 2) / arch.params_total()
    assert stored_weight_bytes(arch, weight_format("mxfp4")) == pytest.approx(expected)


def test_the_checkpoint_format_is_the_default_and_is_said():
    assert checkpoint_weights("openai/gpt-oss-20b") == "mxfp4" and checkpoint_weights("llama-2-7b") is None
    r = estimate_inference(InferenceRequest(model="gpt-oss-20b", device="H100 SXM"))
    note = next(a for a in r.assumptions if a.name == "weight format")
    assert r.weights == "mxfp4" and "published checkpoint" in note.value
    # 20.9 B parameters at 16 bits would need 41.8 GB; the MXFP4 checkpoint about a third of that
    assert 13 < r.weights_memory.value < 15
    given = estimate_inference(InferenceRequest(model="gpt-oss-20b", device="H100 SXM", weights="bf16"))
    assert given.weights == "bf16" and not any(a.name == "weight format" for a in given.assumptions)
    assert given.weights_memory.value > 40


def test_a_16_bit_default_is_said_too():
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="H100 SXM"))
    assert r.weights == "bf16" and any(a.name == "weight format" and "bf16" in a.value for a in r.assumptions)


def test_the_cli_defaults_to_the_checkpoint_format(cli):
    result = cli("inference", "--model", "gpt-oss-120b", "--device", "H100 SXM", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["weights"] == "mxfp4" and data["fits"] is True  # 65 GB of MXFP4 experts fit one 80 GB device


def test_the_format_search_adds_the_checkpoint_format():
    names = [f.name for f in searched_weights(InferenceRecommendRequest(model="gpt-oss-20b"))]
    assert names == [*SEARCH_WEIGHTS, "mxfp4"]
    assert [f.name for f in searched_weights(InferenceRecommendRequest(model="llama-2-7b"))] == list(SEARCH_WEIGHTS)


def test_static_recommend_for_gpt_oss_searches_mxfp4_and_serves_with_it_when_pinned():
    searched = recommend_inference(InferenceRecommendRequest(model="gpt-oss-120b", tokens_per_s_per_user=20, batch=8))
    assert searched.weights.startswith("searched:") and "mxfp4" in searched.weights
    pinned = recommend_inference(InferenceRecommendRequest(model="gpt-oss-120b", weights="mxfp4", tokens_per_s_per_user=20,
                                                           batch=8))
    assert pinned.ranked and all(row.weights == "mxfp4" for row in pinned.ranked)


def test_every_catalog_checkpoint_format_is_a_known_one():
    # (sizer.workloads cannot import sizer.passes to check it when the file is read: no cycles)
    from sizer.runtimes.formats import WEIGHT_FORMATS
    from sizer.workloads.registry import builtin_entries

    named = [e.checkpoint_weights for e in builtin_entries() if e.checkpoint_weights is not None]
    assert named and all(name in WEIGHT_FORMATS for name in named), named
