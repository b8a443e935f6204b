"""sizer/serving/load_search.py against sizer inference: every device gets the devices-per-replica counts up to a
node, and the same deployment gets the same replicas from both paths (one simulation rule)."""
from __future__ import annotations

import pytest

from sizer.facade import InferenceRecommendRequest, InferenceRequest, estimate_inference, recommend_inference


@pytest.fixture(scope="module")
def ranked_70b_at_10():
    r = recommend_inference(InferenceRecommendRequest(model="llama-3.1-70b", rate=10, kinds=["gpu"]))
    return r


def test_70b_at_10_per_second_keeps_the_sxm_and_a100_cards(ranked_70b_at_10):
    # The search hole: only one device per replica was tried for H100 SXM and A100 80GB (rejected) while H100 PCIe
    # passed at two. A TP degree that meets the TPOT limit must be found for each.
    names = {row.name for row in ranked_70b_at_10.ranked}
    assert any("H100 SXM" in n for n in names), names
    assert any("A100 80GB" in n for n in names), names
    for row in ranked_70b_at_10.ranked:
        assert row.count <= 8  # tensor parallel within a node


def test_sub_8_bit_picks_carry_a_quality_note(ranked_70b_at_10):
    for row in ranked_70b_at_10.ranked:
        assert (row.quality is not None) == (row.weights in ("awq-int4-g128", "mxfp4", "nvfp4"))


def test_inference_and_recommend_give_one_answer_for_one_question(ranked_70b_at_10):
    # the same deployment and load: the replica count within one (the serving-engineer contract)
    r = recommend_inference(InferenceRecommendRequest(model="llama-3.1-70b", weights="fp8", rate=20, kinds=["gpu"]))
    row = next(x for x in r.ranked if "H100 SXM" in x.name)
    alone = estimate_inference(InferenceRequest(model="llama-3.1-70b", device="H100 SXM", count=row.count, weights="fp8",
                                                rate=20))
    assert abs(alone.capacity.replicas - row.replicas) <= 1
