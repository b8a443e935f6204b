"""The serving search keeps each expert and attention split apart (sizer/serving/load_search.py, issue 38 item 5)."""
from __future__ import annotations

import numpy as np

from sizer.runtimes import runtime
from sizer.runtimes.formats import weight_format
from sizer.serving.load_search import _candidates
from sizer.serving.search_space import moe_layouts
from sizer.workloads.registry import find_model


def test_the_same_row_of_two_layouts_screens_is_two_candidates():
    # one format, the same device row r in the tensor-parallel and the expert-parallel screens: both are simulated
    fmt = weight_format("fp8")
    tensor, expert = {"c": np.asarray([8.0])}, {"c": np.asarray([8.0])}
    points = [((1.0,), fmt, tensor, np.intp(0)), ((2.0,), fmt, expert, np.intp(0))]
    kept = _candidates(points)
    assert [p[2] for p in kept] == [tensor, expert]


def test_the_search_offers_only_the_layouts_a_runtime_runs():
    deepseek = find_model("deepseek-v3")
    assert len(moe_layouts(deepseek, 8, runtime("sglang"))) == 3
    assert len(moe_layouts(deepseek, 8, runtime("tensorrt-llm"))) == 2  # no data-parallel attention
    assert len(moe_layouts(find_model("llama-3-8b"), 8, runtime("vllm"))) == 1
