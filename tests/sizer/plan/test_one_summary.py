"""One summary, one memory evaluation (issue 18 item 2): recommend's and plan's ranges and MFU are
time's for the same layout, and /v1/memory's figures are time's memory for the same layout."""
from __future__ import annotations

import pytest

from sizer.engine import achieved
from sizer.facade import (
    MemoryRequest,
    PlanRequest,
    RecommendRequest,
    TimeRequest,
    estimate_memory,
    estimate_time,
    plan,
    recommend,
)
from sizer.units import Quantity


def _seconds(range_out, which: str) -> float:
    return Quantity(getattr(range_out, which), range_out.unit).to("s").magnitude


def test_recommends_ranges_and_mfu_are_times_for_its_layout():
    request = RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw", max_devices=16,
                               kinds=["gpu"])
    result = recommend(request)
    assert len(result.ranked) > 5
    for row in result.ranked[:8]:
        time = estimate_time(TimeRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw",
                                         device=row.device, count=row.count, tp=row.tp, pp=row.pp, zero=row.zero,
                                         recompute=row.recompute, micro_batch=row.micro_batch))
        # the ranking is at the achieved pace (issue 39: as `time` answers with no layout), the pinned layout at its own
        factor = achieved.achieved_factor(f"{row.device} {row.name}")[0]
        for which in ("low", "expected", "high"):  # low floored at the physical limit in both
            assert _seconds(row.training_time, which) * factor == \
                pytest.approx(_seconds(time.training_time, which), rel=1e-6)
        assert row.mfu == pytest.approx(time.mfu * factor, rel=1e-6)


def test_plans_first_row_is_time_without_a_layout():
    common = dict(model="llama-2-13b", tokens=2.6e11, device="A100 80GB SXM", count=128)
    time = estimate_time(TimeRequest(**common))
    first = plan(PlanRequest(**common)).layouts[0]
    # plan's first row is time's answer: with no layout pinned both are at the achieved pace (issue 39), and the
    # searched layout's own time is the upper bound beside it
    bound = time.best_layout
    assert bound is not None
    for which in ("low", "expected", "high"):
        assert _seconds(first.training_time, which) == pytest.approx(_seconds(time.training_time, which), rel=1e-9)
        assert _seconds(first.step_time, which) == pytest.approx(_seconds(time.step_time, which), rel=1e-9)
        assert _seconds(first.training_time, which) * bound.achieved_factor == \
            pytest.approx(_seconds(bound.training_time, which), rel=1e-9)
    assert (first.mfu, first.hfu) == pytest.approx((time.mfu, time.hfu), rel=1e-9)
    assert (first.micro_batch, first.accumulation) == (time.layout.micro_batch, time.layout.accumulation)


@pytest.mark.parametrize("zero, recompute", [(0, "none"), (2, "selective"), (3, "full")])
def test_memory_is_times_memory_for_the_same_layout(zero, recompute):
    common = dict(model="llama-2-7b", tokens=1e9, device="H100 SXM", count=16, precision="bf16", zero=zero,
                  recompute=recompute, attention="standard")
    memory = estimate_memory(MemoryRequest(**common))
    time = estimate_time(TimeRequest(**common, tp=1, pp=1, cp=1, micro_batch=memory.micro_batch))
    assert memory.total.quantity().to("B").magnitude == pytest.approx(
        time.memory_per_device.quantity().to("B").magnitude, rel=1e-9)
    assert memory.fits == time.fits
