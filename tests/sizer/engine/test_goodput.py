"""Training time with interruptions: Young's and Daly's checkpoint intervals against their closed forms, Daly's
wall-clock, the restart fitted to Llama 3's run, and the second line in time's answer."""
import math

import numpy as np
import pytest

from sizer import facade
from sizer.engine import goodput


def test_young_interval_is_its_closed_form():
    # Young 1974: tau = sqrt(2 delta M); delta 60 s, M one day -> 3,219.9 s (exact arithmetic)
    assert goodput.young_interval(60.0, 86400.0) == pytest.approx(math.sqrt(2 * 60.0 * 86400.0), rel=1e-12)


def test_daly_interval_is_its_closed_form_and_tends_to_youngs():
    delta, mtbf = 60.0, 86400.0
    ratio = delta / (2 * mtbf)
    closed = math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - delta  # Daly 2006 eq. 37
    assert goodput.daly_interval(delta, mtbf) == pytest.approx(closed, rel=1e-12)
    assert goodput.daly_interval(3.0 * mtbf, mtbf) == mtbf  # delta >= 2M: checkpoint once per MTBF
    # for small delta / M, Daly's is Young's less the write (the higher orders vanish)
    assert goodput.daly_interval(1e-3, 1e6) == pytest.approx(goodput.young_interval(1e-3, 1e6) - 1e-3, rel=1e-3)


@pytest.mark.parametrize("delta, mtbf, restart", [(3.0, 11135.0, 900.0), (120.0, 3600.0, 300.0), (10.0, 1e5, 60.0)])
def test_dalys_interval_minimises_dalys_wall_clock(delta, mtbf, restart):
    taus = np.geomspace(0.05, 20.0, 4001) * goodput.young_interval(delta, mtbf)
    walls = goodput.expected_wall_clock(1e7, taus, delta, restart, mtbf)
    best = goodput.expected_wall_clock(1e7, goodput.daly_interval(delta, mtbf), delta, restart, mtbf)
    # Daly's is an approximation of the optimum: within 0.1 % of the scanned least wall-clock
    assert best <= walls.min() * 1.001
    assert best >= walls.min() * (1 - 1e-6)  # and no better than the optimum (the grid's steps are 0.2 % apart)


def test_without_failures_the_wall_clock_is_the_work_plus_the_checkpoints():
    wall = goodput.expected_wall_clock(36000.0, 600.0, 50.0, 300.0, 1e15)
    assert wall == pytest.approx(36000.0 * (1 + 50.0 / 600.0), rel=1e-6)


def test_the_failure_rate_is_llama3s():
    # 419 unexpected interruptions / (16,384 GPUs x 54 days x 24 h): reliability-at-scale.csv's derived 1.97e-5
    assert goodput.FAILURES_PER_DEVICE_HOUR == pytest.approx(1.97e-5, rel=2e-3)


def test_the_restart_reproduces_llama3s_effective_training_time():
    # Llama 3.1 405B: bf16 weights, fp32 master weights and two Adam moments, 14 bytes per parameter
    states = 405e9 * 14.0
    assert goodput.fit_restart(0.9, states / goodput.LLAMA3_DEVICES) == pytest.approx(goodput.RESTART_SECONDS, abs=1.0)
    run = goodput.interruptions(54 * 86400 * 0.9, goodput.LLAMA3_DEVICES, states)
    assert float(run.goodput) == pytest.approx(0.9, abs=1e-3)
    # expected interruptions over the 54 days: the published 419, within the rounding of the fit
    assert float(run.interruptions) == pytest.approx(419, rel=0.01)


def test_more_devices_or_slower_storage_never_take_less_time():
    base = goodput.interruptions(1e6, 1024, 1e12)
    assert goodput.interruptions(1e6, 4096, 1e12).factor > base.factor
    assert goodput.interruptions(1e6, 1024, 1e12, bandwidth_per_device=1e6).factor > base.factor
    assert base.wall_clock > 1e6


def test_on_by_default_from_one_expected_failure():
    hours_for_one = 1.0 / goodput.FAILURES_PER_DEVICE_HOUR  # about 50,700 device-hours
    assert goodput.on_by_default(hours_for_one * 3600 / 64 * 1.01, 64)
    assert not goodput.on_by_default(hours_for_one * 3600 / 64 * 0.99, 64)


def test_time_shows_the_second_line_by_default_at_scale_and_when_asked():
    question = dict(model="llama-2-7b", tokens=2e12, device="H100 SXM", count=256)
    shown = facade.estimate_time(facade.TimeRequest(**question), suggest=False)
    lost = shown.with_interruptions
    assert lost is not None and lost.interruptions >= 1
    hours = lambda r: r.expected * facade.unit_factor(r.unit, "hour")  # noqa: E731
    assert hours(lost.training_time) > hours(shown.training_time)
    # as runs live it (issue 39): all-cause interruptions with their causes, restart, checkpoints, slowdown
    assert {a.name for a in lost.assumptions} == {"interruptions", "checkpoints", "restart",
                                                  "slowdown between interruptions"}
    assert lost.causes is not None and sum(lost.causes.values()) == pytest.approx(lost.interruptions)
    off = facade.estimate_time(facade.TimeRequest(**question, interruptions=False), suggest=False)
    assert off.with_interruptions is None
    small = dict(question, count=8, tokens=1e9)
    assert facade.estimate_time(facade.TimeRequest(**small), suggest=False).with_interruptions is None
    assert facade.estimate_time(facade.TimeRequest(**small, interruptions=True), suggest=False).with_interruptions


def test_plan_shows_the_second_line():
    planned = facade.plan(facade.PlanRequest(model="llama-2-7b", tokens=2e12, device="H100 SXM", count=256, shown=2))
    assert all(o.training_time_with_interruptions is not None for o in planned.layouts)
    assert any(a.name == "training time with interruptions" for a in planned.assumptions)


def test_lived_rates_follow_the_families_published_all_cause_rates():
    # ../shared/data/reliability-and-goodput.csv: A100 jobs (Kokolis MTTF 7.9 h at 1,024; OPT MTTI 7.5 h at 992)
    # interrupted about six times as often per GPU-hour as Hopper ones (Llama 3, ByteRobust, Salpekar)
    ampere, hopper = goodput.family_rates("nvidia-ampere"), goodput.family_rates("nvidia-hopper")
    assert ampere[0] == pytest.approx((1 / (7.9 * 1024) + 1 / (7.5 * 992)) / 2)
    assert ampere[0] > 4 * hopper[0]
    for rate, low, high in (ampere, hopper, goodput.family_rates("other")):
        assert low < rate < high


def test_restarts_grow_with_the_job_as_byterobusts_requeue_times():
    # ByteRobust: requeueing a job of 2,048 GPUs 454 s, of 16,384 768 s; plus about 60 s of detection
    assert goodput.restart_seconds(2048) == pytest.approx(454 + 60)
    assert goodput.restart_seconds(16384) == pytest.approx(768 + 60)
    assert goodput.restart_seconds(8) == pytest.approx(goodput.REQUEUE_FLOOR + 60)


def test_the_lived_range_brackets_the_expected_and_is_slower_than_no_failures():
    args = (30 * 86400.0, 4096, 4096 * 14e9)
    low, mid, high = (goodput.lived(*args, "nvidia-hopper", s) for s in ("low", "expected", "high"))
    assert args[0] < float(low.wall_clock) < float(mid.wall_clock) < float(high.wall_clock)
    assert float(mid.factor) >= 1 + goodput.SLOWDOWN
    assert sum(goodput.CAUSE_SHARES.values()) == pytest.approx(1.0)


def test_a_given_checkpoint_interval_is_used_and_said():
    question = dict(model="llama-2-7b", tokens=2e12, device="H100 SXM", count=1024, interruptions=True)
    daly = facade.estimate_time(facade.TimeRequest(**question), suggest=False).with_interruptions
    given = facade.estimate_time(facade.TimeRequest(**question, checkpoint_interval="3 hours"),
                                 suggest=False).with_interruptions
    assert given.checkpoint_interval.value == pytest.approx(180.0) and given.checkpoint_interval.unit == "minute"
    assert any("(as given)" in a.value for a in given.assumptions)
    assert daly.checkpoint_interval.value != pytest.approx(180.0)
    # Daly's interval minimises the expected wall-clock: a given one is never faster
    assert given.training_time.expected * facade.unit_factor(given.training_time.unit, "s") >= \
        daly.training_time.expected * facade.unit_factor(daly.training_time.unit, "s") * (1 - 1e-9)
    with pytest.raises(facade.InputError, match="^checkpoint_interval"):
        facade.estimate_time(facade.TimeRequest(**question, checkpoint_interval="0 s"), suggest=False)
