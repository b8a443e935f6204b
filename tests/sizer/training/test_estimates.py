"""One question, one answer: a memory question without a layout says what the time estimate's layout search
chooses for the same body, and agrees with it."""
from __future__ import annotations

import pytest

from sizer.facade import MemoryRequest, TimeRequest, estimate_memory, estimate_time
from sizer.training.estimates import layout_asked

BODY = dict(model="llama-2-13b", tokens=1e9, device="A100 40GB SXM", count=8)


def test_a_memory_question_without_a_layout_reports_the_searched_one():
    memory = estimate_memory(MemoryRequest(**BODY), suggest=False)
    timed = estimate_time(TimeRequest(**BODY), suggest=False)
    # replicas with nothing sharded need ~238 GB per 40 GB device; the search shards and fits
    assert memory.fits is False and memory.searched is not None
    assert memory.searched.fits is timed.fits is True
    assert memory.searched.memory_per_device == timed.memory_per_device
    assert (memory.searched.tp, memory.searched.pp, memory.searched.zero) == (timed.layout.tp, timed.layout.pp,
                                                                              timed.layout.zero)
    said = memory.assumptions[0]
    assert said.name == "layout" and "not searched" in said.value and memory.searched.layout in said.value


@pytest.mark.parametrize("pinned", [dict(zero=3), dict(sharding="full"), dict(recompute="full"), dict(offload=True)])
def test_a_pinned_layout_is_answered_as_asked_without_a_search(pinned):
    request = MemoryRequest(**BODY, **pinned)
    assert layout_asked(request)
    assert estimate_memory(request, suggest=False).searched is None


def test_without_a_device_nothing_is_searched():
    assert estimate_memory(MemoryRequest(model="llama-2-7b"), suggest=False).searched is None


def test_a_memory_question_sending_every_default_gets_the_same_searched_layout_as_time():
    # the CLI sends recompute "none" (the memory answer's default) explicitly; that is not a recomputation asked,
    # so the searched layout is time's (QLoRA 8B on a 4090: full recomputation) whether it is sent or not
    body = dict(model="llama-3.1-8b", device="RTX 4090", method="qlora")
    sent = estimate_memory(MemoryRequest(**body, recompute="none", ep=1, offload=False), suggest=False)
    left = estimate_memory(MemoryRequest(**body), suggest=False)
    timed = estimate_time(TimeRequest(**body, tokens=1e9))
    assert sent.searched == left.searched
    assert sent.searched.recompute == timed.layout.recompute == "full"
    assert sent.searched.fits == timed.fits and sent.searched.memory_per_device == timed.memory_per_device
