"""An engine built and tuned per system (``tuned``), the tuned-vs-default mechanism of issue 38 item 2.

NVIDIA's MLPerf Inference harness builds TensorRT-LLM per system; its rows reach a higher share of the matrix peak than
a default engine (benchmarks/serving_accuracy.py --by-source chooses 0.9 on each MLPerf round from the other).
"""
from __future__ import annotations

import pytest

from sizer.engine.constants import SERVING_MATRIX_EFFICIENCY, SERVING_TUNED_MATRIX_EFFICIENCY
from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference

# MLPerf v4.0's H200 Offline system in one replica's share: Llama-2-70B FP8 on one H200 (TP 1, 8 replicas there),
# prompts of about 600 tokens and answers of about 300 (serving-under-load.csv: mean output 294 tokens)
QUESTION = dict(model="llama-2-70b", device="H200 SXM", weights="fp8", kv_cache="fp8", prompt_len=628, output_len=294,
                runtime="tensorrt-llm", burst=2000)


@pytest.fixture(scope="module")
def answers():
    return {t: estimate_inference(InferenceRequest(**QUESTION, tuned=t)) for t in (None, True)}


def test_a_tuned_engine_serves_more_and_says_why(answers):
    assert SERVING_TUNED_MATRIX_EFFICIENCY > SERVING_MATRIX_EFFICIENCY
    default, tuned = answers[None], answers[True]
    assert tuned.output_tokens_per_s.value > 1.1 * default.output_tokens_per_s.value  # a compute-bound burst
    note = next(a for a in tuned.assumptions if a.name == "tuned engine")
    assert "90%" in note.value and note.verified is False
    assert not any(a.name == "tuned engine" for a in default.assumptions)


def test_tuned_is_refused_for_an_engine_it_was_not_chosen_on():
    with pytest.raises(InputError) as e:
        estimate_inference(InferenceRequest(**{**QUESTION, "runtime": "vllm"}, tuned=True))
    assert e.value.field == "tuned"


def test_tuned_without_a_load_is_refused_naming_it():
    question = {k: v for k, v in QUESTION.items() if k != "burst"}
    with pytest.raises(InputError) as e:
        estimate_inference(InferenceRequest(**question, tuned=True))
    assert "tuned" in str(e.value)
