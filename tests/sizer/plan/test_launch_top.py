"""sizer.plan.launch_top: a serving ranking's --emit is the command `sizer inference` writes for its first row."""
import pytest

from sizer import facade
from sizer.errors import InputError
from sizer.plan.launch_top import recommend_inference
from sizer.schemas.serving_requests import InferenceRecommendRequest

ASKED = dict(model="llama-3.1-70b", weights="fp8", tokens_per_s_per_user=30)


def test_the_first_row_is_launched_as_sizer_inference_writes_it():
    ranked = recommend_inference(InferenceRecommendRequest(**ASKED, emit="vllm"))
    top = ranked.ranked[0]
    alone = facade.estimate_inference(facade.InferenceRequest(model="llama-3.1-70b", device=top.device, count=top.count,
                                                              weights=top.weights, kv_cache=top.kv_cache,
                                                              batch=top.batch, emit="vllm"))
    assert ranked.launch is not None and alone.launch is not None
    assert ranked.launch.command == alone.launch.command  # one setup, one command
    assert ranked.launch.options["--max-num-seqs"] == top.batch


def test_without_emit_the_ranking_is_unchanged():
    assert recommend_inference(InferenceRecommendRequest(**ASKED)).launch is None


def test_a_training_tool_is_refused_naming_emit():
    with pytest.raises(InputError) as refused:
        recommend_inference(InferenceRecommendRequest(**ASKED, emit="megatron"))
    assert refused.value.field == "emit"
