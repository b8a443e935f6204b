"""A serving runtime named with its version: the generation's scheduling and fitted costs apply and are said (issue 38).

The generations and their policies are in sizer/runtimes/serving_mechanisms.yaml (vLLM V0 before 0.8 prefills in
iterations of its own below 32K of context; V1 chunks every prefill).
"""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference

# a model of 8K context (V0 chunks prefill only above 32K) under a load where prompts arrive into running answers
QUESTION = dict(model="llama-3-8b", device="H100 SXM", weights="bf16", prompt_len=1024, output_len=256,
                runtime="vllm", rate=4.0, prompts=200)


def _runtime_note(result) -> str:
    return next(a.value for a in result.assumptions if a.name == "runtime")


@pytest.fixture(scope="module")
def by_version():
    return {v: estimate_inference(InferenceRequest(**QUESTION, runtime_version=v)) for v in ("0.6.3", "0.11.0")}


def test_the_version_picks_its_generation_and_says_it(by_version):
    assert "vllm-v0" in _runtime_note(by_version["0.6.3"])
    assert "prefill in iterations of its own" in _runtime_note(by_version["0.6.3"])
    assert "vllm-v1" in _runtime_note(by_version["0.11.0"])


def test_v0_prefill_first_scheduling_stretches_the_time_per_output_token(by_version):
    # V0 runs a prompt's prefill alone while every running answer waits, so its p99 TPOT is above V1's, whose
    # chunks share the iteration with the answers (vllm docs, 'Chunked prefill': better ITL)
    v0, v1 = (by_version[v].latency.tpot.p99 for v in ("0.6.3", "0.11.0"))
    assert v0 > v1


def test_no_version_keeps_the_profile_and_says_it():
    plain = estimate_inference(InferenceRequest(**QUESTION))
    assert _runtime_note(plain).startswith("vllm 0.6")


def test_a_version_without_a_load_is_refused_naming_it():
    question = {k: v for k, v in QUESTION.items() if k not in ("rate", "prompts")}
    with pytest.raises(InputError) as e:
        estimate_inference(InferenceRequest(**question, runtime_version="0.11.0"))
    assert "runtime_version" in str(e.value)


@pytest.mark.parametrize("bad", ["latest", "0", "0.11.0.1", "v"])
def test_a_malformed_version_is_refused_at_the_boundary(bad):
    with pytest.raises(ValidationError, match="runtime_version"):
        InferenceRequest(**QUESTION, runtime_version=bad)
