"""sizer/plan/planner.py: ``sizer plan``'s layouts of one (model, device, count), fastest first.

tests/sizer/plan/test_plan_rows_one_batch.py checks that the rows compare (one batch, each once);
this file checks the module's own promises: the first row is ``sizer time``'s layout, pinned fields
pin, the rows use exactly the devices, a precision the device lacks is refused, and where nothing
fits the rows are those closest to fitting.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from sizer import facade
from sizer.errors import InputError
from sizer.plan.planner import at_one_batch, plan
from sizer.schemas.plan import PlanRequest

LLAMA_7B = dict(model="llama-2-7b", tokens=2e11)


# ---- at_one_batch on hand-made candidates ----

def candidates(batches):
    return SimpleNamespace(batch=np.asarray(batches, dtype=float))


def test_rows_at_the_asked_batch_are_kept_in_their_order():
    ev = candidates([64, 128, 64, 64])
    distance = np.abs(np.log(np.asarray([64, 128, 64, 64]) / 64.0))  # batch_distance's |log(batch / asked)| [1]
    rows = np.asarray([3, 1, 0], dtype=np.intp)
    assert at_one_batch(ev, rows, distance).tolist() == [3, 0]


def test_where_no_row_runs_the_asked_batch_the_nearest_is_taken_the_first_of_ties():
    # asked 100: 80 and 125 are equally near (|log 0.8| = |log 1.25| = 0.223, given exactly equal here so
    # that rounding does not pick); the first row's batch wins
    ev = candidates([125, 80, 125, 80, 512])
    distance = np.asarray([0.223, 0.223, 0.223, 0.223, 1.633])
    assert at_one_batch(ev, np.asarray([1, 0, 2, 3, 4], dtype=np.intp), distance).tolist() == [1, 3]
    assert at_one_batch(ev, np.asarray([2, 1, 0, 3], dtype=np.intp), distance).tolist() == [2, 0]


def test_no_rows_give_no_rows():
    ev = candidates([64])
    assert at_one_batch(ev, np.asarray([], dtype=np.intp), np.zeros(1)).tolist() == []


# ---- plan through the engine ----

def test_the_first_row_is_the_layout_sizer_time_answers_with(catalog):
    result = plan(PlanRequest(**LLAMA_7B, device="H100 SXM", count=16), catalog)
    timed = facade.estimate_time(facade.TimeRequest(**LLAMA_7B, device="H100 SXM", count=16), catalog, suggest=False)
    first = result.layouts[0]
    layout = timed.layout
    assert (first.tp, first.pp, first.dp, first.cp, first.zero, first.recompute, first.micro_batch) == \
        (layout.tp, layout.pp, layout.dp, layout.cp, layout.zero, layout.recompute, layout.micro_batch)
    # time's achieved headline (issue 39): no layout pinned, both answers are at the achieved pace
    t, h = first.training_time, timed.training_time
    assert timed.best_layout is not None and t.unit == h.unit
    assert (t.low, t.expected, t.high) == pytest.approx((h.low, h.expected, h.high), rel=1e-12)


def test_rows_use_exactly_the_devices_fit_and_come_fastest_first(catalog):
    result = plan(PlanRequest(**LLAMA_7B, device="H100 SXM", count=16, shown=20), catalog)
    assert result.fitting >= len(result.layouts) > 1 and result.searched >= result.fitting
    assert all(o.tp * o.pp * o.cp * o.dp == 16 and o.fits for o in result.layouts)
    steps = [o.step_time.expected for o in result.layouts]
    assert steps == sorted(steps)
    assert all(0 < o.mfu <= o.hfu <= 1 for o in result.layouts)  # recomputation only adds hardware FLOPs


def test_shown_caps_the_rows(catalog):
    assert len(plan(PlanRequest(**LLAMA_7B, device="H100 SXM", count=16, shown=3), catalog).layouts) == 3


def test_a_pinned_dimension_holds_in_every_row_and_is_said(catalog):
    result = plan(PlanRequest(**LLAMA_7B, device="H100 SXM", count=16, tp=2, zero=1, shown=20), catalog)
    assert result.layouts and all(o.tp == 2 and o.zero == 1 for o in result.layouts)
    search = next(a for a in result.assumptions if a.name == "search")
    assert "pinned: " in search.value and "tp 2" in search.value and "zero 1" in search.value


def test_a_precision_the_device_lacks_is_refused_naming_the_field(catalog):
    # an A100 has no fp8 tensor-core peak (NVIDIA A100 datasheet)
    with pytest.raises(InputError) as raised:
        plan(PlanRequest(**LLAMA_7B, device="A100 80GB SXM", count=8, precision="fp8"), catalog)
    assert raised.value.field == "precision"


def test_where_nothing_fits_the_closest_to_fitting_are_shown_and_said(catalog):
    # Llama-2-70B's 70e9 weights alone take 140 GB in bf16: two 24 GB RTX 4090s cannot hold them
    result = plan(PlanRequest(model="llama-2-70b", tokens=1e10, device="RTX 4090", count=2, shown=5), catalog)
    assert result.fitting == 0 and result.layouts and not any(o.fits for o in result.layouts)
    memory = [o.memory_per_device.value for o in result.layouts]
    assert memory == sorted(memory) and memory[0] > 24
    assert any(a.name == "fit" and "closest to fitting" in a.value for a in result.assumptions)


def test_each_row_says_where_its_step_goes(catalog):
    result = plan(PlanRequest(**LLAMA_7B, device="H100 SXM", count=16, pp=2, shown=5), catalog)
    for option in result.layouts:
        assert "bubble" in option.why and "memory" in option.why and option.why.endswith("of the device")
