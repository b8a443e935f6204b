"""sizer/request_edits.py: what a user gave of a typed request, and the request changed, as --have and the
suggestions read and edit it (issue 41 item 1: no dict of the request's strings)."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from sizer.choices import Method, Optimizer
from sizer.request_edits import edited, given, given_names, rebuilt
from sizer.training.estimates import MemoryRequest, TimeRequest


def test_given_tells_a_users_value_from_a_default_and_a_frameworks_recipe():
    request = TimeRequest(model="llama-3-8b", tokens="2e10", method="lora", framework="torchtune")
    assert given(request, "method") is Method.LORA and given(request, "tokens") == 2e10
    # torchtune's recipe fills the optimizer, but the user did not give one: the default stands for it
    assert request.optimizer is not Optimizer.ADAM and given(request, "optimizer", "adam") == "adam"
    assert given_names(request) == {"model", "tokens", "method", "framework"}


def test_an_edit_is_validated_and_a_none_drops_what_was_given():
    request = TimeRequest(params="7B", tokens="2e10", zero=2, micro_batch=4)
    changed = edited(request, {"method": "qlora", "zero": None, "micro_batch": None})
    assert changed.method is Method.QLORA and changed.params == 7e9  # typed, as a new request would be
    assert given_names(changed) == {"params", "tokens", "method"}  # the layout left to the search again
    assert request.zero == 2  # the request itself is unchanged (frozen)
    with pytest.raises(ValidationError):
        edited(request, {"method": "adapters"})


def test_a_request_rebuilt_as_another_type_carries_the_typed_values_it_has():
    time = TimeRequest(params="7B", batch_size="1536 sequences", seq_len=2048, have=["8x H100 SXM"])
    memory = rebuilt(MemoryRequest, time, given_names(time) - {"have"}, device="H100 SXM", count=8)
    assert (memory.params, memory.batch_size, memory.seq_len, memory.count) == (7e9, time.batch_size, 2048, 8)
    assert given_names(memory) == {"params", "batch_size", "seq_len", "device", "count"}
