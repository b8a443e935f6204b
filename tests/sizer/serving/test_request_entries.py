"""A serving request's runtime, weights and length set are their registry entries once the request is built (issue 41
item 1: typed values past the edge): an unknown name is refused there, naming the field, with the other bad fields;
the entry is written back as its canonical name, so the JSON, the schema and a copy of the request read as before."""
from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from sizer.errors import InputError
from sizer.request_edits import edited, rebuilt
from sizer.runtimes import runtime
from sizer.runtimes.formats import weight_format
from sizer.runtimes.runtime import Runtime
from sizer.schemas.serving_requests import InferenceRecommendRequest, InferenceRequest
from sizer.simulator.traffic import length_distribution


def _request(**fields: object) -> InferenceRequest:
    return InferenceRequest(model="llama-2-7b", device="H100 SXM", **fields)


def test_the_fields_hold_the_entries_found_by_any_spelling():
    request = _request(weights="Q4-K-M", runtime="LlamaCpp", lengths="Azure_Conv", rate=1)
    # the same objects the registries hold: the core reads their bits, profile and laws, never a name again
    assert request.weights is weight_format("q4_k_m") and request.weights.gguf_mix == "Q4_K_M"
    assert request.runtime is runtime("llama.cpp") and isinstance(request.runtime, Runtime)
    assert request.lengths is length_distribution("azure-conv")


def test_the_entries_are_written_as_their_canonical_names():
    request = _request(weights="half", runtime="trtllm", lengths="azure-conv", rate=1)
    expected = {"weights": "fp16", "runtime": "tensorrt-llm", "lengths": "azure-conv"}
    assert {k: request.model_dump(mode="json")[k] for k in expected} == expected
    assert {k: request.model_dump()[k] for k in expected} == expected  # Python too: a dump rebuilds the request
    assert InferenceRequest.model_validate(request.model_dump()) == request


def test_the_schema_shows_a_name_as_before():
    for model in (InferenceRequest, InferenceRecommendRequest):
        properties = model.model_json_schema()["properties"]
        for name in ("weights", "runtime", "lengths"):
            assert properties[name]["anyOf"] == [{"type": "string", "maxLength": 40}, {"type": "null"}], (model, name)


@pytest.mark.parametrize("field, value, expected", [
    ("weights", "q4_z", "weights: got 'q4_z'; expected one of fp32"),
    ("runtime", "vlm", "runtime: got 'vlm'; expected one of "),
    ("lengths", "sharegpt", "lengths: got 'sharegpt'; expected one of sharegpt-vllm-sample"),
    ("weights", 5, "weights: got 5; expected one of fp32"),
    ("runtime", "x" * 50, "runtime: got 'xxxxxxxx"),
])
def test_an_unknown_name_is_refused_where_the_request_is_built(field, value, expected):
    with pytest.raises(InputError) as caught:
        _request(**{field: value})
    assert caught.value.field == field and caught.value.message.startswith(expected), caught.value.message
    # the message is the registry's own, as the lookup words it (one parse, one wording)
    lookup = {"weights": weight_format, "runtime": runtime, "lengths": length_distribution}[field]
    with pytest.raises(InputError) as direct:
        lookup(value, field)
    assert caught.value.message.splitlines()[0] == direct.value.message


def test_bad_entry_fields_are_collected_with_the_other_bad_fields():
    with pytest.raises(InputError) as caught:
        _request(weights="q4_z", runtime="vlm", count=0, lengths="nope")
    fields = [line.split(":")[0] for line in caught.value.message.splitlines()[:4]]
    assert sorted(fields) == ["count", "lengths", "runtime", "weights"]


def test_copies_and_edits_keep_the_entries():
    request = _request(weights="fp8", runtime="sglang")
    copied = request.model_copy(update={"batch": 8})
    assert copied.weights is request.weights and copied.runtime is request.runtime and copied.batch == 8
    changed = edited(request, {"weights": "awq", "runtime": None})
    assert changed.weights is weight_format("awq-int4-g128") and changed.runtime is None
    assert "runtime" not in changed.model_fields_set
    moved = rebuilt(InferenceRecommendRequest, request, request.model_fields_set)
    assert moved.weights is request.weights and moved.runtime is request.runtime
    with pytest.raises(ValidationError):
        request.model_copy(update={"runtime": "vlm"})  # a copy is validated as a new request is


def test_requests_with_entries_hash_compare_and_pickle():
    # the HTTP worker pool sends requests to worker processes; a frozen request is hashed (llama.cpp's profile
    # holds dicts: a Runtime hashes by its name)
    one = _request(weights="q4_k_m", runtime="llama.cpp")
    two = _request(weights="Q4_K_M", runtime="llamacpp")
    assert one == two and hash(one) == hash(two)
    assert one != _request(weights="q8_0", runtime="llama.cpp")
    back = pickle.loads(pickle.dumps(one))
    assert back == one and back.runtime == runtime("llama.cpp") and back.weights == one.weights
    loaded = pickle.loads(pickle.dumps(_request(lengths="azure-code", rate=2)))
    assert loaded.lengths == length_distribution("azure-code")
