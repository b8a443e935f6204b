"""Shared fixtures of the --emit tests: answers computed once per module."""
from __future__ import annotations

import pytest

from sizer import facade


@pytest.fixture(scope="module")
def serve():
    """``serve(**fields)``: the serving answer of an InferenceRequest (memoised within the module)."""
    done: dict[str, object] = {}

    def answer(**fields):
        key = repr(sorted(fields.items()))
        if key not in done:
            done[key] = facade.estimate_inference(facade.InferenceRequest(**fields))
        return done[key]
    return answer


@pytest.fixture(scope="module")
def train():
    """``train(**fields)``: the ``sizer time`` answer of a TimeRequest (memoised within the module)."""
    done: dict[str, object] = {}

    def answer(**fields):
        key = repr(sorted(fields.items()))
        if key not in done:
            done[key] = facade.estimate_time(facade.TimeRequest(**fields))
        return done[key]
    return answer


@pytest.fixture(scope="module")
def tune():
    """``tune(**fields)``: the ``sizer memory`` answer of a MemoryRequest (memoised within the module)."""
    done: dict[str, object] = {}

    def answer(**fields):
        key = repr(sorted(fields.items()))
        if key not in done:
            done[key] = facade.estimate_memory(facade.MemoryRequest(**fields))
        return done[key]
    return answer
