"""The physical limit holds for the whole range, not only the expected value.

No end of a training-time range may be shorter than the physical limit (the run's model FLOP at
each unit's FLOP at that unit's own peak on every device, :func:`sizer.engine.summary.summarise`), and no end of a
throughput range faster than it allows: a range is a statement about what can happen, and
beating the hardware's peak cannot. The law is stated with hypothesis over devices, model sizes,
counts and layouts (pinned or searched, ZeRO-Offload and hybrid sharding, which bypass the search),
and checked on every answer that gives a training range: ``time``, ``plan``, ``sweep`` and
``recommend``.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.facade import TimeRequest, estimate_time
from sizer.hardware.catalog import load_catalog
from sizer.plan.planner import plan
from sizer.plan.recommend import recommend
from sizer.plan.sweep import sweep
from sizer.results import unit_factor
from sizer.schemas.plan import PlanRequest
from sizer.schemas.recommendation import RecommendRequest

DEVICES = sorted(d.id for d in load_catalog() if d.kind in ("gpu", "accelerator"))
MODELS = ("llama-2-7b", "llama-2-13b", "mistral-7b", "gpt2-xl", "llama-2-70b")
REL = 1e-9  # the ends are products of the same floats in another order: only rounding may differ

SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _seconds(value: float, unit: str) -> float:
    return value * unit_factor(unit, "s")


def _answer(**fields):
    try:
        return estimate_time(TimeRequest(**fields), suggest=False)
    except InputError:
        assume(False)  # a layout or device that cannot run this job: nothing to check


def check_time(r) -> None:
    """Every end of the step, training time and throughput ranges against the physical limit."""
    limit = _seconds(r.physical_limit.value, r.physical_limit.unit)
    steps = r.steps
    assert 0 < limit < math.inf
    low, expected, high = (_seconds(getattr(r.training_time, k), r.training_time.unit) for k in ("low", "expected", "high"))
    assert limit * (1 - REL) <= low <= expected <= high
    assert r.step_time.low * steps >= limit * (1 - REL)
    tokens_per_step = r.throughput.expected * r.step_time.expected
    assert r.throughput.high <= tokens_per_step * steps / limit * (1 + REL)
    assert r.throughput.low <= r.throughput.expected <= r.throughput.high


@SLOW
@given(device=st.sampled_from(DEVICES), model=st.sampled_from(MODELS), count=st.sampled_from([1, 2, 8, 64, 512]),
       tokens=st.floats(1e8, 1e13), tp=st.sampled_from([None, 1, 2, 8]), pp=st.sampled_from([None, 1, 4]),
       zero=st.sampled_from([None, 0, 1, 3]), method=st.sampled_from(["full", "lora", "qlora"]))
def test_time_ranges_never_beat_the_physical_limit(device, model, count, tokens, tp, pp, zero, method):
    check_time(_answer(model=model, tokens=tokens, device=device, count=count, tp=tp, pp=pp, zero=zero, method=method))


@SLOW
@given(device=st.sampled_from(DEVICES), params=st.floats(1e7, 3e10), count=st.sampled_from([1, 8, 16]),
       how=st.sampled_from(["offload", "hybrid"]))
def test_unsearched_layouts_hold_the_limit_too(device, params, count, how):
    fields = dict(offload=True, zero=2) if how == "offload" else dict(hybrid_shard=True, zero=3)
    check_time(_answer(params=params, tokens=1e11, device=device, count=count, host_memory="100 TB", **fields))


@SLOW
@given(device=st.sampled_from(DEVICES), model=st.sampled_from(MODELS[:4]), count=st.sampled_from([1, 8, 64]),
       batch=st.sampled_from([None, 4096, 3 * 4096, 1024 * 4096]))
def test_plan_rows_never_beat_the_physical_limit(device, model, count, batch):
    try:
        r = plan(PlanRequest(model=model, tokens=1e11, device=device, count=count, batch_size=batch, shown=20))
        t = estimate_time(TimeRequest(model=model, tokens=1e11, device=device, count=count, batch_size=batch),
                          suggest=False)
    except InputError:
        assume(False)
    if not r.fitting:
        return  # rows that do not fit carry no answer to compare
    # every row runs one batch (plan's rows) and time answers at the first row's: one limit for all
    assert {row.batch_size for row in r.layouts} == {t.batch_size}
    limit = _seconds(t.physical_limit.value, t.physical_limit.unit)
    for row in r.layouts:
        assert _seconds(row.training_time.low, row.training_time.unit) >= limit * (1 - REL)


def test_sweep_rows_never_beat_the_physical_limit():
    table = sweep([{"model": m, "tokens": t} for m in MODELS for t in (1e9, 1e12)], devices=DEVICES[::3],
                  counts=(1, 8, 256))
    rows = table[table.supported]
    assert len(rows) > 50
    assert (rows.training_time_s_low >= rows.physical_limit_s * (1 - REL)).all()
    assert (rows.step_time_s_low <= rows.step_time_s_expected).all()


@pytest.mark.parametrize("fields", [dict(params=7e9, tokens=1e11), dict(model="llama-2-70b", tokens=2e12)])
def test_recommend_rows_never_beat_the_physical_limit(fields):
    r = recommend(RecommendRequest(**fields, max_devices=64, top=5))
    assert r.ranked
    for row in r.ranked:
        t = estimate_time(TimeRequest(**fields, device=row.device, count=row.count), suggest=False)
        limit = _seconds(t.physical_limit.value, t.physical_limit.unit)
        low = _seconds(row.training_time.low, row.training_time.unit)
        assert math.isfinite(low) and low >= limit * (1 - 1e-6), (row.name, row.count)
