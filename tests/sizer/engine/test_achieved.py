"""Achieved, not only possible (issue 39): a no-layout headline is what runs of the device family achieved against
the best layout; that layout's own figures stand beside it as the upper bound."""
from __future__ import annotations

import pytest

from sizer.engine import achieved
from sizer.facade import TimeRequest, estimate_time


@pytest.mark.parametrize("name, family", [("NVIDIA GB200 (per Blackwell GPU)", "nvidia-blackwell"),
                                          ("h100-sxm NVIDIA H100 SXM5 80GB", "nvidia-hopper"),
                                          ("a100-80gb-sxm", "nvidia-ampere"), ("mi300x", "amd-cdna3"),
                                          ("AMD Instinct MI355X", "amd-cdna4"), ("tpu-v6e", "google-tpu"),
                                          ("Intel Xeon Platinum 8480+", "cpu"), ("Apple M2", "other")])
def test_families(name, family):
    assert achieved.family_of_name(name) == family


def test_the_headline_is_the_bound_times_the_family_factor_and_never_beats_it():
    question = dict(model="llama-2-7b", tokens=2e11, device="H100 SXM", count=64)
    answer = estimate_time(TimeRequest(**question))
    bound = answer.best_layout
    assert bound is not None and bound.family == "nvidia-hopper"
    factor = achieved.achieved_factor("h100 H100 SXM")[0]
    assert bound.achieved_factor == factor <= 1.0
    assert answer.step_time.expected == pytest.approx(bound.step_time.expected / factor)
    assert answer.throughput.expected == pytest.approx(bound.throughput.expected * factor)
    assert answer.training_time.expected >= bound.training_time.expected
    assert any(a.name == "achieved, not only possible" for a in answer.assumptions)


def test_a_given_layout_is_the_users_run_with_no_bound_beside_it():
    answer = estimate_time(TimeRequest(model="llama-2-7b", tokens=2e11, device="H100 SXM", count=64, tp=2, pp=1))
    assert answer.best_layout is None


def test_fit_counts_each_source_once_and_shrinks_thin_families_to_the_pool():
    # one source of many runs counts as one; a family of one source sits between its own median and the pool's
    runs = [("nvidia-hopper", "a", 1.0, 0.8)] * 50 + [("nvidia-hopper", "b", 1.0, 1.0), ("nvidia-hopper", "c", 1.0, 1.0),
                                                      ("google-tpu", "d", 1.0, 2.0)]
    factors, pooled = achieved.fit(runs)
    assert pooled == pytest.approx(1.0)  # medians 0.8, 1.0, 1.0, 2.0
    assert factors["nvidia-hopper"][0] == pytest.approx((1.0 * 3 + pooled * 2) / 5)
    assert factors["google-tpu"][0] == pytest.approx((2.0 + 2 * pooled) / 3)
    assert factors["cpu"] == (pytest.approx(pooled), 0)


def test_at_achieved_pace_slows_steps_and_lowers_mfu_by_one_factor():
    import numpy as np

    from sizer.engine.achieved import at_achieved_pace
    from sizer.engine.summary import Summary

    one = np.asarray([2.0, 4.0])
    summary = Summary(step_low=one, step_expected=2 * one, step_high=3 * one, steps=one, mfu=np.asarray([0.5, 0.4]),
                      hfu=np.asarray([0.6, 0.5]))
    paced = at_achieved_pace(summary, np.asarray([0.8, 1.0]))
    assert paced.step_expected.tolist() == [5.0, 8.0] and paced.step_low.tolist() == [2.5, 4.0]
    assert paced.mfu.tolist() == [0.4, 0.4] and paced.hfu == pytest.approx([0.48, 0.5])
    assert paced.steps is summary.steps  # the number of steps is the run's, not the pace's
