"""The notes every serving command carries."""
from dataclasses import replace

import pytest

from sizer.choices import KvCache
from sizer.launch.serving_checks import notes_for
from sizer.launch.setups import ServingSetup


@pytest.fixture()
def setup(catalog):
    return ServingSetup(model="meta-llama/Llama-3.1-8B", model_known=True, weights="bf16", kv_cache=KvCache.FP16,
                        tensor_parallel=1, pipeline_parallel=1, replicas=1, max_model_len=2048, max_running=8,
                        token_budget=None, experts=1, device=catalog.find("H100 SXM"), count=1, engine=None, fits=True,
                        lengths_vary=False, memory_share=0.9, kv_free_share=1.0)


def test_a_known_dense_fitting_setup_needs_no_note(setup):
    assert notes_for(setup, "vLLM") == []


def test_each_case_has_its_note(setup):
    assert "Hugging Face id" in notes_for(replace(setup, model="llama-3.1-8b", model_known=False), "vLLM")[0]
    assert "does NOT fit" in notes_for(replace(setup, fits=False), "vLLM")[0]
    assert "expert parallelism" in notes_for(replace(setup, experts=8), "vLLM")[0]
    assert "longest request" in notes_for(replace(setup, lengths_vary=True), "vLLM")[0]
